"""Dealing range: the latest swing high at or above and swing low at or below the last close.

Major swings are tried first, then minor ones; with neither side found there is no range.
Equilibrium is the midpoint; `pd_percent` is where the close sits (0 = low, 100 = high), above
50 is premium, below 50 discount.
"""

from __future__ import annotations

import numpy as np

from ict._arrays import BarArrays, BoolArray
from ict.swings import SwingArrays
from ict.types import DealingRange


def _latest(ok: BoolArray) -> int:
    """Position of the latest swing satisfying `ok`, or -1."""
    hits = np.flatnonzero(ok)
    return int(hits[-1]) if len(hits) else -1


def build_dealing_range(
    bars: BarArrays, major: SwingArrays, minor: SwingArrays
) -> DealingRange | None:
    if bars.n == 0:
        return None
    close = float(bars.close[-1])
    for label, sw in (("major", major), ("minor", minor)):
        h = _latest(sw.high_price >= close)
        low = _latest(sw.low_price <= close)
        if h < 0 or low < 0:
            continue
        hi_p = float(sw.high_price[h])
        lo_p = float(sw.low_price[low])
        hi_i = int(sw.high_idx[h])
        lo_i = int(sw.low_idx[low])
        span = hi_p - lo_p
        pd_pct = 50.0 if span <= 0 else round(100.0 * (close - lo_p) / span, 2)
        zone = "premium" if pd_pct > 50 else ("discount" if pd_pct < 50 else "equilibrium")
        return DealingRange(
            hi_p, hi_i, bars.time(hi_i), lo_p, lo_i, bars.time(lo_i), (hi_p + lo_p) / 2.0,
            pd_pct, zone, close, label,  # type: ignore[arg-type]
        )
    return None
