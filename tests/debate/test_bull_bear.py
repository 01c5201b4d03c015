"""The bull/bear panel against the local OpenAI-compatible server, every seat scripted."""

from __future__ import annotations

import json
import random
import re

from debate.bull_bear import anonymise
from debate.models import Argument, BullBearOutput
from tests.debate.helpers import SeatFake, make_mode, produce, router, texts
from tests.fakes.openai_server import Turn

ANALYSTS = ("bull_1", "bull_2", "bear_1", "bear_2")
MARK = {"bull_1": "ALPHA", "bull_2": "BRAVO", "bear_1": "CHARLIE", "bear_2": "DELTA"}
QUOTE = {"type": "data", "tool": "get_quote", "ref": '{"symbol":"NVDA"}'}
PLAN = {
    "hypothesis": "NVDA outperforms the S&P 500 over the next 12 months",
    "question_type": "single_stock",
    "entities": [{"type": "stock", "code": "NVDA", "name": "NVIDIA"}],
    "data_plan": [{"tool": "get_quote", "args": {"symbol": "NVDA"}},
                  {"tool": "get_indicators", "args": {"symbol": "NVDA"}},
                  {"tool": "generate_chart", "args": {"symbols": ["NVDA"]}},
                  {"tool": "no_such_tool", "args": {}}],
    "pro_framing": "show the momentum is durable",
    "con_framing": "show the valuation is stretched",
    "verdict_options": ["Supported", "Rejected", "Inconclusive"],
}
VERDICT = {"verdict": "supported", "action": "BUY", "confidence": 7,
           "reasons": ["momentum", "earnings"], "key_risks": ["valuation"],
           "strongest_opposing_data_point": "RSI is high", "time_horizon": "12 months"}


def argument(marker: str, sources: list[object] | None = None) -> Turn:
    return Turn(text=json.dumps({"text": f"Argument {marker} on the data.",
                                 "key_points": [f"point {marker}"],
                                 "sources": sources if sources is not None else ["S1"]}))


def scripts() -> dict[str, list[Turn]]:
    s: dict[str, list[Turn]] = {
        "hypothesis": [Turn(text=json.dumps(PLAN))],
        "judge": [Turn(text=json.dumps(VERDICT))],
        "summary": [Turn(text="## NVDA: hypothesis supported\nMomentum carries it.")],
    }
    for a in ANALYSTS:
        s[a] = [argument(f"{MARK[a]}-OPEN", ["S1", QUOTE]), argument(f"{MARK[a]}-REBUT")]
    s["bull_1"].insert(0, Turn(tool_calls=[("get_ohlcv", {"symbol": "NVDA", "period": "3mo"})]))
    return s


async def test_bull_bear_debate_produces_a_valid_artifact(registry):
    async with SeatFake(scripts()) as fake:
        llm = router(fake, roles={"bull": "model-a", "bear": "model-b"})
        mode = make_mode(llm, registry, panel="bull_bear", make_pdf=False)
        outcome, events, rec = await produce(mode, "NVDA", question="Will it beat the index?")
        await llm.aclose()
    art = outcome.artifact
    bb = art.bull_bear
    assert bb is not None and art.experts is None and art.meta.panel == "bull_bear"
    again = BullBearOutput.model_validate_json(bb.model_dump_json())
    assert again.hypothesis.hypothesis == PLAN["hypothesis"]
    # the data plan ran by code, in parallel, excluded and unknown tools skipped
    ok = [d for d in bb.data if d.ok]
    assert [d.tool for d in ok] == ["get_quote", "get_indicators"] and all(d.source_id for d in ok)
    skipped = {d.tool: d.note for d in bb.data if not d.ok}
    assert set(skipped) == {"generate_chart", "no_such_tool"}
    assert len(fake.requests) == 1 + (4 + 1) + 4 + 1 + 1  # no model call per planned tool
    # two bulls and two bears on two model profiles: #1 of each side on the first
    assert [a.analyst for a in bb.openings] == list(ANALYSTS)
    assert {a.analyst: a.profile for a in bb.openings} == {
        "bull_1": "bull", "bull_2": "bear", "bear_1": "bull", "bear_2": "bear"}
    for a in ANALYSTS:
        models = {b["model"] for b in fake.by_seat[a]}
        assert models == {"model-a" if a.endswith("1") else "model-b"}
    assert all(not a.failed and [s.type for s in a.sources] == ["chart", "data"]
               for a in bb.openings)
    assert len(bb.rebuttals) == 4 and all(a.phase == "rebuttal" for a in bb.rebuttals)
    rebut_prompt = fake.by_seat["bear_1"][1]["messages"][-1]["content"]
    assert "ALPHA-OPEN" in rebut_prompt and "BRAVO-OPEN" in rebut_prompt
    assert "DELTA-OPEN" not in rebut_prompt  # the other side only, plus its own
    # the judge's verdict, matched to the option as written; conclusion from it
    assert bb.verdict is not None and bb.verdict.verdict == "Supported"
    assert (bb.conclusion.action, bb.conclusion.confidence) == ("BUY", 0.7)
    assert bb.summary.startswith("## NVDA: hypothesis supported")
    assert "Verdict: Supported (BUY, 7/10)" in texts(events)
    assert any(t.startswith("Opening - Bull #1") for t in texts(events))
    assert len(rec.usages) == len(fake.requests)


async def test_judge_sees_shuffled_anonymous_arguments(registry):
    async with SeatFake(scripts()) as fake:
        llm = router(fake, roles={"bull": "model-a", "bear": "model-b"})
        mode = make_mode(llm, registry, panel="bull_bear", make_pdf=False, seed=11)
        outcome, _, _ = await produce(mode, "NVDA")
        await llm.aclose()
    bb = outcome.artifact.bull_bear
    judge = fake.by_seat["judge"][0]["messages"]
    seen = "\n".join(m["content"] for m in judge).lower()
    for name in (*ANALYSTS, "bull", "bear", "model-a", "model-b", "pro_framing"):
        assert name not in seen
    user = judge[-1]["content"]
    assert [int(n) for n in re.findall(r"^Argument (\d+):$", user, re.M)] == list(range(1, 9))
    shown = re.findall(r"Argument ([A-Z]+)-(OPEN|REBUT) on the data", user)
    who = {v: k for k, v in MARK.items()}
    as_ids = [f"{who[m]}:{'opening' if p == 'OPEN' else 'rebuttal'}" for m, p in shown]
    assert as_ids == bb.judge_order  # the artifact records the order the judge saw
    natural = [f"{a}:{p}" for p in ("opening", "rebuttal") for a in ANALYSTS]
    assert sorted(as_ids) == sorted(natural) and as_ids != natural


def test_anonymise_shuffles_by_seed():
    args = [Argument(analyst=a, side="bull" if a.startswith("bull") else "bear",
                     phase="opening", profile="x", text=f"text {a}") for a in ANALYSTS]
    orders = {tuple(anonymise(args, random.Random(seed), lambda _a: [])[0])
              for seed in range(6)}
    assert len(orders) > 1
    _, shown = anonymise(args, random.Random(1), lambda _a: ["S1"])
    assert "(cites S1)" in shown and shown.startswith("Argument 1:\n")


async def test_bull_bear_goes_on_when_turns_fail(registry):
    s = scripts()
    s["hypothesis"] = [Turn(text="Let me think about it."), Turn(text="Still prose.")]
    s["bear_2"] = [Turn(text="no json here"), Turn(text="none again"), argument("DELTA-REBUT")]
    s["summary"] = [Turn(fault="500")]
    async with SeatFake(s) as fake:
        llm = router(fake)
        outcome, _, _ = await produce(make_mode(llm, registry, panel="bull_bear",
                                                make_pdf=False), "NVDA")
        await llm.aclose()
    art = outcome.artifact
    bb = art.bull_bear
    assert bb.hypothesis.verdict_options == ["supported", "rejected", "inconclusive"]
    assert bb.data == []  # the default hypothesis plans no calls; the context still has data
    assert any("default hypothesis" in n for n in art.meta.notes)
    failed = [a.analyst for a in bb.openings if a.failed]
    assert failed == ["bear_2"]
    judge_user = fake.by_seat["judge"][0]["messages"][-1]["content"]
    assert len(re.findall(r"^Argument \d+:$", judge_user, re.M)) == 7
    assert "Verdict" in bb.summary and any("summary failed" in n for n in art.meta.notes)
    assert bb.conclusion.action == "BUY"
