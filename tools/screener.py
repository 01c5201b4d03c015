"""The A-share screener and the market hotspot scan."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data import providers
from tools.data.models import (
    BoardMove,
    Boards,
    EmptyQuery,
    HotStock,
    HotStocks,
    Indexes,
    IndexMove,
    RankingQuery,
    ScreenRow,
    ScreenUniverse,
)
from tools.models import DataSource, tool

SortKey = Literal["market_cap_yi", "pe", "pb", "change_pct", "turnover_pct", "amount_yi",
                  "change_60d_pct", "change_ytd_pct", "volume_ratio"]


class ScreenResult(BaseModel):
    matched: int = Field(description="stocks passing every filter")
    universe: int
    criteria: dict[str, float | str]
    rows: list[ScreenRow]
    source: DataSource


def screen(rows: list[ScreenRow], bounds: dict[str, tuple[float | None, float | None]],
           exclude_st: bool) -> list[ScreenRow]:
    """Rows within every [low, high] bound (pure); a missing value fails a bound."""
    out: list[ScreenRow] = []
    for r in rows:
        if exclude_st and ("ST" in r.name.upper() or r.name.startswith("退")):
            continue
        ok = True
        for field, (low, high) in bounds.items():
            if low is None and high is None:
                continue
            v = getattr(r, field)
            if v is None or (low is not None and v < low) or (high is not None and v > high):
                ok = False
                break
        if ok:
            out.append(r)
    return out


@tool(label="Screening A-shares", tags=["screener"])
async def screen_cn_stocks(
    min_pe: float | None = None,
    max_pe: float | None = None,
    min_pb: float | None = None,
    max_pb: float | None = None,
    min_market_cap_yi: float | None = None,
    max_market_cap_yi: float | None = None,
    min_change_pct: float | None = None,
    max_change_pct: float | None = None,
    min_turnover_pct: float | None = None,
    max_turnover_pct: float | None = None,
    min_change_60d_pct: float | None = None,
    max_change_60d_pct: float | None = None,
    exclude_st: bool = True,
    sort_by: SortKey = "market_cap_yi",
    descending: bool = True,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> ScreenResult:
    """Screen all A-shares (~5,000) by valuation, size and momentum from the latest session.
    Market caps in 亿元 (1 billion yuan = 10亿); P/E is dynamic; percentages as 1.5 = 1.5%.

    Args:
        min_pe: lowest P/E (use 0 to drop loss-makers).
        max_pe: highest P/E.
        min_pb: lowest P/B.
        max_pb: highest P/B.
        min_market_cap_yi: smallest total market cap in 亿元.
        max_market_cap_yi: largest total market cap in 亿元.
        min_change_pct: lowest change today in percent.
        max_change_pct: highest change today in percent.
        min_turnover_pct: lowest turnover rate in percent.
        max_turnover_pct: highest turnover rate in percent.
        min_change_60d_pct: lowest 60-day change in percent.
        max_change_60d_pct: highest 60-day change in percent.
        exclude_st: drop ST and delisting stocks.
        sort_by: field to sort on.
        descending: sort from largest.
        limit: how many rows.
    """
    providers.load()
    universe: ScreenUniverse = await fx.run("cn.screener", EmptyQuery())
    bounds = {
        "pe": (min_pe, max_pe), "pb": (min_pb, max_pb),
        "market_cap_yi": (min_market_cap_yi, max_market_cap_yi),
        "change_pct": (min_change_pct, max_change_pct),
        "turnover_pct": (min_turnover_pct, max_turnover_pct),
        "change_60d_pct": (min_change_60d_pct, max_change_60d_pct),
    }
    rows = screen(universe.rows, bounds, exclude_st)
    rows.sort(key=lambda r: (getattr(r, sort_by) is None,
                             -(getattr(r, sort_by) or 0.0) if descending
                             else (getattr(r, sort_by) or 0.0)))
    criteria: dict[str, float | str] = {
        f"{'min' if i == 0 else 'max'}_{k}": v
        for k, pair in bounds.items() for i, v in enumerate(pair) if v is not None}
    criteria["sort_by"] = sort_by + (" desc" if descending else " asc")
    return ScreenResult(matched=len(rows), universe=len(universe.rows), criteria=criteria,
                        rows=rows[:limit], source=universe.source)


class Hotspots(BaseModel):
    indexes: list[IndexMove] = Field(default_factory=list)
    top_industries: list[BoardMove] = Field(default_factory=list)
    bottom_industries: list[BoardMove] = Field(default_factory=list)
    top_concepts: list[BoardMove] = Field(default_factory=list)
    hot_stocks: list[HotStock] = Field(default_factory=list)
    unavailable: list[str] = Field(default_factory=list)
    sources: list[DataSource] = Field(default_factory=list)


@tool(label="Scanning market hotspots", tags=["screener"])
async def scan_market_hotspots(
    limit: Annotated[int, Field(ge=1, le=30)] = 8,
) -> Hotspots:
    """Today's A-share market at a glance: main indexes, strongest and weakest industry boards,
    hottest concept boards and the most-watched stocks.

    Args:
        limit: rows per list.
    """
    providers.load()
    out = Hotspots()
    try:
        idx: Indexes = await fx.run("cn.indexes", EmptyQuery())
        out.indexes = idx.indexes[:limit]
        out.sources.append(idx.source)
    except DataUnavailable as exc:
        out.unavailable.append(f"indexes: {exc}")
    try:
        ind: Boards = await fx.run("cn.boards", RankingQuery(scope="行业"))
        ranked = sorted((b for b in ind.boards if b.change_pct is not None),
                        key=lambda b: -(b.change_pct or 0.0))
        out.top_industries, out.bottom_industries = ranked[:limit], ranked[::-1][:limit]
        out.sources.append(ind.source)
    except DataUnavailable as exc:
        out.unavailable.append(f"industry boards: {exc}")
    try:
        con: Boards = await fx.run("cn.boards", RankingQuery(scope="概念"))
        out.top_concepts = sorted((b for b in con.boards if b.change_pct is not None),
                                  key=lambda b: -(b.change_pct or 0.0))[:limit]
        out.sources.append(con.source)
    except DataUnavailable as exc:
        out.unavailable.append(f"concept boards: {exc}")
    try:
        hot: HotStocks = await fx.run("cn.hot_stocks", EmptyQuery())
        out.hot_stocks = hot.stocks[:limit]
        out.sources.append(hot.source)
    except DataUnavailable as exc:
        out.unavailable.append(f"hot stocks: {exc}")
    if len(out.unavailable) == 4:
        raise DataUnavailable("no hotspot data: " + "; ".join(out.unavailable[:1]),
                              provider="akshare")
    return out
