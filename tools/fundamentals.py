"""Company fundamentals: financial statements, top shareholders, dividend history."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Any

from pydantic import BaseModel, Field

from core.errors import DataUnavailable, InvalidArguments
from tools.data import fetcher as fx
from tools.data import providers
from tools.data.models import (
    Dividends,
    Financials,
    FinancialsQuery,
    Shareholders,
    ShareholdersQuery,
    SymbolQuery,
)
from tools.data.units import ReportKind, ReportPeriod, latest_quarterly_report, report_period
from tools.models import DataSource, tool
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol


def _cn(sym: ResolvedSymbol, what: str) -> None:
    if sym.market != "cn" or sym.kind != "stock":
        raise InvalidArguments(f"{what} is available for A-share stocks; {sym.code} is a "
                               f"{sym.market} {sym.kind}")


def today() -> date:
    return date.today()


class FinancialsReport(BaseModel):
    """`periods` newest first; money in `units` (A-shares 亿元, US USD mn)."""

    financials: Financials
    name: str = ""
    latest_quarterly: str = Field(
        default="", description="newest quarterly report all A-shares have filed by today")


@tool(label="Fetching financials of {symbol}", tags=["fundamentals"])
async def get_financials(
    symbol: str,
    quarterly: bool = True,
    periods: Annotated[int, Field(ge=1, le=20)] = 8,
) -> FinancialsReport:
    """Key financial lines per report period: revenue, net profit, cash flow, EPS, ROE,
    margins, debt ratio and growth. A-shares in 亿元 (1 billion yuan = 10亿), US in USD mn.

    Args:
        symbol: code, ticker or name.
        quarterly: true for quarterly reports (一季报/半年报/三季报/年报), false for annual only.
        periods: how many report periods, newest first.
    """
    providers.load()
    sym = resolve_symbol(symbol)
    query = FinancialsQuery(code=sym.code, market=sym.market, exchange=sym.exchange,
                            yahoo=sym.yahoo, quarterly=quarterly)
    dataset = "cn.financials" if sym.market == "cn" else "us.financials"
    fin: Financials = await fx.run(dataset, query)
    fin.periods = fin.periods[:periods]
    latest = ""
    if sym.market == "cn":
        rp = latest_quarterly_report(today())
        latest = rp.label
        if fin.periods and fin.periods[0].period < rp.end:
            fin.note = (f"the newest period here is {fin.periods[0].label}; {rp.label} "
                        "should be out by now")
    return FinancialsReport(financials=fin, name=sym.name, latest_quarterly=latest)


_PREVIOUS: dict[str, ReportKind] = {"mid": "q1", "q3": "mid", "annual": "q3"}


def _previous(rp: ReportPeriod) -> ReportPeriod:
    if rp.kind == "q1":
        return report_period(rp.year - 1, "annual")
    return report_period(rp.year, _PREVIOUS[rp.kind])


@tool(label="Fetching top shareholders of {symbol}", tags=["fundamentals"])
async def get_top_shareholders(
    symbol: str,
    period: date | None = None,
    free_float: bool = False,
) -> Shareholders:
    """Top ten shareholders of an A-share (or top ten free-float holders) with holdings in 万股,
    percent of shares and the change versus the prior report.

    Args:
        symbol: A-share code or name.
        period: report period end (YYYY-03-31/06-30/09-30/12-31); default the newest quarterly
            report every company has filed by today.
        free_float: true for the top ten free-float (流通) holders.
    """
    providers.load()
    sym = resolve_symbol(symbol)
    _cn(sym, "shareholder data")
    rp = latest_quarterly_report(today())
    ends = [period] if period else [rp.end, _previous(rp).end]
    last_error: DataUnavailable | None = None
    for end in ends:
        try:
            result: Shareholders = await fx.run("cn.shareholders", ShareholdersQuery(
                code=sym.code, market="cn", exchange=sym.exchange, period=end,
                free_float=free_float))
            return result
        except DataUnavailable as exc:
            last_error = exc
    assert last_error is not None
    raise last_error


@tool(label="Fetching dividends of {symbol}", tags=["fundamentals"])
async def get_dividends(
    symbol: str,
    limit: Annotated[int, Field(ge=1, le=40)] = 10,
) -> Dividends:
    """Dividend and bonus-share history (分红送配) of an A-share: plan, cash per 10 shares,
    dividend yield, record and ex-dividend dates, newest first.

    Args:
        symbol: A-share code or name.
        limit: how many report periods.
    """
    providers.load()
    sym = resolve_symbol(symbol)
    _cn(sym, "dividend history")
    result: Dividends = await fx.run("cn.dividends", SymbolQuery(
        code=sym.code, market="cn", exchange=sym.exchange))
    result.items = result.items[:limit]
    return result


# --- valuation multiples -----------------------------------------------------------------------


class ValuationMultiples(BaseModel):
    """P/E and P/B from one close and the statements in force on its date. `pe` divides by
    the newest annual EPS (static, 静态); `pe_ttm` by the trailing four quarters' EPS; `pb`
    by the newest book value per share. `price_date` is never after the statements' reach
    (a year past their newest period): a 2024 price over 2019 earnings is no P/E."""

    symbol: str
    name: str = ""
    currency: str = "CNY"
    price: float
    price_date: date
    last_price_date: date = Field(description="the newest close the data has (may be later "
                                  "than price_date when the statements stop earlier)")
    pe: float | None = None
    eps: float | None = None
    eps_period: str = ""
    pe_ttm: float | None = None
    eps_ttm: float | None = None
    ttm_period: str = ""
    pb: float | None = None
    bvps: float | None = None
    bvps_period: str = ""
    statements_source: DataSource
    price_source: DataSource


def _same_period_year_before(periods: list[Any], p: Any) -> Any | None:
    want = p.period.replace(year=p.period.year - 1)
    return next((x for x in periods if x.period == want), None)


@tool(label="Computing P/E and P/B of {symbol}", tags=["fundamentals", "valuation"])
async def get_valuation_multiples(symbol: str) -> ValuationMultiples:
    """P/E (on the last annual EPS and on trailing-twelve-month EPS) and P/B of an A-share,
    from one close and the statements in force on that date, both dated.

    Args:
        symbol: code or name of an A-share stock, e.g. "601318", "中国平安".
    """
    from tools.data.prices import get_bars
    from tools.market import source_from

    providers.load()
    sym = resolve_symbol(symbol)
    _cn(sym, "P/E and P/B")
    query = FinancialsQuery(code=sym.code, market=sym.market, exchange=sym.exchange,
                            yahoo=sym.yahoo, quarterly=True)
    fin: Financials = await fx.run("cn.financials", query)
    if not fin.periods:
        raise DataUnavailable(f"no statements of {sym.code}")
    bars = await get_bars(sym, "1d")
    if bars.empty:
        raise DataUnavailable(f"no prices of {sym.code}")
    newest = max(p.period for p in fin.periods)
    reach = newest + timedelta(days=122)  # the next report is due by then
    last_day = bars.index[-1].date()
    usable = bars[[ts.date() <= reach for ts in bars.index]]
    if usable.empty:
        raise DataUnavailable(f"the prices of {sym.code} start after its statements' reach")
    price_day = usable.index[-1].date()
    price = float(usable["close"].iloc[-1])
    known = sorted((p for p in fin.periods if p.period <= price_day),
                   key=lambda p: p.period, reverse=True)
    if not known:
        raise DataUnavailable(f"no statements of {sym.code} before {price_day}")
    annual = next((p for p in known if p.period.month == 12), None)
    eps = annual.values.get("eps") if annual is not None else None
    latest = known[0]
    eps_ttm: float | None = None
    if latest.period.month == 12:
        eps_ttm = latest.values.get("eps")
    else:
        before = next((p for p in known if p.period.month == 12
                       and p.period.year == latest.period.year - 1), None)
        same = _same_period_year_before(known, latest)
        parts = [latest.values.get("eps"),
                 before.values.get("eps") if before else None,
                 same.values.get("eps") if same else None]
        if all(v is not None for v in parts):
            a, b, c = (float(v) for v in parts if v is not None)
            eps_ttm = a + b - c
    bvps = latest.values.get("bvps")
    return ValuationMultiples(
        symbol=sym.code, name=sym.name, price=round(price, 2), price_date=price_day,
        last_price_date=last_day,
        pe=round(price / eps, 2) if eps and eps > 0 else None,
        eps=eps, eps_period=annual.label if annual is not None else "",
        pe_ttm=round(price / eps_ttm, 2) if eps_ttm and eps_ttm > 0 else None,
        eps_ttm=round(eps_ttm, 2) if eps_ttm is not None else None,
        ttm_period=latest.label,
        pb=round(price / bvps, 2) if bvps and bvps > 0 else None,
        bvps=round(bvps, 2) if bvps is not None else None, bvps_period=latest.label,
        statements_source=fin.source, price_source=source_from(bars))
