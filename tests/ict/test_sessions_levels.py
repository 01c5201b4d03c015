"""Kill zones in New York time across daylight-saving changes, and previous-period levels."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest

import ict
from tests.ict.data import eurusd_hourly, nvda_daily


@pytest.mark.parametrize(("utc", "zone"), [
    # winter (EST, UTC-5) and summer (EDT, UTC-4): the same NY wall-clock zones
    (datetime(2024, 3, 8, 15, 0, tzinfo=UTC), "ny_am"),
    (datetime(2024, 3, 8, 14, 0, tzinfo=UTC), None),
    (datetime(2024, 3, 11, 14, 0, tzinfo=UTC), "ny_am"),
    (datetime(2024, 3, 11, 15, 0, tzinfo=UTC), None),
    (datetime(2024, 3, 11, 18, 30, tzinfo=UTC), "ny_pm"),
    (datetime(2024, 3, 8, 19, 59, tzinfo=UTC), "ny_pm"),
    (datetime(2024, 11, 1, 6, 0, tzinfo=UTC), "london"),   # 02:00 EDT
    (datetime(2024, 11, 4, 7, 0, tzinfo=UTC), "london"),   # 02:00 EST
    (datetime(2024, 11, 4, 6, 59, tzinfo=UTC), None),
    (datetime(2024, 11, 5, 1, 0, tzinfo=UTC), "asia"),     # 20:00 EST
    (datetime(2024, 11, 5, 4, 59, tzinfo=UTC), "asia"),    # 23:59 EST
    (datetime(2024, 11, 5, 5, 0, tzinfo=UTC), None),       # midnight
])
def test_kill_zones_follow_new_york_daylight_saving(utc: datetime, zone: str | None) -> None:
    assert ict.kill_zone_at(utc) == zone


def test_session_fit_templates() -> None:
    assert ict.session_fit("ny_am", "NY") == "preferred"
    assert ict.session_fit("ny_pm", "NY") == "preferred"
    assert ict.session_fit("london", "NY") == "acceptable"
    assert ict.session_fit("asia", "NY") == "off"
    assert ict.session_fit(None, "NY") == "off"
    assert ict.session_fit("london", "LDN") == "preferred"
    assert ict.session_fit("ny_am", "LDN") == "acceptable"


def test_real_hourly_windows_shift_in_utc_when_new_york_changes_clocks() -> None:
    bars = eurusd_hourly()
    # US clocks went forward on 2017-03-12
    before = ict.analyze(bars.loc[:"2017-03-10 23:00"], interval="1h",
                         options={"max_session_windows": 40})
    after = ict.analyze(bars.loc[:"2017-03-14 23:00"], interval="1h",
                        options={"max_session_windows": 40})
    am_before = [w for w in before.sessions.windows if w.name == "ny_am"][-1]
    am_after = [w for w in after.sessions.windows if w.name == "ny_am"][-1]
    assert bars.index[am_before.start_index].hour == 15  # 10:00 EST
    assert bars.index[am_after.start_index].hour == 14   # 10:00 EDT
    for w in after.sessions.windows:
        assert w.start.tzinfo is not None
        assert w.start.astimezone(ict.sessions.NY).hour in (2, 10, 14, 20)
        seg = bars.iloc[w.start_index:w.end_index + 1]
        assert w.high == seg["high"].max() and w.low == seg["low"].min()
        assert all(ict.kill_zone_at(t.to_pydatetime()) == w.name for t in seg.index)


def test_current_kill_zone_of_the_last_bar() -> None:
    bars = eurusd_hourly().loc[:"2017-03-14 14:00"]  # 10:00 EDT
    a = ict.analyze(bars, interval="1h")
    assert a.sessions.current_kill_zone == "ny_am"
    assert a.sessions.in_kill_zone and a.sessions.session_fit == "preferred"
    assert a.sessions.last_bar_time_ny is not None
    assert a.sessions.last_bar_time_ny.hour == 10


def test_daily_bars_have_no_kill_zones() -> None:
    a = ict.analyze(nvda_daily().iloc[-300:], interval="1d")
    assert a.sessions.applicable is False and a.sessions.windows == ()


def test_previous_day_and_week_levels_from_hourly_bars() -> None:
    bars = eurusd_hourly().iloc[:2000]
    a = ict.analyze(bars, interval="1h")
    ny = bars.index.tz_convert("America/New_York")
    day = pd.Series(ny.date, index=bars.index)
    prev_day = sorted(set(day))[-2]
    seg = bars[day == prev_day]
    assert a.levels.pdh is not None and a.levels.pdl is not None
    assert a.levels.pdh.price == seg["high"].max()
    assert a.levels.pdl.price == seg["low"].min()
    assert a.levels.pdh.period_start == prev_day
    week = pd.Series(ny.tz_localize(None).to_period("W-SUN").start_time.date, index=bars.index)
    prev_week = sorted(set(week))[-2]
    wseg = bars[week == prev_week]
    assert a.levels.pwh is not None and a.levels.pwh.price == wseg["high"].max()
    assert a.levels.pwl is not None and a.levels.pwl.price == wseg["low"].min()
    assert a.levels.pwh.period_start.weekday() == 0
    end = bars.index.get_loc(seg.index[-1])
    beyond = np.flatnonzero(bars["high"].to_numpy()[end + 1:] > a.levels.pdh.price)
    want = None if not len(beyond) else end + 1 + int(beyond[0])
    assert a.levels.pdh.swept_index == want


def test_previous_day_of_daily_bars_is_the_last_closed_bar() -> None:
    bars = nvda_daily().iloc[-300:]
    a = ict.analyze(bars, interval="1d")
    assert a.levels.pdh is not None and a.levels.pdh.price == bars["high"].iloc[-1]
    assert a.levels.pdh.period_start == bars.index[-1].date()
    weekly = ict.analyze(ict.resample(bars, "weekly"), interval="weekly")
    assert weekly.levels.pdh is None  # finer than the bars
    assert weekly.levels.pwh is not None
