"""Fast mode: one streamed call with a compact context and no tool loop."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import date

from core.agent import prompts
from core.agent.turn import Turn
from core.events import Done, Event, TextDelta, Thinking
from core.llm.base import Final, TextChunk, ThinkingChunk
from core.ports import LLMProvider
from core.types import ChatMessage, LLMResponse

FAST_MAX_TOKENS = 1500
FAST_HISTORY = 6


class FastMode:
    name = "fast"

    def __init__(self, *, llm: LLMProvider, today: Callable[[], date] = date.today) -> None:
        self._llm = llm
        self._today = today

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        history = [m for m in turn.history if m.role in ("user", "assistant") and m.content]
        messages = [
            ChatMessage(role="system", content=prompts.system_prompt(prompts.FAST, self._today())),
            *history[-FAST_HISTORY:],
            ChatMessage(role="user", content=turn.text),
        ]
        response: LLMResponse | None = None
        async for item in self._llm.stream(messages, role="fast", max_tokens=FAST_MAX_TOKENS):
            if isinstance(item, TextChunk):
                yield TextDelta(text=item.text)
            elif isinstance(item, ThinkingChunk):
                yield Thinking(source="fast", text=item.text)
            elif isinstance(item, Final):
                response = item.response
        assert response is not None
        await turn.recorder.usage(response.usage)
        await turn.recorder.message(ChatMessage(role="assistant", content=response.content))
        yield Done(text=response.content)
