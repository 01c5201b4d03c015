"""The usage gate every run passes: who may run, and how much they may still spend.

A person is a user id (linked accounts share one). Before a run the gate decides: run, run
degraded (little budget left: the cheaper fast mode, the user told), or refuse until the
budget's reset time. The run itself gets the tokens left as an allowance, checked after each
model call (`AgentRunner.run(token_allowance=…)`): it stops once the allowance is spent, so a
budget is overshot by at most the call that crossed it (at most that call's `max_tokens` plus
its prompt). Defaults are unlimited and open: then the gate costs no database round trip.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal
from uuid import UUID

from core.store.budgets import Budget, BudgetsRepo, Limits, Spend

Action = Literal["run", "degrade", "refuse"]
# below this share of any budget left, runs are degraded (fast mode)
DEGRADE_BELOW = 0.2
# a person's limits read from the database are reused this long (changes made through this
# gate take effect at once; another process's after at most this)
CACHE_S = 30.0


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""  # the budget that decided: "daily_tokens", "monthly_usd", …
    resets_at: datetime | None = None  # when a refused person may run again
    token_allowance: int | None = None  # tokens the run may still spend (None: unlimited)


RUN = Decision("run")


def next_day(now: datetime) -> datetime:
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def next_month(now: datetime) -> datetime:
    now = now.astimezone(UTC)
    year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def decide(budget: Budget, spend: Spend, now: datetime, *,
           degrade_below: float = DEGRADE_BELOW) -> Decision:
    """Run, degrade or refuse for a person who spent `spend` against `budget`."""
    checks: list[tuple[str, float | None, float, datetime]] = [
        ("daily_tokens", budget.daily_tokens, spend.day_tokens, next_day(now)),
        ("daily_usd", budget.daily_usd, spend.day_usd, next_day(now)),
        ("monthly_tokens", budget.monthly_tokens, spend.month_tokens, next_month(now)),
        ("monthly_usd", budget.monthly_usd, spend.month_usd, next_month(now)),
    ]
    refused = [(name, reset) for name, limit, used, reset in checks
               if limit is not None and used >= limit]
    if refused:  # the latest reset: the person may run again once every spent budget resets
        name, reset = max(refused, key=lambda r: r[1])
        return Decision("refuse", name, reset)
    token_left = [int(limit - used) for name, limit, used, _ in checks
                  if limit is not None and name.endswith("tokens")]
    allowance = min(token_left) if token_left else None
    low = [name for name, limit, used, _ in checks
           if limit is not None and limit > 0 and (limit - used) / limit < degrade_below]
    if low:
        return Decision("degrade", low[0], token_allowance=allowance)
    return Decision("run", token_allowance=allowance)


class UsageGate:
    """Budgets and access, per person, over the `user_limits` table and the usage rows."""

    def __init__(self, budgets: BudgetsRepo, *, default: Budget | None = None,
                 access: Literal["open", "allowlist"] = "open",
                 degrade_below: float = DEGRADE_BELOW, cache_s: float = CACHE_S) -> None:
        self._repo = budgets
        self.default = default or Budget()
        self.access = access
        self._degrade_below = degrade_below
        self._cache_s = cache_s
        self._limits: dict[UUID, tuple[float, Limits]] = {}

    async def limits(self, user_id: UUID) -> Limits:
        hit = self._limits.get(user_id)
        now = time.monotonic()
        if hit is not None and now - hit[0] < self._cache_s:
            return hit[1]
        got = await self._repo.limits(user_id)
        if len(self._limits) > 100_000:
            self._limits.clear()
        self._limits[user_id] = (now, got)
        return got

    async def budget_of(self, user_id: UUID) -> Budget:
        own = (await self.limits(user_id)).budget
        return own if own is not None else self.default

    async def admitted(self, user_id: UUID) -> bool:
        """Blocked people never; in allowlist mode only the allowed."""
        access = (await self.limits(user_id)).access
        if access == "block":
            return False
        return self.access == "open" or access == "allow"

    async def check(self, user_id: UUID, now: datetime | None = None) -> Decision:
        budget = await self.budget_of(user_id)
        if budget.unlimited:
            return RUN
        now = now or datetime.now(UTC)
        spend = await self._repo.spend(user_id, now)
        return decide(budget, spend, now, degrade_below=self._degrade_below)

    async def spend(self, user_id: UUID, now: datetime | None = None) -> Spend:
        return await self._repo.spend(user_id, now or datetime.now(UTC))

    async def set_budget(self, user_id: UUID, budget: Budget | None) -> None:
        await self._repo.set_budget(user_id, budget)
        self._limits.pop(user_id, None)

    async def set_access(self, user_id: UUID, access: str | None) -> None:
        await self._repo.set_access(user_id, access)
        self._limits.pop(user_id, None)
