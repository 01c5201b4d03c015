"""Fast mode: one streamed call with a compact context and no tool loop.

No tool runs, so figures in a fast answer are the model's memory: such an answer is labelled,
and so is one cut at the length limit; template markup is never shown."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import date

from core.agent import prompts
from core.agent.grounding import unsupported_figures
from core.agent.labels import join, label
from core.agent.turn import Turn
from core.events import Done, Event, TextDelta, Thinking
from core.llm.base import Final, TextChunk, ThinkingChunk
from core.llm.markup import MarkupGate, strip_markup
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
        gate = MarkupGate()
        async for item in self._llm.stream(messages, role="fast", max_tokens=FAST_MAX_TOKENS):
            if isinstance(item, TextChunk):
                if shown := gate.feed(item.text):
                    yield TextDelta(text=shown)
            elif isinstance(item, ThinkingChunk):
                yield Thinking(source="fast", text=item.text)
            elif isinstance(item, Final):
                response = item.response
        if rest := gate.flush():
            yield TextDelta(text=rest)
        assert response is not None
        await turn.recorder.usage(response.usage)
        answer = strip_markup(response.content) or label("empty", turn.lang)
        figures = unsupported_figures(answer, [], also=[turn.text, *(m.content for m in history)])
        notes = join(label("cut_off", turn.lang, tokens=response.usage.completion_tokens)
                     if response.finish_reason == "length" else "",
                     label("fast", turn.lang) if figures else "")
        await turn.recorder.message(ChatMessage(role="assistant", content=answer))
        yield Done(text=answer, label=notes)
