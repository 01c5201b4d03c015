"""A per-debate token budget too small for the full debate: degrade, then refuse clearly."""

from __future__ import annotations

from core.testing import ScriptedLLM
from debate.budget import LEVELS, Budget, estimate_tokens
from debate.engine import Engine, Limits, Profiles, debate_tools
from debate.evidence import gather_evidence
from debate.experts import ExpertsPanel
from tests.debate.helpers import (
    SeatFake,
    fake_bars,
    make_mode,
    moderator,
    produce,
    reply,
    router,
    run_mode,
)
from tools.symbol_lookup import resolve_symbol

EXPERTS = ("fundamental", "risk", "growth", "sentiment")


async def _costs(registry, rounds: int) -> list[int]:
    """What the panel projects for `rounds` rounds at each level (same inputs as the mode)."""
    ev = await gather_evidence(resolve_symbol("NVDA"), bars_loader=fake_bars, registry=registry)
    engine = Engine(llm=ScriptedLLM(), tools=debate_tools(registry), profiles=Profiles(),
                    limits=Limits(), budget=Budget(None), emit=lambda _e: None)
    panel = ExpertsPanel(engine=engine, evidence=ev)
    return [panel.cost(1, rounds, lv) for lv in LEVELS]


def _scripts() -> dict:
    s = {e: [reply("BUY", 0.6)] * 3 for e in EXPERTS}
    s["moderator"] = [moderator("continue", "BUY")] * 2
    return s


def test_estimates_are_conservative_for_chinese_text():
    assert estimate_tokens("abcd" * 100) == 101
    assert estimate_tokens("贵州茅台" * 10) == 41


async def test_budget_short_of_two_full_rounds_degrades_to_cheaper_profiles(registry):
    two = await _costs(registry, 2)
    assert two[0] > two[1] > two[2] > two[3]
    budget = two[2] + 50  # affords two rounds only from level 2 (cheaper profiles) on
    async with SeatFake(defaults={e: reply("BUY", 0.6) for e in EXPERTS}
                        | {"moderator": moderator("continue", "BUY")}) as fake:
        llm = router(fake, roles={"moderator": "cheap-model"})
        mode = make_mode(llm, registry, make_pdf=False, budget_tokens=budget)
        outcome, events, _ = await produce(mode, "NVDA")
        await llm.aclose()
    meta = outcome.artifact.meta
    assert meta.degradation_level == 2 and len(outcome.artifact.experts.rounds) == 2
    assert any("shorter context, cheaper profiles" in d for d in meta.degradations)
    assert any(t.startswith("Budget: level 2") for t in
               [getattr(e, "text", "") for e in events])
    expert_models = {b["model"] for e in EXPERTS for b in fake.by_seat[e]}
    assert expert_models == {"cheap-model"}  # the experts moved to the cheap profile
    assert all(not t.failed for r in outcome.artifact.experts.rounds
               for t in r.turns().values())
    # level 2 keeps one tool round: tools were still offered
    assert all("tools" in b for b in fake.by_seat["risk"])
    assert meta.tokens_used <= budget and meta.stop_reason


async def test_budget_for_only_one_round_runs_one_and_says_so(registry):
    one, two = await _costs(registry, 1), await _costs(registry, 2)
    budget = (one[-1] + two[-1]) // 2  # one round at the cheapest level fits, two do not
    async with SeatFake(_scripts()) as fake:
        llm = router(fake)
        mode = make_mode(llm, registry, make_pdf=False, budget_tokens=budget)
        outcome, _, _ = await produce(mode, "NVDA")
        await llm.aclose()
    art = outcome.artifact
    assert len(art.experts.rounds) == 1 and art.meta.rounds_planned == 1
    assert art.meta.degradation_level == 3
    assert any("only 1 round(s): the budget cannot pay for 2" in d
               for d in art.meta.degradations)
    assert all("tools" not in b for e in EXPERTS for b in fake.by_seat[e])  # no tool rounds
    assert len(fake.by_seat["moderator"]) == 1  # the moderator still concludes
    assert "This is the end of the debate" in fake.by_seat["moderator"][0]["messages"][-1][
        "content"]
    assert art.experts.conclusion.text and not art.experts.conclusion.consensus
    assert art.meta.tokens_used <= budget


async def test_budget_too_small_for_any_round_fails_before_spending(registry):
    one = await _costs(registry, 1)
    async with SeatFake(_scripts()) as fake:
        llm = router(fake)
        mode = make_mode(llm, registry, make_pdf=False, budget_tokens=one[-1] // 2)
        events, _ = await run_mode(mode, "NVDA")
        bb = make_mode(llm, registry, make_pdf=False, budget_tokens=500, panel="bull_bear")
        bb_events, _ = await run_mode(bb, "NVDA")
        await llm.aclose()
    assert fake.requests == []
    failed = events[-1]
    assert failed.type == "failed" and failed.kind == "input"
    assert "too small for even one round of 4 experts" in failed.error
    assert "BULLPEN_DEBATE_TOKEN_BUDGET" in failed.error
    assert bb_events[-1].type == "failed" and "too small for a bull/bear" in (
        bb_events[-1].error)


async def test_reservations_never_let_parallel_turns_overspend():
    budget = Budget(1000)
    with budget.reserve(600):
        assert not budget.fits(500)
        assert budget.fits(400)
        assert not budget.fits(300, floor=200)
    assert budget.remaining() == 1000


async def test_a_chinese_reader_gets_the_budget_cuts_and_refusals_in_chinese(registry):
    """The budget's notes reach the chat, the report's caveats and its stop line: under /lang zh
    they were English sentences (`level 2: shorter context, cheaper profiles ...`)."""
    from bot.eval.score import english_words

    two = await _costs(registry, 2)
    async with SeatFake(defaults={e: reply("BUY", 0.6) for e in EXPERTS}
                        | {"moderator": moderator("continue", "BUY")}) as fake:
        llm = router(fake, roles={"moderator": "cheap-model"})
        mode = make_mode(llm, registry, make_pdf=False, budget_tokens=two[2] + 50)
        outcome, events, _ = await produce(mode, "NVDA", lang="zh")
        small = make_mode(llm, registry, make_pdf=False, budget_tokens=500)
        refused, _ = await run_mode(small, "NVDA", lang="zh")
        bb = make_mode(llm, registry, make_pdf=False, budget_tokens=500, panel="bull_bear")
        bb_refused, _ = await run_mode(bb, "NVDA", lang="zh")
        await llm.aclose()
    meta = outcome.artifact.meta
    assert meta.degradation_level >= 2  # Chinese prompts cost more: maybe one level further
    assert any("缩短上下文、换用较便宜的模型" in d for d in meta.degradations)
    shown = [*meta.degradations, meta.stop_reason, refused[-1].error, bb_refused[-1].error,
             *(getattr(e, "text", "") for e in events if e.type == "status")]
    assert all(shown) and [english_words(s) for s in shown] == [[] for _ in shown]
    assert "BULLPEN_DEBATE_TOKEN_BUDGET" in refused[-1].error  # the setting keeps its name
