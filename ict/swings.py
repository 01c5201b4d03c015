"""Pivot swings: causal by construction (a pivot is reported `window` bars after it)."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ict._arrays import BarArrays, FloatArray, IntArray
from ict.types import Swing


@dataclass(frozen=True, slots=True)
class SwingArrays:
    """Swing highs and lows of one window as index/price arrays, sorted by bar."""

    window: int
    high_idx: IntArray
    high_price: FloatArray
    low_idx: IntArray
    low_price: FloatArray


def pivot_indices(values: FloatArray, window: int, kind: str) -> IntArray:
    """Bars i with a full window either side where values[i] is the extreme.

    A high pivot is strictly above the `window` bars before it and at least as high as the
    `window` bars after it, so a flat top yields one pivot, on its first bar. Lows mirror this.
    """
    n = len(values)
    w = window
    if n < 2 * w + 1:
        return np.zeros(0, dtype=np.int64)
    view = sliding_window_view(values, w)
    if kind == "high":
        roll = view.max(axis=1)  # roll[p] = max(values[p:p+w])
        mid = values[w:n - w]
        ok = (mid > roll[0:n - 2 * w]) & (mid >= roll[w + 1:n - w + 1])
    else:
        roll = view.min(axis=1)
        mid = values[w:n - w]
        ok = (mid < roll[0:n - 2 * w]) & (mid <= roll[w + 1:n - w + 1])
    out: IntArray = np.flatnonzero(ok).astype(np.int64) + w
    return out


def detect_swings(bars: BarArrays, window: int) -> SwingArrays:
    hi = pivot_indices(bars.high, window, "high")
    lo = pivot_indices(bars.low, window, "low")
    return SwingArrays(window, hi, bars.high[hi], lo, bars.low[lo])


def build_swings(bars: BarArrays, arrays: SwingArrays) -> tuple[Swing, ...]:
    """Swing objects of both kinds, ordered by bar (the high first on a bar that is both)."""
    w = arrays.window
    idx = np.concatenate((arrays.high_idx, arrays.low_idx))
    if not len(idx):
        return ()
    is_high = np.concatenate((np.ones(len(arrays.high_idx), np.bool_),
                              np.zeros(len(arrays.low_idx), np.bool_)))
    price = np.concatenate((arrays.high_price, arrays.low_price))
    order = np.lexsort((~is_high, idx))
    idx, is_high, price = idx[order], is_high[order], price[order]
    conf = idx + w
    kinds = np.where(is_high, "high", "low").tolist()
    return tuple(map(Swing, kinds, idx.tolist(), bars.times(idx), price.tolist(),
                     conf.tolist(), bars.times(conf), repeat(w, len(idx))))
