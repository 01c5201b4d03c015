"""The bull/bear panel (seed 000): hypothesis, data plan run by code, openings, rebuttals,
an anonymised judge, an executive summary.

Phase 0 turns the question into a testable hypothesis and a data plan (at most 20 tool calls);
phase 1 runs the plan in parallel with no model deciding per call; phases 2 and 3 run two bulls
and two bears in parallel on two model profiles; phase 4's judge sees every argument shuffled
and unattributed; phase 5 writes the summary (its metrics table is computed in code).
"""

from __future__ import annotations

import asyncio
import difflib
import json
import logging
import random
from collections.abc import Callable
from datetime import date

from core.agent.runner import _why as llm_why
from core.errors import LLMError
from core.events import Status, TextDelta
from core.tools import ToolRegistry
from core.types import ChatMessage
from core.words import t
from debate import prompts
from debate.budget import (
    LEVELS,
    TOOL_RESULT_EST,
    BudgetExhausted,
    Level,
    estimate_tokens,
    level_name,
    level_names,
)
from debate.engine import DebateFailed, Engine, PanelResult, llm_reason, reasons
from debate.evidence import Evidence
from debate.experts import BudgetTooSmall
from debate.grounding import canonical_args, source_for_tool
from debate.models import (
    Argument,
    ArgumentReply,
    BullBearOutput,
    Conclusion,
    DataItem,
    Entity,
    Hypothesis,
    Phase,
    PlannedCall,
    Side,
    VerdictReply,
)

log = logging.getLogger(__name__)

MAX_PLAN_CALLS = 20
ARG_TEXT_TOKENS = 450
ANALYSTS: tuple[tuple[str, Side, int], ...] = (
    ("bull_1", "bull", 0), ("bull_2", "bull", 1), ("bear_1", "bear", 0), ("bear_2", "bear", 1))


def tool_catalogue(tools: ToolRegistry | None) -> str:
    """Tool names, parameters and descriptions for the planner (static: cache-friendly)."""
    if tools is None:
        return "Tool catalogue: (none; leave data_plan empty)"
    lines = ["Tool catalogue:"]
    for spec in tools.specs():
        params = ", ".join(spec.args_model.model_fields)
        lines.append(f"- {spec.name}({params}): {spec.description}")
    return "\n".join(lines)


def fallback_hypothesis(evidence: Evidence, question: str, lang: str = "en") -> Hypothesis:
    """A plain hypothesis when the planner gave none: the stock beats holding cash."""
    title = evidence.title
    asked = t("debate.hypothesis_asked", lang, question=question) if question else ""
    return Hypothesis(
        hypothesis=t("debate.hypothesis", lang, title=title) + asked,
        entities=[Entity(code=evidence.symbol.code, name=evidence.symbol.name)],
        pro_framing="show that the data supports buying now",
        con_framing="show that the data argues against buying now",
        verdict_options=[t("debate.verdict_supported", lang), t("debate.verdict_rejected", lang),
                         t("debate.verdict_inconclusive", lang)])


def anonymise(arguments: list[Argument], rng: random.Random,
              cited: Callable[[Argument], list[str]]) -> tuple[list[str], str]:
    """Shuffle the arguments and strip who wrote them: (ids in shown order, judge text)."""
    order = list(range(len(arguments)))
    rng.shuffle(order)
    blocks = []
    for n, i in enumerate(order, 1):
        a = arguments[i]
        points = "\n".join(f"  * {p}" for p in a.key_points)
        ids = cited(a)
        blocks.append(f"Argument {n}:\n{a.text}" + (f"\n{points}" if points else "")
                      + (f"\n  (cites {', '.join(ids)})" if ids else ""))
    ids = [f"{arguments[i].analyst}:{arguments[i].phase}" for i in order]
    return ids, "\n\n".join(blocks)


def match_option(verdict: str, options: list[str]) -> str | None:
    """The verdict option a judge meant (exact, contained, or closest spelling)."""
    low = verdict.strip().lower()
    for opt in options:
        if low == opt.strip().lower():
            return opt
    for opt in options:
        if opt.strip().lower() in low or low in opt.strip().lower():
            return opt
    close = difflib.get_close_matches(verdict, options, n=1, cutoff=0.6)
    return close[0] if close else None


class BullBearPanel:
    def __init__(self, *, engine: Engine, evidence: Evidence, question: str = "",
                 lang: str = "en", today: date | None = None,
                 rng: random.Random | None = None) -> None:
        self.e = engine
        self.ev = evidence
        self.question = question
        self.lang = lang
        self.today = today or date.today()
        self.rng = rng or random.Random()
        self.limits = engine.limits
        self.catalog = evidence.catalog
        self.notes: list[str] = []
        self.degradations: list[str] = []
        # what failed, as flags (the notes are words in the reader's language, not matched)
        self.hypothesis_defaulted = False
        self.judge_failure = ""
        self._catalogue = tool_catalogue(engine.tools)

    # --- budget ----------------------------------------------------------------------------

    def _costs(self, level: Level, pack_tokens: int | None = None) -> dict[str, int]:
        """Projected tokens per phase at `level` (the pack estimated until it is known)."""
        pack = pack_tokens if pack_tokens is not None else (
            estimate_tokens(self.ev.block()) + level.pack_chars // 3)
        q = estimate_tokens(self.question)
        analyst = estimate_tokens(prompts.ANALYST_RULES) + 80 + pack + q + 200
        tools = min(level.tool_rounds, self.limits.tool_rounds)
        opening = (1 + min(tools, 1)) * (analyst + level.max_tokens) + (
            TOOL_RESULT_EST if tools else 0)
        arg = min(level.max_tokens, level.text_chars * 2) + 40
        closing = self.limits.closing_tokens
        return {
            "hypothesis": estimate_tokens(prompts.HYPOTHESIS + self._catalogue) + q + 250
            + closing,
            "openings": 4 * opening,
            "rebuttals": 4 * (analyst + 3 * arg + level.max_tokens),
            "judge": estimate_tokens(prompts.JUDGE) + pack + q + 8 * arg + 300 + closing,
            "summary": estimate_tokens(prompts.SUMMARY) + pack + q + 8 * arg + 1000 + closing,
        }

    def precheck(self) -> None:
        """Refuse before spending anything when even the cheapest debate cannot be paid."""
        c = self._costs(LEVELS[-1])
        need = c["hypothesis"] + c["openings"] + c["judge"]
        if not self.e.budget.fits(need):
            raise BudgetTooSmall(t("debate.too_small_bull_bear", self.lang,
                                   total=self.e.budget.total, need=need))

    def plan(self, collected: str) -> tuple[Level, bool, bool]:
        """(level, run rebuttals, model-written summary) that what remains affords."""
        budget = self.e.budget
        for level in LEVELS:
            costs = self._costs(level, estimate_tokens(self._pack(collected, level)))
            costs.pop("hypothesis")
            if budget.fits(sum(costs.values())):
                if level.index:
                    self.degradations.append(t("debate.deg_levels", self.lang,
                                               index=level.index,
                                               names=level_names(level.index, self.lang)))
                return level, True, True
        level = LEVELS[-1]
        costs = self._costs(level, estimate_tokens(self._pack(collected, level)))
        for rebut, what in ((True, "debate.deg_bb_code_summary"),
                            (False, "debate.deg_bb_no_rebuttal")):
            need = costs["openings"] + costs["judge"] + (costs["rebuttals"] if rebut else 0)
            if budget.fits(need):
                self.degradations.append(t(what, self.lang, index=level.index,
                                           name=level_name(level, self.lang)))
                return level, rebut, False
        raise BudgetTooSmall(t("debate.ran_out_after_hypothesis", self.lang, total=budget.total,
                               left=budget.remaining(),
                               need=costs["openings"] + costs["judge"]))

    # --- phases ----------------------------------------------------------------------------

    async def _hypothesis(self) -> Hypothesis:
        self.e.emit(Status(text=t("debate.phase_hypothesis", self.lang)))
        msgs = [
            ChatMessage(role="system", content=prompts.HYPOTHESIS + "\n\n" + self._catalogue
                        + prompts.seat_line("hypothesis")),
            ChatMessage(role="user", content="\n".join([
                prompts.language(self.lang), f"Today: {self.today.isoformat()}",
                f"Security: {self.ev.title}, {self.ev.symbol.market} {self.ev.symbol.kind}",
                f"Question: {self.question or 'Is it a buy now?'}"])),
        ]
        res = await self.e.turn(seat="hypothesis", role=self.e.profiles.planner, messages=msgs,
                                model=Hypothesis, tool_rounds=0,
                                max_tokens=self.limits.closing_tokens, label="Hypothesis")
        if res.value is None:
            self.hypothesis_defaulted = True
            self.notes.append(t("debate.note_hypothesis_failed", self.lang,
                                why=res.why(self.lang)))
            return fallback_hypothesis(self.ev, self.question, self.lang)
        return res.value

    async def _collect(self, plan: list[PlannedCall]) -> tuple[list[DataItem], list[str], str]:
        """Run the data plan in parallel, by code: (items, source ids, data pack text)."""
        tools = self.e.tools
        calls: list[PlannedCall] = []
        items: list[DataItem] = []
        if len(plan) > MAX_PLAN_CALLS:
            self.notes.append(t("debate.note_plan_cut", self.lang, n=len(plan),
                                kept=MAX_PLAN_CALLS))
        for call in plan[:MAX_PLAN_CALLS]:
            if tools is None or call.tool not in tools:
                items.append(DataItem(tool=call.tool, args=call.args, ok=False,
                                      note="not a tool debaters may use; skipped"))
            else:
                calls.append(call)
        if calls:
            self.e.emit(Status(text=t("debate.phase_collect", self.lang, n=len(calls))))
        assert tools is not None or not calls
        outcomes = await asyncio.gather(*(tools.call(c.tool, c.args) for c in calls)) if (
            tools is not None) else []
        ids: list[str] = []
        pack: list[str] = []
        for call, outcome in zip(calls, outcomes, strict=True):
            if not outcome.ok:
                items.append(DataItem(tool=call.tool, args=call.args, ok=False,
                                      note=outcome.content[:200]))
                continue
            sid = self.catalog.add(source_for_tool(call.tool, call.args, outcome.result))
            ids.append(sid)
            items.append(DataItem(tool=call.tool, args=call.args, ok=True, source_id=sid))
            pack.append(f"[{sid}] {call.tool} {canonical_args(call.args)}:\n{outcome.content}")
        return items, ids, "\n\n".join(pack)

    def _pack(self, collected: str, level: Level) -> str:
        text = self.ev.block()
        if collected:
            room = max(0, level.pack_chars - len(text))
            body = collected if len(collected) <= room else collected[:room] + "\n…[data pack cut]"
            text += "\n\nData collected for the plan (cite by id):\n" + body
        return text

    def _analyst_messages(self, analyst: str, side: Side, hyp: Hypothesis, pack: str,
                          ask: list[str]) -> list[ChatMessage]:
        framing = hyp.pro_framing if side == "bull" else hyp.con_framing
        head = [prompts.language(self.lang), f"Hypothesis: {hyp.hypothesis}"]
        if framing:
            head.append(f"Your brief: {framing}")
        if self.question:
            head.append(f"The user's question: {self.question}")
        return [
            ChatMessage(role="system", content=prompts.ANALYST_RULES + "\n" + prompts.SIDES[side]
                        + prompts.seat_line(analyst)),
            ChatMessage(role="system", content=pack),
            ChatMessage(role="user", content="\n".join(head + ask)),
        ]

    async def _argue(self, analyst: str, side: Side, slot: int, phase: Phase, hyp: Hypothesis,
                     pack: str, pack_ids: set[str], level: Level, ask: list[str],
                     floor: int) -> Argument:
        role = self.e.profiles.debater(self.e.profiles.analysts[slot], level)
        res = await self.e.turn(
            seat=analyst, role=role, messages=self._analyst_messages(analyst, side, hyp, pack,
                                                                     ask),
            model=ArgumentReply, tool_rounds=min(level.tool_rounds, self.limits.tool_rounds)
            if phase == "opening" else 0, max_tokens=level.max_tokens, catalog=self.catalog,
            floor=floor, label=analyst.replace("_", " #").capitalize())
        name = self._seat(analyst)
        step = t("debate.phase_" + phase, self.lang)
        if res.value is None:
            why = res.why(self.lang)
            self.notes.append(t("debate.note_turn_failed", self.lang, phase=step, name=name,
                                why=why))
            arg = Argument(analyst=analyst, side=side, phase=phase, profile=role, text="",
                           failed=True, error=why)
            line = t("debate.argue_failed", self.lang, phase=step, name=name, error=why)
        else:
            kept, dropped = self.catalog.recheck(res.value.sources,
                                                 pack_ids | set(res.tool_ids))
            if dropped:
                self.notes.append(t("debate.note_dropped", self.lang, phase=step, name=name,
                                    n=len(dropped)))
            arg = Argument(analyst=analyst, side=side, phase=phase, profile=role,
                           text=res.value.text, key_points=res.value.key_points, sources=kept,
                           dropped_sources=dropped)
            line = t("debate.argued", self.lang, phase=step, name=name, n=len(kept),
                     extra=t("debate.argued_dropped", self.lang, n=len(dropped)) if dropped
                     else "")
        self.e.emit(Status(text=line))
        self.e.emit(TextDelta(text=line + "\n"))
        return arg

    async def _judge(self, hyp: Hypothesis, pack: str, arguments: list[Argument], floor: int
                     ) -> tuple[VerdictReply | None, list[str]]:
        usable = [a for a in arguments if not a.failed]
        order, shown = anonymise(usable, self.rng, self._ids)
        self.e.emit(Status(text=t("debate.phase_judge", self.lang, n=len(usable))))
        msgs = [
            ChatMessage(role="system", content=prompts.JUDGE + prompts.seat_line("judge")),
            ChatMessage(role="system", content=pack),
            ChatMessage(role="user", content="\n".join([
                prompts.language(self.lang), f"Hypothesis: {hyp.hypothesis}",
                "Verdict options: " + json.dumps(hyp.verdict_options, ensure_ascii=False),
                "Arguments (shuffled, authors withheld):", shown])),
        ]
        res = await self.e.turn(seat="judge", role=self.e.profiles.judge, messages=msgs,
                                model=VerdictReply, tool_rounds=0, floor=floor,
                                max_tokens=self.limits.closing_tokens, label="Judge")
        if res.value is None:
            self.judge_failure = res.why(self.lang)
            self.notes.append(t("debate.note_judge_failed", self.lang, why=self.judge_failure))
            return None, order
        verdict = res.value
        option = match_option(verdict.verdict, hyp.verdict_options)
        if option is None:
            self.notes.append(t("debate.note_verdict_off", self.lang, verdict=verdict.verdict))
        elif option != verdict.verdict:
            verdict = verdict.model_copy(update={"verdict": option})
        line = t("debate.verdict_line", self.lang, verdict=verdict.verdict,
                 action=t("debate.action_" + verdict.action, self.lang),
                 confidence=verdict.confidence)
        self.e.emit(Status(text=line))
        self.e.emit(TextDelta(text=line + "\n"))
        return verdict, order

    def _metrics_table(self) -> str:
        rows = [f"| {m.label} | {m.display} |" for m in self.ev.metrics() if m.value is not None]
        return "\n".join(["| Metric | Value |", "|---|---|", *rows])

    def _code_summary(self, hyp: Hypothesis, verdict: VerdictReply | None) -> str:
        head = f"**{self.ev.title}** — {hyp.hypothesis}"
        if verdict is None:
            return head + "\n\n" + t("debate.code_no_verdict", self.lang)
        sep = t("grammar.clause_sep", self.lang)
        horizon = verdict.time_horizon or t("debate.code_horizon_na", self.lang)
        parts = [head, t("debate.code_verdict", self.lang, verdict=verdict.verdict,
                         action=t("debate.action_" + verdict.action, self.lang),
                         confidence=verdict.confidence, horizon=horizon),
                 t("debate.code_why", self.lang, reasons=sep.join(verdict.reasons))]
        if verdict.key_risks:
            parts.append(t("debate.code_risks", self.lang, risks=sep.join(verdict.key_risks)))
        if verdict.strongest_opposing_data_point:
            parts.append(t("debate.code_opposing", self.lang,
                           point=verdict.strongest_opposing_data_point))
        return "\n\n".join(parts)

    async def _summary(self, hyp: Hypothesis, pack: str, args: list[Argument],
                       verdict: VerdictReply | None) -> str:
        self.e.emit(Status(text=t("debate.phase_summary", self.lang)))
        sides = "\n\n".join(f"{a.side.upper()} ({a.phase}): {a.text}" for a in args
                            if not a.failed)
        msgs = [
            ChatMessage(role="system", content=prompts.SUMMARY + prompts.seat_line("summary")),
            ChatMessage(role="system", content=pack),
            ChatMessage(role="user", content="\n".join([
                prompts.language(self.lang), f"Hypothesis: {hyp.hypothesis}",
                "Verdict: " + (verdict.model_dump_json() if verdict else "none (judge failed)"),
                "Metrics table (added by the code):", self._metrics_table(),
                "Arguments:", sides])),
        ]
        try:
            resp = await self.e.call(msgs, seat="summary", role=self.e.profiles.summarizer,
                                     max_tokens=self.limits.closing_tokens)
        except (LLMError, BudgetExhausted) as exc:
            log.warning("bull/bear executive summary failed: %s", exc)
            why = (t("debate.why_budget", self.lang) if isinstance(exc, BudgetExhausted)
                   else llm_why(llm_reason(exc), self.lang).rstrip("。."))
            self.notes.append(t("debate.note_summary_failed", self.lang, why=why))
            return self._code_summary(hyp, verdict)
        return resp.content.strip() or self._code_summary(hyp, verdict)

    async def run(self) -> PanelResult[BullBearOutput]:
        self.precheck()
        hyp = await self._hypothesis()
        items, data_ids, collected = await self._collect(hyp.data_plan)
        level, rebut, llm_summary = self.plan(collected)
        for note in self.degradations:
            self.e.emit(Status(text=t("debate.budget_note", self.lang, note=note)))
        pack = self._pack(collected, level)
        costs = self._costs(level, estimate_tokens(pack))
        pack_ids = set(self.ev.context_ids) | set(data_ids)
        line = t("debate.hypothesis_line", self.lang, hypothesis=hyp.hypothesis)
        self.e.emit(TextDelta(text=line + "\n"))
        floor = costs["judge"] + (costs["summary"] if llm_summary else 0)
        self.e.emit(Status(text=t("debate.phase_openings", self.lang)))
        openings = list(await asyncio.gather(*(
            self._argue(a, side, slot, "opening", hyp, pack, pack_ids, level,
                        ["Give your opening argument."], floor + (
                            costs["rebuttals"] if rebut else 0))
            for a, side, slot in ANALYSTS)))
        rebuttals: list[Argument] = []
        if rebut:
            self.e.emit(Status(text=t("debate.phase_rebuttals", self.lang)))
            rebuttals = list(await asyncio.gather(*(
                self._argue(a, side, slot, "rebuttal", hyp, pack,
                            pack_ids | self._cited(openings), level,
                            self._rebuttal_ask(a, side, openings, level), floor)
                for a, side, slot in ANALYSTS)))
        arguments = openings + rebuttals
        failed = [a for a in arguments if a.failed]
        if len(failed) == len(arguments):
            raise DebateFailed(t("debate.failed_analysts", self.lang, n=len(arguments),
                                 why=reasons([a.error for a in failed], self.lang)))
        verdict, order = await self._judge(hyp, pack, arguments,
                                           costs["summary"] if llm_summary else 0)
        if verdict is None:
            raise DebateFailed(t("debate.failed_judge", self.lang,
                                 why=self.judge_failure or t("debate.no_reason", self.lang)))
        if llm_summary:
            summary = await self._summary(hyp, pack, openings + rebuttals, verdict)
        else:
            summary = self._code_summary(hyp, verdict)
        missing = [t("debate.argue_failed", self.lang,
                     phase=t("debate.phase_" + a.phase, self.lang), name=self._seat(a.analyst),
                     error=a.error) for a in failed]
        if self.hypothesis_defaulted:
            missing.insert(0, t("debate.missing_hypothesis", self.lang))
        share = (len(arguments) - len(failed)) / len(arguments)  # what the judge could weigh
        conclusion = Conclusion(
            text=f"{verdict.verdict}: " + "; ".join(verdict.reasons[:3]),
            action=verdict.action, confidence=round(verdict.confidence / 10.0 * share, 2),
            missing=missing)
        output = BullBearOutput(
            ticker=self.ev.symbol.code, date=self.today.strftime("%Y%m%d"),
            question=self.question, hypothesis=hyp, data=items, openings=openings,
            rebuttals=rebuttals, judge_order=order, verdict=verdict, summary=summary,
            conclusion=conclusion)
        phases = 4 + (1 if rebut else 0) + (1 if llm_summary else 0)
        return PanelResult(output=output, level=level, rounds_planned=2 if rebut else 1,
                           stop_reason=t("debate.stop_phases", self.lang, n=phases),
                           degradations=self.degradations,
                           notes=self.notes)

    def _seat(self, analyst: str) -> str:
        """`bull_1` as the reader knows the seat: Bull #1, 多方 #1."""
        side_of, _, n = analyst.partition("_")
        return t("debate.analyst_" + side_of, self.lang, n=n)

    def _ids(self, arg: Argument) -> list[str]:
        return [sid for s in arg.sources if (sid := self.catalog.id_for(s))]

    def _cited(self, args: list[Argument]) -> set[str]:
        return {sid for a in args for sid in self._ids(a)}

    def _rebuttal_ask(self, analyst: str, side: Side, openings: list[Argument],
                      level: Level) -> list[str]:
        own = next((a for a in openings if a.analyst == analyst), None)
        other = [a for a in openings if a.side != side and not a.failed]
        cut = level.text_chars * 2

        def brief(a: Argument) -> str:
            ids = self._ids(a)
            text = a.text if len(a.text) <= cut else a.text[:cut] + "…"
            return text + (f" [{', '.join(ids)}]" if ids else "")

        ask = ["The other side argued:"] + [f"- {brief(a)}" for a in other]
        if own is not None and not own.failed:
            ask += ["Your opening was:", brief(own)]
        ask.append("Rebut the other side's strongest points; keep to the data.")
        return ask

