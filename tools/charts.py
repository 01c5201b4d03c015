"""Charts as PNG bytes: candlesticks with volume and moving averages, rebased comparisons.

Rendering is pure and synchronous (`render_candles`, `render_comparison`) on matplotlib's Agg
canvas with no pyplot state, so it is safe in a worker thread; the `generate_chart` tool runs it
through `asyncio.to_thread` and hands the PNG to the chat with `emit_file`. Chinese text uses
Noto Sans CJK from the `cvttf-notosanscjk-regular` package (per-glyph fallback after DejaVu).
"""

from __future__ import annotations

import asyncio
import functools
import io
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Annotated, Literal

import matplotlib
import numpy as np
import pandas as pd
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator
from pydantic import BaseModel, Field

from core import numbers
from core.context import current, emit_file, emit_status
from core.errors import DataUnavailable, InvalidArguments
from core.localize import source_label, word
from core.types import OutgoingFile
from core.words import t
from tools.bars import interval_minutes, normalize_interval
from tools.data.prices import get_bars
from tools.market import Coverage, coverage_note, source_from, window
from tools.models import DataSource, rnd, tool
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol
from tools.symbols.sources import reader_name

matplotlib.use("Agg", force=False)

UP_GREEN, DOWN_RED = "#26a69a", "#ef5350"
# the markets that draw a rise in red and a fall in green (mainland China's convention)
RED_UP_MARKETS: frozenset[str] = frozenset({"cn"})
MA_COLORS = ("#f5a623", "#4a90d9", "#9b59b6", "#7f8c8d")
LINE_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


@functools.cache
def cjk_font_path() -> str:
    """Path of the CJK font file shipped by `cvttf-notosanscjk-regular` (also for PDFs)."""
    import cvttf_NotoSansCJK_Regular as noto

    return str(noto.get_TTF_path())


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


# --- the tool --------------------------------------------------------------------------------


class ChartSeries(BaseModel):
    symbol: str
    name: str = ""
    first: str
    last: str
    bars: int
    last_close: float | None
    change_pct: float | None = Field(description="percent change over the charted range")
    source: DataSource


class ChartResult(BaseModel):
    """A chart was sent to the chat as an image; these are the numbers it shows."""

    filename: str
    kind: Literal["candlestick", "comparison"]
    interval: str
    series: list[ChartSeries]
    note: str = ""
    range_note: str = Field(default="", description="why a comparison ends before a series' "
                                                    "own last date")
    coverage: Coverage | None = Field(default=None, description="set when the data covers "
                                      "only part of the asked window")


def _slice(df: pd.DataFrame, period: str | None, start: date | None, end: date | None,
           ) -> tuple[pd.DataFrame, Coverage | None]:
    """The bars of the asked window (`tools.market.window`: explicit dates, then a calendar
    period, then a span back from the last bar) and what of it the data lacks."""
    view, _, _, covered = window(df, period, start, end)
    return view, covered


def _series_info(sym: ResolvedSymbol, view: pd.DataFrame, intraday: bool,
                 source: DataSource) -> ChartSeries:
    fmt = "%Y-%m-%d %H:%M" if intraday else "%Y-%m-%d"
    first, last = float(view["close"].iloc[0]), float(view["close"].iloc[-1])
    return ChartSeries(
        symbol=sym.code, name=sym.name, first=view.index[0].strftime(fmt),
        last=view.index[-1].strftime(fmt), bars=len(view), last_close=rnd(last, 4),
        change_pct=rnd((last / first - 1.0) * 100.0, 2) if first else None, source=source,
    )


@tool(label="Drawing a chart", tags=["chart", "output"])
async def generate_chart(
    symbols: Annotated[list[str], Field(min_length=1, max_length=6)],
    period: str = "6mo",
    interval: str = "1d",
    start: date | None = None,
    end: date | None = None,
) -> ChartResult:
    """Draw a chart and send it to the chat as a PNG image: one symbol gives candlesticks with
    MA5/20/60 and volume; several give a comparison of closes rebased to 100.

    Args:
        symbols: one to six codes, tickers or names, e.g. ["NVDA"] or ["600519", "000858"].
        period: back from the latest bar (1mo, 3mo, 6mo, 1y, 2y, 5y, ytd, max) or calendar
            dates (2024, 2024-09, 2019-06-01 2020-06-16).
        interval: bar size: 1d, 1w, 1mo, or intraday where the source has it.
        start: first date (YYYY-MM-DD), overrides period.
        end: last date (YYYY-MM-DD).
    """
    interval = normalize_interval(interval)
    intraday = interval_minutes(interval) < 1440
    resolved = [resolve_symbol(s) for s in dict.fromkeys(symbols)]
    emit_status(f"Loading bars for {', '.join(s.code for s in resolved)}")
    lang = current().lang  # the chart is for the person who asked: their words on it
    bar_size = word("ta.interval_", interval, lang)
    frames = [await get_bars(sym, interval) for sym in resolved]
    range_note = ""
    if len(resolved) == 1:
        sym, df = resolved[0], frames[0]
        view, covered = _slice(df, period, start, end)
        if view.empty:
            raise DataUnavailable(f"no {sym.code} bars in the requested range "
                                  f"(data runs {df.index[0].date()} to {df.index[-1].date()})",
                                  provider=str(df.attrs.get("provider", "")))
        source = source_from(df)
        upto = df[df.index <= view.index[-1]]
        name = reader_name(sym.code, sym.name, lang)
        title = f"{name} ({sym.code})" if name else sym.code
        subtitle = f"{bar_size} · {source_label(source, lang)}"
        png = await asyncio.to_thread(
            render_candles, upto, title=title, subtitle=subtitle, bars=len(view),
            market=sym.market, intraday=intraday, lang=lang,
        )
        info = [_series_info(sym, view, intraday, source)]
        kind: Literal["candlestick", "comparison"] = "candlestick"
    else:
        closes: dict[str, pd.Series] = {}
        for sym, df in zip(resolved, frames, strict=True):
            # daily bars of different exchanges align on the calendar date, intraday on UTC
            closes[sym.code] = df["close"].tz_convert("UTC") if intraday else pd.Series(
                df["close"].to_numpy(), index=df.index.tz_localize(None).normalize())
        common, covered = _slice(pd.concat(closes, axis=1, join="inner").dropna(), period,
                                 start, end)
        if common.empty:
            spans = "; ".join(f"{s.code} {f.index[0].date()} to {f.index[-1].date()}"
                              for s, f in zip(resolved, frames, strict=True))
            raise DataUnavailable(f"the series share no dates in the requested range ({spans})",
                                  provider=str(frames[0].attrs.get("provider", "")))
        sel = {s.code: common[s.code] for s in resolved}
        sources = [source_from(f) for f in frames]
        title = t("labels.chart_versus", lang).join(s.code for s in resolved)
        subtitle = f"{bar_size} · {t('labels.chart_rebased_to', lang)} · " + ", ".join(
            sorted({word("src.provider_", src.provider, lang) for src in sources}))
        png = await asyncio.to_thread(render_comparison, sel, title=title, subtitle=subtitle,
                                      intraday=intraday, lang=lang)
        info = [
            _series_info(s, pd.DataFrame({"close": sel[s.code]}), intraday, src)
            for s, src in zip(resolved, sources, strict=True)
        ]
        kind = "comparison"
        shared_end = common.index[-1].date()
        later = [f"{s.code} has data to {f.index[-1].date()}"
                 for s, f in zip(resolved, frames, strict=True)
                 if f.index[-1].date() > shared_end]
        if later:
            range_note = (f"compared over the dates all series share, to {shared_end} "
                          f"({'; '.join(later)})")
    last = info[0].last.replace(":", "").replace(" ", "_")
    filename = f"{'_'.join(s.code for s in resolved)}_{interval}_{last}.png".replace("^", "")
    emit_file(OutgoingFile(kind="image", filename=filename, data=png, mime_type="image/png",
                           caption=", ".join(f"{i.symbol} {i.first}..{i.last}" for i in info)))
    offline = any(i.source.offline for i in info)
    note = "; ".join(n for n in ("offline snapshot data (historical, not live)" if offline
                                 else "", coverage_note(covered)) if n)
    return ChartResult(filename=filename, kind=kind, interval=interval, series=info, note=note,
                       range_note=range_note, coverage=covered)
