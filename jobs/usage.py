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
from core.ports import LLMProvider
from core.store.usage import UsageRepo
from core.types import ChatMessage, LLMResponse
from core.usage_gate import Decision


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
                     max_tokens: int | None = None) -> AsyncIterator[Any]:
        async for item in self._llm.stream(messages, role=role, tools=tools,
                                           max_tokens=max_tokens):
            if isinstance(item, Final):
                await self._usage.record(item.response.usage, user_id=self._user,
                                         conversation_id=None)
            yield item


_BUDGETS = {
    "daily_tokens": ("daily token budget", "每日 token 预算"),
    "daily_usd": ("daily spending budget", "每日费用预算"),
    "monthly_tokens": ("monthly token budget", "每月 token 预算"),
    "monthly_usd": ("monthly spending budget", "每月费用预算"),
}


def skipped_text(kind: str, symbols: Sequence[str], decision: Decision, lang: str) -> str:
    """The push a subscriber over budget gets instead of the report or podcast."""
    zh = lang == "zh"
    which = _BUDGETS.get(decision.reason, (decision.reason, decision.reason))[zh]
    at = decision.resets_at or datetime.now(UTC)
    when = f"{at.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    names = ", ".join(symbols)
    if zh:
        what = "播客" if kind == "podcast" else "报告"
        return (f"你的定时{what}（{names}）本次已跳过：你的{which}已用完，将于 {when} 重置，"
                "之后照常推送。")
    what = "podcast" if kind == "podcast" else "report"
    return (f"Your scheduled {what} ({names}) was skipped: you have used your {which}. It "
            f"resets at {when}; the next ones come as usual after that.")
