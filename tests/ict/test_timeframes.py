"""The timeframe table, interval enforcement and resampling."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

import ict
from ict import ICTInputError
from tests.ict.data import eurusd_hourly, nvda_daily


def test_table_matches_seed() -> None:
    rows = {k: (tf.interval, tf.source_interval, tf.lookback_bars)
            for k, tf in ict.TIMEFRAMES.items()}
    assert rows == {
        "1m": ("1min", "1min", 60), "5m": ("5min", "1min", 72), "15m": ("15min", "1min", 288),
        "1H": ("60min", "1min", 336), "4H": ("4h", "60min", 180),
        "1D": ("daily", "daily", 365), "3M": ("weekly", "daily", 12),
        "6M": ("monthly", "daily", 6), "1Y": ("daily", "daily", 365),
        "Max": ("daily", "daily", 1825),
    }
    assert ict.get_timeframe("1h").key == "1H"
    assert ict.get_timeframe("max").horizon.startswith("position")
    with pytest.raises(ICTInputError, match="unknown timeframe"):
        ict.get_timeframe("2H")


@pytest.mark.parametrize(("alias", "canonical"), [
    ("1m", "1min"), ("5M", "5min"), ("60m", "60min"), ("1h", "60min"), ("4H", "4h"),
    ("1d", "daily"), ("D", "daily"), ("1wk", "weekly"), ("1mo", "monthly"),
])
def test_interval_aliases(alias: str, canonical: str) -> None:
    assert ict.normalize_interval(alias) == canonical


def test_enforcement_overrides_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="ict.timeframes"):
        e = ict.enforce_timeframe("4H", requested_interval="15min", requested_lookback=999)
    assert (e.interval, e.source_interval, e.lookback_bars) == ("4h", "60min", 180)
    assert e.overridden and len(e.notes) == 2
    assert "overridden" in caplog.text and "'4h'" in caplog.text
    same = ict.enforce_timeframe("4H", requested_interval="4h", requested_lookback=180)
    assert not same.overridden and same.notes == ()
    omitted = ict.enforce_timeframe("1D", requested_interval="daily")
    assert omitted.lookback_bars == 365 and omitted.overridden
    assert "not given" in omitted.notes[0]


def _minutes(days: int, start: str) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    idx = pd.date_range(start, periods=days * 1440, freq="1min", tz="UTC")
    close = 100 + np.cumsum(rng.normal(0, 0.05, len(idx)))
    openp = np.concatenate(([100.0], close[:-1]))
    wig = np.abs(rng.normal(0, 0.03, (2, len(idx))))
    return pd.DataFrame({"open": openp, "high": np.maximum(openp, close) + wig[0],
                         "low": np.minimum(openp, close) - wig[1], "close": close,
                         "volume": rng.integers(0, 50, len(idx)).astype(float)}, index=idx)


@pytest.mark.parametrize("interval", ["5min", "15min", "60min"])
def test_minute_buckets_from_one_minute_bars(interval: str) -> None:
    m1 = _minutes(3, "2024-03-09")  # spans the 2024-03-10 clock change
    out = ict.resample(m1, interval)
    want = m1.resample(interval).agg({"open": "first", "high": "max", "low": "min",
                                      "close": "last", "volume": "sum"})
    pd.testing.assert_frame_equal(out, want, check_freq=False, check_names=False)


def test_four_hour_bars_open_on_new_york_wall_clock() -> None:
    h1 = eurusd_hourly().loc["2017-03-01":"2017-03-31"]  # US DST began 2017-03-12
    h4 = ict.resample(h1, "4h")
    ny = h4.index.tz_convert("America/New_York")
    assert set(ny.hour) <= {0, 4, 8, 12, 16, 20}
    key = h1.index.tz_convert("America/New_York").tz_localize(None).floor("4h")
    want = h1.groupby(key).agg({"open": "first", "high": "max", "low": "min",
                                "close": "last", "volume": "sum"})
    np.testing.assert_array_equal(h4.to_numpy(), want.to_numpy())
    assert len(h4) == len(want)


def test_weekly_is_monday_start_and_monthly_is_calendar() -> None:
    d1 = nvda_daily().iloc[-400:]
    wk = ict.resample(d1, "weekly")
    assert all(t.weekday() == 0 for t in wk.index)
    period = d1.index.tz_localize(None).to_period("W-SUN")
    want = d1.groupby(period).agg({"open": "first", "high": "max", "low": "min",
                                   "close": "last", "volume": "sum"})
    np.testing.assert_array_equal(wk.to_numpy(), want.to_numpy())
    assert list(wk.index.tz_localize(None)) == list(want.index.start_time)
    mo = ict.resample(d1, "monthly")
    assert all(t.day == 1 for t in mo.index)
    mwant = d1.groupby(d1.index.tz_localize(None).to_period("M")).agg(
        {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"})
    np.testing.assert_array_equal(mo.to_numpy(), mwant.to_numpy())


def test_resample_refuses_finer_than_source() -> None:
    with pytest.raises(ICTInputError, match="cannot make"):
        ict.resample(nvda_daily().iloc[-50:], "4h")


def test_bar_end() -> None:
    t = pd.Timestamp("2024-01-31", tz="America/New_York")
    assert ict.bar_end(t, "monthly") == pd.Timestamp("2024-02-01", tz="America/New_York")
    assert ict.bar_end(t, "1h") == t + pd.Timedelta(hours=1)
    monday = pd.Timestamp("2024-01-29", tz="America/New_York")
    assert ict.bar_end(monday, "weekly") == monday + pd.Timedelta(days=7)
    friday = pd.Timestamp("2024-02-02", tz="America/New_York")  # stamped with its last day
    assert ict.bar_end(friday, "weekly") == monday + pd.Timedelta(days=7)
    assert ict.bar_end(pd.Timestamp("2024-02-02 16:00", tz="UTC"), "daily") == pd.Timestamp(
        "2024-02-03", tz="UTC")
