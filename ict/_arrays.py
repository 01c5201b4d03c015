"""Vectorised kernels shared by the detectors, and `BarArrays`, the analysed bars as numpy.

The central trick is `SparseTable.first_beyond`: for many (start, threshold) queries at once it
finds the first bar at or after `start` whose value crosses `threshold`, by binary lifting over
power-of-two block maxima/minima. Every "when was this level broken / mitigated / filled /
swept" question is one such call, so no detector loops over bars in Python.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cached_property
from typing import Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from ict.types import BarSummary

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

NONE = -1  # "no such bar" in index arrays


class _Levels:
    """Power-of-two block maxima of several rows at once.

    Level k holds, at column i, max(rows[:, i : i + 2**k]). Every level has n + 1 columns and
    blocks running past the end are +inf, which never counts as "not beyond" a threshold, so
    the search in `first_beyond_many` needs no bounds masks.
    """

    def __init__(self, rows: FloatArray) -> None:
        m, n = rows.shape
        first = np.full((m, n + 1), np.inf)
        first[:, :n] = rows
        levels: list[FloatArray] = [first]
        k = 1
        while (1 << k) <= n:
            prev = levels[-1]
            half = 1 << (k - 1)
            cur = np.empty((m, n + 1))
            np.maximum(prev[:, :n + 1 - half], prev[:, half:], out=cur[:, :n + 1 - half])
            cur[:, n + 1 - half:] = np.inf
            levels.append(cur)
            k += 1
        self.n = n
        self.levels = levels
        self.flat = [lv.ravel() for lv in levels]


class SparseTable:
    """Range maxima (or minima) of one series, for range queries and first-crossing searches.

    Minima are kept as maxima of the negated series, so one code path serves both.
    """

    def __init__(self, levels: _Levels, row: int, kind: Literal["max", "min"]) -> None:
        self.shared = levels
        self.row = row
        self.n = levels.n
        self.kind = kind
        self.sign = 1.0 if kind == "max" else -1.0
        self.levels = [lv[row] for lv in levels.levels]

    def query(self, lo: IntArray, hi: IntArray) -> FloatArray:
        """max/min of values[lo:hi] for each pair (requires hi > lo)."""
        out = np.empty(len(lo), dtype=np.float64)
        if not len(lo):
            return out
        k = (np.frexp((hi - lo).astype(np.float64))[1] - 1).astype(np.int64)
        for level in np.unique(k).tolist():
            sel = k == level
            tab = self.levels[level]
            out[sel] = np.maximum(tab[lo[sel]], tab[hi[sel] - (1 << level)])
        return self.sign * out

    def first_beyond(
        self,
        starts: IntArray,
        thresholds: FloatArray,
        *,
        strict: bool = True,
        ends: IntArray | None = None,
    ) -> IntArray:
        """First index j >= start (and <= end) with value beyond threshold, else NONE.

        "Beyond" is `>` for a max table and `<` for a min table (`>=` / `<=` when not strict).
        """
        return first_beyond_many([(self, starts, thresholds, strict, ends)])[0]


Crossing = tuple[SparseTable, IntArray, FloatArray, bool, IntArray | None]


def first_beyond_many(queries: Sequence[Crossing]) -> list[IntArray]:
    """`SparseTable.first_beyond` for several (table, starts, thresholds, strict, ends) at once.

    All tables must come from the same `BarArrays`; one pass over all the queries saves the
    fixed cost of the vectorised search. Binary lifting: from each start, skip every
    power-of-two block lying wholly on the wrong side of the threshold; where it stops is the
    first crossing (or the end).
    """
    sizes = [len(q[1]) for q in queries]
    if not queries or sum(sizes) == 0 or queries[0][0].n == 0:
        return [np.full(size, NONE, dtype=np.int64) for size in sizes]
    shared = queries[0][0].shared
    n = shared.n
    base = np.concatenate([np.full(len(q[1]), q[0].row * (n + 1), dtype=np.int64)
                           for q in queries])
    pos = np.minimum(np.concatenate([q[1] for q in queries]).astype(np.int64), n)
    parts: list[FloatArray] = []
    for table, _, thresholds, strict, _ in queries:
        t = table.sign * np.asarray(thresholds, dtype=np.float64)
        # v >= t is v > (the float just below t): every query becomes strict
        parts.append(t if strict else np.nextafter(t, -np.inf))
    thr = np.concatenate(parts)
    for k in range(len(shared.flat) - 1, -1, -1):
        pos += (shared.flat[k][base + pos] <= thr) * (1 << k)
    ends = np.concatenate([q[4] if q[4] is not None else np.full(len(q[1]), n - 1, np.int64)
                           for q in queries])
    out = np.where((pos < n) & (pos <= ends), pos, NONE)
    return np.split(out, np.cumsum(sizes)[:-1])


def trailing_mean(x: FloatArray, window: int, *, include_current: bool) -> FloatArray:
    """Mean of the last `window` values ending at t (or at t-1), over as many as exist.

    Without the current value, position 0 has no history and gets NaN.
    """
    n = len(x)
    csum = np.concatenate(([0.0], np.cumsum(x)))
    idx = np.arange(n)
    hi = idx + 1 if include_current else idx
    lo = np.maximum(hi - window, 0)
    count = hi - lo
    with np.errstate(invalid="ignore", divide="ignore"):
        out: FloatArray = (csum[hi] - csum[lo]) / count
    return out


def opt_ints(idx: IntArray) -> list[int | None]:
    """Index array to a list with None for NONE."""
    out = idx.astype(object)
    out[idx < 0] = None
    values: list[int | None] = out.tolist()
    return values


def first_after(values: FloatArray, start: int, threshold: float, *, above: bool) -> int:
    """First index >= start where values go above (below) threshold, or NONE: one query, so a
    plain scan beats the batched search."""
    tail = values[start:]
    hits = np.flatnonzero(tail > threshold if above else tail < threshold)
    return int(hits[0]) + start if len(hits) else NONE


def last_true_at_or_before(mask: BoolArray) -> IntArray:
    """For each t, the largest j <= t with mask[j], or NONE."""
    idx = np.where(mask, np.arange(len(mask), dtype=np.int64), NONE)
    out: IntArray = np.maximum.accumulate(idx) if len(idx) else idx
    return out


class BarArrays:
    """The analysed bars as float64 arrays plus lazily built helper tables."""

    def __init__(self, index: pd.DatetimeIndex, data: dict[str, FloatArray]) -> None:
        self.index = index
        self.open = np.ascontiguousarray(data["open"], dtype=np.float64)
        self.high = np.ascontiguousarray(data["high"], dtype=np.float64)
        self.low = np.ascontiguousarray(data["low"], dtype=np.float64)
        self.close = np.ascontiguousarray(data["close"], dtype=np.float64)
        self.volume = np.ascontiguousarray(data["volume"], dtype=np.float64)
        self.n = len(self.close)
        self._times: npt.NDArray[np.object_] | None = None

    # --- times -------------------------------------------------------------------------------

    def times(self, idx: IntArray) -> list[datetime]:
        """Python datetimes of the bars at `idx` (the index is converted once, on demand)."""
        if len(idx) == 0:
            return []
        if self._times is None:
            self._times = np.asarray(self.index.to_pydatetime(), dtype=object)
        out: list[datetime] = self._times[idx].tolist()
        return out

    def summary(self, i: int) -> BarSummary:
        return BarSummary(self.time(i), float(self.open[i]), float(self.high[i]),
                          float(self.low[i]), float(self.close[i]), float(self.volume[i]))

    def time(self, i: int) -> datetime:
        return self.times(np.array([i], dtype=np.int64))[0]

    def opt_times(self, idx: IntArray) -> list[datetime | None]:
        """Like `times` but NONE gives None."""
        if len(idx) == 0:
            return []
        if self._times is None:
            self._times = np.asarray(self.index.to_pydatetime(), dtype=object)
        picked = self._times[np.maximum(idx, 0)]
        picked[idx < 0] = None
        out: list[datetime | None] = picked.tolist()
        return out

    # --- derived arrays ----------------------------------------------------------------------

    @cached_property
    def body_low(self) -> FloatArray:
        return np.minimum(self.open, self.close)

    @cached_property
    def body_high(self) -> FloatArray:
        return np.maximum(self.open, self.close)

    @cached_property
    def bar_range(self) -> FloatArray:
        return self.high - self.low

    @cached_property
    def body(self) -> FloatArray:
        return np.abs(self.close - self.open)

    def mean_range(self, window: int) -> FloatArray:
        """Mean high-low range of the `window` bars ending at t (inclusive)."""
        key = ("range", window)
        cached = self._cache.get(key)
        if cached is None:
            cached = trailing_mean(self.bar_range, window, include_current=True)
            self._cache[key] = cached
        return cached

    def mean_prior_body(self, window: int) -> FloatArray:
        """Mean body of the `window` bars before t (NaN at t = 0)."""
        key = ("body", window)
        cached = self._cache.get(key)
        if cached is None:
            cached = trailing_mean(self.body, window, include_current=False)
            self._cache[key] = cached
        return cached

    @cached_property
    def _cache(self) -> dict[tuple[str, int], FloatArray]:
        return {}

    @cached_property
    def _levels(self) -> _Levels:
        rows = np.stack((self.high, -self.low, self.close, -self.close, self.body_high,
                         -self.body_low))
        return _Levels(rows)

    @cached_property
    def high_max(self) -> SparseTable:
        return SparseTable(self._levels, 0, "max")

    @cached_property
    def low_min(self) -> SparseTable:
        return SparseTable(self._levels, 1, "min")

    @cached_property
    def close_max(self) -> SparseTable:
        return SparseTable(self._levels, 2, "max")

    @cached_property
    def close_min(self) -> SparseTable:
        return SparseTable(self._levels, 3, "min")

    @cached_property
    def body_high_max(self) -> SparseTable:
        return SparseTable(self._levels, 4, "max")

    @cached_property
    def body_low_min(self) -> SparseTable:
        return SparseTable(self._levels, 5, "min")
