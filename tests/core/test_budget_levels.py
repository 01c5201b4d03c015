"""Normal mode's degradation levels (like the debate's, seed 002 ADR-010): fewer tool turns
below half a budget left, the cheaper profile below 30 %, fast mode below 15 %; dollar budgets
become a token allowance at the dearest price. Randomised runs through the real runner, real
modes and Postgres, each at the level the gate chose, never overshoot a budget by more than one
model call."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from core.agent import AgentRunner, FastMode, NormalMode
from core.agent.turn import TurnOptions
from core.events import Failed
from core.store import Budget, Spend, Store
from core.testing import ScriptedLLM
from core.tools import ToolRegistry, tool
from core.types import ChatMessage, ChatRef, LLMResponse, ToolCall, Usage
from core.usage_gate import LEVELS, UsageGate, decide, degraded_options, level_for

NOW = datetime(2026, 11, 23, 20, 45, tzinfo=UTC)


def test_levels_by_the_share_left_of_the_tightest_budget():
    b = Budget(daily_tokens=1000, monthly_tokens=100_000)
    expect = {0: ("run", 0), 400: ("run", 0), 501: ("degrade", 1), 690: ("degrade", 1),
              701: ("degrade", 2), 851: ("degrade", 3), 999: ("degrade", 3)}
    for used, (action, level) in expect.items():
        d = decide(b, Spend(day_tokens=used, month_tokens=used), NOW)
        assert (d.action, d.level) == (action, level), used
        assert d.token_allowance == 1000 - used  # the level never changes the allowance
    # the monthly budget is the tighter one here
    d = decide(b, Spend(day_tokens=0, month_tokens=90_000), NOW)
    assert (d.level, d.reason) == (3, "monthly_tokens") and d.token_allowance == 1000
    assert [lv.name for lv in LEVELS] == ["full", "fewer_turns", "cheaper_profile", "fast_mode"]


def test_dollars_left_become_a_token_allowance_at_the_dearest_price():
    # $0.80 left at $10 per million tokens at most: 80,000 tokens
    d = decide(Budget(daily_usd=2.0), Spend(day_usd=1.2, month_usd=1.2), NOW,
               usd_per_token=10 / 1e6)
    assert d.token_allowance == 80_000 and d.level == 1
    assert decide(Budget(daily_usd=2.0), Spend(day_usd=1.0), NOW).token_allowance is None


def test_level_options_for_normal_mode():
    fewer, cheaper, fast = LEVELS[1], LEVELS[2], LEVELS[3]
    assert degraded_options(LEVELS[0], cheap_role="fast") == {}
    assert degraded_options(fewer, cheap_role="fast") == {"max_turns": 4}
    assert degraded_options(cheaper, cheap_role="fast") == {"max_turns": 4,
                                                             "profile_role": "fast"}
    assert degraded_options(cheaper, cheap_role=None) == {"max_turns": 4}  # none cheaper
    assert fast.fast and level_for(0.0) == fast and level_for(1.0) == LEVELS[0]


@given(st.integers(1, 100_000), st.integers(0, 100_000), st.integers(0, 100_000))
def test_the_level_only_deepens_as_spend_grows(limit, used, more):
    b = Budget(daily_tokens=limit)
    first = decide(b, Spend(day_tokens=used, month_tokens=used), NOW)
    later = decide(b, Spend(day_tokens=used + more, month_tokens=used + more), NOW)
    if later.action != "refuse":
        assert first.action != "refuse" and later.level >= first.level
        assert later.token_allowance is not None and first.token_allowance is not None
        assert later.token_allowance <= first.token_allowance
        left = (limit - used - more) / limit
        assert LEVELS[later.level].below > left  # the level's threshold is above what is left


class Loop(BaseModel):
    n: int


def looping_registry() -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg)
    async def fetch_more(n: int) -> Loop:
        """Fetch the next page of the price history.

        Args:
            n: the page
        """
        return Loop(n=n)

    return reg


class CostlyLLM(ScriptedLLM):
    """Asks for a tool again and again (a model that would use every turn), each call costing
    a random number of tokens up to `max_call`; records the roles it was called as."""

    def __init__(self, rng: random.Random, max_call: int) -> None:
        self.rng, self.max_call = rng, max_call
        super().__init__(default=self.respond)

    def respond(self, messages: Sequence[ChatMessage]) -> LLMResponse:
        cost = self.rng.randint(1, self.max_call)
        usage = Usage(model="costly", prompt_tokens=cost // 2, completion_tokens=cost - cost // 2)
        if self.requests[-1]["tools"]:
            return LLMResponse(tool_calls=[ToolCall(id=f"c{len(self.requests)}",
                                                    name="fetch_more",
                                                    arguments=f'{{"n": {len(self.requests)}}}')],
                               usage=usage)
        return LLMResponse(content="That is all the history there is.", usage=usage)


async def test_random_runs_at_every_level_never_overshoot_by_more_than_one_call(
        pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    rng = random.Random(1818)
    levels_seen: set[int] = set()
    stopped = 0
    for case in range(10):
        max_call = rng.randint(50, 1500)
        budget = rng.randint(2000, 20_000)
        gate = UsageGate(store.budgets, default=Budget(daily_tokens=budget), cheap_role="fast")
        user = await store.accounts.user_for("test", f"lv{case}")
        conv = await store.conversations.active(ChatRef(platform="test", chat_id=f"l{case}"),
                                                user)
        for _ in range(rng.randint(3, 10)):
            d = await gate.check(user)
            if d.action == "refuse":
                break
            llm = CostlyLLM(rng, max_call)
            normal = NormalMode(llm=llm, registry=looping_registry(), plan=rng.random() < 0.5)
            runner = AgentRunner(store=store, modes={"normal": normal, "fast": FastMode(llm=llm)})
            level = LEVELS[d.level]
            levels_seen.add(level.index)
            events = [e async for e in runner.run(
                conversation=conv, user_id=user, text="Show NVDA price history, every page",
                mode="fast" if level.fast else "normal",
                options=TurnOptions(**degraded_options(level, cheap_role=gate.cheap_role)),
                token_allowance=d.token_allowance)]
            stopped += any(isinstance(e, Failed) and e.kind == "budget" for e in events)
            roles = [r["role"] for r in llm.requests]
            if level.fast:
                assert roles == ["fast"]
            elif level.cheap:
                assert set(roles) == {"fast"} and len(roles) <= 1 + 4  # a plan, 4 turns
            elif level.max_turns is not None:
                assert "fast" not in roles and len(roles) <= 1 + 4
        spend = await gate.spend(user)
        assert spend.day_tokens <= budget + max_call, (case, budget, max_call, spend)
    assert levels_seen == {0, 1, 2, 3} and stopped  # every level ran; allowances did cut runs
