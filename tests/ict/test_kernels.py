"""The first-crossing and range-extreme kernels against brute force, on many random cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ict._arrays import NONE, BarArrays


def _bars(n: int, seed: int) -> BarArrays:
    rng = np.random.default_rng(seed)
    close = 100 + np.cumsum(rng.normal(0, 1, n))
    openp = close + rng.normal(0, 0.5, n)
    high = np.maximum(openp, close) + rng.random(n)
    low = np.minimum(openp, close) - rng.random(n)
    idx = pd.date_range("2024-01-01", periods=n, freq="1h", tz="UTC")
    return BarArrays(idx, {"open": openp, "high": high, "low": low, "close": close,
                           "volume": np.zeros(n)})


@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 64, 65, 500, 1025])
@pytest.mark.parametrize("strict", [True, False])
def test_first_beyond_matches_brute_force(n: int, strict: bool) -> None:
    b = _bars(n, seed=n)
    rng = np.random.default_rng(n + 1)
    q = 400
    starts = rng.integers(0, n + 3, q)
    ends = rng.integers(-1, n + 2, q)
    for table, values, above in ((b.high_max, b.high, True), (b.low_min, b.low, False)):
        # thresholds at existing values too, so ties exercise strict / non-strict
        thr = np.where(rng.random(q) < 0.5, values[rng.integers(0, n, q)],
                       values.mean() + rng.normal(0, values.std() + 1, q))
        got = table.first_beyond(starts, thr, strict=strict, ends=ends)
        for s, t, e, g in zip(starts, thr, ends, got, strict=True):
            want = NONE
            for j in range(s, min(n, e + 1)):
                v = values[j]
                if (v > t if strict else v >= t) if above else (v < t if strict else v <= t):
                    want = j
                    break
            assert g == want


@pytest.mark.parametrize("n", [2, 33, 97, 700])
def test_range_query_matches_brute_force(n: int) -> None:
    b = _bars(n, seed=7 * n)
    rng = np.random.default_rng(n)
    lo = rng.integers(0, n - 1, 500)
    hi = lo + 1 + rng.integers(0, n - lo, 500)
    np.testing.assert_array_equal(b.high_max.query(lo, hi),
                                  [b.high[a:z].max() for a, z in zip(lo, hi, strict=True)])
    np.testing.assert_array_equal(b.low_min.query(lo, hi),
                                  [b.low[a:z].min() for a, z in zip(lo, hi, strict=True)])
