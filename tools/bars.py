"""Bar arithmetic shared by every provider: interval names, aggregation, moving averages."""

from __future__ import annotations

import re

import pandas as pd

from core.errors import InvalidArguments

_AGG = {"open": "first", "high": "max", "low": "min", "close": "last", "volume": "sum"}
_UNIT_MINUTES = {"m": 1.0, "min": 1.0, "h": 60.0, "d": 1440.0, "w": 10080.0, "wk": 10080.0,
                 "mo": 43200.0}
INTERVALS = ("1m", "5m", "15m", "30m", "1h", "4h", "1d", "1w", "1mo")
MA_WINDOWS = (5, 20, 60)


def normalize_interval(interval: str) -> str:
    """Canonical interval name: `60m` -> `1h`, `1wk`/`W` -> `1w`, `M`/`1M` -> `1mo`, `D` -> `1d`."""
    text = interval.strip()
    aliases = {"D": "1d", "1D": "1d", "daily": "1d", "W": "1w", "1W": "1w", "1wk": "1w",
               "weekly": "1w", "M": "1mo", "1M": "1mo", "1mon": "1mo", "monthly": "1mo",
               "60m": "1h", "60min": "1h", "240m": "4h"}
    text = aliases.get(text, text.lower())
    if interval_minutes(text) <= 0:
        raise InvalidArguments(f"unknown interval {interval!r}; use one of {', '.join(INTERVALS)}")
    return text


def interval_minutes(interval: str) -> float:
    m = re.fullmatch(r"(\d+)\s*(min|mo|wk|m|h|d|w)", interval.strip().lower())
    if not m:
        raise InvalidArguments(f"unknown interval {interval!r}; use one of {', '.join(INTERVALS)}")
    return int(m.group(1)) * _UNIT_MINUTES[m.group(2)]


def _rule(interval: str) -> str:
    minutes = interval_minutes(interval)
    if interval.endswith("mo"):
        return f"{int(minutes // 43200)}MS"
    if interval.endswith(("w", "wk")):
        return f"{int(minutes // 10080)}W-SUN"
    if minutes >= 1440:
        return f"{int(minutes // 1440)}D"
    return f"{int(minutes)}min"


def aggregate(df: pd.DataFrame, interval: str, native: str) -> pd.DataFrame:
    """Aggregate OHLCV bars from `native` to the coarser `interval`.

    Daily and coarser buckets are stamped with the last real bar inside them, so a weekly bar
    never carries a date after the data it summarises.
    """
    if interval_minutes(interval) == interval_minutes(native) or df.empty:
        return df
    if interval_minutes(interval) < interval_minutes(native):
        raise InvalidArguments(f"cannot make {interval} bars out of {native} bars")
    rule = _rule(interval)
    grouped = df.resample(rule, label="left", closed="left")
    out = grouped.agg(_AGG)
    if interval_minutes(interval) > 1440:
        last = df.index.to_series().resample(rule, label="left", closed="left").last()
        out.index = pd.DatetimeIndex(last)
    out = out.dropna(subset=["close"])
    out.index.name = df.index.name
    out.attrs = dict(df.attrs)
    return out


def with_moving_averages(df: pd.DataFrame, windows: tuple[int, ...] = MA_WINDOWS) -> pd.DataFrame:
    """Add `ma{n}` close moving-average columns (NaN until n bars exist)."""
    out = df.copy()
    for n in windows:
        out[f"ma{n}"] = out["close"].rolling(n, min_periods=n).mean()
    out.attrs = dict(df.attrs)
    return out
