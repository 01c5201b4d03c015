"""Discounted cash flow (FCFF) valuation in numpy: the `dcf_valuation` tool.

The LLM supplies assumptions; this module does all the arithmetic and returns every line.

For years t = 1..N (paths of length N, or one value used for every year):

    revenue_t      = revenue_{t-1} * (1 + growth_t)
    ebit_t         = revenue_t * operating_margin_t
    nopat_t        = ebit_t * (1 - tax_rate_t)
    reinvestment_t = (revenue_t - revenue_{t-1}) / sales_to_capital_t
    fcff_t         = nopat_t - reinvestment_t
    discount_t     = prod_{i<=t} 1 / (1 + wacc_i)
    pv_t           = fcff_t * discount_t

Terminal (Gordon growth at g, discounted at the terminal WACC, default the last WACC):

    revenue_{N+1}  = revenue_N * (1 + g);  nopat_{N+1} at the terminal margin and last tax rate
    reinvestment   = g / terminal_roic * nopat_{N+1}   if terminal_roic is given,
                     else (revenue_{N+1} - revenue_N) / sales_to_capital_N
    TV_N           = fcff_{N+1} / (wacc_T - g);  PV(TV) = TV_N * discount_N

    EV = sum pv_t + PV(TV);  equity = EV - debt + cash - minority_interest;  per share = / shares

WACC <= g has no finite Gordon value and is rejected with the reason.
"""

from __future__ import annotations

from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, Field

from core.errors import InvalidArguments
from tools.models import rnd, tool

Rate = Annotated[float, Field(ge=-1.0, le=5.0)]
Vec = np.ndarray[Any, np.dtype[np.float64]]


class DCFYear(BaseModel):
    year: int
    revenue: float
    growth: float
    operating_margin: float
    ebit: float
    tax_rate: float
    nopat: float
    reinvestment: float
    fcff: float
    wacc: float
    discount_factor: float
    pv_fcff: float


class DCFTerminal(BaseModel):
    growth: float
    wacc: float
    revenue: float
    operating_margin: float
    nopat: float
    reinvestment: float
    fcff: float
    terminal_value: float = Field(description="value at the end of year N")
    pv_terminal_value: float


class SensitivityGrid(BaseModel):
    """Value per share for WACC (rows, the whole path shifted) x terminal growth (columns).
    None where WACC <= g."""

    wacc: list[float]
    terminal_growth: list[float]
    value_per_share: list[list[float | None]]


class DCFResult(BaseModel):
    """All amounts in the units the revenue, debt and cash were given in; per-share values in
    those units divided by `shares` (give shares in matching units)."""

    units: str
    years: list[DCFYear]
    terminal: DCFTerminal
    pv_explicit: float
    pv_terminal: float
    terminal_share_pct: float = Field(description="PV(TV) as percent of enterprise value")
    enterprise_value: float
    debt: float
    cash: float
    minority_interest: float
    equity_value: float
    shares: float
    value_per_share: float
    current_price: float | None = None
    upside_pct: float | None = None
    sensitivity: SensitivityGrid
    notes: list[str] = Field(default_factory=list)


def _path(name: str, values: list[float], n: int) -> Vec:
    if len(values) == 1:
        return np.full(n, float(values[0]))
    if len(values) != n:
        raise InvalidArguments(
            f"{name} has {len(values)} values; give one per projection year ({n}) or one "
            "value for all years"
        )
    return np.asarray(values, dtype=float)


class _Core(BaseModel):
    """Numbers of one DCF run (no formatting)."""

    revenue: list[float]
    ebit: list[float]
    nopat: list[float]
    reinvestment: list[float]
    fcff: list[float]
    discount: list[float]
    pv: list[float]
    tv_revenue: float
    tv_nopat: float
    tv_reinvestment: float
    tv_fcff: float
    tv: float
    pv_tv: float
    ev: float


def _run(
    base_revenue: float, growth: Vec, margin: Vec, tax: Vec, stc: Vec, wacc: Vec, g: float,
    wacc_t: float, margin_t: float, terminal_roic: float | None,
) -> _Core:
    if wacc_t <= g:
        raise InvalidArguments(
            f"terminal WACC {wacc_t:.2%} must exceed terminal growth {g:.2%}: with WACC <= g the "
            "Gordon growth terminal value fcff/(WACC - g) is infinite or negative, so no value "
            "exists; lower the terminal growth (it should not exceed long-run nominal GDP "
            "growth) or raise the WACC"
        )
    if np.any(wacc <= -1.0):
        raise InvalidArguments("WACC must be above -100%")
    revenue = base_revenue * np.cumprod(1.0 + growth)
    prev = np.concatenate([[base_revenue], revenue[:-1]])
    ebit = revenue * margin
    nopat = ebit * (1.0 - tax)
    reinvestment = (revenue - prev) / stc
    fcff = nopat - reinvestment
    discount = np.cumprod(1.0 / (1.0 + wacc))
    pv = fcff * discount
    tv_revenue = float(revenue[-1] * (1.0 + g))
    tv_nopat = tv_revenue * margin_t * (1.0 - float(tax[-1]))
    if terminal_roic is not None:
        tv_reinvestment = g / terminal_roic * tv_nopat
    else:
        tv_reinvestment = (tv_revenue - float(revenue[-1])) / float(stc[-1])
    tv_fcff = tv_nopat - tv_reinvestment
    tv = tv_fcff / (wacc_t - g)
    pv_tv = tv * float(discount[-1])
    return _Core(
        revenue=revenue.tolist(), ebit=ebit.tolist(), nopat=nopat.tolist(),
        reinvestment=reinvestment.tolist(), fcff=fcff.tolist(), discount=discount.tolist(),
        pv=pv.tolist(), tv_revenue=tv_revenue, tv_nopat=tv_nopat,
        tv_reinvestment=tv_reinvestment, tv_fcff=tv_fcff, tv=tv, pv_tv=pv_tv,
        ev=float(pv.sum()) + pv_tv,
    )


def dcf(
    *,
    base_revenue: float,
    revenue_growth: list[float],
    operating_margin: list[float],
    tax_rate: list[float],
    sales_to_capital: list[float],
    wacc: list[float],
    terminal_growth: float,
    shares: float,
    debt: float = 0.0,
    cash: float = 0.0,
    minority_interest: float = 0.0,
    terminal_wacc: float | None = None,
    terminal_margin: float | None = None,
    terminal_roic: float | None = None,
    current_price: float | None = None,
    units: str = "",
    wacc_step: float = 0.01,
    growth_step: float = 0.005,
    grid_size: int = 5,
) -> DCFResult:
    """FCFF DCF with explicit assumption paths; see the module docstring for every formula.

    Rates are decimals (0.08 = 8%). Paths have one value per projection year or a single value.
    """
    n = len(revenue_growth)
    if n < 1 or n > 30:
        raise InvalidArguments("give 1 to 30 projection years of revenue growth")
    if base_revenue <= 0 or shares <= 0:
        raise InvalidArguments("base revenue and shares must be positive")
    growth = _path("revenue_growth", revenue_growth, n)
    margin = _path("operating_margin", operating_margin, n)
    tax = _path("tax_rate", tax_rate, n)
    stc = _path("sales_to_capital", sales_to_capital, n)
    w = _path("wacc", wacc, n)
    if np.any(w > 1.0) or (terminal_wacc or 0) > 1.0 or abs(terminal_growth) > 0.5:
        raise InvalidArguments("rates are decimals: write 0.08 for 8%")
    if np.any(stc <= 0):
        raise InvalidArguments("sales_to_capital must be positive")
    if np.any((tax < 0) | (tax >= 1)):
        raise InvalidArguments("tax_rate must be in [0, 1)")
    if terminal_roic is not None and terminal_roic <= 0:
        raise InvalidArguments("terminal_roic must be positive")
    wacc_t = float(w[-1]) if terminal_wacc is None else float(terminal_wacc)
    margin_t = float(margin[-1]) if terminal_margin is None else float(terminal_margin)
    core = _run(base_revenue, growth, margin, tax, stc, w, terminal_growth, wacc_t, margin_t,
                terminal_roic)
    equity = core.ev - debt + cash - minority_interest
    per_share = equity / shares

    half = grid_size // 2
    grid_w = [round(wacc_t + (i - half) * wacc_step, 6) for i in range(grid_size)]
    grid_g = [round(terminal_growth + (j - half) * growth_step, 6) for j in range(grid_size)]
    values: list[list[float | None]] = []
    for wt in grid_w:
        shift = wt - wacc_t
        row: list[float | None] = []
        for gt in grid_g:
            if wt <= gt or np.any(w + shift <= -1.0):
                row.append(None)
                continue
            cell = _run(base_revenue, growth, margin, tax, stc, w + shift, gt, wt, margin_t,
                        terminal_roic)
            row.append(rnd((cell.ev - debt + cash - minority_interest) / shares, 4))
        values.append(row)

    years = [
        DCFYear(
            year=t + 1, revenue=_r(core.revenue[t]), growth=float(growth[t]),
            operating_margin=float(margin[t]), ebit=_r(core.ebit[t]), tax_rate=float(tax[t]),
            nopat=_r(core.nopat[t]), reinvestment=_r(core.reinvestment[t]),
            fcff=_r(core.fcff[t]), wacc=float(w[t]), discount_factor=round(core.discount[t], 6),
            pv_fcff=_r(core.pv[t]),
        )
        for t in range(n)
    ]
    notes: list[str] = []
    tv_share = core.pv_tv / core.ev * 100.0 if core.ev else float("nan")
    if core.ev and tv_share > 75:
        notes.append(f"terminal value is {tv_share:.0f}% of enterprise value: the result rests "
                     "mostly on the terminal assumptions")
    if any(f < 0 for f in core.fcff):
        notes.append("negative FCFF in some years (reinvestment exceeds NOPAT)")
    if terminal_growth > 0.04:
        notes.append("terminal growth above 4% exceeds typical long-run nominal GDP growth")
    return DCFResult(
        units=units, years=years,
        terminal=DCFTerminal(
            growth=terminal_growth, wacc=wacc_t, revenue=_r(core.tv_revenue),
            operating_margin=margin_t, nopat=_r(core.tv_nopat),
            reinvestment=_r(core.tv_reinvestment), fcff=_r(core.tv_fcff),
            terminal_value=_r(core.tv), pv_terminal_value=_r(core.pv_tv),
        ),
        pv_explicit=_r(sum(core.pv)), pv_terminal=_r(core.pv_tv),
        terminal_share_pct=round(tv_share, 2), enterprise_value=_r(core.ev), debt=debt,
        cash=cash, minority_interest=minority_interest, equity_value=_r(equity), shares=shares,
        value_per_share=round(per_share, 4), current_price=current_price,
        upside_pct=round((per_share / current_price - 1.0) * 100.0, 2)
        if current_price else None,
        sensitivity=SensitivityGrid(wacc=grid_w, terminal_growth=grid_g, value_per_share=values),
        notes=notes,
    )


def _r(x: float) -> float:
    return round(float(x), 4)


@tool(label="Running a DCF valuation", tags=["valuation"])
async def dcf_valuation(
    base_revenue: Annotated[float, Field(gt=0)],
    revenue_growth: Annotated[list[Rate], Field(min_length=1, max_length=30)],
    operating_margin: Annotated[list[Rate], Field(min_length=1, max_length=30)],
    wacc: Annotated[list[Rate], Field(min_length=1, max_length=30)],
    terminal_growth: Annotated[float, Field(ge=-0.5, le=0.5)],
    shares: Annotated[float, Field(gt=0)],
    tax_rate: Annotated[list[Rate], Field(min_length=1, max_length=30)] | None = None,
    sales_to_capital: Annotated[list[float], Field(min_length=1, max_length=30)] | None = None,
    debt: float = 0.0,
    cash: float = 0.0,
    minority_interest: float = 0.0,
    terminal_wacc: float | None = None,
    terminal_margin: float | None = None,
    terminal_roic: float | None = None,
    current_price: float | None = None,
    units: str = "",
) -> DCFResult:
    """FCFF discounted-cash-flow valuation computed in code from your assumptions: returns every
    yearly line (revenue, EBIT, NOPAT, reinvestment, FCFF, discount factor, PV), the terminal
    value, equity value per share and a WACC x terminal-growth sensitivity grid. Rates are
    decimals (0.08 = 8%); each path has one value per year or one value for all years.

    Args:
        base_revenue: last full-year revenue (e.g. in 亿元 or USD millions; say which in units).
        revenue_growth: growth per projection year, e.g. [0.2, 0.15, 0.1, 0.08, 0.05].
        operating_margin: EBIT margin per year (or one value).
        wacc: discount rate per year (or one value).
        terminal_growth: perpetual growth after the last year; must be below the terminal WACC.
        shares: shares outstanding, in the units that make per-share values come out right
            (e.g. 亿股 when amounts are in 亿元).
        tax_rate: tax rate per year (or one value); default 25%.
        sales_to_capital: revenue added per unit of capital invested (reinvestment =
            revenue increase / this), per year or one value; default 1.5.
        debt: debt to subtract from enterprise value (same units as revenue).
        cash: cash to add (same units as revenue).
        minority_interest: minority interests to subtract.
        terminal_wacc: WACC for the terminal value; default the last year's WACC.
        terminal_margin: margin in the terminal year; default the last year's margin.
        terminal_roic: if given, terminal reinvestment = growth / ROIC x NOPAT.
        current_price: market price per share, to report the upside.
        units: label of the amounts, e.g. "亿元" or "USD millions".
    """
    return dcf(
        base_revenue=base_revenue, revenue_growth=revenue_growth,
        operating_margin=operating_margin, tax_rate=tax_rate or [0.25],
        sales_to_capital=sales_to_capital or [1.5],
        wacc=wacc, terminal_growth=terminal_growth, shares=shares, debt=debt, cash=cash,
        minority_interest=minority_interest, terminal_wacc=terminal_wacc,
        terminal_margin=terminal_margin, terminal_roic=terminal_roic,
        current_price=current_price, units=units,
    )
