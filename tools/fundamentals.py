"""Company fundamentals: financial statements, top shareholders, dividend history."""

from __future__ import annotations

from datetime import date
from typing import Annotated

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
from tools.models import tool
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
