"""Fair value gaps: the three-candle rule with a relative-width filter.

Around middle candle i: bullish when low[i+1] > high[i-1], bearish when high[i+1] < low[i-1].
`relative_width` is the gap's width over the mean high-low range of the `range_window` bars
ending at the third candle (so it is known when the gap is). Filter modes keep gaps with
relative width of at least: very_aggressive any, aggressive 0.1, defensive 0.25,
very_defensive 0.5.

From the bar after the third candle on, the gap is mitigated by the first candle body entering
it and filled by the first candle body reaching its far side (a bullish gap's bottom).
"""

from __future__ import annotations

import numpy as np

from ict._arrays import NONE, BarArrays, first_beyond_many, opt_ints
from ict.types import FairValueGap, FVGMode

FVG_THRESHOLDS: dict[str, float] = {
    "very_aggressive": 0.0,
    "aggressive": 0.1,
    "defensive": 0.25,
    "very_defensive": 0.5,
}


def build_fvgs(bars: BarArrays, *, mode: FVGMode, range_window: int) -> tuple[FairValueGap, ...]:
    n = bars.n
    if n < 3:
        return ()
    h, lo = bars.high, bars.low
    bull = lo[2:] > h[:-2]
    bear = h[2:] < lo[:-2]
    mid = np.flatnonzero(bull | bear).astype(np.int64) + 1
    if not len(mid):
        return ()
    is_bull = bull[mid - 1]
    top = np.where(is_bull, lo[mid + 1], lo[mid - 1])
    bottom = np.where(is_bull, h[mid - 1], h[mid + 1])
    width = top - bottom
    avg = bars.mean_range(range_window)[mid + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = np.where(avg > 0, width / avg, np.inf)
    keep = rel >= FVG_THRESHOLDS[mode]
    mid, is_bull, top, bottom, width, rel = (
        mid[keep], is_bull[keep], top[keep], bottom[keep], width[keep], rel[keep])
    if not len(mid):
        return ()
    start = mid + 2
    bear = ~is_bull
    mitigated = np.empty_like(mid)
    filled = np.empty_like(mid)
    mitigated[is_bull], filled[is_bull], mitigated[bear], filled[bear] = first_beyond_many([
        (bars.body_low_min, start[is_bull], top[is_bull], True, None),
        (bars.body_low_min, start[is_bull], bottom[is_bull], False, None),
        (bars.body_high_max, start[bear], bottom[bear], True, None),
        (bars.body_high_max, start[bear], top[bear], False, None),
    ])
    conf = mid + 1
    t_mid = bars.times(mid)
    t_conf = bars.times(conf)
    t_mit = bars.opt_times(mitigated)
    t_fil = bars.opt_times(filled)
    state = np.where(filled != NONE, "filled",
                     np.where(mitigated != NONE, "partially_filled", "open"))
    return tuple(map(
        FairValueGap, np.where(is_bull, "bullish", "bearish").tolist(), mid.tolist(), t_mid,
        top.tolist(), bottom.tolist(), ((top + bottom) / 2.0).tolist(), width.tolist(),
        rel.tolist(), conf.tolist(), t_conf, opt_ints(mitigated), t_mit, opt_ints(filled),
        t_fil, state.tolist(),
    ))
