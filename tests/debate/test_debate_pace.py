"""A debate or a podcast on a slow model (issue 35): fewer rounds and longer turn limits from
the model's measured pace, or said up front, with the estimate, when it cannot finish."""

from __future__ import annotations

import re

import pytest

from core.events import Failed, Status
from core.llm import LLMRouter, ModelProfile
from debate.budget import MAX_RUN_S, pace_plan
from podcast import budget as podcast_budget
from tests.debate.helpers import SeatFake, make_mode, run_mode


def paced_router(fake: SeatFake, *, prompt_tps: float, gen_tps: float) -> LLMRouter:
    return LLMRouter(default=ModelProfile(
        name="local", base_url=fake.base_url, model="main-model", timeout_s=60.0,
        max_retries=0, small=True, derive_timeouts=True, prompt_tps=prompt_tps,
        gen_tps=gen_tps))


def test_the_plan_keeps_the_rounds_that_finish_and_lengthens_the_turn_limit():
    fast = pace_plan(10.0, turns_per_round=5, closing_turns=2, max_rounds=3,
                     turn_timeout_s=180.0)
    assert fast.rounds == 3 and fast.turn_timeout_s == 180.0  # 170 s in all: unchanged
    slow = pace_plan(110.0, turns_per_round=5, closing_turns=2, max_rounds=3,
                     turn_timeout_s=180.0)
    assert slow.rounds == 1 and slow.turn_timeout_s == 220.0  # 2 rounds: 1,320 s > 1,200
    assert slow.total_s == pytest.approx(770.0) and slow.total_s <= MAX_RUN_S
    hopeless = pace_plan(400.0, turns_per_round=5, closing_turns=2, max_rounds=3,
                         turn_timeout_s=180.0)
    assert hopeless.rounds is None and hopeless.total_s == pytest.approx(2800.0)
    unknown = pace_plan(None, turns_per_round=5, closing_turns=2, max_rounds=3,
                        turn_timeout_s=180.0)
    assert (unknown.rounds, unknown.turn_timeout_s) == (3, 180.0)


def test_the_podcast_says_when_a_slow_model_cannot_finish():
    ok = podcast_budget.pace(60.0, 30.0, debates=2, workers=2, turn_timeout_s=120.0)
    assert ok.fits and ok.turn_timeout_s == 120.0
    slow = podcast_budget.pace(200.0, 110.0, debates=3, workers=3, turn_timeout_s=120.0)
    assert not slow.fits and slow.turn_timeout_s == 400.0
    assert slow.total_s == pytest.approx(3 * 7 * 110.0 + 4 * 200.0)
    assert podcast_budget.pace(None, None, debates=9, workers=9, turn_timeout_s=120.0).fits


async def test_a_debate_too_slow_to_finish_says_so_up_front_in_the_persons_language(registry):
    async with SeatFake() as fake:
        llm = paced_router(fake, prompt_tps=5.0, gen_tps=1.0)  # ~15 minutes a turn
        events, _ = await run_mode(make_mode(llm, registry, make_pdf=False), "NVDA",
                                   lang="zh")
        await llm.aclose()
    last = events[-1]
    assert isinstance(last, Failed)
    assert last.error.startswith("当前模型太慢，无法完成辩论")
    minutes = [int(n) for n in re.findall(r"约 (\d+) 分钟", last.error)]
    assert minutes and minutes[0] > MAX_RUN_S / 60  # the estimate is said
    assert not fake.requests  # nothing was asked of the model


async def test_a_slow_model_gets_one_round_with_a_longer_turn_limit(registry):
    async with SeatFake() as fake:
        llm = paced_router(fake, prompt_tps=100.0, gen_tps=5.0)  # 110 s a turn
        mode = make_mode(llm, registry, make_pdf=False)
        said: list[object] = []
        limits = mode._paced(mode.limits, "experts", "en", said.append)
        await llm.aclose()
    assert (limits.min_rounds, limits.max_rounds) == (1, 1)
    assert limits.turn_timeout_s == pytest.approx(220.0)
    assert (limits.tool_rounds, limits.max_call_tokens) == (0, 400)  # shorter turns
    assert isinstance(said[0], Status) and "1 round(s)" in said[0].text
