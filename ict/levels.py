"""Key levels: previous day, week (Monday-start) and month high and low.

Periods are calendar periods in New York time for intraday bars and in the index's own timezone
for daily and longer bars (whose labels are dates). When bars are shorter than the period, the
period holding the last bar is in progress and "previous" is the one before it; when a bar spans
the period (daily bars and days), the last closed bar's period is the previous one. Levels
finer than the bars (a previous day from weekly bars) are not reported. `swept_*` is the first
bar after the period that traded beyond the level.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Final

import numpy as np

from ict._arrays import NONE, BarArrays, IntArray, first_after
from ict.types import KeyLevel, Levels

_DAY_NS: Final = 86_400 * 10**9
_EPOCH: Final = date(1970, 1, 1)
_PERIOD_MINUTES: Final = {"day": 1440, "week": 10080, "month": 43200}


def _period_keys(days: IntArray, period: str) -> IntArray:
    if period == "day":
        return days
    if period == "week":
        return (days + 3) // 7  # Monday-start weeks (1970-01-01 was a Thursday)
    months: IntArray = days.astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)
    return months


def _period_start(key: int, period: str) -> date:
    if period == "day":
        return _EPOCH + timedelta(days=key)
    if period == "week":
        return _EPOCH + timedelta(days=key * 7 - 3)
    year, month = divmod(key, 12)
    return date(1970 + year, month + 1, 1)


def build_levels(
    bars: BarArrays, *, interval_minutes: int, includes_current_bar: bool
) -> Levels:
    n = bars.n
    if n == 0:
        return Levels(None, None, None, None, None, None)
    tz = "America/New_York" if interval_minutes < 1440 else bars.index.tz
    wall = np.asarray(bars.index.tz_convert(tz).tz_localize(None).as_unit("ns").asi8,
                      dtype=np.int64)
    days = wall // _DAY_NS
    found: dict[str, KeyLevel | None] = {}
    for period, hi_name, lo_name in (("day", "pdh", "pdl"), ("week", "pwh", "pwl"),
                                     ("month", "pmh", "pml")):
        found[hi_name] = found[lo_name] = None
        length = _PERIOD_MINUTES[period]
        if interval_minutes > length:
            continue
        keys = _period_keys(days, period)
        if interval_minutes < length or includes_current_bar:
            prior = np.flatnonzero(keys < keys[-1])
            if not len(prior):
                continue
            prev_key = int(keys[prior[-1]])
        else:
            prev_key = int(keys[-1])
        lo_i = int(np.searchsorted(keys, prev_key, side="left"))
        hi_i = int(np.searchsorted(keys, prev_key, side="right")) - 1
        start = _period_start(prev_key, period)
        seg = slice(lo_i, hi_i + 1)
        h_at = lo_i + int(np.argmax(bars.high[seg]))
        l_at = lo_i + int(np.argmin(bars.low[seg]))
        h_px = float(bars.high[h_at])
        l_px = float(bars.low[l_at])
        h_sw = first_after(bars.high, hi_i + 1, h_px, above=True)
        l_sw = first_after(bars.low, hi_i + 1, l_px, above=False)
        found[hi_name] = KeyLevel(hi_name.upper(), h_px, start, h_at, bars.time(h_at),
                                  None if h_sw == NONE else h_sw,
                                  None if h_sw == NONE else bars.time(h_sw))
        found[lo_name] = KeyLevel(lo_name.upper(), l_px, start, l_at, bars.time(l_at),
                                  None if l_sw == NONE else l_sw,
                                  None if l_sw == NONE else bars.time(l_sw))
    return Levels(found["pdh"], found["pdl"], found["pwh"], found["pwl"], found["pmh"],
                  found["pml"])
