"""Golden tests on real series: the analyzer equals a slow reading of each definition."""

from __future__ import annotations

import json
from collections.abc import Callable

import pandas as pd
import pytest

import ict
from tests.ict import reference as ref
from tests.ict.data import btc_15m, eurusd_hourly, nvda_daily

SERIES: dict[str, tuple[Callable[[], pd.DataFrame], str, int]] = {
    # name: (loader, interval, bars used: the slow readings are quadratic in places)
    "eurusd_1h": (eurusd_hourly, "1h", 3000),
    "btc_15m": (btc_15m, "15m", 3000),
    "nvda_1d": (nvda_daily, "1d", 3000),
}


@pytest.fixture(scope="module", params=sorted(SERIES))
def series(request: pytest.FixtureRequest) -> tuple[str, pd.DataFrame, str]:
    loader, interval, count = SERIES[request.param]
    return request.param, loader().iloc[-count:], interval


@pytest.mark.parametrize("mode", ["very_aggressive", "aggressive", "defensive",
                                  "very_defensive"])
def test_fvgs_equal_the_three_candle_rule(series: tuple[str, pd.DataFrame, str],
                                          mode: str) -> None:
    _, bars, interval = series
    analysis = ict.analyze(bars, interval=interval, options={"fvg_mode": mode})
    got = [{"side": g.side, "index": g.index, "top": g.top, "bottom": g.bottom,
            "confirmed_index": g.confirmed_index, "mitigated_index": g.mitigated_index,
            "filled_index": g.filled_index} for g in analysis.fvgs]
    want = ref.fvgs(ref.Bars.of(bars), mode)
    assert got == want
    if mode == "very_aggressive":
        assert len(got) > 50  # real series have plenty of gaps: the check is not vacuous
    for g in analysis.fvgs:
        assert g.bottom < g.top
        assert g.ce == pytest.approx((g.top + g.bottom) / 2)
        assert g.state == ("filled" if g.filled_index is not None else
                           "partially_filled" if g.mitigated_index is not None else "open")


@pytest.mark.parametrize("window", [2, 5])
def test_swings_are_pivots(series: tuple[str, pd.DataFrame, str], window: int) -> None:
    _, bars, interval = series
    analysis = ict.analyze(bars, interval=interval,
                           options={"minor_window": 2, "major_window": 5})
    swings = analysis.swings.minor if window == 2 else analysis.swings.major
    highs, lows = ref.pivots(ref.Bars.of(bars), window)
    assert [s.index for s in swings if s.kind == "high"] == highs
    assert [s.index for s in swings if s.kind == "low"] == lows
    assert all(s.confirmed_index == s.index + window for s in swings)


@pytest.mark.parametrize("which", ["structure", "internal_structure"])
def test_bos_choch_follow_the_definition(series: tuple[str, pd.DataFrame, str],
                                         which: str) -> None:
    _, bars, interval = series
    analysis = ict.analyze(bars, interval=interval)
    struct = getattr(analysis, which)
    b = ref.Bars.of(bars)
    want = ref.structure(b, struct.window)
    got = [{"kind": e.kind, "direction": e.direction, "level": e.level,
            "swing_index": e.swing_index, "break_index": e.break_index,
            "confirmed_index": e.confirmed_index} for e in struct.events]
    assert got == want
    assert len(got) > 20
    # and each event against the definition directly
    previous = None
    for e in struct.events:
        up = e.direction == "up"
        level = b.h[e.swing_index] if up else b.lo[e.swing_index]
        assert e.level == level
        assert (b.c[e.confirmed_index] > level) if up else (b.c[e.confirmed_index] < level)
        live_from = e.swing_index + struct.window + 1
        assert live_from <= e.break_index <= e.confirmed_index
        # the confirming close is the first close beyond the level since it went live
        for t in range(live_from, e.confirmed_index):
            assert (b.c[t] <= level) if up else (b.c[t] >= level)
        assert e.kind == ("BOS" if previous in (None, e.direction) else "ChoCH")
        previous = e.direction
    if struct.events:
        last = struct.events[-1]
        assert struct.bias == ("bullish" if last.direction == "up" else "bearish")


@pytest.mark.parametrize("refinement", ["defensive", "aggressive"])
def test_order_blocks_follow_the_definition(series: tuple[str, pd.DataFrame, str],
                                            refinement: str) -> None:
    _, bars, interval = series
    analysis = ict.analyze(bars, interval=interval, options={"ob_refinement": refinement})
    b = ref.Bars.of(bars)
    events = analysis.structure.events
    assert len(analysis.order_blocks) == len(events)
    for ob, ev in zip(analysis.order_blocks, events, strict=True):
        want = ref.order_block(b, {"swing_index": ev.swing_index,
                                   "confirmed_index": ev.confirmed_index,
                                   "direction": ev.direction}, refinement)
        got = {k: getattr(ob, k) for k in want}
        assert got == want
        assert ob.side == ("bullish" if ev.direction == "up" else "bearish")
        assert ob.confirmed_index == ev.confirmed_index
        if ev.kind == "ChoCH":
            assert ob.zone_type == "main"
        assert 0.0 <= ob.score <= 100.0
        assert (ob.score == 0.0) == (ob.state == "broken")


def test_equal_highs_and_lows_follow_the_definition(
        series: tuple[str, pd.DataFrame, str]) -> None:
    _, bars, interval = series
    analysis = ict.analyze(bars, interval=interval)
    b = ref.Bars.of(bars)
    liq = analysis.liquidity
    for pools, high in ((liq.equal_highs, True), (liq.equal_lows, False)):
        want = ref.equal_pairs(b, 2, 0.1, high)
        got = [(p.first_index, p.second_index, p.level) for p in pools]
        assert got == want
        for p in pools:
            assert p.confirmed_index == p.second_index + 2
            if p.swept_index is not None:
                beyond = b.h[p.swept_index] > p.level if high else b.lo[p.swept_index] < p.level
                assert beyond
                for t in range(p.confirmed_index + 1, p.swept_index):
                    assert (b.h[t] <= p.level) if high else (b.lo[t] >= p.level)


def test_dealing_range_contains_the_last_close(series: tuple[str, pd.DataFrame, str]) -> None:
    _, bars, interval = series
    analysis = ict.analyze(bars, interval=interval)
    dr = analysis.dealing_range
    assert dr is not None
    assert dr.low <= dr.last_close <= dr.high
    assert dr.equilibrium == pytest.approx((dr.high + dr.low) / 2)
    assert 0.0 <= dr.pd_percent <= 100.0
    assert dr.zone == ("premium" if dr.pd_percent > 50 else
                       "discount" if dr.pd_percent < 50 else "equilibrium")
    majors = analysis.swings.major
    assert any(s.kind == "high" and s.index == dr.high_index for s in majors)
    assert any(s.kind == "low" and s.index == dr.low_index for s in majors)


def test_brief_is_compact_and_consistent(series: tuple[str, pd.DataFrame, str]) -> None:
    _, bars, interval = series
    analysis = ict.analyze(bars, interval=interval)
    brief = analysis.brief(limit=5)
    full_size = len(json.dumps(analysis.to_dict()))
    assert len(json.dumps(brief)) < full_size / 10
    assert brief["structure"]["bias"] == analysis.bias
    assert brief["structure"]["events_total"] == len(analysis.structure.events)
    assert len(brief["order_blocks"]["live_by_score"]) <= 5
    assert all(b["state"] != "broken" for b in brief["order_blocks"]["live_by_score"])
    assert all(g["state"] != "filled" for g in brief["fvgs"]["unfilled_latest"])
    assert "options" not in brief["meta"]
