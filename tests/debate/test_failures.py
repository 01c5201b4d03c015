"""Failed debates say they failed (issue 17 finding 2): no verdict, no PDF, no stored report;
a partly failed one lists what is missing and its confidence is lower."""

from __future__ import annotations

import re

import pytest

from core import words
from core.events import Done, Failed, File, TextDelta
from debate.engine import DebateFailed
from tests.debate.helpers import (
    SeatFake,
    make_mode,
    moderator,
    produce,
    reply,
    router,
    run_mode,
)
from tests.debate.test_bull_bear import scripts as bull_bear_scripts
from tests.fakes.openai_server import Turn

EXPERTS = ("fundamental", "risk", "growth", "sentiment")
BROKEN = Turn(fault="500", error="model crashed")


async def test_a_debate_whose_every_expert_failed_has_no_verdict_pdf_or_report(
        registry, pg_pool, caplog):
    """All turns fail (the 12 of the finding): the mode says so, the moderator is not asked
    for a verdict, no PDF goes out and nothing is stored for reuse."""
    async with SeatFake(defaults={seat: BROKEN for seat in EXPERTS}) as fake:
        llm = router(fake)
        mode = make_mode(llm, registry, pool=pg_pool, make_pdf=True)
        events, rec = await run_mode(mode, "NVDA")
        await llm.aclose()
    last = events[-1]
    assert isinstance(last, Failed) and last.kind == "llm"
    # the provider's own words go to the log, the reader is told in the catalogue's
    assert "The debate failed" in last.error and "model crashed" not in last.error
    assert "the model's server returned an error" in last.error and "(4 turns)" in last.error
    assert "model crashed" in caplog.text
    assert "no verdict" in last.error
    assert not any(isinstance(e, (File, Done)) for e in events)
    assert "HOLD" not in last.error
    assert "moderator" not in fake.by_seat  # nobody is asked to conclude from nothing
    assert await pg_pool.fetchval("SELECT count(*) FROM debate_reports") == 0
    assert not rec.messages  # no conclusion is recorded as the answer


async def test_a_failed_debate_is_told_in_chinese_with_the_raw_error_only_in_the_log(
        registry, caplog):
    """Under /lang zh the failure, each round's line and the reason are Chinese: the
    provider's English ("model crashed", HTTP 500) stays in the log."""
    async with SeatFake(defaults={seat: BROKEN for seat in EXPERTS}) as fake:
        llm = router(fake)
        events, _ = await run_mode(make_mode(llm, registry, make_pdf=False), "NVDA", lang="zh")
        await llm.aclose()
    last = events[-1]
    assert isinstance(last, Failed)
    why = words.t("errors.why_server", "zh").rstrip("。")
    assert last.error.startswith("辩论失败") and why + "（4 次）" in last.error
    shown = [e.text for e in events if isinstance(e, TextDelta)] + [last.error]
    assert shown and not any(re.search(r"crashed|model|failed|500", s) for s in shown), shown
    assert "model crashed" in caplog.text


async def test_produce_raises_debate_failed_for_callers_like_the_podcast(registry):
    async with SeatFake(defaults={seat: BROKEN for seat in EXPERTS}) as fake:
        llm = router(fake)
        with pytest.raises(DebateFailed):
            await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()


async def test_a_partly_failed_debate_lists_what_is_missing_and_lowers_confidence(registry):
    scripts = {"fundamental": [reply("BUY", 0.8), reply("BUY", 0.8)],
               "risk": [reply("BUY", 0.8), reply("BUY", 0.8)],
               "growth": [reply("BUY", 0.8), reply("BUY", 0.8)],
               "moderator": [moderator("stop", "BUY", "Most experts see upside.")]}
    async with SeatFake(scripts, defaults={"sentiment": BROKEN}) as fake:
        llm = router(fake)
        mode = make_mode(llm, registry, make_pdf=False)
        events, _ = await run_mode(mode, "NVDA")
        await llm.aclose()
    done = events[-1]
    assert isinstance(done, Done)
    assert "partial debate" in done.label
    assert "**Missing:** Round 2 - Sentiment: failed (" in done.text
    assert "confidence 0.60" in done.text  # 3 x 0.8 of 4 seats, not 0.80
    assert "consensus" in done.text and "no consensus" in done.text  # a failed seat blocks it


async def test_experts_failing_in_the_last_round_fall_back_to_the_last_answered_round(registry):
    scripts = {seat: [reply("SELL", 0.7), BROKEN, BROKEN] for seat in EXPERTS}
    scripts["moderator"] = [moderator("stop", "SELL", "Round one was bearish.")]
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, _, _ = await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()
    c = outcome.artifact.conclusion
    assert c.action == "SELL" and c.missing == ["round 2: every expert failed"]
    assert outcome.artifact.meta.stop_reason == "every expert failed in round 2"
    assert len(fake.by_seat["moderator"]) == 1  # asked once, about round 1


async def test_a_bull_bear_debate_without_a_judge_has_no_verdict(registry):
    s = bull_bear_scripts()
    s["judge"] = [BROKEN, BROKEN]
    async with SeatFake(s) as fake:
        llm = router(fake)
        mode = make_mode(llm, registry, panel="bull_bear", make_pdf=True)
        events, _ = await run_mode(mode, "NVDA")
        await llm.aclose()
    last = events[-1]
    assert isinstance(last, Failed) and "the judge could not answer" in last.error
    assert not any(isinstance(e, File) for e in events)


async def test_a_bull_bear_debate_with_failed_analysts_says_which(registry):
    s = bull_bear_scripts()
    s["bear_2"] = [BROKEN, BROKEN]
    async with SeatFake(s) as fake:
        llm = router(fake)
        outcome, _, _ = await produce(make_mode(llm, registry, panel="bull_bear",
                                                make_pdf=False), "NVDA")
        await llm.aclose()
    c = outcome.artifact.conclusion
    assert [m.split(":")[0] for m in c.missing] == ["Opening - Bear #2", "Rebuttal - Bear #2"]
    full = outcome.artifact.bull_bear.verdict.confidence / 10
    assert c.confidence == pytest.approx(round(full * 6 / 8, 2))
    assert "Partial debate" in outcome.markdown


async def test_a_debater_writing_its_tool_call_as_text_gets_the_tool_run(registry):
    hermes = Turn(text='<tool_call>{"name": "get_ohlcv", "arguments": '
                       '{"symbol": "NVDA", "period": "3mo"}}</tool_call>')
    scripts = {seat: [reply("BUY", 0.8), reply("BUY", 0.8)] for seat in EXPERTS}
    scripts["fundamental"].insert(0, hermes)
    scripts["moderator"] = [moderator("stop", "BUY")]
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, events, _ = await produce(make_mode(llm, registry, make_pdf=False), "NVDA")
        await llm.aclose()
    started = [e for e in events if e.type == "tool_started"]
    assert [e.name for e in started] == ["get_ohlcv"]
    second = fake.by_seat["fundamental"][1]["messages"]
    assert second[-1]["role"] == "tool" and "[source" in second[-1]["content"]
    assert outcome.artifact.conclusion.action == "BUY"
