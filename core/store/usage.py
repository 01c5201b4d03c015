"""One row per LLM call: who, which model and role, tokens, cost, latency."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

import asyncpg

from core.types import Usage


@dataclass(frozen=True)
class UsageTotals:
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    cached_tokens: int = 0  # of the prompt tokens, those the provider served from its cache

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class UsageRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def record(self, usage: Usage, *, user_id: UUID | None,
                     conversation_id: UUID | None) -> None:
        """One row per call; the conversation's token count moves in the same round trip."""
        await self._pool.execute(
            "WITH u AS (INSERT INTO usage (user_id, conversation_id, provider, model, role,"
            " prompt_tokens, completion_tokens, cost_usd, latency_ms, cached_tokens)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10) RETURNING conversation_id)"
            " UPDATE conversations SET token_used = token_used + $6 + $7, updated_at = now()"
            " WHERE id = (SELECT conversation_id FROM u)",
            user_id, conversation_id, usage.provider, usage.model, usage.role,
            usage.prompt_tokens, usage.completion_tokens, usage.cost_usd,
            int(usage.latency_s * 1000), usage.cached_tokens)

    async def _totals(self, where: str, arg: UUID) -> UsageTotals:
        row = await self._pool.fetchrow(
            "SELECT count(*) n, coalesce(sum(prompt_tokens),0) p,"
            " coalesce(sum(completion_tokens),0) c, coalesce(sum(cost_usd),0) cost,"
            " coalesce(sum(cached_tokens),0) cached"
            f" FROM usage WHERE {where}", arg)
        assert row is not None
        return UsageTotals(int(row["n"]), int(row["p"]), int(row["c"]), float(row["cost"]),
                           int(row["cached"]))

    async def for_conversation(self, conversation_id: UUID) -> UsageTotals:
        return await self._totals("conversation_id=$1", conversation_id)

    async def for_user_this_month(self, user_id: UUID) -> UsageTotals:
        return await self._totals(
            "user_id=$1 AND created_at >= date_trunc('month', now())", user_id)
