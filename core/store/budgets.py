"""A person's own budgets and access (table user_limits), and what they spent today and this
month (from the usage rows of every linked account: they share one user id)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import asyncpg


@dataclass(frozen=True)
class Budget:
    """Limits per UTC day and calendar month, in tokens and US dollars; None is unlimited."""

    daily_tokens: int | None = None
    monthly_tokens: int | None = None
    daily_usd: float | None = None
    monthly_usd: float | None = None

    @property
    def unlimited(self) -> bool:
        return (self.daily_tokens is None and self.monthly_tokens is None
                and self.daily_usd is None and self.monthly_usd is None)


@dataclass(frozen=True)
class Spend:
    day_tokens: int = 0
    day_usd: float = 0.0
    month_tokens: int = 0
    month_usd: float = 0.0


@dataclass(frozen=True)
class Limits:
    access: str | None  # "allow", "block" or None
    budget: Budget | None  # None: the default budget applies


@dataclass(frozen=True)
class Spender:
    user_id: UUID
    display_name: str
    tokens: int
    cost_usd: float


def _num(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


class BudgetsRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def limits(self, user_id: UUID) -> Limits:
        row = await self._pool.fetchrow(
            "SELECT access, daily_tokens, monthly_tokens, daily_usd, monthly_usd"
            " FROM user_limits WHERE user_id=$1", user_id)
        if row is None:
            return Limits(None, None)
        budget = Budget(row["daily_tokens"], row["monthly_tokens"], _num(row["daily_usd"]),
                        _num(row["monthly_usd"]))
        return Limits(row["access"], None if budget.unlimited else budget)

    async def set_budget(self, user_id: UUID, budget: Budget | None) -> None:
        """The person's own budget (None: back to the default)."""
        b = budget or Budget()
        await self._pool.execute(
            "INSERT INTO user_limits (user_id, daily_tokens, monthly_tokens, daily_usd,"
            " monthly_usd) VALUES ($1,$2,$3,$4,$5) ON CONFLICT (user_id) DO UPDATE SET"
            " daily_tokens=$2, monthly_tokens=$3, daily_usd=$4, monthly_usd=$5,"
            " updated_at=now()",
            user_id, b.daily_tokens, b.monthly_tokens, b.daily_usd, b.monthly_usd)

    async def set_access(self, user_id: UUID, access: str | None) -> None:
        await self._pool.execute(
            "INSERT INTO user_limits (user_id, access) VALUES ($1,$2)"
            " ON CONFLICT (user_id) DO UPDATE SET access=$2, updated_at=now()",
            user_id, access)

    async def spend(self, user_id: UUID, now: datetime) -> Spend:
        """Today's (UTC) and this month's tokens and cost, in one round trip."""
        row = await self._pool.fetchrow(
            "SELECT coalesce(sum(prompt_tokens + completion_tokens)"
            "        FILTER (WHERE created_at >= date_trunc('day', $2::timestamptz"
            "                AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0) dt,"
            " coalesce(sum(cost_usd) FILTER (WHERE created_at >= date_trunc('day',"
            "        $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'), 0) dc,"
            " coalesce(sum(prompt_tokens + completion_tokens), 0) mt,"
            " coalesce(sum(cost_usd), 0) mc"
            " FROM usage WHERE user_id=$1 AND created_at >= date_trunc('month',"
            " $2::timestamptz AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'", user_id, now)
        assert row is not None
        return Spend(int(row["dt"]), float(row["dc"]), int(row["mt"]), float(row["mc"]))

    async def top_spenders(self, since: datetime, limit: int = 10) -> list[Spender]:
        rows = await self._pool.fetch(
            "SELECT u.user_id, coalesce(us.display_name, '') name,"
            " sum(u.prompt_tokens + u.completion_tokens) t, sum(u.cost_usd) c"
            " FROM usage u LEFT JOIN users us ON us.id = u.user_id"
            " WHERE u.created_at >= $1 AND u.user_id IS NOT NULL"
            " GROUP BY u.user_id, us.display_name ORDER BY c DESC, t DESC LIMIT $2",
            since, limit)
        return [Spender(UUID(str(r["user_id"])), r["name"], int(r["t"]), float(r["c"]))
                for r in rows]

    async def set_conversation_budget(self, conversation_id: UUID, tokens: int | None) -> None:
        """Seed 003's per-conversation token budget (the conversation closes when it is hit)."""
        await self._pool.execute(
            "UPDATE conversations SET token_budget=$2 WHERE id=$1", conversation_id, tokens)
