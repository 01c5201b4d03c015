"""Liquidity: equal highs/lows by tolerance clustering, and external range extremes.

Each minor swing high j is paired with the nearest earlier swing high i (among the previous
`_LOOKBACK` ones) whose price is within `tolerance` of it, provided no bar between them traded
above both (the earlier high was still resting). The tolerance is `equal_tolerance` times the
mean bar range at j's confirmation, so pairing is known when j is. Pairs chain into pools. A
pool is swept by the first later bar trading beyond its level (the higher of the pair for
highs). Lows mirror this.

External liquidity is as of the last bar: "static" takes the highest major swing high and
lowest major swing low in the window; "dynamic" the nearest major swing high above and low
below the last close that no later bar has taken out. Without major swings the window's
extreme bars stand in.
"""

from __future__ import annotations

import numpy as np

from ict._arrays import NONE, BarArrays, FloatArray, IntArray, first_after
from ict.swings import SwingArrays
from ict.types import ExternalLiquidity, Liquidity, LiquidityMode, LiquidityPool

_LOOKBACK = 10


def _pairs(
    bars: BarArrays, idx: IntArray, price: FloatArray, window: int, tol_factor: float,
    range_window: int, high: bool,
) -> tuple[IntArray, IntArray, FloatArray]:
    """(earlier swing position, later swing position, tolerance) for every equal pair."""
    m = len(idx)
    if m < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    conf = idx + window
    tol = tol_factor * bars.mean_range(range_window)[conf]
    lags = np.arange(1, min(_LOOKBACK, m - 1) + 1)
    j = np.arange(m)[:, None]
    i = j - lags[None, :]
    valid = i >= 0
    ii = np.where(valid, i, 0)
    close_enough = np.abs(price[ii] - price[j]) <= tol[j]
    cand = valid & close_enough
    rows, cols = np.nonzero(cand)
    if not len(rows):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    a = ii[rows, cols]
    b = rows
    lo = idx[a] + 1
    hi = idx[b]
    extreme = np.where(hi > lo, 0.0, np.nan)
    between = hi > lo
    if between.any():
        table = bars.high_max if high else bars.low_min
        extreme[between] = table.query(lo[between], hi[between])
    if high:
        level = np.maximum(price[a], price[b])
        resting = ~between | (extreme <= level)
    else:
        level = np.minimum(price[a], price[b])
        resting = ~between | (extreme >= level)
    # nonzero is row-major and lags ascend, so the first hit per row is the nearest partner
    a, b = a[resting], b[resting]
    if not len(b):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, np.zeros(0)
    first = np.ones(len(b), dtype=np.bool_)
    first[1:] = b[1:] != b[:-1]
    a, b = a[first], b[first]
    return a, b, tol[b]


def _pools(
    bars: BarArrays, sw: SwingArrays, tol_factor: float, range_window: int, high: bool
) -> tuple[LiquidityPool, ...]:
    idx = sw.high_idx if high else sw.low_idx
    price = sw.high_price if high else sw.low_price
    a, b, tol = _pairs(bars, idx, price, sw.window, tol_factor, range_window, high)
    if not len(b):
        return ()
    level = np.maximum(price[a], price[b]) if high else np.minimum(price[a], price[b])
    conf = idx[b] + sw.window
    if high:
        swept = bars.high_max.first_beyond(conf + 1, level)
    else:
        swept = bars.low_min.first_beyond(conf + 1, level)
    # chain pairs into pools: a pair whose earlier swing closed a previous pair joins its pool
    pool_of: dict[int, tuple[int, int]] = {}  # later swing position -> (pool id, touches)
    pool_ids: list[int] = []
    touches: list[int] = []
    for ai, bi in zip(a.tolist(), b.tolist(), strict=True):
        pid, count = pool_of.get(ai, (int(idx[ai]), 1))
        pool_of[bi] = (pid, count + 1)
        pool_ids.append(pid)
        touches.append(count + 1)
    first_i = idx[a]
    second_i = idx[b]
    t1 = bars.times(first_i)
    t2 = bars.times(second_i)
    tc = bars.times(conf)
    ts = bars.opt_times(swept)
    kind = "EQH" if high else "EQL"
    side = "buy" if high else "sell"
    return tuple(
        LiquidityPool(kind, side, lv, fi, ft, si, st, pid, tc_, tl, ci, ct,  # type: ignore[arg-type]
                      None if sp == NONE else sp, spt)
        for lv, fi, ft, si, st, pid, tc_, tl, ci, ct, sp, spt in zip(
            level.tolist(), first_i.tolist(), t1, second_i.tolist(), t2, pool_ids, touches,
            tol.tolist(), conf.tolist(), tc, swept.tolist(), ts, strict=True,
        )
    )


def _external(
    bars: BarArrays, sw: SwingArrays, mode: LiquidityMode, high: bool
) -> ExternalLiquidity | None:
    n = bars.n
    if n == 0:
        return None
    last_close = bars.close[-1]
    idx = sw.high_idx if high else sw.low_idx
    price = sw.high_price if high else sw.low_price
    pick = NONE
    if len(idx):
        if mode == "static":
            pos = int(np.argmax(price)) if high else int(np.argmin(price))
            pick = int(idx[pos])
        else:
            # suffix extreme after each swing: unswept when no later bar went beyond it
            if high:
                after = np.append(np.maximum.accumulate(bars.high[::-1])[::-1], -np.inf)
                ok = (after[idx + 1] <= price) & (price >= last_close)
                if ok.any():
                    cands = np.flatnonzero(ok)
                    pick = int(idx[cands[np.argmin(price[cands])]])
            else:
                after = np.append(np.minimum.accumulate(bars.low[::-1])[::-1], np.inf)
                ok = (after[idx + 1] >= price) & (price <= last_close)
                if ok.any():
                    cands = np.flatnonzero(ok)
                    pick = int(idx[cands[np.argmax(price[cands])]])
    if pick == NONE:
        pick = int(np.argmax(bars.high)) if high else int(np.argmin(bars.low))
    level = float(bars.high[pick] if high else bars.low[pick])
    swept = first_after(bars.high if high else bars.low, pick + 1, level, above=high)
    return ExternalLiquidity(
        "buy" if high else "sell", level, pick, bars.time(pick),
        None if swept == NONE else swept, None if swept == NONE else bars.time(swept),
    )


def build_liquidity(
    bars: BarArrays, minor: SwingArrays, major: SwingArrays, *, mode: LiquidityMode,
    tolerance: float, range_window: int,
) -> Liquidity:
    return Liquidity(
        mode, tolerance,
        _pools(bars, minor, tolerance, range_window, True),
        _pools(bars, minor, tolerance, range_window, False),
        _external(bars, major, mode, True),
        _external(bars, major, mode, False),
    )
