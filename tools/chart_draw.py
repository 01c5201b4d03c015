"""Charts as PNG bytes: candlesticks with volume and moving averages, rebased comparisons.

Rendering is pure and synchronous (`render_candles`, `render_comparison`) on matplotlib's Agg
canvas with no pyplot state, so it is safe in a worker thread. Chinese text uses Noto Sans CJK
(`tools.fonts`, per-glyph fallback after DejaVu). This module is imported on the first chart,
not at start-up: matplotlib and its fonts are about 48 MB of a serving process (issue 34).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Mapping, Sequence

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from core import numbers
from core.errors import InvalidArguments
from core.words import t
from tools.fonts import cjk_font_path

matplotlib.use("Agg", force=False)

UP_GREEN, DOWN_RED = "#26a69a", "#ef5350"
# the markets that draw a rise in red and a fall in green (mainland China's convention)
RED_UP_MARKETS: frozenset[str] = frozenset({"cn"})
MA_COLORS = ("#f5a623", "#4a90d9", "#9b59b6", "#7f8c8d")
LINE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


@functools.cache
def _registered_cjk_family() -> str:
    path = cjk_font_path()
    font_manager.fontManager.addfont(path)
    return str(font_manager.FontProperties(fname=path).get_name())


def cjk_font_family() -> str:
    """Register the CJK font with matplotlib once and put it in the sans-serif fallback list.

    The registration is cached; the rcParams are set on every call, because other code in the
    process (mplfinance's styles, a test's `rcdefaults`) may have reset them since."""
    family = _registered_cjk_family()
    # a family *list* gives per-glyph fallback: Latin from DejaVu, CJK from Noto
    matplotlib.rcParams["font.family"] = ["DejaVu Sans", family]
    matplotlib.rcParams["axes.unicode_minus"] = False
    return family


def up_down_colors(market: str) -> tuple[str, str]:
    """The (rise, fall) colours of an instrument's market: A-shares red up and green down,
    everything else (US, Hong Kong, crypto, FX) green up and red down. Every chart and table
    that colours a move asks here."""
    return (DOWN_RED, UP_GREEN) if market in RED_UP_MARKETS else (UP_GREEN, DOWN_RED)


def _png(fig: Figure, dpi: int) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _date_axis(ax: Axes, index: pd.DatetimeIndex, intraday: bool) -> None:
    labels = index.strftime("%m-%d %H:%M" if intraday else "%Y-%m-%d")

    def fmt(x: float, _pos: int) -> str:
        i = round(x)
        return str(labels[i]) if 0 <= i < len(labels) else ""

    ax.xaxis.set_major_locator(MaxNLocator(nbins=7, integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(fmt))


def render_candles(
    df: pd.DataFrame,
    *,
    title: str,
    subtitle: str = "",
    bars: int | None = None,
    mas: Sequence[int] = (5, 20, 60),
    market: str = "",
    intraday: bool = False,
    size: tuple[float, float] = (10.0, 6.0),
    dpi: int = 100,
    lang: str = "en",
) -> bytes:
    """Candlesticks, moving averages and a volume panel as PNG bytes (`candles_figure`)."""
    return _png(candles_figure(df, title=title, subtitle=subtitle, bars=bars, mas=mas,
                               market=market, intraday=intraday, size=size, dpi=dpi, lang=lang),
                dpi)


def candles_figure(
    df: pd.DataFrame,
    *,
    title: str,
    subtitle: str = "",
    bars: int | None = None,
    mas: Sequence[int] = (5, 20, 60),
    market: str = "",
    intraday: bool = False,
    size: tuple[float, float] = (10.0, 6.0),
    dpi: int = 100,
    lang: str = "en",
) -> Figure:
    """Candlesticks, moving averages and a volume panel.

    `df` holds OHLCV bars oldest first; moving averages use all of it, the chart shows the last
    `bars`. Rises and falls take the colours of the instrument's `market` (`up_down_colors`);
    the axis words and the volume's units (万/亿 or K/M/B) are the reader's `lang`.
    """
    if df.empty:
        raise InvalidArguments("no bars to chart")
    cjk_font_family()
    close = df["close"].astype(float)
    ma_lines = {n: close.rolling(n, min_periods=n).mean() for n in mas}
    view = df.iloc[-bars:] if bars else df
    n = len(view)
    o, h, lo, c = (view[k].to_numpy(float) for k in ("open", "high", "low", "close"))
    v = view["volume"].to_numpy(float)
    x = np.arange(n, dtype=float)
    up = c >= o
    up_color, down_color = up_down_colors(market)
    colors = np.where(up, up_color, down_color)

    # fixed axes rectangles: constrained layout would cost a third of the render time
    fig = Figure(figsize=size, dpi=dpi)
    top = 0.89 if subtitle else 0.93
    ax = fig.add_axes((0.07, 0.30, 0.91, top - 0.30))
    axv = fig.add_axes((0.07, 0.07, 0.91, 0.20), sharex=ax)

    half = 0.35
    wicks = np.stack([np.column_stack([x, lo]), np.column_stack([x, h])], axis=1)
    ax.add_collection(LineCollection(list(wicks), colors=list(colors), linewidths=0.8))
    body_lo, body_hi = np.minimum(o, c), np.maximum(o, c)
    body_hi = np.where(body_hi - body_lo < 1e-12, body_lo + (h.max() - lo.min()) * 1e-3, body_hi)
    verts = np.stack([
        np.column_stack([x - half, body_lo]), np.column_stack([x - half, body_hi]),
        np.column_stack([x + half, body_hi]), np.column_stack([x + half, body_lo]),
    ], axis=1)
    ax.add_collection(PolyCollection(list(verts), facecolors=list(colors),
                                     edgecolors=list(colors), linewidths=0.5))
    for i, (win, series) in enumerate(ma_lines.items()):
        y = series.iloc[-n:].to_numpy(float)
        if np.isfinite(y).any():
            ax.plot(x, y, color=MA_COLORS[i % len(MA_COLORS)], linewidth=1.1, label=f"MA{win}")
    pad = (h.max() - lo.min()) * 0.04 or abs(h.max()) * 0.01 or 1.0
    ax.set_xlim(-1, n)
    ax.set_ylim(lo.min() - pad, h.max() + pad)
    ax.grid(True, alpha=0.25)
    if ma_lines:
        ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.set_title(title + (f"\n{subtitle}" if subtitle else ""), fontsize=11, loc="left")
    ax.tick_params(labelbottom=False)

    vol = np.stack([np.column_stack([x - half, np.zeros(n)]), np.column_stack([x - half, v]),
                    np.column_stack([x + half, v]), np.column_stack([x + half, np.zeros(n)])],
                   axis=1)
    axv.add_collection(PolyCollection(list(vol), facecolors=list(colors), linewidths=0,
                                      alpha=0.8))
    axv.set_ylim(0, float(np.nanmax(v)) * 1.08 if np.nanmax(v) > 0 else 1.0)
    axv.set_ylabel(t("labels.chart_volume", lang), fontsize=8)
    axv.grid(True, alpha=0.25)
    axv.yaxis.set_major_formatter(FuncFormatter(lambda val, _p: _compact(val, lang)))
    _date_axis(axv, pd.DatetimeIndex(view.index), intraday)
    axv.tick_params(axis="x", labelsize=8)
    return fig


def _compact(value: float, lang: str) -> str:
    """A volume axis tick: 1.9亿 / 188M, three digits at most."""
    return numbers.compact(float(value), lang, digits=3) if value else "0"


def rebase(closes: Mapping[str, pd.Series]) -> pd.DataFrame:
    """Align closes on common timestamps and rebase each to 100 at the first one."""
    frame = pd.concat(dict(closes), axis=1, join="inner").dropna()
    if frame.empty:
        raise InvalidArguments("the series share no dates")
    return frame / frame.iloc[0] * 100.0


def render_comparison(
    closes: Mapping[str, pd.Series],
    *,
    title: str,
    subtitle: str = "",
    intraday: bool = False,
    size: tuple[float, float] = (10.0, 5.5),
    dpi: int = 100,
    lang: str = "en",
) -> bytes:
    """Several closing-price series rebased to 100 at their first common date, as PNG bytes."""
    cjk_font_family()
    frame = rebase(closes)
    x = np.arange(len(frame), dtype=float)
    fig = Figure(figsize=size, dpi=dpi)
    ax = fig.add_axes((0.08, 0.08, 0.90, 0.80 if subtitle else 0.84))
    for i, col in enumerate(frame.columns):
        y = frame[col].to_numpy(float)
        ax.plot(x, y, color=LINE_COLORS[i % len(LINE_COLORS)], linewidth=1.4,
                label=f"{col} {y[-1] - 100.0:+.1f}%")
    ax.axhline(100.0, color="#999999", linewidth=0.8, linestyle="--")
    ax.set_xlim(-1, len(frame))
    ax.grid(True, alpha=0.25)
    ax.legend(loc="upper left", fontsize=9, frameon=False)
    ax.set_ylabel(t("labels.chart_rebased", lang))
    ax.set_title(title + (f"\n{subtitle}" if subtitle else ""), fontsize=11, loc="left")
    _date_axis(ax, pd.DatetimeIndex(frame.index), intraday)
    return _png(fig, dpi)
