"""The usage gate: run / degrade / refuse with the reset time, and a run that never overshoots
a budget by more than one model call (randomised over sequences of runs, real runner and
Postgres)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from core.agent import AgentRunner
from core.agent.turn import Turn
from core.events import Done, Event, Failed, TextDelta
from core.rate_limit import Rate, RateLimiter
from core.store import Budget, Spend, Store
from core.types import ChatRef, Usage
from core.usage_gate import UsageGate, decide, next_day, next_month

NOW = datetime(2026, 11, 23, 20, 45, tzinfo=UTC)


def test_refused_at_the_daily_budget_until_midnight_utc():
    d = decide(Budget(daily_tokens=1000), Spend(day_tokens=1000, month_tokens=1000), NOW)
    assert d.action == "refuse" and d.reason == "daily_tokens"
    assert d.resets_at == datetime(2026, 11, 24, tzinfo=UTC)


def test_refused_at_the_monthly_cost_until_the_first_of_next_month():
    d = decide(Budget(daily_usd=5.0, monthly_usd=10.0), Spend(day_usd=1.0, month_usd=10.5), NOW)
    assert (d.action, d.reason, d.resets_at) == ("refuse", "monthly_usd",
                                                 datetime(2026, 12, 1, tzinfo=UTC))
    assert next_month(datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == datetime(2027, 1, 1,
                                                                               tzinfo=UTC)
    assert next_day(datetime(2026, 12, 31, 23, 59, tzinfo=UTC)) == datetime(2027, 1, 1,
                                                                             tzinfo=UTC)


def test_both_spent_waits_for_the_later_reset():
    d = decide(Budget(daily_tokens=10, monthly_tokens=100), Spend(20, 0, 100, 0), NOW)
    assert d.reason == "monthly_tokens" and d.resets_at == next_month(NOW)


def test_little_left_degrades_and_the_allowance_is_the_tightest_token_budget():
    d = decide(Budget(daily_tokens=1000, monthly_tokens=50_000), Spend(900, 0, 1000, 0), NOW)
    assert d.action == "degrade" and d.reason == "daily_tokens" and d.token_allowance == 100
    d = decide(Budget(daily_tokens=1000, monthly_tokens=50_000), Spend(100, 0, 49_500, 0), NOW)
    assert d.action == "degrade" and d.token_allowance == 500
    d = decide(Budget(daily_tokens=1000), Spend(100, 0, 100, 0), NOW)
    assert d.action == "run" and d.token_allowance == 900
    assert decide(Budget(daily_usd=1.0), Spend(), NOW).token_allowance is None


@given(st.lists(st.integers(0, 5000), min_size=4, max_size=4), st.integers(0, 5000),
       st.integers(0, 5000))
def test_decide_refuses_exactly_when_a_budget_is_spent(limits, day_used, month_extra):
    b = Budget(daily_tokens=limits[0], monthly_tokens=limits[1])
    s = Spend(day_tokens=day_used, month_tokens=day_used + month_extra)
    d = decide(b, s, NOW)
    spent = day_used >= limits[0] or day_used + month_extra >= limits[1]
    assert (d.action == "refuse") == spent
    if not spent:
        assert d.token_allowance == min(limits[0] - day_used, limits[1] - day_used - month_extra)


def test_rate_limiter_counts_a_sliding_window_and_says_when():
    now = [0.0]
    rl = RateLimiter({"message": Rate(3, 60.0), "off": Rate(0, 1.0)}, clock=lambda: now[0])
    from uuid import uuid4

    a, b = uuid4(), uuid4()
    assert [rl.hit(a, "message") for _ in range(3)] == [None, None, None]
    assert rl.hit(a, "message") == 60.0
    assert rl.hit(b, "message") is None  # per person
    now[0] = 30.0
    assert rl.hit(a, "message") == 30.0  # refusals do not count
    now[0] = 60.0
    assert rl.hit(a, "message") is None
    assert all(rl.hit(a, "off") is None for _ in range(100))


class CallLoop:
    """A mode making up to `len(costs)` model calls of the given token costs, one event each."""

    def __init__(self, costs: list[int]) -> None:
        self.costs = costs

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        for cost in self.costs:
            await turn.recorder.usage(Usage(model="loop", prompt_tokens=cost // 2,
                                            completion_tokens=cost - cost // 2))
            yield TextDelta(text=".")
        yield Done(text="done")


async def test_random_runs_never_overshoot_a_budget_by_more_than_one_call(pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    rng = random.Random(18)
    total_refused = total_stopped = 0
    for case in range(12):
        max_call = rng.randint(50, 2000)
        budget = rng.randint(0, 20_000)
        gate = UsageGate(store.budgets, default=Budget(daily_tokens=budget,
                                                       monthly_tokens=budget * 3))
        user = await store.accounts.user_for("test", f"prop{case}")
        conv = await store.conversations.active(ChatRef(platform="test", chat_id=f"p{case}"),
                                                user)
        refused = stopped = 0
        for _ in range(rng.randint(1, 8)):
            costs = [rng.randint(1, max_call) for _ in range(rng.randint(1, 15))]
            runner = AgentRunner(store=store, modes={"normal": CallLoop(costs)})
            d = await gate.check(user)
            if d.action == "refuse":
                refused += 1
                continue
            events = [e async for e in runner.run(conversation=conv, user_id=user, text="q",
                                                   token_allowance=d.token_allowance)]
            stopped += any(isinstance(e, Failed) and e.kind == "budget" for e in events)
        spend = await gate.spend(user)
        assert spend.day_tokens <= budget + max_call, (case, budget, max_call, spend)
        if spend.day_tokens >= budget:  # once spent, the next run is refused
            assert (await gate.check(user)).action == "refuse"
        total_refused, total_stopped = total_refused + refused, total_stopped + stopped
    assert total_refused and total_stopped  # the cases did reach both limits


async def test_a_person_budget_overrides_the_default_at_once(pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    gate = UsageGate(store.budgets, cache_s=3600)
    user = await store.accounts.user_for("test", "over")
    await store.usage.record(Usage(prompt_tokens=60, completion_tokens=40, cost_usd=0.5),
                             user_id=user, conversation_id=None)
    assert (await gate.check(user)).action == "run"  # default: unlimited, no spend query
    await gate.set_budget(user, Budget(daily_tokens=100))
    assert (await gate.check(user)).action == "refuse"
    await gate.set_budget(user, Budget(daily_usd=1.0))
    d = await gate.check(user)
    assert d.action == "run" and d.token_allowance is None
    await gate.set_budget(user, None)
    assert await gate.budget_of(user) == Budget()


async def test_access_open_allowlist_and_block(pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    a, b = (await store.accounts.user_for("test", "a"), await store.accounts.user_for("test", "b"))
    open_gate = UsageGate(store.budgets)
    assert await open_gate.admitted(a)
    await open_gate.set_access(a, "block")
    assert not await open_gate.admitted(a)
    closed = UsageGate(store.budgets, access="allowlist")
    assert not await closed.admitted(b)
    await closed.set_access(b, "allow")
    assert await closed.admitted(b)
