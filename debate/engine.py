"""Machinery both panels share: per-seat model profiles, budgeted calls, the turn.

A turn is one debater's answer: up to `tool_rounds` rounds of tool calls (each round's calls
run in parallel through the registry, which never raises), then one JSON object validated by
pydantic (tool calls a model writes as text, e.g. Hermes `<tool_call>`, count as calls). An
invalid answer gets one repair request; a second failure, a timeout or a model
error marks the turn failed and the debate goes on. Every call reserves its worst case against
the budget and reports its usage.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from core.agent.runner import _why as llm_why
from core.errors import InputError, LLMError, LLMTimeout
from core.events import Event, ToolFinished, ToolStarted
from core.llm.textcalls import parse_text_calls
from core.ports import LLMProvider
from core.tools import ToolRegistry, truncate
from core.types import ChatMessage, LLMResponse, ToolCall, Usage
from core.words import t
from debate import prompts
from debate.budget import TOOL_RESULT_EST, Budget, BudgetExhausted, Level, estimate_messages
from debate.grounding import SourceCatalog, source_for_tool

log = logging.getLogger(__name__)

Emit = Callable[[Event], None]
UsageSink = Callable[[Usage], Awaitable[None]]

# Tools a debater must not call: side effects (files, reports) and recursion (seed 000).
EXCLUDED_TOOLS = frozenset({"generate_chart", "generate_pdf", "dispatch_subagents",
                            "analyze_trade_opportunity", "lookup_data_sources",
                            "save_data_source"})
EXCLUDED_TAGS = frozenset({"chart", "output", "report"})


class DebateFailed(InputError):
    """The models could not answer (every expert, or the judge): no verdict, no report.

    An `InputError` like `BudgetTooSmall`, so every caller of `DebateMode.produce` (chat,
    CLI, podcast) already says it as a failure of this request rather than crashing."""


def reasons(errors: list[str], lang: str, limit: int = 3) -> str:
    """Distinct failure reasons, the most frequent first: `x (3 turns); y`."""
    counts: dict[str, int] = {}
    for e in errors:
        counts[e] = counts.get(e, 0) + 1
    top = sorted(counts.items(), key=lambda kv: -kv[1])[:limit]
    return t("grammar.clause_sep", lang).join(
        t("debate.reason_count", lang, why=e, n=n) if n > 1 else e for e, n in top)


@dataclass(frozen=True, kw_only=True)
class Profiles:
    """Which LLM role (model profile) serves each seat; `cheap` is where degradation goes.

    `analysts`: the two profiles of the bull/bear panel; bull #1 and bear #1 run on the
    first, bull #2 and bear #2 on the second, so neither side depends on one model.
    """

    expert: str = "expert"
    moderator: str = "moderator"
    planner: str = "planner"
    analysts: tuple[str, str] = ("bull", "bear")
    judge: str = "judge"
    summarizer: str = "summarizer"
    cheap: str = "moderator"

    def debater(self, role: str, level: Level) -> str:
        return self.cheap if level.cheap else role


@dataclass(frozen=True, kw_only=True)
class Limits:
    min_rounds: int = 2
    max_rounds: int = 3
    tool_rounds: int = 3  # MAX_DEBATER_TOOL_ROUNDS of seed 000
    consensus_confidence: float = 0.7
    turn_timeout_s: float = 180.0
    closing_tokens: int = 700  # max tokens of a moderator, judge or summary call
    tool_result_chars: int = 25_000  # MAX_DEBATER_TOOL_RESULT_CHARS of seed 000
    json_mode: bool = False
    max_call_tokens: int | None = None  # a slow model's cap on every call's answer (issue 35)


def debate_tools(registry: ToolRegistry | None) -> ToolRegistry | None:
    """The registry debaters may use: no chart/report side effects, no recursion."""
    if registry is None:
        return None
    allowed = [n for n in registry.names() if n not in EXCLUDED_TOOLS]
    sub = registry.subset(include=allowed, exclude_tags=EXCLUDED_TAGS)
    return sub if len(sub) else None


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def extract_json(text: str) -> Any:
    """The first JSON object in a reply (code fences and surrounding prose tolerated)."""
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    for cand in candidates:
        cand = cand.strip()
        for i, ch in enumerate(cand):
            if ch != "{":
                continue
            try:
                value, _ = decoder.raw_decode(cand, i)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    raise ValueError("no JSON object found")


def parse_reply[T: BaseModel](text: str, model: type[T]) -> tuple[T | None, str]:
    """Validate a reply against `model`; (None, reason) when it does not fit."""
    try:
        data = extract_json(text)
    except ValueError as exc:
        return None, str(exc)
    try:
        return model.model_validate(data), ""
    except ValidationError as exc:
        reasons = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'object'}: {e['msg']}"
                            for e in exc.errors()[:4])
        return None, reasons


@dataclass
class PanelResult[O: BaseModel]:
    """What a panel hands back: its output and how the budget shaped the run."""

    output: O
    level: Level
    rounds_planned: int
    stop_reason: str
    degradations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class TurnResult[T: BaseModel]:
    """A turn's answer, or why it failed: `error` is the raw detail (English, the provider's
    own words: for the log), `why(lang)` the reason as the reader is told it."""

    value: T | None = None
    error: str = ""
    repaired: bool = False
    tool_ids: list[str] = field(default_factory=list)
    # what failed, for `why`: "timeout" (the turn's own limit), "llm_timeout", "llm" (any
    # other model or provider failure), "budget" or "json"
    kind: str = ""
    seconds: float = 0.0
    llm_reason: str = ""

    def why(self, lang: str) -> str:
        if self.kind == "timeout":
            return t("debate.why_turn_timeout", lang, seconds=f"{self.seconds:g}")
        if self.kind == "llm_timeout":
            return t("errors.why_timeout", lang).rstrip("。.")
        if self.kind == "llm":
            return llm_why(self.llm_reason, lang).rstrip("。.")
        if self.kind == "budget":
            return t("debate.why_budget", lang)
        if self.kind == "json":
            return t("debate.why_bad_json", lang)
        return self.error or t("debate.no_reason", lang)


def llm_reason(exc: LLMError) -> str:
    """The provider's reason a failure is classified by (the first profile's, for a chain)."""
    found = getattr(exc, "reasons", None)
    return str(found[0]) if isinstance(found, list) and found else str(exc)


def _args(call: ToolCall) -> dict[str, Any]:
    try:
        data = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


class Engine:
    """One debate's access to the model, the tools and the budget."""

    def __init__(self, *, llm: LLMProvider, tools: ToolRegistry | None, profiles: Profiles,
                 limits: Limits, budget: Budget, emit: Emit,
                 on_usage: UsageSink | None = None) -> None:
        self.llm = llm
        self.tools = tools
        self.profiles = profiles
        self.limits = limits
        self.budget = budget
        self.emit = emit
        self._on_usage = on_usage
        self._schemas = tools.schemas() if tools is not None else None

    async def call(self, messages: Sequence[ChatMessage], *, seat: str, role: str,
                   max_tokens: int, tools: Sequence[dict[str, Any]] | None = None,
                   json_mode: bool = False, floor: int = 0) -> LLMResponse:
        """One budgeted completion; its usage is charged to `seat` and reported."""
        if self.limits.max_call_tokens is not None:
            max_tokens = min(max_tokens, self.limits.max_call_tokens)
        estimate = estimate_messages(messages, tools) + max_tokens
        with self.budget.reserve(estimate, floor=floor):
            resp = await self.llm.complete(messages, role=role, tools=tools,
                                           max_tokens=max_tokens, json_mode=json_mode)
        self.budget.charge(seat, role, resp.usage)
        if self._on_usage is not None:
            await self._on_usage(resp.usage)
        return resp

    async def turn[T: BaseModel](
        self, *, seat: str, role: str, messages: Sequence[ChatMessage], model: type[T],
        tool_rounds: int, max_tokens: int, catalog: SourceCatalog | None = None,
        floor: int = 0, label: str = "",
    ) -> TurnResult[T]:
        """Tool loop, then a validated JSON answer; never raises for model failures."""
        result: TurnResult[T] = TurnResult()
        msgs = list(messages)
        try:
            async with asyncio.timeout(self.limits.turn_timeout_s):
                await self._turn(result, seat, role, msgs, model, tool_rounds, max_tokens,
                                 catalog, floor, label or seat)
        except TimeoutError:
            result.error = f"timed out after {self.limits.turn_timeout_s:g} s"
            result.kind, result.seconds = "timeout", self.limits.turn_timeout_s
        except LLMTimeout as exc:
            result.error = f"the model timed out ({exc})"
            result.kind = "llm_timeout"
        except LLMError as exc:
            result.error = f"the model failed ({exc})"
            result.kind, result.llm_reason = "llm", llm_reason(exc)
        except BudgetExhausted as exc:
            result.error = f"out of budget ({exc})"
            result.kind = "budget"
        if result.error:
            log.warning("debate turn %s (%s) failed: %s", seat, role, result.error)
        return result

    async def _turn[T: BaseModel](
        self, result: TurnResult[T], seat: str, role: str, msgs: list[ChatMessage],
        model: type[T], tool_rounds: int, max_tokens: int, catalog: SourceCatalog | None,
        floor: int, label: str,
    ) -> None:
        schemas = self._schemas if tool_rounds > 0 else None
        used = 0
        while True:
            offer = schemas if used < tool_rounds else None
            if offer is not None and not self.budget.fits(
                    estimate_messages(msgs, offer) + 2 * max_tokens + TOOL_RESULT_EST,
                    floor=floor):
                offer = None  # a tool round and the answer after it would not fit
            if offer is None and msgs[-1].role == "tool":
                msgs.append(ChatMessage(role="user", content=prompts.FINISH))
            resp = await self.call(msgs, seat=seat, role=role, tools=offer,
                                   max_tokens=max_tokens, floor=floor)
            calls, said = resp.tool_calls, resp.content
            if not calls and offer is not None and self.tools is not None:
                calls, said = parse_text_calls(resp.content, self.tools.names())
            if calls and offer is not None:
                used += 1
                msgs.append(ChatMessage(role="assistant", content=said, tool_calls=calls))
                result.tool_ids += await self._tool_round(label, calls, msgs, catalog)
                continue
            value, error = parse_reply(resp.content, model)
            if value is None:
                msgs.append(ChatMessage(role="assistant", content=resp.content))
                msgs.append(ChatMessage(role="user", content=prompts.REPAIR.format(error=error)))
                resp = await self.call(msgs, seat=seat, role=role, max_tokens=max_tokens,
                                       json_mode=self.limits.json_mode, floor=floor)
                value, error = parse_reply(resp.content, model)
                if value is None:
                    result.error = f"no valid JSON after one repair request ({error})"
                    result.kind = "json"
                    return
                result.repaired = True
            result.value = value
            return

    async def _tool_round(self, label: str, calls: list[ToolCall], msgs: list[ChatMessage],
                          catalog: SourceCatalog | None) -> list[str]:
        assert self.tools is not None
        tools = self.tools
        for call in calls:
            args = _args(call)
            text = (tools.get(call.name).render_label(args) if call.name in tools
                    else f"Running {call.name}...")
            self.emit(ToolStarted(call_id=f"{label}:{call.id}", name=call.name, arguments=args,
                                  label=f"{label}: {text}"))
        outcomes = await asyncio.gather(*(tools.call(c.name, c.arguments) for c in calls))
        ids: list[str] = []
        for call, outcome in zip(calls, outcomes, strict=True):
            self.emit(ToolFinished(call_id=f"{label}:{call.id}", name=call.name, ok=outcome.ok,
                                   summary=outcome.content[:200], elapsed_s=outcome.elapsed_s))
            content = outcome.content
            if outcome.ok and catalog is not None:
                sid = catalog.add(source_for_tool(call.name, _args(call), outcome.result))
                ids.append(sid)
                content = f"[source {sid}]\n{content}"
            msgs.append(ChatMessage(role="tool", content=truncate(
                content, self.limits.tool_result_chars), tool_call_id=call.id, name=call.name))
        return ids
