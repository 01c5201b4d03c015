"""The `generate_chart` tool: candlesticks with MA5/20/60 and volume for one symbol, closes
rebased to 100 for several, sent to the chat as a PNG (`emit_file`).

The drawing (`tools.chart_draw`, matplotlib) is imported on the first chart and runs through
`asyncio.to_thread`; registering the tool costs nothing at start-up.
"""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Annotated, Literal

import pandas as pd
from pydantic import BaseModel, Field

from core.context import current, emit_file, emit_status
from core.errors import DataUnavailable
from core.localize import source_label, word
from core.types import OutgoingFile
from core.words import t
from tools.bars import interval_minutes, normalize_interval
from tools.data.prices import get_bars
from tools.market import Coverage, coverage_note, source_from, window
from tools.models import DataSource, rnd, tool
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol
from tools.symbols.sources import reader_name

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
    from tools.chart_draw import render_candles, render_comparison

    interval = normalize_interval(interval)
    intraday = interval_minutes(interval) < 1440
    resolved = [resolve_symbol(s) for s in dict.fromkeys(symbols)]
    lang = current().lang  # the chart is for the person who asked: their words on it
    emit_status(t("labels.status_loading_bars", lang,
                  codes=t("grammar.list_sep", lang).join(s.code for s in resolved)))
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
