"""`bullpen bench chart`: median render time of a 250-bar candlestick chart.

Measures `tools.charts.render_candles` (collections, one draw call per layer) on real NVDA bars
from the offline snapshot against the named peer measured in the same run: the common
hand-rolled matplotlib candlestick that adds one Rectangle patch and one wick line per bar.
Target: median under 250 ms.
"""

from __future__ import annotations

import io
import statistics
import time
from collections.abc import Callable
from typing import Any

import pandas as pd

TARGET_MS = 250.0
BARS = 250


def _peer_render(df: pd.DataFrame) -> bytes:
    """The naive peer: per-candle patches and lines, volume bars, MAs, same size and dpi."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

    fig = Figure(figsize=(10.0, 6.0), dpi=100, layout="constrained")
    gs = fig.add_gridspec(4, 1)
    ax = fig.add_subplot(gs[:3, 0])
    axv = fig.add_subplot(gs[3, 0], sharex=ax)
    for i, (o, h, lo, c) in enumerate(df[["open", "high", "low", "close"]].itertuples(
            index=False)):
        color = "#26a69a" if c >= o else "#ef5350"
        ax.plot([i, i], [lo, h], color=color, linewidth=0.8)
        ax.add_patch(Rectangle((i - 0.35, min(o, c)), 0.7, abs(c - o) or 1e-6, color=color))
    for n in (5, 20, 60):
        ax.plot(range(len(df)), df["close"].rolling(n).mean().to_numpy(), linewidth=1.1)
    axv.bar(range(len(df)), df["volume"].to_numpy(), width=0.7)
    ax.autoscale_view()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def _time(fn: Callable[[], bytes], repeat: int) -> tuple[list[float], int]:
    fn()  # warm-up: font registration, glyph caches
    times: list[float] = []
    size = 0
    for _ in range(repeat):
        start = time.perf_counter()
        size = len(fn())
        times.append((time.perf_counter() - start) * 1000.0)
    return times, size


def run(*, repeat: int = 7) -> dict[str, Any]:
    """Render the chart `repeat` times (after one warm-up) and return the timings as a dict."""
    from tools import snapshot
    from tools.charts import render_candles

    history = snapshot.load("NVDA").iloc[-(BARS + 60):]
    ours, png_bytes = _time(
        lambda: render_candles(history, title="NVIDIA Corp (NVDA)", subtitle="1d", bars=BARS),
        repeat)
    peer, _ = _time(lambda: _peer_render(history.iloc[-BARS:]), repeat)
    median = statistics.median(ours)
    peer_median = statistics.median(peer)
    return {
        "bench": "chart",
        "bars": BARS,
        "repeat": repeat,
        "median_ms": round(median, 1),
        "min_ms": round(min(ours), 1),
        "max_ms": round(max(ours), 1),
        "target_ms": TARGET_MS,
        "within_target": median < TARGET_MS,
        "png_bytes": png_bytes,
        "peer": "matplotlib per-candle Rectangle patches + wick lines",
        "peer_median_ms": round(peer_median, 1),
        "ratio_vs_peer": round(median / peer_median, 3) if peer_median else None,
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run()))
