"""Normal mode: a tool-free planning turn, then the tool loop (parallel calls), streamed."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import date
from typing import Any

from core import context
from core.agent import prompts
from core.agent.turn import Turn
from core.events import Done, Event, File, Status, TextDelta, Thinking, ToolFinished, ToolStarted
from core.llm.base import Final, TextChunk, ThinkingChunk
from core.ports import LLMProvider
from core.tools import ToolOutcome, ToolRegistry
from core.types import ChatMessage, LLMResponse, OutgoingFile, ToolCall

MAX_TURNS = 30


def _args_dict(call: ToolCall) -> dict[str, Any]:
    try:
        data = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


class NormalMode:
    name = "normal"

    def __init__(self, *, llm: LLMProvider, registry: ToolRegistry, max_turns: int = MAX_TURNS,
                 plan: bool = True, today: Callable[[], date] = date.today,
                 extra_system: str = "") -> None:
        self._llm = llm
        self._registry = registry
        self._max_turns = max_turns
        self._plan = plan
        self._today = today
        self._extra = extra_system

    def _messages(self, turn: Turn, system: str) -> list[ChatMessage]:
        msgs = [ChatMessage(role="system", content=prompts.system_prompt(
            system, self._today(), self._extra))]
        if turn.summary:
            msgs.append(ChatMessage(role="system",
                                    content="Summary of the earlier conversation:\n"
                                    + turn.summary))
        msgs.extend(turn.history)
        msgs.append(ChatMessage(role="user", content=turn.text))
        return msgs

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        messages = self._messages(turn, prompts.SYSTEM)
        if self._plan:
            yield Status(text="Planning...")
            plan = await self._llm.complete(
                [*messages, ChatMessage(role="system", content=prompts.PLANNING)],
                role="planner")
            await turn.recorder.usage(plan.usage)
            if plan.thinking:
                yield Thinking(source="planner", text=plan.thinking)
            head = plan.content.strip()
            if head.upper().startswith("ANSWER:"):
                answer = head[len("ANSWER:"):].strip()
                await turn.recorder.message(ChatMessage(role="assistant", content=answer))
                yield TextDelta(text=answer)
                yield Done(text=answer)
                return
            if head:
                body = head[len("PLAN:"):].strip() if head.upper().startswith("PLAN:") else head
                yield Thinking(source="planner", text=body)
                messages.append(ChatMessage(role="system", content="Your plan:\n" + body))

        schemas = self._registry.schemas()
        for n in range(self._max_turns):
            final_turn = n == self._max_turns - 1
            response: LLMResponse | None = None
            async for item in self._llm.stream(
                    messages, role="agent", tools=None if final_turn else schemas):
                if isinstance(item, TextChunk):
                    yield TextDelta(text=item.text)
                elif isinstance(item, ThinkingChunk):
                    yield Thinking(source="agent", text=item.text)
                elif isinstance(item, Final):
                    response = item.response
            assert response is not None
            await turn.recorder.usage(response.usage)
            assistant = ChatMessage(role="assistant", content=response.content,
                                    tool_calls=response.tool_calls)
            messages.append(assistant)
            await turn.recorder.message(assistant)
            if not response.tool_calls:
                yield Done(text=response.content)
                return
            async for event in self._run_tools(response.tool_calls, messages, turn):
                yield event
        yield Done(text="I reached the limit of tool calls for one question; "
                        "here is what I found so far.")

    async def _run_tools(self, calls: list[ToolCall], messages: list[ChatMessage],
                         turn: Turn) -> AsyncIterator[Event]:
        files: list[OutgoingFile] = []
        statuses: list[str] = []
        ctx = context.RunContext(user_id=str(turn.user_id) if turn.user_id else None,
                                 conversation_id=str(turn.conversation_id)
                                 if turn.conversation_id else None,
                                 lang=turn.lang, on_status=statuses.append,
                                 on_file=files.append, options=dict(turn.options))
        for call in calls:
            args = _args_dict(call)
            label = (self._registry.get(call.name).render_label(args)
                     if call.name in self._registry else f"Running {call.name}...")
            yield ToolStarted(call_id=call.id, name=call.name, arguments=args, label=label)
            yield Status(text=label)

        async def one(call: ToolCall) -> ToolOutcome:
            token = context.use(ctx)
            try:
                return await self._registry.call(call.name, call.arguments)
            finally:
                context.reset(token)

        outcomes = await asyncio.gather(*(one(c) for c in calls))
        for call, outcome in zip(calls, outcomes, strict=True):
            yield ToolFinished(call_id=call.id, name=call.name, ok=outcome.ok,
                               summary=outcome.content[:200], elapsed_s=outcome.elapsed_s)
            tool_msg = ChatMessage(role="tool", content=outcome.content, tool_call_id=call.id,
                                   name=call.name)
            messages.append(tool_msg)
            await turn.recorder.message(tool_msg)
        for text in statuses:
            yield Status(text=text)
        for f in files:
            yield File(file=f)
