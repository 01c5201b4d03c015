"""The `ict_analyze` tool: the ICT reading of a symbol's bars, the Daily/4H/15m/5m/1m bias stack
when asked, a deterministic plan proposal and the annotated chart.

Bars come from the data layer (`load_bars`); each timeframe is built from the source interval
the timeframe table names (4H from hourly, weekly from daily ...). When that source is missing
(the offline snapshot holds no 1-minute bars) the provider's own bars at the analysis interval
are used, and a timeframe with no data at all is reported as such, never invented.

`run_ict` is the deterministic core (the CLI uses it); `enforced_interval` pins the interval a
model asks for to the interval the user's chat is set to.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, Final, Literal

import pandas as pd
from pydantic import BaseModel, Field

import ict
from core.context import current, emit_file, emit_status
from core.errors import BullpenError, DataUnavailable, InvalidArguments
from core.types import OutgoingFile
from core.words import t
from ict import BiasStack, Enforcement, ICTAnalysis, ICTInputError, Timeframe, TradePlan
from ict.timeframes import INTERVAL_MINUTES
from ict.types import SessionTemplate
from tools.market import load_bars, source_from
from tools.models import DataSource, tool
from tools.symbol_lookup import resolve_symbol
from tools.ticks import plan_on_tick, tick_size

log = logging.getLogger(__name__)

Bias = Literal["bullish", "bearish", "neutral"]

# ict interval name -> the data layer's name for the same bar size
DATA_INTERVAL: Final[dict[str, str]] = {
    "1min": "1m", "5min": "5m", "15min": "15m", "30min": "30m", "60min": "1h", "4h": "4h",
    "daily": "1d", "weekly": "1w", "monthly": "1mo",
}
_CURRENCY: Final = {"cn": "CNY", "hk": "HKD"}
_LONG: Final = ("daily", "weekly", "monthly")
UNITS: Final = (
    "prices in {currency} (per unit; FX in the quote currency); times are ISO-8601 bar open "
    "times; displacement = confirming body / mean body of the previous bars (x); pd_percent = "
    "percent of the dealing range (0 = low, 100 = high); average_range in price units; "
    "score 0-100"
)


# --- timeframe enforcement -------------------------------------------------------------------


def ict_interval(interval: str) -> str:
    """The analyzer's interval name (`1h` -> `60min`); InvalidArguments when unknown."""
    try:
        return ict.normalize_interval(interval)
    except ICTInputError as exc:
        raise InvalidArguments(str(exc)) from exc


def chat_timeframe(setting: str) -> Timeframe:
    """The timeframe row a chat setting names: a UI key (1H, 4H, 1D, 3M) or an interval."""
    try:
        return ict.get_timeframe(setting)
    except ICTInputError:
        return ict.timeframe_for_interval(ict_interval(setting))


def enforced_interval(
    requested: str | None, chat_interval: str | None, *, requested_lookback: int | None = None
) -> Enforcement:
    """What to analyse when a model asks for `requested` in a chat set to `chat_interval`.

    The chat's timeframe row wins (interval and lookback); overrides are logged and listed in
    the returned `notes`. With no chat setting the requested interval's row applies.
    """
    setting = chat_interval or requested
    if not setting:
        raise InvalidArguments("no interval requested and none set for this chat")
    enforcement = ict.enforce_timeframe(chat_timeframe(setting).key,
                                        requested_interval=requested,
                                        requested_lookback=requested_lookback)
    if requested is not None and enforcement.interval != _maybe_interval(requested):
        log.warning("ict_analyze: interval %r overridden with %r (chat set to %s)", requested,
                    enforcement.interval, enforcement.timeframe.key)
    return enforcement


def _pin_to_chat(requested: str, lookback: int | None,
                 chat: str) -> tuple[str, int | None, list[str]]:
    """The interval and lookback to analyse in a chat set to `chat`, and the override notes.

    A table row (1H, 4H, 1d, ...) pins both; an interval without a row of its own (30m) pins the
    interval only; a setting the analyzer does not know is ignored with a note.
    """
    try:
        enf = enforced_interval(requested, chat, requested_lookback=lookback)
    except InvalidArguments:
        return requested, lookback, [f"the chat's timeframe {chat!r} is unknown; {requested} "
                                     "analysed as asked"]
    wanted = _maybe_interval(chat)
    if wanted in ict.INTERVALS and wanted != enf.interval:  # no row of its own
        if _maybe_interval(requested) == wanted:
            return requested, lookback, []
        log.warning("ict_analyze: interval %r overridden with %r (chat set to %s)", requested,
                    wanted, chat)
        return wanted, lookback, [f"timeframe enforced: interval {requested!r} overridden with "
                                  f"{wanted!r}"]
    return enf.interval, enf.lookback_bars, [f"timeframe enforced: {n}" for n in enf.notes
                                             if "overridden" in n]


def _maybe_interval(text: str) -> str:
    try:
        return ict.normalize_interval(text)
    except ICTInputError:
        return text


# --- loading bars ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """Bars at one analysis interval and how they were obtained."""

    interval: str
    bars: pd.DataFrame
    source_interval: str
    note: str = ""


async def load_frame(symbol: str, interval: str, lookback: int, *,
                     end: datetime | None = None) -> Frame:
    """Bars of `symbol` at `interval` (ict name), built from the table's source interval.

    Loads enough source bars for `lookback` analysis bars plus a partial first and a forming
    last one. Falls back to the provider's bars at `interval` when the source is missing or
    shorter; raises DataUnavailable when neither exists.
    """
    row = ict.timeframe_for_interval(interval)
    source = row.source_interval if row.interval == interval else interval
    need = lookback + 2
    best: Frame | None = None
    reason = ""
    if source != interval:
        ratio = max(1, INTERVAL_MINUTES[interval] // INTERVAL_MINUTES[source])
        try:
            raw = await load_bars(symbol, DATA_INTERVAL[source], need * ratio, end=end)
            best = Frame(interval, _resample(raw, interval), source)
        except DataUnavailable as exc:
            reason = f"no {source} source bars ({exc})"
        if best is not None and len(best.bars) >= need:
            return best
    try:
        direct = await load_bars(symbol, DATA_INTERVAL[interval], need, end=end)
    except DataUnavailable:
        if best is not None:
            return Frame(interval, best.bars, source,
                         f"only {len(best.bars)} bars from {source} source bars")
        raise
    if best is not None and len(best.bars) >= len(direct):
        return best
    note = f"{reason or f'{source} source bars too short'}; used the provider's {interval} bars"
    return Frame(interval, direct, interval, note if source != interval else "")


def _resample(bars: pd.DataFrame, interval: str) -> pd.DataFrame:
    try:
        return ict.resample(bars, interval)
    except ICTInputError as exc:
        raise DataUnavailable(f"cannot build {interval} bars: {exc}",
                              provider=str(bars.attrs.get("provider", ""))) from exc


# --- the deterministic run -------------------------------------------------------------------


@dataclass
class StackRun:
    stack: BiasStack
    analyses: dict[str, ICTAnalysis]
    frames: dict[str, Frame]
    missing: dict[str, str]  # interval -> why it has no analysis


@dataclass
class ICTRun:
    """Everything one analysis produced: the bars, the analysis, the stack, where data came
    from, and notes on what was overridden or left out."""

    symbol: str
    name: str
    currency: str
    timeframe: Timeframe
    lookback: int
    frame: Frame
    analysis: ICTAnalysis
    source: DataSource
    as_of: datetime
    stack: StackRun | None = None
    notes: list[str] = field(default_factory=list)
    tick: float | None = None  # the instrument's price step: plans are put on it
    market: str = ""  # "cn", "us", ...: its sessions and its chart's colours follow it

    @property
    def bias(self) -> Bias:
        """The stack's bias when its 15m setter was analysed, else the timeframe's own."""
        if self.stack is not None and "15min" in self.stack.analyses:
            return self.stack.stack.bias
        return self.analysis.structure.bias

    def proposal(self) -> ict.PlanProposal:
        """The deterministic plan (computed in code) for this analysis."""
        stack = self.stack.stack if self.stack and "15min" in self.stack.analyses else None
        p = ict.propose_plan(self.analysis, stack=stack, timeframe=self.timeframe.key)
        if p.plan is None:
            return p
        return dataclasses.replace(p, plan=plan_on_tick(p.plan, self.tick))


def _analyze(frame: Frame, *, symbol: str, lookback: int, session: SessionTemplate,
             include_current_bar: bool, as_of: datetime,
             options: Mapping[str, Any] | None = None) -> ICTAnalysis:
    opts: dict[str, Any] = {**(options or {}), "symbol": symbol, "lookback_bars": lookback,
                            "include_current_bar": include_current_bar, "as_of": as_of}
    try:
        return ict.analyze(frame.bars, interval=frame.interval, session=session, options=opts)
    except ICTInputError as exc:
        raise DataUnavailable(f"{symbol} {frame.interval} bars cannot be analysed: {exc}",
                              provider=str(frame.bars.attrs.get("provider", ""))) from exc


def _stale_after(interval: str) -> timedelta:
    """How long before the analysed time a timeframe's data may end and still count."""
    return max(timedelta(minutes=5 * INTERVAL_MINUTES[interval]), timedelta(days=4))


async def _run_stack(symbol: str, *, anchor: datetime, session: SessionTemplate,
                     include_current_bar: bool) -> StackRun:
    frames: dict[str, Frame] = {}
    analyses: dict[str, ICTAnalysis] = {}
    missing: dict[str, str] = {}
    for iv in ict.STACK_ORDER:
        lookback = ict.timeframe_for_interval(iv).lookback_bars
        try:
            frame = await load_frame(symbol, iv, lookback, end=anchor)
        except DataUnavailable as exc:
            missing[iv] = f"no {iv} data: {exc}"
            continue
        if frame.bars.empty:
            missing[iv] = f"no {iv} bars before {anchor.isoformat()}"
            continue
        ends = ict.bar_end(pd.Timestamp(frame.bars.index[-1]), iv)
        if ends < pd.Timestamp(anchor) - _stale_after(iv):
            missing[iv] = (f"{iv} data ends {frame.bars.index[-1].isoformat()}, before the "
                           f"analysed time {anchor.isoformat()}")
            continue
        try:
            analyses[iv] = _analyze(frame, symbol=symbol, lookback=lookback, session=session,
                                    include_current_bar=include_current_bar, as_of=anchor)
        except DataUnavailable as exc:
            missing[iv] = str(exc)
            continue
        frames[iv] = frame
    stack = ict.bias_stack(analyses, session=session, as_of=anchor)
    return StackRun(stack, analyses, frames, missing)


async def run_ict(
    symbol: str,
    interval: str = "1h",
    *,
    lookback: int | None = None,
    session: Literal["NY", "LDN"] = "NY",
    include_current_bar: bool = False,
    stack: bool = False,
    options: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> ICTRun:
    """Load bars and analyse them; with `stack`, also the five bias-stack timeframes, all as
    of the analysed timeframe's last bar (never later than `now`, default the clock)."""
    iv = ict_interval(interval)
    row = ict.timeframe_for_interval(iv)
    bars_wanted = lookback or row.lookback_bars
    clock = now or datetime.now(UTC)
    frame = await load_frame(symbol, iv, bars_wanted, end=clock)
    if frame.bars.empty:
        raise DataUnavailable(f"no {iv} bars for {symbol}")
    market = _market(str(frame.bars.attrs.get("symbol", symbol)))
    template = ict.template_for(market, session)  # an A-share keeps its exchange's sessions
    analysis = _analyze(frame, symbol=str(frame.bars.attrs.get("symbol", symbol)),
                        lookback=bars_wanted, session=template,
                        include_current_bar=include_current_bar, as_of=clock, options=options)
    attrs = frame.bars.attrs
    code = str(attrs.get("symbol", symbol))
    notes = [frame.note] if frame.note else []
    if row.interval != iv:
        notes.append(f"{iv} is not in the timeframe table; the {row.key} row's horizon applies")
    notes += list(analysis.meta.warnings)
    run = ICTRun(symbol=code, name=str(attrs.get("name", "")), currency=_currency(code),
                 timeframe=row, lookback=bars_wanted, frame=frame, analysis=analysis,
                 source=source_from(frame.bars), as_of=clock, notes=notes,
                 tick=_tick(code, float(analysis.meta.last_bar.close)), market=market)
    if stack:
        last_end = ict.bar_end(pd.Timestamp(frame.bars.index[-1]), iv).to_pydatetime()
        anchor = min(clock, last_end)
        run.stack = await _run_stack(code, anchor=anchor, session=template,
                                     include_current_bar=include_current_bar)
    return run


def _tick(code: str, price: float) -> float | None:
    try:
        sym = resolve_symbol(code)
    except BullpenError:
        return None
    return tick_size(sym.market, sym.kind, price)


def _market(code: str) -> str:
    try:
        return str(resolve_symbol(code).market)
    except BullpenError:
        return ""


def _currency(code: str) -> str:
    market = _market(code)
    return _CURRENCY.get(market, "USD") if market else ""


# --- the tool result -------------------------------------------------------------------------


def compact(value: Any, digits: int = 6) -> Any:
    """A JSON digest without bar positions (`*_index`; every one has a time beside it) and
    with floats cut to `digits` significant digits."""
    if isinstance(value, float):
        if value == 0 or not math.isfinite(value):
            return value
        return round(value, digits - 1 - math.floor(math.log10(abs(value))))
    if isinstance(value, dict):
        return {k: compact(v, digits) for k, v in value.items()
                if not (k == "index" or k.endswith("_index"))}
    if isinstance(value, list):
        return [compact(v, digits) for v in value]
    return value


class StackTimeframe(BaseModel):
    interval: str
    available: bool
    bars: int = 0
    source_interval: str = ""
    bias: Bias | None = None
    last_bar: datetime | None = None
    note: str = ""


class ICTStack(BaseModel):
    """The Daily -> 4H -> 15m -> 5m -> 1m grade (missing timeframes fail their checks)."""

    bias: Bias = Field(description="intraday bias set by the 15m chart")
    grade: Literal["A", "B", "C"]
    score: int = Field(description="0-100")
    status: Literal["wait", "ready"]
    wait_reason: str | None = None
    counter_trend: bool
    session_fit: str
    detail: dict[str, Any] = Field(description="checklist, rationale, HTF draw, entry zone, MSS")
    timeframes: list[StackTimeframe]


class PlanOut(BaseModel):
    """A validated trade plan; prices in the symbol's currency, R:R from the first target."""

    timeframe: str
    horizon: str
    strategy: str
    direction: Literal["long", "short"]
    entry: float
    stop: float
    targets: list[float]
    confluence: list[str]
    reward_risk: float
    risk_per_unit: float
    risk_percent: float | None = None
    risk_notes: str = ""

    @classmethod
    def of(cls, plan: TradePlan, *, tick: float | None = None) -> PlanOut:
        """The plan as the tools give it, its prices on `tick` (`tools.ticks.plan_on_tick`)."""
        plan = plan_on_tick(plan, tick)
        r = compact(plan.to_dict())
        return cls(timeframe=plan.timeframe, horizon=plan.horizon, strategy=plan.strategy,
                   direction=plan.direction, entry=r["entry"], stop=r["stop"],
                   targets=r["targets"], confluence=list(plan.confluence),
                   reward_risk=round(plan.risk.reward_risk, 2),
                   risk_per_unit=r["risk"]["risk_per_unit"],
                   risk_percent=plan.risk.risk_percent, risk_notes=plan.risk.notes)


class PlanProposalOut(BaseModel):
    status: Literal["plan", "wait"]
    reason: str | None = None
    plan: PlanOut | None = None


class ICTResult(BaseModel):
    """ICT analysis of one symbol at one timeframe (a digest: the latest events and what is live
    as of the last closed bar, with totals), optionally the bias stack and a proposed plan."""

    symbol: str
    name: str = ""
    currency: str
    timeframe: str = Field(description="timeframe table key, e.g. 1H, 4H, 1D")
    horizon: str
    interval: str
    source_interval: str = Field(description="bar size the bars were built from")
    lookback_bars: int
    bars: int = Field(description="bars analysed")
    last_bar_time: datetime
    last_close: float
    bias: Bias = Field(description="stack bias when the stack has its 15m, else this chart's")
    units: str
    analysis: dict[str, Any]
    stack: ICTStack | None = None
    proposal: PlanProposalOut | None = None
    tick_size: float | None = Field(default=None, description="the instrument's price step; "
                                    "plan prices are multiples of it")
    chart: str = Field(default="", description="file name of the chart sent to the chat")
    notes: list[str] = Field(default_factory=list)
    source: DataSource


def stack_out(run: StackRun) -> ICTStack:
    s = run.stack
    timeframes = []
    for iv in ict.STACK_ORDER:
        a = run.analyses.get(iv)
        if a is None:
            timeframes.append(StackTimeframe(interval=iv, available=False,
                                             note=run.missing.get(iv, "")))
            continue
        f = run.frames[iv]
        timeframes.append(StackTimeframe(interval=iv, available=True, bars=a.meta.bars,
                                         source_interval=f.source_interval,
                                         bias=a.structure.bias, last_bar=a.meta.last_bar.time,
                                         note=f.note))
    detail = compact(s.to_dict())
    for key in ("bias", "grade", "score", "status", "wait_reason", "counter_trend",
                "session_fit"):
        detail.pop(key, None)
    return ICTStack(bias=s.bias, grade=s.grade, score=s.score, status=s.status,
                    wait_reason=s.wait_reason, counter_trend=s.counter_trend,
                    session_fit=s.session_fit, detail=detail, timeframes=timeframes)


def proposal_out(run: ICTRun) -> PlanProposalOut:
    p = run.proposal()
    if p.plan is None:
        return PlanProposalOut(status="wait", reason=p.reason)
    return PlanProposalOut(status="plan", plan=PlanOut.of(p.plan, tick=run.tick))


def result_of(run: ICTRun, *, plan: bool = False, digest_limit: int = 5) -> ICTResult:
    """The tool's typed result for a run (compact: a few kB, not the full analysis)."""
    a = run.analysis
    meta = a.meta
    return ICTResult(
        symbol=run.symbol, name=run.name, currency=run.currency,
        timeframe=run.timeframe.key, horizon=run.timeframe.horizon, interval=meta.interval,
        source_interval=run.frame.source_interval,
        lookback_bars=run.lookback, bars=meta.bars,
        last_bar_time=meta.last_bar.time, last_close=compact(meta.last_bar.close),
        bias=run.bias, units=UNITS.format(currency=run.currency),
        analysis=compact(a.brief(limit=digest_limit)),
        stack=stack_out(run.stack) if run.stack is not None else None,
        proposal=proposal_out(run) if plan else None,
        notes=list(run.notes), source=run.source, tick_size=run.tick,
    )


async def chart_file(run: ICTRun) -> OutgoingFile:
    """The annotated chart of a run as a PNG attachment."""
    from tools.ict_chart import render_ict_chart  # matplotlib: loaded by the first chart

    label = f"{run.name} ({run.symbol})" if run.name else run.symbol
    title = f"{label} · {run.timeframe.key} · ICT"
    png = await asyncio.to_thread(render_ict_chart, run.frame.bars, run.analysis, title=title,
                                  market=run.market, lang=current().lang)
    as_of = run.source.as_of.isoformat() if run.source.as_of else ""
    return OutgoingFile(kind="image", filename=f"ict_{run.symbol}_{run.analysis.meta.interval}"
                        ".png", data=png, mime_type="image/png",
                        caption=f"{title} · {run.source.provider} {as_of}".strip())


@tool(label="ICT analysis of {symbol} ({interval})", tags=["market", "ict", "chart"])
async def ict_analyze(
    symbol: str,
    interval: str = "1h",
    lookback: Annotated[int | None, Field(ge=5, le=5000)] = None,
    session: Literal["NY", "LDN"] = "NY",
    include_current_bar: bool = False,
    stack: bool = False,
    chart: bool = False,
    plan: bool = False,
) -> ICTResult:
    """Deterministic ICT / smart-money analysis: BOS/ChoCH structure and bias, order blocks,
    fair value gaps, liquidity, dealing range (premium/discount), kill zones, previous day/week
    levels. Call it before discussing any of these; cite its data date.

    Args:
        symbol: code, ticker or name, e.g. "NVDA", "EURUSD", "BTC-USD", "600519".
        interval: bar size: 1m, 5m, 15m, 30m, 1h, 4h, 1d, 1w, 1mo (a timeframe the chat set
            overrides it, and the lookback, as the result's notes say).
        lookback: bars to analyse (5-5000); default from the timeframe table.
        session: kill-zone template: NY or LDN (A-shares use their exchange's sessions).
        include_current_bar: keep the still-forming last bar (may be incomplete).
        stack: add the Daily/4H/15m/5m/1m bias stack (grade, checklist, wait reason).
        chart: send the annotated chart to the chat as an image.
        plan: add the deterministic trade plan proposed from the analysis.
    """
    overrides: list[str] = []
    if chat_interval := current().interval:  # the chat's timeframe wins
        interval, lookback, overrides = _pin_to_chat(interval, lookback, chat_interval)
    run = await run_ict(symbol, interval, lookback=lookback, session=session,
                        include_current_bar=include_current_bar, stack=stack)
    result = result_of(run, plan=plan)
    result.notes.extend(overrides)
    if chart:
        emit_status(t("ict.status_chart", current().lang, code=run.symbol))
        try:
            file = await chart_file(run)
        except ValueError as exc:  # bars and analysis disagree: report, keep the analysis
            result.notes.append(f"chart not drawn: {exc}")
        else:
            emit_file(file)
            result.chart = file.filename
    return result
