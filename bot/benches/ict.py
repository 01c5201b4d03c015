"""`bullpen bench ict`: our full ICT analysis against `smartmoneyconcepts`, in the same run.

Ours: `ict.analyze` on the last `bars` hourly EURUSD bars of the offline snapshot (swings at
two windows, major and internal structure, order blocks with scores, FVGs with fills,
liquidity pools with sweeps, dealing range, kill zones, levels; dataclasses out).
Peer: smartmoneyconcepts' swing_highs_lows + fvg + bos_choch + ob + liquidity on the same bars,
with swing_length equal to our major pivot window (5); its default swing_length (50) is timed
too. Medians of `repeat` runs after one warm-up, the two alternating so drift hits both.
Also timed: the whole 5-timeframe stack (`ict.analyze_stack`: resampling 1m -> 5m/15m,
1m -> 60m -> 4h, five analyses and the grading) on a seeded random walk of 1-minute bars,
because no installable package ships real 1-minute data.
Wall-clock medians decide; CPU-time medians and the load average stand beside them because a
busy machine inflates wall time. Targets: ratio >= 20, stack < 100 ms.
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

TARGET_RATIO = 20.0
STACK_TARGET_MS = 100.0
MAJOR_WINDOW = 5


def synthetic_bars(*, minutes: int, days: int, seed: int = 3,
                   end: str = "2024-03-15 14:59") -> tuple[pd.DataFrame, pd.DataFrame]:
    """A seeded geometric random walk: `minutes` 1-minute bars ending at `end` (UTC) and
    `days` daily bars ending the day before, for stack tests and benchmarks."""
    rng = np.random.default_rng(seed)

    def walk(idx: pd.DatetimeIndex, vol: float) -> pd.DataFrame:
        close = 100 * np.exp(np.cumsum(rng.normal(0, vol, len(idx))))
        openp = np.concatenate(([close[0]], close[:-1]))
        wick = np.abs(rng.normal(0, vol / 2, (2, len(idx)))) * close
        return pd.DataFrame({"open": openp, "high": np.maximum(openp, close) + wick[0],
                             "low": np.minimum(openp, close) - wick[1], "close": close,
                             "volume": rng.integers(1, 100, len(idx)).astype(float)},
                            index=idx)

    stop = pd.Timestamp(end, tz="UTC")
    minute = walk(pd.date_range(end=stop, periods=minutes, freq="1min"), 0.0006)
    daily = walk(pd.date_range(end=stop.normalize() - pd.Timedelta(days=1), periods=days,
                               freq="D"), 0.02)
    return minute, daily


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000.0, 3)


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one call: other processes on a busy machine inflate the
    first, hardly the second."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def _wall(samples: list[tuple[float, float]]) -> float:
    return _median_ms([w for w, _ in samples])


def _cpu(samples: list[tuple[float, float]]) -> float:
    return _median_ms([c for _, c in samples])


def run(*, bars: int = 5000, repeat: int = 7) -> dict[str, Any]:
    """Time both sides `repeat` times and return the figures as a JSON-able dict."""
    import ict
    from tools import snapshot

    with contextlib.redirect_stdout(io.StringIO()):  # the peer prints a banner on import
        from smartmoneyconcepts import smc

    data = snapshot.load("EURUSD", "1h").iloc[-bars:]
    peer_frame = data.reset_index(drop=True)

    def ours() -> ict.ICTAnalysis:
        return ict.analyze(data, interval="1h")

    def peer(swing_length: int) -> Callable[[], dict[str, pd.DataFrame]]:
        def call() -> dict[str, pd.DataFrame]:
            swings = smc.swing_highs_lows(peer_frame, swing_length=swing_length)
            return {
                "swings": swings,
                "fvg": smc.fvg(peer_frame),
                "bos_choch": smc.bos_choch(peer_frame, swings),
                "ob": smc.ob(peer_frame, swings),
                "liquidity": smc.liquidity(peer_frame, swings),
            }
        return call

    peer_same, peer_default = peer(MAJOR_WINDOW), peer(50)
    mine = ours()
    theirs = peer_same()
    peer_default()
    ours_t: list[tuple[float, float]] = []
    peer_t: list[tuple[float, float]] = []
    peer_default_t: list[tuple[float, float]] = []
    for _ in range(repeat):
        ours_t.append(_timed(ours))
        peer_t.append(_timed(peer_same))
        peer_default_t.append(_timed(peer_default))

    minute, daily = synthetic_bars(minutes=12 * 1440, days=500)

    def stack() -> ict.StackResult:
        return ict.analyze_stack(minute=minute, daily=daily)

    stack_result = stack()
    stack_t = [_timed(stack) for _ in range(repeat)]

    ours_ms, peer_ms = _wall(ours_t), _wall(peer_t)
    ratio = round(peer_ms / ours_ms, 1) if ours_ms > 0 else None
    ours_cpu, peer_cpu = _cpu(ours_t), _cpu(peer_t)
    peer_default_ms = _wall(peer_default_t)
    stack_ms = _wall(stack_t)
    return {
        "bench": "ict",
        "data": f"EURUSD hourly ask (gym-anytrading via offline snapshot), last {len(data)} "
                f"bars {data.index[0]:%Y-%m-%d} .. {data.index[-1]:%Y-%m-%d}",
        "repeat": repeat,
        "ours": "ict.analyze (full analysis, dataclasses out)",
        "ours_median_ms": ours_ms,
        "peer": f"smartmoneyconcepts {smc.__version__}: swing_highs_lows + fvg "
                f"+ bos_choch + ob + liquidity, swing_length={MAJOR_WINDOW}",
        "peer_median_ms": peer_ms,
        "ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "ratio_ok": ratio is not None and ratio >= TARGET_RATIO,
        "cpu_median_ms": {"ours": ours_cpu, "peer": peer_cpu, "stack": _cpu(stack_t)},
        "cpu_ratio": round(peer_cpu / ours_cpu, 1) if ours_cpu > 0 else None,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "peer_default_swing_length_median_ms": peer_default_ms,
        "ratio_vs_peer_default": round(peer_default_ms / ours_ms, 1) if ours_ms > 0 else None,
        "stack": "ict.analyze_stack: daily + 4h (from 1m via 60m) + 15m + 5m + 1m, resampling, "
                 "five analyses, grading; seeded random-walk 1-minute bars (17,280) and 500 "
                 "daily bars",
        "stack_median_ms": stack_ms,
        "stack_target_ms": STACK_TARGET_MS,
        "stack_ok": stack_ms < STACK_TARGET_MS,
        "stack_grade": stack_result.stack.grade,
        "found": {
            "ours": {"structure_events": len(mine.structure.events),
                     "order_blocks": len(mine.order_blocks), "fvgs": len(mine.fvgs),
                     "equal_high_low_pools": len(mine.liquidity.equal_highs)
                     + len(mine.liquidity.equal_lows)},
            "peer": {"bos_choch": int(theirs["bos_choch"]["BOS"].notna().sum()
                                      + theirs["bos_choch"]["CHOCH"].notna().sum()),
                     "order_blocks": int(theirs["ob"]["OB"].notna().sum()),
                     "fvgs": int(theirs["fvg"]["FVG"].notna().sum()),
                     "liquidity": int(theirs["liquidity"]["Liquidity"].notna().sum())},
        },
    }
