"""`DebateMode`: the Mode protocol over both panels, the offline experts, reports and reuse.

A message names a security (and optionally a question, `fresh`, `bull_bear`); `Turn.options`
(`TurnOptions`) may carry `symbol`, `question`, `panel`, `fresh` and `max_rounds` instead. The
debate runs in one owned task whose events stream out as they happen ("Round 1 - Risk: SELL
0.62"); then the PDF goes out as a File and the conclusion as Done. A stored report younger
than five days for the same ticker, panel and question is sent again unless a fresh one is
asked for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

import asyncpg

from core import words
from core.agent.modes import ModeDecl, ModeNeeds
from core.agent.turn import Panel, Turn, TurnOptions
from core.errors import DataUnavailable, InputError, UnknownSymbol
from core.events import Done, Event, Failed, File, Status, TextDelta
from core.llm.pace import expected_seconds
from core.ports import LLMProvider, Mode
from core.tools import ToolRegistry
from core.types import ChatMessage, OutgoingFile, Usage
from core.words import t
from debate import offline as offline_panel
from debate.budget import (
    MAX_RUN_S,
    TURN_MAX_TOKENS,
    TURN_PROMPT_TOKENS,
    Budget,
    pace_plan,
)
from debate.bull_bear import BullBearPanel
from debate.engine import (
    DebateFailed,
    Emit,
    Engine,
    Limits,
    PanelResult,
    Profiles,
    UsageSink,
    debate_tools,
)
from debate.evidence import (
    STALE_CONFIDENCE_FACTOR,
    BarsLoader,
    Evidence,
    default_bars,
    gather_evidence,
    qualified,
    require_data,
    stale_sentence,
)
from debate.experts import BudgetTooSmall, ExpertsPanel, progress_line
from debate.models import (
    BullBearOutput,
    Conclusion,
    DebateArtifact,
    DebateMeta,
    TickerDebateOutput,
)
from debate.report import (
    pdf_caption,
    pdf_filename,
    render_chart,
    render_markdown,
    render_pdf,
    summary_markdown,
)
from debate.store import DebateReportStore, StoredReport
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol
from tools.symbols.sources import reader_name

log = logging.getLogger(__name__)

# model turns a round takes, one after another on a local server (the closing: judge, summary)
TURNS_PER_ROUND: dict[str, int] = {"experts": 5, "bull_bear": 2}

DEFAULT_BUDGET_TOKENS = 200_000
_FRESH = re.compile(r"(?:^|\s)(?:--fresh|fresh|重新|最新报告)(?=\s|$)", re.IGNORECASE)
_PANEL = re.compile(r"(?:^|\s)(?:--panel[= ]\s*)?(bull_bear|bull-bear|bullbear|多空|experts)"
                    r"(?=\s|$)", re.IGNORECASE)
_ROUNDS = re.compile(r"(?:^|\s)--max-rounds[= ]\s*(\d+)(?=\s|$)")


@dataclass(frozen=True)
class DebateRequest:
    symbol: str
    question: str = ""
    panel: Panel | None = None
    fresh: bool = False
    max_rounds: int | None = None


def parse_request(text: str, options: TurnOptions | None = None) -> DebateRequest:
    """Flags (`fresh`, `bull_bear`, `--max-rounds N`) out of the text; options win."""
    opts = options or TurnOptions()
    body = text
    fresh = bool(_FRESH.search(body))
    body = _FRESH.sub(" ", body)
    panel: Panel | None = None
    if m := _PANEL.search(body):
        panel = "experts" if m.group(1).lower() == "experts" else "bull_bear"
        body = _PANEL.sub(" ", body, count=1)
    rounds = int(m.group(1)) if (m := _ROUNDS.search(body)) else None
    body = " ".join(_ROUNDS.sub(" ", body).split())
    symbol = opts.symbol or ""
    question = opts.question or ""
    if not symbol:
        head, _, rest = body.partition(" ")
        symbol, question = (head, question or rest) if head else ("", question)
    elif not question:
        question = body
    if opts.panel is not None:
        panel = opts.panel
    return DebateRequest(
        symbol=symbol.strip(), question=question.strip(), panel=panel,
        fresh=fresh or opts.fresh,
        max_rounds=opts.max_rounds if opts.max_rounds is not None else rounds)


def _directory_symbols(text: str) -> list[str]:
    """The instruments a sentence names, read as every mode reads them
    (`analyst.instruments`): "Nvidea" is NVDA, 上证指数 is 000001.SH (never 平安银行)."""
    try:
        from analyst.instruments import find_instruments
        from tools.symbols import default_directory
    except ImportError:
        return []
    return [i.symbol for i in find_instruments(text, default_directory())]


def apply_input_limits(artifact: DebateArtifact, evidence: Evidence, lang: str) -> None:
    """Whatever panel ran, fundamentals much older than the price lower the conclusion's
    confidence; past the limit its BUY/SELL becomes HOLD (insufficient data), with the
    sentence saying why first and the panel's own reading kept after it."""
    stale = stale_sentence(evidence, lang)
    if stale is None:
        return
    withheld, sentence = stale
    c = artifact.conclusion
    update: dict[str, object] = {"caveats": [*c.caveats, sentence]}
    if withheld and c.action != "HOLD":
        said = t("debate.panel_said", lang, action=c.action)
        update |= {"action": "HOLD", "confidence": 0.0, "consensus": False, "withheld": True,
                   "text": t("grammar.sentence_sep", lang).join((sentence, said, c.text))}
    else:  # a HOLD past the limit, or fundamentals stale but within it
        update |= {"confidence": round(c.confidence * STALE_CONFIDENCE_FACTOR, 2)}
    new: Conclusion = c.model_copy(update=update)
    if artifact.experts is not None:
        artifact.experts.conclusion = new
    elif artifact.bull_bear is not None:
        artifact.bull_bear.conclusion = new


@dataclass
class DebateOutcome:
    artifact: DebateArtifact
    markdown: str
    pdf: bytes | None
    reused_from: datetime | None = None


@dataclass
class _End:
    value: DebateOutcome


async def _drive(work: Callable[[Emit], Awaitable[DebateOutcome]]
                 ) -> AsyncGenerator[Event | _End]:
    """Run `work` as an owned task and yield the events it emits as they come."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()

    async def body() -> DebateOutcome:
        try:
            return await work(queue.put_nowait)
        finally:
            queue.put_nowait(None)

    task = asyncio.create_task(body(), name="debate")
    try:
        while (item := await queue.get()) is not None:
            yield item
        yield _End(await task)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class DebateMode:
    """Debate mode: `experts` (seed 001) or `bull_bear` (seed 000) panels.

    `llm=None` runs the offline experts (deterministic, labelled). `pool` (asyncpg) enables
    report reuse; `budget_tokens=None` means no budget.
    """

    name = "debate"

    def __init__(
        self, *, llm: LLMProvider | None, registry: ToolRegistry | None,
        budget_tokens: int | None = DEFAULT_BUDGET_TOKENS, panel: Panel = "experts",
        max_rounds: int = 3, min_rounds: int = 2, consensus_confidence: float = 0.7,
        tool_rounds: int = 3, turn_timeout_s: float = 180.0, json_mode: bool = False,
        profiles: Profiles | None = None, pool: Any | None = None,
        bars_loader: BarsLoader = default_bars, today: Callable[[], date] = date.today,
        find_symbols: Callable[[str], list[str]] | None = None, seed: int | None = None,
        make_pdf: bool = True,
    ) -> None:
        self._llm = llm
        self._registry = registry
        self._tools = debate_tools(registry)
        self.budget_tokens = budget_tokens
        self.panel = panel
        self.limits = Limits(min_rounds=min_rounds, max_rounds=max(max_rounds, min_rounds),
                             tool_rounds=min(tool_rounds, 3),
                             consensus_confidence=consensus_confidence,
                             turn_timeout_s=turn_timeout_s, json_mode=json_mode)
        self.profiles = profiles or Profiles()
        self.store = DebateReportStore(pool) if pool is not None else None
        self._bars = bars_loader
        self._today = today
        self._find = find_symbols or _directory_symbols
        self._rng = random.Random(seed)
        self._make_pdf = make_pdf

    # --- the Mode protocol ----------------------------------------------------------------

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        request = parse_request(turn.text, turn.options)
        outcome: DebateOutcome | None = None
        stream = _drive(lambda emit: self.produce(
            request, lang=turn.lang, emit=emit, on_usage=turn.recorder.usage,
            user_id=turn.user_id, conversation_id=turn.conversation_id))
        try:
            async with contextlib.aclosing(stream):  # closing the run cancels the debate
                async for item in stream:
                    if isinstance(item, _End):
                        outcome = item.value
                    else:
                        yield item
        except UnknownSymbol as exc:
            hint = words.t("debate.did_you_mean", turn.lang, names=words.t(
                "grammar.list_sep", turn.lang).join(exc.suggestions)) if exc.suggestions else ""
            yield Failed(error=words.t("debate.unknown_symbol", turn.lang, query=exc.query,
                                       hint=hint), kind="input")
            return
        except DebateFailed as exc:
            yield Failed(error=str(exc), kind="llm")
            return
        except (BudgetTooSmall, InputError) as exc:
            yield Failed(error=str(exc), kind="input")
            return
        except DataUnavailable as exc:  # one sentence in the user's language (require_data)
            yield Failed(error=str(exc), kind="error")
            return
        assert outcome is not None
        art = outcome.artifact
        if outcome.pdf:
            yield File(file=OutgoingFile(
                kind="document", filename=pdf_filename(art), data=outcome.pdf,
                mime_type="application/pdf", caption=pdf_caption(art)))
        text = summary_markdown(art)
        labels = [art.meta.label] if art.meta.label else []
        if art.conclusion.missing:
            labels.append(words.t("debate.partial", turn.lang, n=len(art.conclusion.missing)))
        if outcome.reused_from is not None:
            labels.append(words.t("debate.reused", turn.lang,
                                  when=f"{outcome.reused_from:%Y-%m-%d %H:%M}"))
        label = words.t("grammar.clause_sep", turn.lang).join(labels)
        await turn.recorder.message(ChatMessage(role="assistant", content=text))
        yield Done(text=text, label=label)

    # --- the work -------------------------------------------------------------------------

    def resolve(self, request: DebateRequest, lang: str = "en") -> tuple[ResolvedSymbol, str]:
        """The security a request names and the question left around it; UnknownSymbol
        (with suggestions) when none. A leading plain word ("Is NVDA a buy?") is not taken
        for a ticker: the sentence is searched for a security first."""
        head = request.symbol
        if not head:
            raise InputError(words.t("debate.name_one", lang))
        coded = (head.isupper() or head[:1].isdigit() or not head.isascii()
                 or head.startswith(("$", "^")) or any(c in head for c in ".-"))
        first: UnknownSymbol | None = None
        if coded:
            try:
                return resolve_symbol(head), request.question
            except UnknownSymbol as exc:
                first = exc
        sentence = f"{head} {request.question}".strip()
        for code in self._find(sentence):
            with contextlib.suppress(UnknownSymbol):
                found = resolve_symbol(code)
                # one Latin word that named the security ("Nvidea", "nvda") leaves no
                # question; a Chinese sentence has no spaces and stays the question
                alone = sentence.isascii() and len(sentence.split()) == 1
                return found, "" if alone else sentence
        if first is not None:
            raise first
        return resolve_symbol(head), request.question

    async def produce(self, request: DebateRequest, *, lang: str = "en",
                      emit: Emit | None = None, on_usage: UsageSink | None = None,
                      user_id: Any = None, conversation_id: Any = None) -> DebateOutcome:
        """Resolve, reuse or debate, render the report and store it. Raises UnknownSymbol,
        InputError, BudgetTooSmall or DataUnavailable for inputs it cannot debate, and
        DebateFailed (nothing rendered or stored) when the models could not answer."""
        sink: Emit = emit or (lambda _e: None)
        # a cold symbols directory takes seconds to build: keep it off the event loop
        symbol, question = await asyncio.to_thread(self.resolve, request, lang)
        symbol = await asyncio.to_thread(qualified, symbol)  # 000001.SH is not 000001
        request = replace(request, question=question)
        panel = request.panel or self.panel
        offline = self._llm is None
        if self.store is not None and not request.fresh:
            try:
                found = await self.store.find_recent(ticker=symbol.code, panel=panel,
                                                     question=request.question, lang=lang,
                                                     offline=offline)
            except (asyncpg.PostgresError, OSError, ValueError) as exc:
                log.warning("debate report lookup failed, debating afresh: %s", exc)
                found = None
            if found is not None:
                return self._reused(found, sink, lang)
        sink(Status(text=words.t("debate.gathering", lang,
                                 name=reader_name(symbol.code, symbol.name, lang) or symbol.code)))
        evidence = await gather_evidence(symbol, bars_loader=self._bars,
                                         registry=self._registry, lang=lang)
        require_data(evidence, lang)
        limits = self.limits
        if request.max_rounds is not None:
            limits = replace(limits, max_rounds=max(request.max_rounds, limits.min_rounds))
        if offline:
            artifact = self._offline(evidence, panel, request.question, lang, limits, sink)
        else:
            limits = self._paced(limits, panel, lang, sink)
            artifact = await self._llm_debate(evidence, panel, request.question, lang, limits,
                                              sink, on_usage)
        apply_input_limits(artifact, evidence, lang)
        markdown = render_markdown(artifact)
        pdf = await asyncio.to_thread(self._pdf, artifact, evidence) if self._make_pdf else None
        if self.store is not None:
            try:
                await self.store.save(artifact, markdown=markdown, pdf=pdf, user_id=user_id,
                                      conversation_id=conversation_id)
            except (asyncpg.PostgresError, OSError) as exc:  # the answer still goes out
                log.warning("debate report not stored: %s", exc)
        return DebateOutcome(artifact=artifact, markdown=markdown, pdf=pdf)

    def _paced(self, limits: Limits, panel: Panel, lang: str, sink: Emit) -> Limits:
        """Fewer rounds and longer turn limits for a slow model (its measured pace), or
        DebateFailed up front, with the estimate, when even one round would take too long."""
        turn_s = expected_seconds(self._llm, "expert", TURN_PROMPT_TOKENS, TURN_MAX_TOKENS)
        plan = pace_plan(turn_s, turns_per_round=TURNS_PER_ROUND[panel], closing_turns=2,
                         max_rounds=limits.max_rounds, turn_timeout_s=limits.turn_timeout_s)
        if plan.turn_s is None or plan.total_s is None:
            return limits
        said = {"turn_s": f"{plan.turn_s:.0f}", "total_min": f"{plan.total_s / 60:.0f}"}
        if plan.rounds is None:
            what = words.t("errors.debate_run", lang)
            raise DebateFailed(words.t("errors.too_slow", lang, what=what,
                                       limit_min=f"{MAX_RUN_S / 60:.0f}", **said))
        sink(Status(text=words.t("errors.paced", lang, rounds=plan.rounds, **said)))
        # one call a turn (no tool rounds: the evidence pack is gathered by code), answers no
        # longer than the estimate assumed
        return replace(limits, min_rounds=min(limits.min_rounds, plan.rounds),
                       max_rounds=plan.rounds, turn_timeout_s=plan.turn_timeout_s,
                       tool_rounds=0, max_call_tokens=TURN_MAX_TOKENS)

    def _reused(self, found: StoredReport, sink: Emit, lang: str) -> DebateOutcome:
        sink(Status(text=words.t("debate.reusing", lang, date=f"{found.created_at:%Y-%m-%d}")))
        sink(TextDelta(text=words.t("debate.report_from", lang,
                                    when=f"{found.created_at:%Y-%m-%d %H:%M}") + "\n"))
        return DebateOutcome(artifact=found.artifact, markdown=found.markdown, pdf=found.pdf,
                             reused_from=found.created_at)

    def _pdf(self, artifact: DebateArtifact, evidence: Evidence) -> bytes:
        chart = render_chart(evidence.bars, evidence.title, evidence.symbol.market,
                             artifact.meta.lang)
        return render_pdf(artifact, chart)

    def _meta(self, evidence: Evidence, panel: Panel, question: str, lang: str) -> DebateMeta:
        return DebateMeta(
            panel=panel, ticker=evidence.symbol.code, name=evidence.symbol.name,
            market=evidence.symbol.market, currency=evidence.currency, question=question,
            lang=lang, generated_at=datetime.now(UTC), data_as_of=evidence.price.as_of,
            data_source=evidence.data_label, budget_tokens=self.budget_tokens,
            notes=list(evidence.notes))

    def _offline(self, evidence: Evidence, panel: Panel, question: str, lang: str,
                 limits: Limits, sink: Emit) -> DebateArtifact:
        meta = self._meta(evidence, panel, question, lang)
        meta.label, meta.offline = offline_panel.offline_label(lang), True
        sink(Status(text=words.t("debate.offline_start", lang)))
        today = self._today()
        if panel == "experts":
            out = offline_panel.run_experts(evidence, lang=lang, today=today,
                                            rounds=limits.min_rounds,
                                            threshold=limits.consensus_confidence)
            for rnd in out.rounds:
                for name, t in rnd.turns().items():
                    line = progress_line(rnd.round, name, t, lang)
                    sink(Status(text=line))
                    sink(TextDelta(text=line + "\n"))
            meta.rounds_planned = meta.rounds_run = len(out.rounds)
            meta.stop_reason = words.t("debate.offline_stop", lang)
            return DebateArtifact(meta=meta, metrics=evidence.metrics(), experts=out)
        bb = offline_panel.run_bull_bear(evidence, question=question, lang=lang, today=today)
        sink(TextDelta(text=words.t("debate.offline_verdict_line", lang,
                                    action=words.t("debate.action_" + bb.conclusion.action, lang),
                                    confidence=f"{bb.conclusion.confidence:.2f}") + "\n"))
        meta.rounds_planned = meta.rounds_run = 2
        meta.stop_reason = words.t("debate.offline_bb_stop", lang)
        return DebateArtifact(meta=meta, metrics=evidence.metrics(), bull_bear=bb)

    async def _llm_debate(self, evidence: Evidence, panel: Panel, question: str, lang: str,
                          limits: Limits, sink: Emit, on_usage: UsageSink | None
                          ) -> DebateArtifact:
        assert self._llm is not None
        budget = Budget(self.budget_tokens)

        async def record(usage: Usage) -> None:
            if on_usage is not None:
                await on_usage(usage)

        engine = Engine(llm=self._llm, tools=self._tools, profiles=self.profiles,
                        limits=limits, budget=budget, emit=sink, on_usage=record)
        meta = self._meta(evidence, panel, question, lang)
        today = self._today()
        res: PanelResult[TickerDebateOutput] | PanelResult[BullBearOutput]
        if panel == "experts":
            res = await ExpertsPanel(engine=engine, evidence=evidence, question=question,
                                     lang=lang, today=today).run()
            artifact = DebateArtifact(meta=meta, metrics=evidence.metrics(), experts=res.output)
            meta.rounds_run = len(res.output.rounds)
        else:
            res = await BullBearPanel(engine=engine, evidence=evidence, question=question,
                                      lang=lang, today=today, rng=self._rng).run()
            artifact = DebateArtifact(meta=meta, metrics=evidence.metrics(), bull_bear=res.output)
            meta.rounds_run = res.rounds_planned
        meta.rounds_planned, meta.stop_reason = res.rounds_planned, res.stop_reason
        meta.degradation_level = res.level.index
        meta.degradations, meta.notes = res.degradations, meta.notes + res.notes
        meta.usage, meta.tokens_used = budget.per_seat(), budget.used
        return artifact


__all__ = ["DebateMode", "DebateOutcome", "DebateRequest", "parse_request"]


def _declared(needs: ModeNeeds) -> Mode | None:
    """With no model the experts are deterministic, scored from data (labelled as such)."""
    return DebateMode(llm=needs.llm, registry=needs.registry, pool=needs.pool,
                      budget_tokens=needs.debate_token_budget, find_symbols=needs.find_symbols)


MODES = (ModeDecl("debate", _declared, when="always"),)
