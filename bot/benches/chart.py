"""`bullpen bench chart`: render time of a 250-bar candlestick chart with volume and three
moving averages, against two peers and the empty-figure floor, all in the same run.

Ours: `tools.chart_draw.render_candles` on real NVDA bars from the offline snapshot (fixed axes
rectangles, collections, 10 x 6 in at 100 dpi, PNG).

Peers, each drawing the same 250 bars with the same figure size, dpi, panels and output:
- `matplotlib`: what a competent hand-written matplotlib chart does, with Bullpen's layout
  choices (the same two fixed axes rectangles, no constrained or tight layout, no pyplot): wicks
  with one `vlines` call, bodies and volume with one `bar` call each, the same moving averages,
  grid, legend, title and date labels.
- `mplfinance`: `mplfinance.plot(type="candle", volume=True, mav=(5, 20, 60))`, the library a
  user would pick for this chart, saved to PNG at the same size and dpi (its own layout).

The floor: a figure with the same two empty axes saved to PNG at the same size: what any
matplotlib chart of this size pays before drawing a bar.

Each round renders every side once, interleaved (so all see the same load); wall and CPU time
(`time.process_time`, which load inflates less) per side, median and spread over the rounds.
Target: our median under 250 ms.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from bot.benches.fairness import LoadWatch, ratio, spread

TARGET_MS = 250.0
BARS = 250
SIZE = (10.0, 6.0)
DPI = 100
MAS = (5, 20, 60)
# Bullpen's axes rectangles (tools/charts.py, with a one-line title)
PRICE_RECT = (0.07, 0.30, 0.91, 0.63)
VOLUME_RECT = (0.07, 0.07, 0.91, 0.20)
DIRECTION = ("ratio_* = ours / peer of median wall (or CPU) milliseconds: lower is better, "
             "below 1.0 ours is faster; floor_share = floor / ours: the part of our time any "
             "chart of this size pays")


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def matplotlib_peer(df: pd.DataFrame, full: pd.DataFrame, title: str) -> bytes:
    """The hand-written matplotlib peer (see the module docstring)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    fig = Figure(figsize=SIZE, dpi=DPI)
    ax = fig.add_axes(PRICE_RECT)
    axv = fig.add_axes(VOLUME_RECT, sharex=ax)
    o, h, lo, c, v = (df[k].to_numpy(float) for k in ("open", "high", "low", "close", "volume"))
    x = np.arange(len(df))
    colors = ["#26a69a" if up else "#ef5350" for up in c >= o]
    ax.vlines(x, lo, h, colors=colors, linewidth=0.8)
    ax.bar(x, np.maximum(np.abs(c - o), 1e-6), bottom=np.minimum(o, c), width=0.7,
           color=colors)
    close = full["close"].astype(float)
    for n in MAS:
        ax.plot(x, close.rolling(n).mean().to_numpy()[-len(df):], linewidth=1.1,
                label=f"MA{n}")
    ax.grid(True, alpha=0.25)
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.set_title(title, fontsize=11, loc="left")
    ax.tick_params(labelbottom=False)
    axv.bar(x, v, width=0.7, color=colors, alpha=0.8)
    axv.grid(True, alpha=0.25)
    labels = pd.DatetimeIndex(df.index).strftime("%Y-%m-%d")
    axv.xaxis.set_major_locator(MaxNLocator(nbins=7, integer=True))
    axv.xaxis.set_major_formatter(FuncFormatter(
        lambda val, _p: str(labels[round(val)]) if 0 <= round(val) < len(labels) else ""))
    axv.tick_params(axis="x", labelsize=8)
    return _png(fig)


def mplfinance_peer(df: pd.DataFrame, title: str) -> bytes:
    """mplfinance's candle chart with volume and the same moving averages."""
    import matplotlib.pyplot as plt
    import mplfinance as mpf

    bars = df.rename(columns=str.capitalize)[["Open", "High", "Low", "Close", "Volume"]]
    with plt.rc_context():  # mplfinance applies its style to the global rcParams
        fig, _axes = mpf.plot(bars, type="candle", volume=True, mav=MAS, figsize=SIZE,
                              title=title, returnfig=True, warn_too_much_data=10_000)
        try:
            return _png(fig)
        finally:
            plt.close(fig)


def empty_floor() -> bytes:
    """The same figure and two axes with nothing drawn, saved the same way."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=SIZE, dpi=DPI)
    ax = fig.add_axes(PRICE_RECT)
    fig.add_axes(VOLUME_RECT, sharex=ax)
    return _png(fig)


def _once(fn: Callable[[], bytes]) -> tuple[float, float, int]:
    c0 = time.process_time()
    w0 = time.perf_counter()
    size = len(fn())
    return (time.perf_counter() - w0) * 1000.0, (time.process_time() - c0) * 1000.0, size


def run(*, repeat: int = 7) -> dict[str, Any]:
    """`repeat` interleaved rounds (after one warm-up of each side); returns the JSON dict."""
    from tools import snapshot
    from tools.chart_draw import render_candles

    watch = LoadWatch()
    history = snapshot.load("NVDA").iloc[-(BARS + 60):]
    view = history.iloc[-BARS:]
    title = "NVIDIA Corp (NVDA)"
    sides: dict[str, Callable[[], bytes]] = {
        "ours": lambda: render_candles(history, title=title, subtitle="1d", bars=BARS,
                                       size=SIZE, dpi=DPI),
        "matplotlib": lambda: matplotlib_peer(view, history, title),
        "mplfinance": lambda: mplfinance_peer(view, title),
        "floor": empty_floor,
    }
    wall: dict[str, list[float]] = {k: [] for k in sides}
    cpu: dict[str, list[float]] = {k: [] for k in sides}
    png: dict[str, int] = {}
    for fn in sides.values():
        fn()  # warm-up: imports, font registration, glyph caches
    for _ in range(max(1, repeat)):
        for name, fn in sides.items():
            w, c, size = _once(fn)
            wall[name].append(w)
            cpu[name].append(c)
            png[name] = size
    med = {k: spread(v, digits=1) for k, v in wall.items()}
    med_cpu = {k: spread(v, digits=1) for k, v in cpu.items()}
    ours = med["ours"]["median"]
    ours_cpu = med_cpu["ours"]["median"]
    return {
        "bench": "chart",
        "bars": BARS,
        "size_in": list(SIZE),
        "dpi": DPI,
        "rounds": max(1, repeat),
        "direction": DIRECTION,
        "ours": {"what": "tools.chart_draw.render_candles (fixed axes, collections)",
                 "wall_ms": med["ours"], "cpu_ms": med_cpu["ours"], "png_bytes": png["ours"]},
        "peers": {
            "matplotlib": {
                "what": "hand-written matplotlib with Bullpen's layout: the same fixed axes "
                        "rectangles (no constrained/tight layout), vlines wicks, bar bodies "
                        "and volume, MA 5/20/60, grid, legend, title, date labels",
                "wall_ms": med["matplotlib"], "cpu_ms": med_cpu["matplotlib"],
                "png_bytes": png["matplotlib"]},
            "mplfinance": {
                "what": "mplfinance.plot(type='candle', volume=True, mav=(5, 20, 60)), "
                        "figsize 10x6, 100 dpi, its default style and layout",
                "wall_ms": med["mplfinance"], "cpu_ms": med_cpu["mplfinance"],
                "png_bytes": png["mplfinance"]},
        },
        "floor": {"what": "the same figure and two empty axes saved to PNG",
                  "wall_ms": med["floor"], "cpu_ms": med_cpu["floor"]},
        "ratio_vs_matplotlib": ratio(ours, med["matplotlib"]["median"]),
        "ratio_vs_mplfinance": ratio(ours, med["mplfinance"]["median"]),
        "ratio_vs_matplotlib_cpu": ratio(ours_cpu, med_cpu["matplotlib"]["median"]),
        "ratio_vs_mplfinance_cpu": ratio(ours_cpu, med_cpu["mplfinance"]["median"]),
        "floor_share": ratio(med["floor"]["median"], ours),
        "floor_share_cpu": ratio(med_cpu["floor"]["median"], ours_cpu),
        "target_ms": TARGET_MS,
        "within_target": ours is not None and ours < TARGET_MS,
        **watch.fields(),
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
