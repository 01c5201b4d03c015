"""Input checks shared by `analyze` and `resample`: a clear ICTInputError instead of a crash.

Rejected: not a DataFrame, missing columns (matched case-insensitively), no bars, a non-datetime
or naive (timezone-less) index, missing (NaT), duplicated or unsorted timestamps, non-numeric,
NaN or infinite prices, NaN or negative volume, and OHLC rows where the high is below the low,
open or close (or the low above them). Zero volume is accepted: volume is carried through but
no detector uses it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from ict.errors import ICTInputError

COLUMNS = ("open", "high", "low", "close", "volume")


def _first(index: pd.DatetimeIndex, mask: npt.NDArray[Any]) -> str:
    pos = int(np.flatnonzero(mask)[0])
    return f"{int(mask.sum())} bar(s), first at position {pos} ({index[pos]})"


def validate_bars(bars: object) -> pd.DataFrame:
    """Check `bars` and return a float64 frame with exactly the five OHLCV columns."""
    index, data = validated_arrays(bars)
    return pd.DataFrame(data, index=index, copy=False)


def validated_arrays(bars: object) -> tuple[pd.DatetimeIndex, dict[str, npt.NDArray[Any]]]:
    """Check `bars`; return the index and float64 arrays of the five OHLCV columns."""
    if not isinstance(bars, pd.DataFrame):
        raise ICTInputError(
            "bars must be a pandas DataFrame with columns open, high, low, close, volume "
            f"and a timezone-aware DatetimeIndex, not {type(bars).__name__}")
    names = {str(c).strip().lower(): c for c in bars.columns}
    missing = [c for c in COLUMNS if c not in names]
    if missing:
        raise ICTInputError(f"bars are missing column(s) {', '.join(missing)}; "
                            f"have {', '.join(map(str, bars.columns)) or 'none'}")
    index = bars.index
    if not isinstance(index, pd.DatetimeIndex):
        raise ICTInputError("bars need a DatetimeIndex of bar open times "
                            f"(got {type(index).__name__}); set the timestamp column as index")
    if index.tz is None:
        raise ICTInputError(
            "bars have a naive (timezone-less) index; localize it first, e.g. "
            "bars.tz_localize('UTC') or bars.tz_localize('America/New_York')")
    if len(bars) == 0:
        raise ICTInputError("no bars to analyse")
    if index.hasnans:
        raise ICTInputError("bars have missing (NaT) timestamps")
    ns = np.asarray(index.as_unit("ns").asi8, dtype=np.int64)
    if len(ns) > 1:
        step = np.diff(ns)
        if (step == 0).any():
            raise ICTInputError("bars have duplicated timestamps: "
                                + _first(index, np.append(False, step == 0)))
        if (step < 0).any():
            raise ICTInputError("bars are not sorted by time (sort_index() them): "
                                + _first(index, np.append(False, step < 0)))
    data: dict[str, npt.NDArray[Any]] = {}
    for col in COLUMNS:
        try:
            data[col] = np.asarray(bars[names[col]].to_numpy(dtype=np.float64))
        except (TypeError, ValueError) as exc:
            raise ICTInputError(f"column {col!r} is not numeric: {exc}") from exc
    for col in ("open", "high", "low", "close"):
        bad = ~np.isfinite(data[col])
        if bad.any():
            raise ICTInputError(f"column {col!r} has NaN or infinite prices: "
                                + _first(index, bad))
    vol = data["volume"]
    bad = ~np.isfinite(vol) | (vol < 0)
    if bad.any():
        raise ICTInputError("column 'volume' has NaN, infinite or negative values (use 0 when "
                            "volume is unknown): " + _first(index, bad))
    o, h, lo, c = data["open"], data["high"], data["low"], data["close"]
    bad = (h < lo) | (h < o) | (h < c) | (lo > o) | (lo > c)
    if bad.any():
        raise ICTInputError("inconsistent OHLC (high below low/open/close or low above "
                            "open/close): " + _first(index, bad))
    return index, data
