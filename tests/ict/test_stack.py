"""The bias stack: grading rules on crafted analyses, and the full stack on source bars."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest

import ict
from bot.benches.ict import synthetic_bars
from ict import ICTAnalysis, StructureEvent
from tests.ict.data import btc_15m

NY_AM = datetime(2021, 12, 20, 15, 30, tzinfo=UTC)  # 10:30 in New York (EST)
OFF = datetime(2021, 12, 20, 17, 30, tzinfo=UTC)    # 12:30 in New York


@pytest.fixture(scope="module")
def base() -> ICTAnalysis:
    return ict.analyze(btc_15m().iloc[-300:], interval="15m")


def _event(direction: str, at: datetime, *, displaced: bool = True, kind: str = "BOS",
           index: int = 100) -> StructureEvent:
    return StructureEvent(kind, direction, 100.0, index - 6, at - timedelta(minutes=30),  # type: ignore[arg-type]
                          index, at, index, at, 101.0, 2.5 if displaced else 0.8, displaced)


def _with(a: ICTAnalysis, *, events: tuple[StructureEvent, ...] = (), interval: str,
          close: float = 100.0, zone: str | None = None, internal: tuple[StructureEvent, ...] = (),
          swings: tuple[ict.Swing, ...] = (), obs: tuple[ict.OrderBlock, ...] = (),
          at: datetime = NY_AM) -> ICTAnalysis:
    bias = "neutral" if not events else ("bullish" if events[-1].direction == "up" else "bearish")
    meta = replace(a.meta, interval=interval, last_bar=replace(a.meta.last_bar, close=close,
                                                               time=at))
    dr = None
    if zone is not None and a.dealing_range is not None:
        dr = replace(a.dealing_range, zone=zone, pd_percent=25.0 if zone == "discount" else 75.0)
    return replace(
        a, meta=meta, structure=replace(a.structure, events=events, bias=bias),
        internal_structure=replace(a.internal_structure, events=internal),
        swings=ict.Swings(a.swings.major, swings), order_blocks=obs, fvgs=(), dealing_range=dr,
        levels=ict.Levels(None, None, None, None, None, None),
        liquidity=replace(a.liquidity, equal_highs=(), equal_lows=(), external_high=None,
                          external_low=None))


def _ob(at: datetime, top: float, bottom: float) -> ict.OrderBlock:
    return ict.OrderBlock("bullish", "main", "defensive", top, bottom, 90, at, "ChoCH", 100.0,
                          95, at, None, None, None, None, "valid", 5, True, 80.0)


def _aligned(base: ICTAnalysis, *, at: datetime = NY_AM, mss: bool = True,
             daily: str = "up") -> dict[str, ICTAnalysis]:
    zone_at = at - timedelta(minutes=40)
    swing_at = at - timedelta(minutes=20)
    low = ict.Swing("low", 40, swing_at, 99.5, 42, swing_at + timedelta(minutes=2), 2)
    shift = _event("up", at - timedelta(minutes=5), kind="ChoCH", index=55)
    return {
        "daily": _with(base, events=(_event(daily, at - timedelta(days=3)),), interval="daily"),
        "4h": _with(base, events=(_event("up", at - timedelta(hours=8)),), interval="4h"),
        "15min": _with(base, events=(_event("up", at - timedelta(hours=1)),), interval="15min",
                       zone="discount"),
        "5min": _with(base, events=(_event("up", zone_at),), interval="5min", close=100.5,
                      obs=(_ob(zone_at, 100.0, 99.0),)),
        "1min": _with(base, interval="1min", swings=(low,), internal=(shift,) if mss else (),
                      close=100.6, at=at),
    }


def test_all_aligned_in_ny_am_is_grade_a_and_ready(base: ICTAnalysis) -> None:
    s = ict.bias_stack(_aligned(base))
    assert (s.bias, s.grade, s.score, s.status) == ("bullish", "A", 100, "ready")
    assert not s.counter_trend and s.session_fit == "preferred" and s.kill_zone == "ny_am"
    assert s.entry_zone is not None and s.entry_zone.kind == "order_block"
    assert s.entry_zone.ce == pytest.approx(99.5)
    assert s.mss is not None and not s.needs_one_minute_confirmation
    assert all(item.passed for item in s.checklist)
    assert s.rationale and s.wait_reason is None
    json.dumps(s.to_dict())


def test_without_the_one_minute_shift_it_waits(base: ICTAnalysis) -> None:
    s = ict.bias_stack(_aligned(base, mss=False))
    assert s.status == "wait" and s.wait_reason == "Waiting for 1m MSS inside zone"
    assert s.needs_one_minute_confirmation and s.score == 90 and s.grade == "A"
    assert [i.key for i in s.checklist if not i.passed] == ["one_minute_mss"]


def test_counter_trend_loses_the_grade(base: ICTAnalysis) -> None:
    s = ict.bias_stack(_aligned(base, daily="down"))
    assert s.counter_trend and s.htf_bias == "bearish"
    assert s.grade == "B" and s.score == 75
    assert any("counter-trend" in r for r in s.rationale)


def test_off_session_costs_points(base: ICTAnalysis) -> None:
    s = ict.bias_stack(_aligned(base), as_of=OFF)
    assert s.session_fit == "off" and s.kill_zone is None and s.score == 90
    london = datetime(2021, 12, 20, 8, 0, tzinfo=UTC)  # 03:00 New York
    assert ict.bias_stack(_aligned(base), as_of=london).session_fit == "acceptable"


def test_only_a_displaced_fifteen_minute_break_sets_the_bias(base: ICTAnalysis) -> None:
    stack = _aligned(base)
    quiet = _event("down", NY_AM - timedelta(minutes=30), displaced=False)
    m15 = stack["15min"]
    stack["15min"] = replace(m15, structure=replace(
        m15.structure, events=(*m15.structure.events, quiet), bias="bearish"))
    assert ict.bias_stack(stack).bias == "bullish"  # the undisplaced break does not flip it
    stack["15min"] = replace(m15, structure=replace(m15.structure, events=(quiet,)))
    s = ict.bias_stack(stack)
    assert s.bias == "neutral" and s.status == "wait"
    assert s.wait_reason is not None and "displaced 15m" in s.wait_reason
    assert s.grade == "C"


def test_missing_timeframes_fail_their_items(base: ICTAnalysis) -> None:
    stack = _aligned(base)
    del stack["1min"], stack["5min"]
    s = ict.bias_stack(stack)
    assert s.status == "wait" and s.entry_zone is None
    failed = {i.key: i.detail for i in s.checklist if not i.passed}
    assert failed["entry_zone"] == "no 5m analysis"
    assert failed["one_minute_mss"] == "no 1m analysis"
    with pytest.raises(ict.ICTInputError, match="bias-stack timeframe"):
        ict.bias_stack({"weekly": base})


def test_analyze_stack_on_source_bars() -> None:
    m1, d1 = synthetic_bars(minutes=12 * 1440, days=500)
    result = ict.analyze_stack(minute=m1, daily=d1)
    assert list(result.analyses) == ["daily", "4h", "15min", "5min", "1min"]
    sizes = {k: a.meta.bars for k, a in result.analyses.items()}
    # twelve days of minutes hold fewer 4h bars than the 180 lookback: all of them are used
    four_hour = len(ict.resample(ict.resample(m1, "60min"), "4h"))
    assert sizes == {"daily": 365, "4h": four_hour, "15min": 288, "5min": 72, "1min": 60}
    assert result.analyses["4h"].meta.interval == "4h"
    stack = result.stack
    assert stack.grade in ("A", "B", "C") and 0 <= stack.score <= 100
    assert (stack.status == "ready") == (stack.wait_reason is None)
    assert stack.kill_zone == "ny_am"
    json.dumps(result.to_dict())


def test_analyze_stack_drops_forming_bars_with_as_of() -> None:
    m1, d1 = synthetic_bars(minutes=3 * 1440, days=400)
    as_of = (m1.index[-1] + pd.Timedelta(seconds=30)).to_pydatetime()
    result = ict.analyze_stack(minute=m1, daily=d1, as_of=as_of)
    one = result.analyses["1min"].meta
    assert one.current_bar is not None and one.end == m1.index[-2]
    five = result.analyses["5min"].meta
    assert five.current_bar is not None  # the 5-minute bucket holding the last minute is open
