"""The scheduled push report: one report on a list of symbols, built from their daily bars.

Every figure is computed here in code (pandas, pandas-ta for the RSI, the ICT analyzer for the
daily bias) from the bars the data layer serves, and carries its source and date. A model, when
one is given, only writes the narrative from the computed rows, in one call; the text always
says who wrote it. No scheduling and no sending: `report_key` lets subscribers with the same
symbols, language and data date share one report, which the outbox then delivers.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from typing import Any, Final, Literal

import pandas as pd
from pydantic import BaseModel, Field

import ict
from core import numbers
from core.errors import BullpenError, DataUnavailable, InvalidArguments, LLMError, UnknownSymbol
from core.localize import listing, words_of
from core.ports import LLMProvider
from core.types import ChatMessage, OutgoingFile
from core.words import Lang, norm, t
from tools.bars import with_moving_averages
from tools.ict_tool import run_ict
from tools.indicators import compute_indicators
from tools.market import load_bars, period_start, quote_from_bars
from tools.models import DataSource, price_decimals, rnd
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol

NarrativeSource = Literal["llm", "offline template"]
Bias = Literal["bullish", "bearish", "neutral"]

MAX_SYMBOLS: Final = 30
LOOKBACK_BARS: Final = 400  # a 52-week range (~252 bars) and the 200-day average, with room
MA_WINDOWS: Final = (20, 50, 200)
RSI_LENGTH: Final = 14
CHART_PERIOD: Final = "3mo"
CHART_MAX_SERIES: Final = 6
MIN_CHART_DATES: Final = 5
_LOADS_AT_ONCE: Final = 4


# --- the report ------------------------------------------------------------------------------


class MovingAverage(BaseModel):
    window: int = Field(description="bars, e.g. 20 for the 20-day average")
    value: float | None = Field(description="None until `window` bars exist")
    close_is: Literal["above", "below"] | None = Field(
        default=None, description="where the last close is against the average")


class ICTReading(BaseModel):
    """The daily ICT reading: the daily chart's structure bias and the bias-stack grade
    (Daily/4H/15m/5m/1m; a timeframe with no data fails its checks and is listed)."""

    bias: Bias | None = None
    grade: Literal["A", "B", "C"] | None = None
    score: int | None = Field(default=None, description="stack score 0-100")
    missing: list[str] = Field(default_factory=list, description="stack timeframes without data")
    error: str = Field(default="", description="why there is no reading")


class ReportRow(BaseModel):
    """One symbol's figures, every one computed in code from its daily bars."""

    symbol: str = Field(description="resolved code")
    name: str = ""
    currency: str = Field(default="", description="empty for an index: quoted in points")
    close: float = Field(description="last close")
    as_of: date = Field(description="date of the last close")
    change_1d_pct: float | None = Field(description="percent against the previous close")
    change_5d_pct: float | None = Field(description="percent against the close 5 bars earlier")
    change_1m_pct: float | None = Field(
        description="percent against the last close on or before one month earlier")
    low_52w: float | None
    high_52w: float | None
    range_position: float | None = Field(description="in the 52-week range: 0 = low, 1 = high")
    rsi14: float | None
    moving_averages: list[MovingAverage]
    ict: ICTReading
    source: DataSource


class Report(BaseModel):
    """A report ready to push: Markdown text, the chart and (when asked) the PDF."""

    symbols: list[str] = Field(description="resolved codes, in the order given")
    lang: Lang
    data_date: date | None = Field(description="the newest bar date among the symbols")
    rows: list[ReportRow]
    errors: list[str] = Field(description="one line per symbol that could not be reported")
    notes: list[str] = Field(default_factory=list, description="e.g. who is not in the chart")
    text: str
    narrative: str
    narrative_source: NarrativeSource
    chart: OutgoingFile | None = None
    pdf_file: OutgoingFile | None = None
    key: str = Field(description="report_key of `symbols` and of the queries that did not "
                                 "resolve (their error lines are part of the report)")


def report_key(symbols: Sequence[str], lang: str, data_date: date | None) -> str:
    """The identity of a report: the same codes (in any order), language and data date give the
    same key, so subscribers share one report. Pass resolved codes (`Report.symbols`)."""
    items = [symbols] if isinstance(symbols, str) else symbols
    codes = sorted({s.strip().upper() for s in items if s.strip()})
    digest = hashlib.sha256("\n".join(codes).encode()).hexdigest()[:16]
    when = data_date.isoformat() if data_date else "none"
    return f"report:{_lang(lang)}:{when}:{digest}"


async def build_report(
    symbols: Sequence[str],
    *,
    lang: str = "en",
    llm: LLMProvider | None = None,
    pdf: bool = False,
    today: date | None = None,
) -> Report:
    """Build one report on `symbols` with bars up to `today` (default: the newest there are).

    A symbol that is unknown or has no data becomes one line in `errors`; the others are
    reported. With `llm`, one summarizer call writes the narrative from the computed rows; when
    it fails or says nothing, the offline template writes it and the text says so.
    """
    lg = _lang(lang)
    wanted = list(dict.fromkeys(s.strip() for s in ([symbols] if isinstance(symbols, str)
                                                     else symbols) if s and s.strip()))
    if not wanted:
        raise InvalidArguments("a report needs at least one symbol")
    if len(wanted) > MAX_SYMBOLS:
        raise InvalidArguments(f"a report covers at most {MAX_SYMBOLS} symbols, not {len(wanted)}")
    # off the loop: the first lookup in a process loads the symbols directory (seconds)
    looked_up = await asyncio.to_thread(_resolve_all, wanted)
    resolved = {got.code: got for _, got in looked_up if isinstance(got, ResolvedSymbol)}
    gate = asyncio.Semaphore(_LOADS_AT_ONCE)
    loaded = await asyncio.gather(*(_load(sym, today, gate) for sym in resolved.values()))
    outcome = dict(zip(resolved, loaded, strict=True))

    rows: list[ReportRow] = []
    closes: dict[str, pd.Series] = {}
    errors: list[str] = []
    unresolved: list[str] = []
    for query, got in looked_up:
        if isinstance(got, BullpenError):
            errors.append(error_line(query, got, lg))
            unresolved.append(query)
            continue
        result = outcome.pop(got.code, None)  # None: a second name for a code already done
        if isinstance(result, BullpenError):
            errors.append(error_line(got.code, result, lg))
        elif result is not None:
            rows.append(result[0])
            closes[got.code] = result[1]
    data_date = max((r.as_of for r in rows), default=None)

    chart, notes = await _chart(closes, rows, data_date, lg)
    narrative, source, why = await _narrative(rows, lg, llm)
    if source == "llm":
        unverified = unverified_figures(narrative, rows)
        if unverified:
            notes.append(t("report.unverified", lg,
                           figures=t("grammar.list_sep", lg).join(unverified)))
    report = Report(
        symbols=list(resolved), lang=lg, data_date=data_date, rows=rows, errors=errors,
        notes=notes, text="", narrative=narrative, narrative_source=source, chart=chart,
        key=report_key([*resolved, *unresolved], lg, data_date),
    )
    report.text = render_text(report, fallback_reason=why)
    if pdf:
        data = await asyncio.to_thread(render_pdf, report, fallback_reason=why)
        report.pdf_file = OutgoingFile(
            kind="document", filename=f"report_{data_date or 'no-data'}_{_slug(resolved)}.pdf",
            data=data, mime_type="application/pdf", caption=_title(report))
    return report


def _lang(lang: str) -> Lang:
    return norm(lang.strip())


def _slug(codes: Iterable[str]) -> str:
    return "_".join(codes).replace("^", "")[:80] or "none"


# --- loading and computing -------------------------------------------------------------------


def _resolve_all(queries: Sequence[str]) -> list[tuple[str, ResolvedSymbol | BullpenError]]:
    out: list[tuple[str, ResolvedSymbol | BullpenError]] = []
    for query in queries:
        try:
            out.append((query, resolve_symbol(query)))
        except BullpenError as exc:
            out.append((query, exc))
    return out


async def _load(sym: ResolvedSymbol, today: date | None, gate: asyncio.Semaphore,
                ) -> tuple[ReportRow, pd.Series] | BullpenError:
    """The row and the closes of one symbol, or the error that stopped it."""
    async with gate:
        try:
            bars = await load_bars(sym.code, "1d", LOOKBACK_BARS, end=today)
            if bars.empty:
                upto = f" up to {today}" if today else ""
                raise DataUnavailable(f"no daily bars for {sym.code}{upto}",
                                      provider=str(bars.attrs.get("provider", "")))
            reading = await ict_reading(sym.code, bars)
            row = await asyncio.to_thread(compute_row, sym, bars, reading)
        except BullpenError as exc:
            return exc
    return row, bars["close"]


def compute_row(sym: ResolvedSymbol, bars: pd.DataFrame, ict_: ICTReading) -> ReportRow:
    """A symbol's figures from its daily bars, oldest first (pure)."""
    quote = quote_from_bars(sym, bars)
    close = bars["close"].astype(float)
    last = float(close.iloc[-1])
    d = price_decimals(last)
    year = bars[bars.index > bars.index[-1] - pd.Timedelta(days=365)]
    low, high = float(year["low"].min()), float(year["high"].max())
    averages = with_moving_averages(bars, MA_WINDOWS)
    return ReportRow(
        symbol=sym.code, name=sym.name, currency=quote.currency, close=quote.close,
        as_of=quote.as_of, change_1d_pct=quote.change_pct,
        change_5d_pct=_pct_change(last, _close_bars_back(close, 5)),
        change_1m_pct=_pct_change(last, _close_month_back(close)),
        low_52w=rnd(low, d), high_52w=rnd(high, d),
        range_position=rnd(min(max((last - low) / (high - low), 0.0), 1.0), 3)
        if high > low else None,
        rsi14=_rsi(bars),
        moving_averages=[_average(n, float(averages[f"ma{n}"].iloc[-1]), last, d)
                         for n in MA_WINDOWS],
        ict=ict_, source=quote.source,
    )


def _close_bars_back(close: pd.Series, bars: int) -> float | None:
    return float(close.iloc[-1 - bars]) if len(close) > bars else None


def _close_month_back(close: pd.Series) -> float | None:
    """The last close on or before one calendar month before the last bar."""
    earlier = close[close.index <= close.index[-1] - pd.DateOffset(months=1)]
    return float(earlier.iloc[-1]) if len(earlier) else None


def _pct_change(last: float, base: float | None) -> float | None:
    return rnd((last / base - 1.0) * 100.0, 2) if base else None


def _rsi(bars: pd.DataFrame) -> float | None:
    if len(bars) <= RSI_LENGTH:
        return None
    _, items = compute_indicators(bars, ("rsi",))
    return items[0].latest.get("rsi")


def _average(window: int, value: float, last: float, decimals: int) -> MovingAverage:
    if not math.isfinite(value):
        return MovingAverage(window=window, value=None)
    return MovingAverage(window=window, value=round(value, decimals),
                         close_is="above" if last > value else "below")


async def ict_reading(code: str, bars: pd.DataFrame) -> ICTReading:
    """The daily ICT bias and stack grade, as of the close of the row's last bar (so both read
    the same bars; never later than the clock, so a forming bar is left out)."""
    last_end = ict.bar_end(pd.Timestamp(bars.index[-1]), "daily").to_pydatetime()
    try:
        run = await run_ict(code, "1d", stack=True, now=min(datetime.now(UTC), last_end))
    except BullpenError as exc:
        return ICTReading(error=str(exc))
    reading = ICTReading(bias=run.analysis.structure.bias)
    if run.stack is not None:
        s = run.stack.stack
        reading.grade, reading.score = s.grade, s.score
        reading.missing = [iv for iv in ict.STACK_ORDER if iv in run.stack.missing]
    return reading


# --- the chart -------------------------------------------------------------------------------


async def _chart(closes: dict[str, pd.Series], rows: Sequence[ReportRow],
                 data_date: date | None, lg: Lang) -> tuple[OutgoingFile | None, list[str]]:
    """The closes rebased to 100 over the chart period ending at the data date, on the dates
    the charted series share; a series with no dates there is left out and named in a note."""
    w = words_of("report.", lg)
    notes: list[str] = []
    if data_date is None or not closes:
        return None, notes
    end = pd.Timestamp(data_date)
    start = period_start(end, CHART_PERIOD)
    assert start is not None
    # daily bars of different exchanges align on the calendar date
    daily = {code: pd.Series(s.to_numpy(float), index=s.index.tz_localize(None).normalize())
             for code, s in closes.items()}
    window = {code: s[(s.index >= start) & (s.index <= end)] for code, s in daily.items()}
    # the series holding the data date leads; the others join on the dates they share with it
    anchor = max(window, key=lambda c: window[c].index[-1] if len(window[c]) else pd.Timestamp.min)
    frame = window[anchor].to_frame(anchor)
    span = f"{start.date()} – {end.date()}"
    for code, s in window.items():
        if code == anchor:
            continue
        if len(frame.columns) >= CHART_MAX_SERIES:
            notes.append(w["chart_full"].format(code=code, n=CHART_MAX_SERIES))
            continue
        joined = frame.join(s.rename(code), how="inner")
        if len(joined) < MIN_CHART_DATES:
            notes.append(w["chart_out"].format(code=code, last=daily[code].index[-1].date(),
                                               span=span))
        else:
            frame = joined
    if len(frame) < 2:
        return None, [*notes, w["no_chart"].format(span=span)]
    order = [c for c in closes if c in frame.columns]
    shared_end = frame.index[-1].date()
    if shared_end < data_date:
        notes.append(w["chart_end"].format(date=shared_end))
    offline = any(r.source.offline for r in rows if r.symbol in order)
    providers = ", ".join(sorted({r.source.provider for r in rows if r.symbol in order}))
    title = t("labels.chart_versus", lg).join(order) + w["rebased"]
    subtitle = (f"1d · {frame.index[0].date()} – {shared_end} · {providers}"
                + (w["offline_short"] if offline else ""))
    from tools.chart_draw import render_comparison  # matplotlib: loaded by the first chart

    png = await asyncio.to_thread(render_comparison, {c: frame[c] for c in order}, title=title,
                                  subtitle=subtitle, lang=lg)
    return OutgoingFile(kind="image", filename=f"report_{_slug(order)}_{shared_end}.png",
                        data=png, mime_type="image/png", caption=f"{title} · {subtitle}"), notes


# --- the narrative ---------------------------------------------------------------------------


async def _narrative(rows: Sequence[ReportRow], lg: Lang, llm: LLMProvider | None,
                     ) -> tuple[str, NarrativeSource, str]:
    """(narrative, who wrote it, why the template stood in for the model or "")."""
    if llm is None or not rows:
        return template_narrative(rows, lg), "offline template", ""
    payload = json.dumps({"rows": [r.model_dump(mode="json") for r in rows]},
                         ensure_ascii=False)
    messages = [ChatMessage(role="system", content=t("report.system", lg)),
                ChatMessage(role="user", content=payload)]
    try:
        response = await llm.complete(messages, role="summarizer", max_tokens=400)
    except LLMError as exc:
        return template_narrative(rows, lg), "offline template", type(exc).__name__
    text = response.content.strip()
    if not text:
        return template_narrative(rows, lg), "offline template", t("report.empty_answer", lg)
    return text, "llm", ""


def template_narrative(rows: Sequence[ReportRow], lang: str = "en") -> str:
    """The deterministic narrative: one sentence per symbol, then who led and lagged."""
    lg = _lang(lang)
    w = words_of("report.", lg)
    if not rows:
        return w["nothing"]
    out = [_sentence(r, lg) for r in rows]
    moved = [r for r in rows if r.change_5d_pct is not None]
    if len(moved) >= 2:
        best = max(moved, key=lambda r: r.change_5d_pct or 0.0)
        worst = min(moved, key=lambda r: r.change_5d_pct or 0.0)
        out.append(w["leader"].format(best=best.symbol, b=_pct(best.change_5d_pct),
                                      worst=worst.symbol, w=_pct(worst.change_5d_pct)))
    return t("grammar.sentence_sep", lg).join(out)


def _sentence(r: ReportRow, lg: Lang) -> str:
    w = words_of("report.", lg)
    parts = [w["s_close"].format(code=r.symbol, price=_money(r.close, r.currency, lg),
                                 date=r.as_of, d1=_pct(r.change_1d_pct, w["na"]))]
    if r.change_5d_pct is not None:
        parts.append(w["s_5d"].format(v=_pct(r.change_5d_pct)))
    if r.change_1m_pct is not None:
        parts.append(w["s_1m"].format(v=_pct(r.change_1m_pct)))
    head = w["sep_clause"].join(parts)
    tail: list[str] = []
    if r.range_position is not None:
        tail.append(w["s_range"].format(pct=f"{r.range_position * 100:.0f}"))
    if r.rsi14 is not None:
        zone = w["overbought"] if r.rsi14 > 70 else w["oversold"] if r.rsi14 < 30 else \
            w["neutral_rsi"]
        tail.append(w["s_rsi"].format(v=f"{r.rsi14:.1f}", zone=zone))
    if ma := _ma_phrase(r.moving_averages, lg):
        tail.append(ma)
    if r.ict.bias is not None:
        grade = w["s_grade"].format(grade=r.ict.grade) if r.ict.grade else ""
        tail.append(w["s_ict"].format(bias=w[r.ict.bias], grade=grade))
    return head + "".join(w["sep_part"] + p for p in tail) + w["stop"]


def _ma_phrase(mas: Sequence[MovingAverage], lg: Lang) -> str:
    w = words_of("report.", lg)
    groups = {key: [f"MA{m.window}" for m in mas if m.close_is == side]
              for side, key in (("above", "ma_above"), ("below", "ma_below"))}
    said = [w[key].format(mas=listing(names, lg)) for key, names in groups.items() if names]
    return w["sep_clause"].join(said)


_KNOWN_CONSTANTS: Final = (1, 5, 14, 20, 30, 50, 52, 70, 100, 200)
_DATE_RE: Final = re.compile(r"\d{4}-\d{2}-\d{2}")
_NUMBER_RE: Final = re.compile(r"(?<![A-Za-z0-9_.^])\d+(?:,\d{3})*(?:\.\d+)?(?![A-Za-z0-9_])")


def unverified_figures(narrative: str, rows: Sequence[ReportRow]) -> list[str]:
    """Numbers and dates in a model's narrative that no row holds (at the precision written),
    so the report can label them unverified rather than pass them off as computed."""
    dates = {r.as_of.isoformat() for r in rows} | {
        r.source.as_of.isoformat() for r in rows if r.source.as_of}
    found = [d for d in _DATE_RE.findall(narrative) if d not in dates]
    known = _known_numbers(rows)
    codes = {r.symbol for r in rows}
    for token in _NUMBER_RE.findall(_DATE_RE.sub(" ", narrative)):
        if token in codes:
            continue
        value = float(token.replace(",", ""))
        decimals = len(token.split(".", 1)[1]) if "." in token else 0
        half = 0.5 * 10 ** -decimals + 1e-9  # the token may round a known figure
        if not any(abs(abs(k) - value) <= half for k in known):
            found.append(token)
    return list(dict.fromkeys(found))


def _known_numbers(rows: Sequence[ReportRow]) -> list[float]:
    known: list[float] = [float(c) for c in _KNOWN_CONSTANTS]
    for r in rows:
        known += _numbers_in(r.model_dump())
        known += [float(r.as_of.year), float(r.as_of.month), float(r.as_of.day)]
        if r.range_position is not None:
            known.append(r.range_position * 100.0)
    return known


def _numbers_in(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)] if math.isfinite(value) else []
    if isinstance(value, dict):
        return [x for v in value.values() for x in _numbers_in(v)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers_in(v)]
    return []


# --- text ------------------------------------------------------------------------------------


_CURRENCY_SIGN: Final = {"USD": "$", "CNY": "¥", "HKD": "HK$"}


def _money(value: float | None, currency: str, lg: Lang, *, like: float | None = None) -> str:
    """A price with its currency sign (points for an index), with as many decimals as the
    price `like` (a row's close) needs."""
    if value is None:
        return words_of("report.", lg)["na"]
    num = f"{value:,.{price_decimals(like if like is not None else value)}f}"
    if not currency:
        return f"{num} {words_of('report.', lg)['points']}"
    sign = _CURRENCY_SIGN.get(currency)
    return f"{sign}{num}" if sign else f"{num} {currency}"


def _pct(value: float | None, na: str = "n/a") -> str:
    return na if value is None else numbers.pct(value)


def error_line(query: str, exc: BullpenError, lang: str = "en") -> str:
    """One line saying why a symbol is not in the report (with the directory's suggestions)."""
    w = words_of("report.", _lang(lang))
    if isinstance(exc, UnknownSymbol):
        shown = t("grammar.list_sep", lang).join(exc.suggestions[:3])
        hint = w["suggest"].format(s=shown) if exc.suggestions else ""
        return w["unknown"].format(q=query) + hint
    return w["no_data"].format(q=query, error=exc)


def _title(report: Report) -> str:
    w = words_of("report.", report.lang)
    return w["title_date"].format(date=report.data_date) if report.data_date else w["title"]


def _narrative_label(report: Report, fallback_reason: str) -> str:
    w = words_of("report.", report.lang)
    if report.narrative_source == "llm":
        return w["label_llm"]
    return w["label_fallback"].format(why=fallback_reason) if fallback_reason else \
        w["label_template"]


def _ict_line(reading: ICTReading, w: Mapping[str, str], lg: Lang) -> str:
    if reading.bias is None:
        return w["ict_none"].format(error=reading.error or w["na"])
    missing = w["ict_missing"].format(tfs=t("grammar.list_sep", lg).join(reading.missing)) \
        if reading.missing \
        else ""
    return w["ict"].format(bias=w[reading.bias], grade=reading.grade or w["na"],
                           score=reading.score if reading.score is not None else w["na"],
                           missing=missing)


def source_line(source: DataSource, lang: str = "en") -> str:
    """The source and date of a row's figures, labelled as the chat answers label them."""
    w = words_of("report.", _lang(lang))
    return w["source"].format(label=source.label()) + (w["offline_tag"] if source.offline
                                                       else "")


def _row_block(r: ReportRow, lg: Lang) -> str:
    w = words_of("report.", lg)
    label = f"{r.name} ({r.symbol})" if r.name else r.symbol
    pos = f"{r.range_position * 100:.0f}%" if r.range_position is not None else w["na"]
    mas = " · ".join(w["ma_item"].format(side=w[m.close_is], n=m.window)
                     for m in r.moving_averages if m.close_is)
    rsi = w["rsi"].format(v=f"{r.rsi14:.2f}" if r.rsi14 is not None else w["na"])
    return "\n".join([
        w["row_head"].format(label=label, price=_money(r.close, r.currency, lg), date=r.as_of),
        w["changes"].format(d1=_pct(r.change_1d_pct, w["na"]), d5=_pct(r.change_5d_pct, w["na"]),
                            m1=_pct(r.change_1m_pct, w["na"])),
        w["range"].format(low=_money(r.low_52w, r.currency, lg, like=r.close),
                          high=_money(r.high_52w, r.currency, lg, like=r.close), pos=pos),
        rsi + (f" · {mas}" if mas else ""),
        _ict_line(r.ict, w, lg),
        source_line(r.source, lg),
    ])


def render_text(report: Report, *, fallback_reason: str = "") -> str:
    """The report as chat Markdown: title, narrative (labelled), one block per symbol, what
    was not reported, notes."""
    w = words_of("report.", report.lang)
    out = [f"**{_title(report)}**"]
    if any(r.source.offline for r in report.rows):
        out.append(w["offline"])
    out += ["", report.narrative, _narrative_label(report, fallback_reason)]
    for r in report.rows:
        out += ["", _row_block(r, report.lang)]
    if report.errors:
        out += ["", w["not_reported"], *(f"- {e}" for e in report.errors)]
    if report.notes:
        out += ["", w["notes"], *(f"- {n}" for n in report.notes)]
    out += ["", w["disclaimer"]]
    return "\n".join(out)


# --- PDF -------------------------------------------------------------------------------------


def _table_row(r: ReportRow, lg: Lang) -> tuple[str, ...]:
    w = words_of("report.", lg)
    arrows = "/".join({"above": "↑", "below": "↓"}.get(m.close_is or "", "–")
                      for m in r.moving_averages)
    ict_cell = f"{w[r.ict.bias]} ({r.ict.grade or w['na']})" if r.ict.bias else w["na"]
    return (r.symbol, _money(r.close, r.currency, lg), r.as_of.isoformat(),
            *(_pct(v, w["na"]) for v in (r.change_1d_pct, r.change_5d_pct, r.change_1m_pct)),
            f"{r.range_position:.2f}" if r.range_position is not None else w["na"],
            f"{r.rsi14:.1f}" if r.rsi14 is not None else w["na"], arrows, ict_cell)


def render_pdf(report: Report, *, fallback_reason: str = "") -> bytes:
    """The report as PDF bytes (fpdf2, the CJK font the charts use). Pure and synchronous."""
    from fpdf.fonts import FontFace

    from tools.pdf import new_fpdf

    w = words_of("report.", report.lang)
    pdf = new_fpdf()
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.set_title(_title(report))
    pdf.add_page()

    def heading(text: str, size: int = 13) -> None:
        pdf.ln(2)
        pdf.set_font("cjk", "", size)
        pdf.multi_cell(0, size * 0.55, text, align="L", new_x="LMARGIN", new_y="NEXT")

    def para(text: str, size: int = 10) -> None:
        pdf.set_font("cjk", "", size)
        plain = text.replace("**", "").strip().strip("_")  # Markdown bold and italics
        pdf.multi_cell(0, 5.2, plain, align="L", new_x="LMARGIN", new_y="NEXT")

    heading(_title(report), 16)
    if any(r.source.offline for r in report.rows):
        para(w["offline"], 9)
    if report.rows:
        pdf.set_font("cjk", "", 8)
        head = (w["h_symbol"], w["h_close"], w["h_date"], "1D", "5D", "1M", w["h_52w"], "RSI",
                w["h_ma"], w["h_ict"])
        style = FontFace(fill_color=(235, 238, 245))
        with pdf.table(col_widths=(20, 22, 21, 16, 16, 16, 15, 13, 22, 29), text_align="LEFT",
                       headings_style=style, line_height=5.0) as table:
            for values in (head, *(_table_row(r, report.lang) for r in report.rows)):
                cells = table.row()
                for value in values:
                    cells.cell(value)
        pdf.ln(2)
    if report.chart is not None:
        pdf.image(io.BytesIO(report.chart.data), w=pdf.epw)
    heading(w["h_narrative"])
    para(report.narrative)
    para(_narrative_label(report, fallback_reason), 8)
    if report.errors:
        heading(w["not_reported"].replace("*", ""))
        for e in report.errors:
            para(f"- {e}", 9)
    if report.notes:
        heading(w["notes"].replace("*", ""))
        for n in report.notes:
            para(f"- {n}", 9)
    if report.rows:
        heading(w["h_sources"])
        for r in report.rows:
            tag = w["offline_tag"] if r.source.offline else ""
            para(f"- {r.symbol}: {r.source.label()}{tag}", 8)
    para(w["disclaimer"], 8)
    return bytes(pdf.output())
