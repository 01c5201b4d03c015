"""The experts panel (seed 001): fundamental, risk, growth and sentiment experts argue in
rounds, in parallel; a moderator decides after each round from the minimum on whether to go on
and writes the conclusion. Consensus is strict and decided by code: every seated expert on the
same action with confidence at or above the threshold.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import date

from core import words
from core.errors import InputError
from core.events import Status, TextDelta
from core.types import ChatMessage
from debate import prompts
from debate.budget import (
    LEVELS,
    TOOL_RESULT_EST,
    Level,
    choose,
    estimate_tokens,
    level_name,
    level_names,
)
from debate.engine import DebateFailed, Engine, PanelResult, reasons
from debate.evidence import Evidence
from debate.grounding import SourceCatalog
from debate.models import (
    Action,
    Conclusion,
    DebateRound,
    ExpertName,
    ExpertReply,
    ExpertTurn,
    ModeratorReply,
    TickerDebateOutput,
)

TURN_TEXT_EST = 350  # an expert's text as asked for (80-200 words), for projections


class BudgetTooSmall(InputError):
    """The token budget cannot pay for even the most degraded debate."""


def consensus(rnd: DebateRound, threshold: float, seats: int) -> Action | None:
    """The shared action when every seated expert agrees with confidence >= threshold."""
    turns = list(rnd.turns().values())
    if len(turns) < seats or not turns:
        return None
    actions = {t.action for t in turns}
    if len(actions) != 1 or any(t.failed or t.confidence < threshold for t in turns):
        return None
    return turns[0].action


def answered(rnd: DebateRound) -> int:
    return sum(1 for t in rnd.turns().values() if not t.failed)


def support(rnd: DebateRound, action: Action) -> float:
    """Conclusion confidence: the backing `action` has, as a share of the whole panel (a
    failed seat counts as no backing, so a partly failed round lowers it)."""
    turns = list(rnd.turns().values())
    if not turns:
        return 0.0
    backing = sum(t.confidence for t in turns if t.action == action and not t.failed)
    return round(backing / len(turns), 4)


def plurality(rnd: DebateRound) -> Action:
    """Confidence-weighted plurality of the final positions. Ties go to HOLD, and so does an
    even split by head count (2 BUY vs 2 SELL is no conclusion, whatever the weights)."""
    weights: dict[Action, float] = {}
    counts: dict[Action, int] = {}
    for t in rnd.turns().values():
        if not t.failed:
            weights[t.action] = weights.get(t.action, 0.0) + t.confidence
            counts[t.action] = counts.get(t.action, 0) + 1
    if not weights:
        return "HOLD"
    top = sorted(weights.items(), key=lambda kv: -kv[1])
    if len(top) > 1 and (top[0][1] == top[1][1] or counts[top[0][0]] == counts[top[1][0]]):
        return "HOLD"
    return top[0][0]


def progress_line(rnd: int, name: str, turn: ExpertTurn, lang: str = "en") -> str:
    """`Round 1 - Risk: SELL 0.62` (`第 1 轮 - 风险：卖出 0.62`), as the chat shows the debate
    unfolding."""
    expert = words.t("debate.expert_" + name, lang)
    if turn.failed:
        return words.t("debate.round_failed", lang, round=rnd, name=expert, error=turn.error)
    extra = (words.t("debate.round_dropped", lang, n=len(turn.dropped_sources))
             if turn.dropped_sources else "")
    return words.t("debate.round_line", lang, round=rnd, name=expert,
             action=words.t("debate.action_" + turn.action, lang),
             confidence=f"{turn.confidence:.2f}", extra=extra)


class ExpertsPanel:
    """Runs one experts debate on gathered evidence through an `Engine`."""

    def __init__(self, *, engine: Engine, evidence: Evidence, question: str = "",
                 lang: str = "en", experts: Sequence[ExpertName] = ("fundamental", "risk",
                                                                   "growth", "sentiment"),
                 today: date | None = None) -> None:
        self.e = engine
        self.ev = evidence
        self.question = question
        self.lang = lang
        self.experts = tuple(experts)
        self.today = today or date.today()
        self.limits = engine.limits
        self.catalog: SourceCatalog = evidence.catalog
        self._context = evidence.block()
        self._brief = evidence.block(recent=False)
        self.notes: list[str] = []
        self.degradations: list[str] = []
        self._done: list[DebateRound] = []

    # --- budget projection -----------------------------------------------------------------

    def _round_text(self, rnd: int, level: Level) -> int:
        """Tokens round `rnd` adds to a transcript: measured once it ran, else expected."""
        if rnd <= len(self._done):
            return sum(estimate_tokens(t.text[:level.text_chars]) + 30
                       for t in self._done[rnd - 1].turns().values())
        return len(self.experts) * (min(TURN_TEXT_EST, level.max_tokens, level.text_chars) + 30)

    def _turn_cost(self, rnd: int, level: Level) -> int:
        first = 1 if level.context_rounds is None else max(1, rnd - level.context_rounds)
        transcript = sum(self._round_text(r, level) for r in range(first, rnd))
        prompt = (estimate_tokens(prompts.EXPERT_RULES) + 80 + estimate_tokens(self._context)
                  + estimate_tokens(self.question) + transcript + 120)
        tool_rounds = min(level.tool_rounds, self.limits.tool_rounds)
        calls = 1 + min(tool_rounds, 1)
        return calls * (prompt + level.max_tokens) + (TOOL_RESULT_EST if tool_rounds else 0)

    def _moderator_cost(self, rnds: int, level: Level) -> int:
        return (estimate_tokens(prompts.MODERATOR) + estimate_tokens(self._brief)
                + estimate_tokens(self.question)
                + sum(self._round_text(r, level) for r in range(1, rnds + 1))
                + 250 + self.limits.closing_tokens)

    def cost(self, first: int, last: int, level: Level) -> int:
        """Projected tokens of rounds `first..last` and the moderator calls they entail."""
        total = 0
        for r in range(first, last + 1):
            total += len(self.experts) * self._turn_cost(r, level)
            if r >= self.limits.min_rounds or r == last:
                total += self._moderator_cost(r, level)
        return total

    def plan(self) -> tuple[Level, int]:
        """The lowest level that affords the minimum rounds, and how many rounds it affords."""
        budget = self.e.budget
        lo = max(1, min(self.limits.min_rounds, self.limits.max_rounds))
        idx = choose([self.cost(1, lo, lv) for lv in LEVELS], budget.total, budget.used)
        if idx is None:  # fewer rounds, at the cheapest level
            level = LEVELS[-1]
            rounds = 0
            for r in range(lo - 1, 0, -1):
                if budget.fits(self.cost(1, r, level)):
                    rounds = r
                    break
            if rounds == 0:
                need = self.cost(1, 1, level)
                raise BudgetTooSmall(words.t("debate.too_small_experts", self.lang,
                                             total=budget.total, n=len(self.experts), need=need))
            self.degradations.append(words.t(
                "debate.deg_fewer_rounds", self.lang, index=level.index,
                name=level_name(level, self.lang), rounds=rounds, wanted=lo))
            return level, rounds
        level = LEVELS[idx]
        if idx:
            self.degradations.append(words.t(
                "debate.deg_levels_afford", self.lang, index=idx,
                names=level_names(idx, self.lang), rounds=lo, total=budget.total))
        rounds = lo
        while rounds < self.limits.max_rounds and budget.fits(self.cost(1, rounds + 1, level)):
            rounds += 1
        if rounds < self.limits.max_rounds:
            self.degradations.append(words.t("debate.deg_rounds_planned", self.lang,
                                             rounds=rounds, max=self.limits.max_rounds))
        return level, rounds

    def _replan(self, rnd: int, level: Level) -> Level | None:
        """Before round `rnd`: the level (maybe lower) that still affords it, else None."""
        budget = self.e.budget
        for lv in LEVELS[level.index:]:
            if budget.fits(self.cost(rnd, rnd, lv)):
                if lv.index != level.index:
                    self.degradations.append(words.t(
                        "debate.deg_round_degraded", self.lang, round=rnd, index=lv.index,
                        name=level_name(lv, self.lang)))
                return lv
        return None

    # --- rounds ----------------------------------------------------------------------------

    def _transcript(self, rounds: list[DebateRound], level: Level, *, every: bool = False
                    ) -> tuple[str, set[str]]:
        """The earlier rounds a turn sees (`every`: all of them), and the ids cited there."""
        shown = rounds if every or level.context_rounds is None else (
            rounds[-level.context_rounds:])
        lines: list[str] = []
        ids: set[str] = set()
        for rnd in shown:
            lines.append(f"Round {rnd.round}:")
            for name, t in rnd.turns().items():
                if t.failed:
                    lines.append(f"- {name}: (no answer: {t.error})")
                    continue
                cited = [self.catalog.id_for(s) for s in t.sources]
                cited_ids = [c for c in cited if c]
                ids.update(cited_ids)
                text = t.text if len(t.text) <= level.text_chars else (
                    t.text[:level.text_chars] + "…")
                lines.append(f"- {name} ({t.action} {t.confidence:.2f}): {text}"
                             + (f" [{', '.join(cited_ids)}]" if cited_ids else ""))
        return "\n".join(lines), ids

    def _messages(self, name: ExpertName, rnd: int, total: int, transcript: str
                  ) -> list[ChatMessage]:
        seat = (f"{prompts.EXPERT_RULES}\n\nYour angle ({name}): {prompts.EXPERT_SEATS[name]}"
                + prompts.seat_line(name))
        ask = [prompts.language(self.lang), f"Round {rnd} of at most {total}."]
        if self.question:
            ask.append(f"The user's question: {self.question}")
        if transcript:
            ask += ["Earlier rounds:", transcript,
                    "Respond to the other experts by name, then give your position."]
        else:
            ask.append("Give your opening position.")
        return [ChatMessage(role="system", content=seat),
                ChatMessage(role="system", content=self._context),
                ChatMessage(role="user", content="\n".join(ask))]

    async def _expert(self, name: ExpertName, rnd: int, total: int, rounds: list[DebateRound],
                      level: Level, floor: int) -> ExpertTurn:
        transcript, shown_ids = self._transcript(rounds, level)
        res = await self.e.turn(
            seat=name, role=self.e.profiles.debater(self.e.profiles.expert, level),
            messages=self._messages(name, rnd, total, transcript), model=ExpertReply,
            tool_rounds=min(level.tool_rounds, self.limits.tool_rounds),
            max_tokens=level.max_tokens, catalog=self.catalog, floor=floor,
            label=name.capitalize())
        expert_name = words.t("debate.expert_" + name, self.lang)
        if res.value is None:
            why = res.why(self.lang)
            turn = ExpertTurn.failure(why)
            self.notes.append(words.t("debate.note_round_failed", self.lang, round=rnd,
                                      name=expert_name, why=why))
        else:
            allowed = set(self.ev.context_ids) | shown_ids | set(res.tool_ids)
            kept, dropped = self.catalog.recheck(res.value.sources, allowed)
            turn = ExpertTurn(text=res.value.text, action=res.value.action,
                              confidence=res.value.confidence, sources=kept,
                              dropped_sources=dropped)
            if dropped:
                self.notes.append(words.t("debate.note_round_dropped", self.lang, round=rnd,
                                          name=expert_name, n=len(dropped)))
            if res.repaired:
                self.notes.append(words.t("debate.note_round_repaired", self.lang, round=rnd,
                                          name=expert_name))
        line = progress_line(rnd, name, turn, self.lang)
        self.e.emit(Status(text=line))
        self.e.emit(TextDelta(text=line + "\n"))
        return turn

    async def _moderate(self, rounds: list[DebateRound], agreed: Action | None, final: bool,
                        total: int, level: Level) -> ModeratorReply | None:
        last = rounds[-1]
        transcript, _ = self._transcript(rounds, level, every=True)
        state = (f"yes: every expert says {agreed} with confidence >= "
                 f"{self.limits.consensus_confidence:g}" if agreed else
                 "no: " + ", ".join(f"{n} {t.action} {t.confidence:.2f}"
                                    for n, t in last.turns().items()))
        ask = [prompts.language(self.lang),
               f"Round {last.round} of at most {total} is over."
               + (" This is the end of the debate: decide stop." if final else ""),
               f"Consensus (decided by the code): {state}."]
        if self.question:
            ask.append(f"The user's question: {self.question}")
        ask += ["Transcript:", transcript]
        msgs = [ChatMessage(role="system", content=prompts.MODERATOR
                            + prompts.seat_line("moderator")),
                ChatMessage(role="system", content=self._brief),
                ChatMessage(role="user", content="\n".join(ask))]
        self.e.emit(Status(text=words.t("debate.moderating", self.lang, round=last.round)))
        res = await self.e.turn(seat="moderator", role=self.e.profiles.moderator,
                                messages=msgs, model=ModeratorReply, tool_rounds=0,
                                max_tokens=self.limits.closing_tokens, label="Moderator")
        if res.value is None:
            self.notes.append(words.t("debate.note_moderator_failed", self.lang,
                                      round=last.round, why=res.why(self.lang)))
            return None
        if res.repaired:
            self.notes.append(words.t("debate.note_moderator_repaired", self.lang,
                                      round=last.round))
        return res.value

    def _conclude(self, rounds: list[DebateRound], reply: ModeratorReply | None,
                  agreed: Action | None) -> Conclusion:
        """From the last round in which some expert answered; what failed is listed as
        missing (its seats count as no backing in the confidence)."""
        last = rounds[-1]
        if reply is None:
            action = agreed or plurality(last)
            text = ("The moderator gave no conclusion; from the panel's final positions ("
                    + ", ".join(f"{n} {'failed' if t.failed else f'{t.action} {t.confidence:.2f}'}"
                                for n, t in last.turns().items()) + f") the call is {action}.")
        else:
            action, text = reply.action, reply.text
            if agreed and action != agreed:
                self.notes.append(words.t(
                    "debate.note_moderator_overruled", self.lang,
                    said=words.t("debate.action_" + action, self.lang),
                    agreed=words.t("debate.action_" + agreed, self.lang)))
                action = agreed
        return Conclusion(text=text, action=action, confidence=support(last, action),
                          consensus=agreed is not None, missing=self._missing(rounds, reply))

    def _missing(self, rounds: list[DebateRound], reply: ModeratorReply | None) -> list[str]:
        out = [words.t("debate.round_failed", self.lang, round=rnd.round,
                       name=words.t("debate.expert_" + name, self.lang), error=t.error)
               for rnd in self._done for name, t in rnd.turns().items() if t.failed
               and rnd.round == rounds[-1].round]
        out += [words.t("debate.missing_round", self.lang, round=rnd.round)
                for rnd in self._done if rnd.round > rounds[-1].round]
        if reply is None:
            out.append(words.t("debate.missing_moderator", self.lang))
        return out

    async def run(self) -> PanelResult[TickerDebateOutput]:
        """All rounds, the moderator's decisions and the conclusion."""
        level, planned = self.plan()
        floor = self._moderator_cost(planned, level)
        self.e.emit(Status(text=words.t("debate.panel_start", self.lang,
                                  title=self.ev.reader_title(self.lang),
                                  n=len(self.experts), low=self.limits.min_rounds,
                                  high=planned)))
        for note in self.degradations:
            self.e.emit(Status(text=words.t("debate.budget_note", self.lang, note=note)))
        rounds = self._done
        reply: ModeratorReply | None = None
        moderated = 0
        agreed: Action | None = None
        stop = ""
        for rnd in range(1, planned + 1):
            if rnd > 1:
                next_level = self._replan(rnd, level)
                if next_level is None:
                    stop = words.t("debate.stop_budget", self.lang, round=rnd)
                    self.degradations.append(stop)
                    self.e.emit(Status(text=words.t("debate.budget_stop", self.lang, round=rnd)))
                    break
                level = next_level
            self.e.emit(Status(text=words.t("debate.round_start", self.lang, round=rnd,
                                      n=len(self.experts))))
            turns = await asyncio.gather(*(self._expert(n, rnd, planned, rounds, level, floor)
                                           for n in self.experts))
            rounds.append(DebateRound(round=rnd, **dict(zip(self.experts, turns, strict=True))))
            if not answered(rounds[-1]):
                stop = words.t("debate.stop_all_failed", self.lang, round=rnd)
                self.e.emit(Status(text=words.t("debate.round_all_failed", self.lang, round=rnd)))
                break
            if rnd < self.limits.min_rounds and rnd < planned:
                continue
            agreed = consensus(rounds[-1], self.limits.consensus_confidence, len(self.experts))
            reply = await self._moderate(rounds, agreed, agreed is not None or rnd == planned,
                                         planned, level)
            moderated = rnd
            if agreed is not None:
                stop = words.t("debate.stop_consensus", self.lang, round=rnd,
                               action=words.t("debate.action_" + agreed, self.lang))
                break
            if reply is not None and reply.decision == "stop":
                stop = (words.t("debate.stop_moderator_why", self.lang, round=rnd,
                                reason=reply.reason) if reply.reason
                        else words.t("debate.stop_moderator", self.lang, round=rnd))
                break
            if rnd == planned:
                stop = words.t("debate.stop_last_round", self.lang, planned=planned)
        basis = [r for r in rounds if answered(r)]
        if basis:  # the rounds up to the last one anybody answered in
            basis = rounds[:rounds.index(basis[-1]) + 1]
        else:
            errors = [t.error for r in rounds for t in r.turns().values()]
            raise DebateFailed(words.t("debate.failed_experts", self.lang, n=len(errors),
                                       why=reasons(errors, self.lang)))
        if moderated != basis[-1].round:  # the budget or failures cut the debate short
            agreed = consensus(basis[-1], self.limits.consensus_confidence, len(self.experts))
            reply = await self._moderate(basis, agreed, True, planned, level)
        conclusion = self._conclude(basis, reply, agreed)
        output = TickerDebateOutput(ticker=self.ev.symbol.code,
                                    date=self.today.strftime("%Y%m%d"), rounds=rounds,
                                    conclusion=conclusion)
        return PanelResult(output=output, rounds_planned=planned, stop_reason=stop,
                             level=level, degradations=self.degradations, notes=self.notes)

