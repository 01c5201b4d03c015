"""No repainting: every prefix of a real series reports exactly what the full series reported
as knowable at that bar (a property over all prefixes, not one example)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest

import ict
from tests.ict.data import btc_15m, eurusd_hourly, nvda_daily

CASES: dict[str, tuple[Callable[[], pd.DataFrame], str, slice, dict[str, Any]]] = {
    "eurusd_1h": (eurusd_hourly, "1h", slice(1000, 1400), {}),
    "nvda_1d": (nvda_daily, "1d", slice(-400, None), {}),
    "btc_15m_other_options": (btc_15m, "15m", slice(2000, 2250), {
        "fvg_mode": "very_aggressive", "ob_refinement": "aggressive", "minor_window": 1,
        "major_window": 3, "equal_tolerance": 0.3}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_prefix_reports_what_the_full_series_knew(case: str) -> None:
    loader, interval, span, options = CASES[case]
    bars = loader().iloc[span]
    full = ict.analyze(bars, interval=interval, options=options)
    counts = {"structure": 0, "fvgs": 0, "order_blocks": 0, "equal_highs": 0}
    for k in range(1, len(bars) + 1):
        prefix = ict.analyze(bars.iloc[:k], interval=interval, options=options)
        want = ict.knowable(full, k)
        got = ict.knowable(prefix, k)
        assert got == want, f"prefix of {k} bars differs"
        # a prefix reports nothing that only later bars could reveal
        assert ict.knowable(prefix, k + 10**6) == got
    for key in counts:
        counts[key] = len(ict.knowable(full, len(bars))[key])
    assert min(counts.values()) > 0, counts  # the property was exercised on every event type


def test_state_changes_are_reported_at_their_bar() -> None:
    bars = eurusd_hourly().iloc[1000:1400]
    full = ict.analyze(bars, interval="1h")
    filled = [g for g in full.fvgs if g.filled_index is not None]
    assert filled
    for g in filled[:20]:
        assert g.filled_index is not None
        before = ict.analyze(bars.iloc[:g.filled_index], interval="1h")
        after = ict.analyze(bars.iloc[:g.filled_index + 1], interval="1h")
        same_before = next(x for x in before.fvgs if x.index == g.index and x.side == g.side)
        same_after = next(x for x in after.fvgs if x.index == g.index and x.side == g.side)
        assert same_before.state != "filled" and same_before.filled_index is None
        assert same_after.state == "filled" and same_after.filled_index == g.filled_index


def test_still_forming_bar_is_dropped_unless_asked_for() -> None:
    bars = eurusd_hourly().iloc[:500]
    last = bars.index[-1]
    mid_bar = (last + timedelta(minutes=30)).to_pydatetime()
    dropped = ict.analyze(bars, interval="1h", options={"as_of": mid_bar})
    assert dropped.meta.bars == 499
    assert dropped.meta.includes_current_bar is False
    assert dropped.meta.current_bar is not None and dropped.meta.current_bar.time == last
    assert dropped.meta.last_closed_bar_time == bars.index[-2]
    assert ict.knowable(dropped, 499) == ict.knowable(ict.analyze(bars.iloc[:-1],
                                                                  interval="1h"), 499)
    kept = ict.analyze(bars, interval="1h",
                       options={"as_of": mid_bar, "include_current_bar": True})
    assert kept.meta.bars == 500 and kept.meta.includes_current_bar is True
    assert kept.meta.last_closed_bar_time == bars.index[-2]
    closed = ict.analyze(bars, interval="1h",
                         options={"as_of": (last + timedelta(hours=1)).isoformat()})
    assert closed.meta.bars == 500 and closed.meta.current_bar is None
    # without as_of the analyzer cannot know the time, so every bar counts as closed
    assert ict.analyze(bars, interval="1h").meta.bars == 500


def test_same_bars_same_output() -> None:
    bars = nvda_daily().iloc[-800:]
    a = ict.analyze(bars, interval="1d").to_dict()
    b = ict.analyze(bars.copy(), interval="1d").to_dict()
    assert a == b
