"""Trade-plan mode on the LLM path.

The ICT analysis runs first, deterministically, at the interval the chat is set to (a model
asking for another one is overridden); the model then fills the plan schema from the digest,
and `ict.validate_plan` checks it against the analysis before anyone sees it. An invalid plan
gets one repair request with the reasons, then is rejected with them.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any, Final
from uuid import uuid4

import ict
from analyst import format as fmt
from analyst.ict_answer import plan_markdown
from core import context
from core.agent import prompts
from core.agent.turn import Turn
from core.errors import BullpenError, ConfigError
from core.events import Done, Event, File, Status, TextDelta, ToolFinished, ToolStarted
from core.localize import words_of
from core.ports import LLMProvider
from core.tools import ToolOutcome, ToolRegistry
from core.types import ChatMessage, OutgoingFile, ToolCall
from ict import Enforcement
from tools.ict_tool import ICTResult, PlanOut, enforced_interval

TOOL: Final = "ict_analyze"
LONG_INTERVALS: Final = ("daily", "weekly", "monthly")

PLAN_RULES: Final = """Trade-plan mode. The chat is set to the {tf} timeframe ({horizon}); the
`{tool}` result in this conversation is your only source of prices. Bias: {bias}.{overrides}
Reply with one JSON object in a ```json block, then at most five sentences of rationale.
Keys: {keys}, plus "direction" ("long" or "short").
- "timeframe": "{tf}" exactly; "horizon": "{horizon}".
- "strategy": a short name, e.g. "order-block retest continuation".
- "entry" and "stop": prices read from the analysis (order blocks, FVG CE, levels); the stop
  beyond the zone: below the entry for a long, above it for a short.
- "targets": a list of prices at liquidity from the analysis, on the profit side of the entry
  and in the direction of the bias.
- "confluence": a list of short reasons, each citing the analysis.
- "risk": {{"risk_percent": a number (percent of equity), "notes": "invalidation"}}.
If the analysis offers no valid setup, reply {{"wait": "<the reason>"}} instead."""

REPAIR: Final = """Your plan was rejected:
{reasons}
Reply with a corrected plan JSON for the {tf} timeframe (same keys), or {{"wait": "<reason>"}}
if no valid plan fits the analysis."""

FIND: Final = """Trade-plan mode: call `{tool}` once for the symbol the user means (interval
{interval} unless the user names one). If no symbol is named, ask which one."""

_FENCE: Final = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


def extract_plan(text: str) -> tuple[dict[str, Any] | None, str]:
    """The first JSON object in a reply (fenced or bare) and the text around it."""
    spans: list[tuple[int, int, str]] = [(m.start(), m.end(), m.group(1))
                                         for m in _FENCE.finditer(text)]
    decoder = json.JSONDecoder()
    spans += [(i, -1, "") for i, ch in enumerate(text) if ch == "{"]
    for start, end, body in spans:
        try:
            if end >= 0:
                data = json.loads(body)
            else:
                data, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            inner = data.get("plan")
            if isinstance(inner, dict) and "entry" not in data:
                data = inner
            return data, (text[:start] + text[end:]).strip()
    return None, text.strip()


def _wait_reason(data: dict[str, Any]) -> str | None:
    if "wait" in data and not set(ict.PLAN_KEYS) & set(data):
        return str(data["wait"]).strip() or "no valid setup"
    return None


@dataclass(frozen=True)
class _Located:
    call: ToolCall
    enforcement: Enforcement
    asked: dict[str, Any]


class PlanMode:
    """Implements the Mode port: deterministic analysis, model-filled plan, code validation."""

    name = "plan"

    def __init__(self, *, llm: LLMProvider, registry: ToolRegistry,
                 find_symbols: Callable[[str], list[str]] | None = None,
                 default_interval: str = "1h", today: Callable[[], date] = date.today) -> None:
        if TOOL not in registry:
            raise ConfigError(f"plan mode needs the {TOOL} tool in the registry")
        self._llm = llm
        self._registry = registry
        self._find = find_symbols
        self._default = default_interval
        self._today = today

    def _base(self, turn: Turn, extra: str = "") -> list[ChatMessage]:
        msgs = [ChatMessage(role="system", content=prompts.system_prompt(
            prompts.SYSTEM, self._today(), extra))]
        if turn.summary:
            msgs.append(ChatMessage(role="system", content="Summary of the earlier "
                                    "conversation:\n" + turn.summary))
        return [*msgs, *turn.history, ChatMessage(role="user", content=turn.text)]

    async def _locate(self, turn: Turn, chat_interval: str | None) -> _Located | str:
        """The tool call to run, from the options or the symbols finder, else from the model
        (whose interval and lookback are then enforced). Without one: the model's reply."""
        symbol = turn.options.symbol
        if self._find is not None:
            # the command's argument (/plan 上证指数 1d) is read as a question's words are: the
            # index is 000001.SH, never 平安银行 (000001); else the first instrument named
            found = await asyncio.to_thread(self._find, symbol or turn.text)  # may load the
            symbol = found[0] if found else symbol  # directory
        if symbol:
            enf = enforced_interval(None, chat_interval or self._default)
            own = ToolCall(id=f"call_{uuid4().hex[:16]}", name=TOOL, arguments="{}")
            return _Located(own, enf, {"symbol": symbol})
        spec = self._registry.get(TOOL)
        ask = FIND.format(tool=TOOL, interval=chat_interval or self._default)
        resp = await self._llm.complete([*self._base(turn), ChatMessage(role="system",
                                                                         content=ask)],
                                        role="agent", tools=[spec.schema()])
        await turn.recorder.usage(resp.usage)
        call = next((c for c in resp.tool_calls if c.name == TOOL), None)
        if call is None:
            return resp.content
        try:
            asked = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            asked = {}
        asked = asked if isinstance(asked, dict) else {}
        lookback = asked.get("lookback")
        requested = asked.get("interval")
        if not isinstance(requested, str) or not requested:
            requested = None if chat_interval else self._default
        enf = enforced_interval(requested, chat_interval,
                                requested_lookback=lookback if isinstance(lookback, int)
                                else None)
        return _Located(call, enf, asked)

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        s = words_of("plan.", turn.lang)
        yield Status(text=s["analysing"])
        chat_interval = turn.options.interval
        located = await self._locate(turn, chat_interval)
        if isinstance(located, str):
            async for event in self._finish(turn, located or fmt.no_symbol(turn.lang)):
                yield event
            return
        enf, asked = located.enforcement, located.asked
        args: dict[str, Any] = {
            "symbol": asked.get("symbol", ""), "interval": enf.interval,
            "lookback": enf.lookback_bars, "session": asked.get("session", "NY"),
            "include_current_bar": turn.options.include_current_bar,
            "stack": enf.interval not in LONG_INTERVALS, "chart": True,
        }
        call = located.call.model_copy(update={"arguments": json.dumps(args)})
        assistant = ChatMessage(role="assistant", tool_calls=[call])
        await turn.recorder.message(assistant)
        label = self._registry.get(TOOL).render_label(args)
        yield ToolStarted(call_id=call.id, name=TOOL, arguments=args, label=label)
        yield Status(text=label)
        files: list[OutgoingFile] = []
        outcome = await self._call(turn, call, files)
        yield ToolFinished(call_id=call.id, name=TOOL, ok=outcome.ok,
                           summary=outcome.content[:200], elapsed_s=outcome.elapsed_s)
        tool_msg = ChatMessage(role="tool", content=outcome.content, tool_call_id=call.id,
                               name=TOOL)
        await turn.recorder.message(tool_msg)
        for f in files:
            yield File(file=f)
        result = outcome.result
        if not outcome.ok or not isinstance(result, ICTResult):
            err = outcome.error
            text = fmt.tool_error(err, turn.lang) if isinstance(err, BullpenError) \
                else outcome.content
            async for event in self._finish(turn, text):
                yield event
            return
        yield Status(text=s["drafting"])
        overrides = [n for n in enf.notes if "overridden" in n]
        rules = PLAN_RULES.format(
            tf=enf.timeframe.key, horizon=enf.timeframe.horizon, tool=TOOL, bias=result.bias,
            keys=", ".join(ict.PLAN_KEYS),
            overrides=(" " + "; ".join(overrides) + ".") if overrides else "")
        messages = [*self._base(turn, rules), assistant, tool_msg]
        body = ""
        for attempt in range(2):
            resp = await self._llm.complete(messages, role="agent")
            await turn.recorder.usage(resp.usage)
            data, rationale = extract_plan(resp.content)
            reasons: Sequence[str]
            if data is None:
                reasons = ["no plan JSON object found in the reply"]
            elif (why := _wait_reason(data)) is not None:
                body = "\n\n".join(x for x in (s["wait"].format(reason=why), rationale) if x)
                break
            else:
                check = ict.validate_plan(data, bias=result.bias, timeframe=enf.timeframe.key)
                if check.ok and check.plan is not None:
                    plan = plan_markdown(PlanOut.of(check.plan, tick=result.tick_size),
                                         turn.lang, currency=result.currency,
                                         tick=result.tick_size)
                    body = "\n\n".join(x for x in (plan, rationale) if x)
                    break
                reasons = check.reasons
            if attempt == 0:
                yield Status(text=s["repairing"])
                messages += [ChatMessage(role="assistant", content=resp.content),
                             ChatMessage(role="user", content=REPAIR.format(
                                 reasons="\n".join(f"- {r}" for r in reasons),
                                 tf=enf.timeframe.key))]
            else:
                body = s["rejected"] + "\n" + "\n".join(f"- {r}" for r in reasons)
        async for event in self._finish(turn, self._answer(result, enf, body, s, overrides)):
            yield event

    async def _call(self, turn: Turn, call: ToolCall, files: list[OutgoingFile]) -> ToolOutcome:
        ctx = context.RunContext(user_id=str(turn.user_id) if turn.user_id else None,
                                 conversation_id=str(turn.conversation_id)
                                 if turn.conversation_id else None,
                                 lang=turn.lang, on_file=files.append)
        token = context.use(ctx)
        try:
            return await self._registry.call(call.name, call.arguments)
        finally:
            context.reset(token)

    @staticmethod
    def _answer(result: ICTResult, enf: Enforcement, body: str, s: Mapping[str, str],
                overrides: list[str]) -> str:
        label = f"{result.name} ({result.symbol})" if result.name else result.symbol
        src = result.source
        parts = [s["title"].format(label=label, tf=enf.timeframe.key,
                                   horizon=enf.timeframe.horizon), body]
        if overrides:
            parts.append(s["overrides"].format(notes="; ".join(overrides)))
        parts.append(s["footer"].format(source=src.label(), date=src.as_of.isoformat()
                                        if src.as_of else "n/a"))
        return "\n\n".join(parts)

    @staticmethod
    async def _finish(turn: Turn, text: str) -> AsyncIterator[Event]:
        await turn.recorder.message(ChatMessage(role="assistant", content=text))
        yield TextDelta(text=text)
        yield Done(text=text)
