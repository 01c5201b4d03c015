"""Standard results of the datasets: what every provider's `transform` produces.

Units are in the field names: `_yi` = 亿元 (1e8 yuan; 1 billion yuan = 10亿), `_wan` = 万 (1e4),
`_pct` = percent (1.5 = 1.5%), `_usd_mn` = USD millions. Dates are ISO.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from pydantic import BaseModel, Field

from tools.models import DataSource

# --- bars ------------------------------------------------------------------------------------


class BarsQuery(BaseModel):
    code: str
    market: str
    exchange: str = ""
    kind: str = "stock"
    yahoo: str = ""
    interval: str = "1d"  # 1d, or an intraday size the provider serves


class Bars(BaseModel):
    symbol: str
    interval: str
    tz: str
    rows: list[list[Any]] = Field(description="[ts, open, high, low, close, volume]")
    source: DataSource


# --- fundamentals ----------------------------------------------------------------------------


class SymbolQuery(BaseModel):
    code: str
    market: str = "cn"
    exchange: str = ""
    yahoo: str = ""


class FinancialsQuery(SymbolQuery):
    quarterly: bool = True


class FinancialPeriod(BaseModel):
    period: date
    label: str
    values: dict[str, float | None]


class Financials(BaseModel):
    """Key financial lines per report period, newest first; `units` names each value's unit."""

    symbol: str
    market: str
    units: dict[str, str]
    periods: list[FinancialPeriod]
    note: str = ""
    source: DataSource


class ShareholdersQuery(SymbolQuery):
    period: date
    free_float: bool = False


class Shareholder(BaseModel):
    rank: int
    name: str
    shares_wan: float | None = Field(default=None, description="万股")
    pct: float | None = Field(default=None, description="percent of total (or float) shares")
    change: str = Field(default="", description="增加/减少/不变/新进 as reported")
    change_pct: float | None = None
    kind: str = ""


class Shareholders(BaseModel):
    symbol: str
    period: date
    free_float: bool
    holders: list[Shareholder]
    top10_pct: float | None = None
    source: DataSource


class Dividend(BaseModel):
    period: str
    plan: str = Field(description="as announced, e.g. 10派30.88元")
    cash_per_10_shares: float | None = Field(default=None, description="yuan per 10 shares")
    bonus_per_10_shares: float | None = Field(default=None, description="送转 shares per 10")
    yield_pct: float | None = None
    eps: float | None = None
    record_date: str | None = None
    ex_date: str | None = None
    progress: str = ""


class Dividends(BaseModel):
    symbol: str
    items: list[Dividend]
    source: DataSource


# --- flows -----------------------------------------------------------------------------------


class DateRangeQuery(BaseModel):
    start: date
    end: date


class DragonTigerEntry(BaseModel):
    date: str
    code: str
    name: str
    reason: str
    close: float | None = None
    change_pct: float | None = None
    net_buy_yi: float | None = None
    buy_yi: float | None = None
    sell_yi: float | None = None
    net_buy_share_pct: float | None = Field(default=None, description="of the day's turnover")
    turnover_pct: float | None = None
    after_1d_pct: float | None = None
    after_5d_pct: float | None = None


class DragonTiger(BaseModel):
    start: date
    end: date
    entries: list[DragonTigerEntry]
    source: DataSource


class FlowDay(BaseModel):
    date: str
    close: float | None = None
    change_pct: float | None = None
    main_net_yi: float | None = Field(default=None, description="super-large + large orders")
    main_net_pct: float | None = None
    super_large_net_yi: float | None = None
    large_net_yi: float | None = None
    medium_net_yi: float | None = None
    small_net_yi: float | None = None


class CapitalFlow(BaseModel):
    symbol: str
    days: list[FlowDay] = Field(description="oldest first")
    source: DataSource


class EmptyQuery(BaseModel):
    pass


class NorthboundBoard(BaseModel):
    date: str
    board: str
    direction: str
    net_buy_yi: float | None = None
    net_inflow_yi: float | None = None
    up: int | None = None
    down: int | None = None
    index: str = ""
    index_change_pct: float | None = None


class NorthboundHolding(BaseModel):
    code: str
    name: str
    close: float | None = None
    change_pct: float | None = None
    hold_value_yi: float | None = None
    hold_pct_of_float: float | None = None
    added_value_yi: float | None = None
    sector: str = ""
    date: str = ""


class Northbound(BaseModel):
    boards: list[NorthboundBoard]
    top_holdings: list[NorthboundHolding] = Field(default_factory=list)
    source: DataSource


class RankingQuery(BaseModel):
    scope: str = "全部股票"


class FlowRankItem(BaseModel):
    code: str
    name: str
    price: float | None = None
    main_net_pct_today: float | None = None
    change_pct_today: float | None = None
    main_net_pct_5d: float | None = None
    change_pct_5d: float | None = None
    main_net_pct_10d: float | None = None
    change_pct_10d: float | None = None
    sector: str = ""


class FlowRanking(BaseModel):
    items: list[FlowRankItem]
    source: DataSource


class ScreenRow(BaseModel):
    code: str
    name: str
    price: float | None = None
    change_pct: float | None = None
    pe: float | None = Field(default=None, description="dynamic P/E")
    pb: float | None = None
    market_cap_yi: float | None = None
    float_cap_yi: float | None = None
    turnover_pct: float | None = None
    volume_ratio: float | None = None
    amount_yi: float | None = None
    change_60d_pct: float | None = None
    change_ytd_pct: float | None = None


class ScreenUniverse(BaseModel):
    rows: list[ScreenRow]
    source: DataSource


class BoardMove(BaseModel):
    name: str
    change_pct: float | None = None
    up: int | None = None
    down: int | None = None
    leader: str = ""
    leader_change_pct: float | None = None


class IndexMove(BaseModel):
    code: str
    name: str
    price: float | None = None
    change_pct: float | None = None
    amount_yi: float | None = None


class HotStock(BaseModel):
    rank: int
    code: str
    name: str
    price: float | None = None
    change_pct: float | None = None


class Boards(BaseModel):
    boards: list[BoardMove]
    source: DataSource


class Indexes(BaseModel):
    indexes: list[IndexMove]
    source: DataSource


class HotStocks(BaseModel):
    stocks: list[HotStock]
    source: DataSource


# --- funds -----------------------------------------------------------------------------------


class FundQuery(BaseModel):
    code: str


class FundNavPoint(BaseModel):
    date: str
    unit_nav: float | None = None
    accum_nav: float | None = None
    daily_return_pct: float | None = None


class FundNav(BaseModel):
    code: str
    points: list[FundNavPoint] = Field(description="oldest first")
    subscribe: str = ""
    redeem: str = ""
    source: DataSource


class FundHoldingsQuery(BaseModel):
    code: str
    year: str = ""


class FundHolding(BaseModel):
    code: str
    name: str
    pct_of_nav: float | None = None
    shares_wan: float | None = None
    value_yi: float | None = None


class FundHoldings(BaseModel):
    code: str
    quarter: str
    holdings: list[FundHolding]
    source: DataSource


# --- news ------------------------------------------------------------------------------------


class NewsQuery(BaseModel):
    code: str
    market: str
    yahoo: str = ""


class NewsItem(BaseModel):
    id: str
    title: str
    published: str = ""
    publisher: str = ""
    url: str = ""
    summary: str = ""


class NewsList(BaseModel):
    symbol: str
    items: list[NewsItem]
    source: DataSource
