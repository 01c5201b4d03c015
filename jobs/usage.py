"""Scheduled reports and podcasts pass the same usage gate as a question (`core.usage_gate`):
a subscriber over budget gets no model run, only a notice saying the push was skipped and when
the budget resets; what a run does spend is recorded against the subscriber (no
conversation), so the gate counts it like any other use."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

from core.llm.base import Final
from core.localize import word
from core.ports import LLMProvider
from core.store.usage import UsageRepo
from core.types import ChatMessage, LLMResponse
from core.usage_gate import Decision
from core.words import t


class MeteredLLM:
    """An `LLMProvider` that records each call's usage for one person."""

    def __init__(self, llm: LLMProvider, usage: UsageRepo, user_id: UUID) -> None:
        self._llm = llm
        self._usage = usage
        self._user = user_id

    async def complete(self, messages: Sequence[ChatMessage], *, role: str = "agent",
                       tools: Sequence[dict[str, Any]] | None = None,
                       max_tokens: int | None = None, json_mode: bool = False) -> LLMResponse:
        resp = await self._llm.complete(messages, role=role, tools=tools, max_tokens=max_tokens,
                                        json_mode=json_mode)
        await self._usage.record(resp.usage, user_id=self._user, conversation_id=None)
        return resp

    async def stream(self, messages: Sequence[ChatMessage], *, role: str = "agent",
                     tools: Sequence[dict[str, Any]] | None = None,
                     max_tokens: int | None = None,
                     require_tool: bool = False) -> AsyncIterator[Any]:
        async for item in self._llm.stream(messages, role=role, tools=tools,
                                           max_tokens=max_tokens, require_tool=require_tool):
            if isinstance(item, Final):
                await self._usage.record(item.response.usage, user_id=self._user,
                                         conversation_id=None)
            yield item


def skipped_text(key: str, symbols: Sequence[str], decision: Decision, lang: str) -> str:
    """The push a subscriber over budget gets instead of what it subscribed to: the kind's
    notice (`key`, `jobs.kinds.JobKind.skipped`) naming the symbols, the budget and its reset."""
    which = word("chat.budget_", decision.reason, lang)
    at = decision.resets_at or datetime.now(UTC)
    when = f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    return t(key, lang, names=", ".join(symbols), which=which, when=when)
