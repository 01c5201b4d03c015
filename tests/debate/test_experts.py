"""The experts panel against the local OpenAI-compatible server, every seat scripted."""

from __future__ import annotations

import json

from core import words
from debate import prompts
from debate.experts import consensus
from debate.models import DebateArtifact, DebateRound, ExpertTurn, TickerDebateOutput
from tests.debate.helpers import (
    SeatFake,
    fake_bars,
    make_mode,
    moderator,
    produce,
    reply,
    router,
    texts,
)
from tests.fakes.openai_server import Turn

QUOTE_SOURCE = {"type": "data", "tool": "get_quote", "ref": '{"symbol":"NVDA"}'}


def _turn(action: str, conf: float, failed: bool = False) -> ExpertTurn:
    return ExpertTurn(text="x", action=action, confidence=conf,  # type: ignore[arg-type]
                      failed=failed)


def test_consensus_rule_is_strict():
    def rnd(*turns: ExpertTurn) -> DebateRound:
        return DebateRound(round=2, fundamental=turns[0], risk=turns[1], growth=turns[2],
                           sentiment=turns[3])

    assert consensus(rnd(*[_turn("BUY", 0.7)] * 4), 0.7, 4) == "BUY"
    assert consensus(rnd(*[_turn("BUY", 0.9)] * 3, _turn("BUY", 0.69)), 0.7, 4) is None
    assert consensus(rnd(*[_turn("SELL", 0.9)] * 3, _turn("HOLD", 0.9)), 0.7, 4) is None
    assert consensus(rnd(*[_turn("BUY", 0.9)] * 3, _turn("BUY", 0.9, failed=True)), 0.7,
                     4) is None
    assert consensus(rnd(*[_turn("HOLD", 0.8)] * 4), 0.85, 4) is None  # configurable


async def test_experts_debate_produces_a_valid_artifact(registry):
    scripts = {
        "fundamental": [Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                        reply("BUY", 0.8, ["S1", QUOTE_SOURCE]), reply("BUY", 0.8, ["S2"])],
        "risk": [reply("SELL", 0.62), reply("HOLD", 0.6)],
        "growth": [reply("BUY", 0.75), reply("BUY", 0.75)],
        "sentiment": [reply("HOLD", 0.55), reply("BUY", 0.7)],
        "moderator": [moderator("stop", "BUY", "Three of four lean BUY; risk holds.")],
    }
    async with SeatFake(scripts) as fake:
        llm = router(fake, roles={"moderator": "cheap-model"})
        mode = make_mode(llm, registry, make_pdf=False)
        outcome, events, rec = await produce(mode, "NVDA", question="Is it a buy?")
        await llm.aclose()
    art: DebateArtifact = outcome.artifact
    out = art.experts
    assert out is not None and art.meta.panel == "experts" and not art.meta.offline
    # the seed's JSON, round-tripped through its schema
    again = TickerDebateOutput.model_validate_json(out.model_dump_json())
    assert set(json.loads(out.model_dump_json())) == {"ticker", "date", "rounds", "conclusion"}
    assert again.ticker == "NVDA" and again.date == "20250701" and len(again.rounds) == 2
    first = out.rounds[0]
    assert first.risk is not None and (first.risk.action, first.risk.confidence) == ("SELL", 0.62)
    assert first.fundamental is not None
    kinds = [s.type for s in first.fundamental.sources]
    assert kinds == ["chart", "data"]  # the tool result it fetched is a valid source
    assert out.conclusion.action == "BUY" and not out.conclusion.consensus
    # conclusion confidence is computed in code: BUY backing over the whole panel
    assert out.conclusion.confidence == round((0.8 + 0.75 + 0.7) / 4, 4)
    assert "Round 1 - Risk: SELL 0.62" in texts(events)
    assert any(e.type == "tool_started" and e.name == "get_quote" for e in events)
    # static prompt parts first: every expert request starts with the same rules, and the
    # context message is identical across experts and rounds (provider caches hit)
    expert_reqs = [b for s in ("fundamental", "risk", "growth", "sentiment")
                   for b in fake.by_seat[s]]
    assert all(b["messages"][0]["content"].startswith(prompts.EXPERT_RULES) for b in expert_reqs)
    assert len({b["messages"][1]["content"] for b in expert_reqs}) == 1
    assert all(b["model"] == "main-model" for b in expert_reqs)
    assert [b["model"] for b in fake.by_seat["moderator"]] == ["cheap-model"]
    # usage recorded per call and per seat
    assert len(rec.usages) == len(fake.requests)
    seats = {u.seat: u for u in art.meta.usage}
    assert seats["fundamental"].calls == 3 and seats["moderator"].role == "moderator"
    assert art.meta.tokens_used == sum(u.total_tokens for u in rec.usages)


async def test_minimum_two_rounds_even_with_round_one_consensus(registry):
    scripts = {s: [reply("BUY", 0.9), reply("BUY", 0.9)]
               for s in ("fundamental", "risk", "growth", "sentiment")}
    scripts["moderator"] = [moderator("stop", "BUY", "Unanimous BUY.")]
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, _, _ = await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()
    out = outcome.artifact.experts
    assert len(out.rounds) == 2  # every expert reacted to the others at least once
    assert len(fake.by_seat["moderator"]) == 1  # not asked before the minimum
    assert "Round 2 of at most 3 is over" in fake.by_seat["moderator"][0]["messages"][-1][
        "content"]
    assert out.conclusion.consensus and out.conclusion.action == "BUY"
    assert outcome.artifact.meta.stop_reason.startswith("consensus on BUY after round 2")
    # round 2 prompts carry round 1 for each expert to react to, by name
    second = fake.by_seat["risk"][1]["messages"][-1]["content"]
    assert "Round 1:" in second and "- fundamental (BUY 0.90)" in second


async def test_consensus_overrides_the_moderator_and_needs_every_confidence(registry):
    scripts = {s: [reply("SELL", 0.8), reply("SELL", 0.8)]
               for s in ("fundamental", "risk", "growth")}
    scripts["sentiment"] = [reply("SELL", 0.8), reply("SELL", 0.65)]  # just under 0.7
    scripts["moderator"] = [moderator("continue", "SELL"), moderator("stop", "BUY", "Buy.")]
    scripts["fundamental"].append(reply("SELL", 0.8))
    for s in ("risk", "growth"):
        scripts[s].append(reply("SELL", 0.8))
    scripts["sentiment"].append(reply("SELL", 0.75))
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, _, _ = await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()
    art = outcome.artifact
    out = art.experts
    assert len(out.rounds) == 3  # round 2: four SELLs but one at 0.65, so no consensus
    assert "no: " in fake.by_seat["moderator"][0]["messages"][-1]["content"]
    assert "Consensus (decided by the code): yes" in fake.by_seat["moderator"][1][
        "messages"][-1]["content"]
    # the moderator said BUY; the strict consensus (all SELL >= 0.7) stands
    assert out.conclusion.consensus and out.conclusion.action == "SELL"
    assert any("consensus SELL stands" in n for n in art.meta.notes)


async def test_moderator_stops_early_before_max_rounds(registry):
    experts = ("fundamental", "risk", "growth", "sentiment")
    split = {"fundamental": "BUY", "risk": "SELL", "growth": "BUY", "sentiment": "HOLD"}
    scripts = {s: [reply(split[s], 0.6)] * 2 for s in experts}
    scripts["moderator"] = [moderator("stop", "HOLD", "Views are entrenched.",
                                      reason="positions repeat")]
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, _, _ = await produce(make_mode(llm, registry, max_rounds=4, make_pdf=False),
                                      "NVDA")
        await llm.aclose()
    art = outcome.artifact
    assert art.meta.rounds_planned == 4 and len(art.experts.rounds) == 2
    assert art.meta.stop_reason == "the moderator stopped after round 2: positions repeat"
    assert art.experts.conclusion.action == "HOLD" and not art.experts.conclusion.consensus
    assert sum(len(fake.by_seat[s]) for s in experts) == 8


async def test_invented_sources_are_dropped_and_reported(registry):
    year_start = str((await fake_bars("NVDA")).index[-252].date())
    scripts = {
        "fundamental": [Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                        reply("BUY", 0.7, ["S1", "S99", {"type": "article", "pk": "id#made-up",
                                                         "title": "Invented scoop"}]),
                        reply("BUY", 0.7, ["S1"])],
        # risk cites a real chart by value; in round 2 the quote only the fundamental expert
        # fetched (and never cited, so no transcript showed it to risk)
        "risk": [reply("SELL", 0.7, [{"type": "chart", "ticker": "nvda",
                                      "start_date": year_start, "end_date": "2025-06-30"}]),
                 reply("SELL", 0.7, [QUOTE_SOURCE, "S2"])],
        "growth": [reply("BUY", 0.7)] * 2,
        "sentiment": [reply("HOLD", 0.5, ["not-a-source"])] * 2,
        "moderator": [moderator()],
    }
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, events, _ = await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()
    art = outcome.artifact
    r1 = art.experts.rounds[0]
    assert [s.type for s in r1.fundamental.sources] == ["chart"]
    assert [d.reason for d in r1.fundamental.dropped_sources] == [
        "no source has this id", "matches no source the debate provided"]
    assert [s.type for s in r1.risk.sources] == ["chart"]  # the chart matched by value
    assert not r1.risk.dropped_sources
    r2 = art.experts.rounds[1]
    assert [s.type for s in r2.risk.sources] == ["chart"]
    assert r2.risk.dropped_sources[0].reason == "not among the sources given to this turn"
    assert r1.sentiment.dropped_sources[0].reason == "not a source id"
    dumped = json.loads(art.experts.model_dump_json())
    assert dumped["rounds"][0]["fundamental"]["dropped_sources"][0]["raw"] == "S99"
    assert "dropped_sources" not in dumped["rounds"][0]["growth"]  # only when it says something
    assert any("never provided" in n for n in art.meta.notes)
    assert "Round 1 - Fundamental: BUY 0.70 (2 invented source(s) dropped)" in texts(events)


async def test_prose_gets_one_repair_request_then_the_turn_fails(registry, caplog):
    prose = Turn(text="I think NVDA looks like a buy, honestly.")
    scripts = {
        "fundamental": [prose, prose, reply("BUY", 0.7)],
        "growth": [Turn(text="Growth is strong."), reply("BUY", 0.8), reply("BUY", 0.8)],
        "risk": [reply("SELL", 0.6)] * 2,
        "sentiment": [reply("HOLD", 0.6)] * 2,
        "moderator": [moderator()],
    }
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, events, _ = await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()
    art = outcome.artifact
    r1, r2 = art.experts.rounds
    # the reader is told why in words; the raw parse error stays in the log
    assert r1.fundamental.failed and r1.fundamental.error == words.t("debate.why_bad_json", "en")
    assert "no JSON object found" in caplog.text and "no JSON object" not in r1.fundamental.error
    assert (r1.fundamental.action, r1.fundamental.confidence) == ("HOLD", 0.0)
    repair = fake.by_seat["fundamental"][1]["messages"]
    assert repair[-2]["content"] == prose.text and "not a valid JSON object" in repair[-1][
        "content"]
    assert not r1.growth.failed and r1.growth.action == "BUY"  # repaired on the second try
    assert any("Growth: answered after a repair request" in n for n in art.meta.notes)
    assert not r2.fundamental.failed  # the debate went on
    assert any(t.startswith("Round 1 - Fundamental: failed (the model's answer was not "
                            "valid") for t in texts(events))
    # the next round tells the others the fundamental expert gave no answer
    assert "- fundamental: (no answer:" in fake.by_seat["risk"][1]["messages"][-1]["content"]


async def test_one_expert_timing_out_fails_only_that_turn(registry):
    scripts = {
        "risk": [Turn(fault="hang"), reply("SELL", 0.7)],
        "fundamental": [reply("BUY", 0.7)] * 2,
        "growth": [reply("BUY", 0.7)] * 2,
        "sentiment": [reply("BUY", 0.7)] * 2,
        "moderator": [moderator("stop", "BUY")],
    }
    async with SeatFake(scripts) as fake:
        # the hang costs the whole deadline; the healthy turns need far less even under load
        # (with 1 s, a loaded machine failed a healthy turn too)
        llm = router(fake, timeout_s=6.0)
        outcome, events, _ = await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()
    r1, r2 = outcome.artifact.experts.rounds
    assert r1.risk.failed and "did not answer in time" in r1.risk.error
    assert not r1.fundamental.failed and not r2.risk.failed
    assert outcome.artifact.experts.conclusion.action == "BUY"
    assert any("round 1 - Risk: turn failed" in n for n in outcome.artifact.meta.notes)
    assert any(t.startswith("Round 1 - Risk: failed") for t in texts(events))


async def test_turn_timeout_of_the_debate_itself(registry):
    """The debate's own per-turn limit, below the client's timeout, also fails the turn."""
    # the slow turn takes far longer than the limit, the healthy ones far less even under
    # load (with a 0.5 s limit a machine at load 7 timed every turn out)
    scripts = {"sentiment": [Turn(text="{}", latency_s=20.0), reply("HOLD", 0.5)],
               "moderator": [moderator()]}
    for s in ("fundamental", "risk", "growth"):
        scripts[s] = [reply("HOLD", 0.5)] * 2
    async with SeatFake(scripts) as fake:
        llm = router(fake, timeout_s=30.0)
        outcome, _, _ = await produce(make_mode(llm, registry, make_pdf=False,
                                                turn_timeout_s=4.0), "NVDA")
        await llm.aclose()
    assert outcome.artifact.experts.rounds[0].sentiment.error == "the turn took longer than 4 s"
