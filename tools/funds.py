"""Funds: China fund NAV history and stock holdings, US institutional 13F holdings."""

from __future__ import annotations

from typing import Annotated

import numpy as np
from pydantic import BaseModel, Field

from core.errors import InvalidArguments, UnknownSymbol
from tools.data import fetcher as fx
from tools.data import providers
from tools.data.models import FundHoldings, FundHoldingsQuery, FundNav, FundNavPoint, FundQuery
from tools.data.sec_provider import Holdings13F, Holdings13FQuery, local_cik
from tools.models import DataSource, tool


def _fund_code(code: str) -> str:
    digits = "".join(ch for ch in code if ch.isdigit())
    if len(digits) != 6:
        raise InvalidArguments(f"a China fund code has six digits, got {code!r}")
    return digits


class FundPerformance(BaseModel):
    """NAV-based returns in percent (1.5 = 1.5%), from accumulated NAV when available."""

    return_1m_pct: float | None = None
    return_3m_pct: float | None = None
    return_6m_pct: float | None = None
    return_1y_pct: float | None = None
    return_3y_pct: float | None = None
    max_drawdown_1y_pct: float | None = None
    volatility_1y_pct: float | None = Field(default=None, description="annualised")


class FundReport(BaseModel):
    code: str
    latest: FundNavPoint
    performance: FundPerformance
    recent: list[FundNavPoint] = Field(description="oldest first")
    subscribe: str = ""
    redeem: str = ""
    source: DataSource


def performance(points: list[FundNavPoint]) -> FundPerformance:
    """Returns, drawdown and volatility from NAV points (pure; 250 points ~ one year)."""
    navs = np.array([p.accum_nav if p.accum_nav is not None else (p.unit_nav or np.nan)
                     for p in points], dtype=float)
    navs = navs[np.isfinite(navs)]

    def ret(n: int) -> float | None:
        if len(navs) <= n:
            return None
        return round(float((navs[-1] / navs[-1 - n] - 1) * 100), 2)

    year = navs[-251:] if len(navs) > 1 else navs
    dd = None
    vol = None
    if len(year) > 1:
        peak = np.maximum.accumulate(year)
        dd = round(float(((year / peak) - 1).min() * 100), 2)
        daily = np.diff(year) / year[:-1]
        vol = round(float(daily.std(ddof=1) * np.sqrt(250) * 100), 2) if len(daily) > 1 else None
    return FundPerformance(return_1m_pct=ret(21), return_3m_pct=ret(63), return_6m_pct=ret(126),
                           return_1y_pct=ret(250), return_3y_pct=ret(750),
                           max_drawdown_1y_pct=dd, volatility_1y_pct=vol)


@tool(label="Fetching fund {code}", tags=["funds"])
async def get_cn_fund_data(
    code: str,
    recent: Annotated[int, Field(ge=1, le=250)] = 20,
) -> FundReport:
    """A China fund's NAV history (open-end, ETF, LOF): latest unit and accumulated NAV,
    returns over 1m/3m/6m/1y/3y, one-year max drawdown and volatility, recent NAVs and
    subscription status. For an ETF's traded price use get_ohlcv with its code.

    Args:
        code: six-digit fund code, e.g. "510300" or "110022".
        recent: how many recent NAV points to list.
    """
    providers.load()
    nav: FundNav = await fx.run("cn.fund_nav", FundQuery(code=_fund_code(code)))
    return FundReport(code=nav.code, latest=nav.points[-1], performance=performance(nav.points),
                      recent=nav.points[-recent:], subscribe=nav.subscribe, redeem=nav.redeem,
                      source=nav.source)


@tool(label="Fetching holdings of fund {code}", tags=["funds"])
async def get_cn_fund_holdings(
    code: str,
    year: str = "",
    limit: Annotated[int, Field(ge=1, le=100)] = 10,
) -> FundHoldings:
    """A China fund's stock holdings from its latest quarterly report in the year: weight in
    percent of NAV, shares in 万股 and value in 亿元.

    Args:
        code: six-digit fund code.
        year: report year such as "2024"; default the latest available.
        limit: how many holdings, largest first.
    """
    providers.load()
    if year and not (year.isdigit() and len(year) == 4):
        raise InvalidArguments(f"year must look like 2024, got {year!r}")
    result: FundHoldings = await fx.run("cn.fund_holdings",
                                        FundHoldingsQuery(code=_fund_code(code), year=year))
    result.holdings = result.holdings[:limit]
    return result


@tool(label="Fetching 13F holdings of {manager}", tags=["funds", "us"])
async def get_13f_holdings(
    manager: str,
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> Holdings13F:
    """A US institutional manager's latest 13F-HR holdings from SEC EDGAR: positions by
    market value in USD mn with portfolio weights.

    Args:
        manager: the filer's name (e.g. "Berkshire Hathaway"), ticker or SEC CIK number.
        limit: how many positions, largest first.
    """
    providers.load()
    found = local_cik(manager)
    if found is None:
        raise UnknownSymbol(manager, ["give the manager's SEC CIK number, e.g. 1067983"])
    result: Holdings13F = await fx.run("sec.13f", Holdings13FQuery(cik=found[0]))
    result.holdings = result.holdings[:limit]
    return result
