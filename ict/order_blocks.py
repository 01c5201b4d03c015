"""Order blocks: the origin candle of the impulse leg behind each BOS/ChoCH.

For an up break of the swing high at bar s confirmed at bar c, the impulse leg starts at the
lowest low in [s, c] (earliest on a tie); the origin is the last down-close candle at or before
that bar and not before s (else the leg's first bar). Down breaks mirror this. The zone is the
origin's body ("defensive") or its full range ("aggressive").

A ChoCH block is "main". A BOS block is "sub" when the latest main block on its side is still
unbroken at the BOS, else "main". Mitigation is the first later bar trading into the zone;
the block breaks on the first later close through its far side. The score (0-100, as of the
last bar) weighs recency, proximity to the last close, origin (ChoCH over BOS), zone type,
refinement and validity (age within `validity_period`).
"""

from __future__ import annotations

import math

import numpy as np

from ict._arrays import NONE, BarArrays, first_beyond_many, last_true_at_or_before
from ict.structure import EventArrays
from ict.types import OrderBlock, Refinement


def build_order_blocks(
    bars: BarArrays,
    ev: EventArrays,
    *,
    refinement: Refinement,
    validity_period: int,
    range_window: int,
) -> tuple[OrderBlock, ...]:
    if not len(ev):
        return ()
    up = ev.direction > 0
    s = ev.swing_idx
    c = ev.conf_idx
    # leg start: the first bar in [s, c] at the extreme of that span
    dn = ~up
    low = bars.low_min.query(s[up], c[up] + 1)
    high = bars.high_max.query(s[dn], c[dn] + 1)
    leg = np.empty_like(c)
    leg[up], leg[dn] = first_beyond_many([
        (bars.low_min, s[up], low, False, None), (bars.high_max, s[dn], high, False, None)])
    bear_before = last_true_at_or_before(bars.close < bars.open)
    bull_before = last_true_at_or_before(bars.close > bars.open)
    cand = np.where(up, bear_before[leg], bull_before[leg])
    origin = np.where(cand >= s, cand, leg)
    if refinement == "defensive":
        top = bars.body_high[origin]
        bottom = bars.body_low[origin]
    else:
        top = bars.high[origin]
        bottom = bars.low[origin]

    start = c + 1
    mitigated = np.empty_like(c)
    broken = np.empty_like(c)
    mitigated[up], mitigated[dn], broken[up], broken[dn] = first_beyond_many([
        (bars.low_min, start[up], top[up], False, None),
        (bars.high_max, start[dn], bottom[dn], False, None),
        (bars.close_min, start[up], bottom[up], True, None),
        (bars.close_max, start[dn], top[dn], True, None),
    ])

    # main / sub, walking the events in confirmation order
    main_flags: list[bool] = []
    latest_main = {1: -1, -1: -1}  # side -> position of the latest main block
    broken_l: list[int] = broken.tolist()
    conf_l: list[int] = c.tolist()
    for pos, (d, ch) in enumerate(zip(ev.direction.tolist(), ev.choch.tolist(), strict=True)):
        if ch:
            is_main = True
        else:
            prev = latest_main[d]
            is_main = not (prev >= 0 and (broken_l[prev] == NONE
                                          or broken_l[prev] > conf_l[pos]))
        if is_main:
            latest_main[d] = pos
        main_flags.append(is_main)

    last = bars.n - 1
    last_close = float(bars.close[last])
    avg_range = float(bars.mean_range(range_window)[last]) or 1e-12
    o_t = bars.times(origin)
    c_t = bars.times(c)
    m_t = bars.opt_times(mitigated)
    b_t = bars.opt_times(broken)
    out: list[OrderBlock] = []
    for (d, ch, lvl, oi, ot, ci, ct, mi, mt, bi, bt, tp, bm, is_main) in zip(
        ev.direction.tolist(), ev.choch.tolist(), ev.level.tolist(), origin.tolist(), o_t,
        conf_l, c_t, mitigated.tolist(), m_t, broken_l, b_t, top.tolist(), bottom.tolist(),
        main_flags, strict=True,
    ):
        age = last - ci
        is_broken = bi != NONE
        is_valid = not is_broken and age <= validity_period
        state = "broken" if is_broken else ("mitigated" if mi != NONE else "valid")
        score = 0.0
        if not is_broken:
            dist = 0.0 if bm <= last_close <= tp else min(abs(last_close - tp),
                                                          abs(last_close - bm))
            recency = max(0.0, 1.0 - age / validity_period)
            proximity = math.exp(-dist / (5.0 * avg_range))
            origin_w = 1.0 if ch else 0.8
            zone_w = 1.0 if is_main else 0.7
            raw = 0.35 * recency + 0.35 * proximity + 0.15 * origin_w + 0.15 * zone_w
            raw *= 1.0 if refinement == "defensive" else 0.9
            raw *= 1.0 if is_valid else 0.3
            raw *= 0.7 if mi != NONE else 1.0
            score = round(100.0 * raw, 1)
        out.append(OrderBlock(
            "bullish" if d > 0 else "bearish", "main" if is_main else "sub", refinement,
            tp, bm, oi, ot, "ChoCH" if ch else "BOS", lvl, ci, ct,
            None if mi == NONE else mi, mt, None if bi == NONE else bi, bt,
            state, age, is_valid, score,  # type: ignore[arg-type]
        ))
    return tuple(out)

