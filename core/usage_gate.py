"""The usage gate every run passes: who may run, and how much they may still spend.

A person is a user id (linked accounts share one). Before a run the gate decides: run, run
degraded, or refuse until the budget's reset time. Degradation has levels like the debate's
(seed 002 ADR-010), chosen by the share left of the tightest budget (`LEVELS`): fewer tool
turns, then the cheaper profile (the `fast` role's, when configured differently), then fast
mode; the user is told once per run. The run itself gets the tokens left as an allowance
(token budgets directly; dollar budgets converted at the dearest configured price per token),
checked after each model call (`AgentRunner.run(token_allowance=…)`): it stops once the
allowance is spent, so a budget is overshot by at most the call that crossed it (at most that
call's `max_tokens` plus its prompt). Defaults are unlimited and open: then the gate costs no
database round trip.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal, TypedDict
from uuid import UUID

from core import clock
from core.clock import Clock
from core.store.budgets import Budget, BudgetsRepo, Limits, Spend

Action = Literal["run", "degrade", "refuse"]


@dataclass(frozen=True)
class Level:
    """One step of normal mode's degradation ladder; each keeps the cuts of the ones before."""

    index: int
    name: str  # "full", "fewer_turns", "cheaper_profile", "fast_mode" (words: chat.budget_level_*)
    below: float  # applies when less than this share of the tightest budget is left
    max_turns: int | None  # the tool loop's turns (None: the mode's own)
    cheap: bool  # the cheaper profile (the `fast` role's) for every call
    fast: bool  # fast mode: one call, no tools


LEVELS: tuple[Level, ...] = (
    Level(0, "full", 1.01, None, False, False),
    Level(1, "fewer_turns", 0.5, 4, False, False),
    Level(2, "cheaper_profile", 0.3, 4, True, False),
    Level(3, "fast_mode", 0.15, None, True, True),
)
# a person's limits read from the database are reused this long (changes made through this
# gate take effect at once; another process's after at most this)
CACHE_S = 30.0


@dataclass(frozen=True)
class Decision:
    action: Action
    reason: str = ""  # the budget that decided: "daily_tokens", "monthly_usd", …
    resets_at: datetime | None = None  # when a refused person may run again
    token_allowance: int | None = None  # tokens the run may still spend (None: unlimited)
    level: int = 0  # LEVELS index (0: full); action "degrade" when above 0
    left: float = 1.0  # the share left of the tightest budget


RUN = Decision("run")


def next_day(now: datetime) -> datetime:
    day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    return day + timedelta(days=1)


def next_month(now: datetime) -> datetime:
    now = now.astimezone(UTC)
    year, month = (now.year + 1, 1) if now.month == 12 else (now.year, now.month + 1)
    return datetime(year, month, 1, tzinfo=UTC)


def level_for(left: float, levels: tuple[Level, ...] = LEVELS) -> Level:
    """The deepest level whose threshold `left` (a share of the tightest budget) is under."""
    chosen = levels[0]
    for level in levels:
        if left < level.below:
            chosen = level
    return chosen


def decide(budget: Budget, spend: Spend, now: datetime, *,
           usd_per_token: float = 0.0, levels: tuple[Level, ...] = LEVELS) -> Decision:
    """Run, degrade or refuse for a person who spent `spend` against `budget`.
    `usd_per_token`: the dearest price per token configured (0: unknown), which turns the
    dollars left into a token allowance too."""
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
    if usd_per_token > 0:
        token_left += [int((limit - used) / usd_per_token + 1e-6)  # not 99999.99999…
                       for name, limit, used, _ in checks
                       if limit is not None and name.endswith("usd")]
    allowance = min(token_left) if token_left else None
    shares = [((limit - used) / limit, name) for name, limit, used, _ in checks
              if limit is not None and limit > 0]
    left, tightest = min(shares) if shares else (1.0, "")
    level = level_for(left, levels)
    if level.index:
        return Decision("degrade", tightest, token_allowance=allowance, level=level.index,
                        left=left)
    return Decision("run", token_allowance=allowance, left=left)


class UsageGate:
    """Budgets and access, per person, over the `user_limits` table and the usage rows."""

    def __init__(self, budgets: BudgetsRepo, *, default: Budget | None = None,
                 access: Literal["open", "allowlist"] = "open", usd_per_token: float = 0.0,
                 levels: tuple[Level, ...] = LEVELS, cheap_role: str | None = None,
                 cache_s: float = CACHE_S, clock: Clock | None = None) -> None:
        """`usd_per_token`: the dearest configured price per token (dollar budgets as a token
        allowance); `cheap_role`: the role whose profile is cheaper than the agent's (the
        cheaper-profile level; None: that level only keeps the fewer turns); `clock`: what
        says which day and month it is (None: `core.clock.current()`, read at each call)."""
        self._repo = budgets
        self._clock = clock
        self.default = default or Budget()
        self.access = access
        self.usd_per_token = usd_per_token
        self.levels = levels
        self.cheap_role = cheap_role
        self._cache_s = cache_s
        self._limits: dict[UUID, tuple[float, Limits]] = {}

    def now(self) -> datetime:
        """The instant the budgets' day and month are read at."""
        return (self._clock or clock.current()).now()

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
        now = now or self.now()
        spend = await self._repo.spend(user_id, now)
        return decide(budget, spend, now, usd_per_token=self.usd_per_token,
                      levels=self.levels)

    async def spend(self, user_id: UUID, now: datetime | None = None) -> Spend:
        return await self._repo.spend(user_id, now or self.now())

    async def set_budget(self, user_id: UUID, budget: Budget | None) -> None:
        await self._repo.set_budget(user_id, budget)
        self.forget(user_id)

    async def set_access(self, user_id: UUID, access: str | None) -> None:
        await self._repo.set_access(user_id, access)
        self.forget(user_id)

    def forget(self, user_id: UUID) -> None:
        """Drop the cached limits of `user_id` (their limits changed in this process: a set
        budget or access, or accounts linked into them)."""
        self._limits.pop(user_id, None)


class Degraded(TypedDict, total=False):
    """`core.agent.turn.TurnOptions` fields a degraded level sets."""

    max_turns: int
    profile_role: str


def degraded_options(level: Level, *, cheap_role: str | None) -> Degraded:
    """The `core.agent.turn.TurnOptions` fields that make normal mode run at `level`
    (`core.agent.normal` reads them); `cheap_role`: the role whose profile is cheaper (None:
    none is configured)."""
    out: Degraded = {}
    if level.max_turns is not None:
        out["max_turns"] = level.max_turns
    if level.cheap and cheap_role:
        out["profile_role"] = cheap_role
    return out
