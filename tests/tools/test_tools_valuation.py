"""DCF against hand-computed closed forms."""

from __future__ import annotations

import pytest

from core.errors import InvalidArguments
from tools import build_registry
from tools.valuation import dcf, dcf_valuation


def test_constant_growth_equals_gordon_perpetuity() -> None:
    # Every year grows at g with a constant margin, tax, sales-to-capital and WACC, so FCFF
    # grows at g from year 1 and EV must equal FCFF_1 / (r - g).
    r0, g, m, tax, stc, r = 1000.0, 0.03, 0.20, 0.25, 2.0, 0.09
    fcff1 = r0 * (1 + g) * m * (1 - tax) - r0 * g / stc  # 154.5 - 15 = 139.5
    assert fcff1 == pytest.approx(139.5)
    res = dcf(base_revenue=r0, revenue_growth=[g] * 5, operating_margin=[m], tax_rate=[tax],
              sales_to_capital=[stc], wacc=[r], terminal_growth=g, shares=10.0)
    assert res.enterprise_value == pytest.approx(fcff1 / (r - g), rel=1e-9)  # 2325.0
    assert res.enterprise_value == pytest.approx(2325.0)
    assert res.value_per_share == pytest.approx(232.5)
    assert res.years[0].fcff == pytest.approx(139.5)
    assert res.years[1].fcff == pytest.approx(139.5 * 1.03)


def test_two_stage_matches_closed_form() -> None:
    # Stage 1: N=5 years at g1=10%; stage 2: perpetuity at g2=3%; r=10% flat.
    r0, g1, g2, n, m, tax, stc, r = 500.0, 0.10, 0.03, 5, 0.15, 0.20, 2.5, 0.10
    k1 = (1 + g1) * m * (1 - tax) - g1 / stc  # FCFF_t = R_{t-1} * k1 in stage 1
    fcff1 = r0 * k1
    # growing annuity at g1 discounted at r; with g1 == r it is n * fcff1 / (1 + r)
    pv_stage1 = n * fcff1 / (1 + r)
    rn = r0 * (1 + g1) ** n
    fcff_tv = rn * ((1 + g2) * m * (1 - tax) - g2 / stc)
    pv_tv = fcff_tv / (r - g2) / (1 + r) ** n
    res = dcf(base_revenue=r0, revenue_growth=[g1] * n, operating_margin=[m], tax_rate=[tax],
              sales_to_capital=[stc], wacc=[r], terminal_growth=g2, shares=100.0,
              debt=50.0, cash=20.0)
    assert res.pv_explicit == pytest.approx(pv_stage1, rel=1e-6)
    assert res.pv_terminal == pytest.approx(pv_tv, rel=1e-6)
    ev = pv_stage1 + pv_tv
    assert res.enterprise_value == pytest.approx(ev, rel=1e-6)
    assert res.equity_value == pytest.approx(ev - 50.0 + 20.0, rel=1e-6)
    assert res.value_per_share == pytest.approx((ev - 30.0) / 100.0, rel=1e-5)
    assert res.terminal_share_pct == pytest.approx(pv_tv / ev * 100, abs=0.01)


def test_two_stage_with_distinct_rates_and_wacc_path() -> None:
    # Stage 1 at g1=20% discounted at r=12%: growing annuity closed form.
    r0, g1, g2, n, m, tax, stc, r = 200.0, 0.20, 0.02, 4, 0.30, 0.25, 1.0, 0.12
    fcff1 = r0 * ((1 + g1) * m * (1 - tax) - g1 / stc)
    pv1 = fcff1 / (r - g1) * (1 - ((1 + g1) / (1 + r)) ** n)
    rn = r0 * (1 + g1) ** n
    tv = rn * ((1 + g2) * m * (1 - tax) - g2 / stc) / (r - g2)
    res = dcf(base_revenue=r0, revenue_growth=[g1] * n, operating_margin=[m], tax_rate=[tax],
              sales_to_capital=[stc], wacc=[r] * n, terminal_growth=g2, shares=1.0)
    assert res.pv_explicit == pytest.approx(pv1, rel=1e-6)
    assert res.terminal.terminal_value == pytest.approx(tv, rel=1e-6)
    # a WACC path discounts cumulatively
    res2 = dcf(base_revenue=r0, revenue_growth=[g1] * 2, operating_margin=[m], tax_rate=[tax],
               sales_to_capital=[stc], wacc=[0.10, 0.12], terminal_growth=g2, shares=1.0)
    assert res2.years[1].discount_factor == pytest.approx(1 / (1.10 * 1.12), abs=1e-6)


def test_terminal_roic_reinvestment() -> None:
    res = dcf(base_revenue=100.0, revenue_growth=[0.05], operating_margin=[0.2], tax_rate=[0.0],
              sales_to_capital=[1.0], wacc=[0.1], terminal_growth=0.04, shares=1.0,
              terminal_roic=0.08)
    nopat = 100 * 1.05 * 1.04 * 0.2
    assert res.terminal.reinvestment == pytest.approx(nopat * 0.5)
    assert res.terminal.fcff == pytest.approx(nopat * 0.5)


def test_wacc_not_above_growth_is_rejected_with_reason() -> None:
    with pytest.raises(InvalidArguments, match="must exceed terminal growth"):
        dcf(base_revenue=100.0, revenue_growth=[0.1], operating_margin=[0.2], tax_rate=[0.2],
            sales_to_capital=[1.0], wacc=[0.03], terminal_growth=0.03, shares=1.0)


async def test_registry_reports_the_rejection() -> None:
    outcome = await build_registry().call("dcf_valuation", {
        "base_revenue": 100, "revenue_growth": [0.1], "operating_margin": [0.2],
        "wacc": [0.02], "terminal_growth": 0.03, "shares": 1})
    assert not outcome.ok and "infinite or negative" in outcome.content


def test_sensitivity_grid() -> None:
    res = dcf(base_revenue=1000.0, revenue_growth=[0.03] * 5, operating_margin=[0.2],
              tax_rate=[0.25], sales_to_capital=[2.0], wacc=[0.05], terminal_growth=0.03,
              shares=10.0)
    grid = res.sensitivity
    assert len(grid.wacc) == 5 and len(grid.terminal_growth) == 5
    assert grid.value_per_share[2][2] == pytest.approx(res.value_per_share, rel=1e-6)
    # WACC 3% vs growth 3.5%/4%: no finite value
    assert grid.wacc[0] == pytest.approx(0.03)
    assert grid.value_per_share[0][2] is None and grid.value_per_share[0][4] is None
    # value falls as WACC rises and rises with growth
    assert grid.value_per_share[3][2] > grid.value_per_share[4][2]  # type: ignore[operator]
    assert grid.value_per_share[4][1] < grid.value_per_share[4][3]  # type: ignore[operator]


def test_bad_paths_and_percent_mistakes() -> None:
    with pytest.raises(InvalidArguments, match="one per projection year"):
        dcf(base_revenue=1.0, revenue_growth=[0.1, 0.1, 0.1], operating_margin=[0.2, 0.2],
            tax_rate=[0.2], sales_to_capital=[1.0], wacc=[0.1], terminal_growth=0.02,
            shares=1.0)
    with pytest.raises(InvalidArguments, match="decimals"):
        dcf(base_revenue=1.0, revenue_growth=[0.1], operating_margin=[0.2], tax_rate=[0.2],
            sales_to_capital=[1.0], wacc=[9.0], terminal_growth=0.02, shares=1.0)


async def test_tool_defaults_and_upside() -> None:
    res = await dcf_valuation(base_revenue=100.0, revenue_growth=[0.1, 0.08],
                              operating_margin=[0.25], wacc=[0.09], terminal_growth=0.025,
                              shares=2.0, current_price=50.0, units="亿元")
    assert res.years[0].tax_rate == 0.25 and res.units == "亿元"
    assert res.upside_pct == pytest.approx((res.value_per_share / 50 - 1) * 100, abs=0.01)
