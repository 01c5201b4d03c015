"""Break of structure (BOS) and change of character (ChoCH) from body closes.

The level in force at bar t is the most recent swing high (low) confirmed before t. A swing's
level is live from the bar after its confirmation until the next swing of the same kind is
confirmed, and it can be broken once. An up event is the first close above the live swing-high
level; a down event the first close below the live swing-low level. Walking the events in
time, one that continues the previous direction (or is the first) is a BOS, one that reverses
it is a ChoCH. Everything depends only on bars up to the confirming close.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ict._arrays import NONE, BarArrays, BoolArray, FloatArray, IntArray, first_beyond_many
from ict.swings import SwingArrays
from ict.types import Bias, Structure, StructureEvent


@dataclass(frozen=True, slots=True)
class EventArrays:
    """Structure events in confirmation order."""

    direction: IntArray  # +1 up, -1 down
    choch: BoolArray
    level: FloatArray
    swing_idx: IntArray
    break_idx: IntArray
    conf_idx: IntArray
    displacement: FloatArray
    displaced: BoolArray

    def __len__(self) -> int:
        return len(self.conf_idx)


def _live_windows(idx: IntArray, window: int, n: int) -> tuple[IntArray, IntArray]:
    """First and last bar at which each swing's level is live (until the next one's confirm)."""
    conf = idx + window
    ends = np.empty_like(conf)
    if len(conf):
        ends[:-1] = conf[1:]
        ends[-1] = n - 1
    return conf + 1, ends


def _breaks(
    bars: BarArrays, swings: SwingArrays
) -> tuple[tuple[IntArray, IntArray, IntArray, FloatArray], ...]:
    """Per side (up, down): (swing idx, break idx, confirm idx, level) of the broken swings."""
    up_start, up_end = _live_windows(swings.high_idx, swings.window, bars.n)
    dn_start, dn_end = _live_windows(swings.low_idx, swings.window, bars.n)
    up_conf, dn_conf = first_beyond_many([
        (bars.close_max, up_start, swings.high_price, True, up_end),
        (bars.close_min, dn_start, swings.low_price, True, dn_end),
    ])
    up_hit, dn_hit = up_conf != NONE, dn_conf != NONE
    up_brk, dn_brk = first_beyond_many([
        (bars.high_max, up_start[up_hit], swings.high_price[up_hit], True, up_conf[up_hit]),
        (bars.low_min, dn_start[dn_hit], swings.low_price[dn_hit], True, dn_conf[dn_hit]),
    ])
    return (
        (swings.high_idx[up_hit], up_brk, up_conf[up_hit], swings.high_price[up_hit]),
        (swings.low_idx[dn_hit], dn_brk, dn_conf[dn_hit], swings.low_price[dn_hit]),
    )


def detect_structure(
    bars: BarArrays, swings: SwingArrays, *, range_window: int, displacement_factor: float
) -> EventArrays:
    (u_sw, u_brk, u_conf, u_lvl), (d_sw, d_brk, d_conf, d_lvl) = _breaks(bars, swings)
    direction = np.concatenate((np.ones(len(u_sw), np.int64), -np.ones(len(d_sw), np.int64)))
    conf = np.concatenate((u_conf, d_conf))
    order = np.lexsort((-direction, conf))  # by confirmation bar, up before down on a tie
    direction = direction[order]
    conf = conf[order]
    level = np.concatenate((u_lvl, d_lvl))[order]
    swing_idx = np.concatenate((u_sw, d_sw))[order]
    break_idx = np.concatenate((u_brk, d_brk))[order]
    choch = np.zeros(len(conf), dtype=np.bool_)
    if len(conf) > 1:
        choch[1:] = direction[1:] != direction[:-1]
    mean_body = bars.mean_prior_body(range_window)[conf]
    with np.errstate(invalid="ignore", divide="ignore"):
        disp = bars.body[conf] / mean_body
    disp = np.where(np.isfinite(disp), disp, 0.0)
    displaced = disp >= displacement_factor
    return EventArrays(direction, choch, level, swing_idx, break_idx, conf, disp, displaced)


def build_structure(
    bars: BarArrays, ev: EventArrays, *, swings: str, window: int
) -> Structure:
    sw_t = bars.times(ev.swing_idx)
    br_t = bars.times(ev.break_idx)
    cf_t = bars.times(ev.conf_idx)
    events = tuple(map(
        StructureEvent, np.where(ev.choch, "ChoCH", "BOS").tolist(),
        np.where(ev.direction > 0, "up", "down").tolist(), ev.level.tolist(),
        ev.swing_idx.tolist(), sw_t, ev.break_idx.tolist(), br_t, ev.conf_idx.tolist(), cf_t,
        bars.close[ev.conf_idx].tolist(), ev.displacement.tolist(), ev.displaced.tolist(),
    ))
    bias: Bias = "neutral"
    if events:
        bias = "bullish" if events[-1].direction == "up" else "bearish"
    last_bos = next((e for e in reversed(events) if e.kind == "BOS"), None)
    last_choch = next((e for e in reversed(events) if e.kind == "ChoCH"), None)
    return Structure(
        "major" if swings == "major" else "minor", window, events, bias, last_bos, last_choch
    )
