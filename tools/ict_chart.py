"""Annotated ICT chart as PNG bytes: candles, order-block and FVG boxes, BOS/ChoCH marks, the
dealing range with its equilibrium, and kill-zone shading (intraday bars only) on the clock of the
analysis' session template: New York's kill zones, or a Shanghai/Shenzhen stock's own trading
sessions. Rises and bullish marks take the market's colour (`tools.chart_draw.up_down_colors`: red
for A-shares, green elsewhere).

Pure and synchronous on matplotlib's Agg canvas without pyplot state, so callers may run it in a
worker thread. Candles are two line collections (wicks, and bodies as thick lines whose width
follows the bar spacing) so a few hundred bars render quickly.
"""

from __future__ import annotations

import io
from typing import Final

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator

from core.localize import word
from core.words import t
from ict import ICTAnalysis, zones_of
from tools.chart_draw import cjk_font_family, up_down_colors

ZONE_COLORS: Final = {"london": "#4a90d9", "ny_am": "#f5a623", "ny_pm": "#9b59b6",
                      "asia": "#7f8c8d", "cn_am": "#f5a623", "cn_pm": "#9b59b6"}
MAX_BOXES: Final = 12
# the chart's words, by the analysis' value (the catalogue's report_pdf namespace)
_WORDS: Final = {"bullish": "report_pdf.ict_bullish", "bearish": "report_pdf.ict_bearish",
                 "neutral": "report_pdf.ict_neutral", "main": "report_pdf.ict_main",
                 "sub": "report_pdf.ict_sub", "premium": "report_pdf.ict_premium",
                 "discount": "report_pdf.ict_discount",
                 "equilibrium": "report_pdf.ict_equilibrium"}


def _say(value: str, lang: str) -> str:
    key = _WORDS.get(value)
    return t(key, lang) if key else value


def _analysed(bars: pd.DataFrame, analysis: ICTAnalysis) -> pd.DataFrame:
    """The bars the analysis positions refer to (after its lookback / current-bar trimming)."""
    index = pd.DatetimeIndex(bars.index)
    start = pd.Timestamp(analysis.meta.start)
    hits = np.flatnonzero(index == start)
    if not len(hits):
        raise ValueError("the bars do not contain the analysed range")
    first = int(hits[0])
    view = bars.iloc[first:first + analysis.meta.bars]
    if len(view) != analysis.meta.bars:
        raise ValueError("the bars are shorter than the analysed range")
    view.columns = [str(c).lower() for c in view.columns]
    return view


def _candles(ax: Axes, view: pd.DataFrame, width_pts: float, bull: str, bear: str) -> None:
    o, h, lo, c = (view[k].to_numpy(float) for k in ("open", "high", "low", "close"))
    x = np.arange(len(view), dtype=float)
    colors = np.where(c >= o, bull, bear).tolist()
    ax.vlines(x, lo, h, colors=colors, linewidth=0.7)
    body_lo, body_hi = np.minimum(o, c), np.maximum(o, c)
    tick = (h.max() - lo.min()) * 2e-3
    body_hi = np.maximum(body_hi, body_lo + tick)  # keep dojis visible
    ax.vlines(x, body_lo, body_hi, colors=colors, linewidth=width_pts)


def _box(ax: Axes, x0: float, x1: float, bottom: float, top: float, color: str,
         alpha: float, hatch: str | None = None) -> None:
    ax.add_patch(Rectangle((x0, bottom), max(x1 - x0, 0.8), max(top - bottom, 0.0),
                           facecolor=color, edgecolor=color, alpha=alpha, linewidth=0.6,
                           hatch=hatch))


def _clock(minute: int) -> str:
    return f"{minute // 60:02d}:{minute % 60:02d}"


def _kill_zones(ax: Axes, view: pd.DataFrame, analysis: ICTAnalysis, lang: str = "en") -> None:
    """Shade the zones of the analysis' template in its time zone. New York's kill zones are
    labelled by name (london, ny_am...), an exchange's sessions by their hours."""
    sessions = analysis.sessions
    zones = zones_of(sessions.template)
    wall = pd.DatetimeIndex(view.index).tz_convert(sessions.timezone)
    minute = np.asarray(wall.hour * 60 + wall.minute)
    day = np.asarray(wall.day)
    code = np.zeros(len(view), dtype=np.int64)
    for k, (_, start, end) in enumerate(zones, start=1):
        code[(minute >= start) & (minute < end)] = k
    change = np.flatnonzero((np.diff(code) != 0) | (np.diff(day) != 0)) + 1
    starts = np.concatenate(([0], change))
    ends = np.append(change, len(code))
    seen: set[str] = set()
    for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
        if code[s] == 0:
            continue
        name, start, end = zones[code[s] - 1]
        label = (f"{_clock(start)}-{_clock(end)}" if sessions.template == "CN"
                 else word("ict.d_", name, lang))
        ax.axvspan(s - 0.5, e - 0.5, color=ZONE_COLORS[name], alpha=0.08,
                   linewidth=0, label=None if name in seen else label)
        seen.add(name)


def render_ict_chart(
    bars: pd.DataFrame,
    analysis: ICTAnalysis,
    *,
    title: str,
    market: str = "",
    lang: str = "en",
    max_bars: int = 160,
    size: tuple[float, float] = (11.0, 6.2),
    dpi: int = 100,
) -> bytes:
    """PNG of the last `max_bars` analysed bars with the analysis drawn on top.

    `bars` are the bars given to `ict.analyze` (a longer frame is fine: the analysed range is
    located by the analysis' start time). `market` ("cn", "us", ...) picks the colours of rises
    and falls; `lang` the chart's words. Raises ValueError when they do not match.
    """
    cjk_font_family()
    bull, bear = up_down_colors(market)
    full = _analysed(bars, analysis)
    n_all = len(full)
    first = max(0, n_all - max_bars)
    view = full.iloc[first:]
    n = len(view)

    fig = Figure(figsize=size, dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.06, 0.08, 0.92, 0.84))
    axes_pts = size[0] * 72 * 0.92
    _candles(ax, view, max(0.8, 0.7 * axes_pts / max(n, 1)), bull, bear)

    def x(i: int) -> float:
        return float(i - first)

    right = float(n)
    obs = [b for b in analysis.order_blocks
           if b.broken_index is None or b.broken_index >= first][-MAX_BOXES:]
    for b in obs:
        end = x(b.broken_index) if b.broken_index is not None else right
        color = bull if b.side == "bullish" else bear
        _box(ax, max(x(b.origin_index), -0.5), end, b.bottom, b.top, color,
             0.28 if b.zone_type == "main" else 0.16)
        if b.origin_index >= first:
            ax.text(x(b.origin_index), b.top,
                    t("report_pdf.ict_ob", lang, kind=_say(b.zone_type, lang)), fontsize=6,
                    color=color,
                    va="bottom")
    gaps = [g for g in analysis.fvgs
            if g.filled_index is None or g.filled_index >= first][-MAX_BOXES:]
    for g in gaps:
        end = x(g.filled_index) if g.filled_index is not None else right
        color = bull if g.side == "bullish" else bear
        _box(ax, max(x(g.index - 1), -0.5), end, g.bottom, g.top, color, 0.10, hatch="///")
    for ev in analysis.structure.events:
        if ev.confirmed_index < first:
            continue
        color = bull if ev.direction == "up" else bear
        x0, x1 = max(x(ev.swing_index), -0.5), x(ev.confirmed_index)
        ax.hlines(ev.level, x0, x1, colors=color, linewidth=1.0,
                  linestyles="solid" if ev.kind == "BOS" else "dashed")
        ax.text((x0 + x1) / 2, ev.level, ev.kind, fontsize=7, color=color, ha="center",
                va="bottom" if ev.direction == "up" else "top")
    dr = analysis.dealing_range
    if dr is not None:
        ax.axhline(dr.equilibrium, color="#555555", linewidth=1.0, linestyle="--",
                   label=t("report_pdf.ict_eq", lang, price=f"{dr.equilibrium:.6g}",
                           zone=_say(dr.zone, lang), pct=f"{dr.pd_percent:.0f}"))
        for level in (dr.high, dr.low):
            ax.axhline(level, color="#999999", linewidth=0.6, linestyle=":")
    if analysis.sessions.applicable:
        _kill_zones(ax, view, analysis, lang)

    lo = float(view["low"].min())
    hi = float(view["high"].max())
    pad = (hi - lo) * 0.05 or abs(hi) * 0.01 or 1.0
    ax.set_xlim(-1, n)
    ax.set_ylim(lo - pad, hi + pad)
    ax.grid(True, alpha=0.2)
    labels = pd.DatetimeIndex(view.index).strftime(
        "%m-%d %H:%M" if analysis.sessions.applicable else "%Y-%m-%d")

    def fmt(value: float, _pos: int) -> str:
        i = round(value)
        return str(labels[i]) if 0 <= i < n else ""

    ax.xaxis.set_major_locator(MaxNLocator(nbins=8, integer=True))
    ax.xaxis.set_major_formatter(FuncFormatter(fmt))
    ax.tick_params(labelsize=8)
    bias = analysis.structure.bias
    ax.set_title(f"{title}  ·  {word('ict.iv_', analysis.meta.interval, lang)}  ·  "
                 f"{t('report_pdf.ict_bias', lang, bias=_say(bias, lang))}", fontsize=11,
                 loc="left")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="upper left", fontsize=7, frameon=False, ncol=5)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
