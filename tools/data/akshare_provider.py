"""akshare fetchers: A-shares, indexes and China funds (EastMoney / Sina behind akshare).

Each fetcher calls one akshare function in a worker thread and keeps its DataFrame as a raw
JSON table; `transform` checks the columns akshare documents for that function
(`akshare/data/interfaces.json`) and normalises units: money to 亿元, volume in 手 to shares.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import date
from typing import Any, ClassVar

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data.models import (
    Bars,
    BarsQuery,
    BoardMove,
    Boards,
    CapitalFlow,
    DateRangeQuery,
    Dividend,
    Dividends,
    DragonTiger,
    DragonTigerEntry,
    EmptyQuery,
    FinancialPeriod,
    Financials,
    FinancialsQuery,
    FlowDay,
    FlowRanking,
    FlowRankItem,
    FundHolding,
    FundHoldings,
    FundHoldingsQuery,
    FundNav,
    FundNavPoint,
    FundQuery,
    HotStock,
    HotStocks,
    Indexes,
    IndexMove,
    NewsItem,
    NewsList,
    NewsQuery,
    Northbound,
    NorthboundBoard,
    NorthboundHolding,
    RankingQuery,
    ScreenRow,
    ScreenUniverse,
    Shareholder,
    Shareholders,
    ShareholdersQuery,
    SymbolQuery,
)
from tools.data.units import num, period_of, to_wan, to_yi
from tools.models import DataSource

PROVIDER = "akshare"
CN_TZ = "Asia/Shanghai"


def _s(v: Any) -> str:
    return "" if v is None else str(v)


def _d(v: Any) -> str:
    """ISO date text from '2024-09-30', '2024-09-30T00:00:00' or '20240930'."""
    text = _s(v).strip()
    if len(text) == 8 and text.isdigit():
        return f"{text[:4]}-{text[4:6]}-{text[6:]}"
    return text[:10]


def _r(v: Any, nd: int = 2) -> float | None:
    f = num(v)
    return None if f is None else round(f, nd)


def _source(dataset: str, as_of: str | date | None, note: str = "") -> DataSource:
    return DataSource.at(PROVIDER, dataset, as_of, note)


def news_id(url: str, title: str) -> str:
    return hashlib.sha1((url or title).encode()).hexdigest()[:12]


class AkFetcher(fx.Fetcher[Any, Any]):
    """Calls `akshare.<func>(**kwargs(query))` in a thread; raw = the DataFrame as a table."""

    provider: ClassVar[str] = PROVIDER
    func: ClassVar[str] = ""
    priority: ClassVar[int] = 10

    def func_for(self, query: Any) -> str:
        return self.func

    def kwargs(self, query: Any) -> dict[str, Any]:
        return {}

    async def fetch(self, query: Any) -> Any:
        name = self.func_for(query)
        kwargs = self.kwargs(query)

        def call() -> Any:
            import akshare as ak

            return fx.table(getattr(ak, name)(**kwargs))

        return await asyncio.to_thread(call)

    def rows(self, query: Any, raw: Any, required: list[str],
             allow_empty: bool = False) -> list[dict[str, Any]]:
        return fx.rows_of(raw, required, provider=PROVIDER, what=self.func_for(query),
                          allow_empty=allow_empty)


# --- bars ------------------------------------------------------------------------------------

_CN_BAR_COLS = ["日期", "开盘", "收盘", "最高", "最低", "成交量"]
_MIN_PERIODS = {"1m": "1", "5m": "5", "15m": "15", "30m": "30", "1h": "60"}


class AkshareBars(AkFetcher):
    """Daily bars (forward-adjusted) of A-shares, indexes and exchange-traded funds; recent
    intraday bars of A-shares."""

    dataset: ClassVar[str] = "bars"
    result_model: ClassVar[type[Bars]] = Bars
    ttl_s: ClassVar[int] = 900

    def supports(self, query: BarsQuery) -> bool:
        if query.market != "cn":
            return False
        return query.interval == "1d" or (query.interval in _MIN_PERIODS
                                          and query.kind == "stock")

    def func_for(self, query: BarsQuery) -> str:
        if query.interval != "1d":
            return "stock_zh_a_hist_min_em"
        if query.kind == "index":
            return "index_zh_a_hist"
        if query.kind == "fund" or query.code.startswith(("15", "16", "18", "50", "51", "56",
                                                           "58")):
            return "fund_etf_hist_em"
        return "stock_zh_a_hist"

    def kwargs(self, query: BarsQuery) -> dict[str, Any]:
        func = self.func_for(query)
        if func == "stock_zh_a_hist_min_em":
            return {"symbol": query.code, "period": _MIN_PERIODS[query.interval], "adjust": "qfq"}
        base = {"symbol": query.code, "period": "daily", "start_date": "19900101",
                "end_date": "20500101"}
        return base if func == "index_zh_a_hist" else {**base, "adjust": "qfq"}

    def transform(self, query: BarsQuery, raw: Any) -> Bars:
        func = self.func_for(query)
        intraday = func == "stock_zh_a_hist_min_em"
        ts_col = "时间" if intraday else "日期"
        rows = self.rows(query, raw, [ts_col, *_CN_BAR_COLS[1:]])
        # EastMoney volume is in 手 (lots of 100 shares) for stocks and funds; index volume too
        out = [
            [_s(r[ts_col]) if intraday else _d(r[ts_col]), num(r["开盘"]), num(r["最高"]),
             num(r["最低"]), num(r["收盘"]), (num(r["成交量"]) or 0.0) * 100.0]
            for r in rows
        ]
        out = [r for r in out if None not in r[1:5]]
        if not out:
            raise DataUnavailable(f"{func}: no usable bars", provider=PROVIDER)
        return Bars(symbol=query.code, interval=query.interval, tz=CN_TZ, rows=out,
                    source=_source(func, str(out[-1][0]),
                                   "forward-adjusted (qfq)" if func != "index_zh_a_hist" else ""))


# --- financials ------------------------------------------------------------------------------

# Sina key-indicator rows (指标) -> (key, unit, scale): money in raw yuan becomes 亿元
_ABSTRACT_ROWS: dict[str, tuple[str, str]] = {
    "营业总收入": ("revenue", "亿元"),
    "归母净利润": ("net_profit", "亿元"),
    "扣非净利润": ("net_profit_deducted", "亿元"),
    "经营现金流量净额": ("operating_cash_flow", "亿元"),
    "股东权益合计(净资产)": ("equity", "亿元"),
    "基本每股收益": ("eps", "元"),
    "每股净资产": ("bvps", "元"),
    "每股现金流": ("cash_flow_per_share", "元"),
    "净资产收益率(ROE)": ("roe_pct", "%"),
    "总资产报酬率(ROA)": ("roa_pct", "%"),
    "毛利率": ("gross_margin_pct", "%"),
    "销售净利率": ("net_margin_pct", "%"),
    "资产负债率": ("debt_ratio_pct", "%"),
    "营业总收入增长率": ("revenue_yoy_pct", "%"),
    "归属母公司净利润增长率": ("net_profit_yoy_pct", "%"),
}


class AkshareFinancialAbstract(AkFetcher):
    """Sina key financial indicators: one row per indicator, one column per report period."""

    dataset: ClassVar[str] = "cn.financials"
    result_model: ClassVar[type[Financials]] = Financials
    func: ClassVar[str] = "stock_financial_abstract"
    ttl_s: ClassVar[int] = 86400

    def supports(self, query: FinancialsQuery) -> bool:
        return query.market == "cn"

    def kwargs(self, query: FinancialsQuery) -> dict[str, Any]:
        return {"symbol": query.code}

    def transform(self, query: FinancialsQuery, raw: Any) -> Financials:
        rows = self.rows(query, raw, ["选项", "指标"])
        period_cols = [c for c in raw["columns"] if str(c).isdigit() and len(str(c)) == 8]
        if not period_cols:
            raise DataUnavailable(f"{self.func}: response shape changed, no report-period "
                                  "columns", provider=PROVIDER)
        values: dict[str, dict[str, float | None]] = {c: {} for c in period_cols}
        units: dict[str, str] = {}
        for r in rows:
            spec = _ABSTRACT_ROWS.get(_s(r["指标"]).strip())
            if spec is None:
                continue
            key, unit = spec
            units[key] = unit
            for c in period_cols:
                if key in values[c]:
                    continue
                values[c][key] = to_yi(r.get(c)) if unit == "亿元" else _r(r.get(c), 4)
        if not units:
            raise DataUnavailable(f"{self.func}: none of the expected indicators present",
                                  provider=PROVIDER)
        periods = _periods(period_cols, values, query.quarterly)
        return Financials(symbol=query.code, market="cn", units=units, periods=periods,
                          source=_source(self.func, periods[0].period if periods else None))


def _periods(cols: list[str], values: dict[str, dict[str, float | None]],
             quarterly: bool) -> list[FinancialPeriod]:
    out: list[FinancialPeriod] = []
    for c in sorted(cols, reverse=True):
        end = date.fromisoformat(_d(c))
        rp = period_of(end)
        if rp is None or (not quarterly and rp.kind != "annual"):
            continue
        if all(v is None for v in values[c].values()):
            continue
        out.append(FinancialPeriod(period=end, label=rp.label, values=values[c]))
    return out


_INDICATOR_COLS: dict[str, tuple[str, str]] = {
    "摊薄每股收益（元）": ("eps", "元"),
    "每股净资产_调整后（元）": ("bvps", "元"),
    "每股经营性现金流（元）": ("cash_flow_per_share", "元"),
    "加权净资产收益率(%)": ("roe_pct", "%"),
    "销售毛利率(%)": ("gross_margin_pct", "%"),
    "销售净利率(%)": ("net_margin_pct", "%"),
    "资产负债率(%)": ("debt_ratio_pct", "%"),
    "主营业务收入增长率(%)": ("revenue_yoy_pct", "%"),
    "净利润增长率(%)": ("net_profit_yoy_pct", "%"),
    "扣除非经常性损益后的净利润（元）": ("net_profit_deducted", "亿元"),
    "总资产（元）": ("total_assets", "亿元"),
}


class AkshareFinancialIndicator(AkFetcher):
    """Sina financial-analysis indicators (fallback): one row per report period."""

    dataset: ClassVar[str] = "cn.financials"
    result_model: ClassVar[type[Financials]] = Financials
    func: ClassVar[str] = "stock_financial_analysis_indicator"
    ttl_s: ClassVar[int] = 86400
    priority: ClassVar[int] = 20

    def supports(self, query: FinancialsQuery) -> bool:
        return query.market == "cn"

    def kwargs(self, query: FinancialsQuery) -> dict[str, Any]:
        return {"symbol": query.code, "start_year": str(date.today().year - 4)}

    def transform(self, query: FinancialsQuery, raw: Any) -> Financials:
        rows = self.rows(query, raw, ["日期", "摊薄每股收益（元）", "加权净资产收益率(%)"])
        values: dict[str, dict[str, float | None]] = {}
        for r in rows:
            col = _d(r["日期"]).replace("-", "")
            values[col] = {
                key: to_yi(r.get(name)) if unit == "亿元" else _r(r.get(name), 4)
                for name, (key, unit) in _INDICATOR_COLS.items()
            }
        units = {key: unit for key, unit in _INDICATOR_COLS.values()}
        periods = _periods(list(values), values, query.quarterly)
        return Financials(symbol=query.code, market="cn", units=units, periods=periods,
                          source=_source(self.func, periods[0].period if periods else None))


# --- shareholders and dividends --------------------------------------------------------------


class AkshareTopShareholders(AkFetcher):
    dataset: ClassVar[str] = "cn.shareholders"
    result_model: ClassVar[type[Shareholders]] = Shareholders
    ttl_s: ClassVar[int] = 86400

    def func_for(self, query: ShareholdersQuery) -> str:
        return "stock_gdfx_free_top_10_em" if query.free_float else "stock_gdfx_top_10_em"

    def kwargs(self, query: ShareholdersQuery) -> dict[str, Any]:
        return {"symbol": f"{query.exchange.lower() or 'sh'}{query.code}",
                "date": query.period.strftime("%Y%m%d")}

    def transform(self, query: ShareholdersQuery, raw: Any) -> Shareholders:
        pct_col = "占总流通股本持股比例" if query.free_float else "占总股本持股比例"
        rows = self.rows(query, raw, ["名次", "股东名称", "持股数", pct_col, "增减"])
        holders = [
            Shareholder(rank=int(num(r["名次"]) or i + 1), name=_s(r["股东名称"]),
                        shares_wan=to_wan(r["持股数"]), pct=_r(r[pct_col], 4),
                        change=_s(r["增减"]), change_pct=_r(r.get("变动比率"), 4),
                        kind=_s(r.get("股东性质") or r.get("股份类型")))
            for i, r in enumerate(rows)
        ]
        total = sum(h.pct or 0.0 for h in holders)
        return Shareholders(symbol=query.code, period=query.period, free_float=query.free_float,
                            holders=holders, top10_pct=round(total, 4),
                            source=_source(self.func_for(query), query.period))


class AkshareDividends(AkFetcher):
    dataset: ClassVar[str] = "cn.dividends"
    result_model: ClassVar[type[Dividends]] = Dividends
    func: ClassVar[str] = "stock_fhps_detail_em"
    ttl_s: ClassVar[int] = 86400

    def kwargs(self, query: SymbolQuery) -> dict[str, Any]:
        return {"symbol": query.code}

    def transform(self, query: SymbolQuery, raw: Any) -> Dividends:
        rows = self.rows(query, raw, ["报告期", "现金分红-现金分红比例", "除权除息日", "方案进度"],
                         allow_empty=True)
        items = [
            Dividend(period=_d(r["报告期"]), plan=_s(r.get("现金分红-现金分红比例描述")),
                     cash_per_10_shares=_r(r["现金分红-现金分红比例"], 4),
                     bonus_per_10_shares=_r(r.get("送转股份-送转总比例"), 4),
                     yield_pct=_r((num(r.get("现金分红-股息率")) or 0.0) * 100.0, 3)
                     if num(r.get("现金分红-股息率")) is not None else None,
                     eps=_r(r.get("每股收益"), 4), record_date=_d(r.get("股权登记日")) or None,
                     ex_date=_d(r["除权除息日"]) or None, progress=_s(r["方案进度"]))
            for r in rows
        ]
        items.sort(key=lambda d: d.period, reverse=True)
        return Dividends(symbol=query.code, items=items,
                         source=_source(self.func, items[0].period if items else None))


# --- flows -----------------------------------------------------------------------------------


class AkshareDragonTiger(AkFetcher):
    dataset: ClassVar[str] = "cn.dragon_tiger"
    result_model: ClassVar[type[DragonTiger]] = DragonTiger
    func: ClassVar[str] = "stock_lhb_detail_em"
    ttl_s: ClassVar[int] = 3600

    def kwargs(self, query: DateRangeQuery) -> dict[str, Any]:
        return {"start_date": query.start.strftime("%Y%m%d"),
                "end_date": query.end.strftime("%Y%m%d")}

    def transform(self, query: DateRangeQuery, raw: Any) -> DragonTiger:
        rows = self.rows(query, raw, ["代码", "名称", "上榜日", "龙虎榜净买额", "上榜原因"],
                         allow_empty=True)
        entries = [
            DragonTigerEntry(
                date=_d(r["上榜日"]), code=_s(r["代码"]), name=_s(r["名称"]),
                reason=_s(r["上榜原因"]), close=_r(r.get("收盘价")),
                change_pct=_r(r.get("涨跌幅")), net_buy_yi=to_yi(r["龙虎榜净买额"], 3),
                buy_yi=to_yi(r.get("龙虎榜买入额"), 3), sell_yi=to_yi(r.get("龙虎榜卖出额"), 3),
                net_buy_share_pct=_r(r.get("净买额占总成交比")),
                turnover_pct=_r(r.get("换手率")), after_1d_pct=_r(r.get("上榜后1日")),
                after_5d_pct=_r(r.get("上榜后5日")))
            for r in rows
        ]
        return DragonTiger(start=query.start, end=query.end, entries=entries,
                           source=_source(self.func, max((e.date for e in entries),
                                                         default=None)))


class AkshareCapitalFlow(AkFetcher):
    dataset: ClassVar[str] = "cn.capital_flow"
    result_model: ClassVar[type[CapitalFlow]] = CapitalFlow
    func: ClassVar[str] = "stock_individual_fund_flow"
    ttl_s: ClassVar[int] = 600

    def kwargs(self, query: SymbolQuery) -> dict[str, Any]:
        return {"stock": query.code, "market": (query.exchange or "sh").lower()}

    def transform(self, query: SymbolQuery, raw: Any) -> CapitalFlow:
        rows = self.rows(query, raw, ["日期", "主力净流入-净额", "超大单净流入-净额",
                                      "大单净流入-净额", "中单净流入-净额", "小单净流入-净额"])
        days = [
            FlowDay(date=_d(r["日期"]), close=_r(r.get("收盘价")), change_pct=_r(r.get("涨跌幅")),
                    main_net_yi=to_yi(r["主力净流入-净额"], 3),
                    main_net_pct=_r(r.get("主力净流入-净占比")),
                    super_large_net_yi=to_yi(r["超大单净流入-净额"], 3),
                    large_net_yi=to_yi(r["大单净流入-净额"], 3),
                    medium_net_yi=to_yi(r["中单净流入-净额"], 3),
                    small_net_yi=to_yi(r["小单净流入-净额"], 3))
            for r in rows
        ]
        days.sort(key=lambda d: d.date)
        return CapitalFlow(symbol=query.code, days=days, source=_source(self.func, days[-1].date))


class AkshareNorthbound(AkFetcher):
    dataset: ClassVar[str] = "cn.northbound"
    result_model: ClassVar[type[Northbound]] = Northbound
    func: ClassVar[str] = "stock_hsgt_fund_flow_summary_em"
    ttl_s: ClassVar[int] = 600

    def transform(self, query: EmptyQuery, raw: Any) -> Northbound:
        rows = self.rows(query, raw, ["交易日", "板块", "资金方向", "成交净买额", "资金净流入"])
        boards = [
            NorthboundBoard(
                date=_d(r["交易日"]), board=_s(r["板块"]), direction=_s(r["资金方向"]),
                # EastMoney reports these two in 亿元 already
                net_buy_yi=_r(r["成交净买额"]), net_inflow_yi=_r(r["资金净流入"]),
                up=int(num(r.get("上涨数")) or 0), down=int(num(r.get("下跌数")) or 0),
                index=_s(r.get("相关指数")), index_change_pct=_r(r.get("指数涨跌幅")))
            for r in rows
        ]
        return Northbound(boards=boards, source=_source(self.func, boards[0].date))


class AkshareNorthboundHoldings(AkFetcher):
    """Top northbound holdings; merged into `cn.northbound` by the tool."""

    dataset: ClassVar[str] = "cn.northbound_holdings"
    result_model: ClassVar[type[Northbound]] = Northbound
    func: ClassVar[str] = "stock_hsgt_hold_stock_em"
    ttl_s: ClassVar[int] = 3600

    def kwargs(self, query: EmptyQuery) -> dict[str, Any]:
        return {"market": "北向", "indicator": "今日排行"}

    def transform(self, query: EmptyQuery, raw: Any) -> Northbound:
        rows = self.rows(query, raw, ["代码", "名称", "今日持股-市值", "增持估计-市值"])
        holdings = [
            NorthboundHolding(
                code=_s(r["代码"]), name=_s(r["名称"]), close=_r(r.get("今日收盘价")),
                change_pct=_r(r.get("今日涨跌幅")),
                hold_value_yi=to_yi((num(r["今日持股-市值"]) or 0.0) * 1e4, 3),  # 万元
                hold_pct_of_float=_r(r.get("今日持股-占流通股比")),
                added_value_yi=to_yi((num(r["增持估计-市值"]) or 0.0) * 1e4, 3),
                sector=_s(r.get("所属板块")), date=_d(r.get("日期")))
            for r in rows
        ]
        holdings.sort(key=lambda h: -(h.added_value_yi or 0.0))
        return Northbound(boards=[], top_holdings=holdings[:50],
                          source=_source(self.func, holdings[0].date if holdings else None))


class AkshareFlowRanking(AkFetcher):
    dataset: ClassVar[str] = "cn.flow_ranking"
    result_model: ClassVar[type[FlowRanking]] = FlowRanking
    func: ClassVar[str] = "stock_main_fund_flow"
    ttl_s: ClassVar[int] = 300

    def kwargs(self, query: RankingQuery) -> dict[str, Any]:
        return {"symbol": query.scope}

    def transform(self, query: RankingQuery, raw: Any) -> FlowRanking:
        rows = self.rows(query, raw, ["代码", "名称", "今日排行榜-主力净占比",
                                      "5日排行榜-主力净占比", "10日排行榜-主力净占比"])
        items = [
            FlowRankItem(
                code=_s(r["代码"]), name=_s(r["名称"]), price=_r(r.get("最新价")),
                main_net_pct_today=_r(r["今日排行榜-主力净占比"]),
                change_pct_today=_r(r.get("今日排行榜-今日涨跌")),
                main_net_pct_5d=_r(r["5日排行榜-主力净占比"]),
                change_pct_5d=_r(r.get("5日排行榜-5日涨跌")),
                main_net_pct_10d=_r(r["10日排行榜-主力净占比"]),
                change_pct_10d=_r(r.get("10日排行榜-10日涨跌")), sector=_s(r.get("所属板块")))
            for r in rows
        ]
        return FlowRanking(items=items, source=_source(self.func, date.today()))


# --- screener and hotspots -------------------------------------------------------------------


class AkshareSpot(AkFetcher):
    """The whole A-share market's latest quotes with valuation: the screener's universe."""

    dataset: ClassVar[str] = "cn.screener"
    result_model: ClassVar[type[ScreenUniverse]] = ScreenUniverse
    func: ClassVar[str] = "stock_zh_a_spot_em"
    ttl_s: ClassVar[int] = 300

    def transform(self, query: EmptyQuery, raw: Any) -> ScreenUniverse:
        rows = self.rows(query, raw, ["代码", "名称", "最新价", "涨跌幅", "市盈率-动态", "市净率",
                                      "总市值", "流通市值", "换手率"])
        out = [
            ScreenRow(code=_s(r["代码"]), name=_s(r["名称"]), price=_r(r["最新价"], 3),
                      change_pct=_r(r["涨跌幅"]), pe=_r(r["市盈率-动态"]), pb=_r(r["市净率"]),
                      market_cap_yi=to_yi(r["总市值"]), float_cap_yi=to_yi(r["流通市值"]),
                      turnover_pct=_r(r["换手率"]), volume_ratio=_r(r.get("量比")),
                      amount_yi=to_yi(r.get("成交额"), 3),
                      change_60d_pct=_r(r.get("60日涨跌幅")),
                      change_ytd_pct=_r(r.get("年初至今涨跌幅")))
            for r in rows
        ]
        return ScreenUniverse(rows=out, source=_source(self.func, date.today(),
                                                       "latest session snapshot"))


class AkshareBoards(AkFetcher):
    """Industry or concept boards with their moves (query.scope: 行业 or 概念)."""

    dataset: ClassVar[str] = "cn.boards"
    result_model: ClassVar[type[Boards]] = Boards
    ttl_s: ClassVar[int] = 300

    def func_for(self, query: RankingQuery) -> str:
        return ("stock_board_concept_name_em" if query.scope == "概念"
                else "stock_board_industry_name_em")

    def transform(self, query: RankingQuery, raw: Any) -> Boards:
        rows = self.rows(query, raw, ["板块名称", "涨跌幅", "上涨家数", "下跌家数", "领涨股票"])
        boards = [
            BoardMove(name=_s(r["板块名称"]), change_pct=_r(r["涨跌幅"]),
                      up=int(num(r["上涨家数"]) or 0), down=int(num(r["下跌家数"]) or 0),
                      leader=_s(r["领涨股票"]), leader_change_pct=_r(r.get("领涨股票-涨跌幅")))
            for r in rows
        ]
        return Boards(boards=boards, source=_source(self.func_for(query), date.today()))


class AkshareIndexes(AkFetcher):
    dataset: ClassVar[str] = "cn.indexes"
    result_model: ClassVar[type[Indexes]] = Indexes
    func: ClassVar[str] = "stock_zh_index_spot_em"
    ttl_s: ClassVar[int] = 300

    def kwargs(self, query: EmptyQuery) -> dict[str, Any]:
        return {"symbol": "沪深重要指数"}

    def transform(self, query: EmptyQuery, raw: Any) -> Indexes:
        rows = self.rows(query, raw, ["代码", "名称", "最新价", "涨跌幅", "成交额"])
        return Indexes(
            indexes=[IndexMove(code=_s(r["代码"]), name=_s(r["名称"]), price=_r(r["最新价"]),
                               change_pct=_r(r["涨跌幅"]), amount_yi=to_yi(r["成交额"]))
                     for r in rows],
            source=_source(self.func, date.today()))


class AkshareHotRank(AkFetcher):
    dataset: ClassVar[str] = "cn.hot_stocks"
    result_model: ClassVar[type[HotStocks]] = HotStocks
    func: ClassVar[str] = "stock_hot_rank_em"
    ttl_s: ClassVar[int] = 300

    def transform(self, query: EmptyQuery, raw: Any) -> HotStocks:
        rows = self.rows(query, raw, ["当前排名", "代码", "股票名称", "最新价", "涨跌幅"])
        return HotStocks(
            stocks=[HotStock(rank=int(num(r["当前排名"]) or i + 1),
                             code=_s(r["代码"]).upper().removeprefix("SH").removeprefix("SZ"),
                             name=_s(r["股票名称"]), price=_r(r["最新价"]),
                             change_pct=_r(r["涨跌幅"])) for i, r in enumerate(rows)],
            source=_source(self.func, date.today()))


# --- funds -----------------------------------------------------------------------------------


class AkshareFundNav(AkFetcher):
    dataset: ClassVar[str] = "cn.fund_nav"
    result_model: ClassVar[type[FundNav]] = FundNav
    func: ClassVar[str] = "fund_etf_fund_info_em"
    ttl_s: ClassVar[int] = 3600

    def kwargs(self, query: FundQuery) -> dict[str, Any]:
        return {"fund": query.code, "start_date": "20000101", "end_date": "20500101"}

    def transform(self, query: FundQuery, raw: Any) -> FundNav:
        rows = self.rows(query, raw, ["净值日期", "单位净值", "累计净值", "日增长率"])
        points = sorted(
            (FundNavPoint(date=_d(r["净值日期"]), unit_nav=_r(r["单位净值"], 4),
                          accum_nav=_r(r["累计净值"], 4), daily_return_pct=_r(r["日增长率"], 4))
             for r in rows), key=lambda p: p.date)
        last = rows[-1] if _d(rows[-1]["净值日期"]) >= _d(rows[0]["净值日期"]) else rows[0]
        return FundNav(code=query.code, points=points, subscribe=_s(last.get("申购状态")),
                       redeem=_s(last.get("赎回状态")),
                       source=_source(self.func, points[-1].date))


class AkshareFundHoldings(AkFetcher):
    dataset: ClassVar[str] = "cn.fund_holdings"
    result_model: ClassVar[type[FundHoldings]] = FundHoldings
    func: ClassVar[str] = "fund_portfolio_hold_em"
    ttl_s: ClassVar[int] = 86400

    def kwargs(self, query: FundHoldingsQuery) -> dict[str, Any]:
        return {"symbol": query.code, "date": query.year}

    def transform(self, query: FundHoldingsQuery, raw: Any) -> FundHoldings:
        rows = self.rows(query, raw, ["股票代码", "股票名称", "占净值比例", "持股数", "持仓市值",
                                      "季度"])
        quarters = sorted({_s(r["季度"]) for r in rows}, reverse=True)
        latest = quarters[0]
        holdings = [
            FundHolding(code=_s(r["股票代码"]), name=_s(r["股票名称"]),
                        pct_of_nav=_r(r["占净值比例"]), shares_wan=_r(r["持股数"]),  # 万股
                        value_yi=to_yi((num(r["持仓市值"]) or 0.0) * 1e4, 3))  # 万元
            for r in rows if _s(r["季度"]) == latest
        ]
        holdings.sort(key=lambda h: -(h.pct_of_nav or 0.0))
        return FundHoldings(code=query.code, quarter=latest, holdings=holdings,
                            source=_source(self.func, None, latest))


# --- news ------------------------------------------------------------------------------------


class AkshareNews(AkFetcher):
    dataset: ClassVar[str] = "news.list"
    result_model: ClassVar[type[NewsList]] = NewsList
    func: ClassVar[str] = "stock_news_em"
    ttl_s: ClassVar[int] = 600

    def supports(self, query: NewsQuery) -> bool:
        return query.market == "cn"

    def kwargs(self, query: NewsQuery) -> dict[str, Any]:
        return {"symbol": query.code}

    def transform(self, query: NewsQuery, raw: Any) -> NewsList:
        rows = self.rows(query, raw, ["新闻标题", "新闻内容", "发布时间", "新闻链接"],
                         allow_empty=True)
        items = [
            NewsItem(id=news_id(_s(r["新闻链接"]), _s(r["新闻标题"])), title=_s(r["新闻标题"]),
                     published=_s(r["发布时间"]), publisher=_s(r.get("文章来源")),
                     url=_s(r["新闻链接"]), summary=_s(r["新闻内容"])[:300])
            for r in rows
        ]
        items.sort(key=lambda n: n.published, reverse=True)
        return NewsList(symbol=query.code, items=items,
                        source=_source(self.func, items[0].published[:10] if items else None))


for _cls in (AkshareBars, AkshareFinancialAbstract, AkshareFinancialIndicator,
             AkshareTopShareholders, AkshareDividends, AkshareDragonTiger, AkshareCapitalFlow,
             AkshareNorthbound, AkshareNorthboundHoldings, AkshareFlowRanking, AkshareSpot,
             AkshareBoards, AkshareIndexes, AkshareHotRank, AkshareFundNav, AkshareFundHoldings,
             AkshareNews):
    fx.register(_cls())
