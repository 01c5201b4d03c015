"""Timeframes: the single table mapping UI keys to analysis interval, source and lookback, the
interval enforcement the chat and the tool share, and resampling of bars between intervals."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ict._validate import validate_bars
from ict.errors import ICTInputError
from ict.types import JSONMixin

log = logging.getLogger(__name__)

NY_TZ: Final = "America/New_York"

INTERVALS: Final = ("1min", "5min", "15min", "30min", "60min", "4h", "daily", "weekly",
                    "monthly")
INTERVAL_MINUTES: Final[dict[str, int]] = {
    "1min": 1, "5min": 5, "15min": 15, "30min": 30, "60min": 60, "4h": 240,
    "daily": 1440, "weekly": 10080, "monthly": 43200,
}
_ALIASES: Final[dict[str, str]] = {
    "1m": "1min", "1min": "1min", "1t": "1min",
    "5m": "5min", "5min": "5min", "5t": "5min",
    "15m": "15min", "15min": "15min", "15t": "15min",
    "30m": "30min", "30min": "30min", "30t": "30min",
    "60m": "60min", "60min": "60min", "1h": "60min", "1hr": "60min", "h": "60min",
    "hourly": "60min",
    "4h": "4h", "240m": "4h", "240min": "4h", "4hr": "4h",
    "1d": "daily", "d": "daily", "day": "daily", "daily": "daily",
    "1w": "weekly", "1wk": "weekly", "w": "weekly", "week": "weekly", "weekly": "weekly",
    "1mo": "monthly", "mo": "monthly", "month": "monthly", "monthly": "monthly",
}


def normalize_interval(interval: str) -> str:
    """Canonical interval name (`1h` -> `60min`, `1d` -> `daily`, ...). `1m` is one minute."""
    if not isinstance(interval, str):
        raise ICTInputError(f"interval must be a string, not {type(interval).__name__}")
    key = interval.strip().lower()
    if key not in _ALIASES:
        raise ICTInputError(f"unknown interval {interval!r}; use one of {', '.join(INTERVALS)}")
    return _ALIASES[key]


def bar_end(label: pd.Timestamp, interval: str) -> pd.Timestamp:
    """When the bar labelled `label` closes.

    Intraday labels are bar open times. Daily and longer bars end at the next calendar
    boundary (midnight, Monday, first of the month) after the label's date, so bars stamped
    with their period start and bars stamped with their last trading day both work.
    """
    iv = normalize_interval(interval)
    ts = pd.Timestamp(label)
    if iv == "monthly":
        return ts.normalize() + pd.offsets.MonthBegin(1)
    if iv == "weekly":
        return ts.normalize() + pd.Timedelta(days=7 - ts.weekday())
    if iv == "daily":
        return ts.normalize() + pd.Timedelta(days=1)
    return ts + pd.Timedelta(minutes=INTERVAL_MINUTES[iv])


@dataclass(frozen=True, slots=True)
class Timeframe(JSONMixin):
    """One row of the timeframe table."""

    key: str
    interval: str
    source_interval: str
    lookback_bars: int
    horizon: str


TIMEFRAMES: Final[dict[str, Timeframe]] = {
    tf.key: tf
    for tf in (
        Timeframe("1m", "1min", "1min", 60, "scalp (≈1 hour)"),
        Timeframe("5m", "5min", "1min", 72, "session (≈6 hours)"),
        Timeframe("15m", "15min", "1min", 288, "intraday (≈3 days)"),
        Timeframe("1H", "60min", "1min", 336, "short swing (≈14 days)"),
        Timeframe("4H", "4h", "60min", 180, "medium swing (≈30 days)"),
        Timeframe("1D", "daily", "daily", 365, "daily (≈1 year)"),
        Timeframe("3M", "weekly", "daily", 12, "weekly (≈3 months)"),
        Timeframe("6M", "monthly", "daily", 6, "monthly (≈6 months)"),
        Timeframe("1Y", "daily", "daily", 365, "daily (≈1 year)"),
        Timeframe("Max", "daily", "daily", 1825, "position (≈5 years)"),
    )
}
_BY_LOWER: Final = {k.lower(): v for k, v in TIMEFRAMES.items()}

# The bias stack: analysis interval -> UI key of its row in the table.
STACK_KEYS: Final[dict[str, str]] = {
    "daily": "1D", "4h": "4H", "15min": "15m", "5min": "5m", "1min": "1m",
}


def get_timeframe(key: str) -> Timeframe:
    """The table row for a UI key (case-insensitive: `1h` finds `1H`)."""
    tf = _BY_LOWER.get(str(key).strip().lower())
    if tf is None:
        raise ICTInputError(f"unknown timeframe {key!r}; use one of {', '.join(TIMEFRAMES)}")
    return tf


def timeframe_for_interval(interval: str) -> Timeframe:
    """The first table row analysing `interval` (30min, absent from the table, maps to 1H)."""
    iv = normalize_interval(interval)
    for tf in TIMEFRAMES.values():
        if tf.interval == iv:
            return tf
    return TIMEFRAMES["1H"] if iv == "30min" else TIMEFRAMES["1D"]


@dataclass(frozen=True, slots=True)
class Enforcement(JSONMixin):
    """What the chat/tool must analyse for a chat set to `timeframe`, and what was overridden."""

    timeframe: Timeframe
    interval: str
    source_interval: str
    lookback_bars: int
    requested_interval: str | None
    requested_lookback: int | None
    overridden: bool
    notes: tuple[str, ...]


def enforce_timeframe(
    key: str, *, requested_interval: str | None = None, requested_lookback: int | None = None
) -> Enforcement:
    """Pin the interval and lookback to the chat's timeframe row; log any override.

    A model asking for a different interval or lookback (or omitting the lookback) gets the
    table's values; the returned notes say what was changed so callers can surface it too.
    """
    tf = get_timeframe(key)
    notes: list[str] = []
    if requested_interval is not None:
        try:
            asked = normalize_interval(requested_interval)
        except ICTInputError:
            asked = requested_interval
        if asked != tf.interval:
            notes.append(f"interval {requested_interval!r} overridden with {tf.interval!r} "
                         f"for timeframe {tf.key}")
    if requested_lookback is None:
        notes.append(f"lookback not given; using {tf.lookback_bars} bars for timeframe {tf.key}")
    elif requested_lookback != tf.lookback_bars:
        notes.append(f"lookback {requested_lookback} overridden with {tf.lookback_bars} bars "
                     f"for timeframe {tf.key}")
    overridden = bool(notes)
    for note in notes:
        log.info("ict timeframe enforcement: %s", note)
    return Enforcement(tf, tf.interval, tf.source_interval, tf.lookback_bars,
                       requested_interval, requested_lookback, overridden, tuple(notes))


# ---------------------------------------------------------------------------------------------
# resampling

_DAY_NS: Final = 86_400 * 10**9


def _wall_ns(index: pd.DatetimeIndex, tz: object) -> npt.NDArray[Any]:
    """Wall-clock nanoseconds (as if UTC) of `index` seen in `tz`."""
    wall = index.tz_convert(tz).tz_localize(None).as_unit("ns")
    return np.asarray(wall.asi8, dtype=np.int64)


def resample(bars: pd.DataFrame, interval: str) -> pd.DataFrame:
    """Aggregate OHLCV bars to a coarser `interval`.

    Minute buckets (5min ... 4h) are New York wall-clock buckets from midnight, so 4h bars open
    at 00:00, 04:00, ... NY time across daylight-saving changes (5-60 minute buckets coincide
    with UTC ones). `daily` groups intraday bars by New York date. `weekly` (Monday-start) and
    `monthly` group by the calendar date of each bar: in New York for intraday input, in the
    index's own timezone for daily input (so midnight-stamped daily bars keep their date).
    Labels are bucket starts in the input's timezone; empty buckets are not produced, and the
    last bucket may be partial (the analyzer's `as_of` handles a still-forming bar).
    """
    frame = validate_bars(bars)
    target = normalize_interval(interval)
    idx = pd.DatetimeIndex(frame.index)
    tz = idx.tz
    if len(frame) == 0:
        return frame
    utc_ns = np.asarray(idx.as_unit("ns").asi8, dtype=np.int64)
    step = np.diff(utc_ns)
    intraday_source = bool(len(step) == 0 or np.median(step) < _DAY_NS)
    if INTERVAL_MINUTES[target] < 1440:
        if not intraday_source:
            raise ICTInputError(f"cannot make {target} bars out of daily or longer bars")
        width = INTERVAL_MINUTES[target] * 60 * 10**9
        wall = _wall_ns(idx, NY_TZ)
        key = wall // width
        starts = _run_starts(key)
        label_ns = key[starts] * width - (wall[starts] - utc_ns[starts])
        labels = pd.DatetimeIndex(pd.to_datetime(label_ns, unit="ns", utc=True)).tz_convert(tz)
    else:
        cal_tz: object = NY_TZ if intraday_source else tz
        days = _wall_ns(idx, cal_tz) // _DAY_NS
        if target == "daily":
            key = days
        elif target == "weekly":
            key = (days + 3) // 7  # 1970-01-01 was a Thursday; weeks start on Monday
        else:
            dates = days.astype("datetime64[D]")
            key = dates.astype("datetime64[M]").astype(np.int64)
        starts = _run_starts(key)
        if target == "daily":
            first_day = key[starts]
        elif target == "weekly":
            first_day = key[starts] * 7 - 3
        else:
            first_day = key[starts].astype("datetime64[M]").astype("datetime64[D]").astype(
                np.int64)
        naive = pd.DatetimeIndex(first_day.astype("datetime64[D]").astype("datetime64[ns]"))
        labels = naive.tz_localize(cal_tz).tz_convert(tz)
    labels = labels.as_unit(idx.unit)
    ends = np.append(starts[1:], len(key)) - 1
    o = frame["open"].to_numpy(dtype=np.float64)
    h = frame["high"].to_numpy(dtype=np.float64)
    lo = frame["low"].to_numpy(dtype=np.float64)
    c = frame["close"].to_numpy(dtype=np.float64)
    v = frame["volume"].to_numpy(dtype=np.float64)
    out = pd.DataFrame(
        {
            "open": o[starts],
            "high": np.maximum.reduceat(h, starts),
            "low": np.minimum.reduceat(lo, starts),
            "close": c[ends],
            "volume": np.add.reduceat(v, starts),
        },
        index=labels,
    )
    out.index.name = frame.index.name
    out.attrs = dict(bars.attrs)
    return out


def _run_starts(key: npt.NDArray[Any]) -> npt.NDArray[Any]:
    if not len(key):
        return np.zeros(0, dtype=np.int64)
    change = np.flatnonzero(key[1:] != key[:-1]) + 1
    return np.concatenate(([0], change)).astype(np.int64)
