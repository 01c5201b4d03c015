"""DebateMode through the Mode protocol: bad input, offline experts, events, reuse, /stop."""

from __future__ import annotations

import asyncio

from bot.eval.score import english_words
from core.agent.turn import Turn as AgentTurn
from core.agent.turn import TurnOptions
from core.testing import MemoryRecorder, ScriptedLLM
from debate.mode import DebateMode, parse_request
from debate.offline import offline_label
from debate.store import DebateReportStore, question_key
from tests.debate.helpers import fake_bars, make_mode, produce, run_mode, texts


def test_parse_request_flags_and_options():
    r = parse_request("600519 --fresh 会涨吗 bull_bear --max-rounds 4")
    assert (r.symbol, r.question, r.panel, r.fresh, r.max_rounds) == (
        "600519", "会涨吗", "bull_bear", True, 4)
    r = parse_request("NVDA is it a buy?")
    assert (r.symbol, r.question, r.panel, r.fresh) == ("NVDA", "is it a buy?", None, False)
    r = parse_request("whatever text", TurnOptions(symbol="AAPL", panel="experts", fresh=True,
                                                   max_rounds=2))
    assert (r.symbol, r.question, r.panel, r.fresh, r.max_rounds) == (
        "AAPL", "whatever text", "experts", True, 2)
    assert question_key(" Is it  a BUY？") == question_key("is it a buy?")


def test_a_plain_leading_word_is_not_taken_for_a_ticker():
    mode = DebateMode(llm=None, registry=None)
    cases = {"Is NVDA a buy?": ("NVDA", "Is NVDA a buy?"), "茅台会涨吗": ("600519", "茅台会涨吗"),
             "600519 会涨吗": ("600519", "会涨吗"), "nvda": ("NVDA", "")}
    for text, (code, question) in cases.items():
        symbol, asked = mode.resolve(parse_request(text))
        assert (symbol.code, asked) == (code, question), text


async def test_unknown_ticker_fails_with_suggestions(registry):
    mode = make_mode(None, registry)
    events, rec = await run_mode(mode, "茅苔台子 值得买吗")
    assert [e.type for e in events] == ["failed"]
    assert events[0].kind == "input" and "600519 贵州茅台" in events[0].error
    events, _ = await run_mode(mode, "ZZZQQX")
    assert events[0].type == "failed" and "Did you mean" in events[0].error
    events, _ = await run_mode(mode, "   ")
    assert events[0].type == "failed" and "Name a security" in events[0].error
    assert rec.messages == [] and rec.usages == []


async def test_no_data_is_a_clear_failure(registry):
    events, _ = await run_mode(make_mode(None, registry), "AAPL")  # no synthetic bars
    assert events[-1].type == "failed" and events[-1].error == (
        "No debate on Apple Inc (AAPL): its price history and financial statements could not "
        "be loaded.")  # one sentence, no provider's error text


async def test_offline_experts_through_the_mode(registry):
    mode = make_mode(None, registry)
    events, rec = await run_mode(mode, "600519 值得买吗", lang="zh")
    kinds = [e.type for e in events]
    assert kinds[-2:] == ["file", "done"]
    statuses = texts(events)
    assert "未配置语言模型：由离线专家根据数据评分" in statuses
    assert sum(t.startswith("第 1 轮 - ") for t in statuses) == 4
    assert sum(t.startswith("第 2 轮 - ") for t in statuses) == 4
    assert not [w for t in statuses for w in english_words(t)]  # the round lines say 买入, not BUY
    body = "".join(texts(events, "text_delta"))
    assert body.count("\n") == 8
    pdf = events[-2].file
    assert pdf.mime_type == "application/pdf" and pdf.data.startswith(b"%PDF")
    assert pdf.filename == f"辩论报告-600519-{events[-2].file.filename[-12:-4]}.pdf"
    assert pdf.caption.startswith("辩论报告：贵州茅台 (600519)，结论为")
    done = events[-1]
    assert done.label == offline_label("zh") and "贵州茅台 (600519)" in done.text
    assert rec.messages[-1].content == done.text and rec.usages == []


async def test_offline_scores_are_deterministic_and_labelled(registry):
    mode = make_mode(None, registry, make_pdf=False)
    a, _, _ = await produce(mode, "600519")
    b, _, _ = await produce(mode, "600519", panel="bull_bear")
    again, _, _ = await produce(mode, "600519")
    art = a.artifact
    assert art.meta.offline and art.meta.label == offline_label("en")
    assert art.experts.model_dump() == again.artifact.experts.model_dump()
    assert len(art.experts.rounds) == 2
    r1 = art.experts.rounds[0]
    assert {t.action for t in r1.turns().values()} <= {"BUY", "HOLD", "SELL"}
    assert "Factors:" in r1.risk.text and "volatility" in r1.risk.text
    assert "beta vs 000300" in r1.risk.text  # the synthetic CSI 300 overlaps: beta computed
    assert "momentum" in r1.growth.text  # no financials offline: price momentum
    assert all(t.sources for t in r1.turns().values())
    votes: dict[str, int] = {}
    for turn in art.experts.rounds[-1].turns().values():
        votes[turn.action] = votes.get(turn.action, 0) + 1
    conclusion = art.experts.conclusion
    for action, n in votes.items():  # the final tally is spelled out with the verdict
        assert f"{action} {n}" in conclusion.text
    verdict = ("consensus on" if conclusion.consensus else
               "the largest group says" if conclusion.action in votes else "no majority, so")
    assert f"{verdict} {conclusion.action}" in conclusion.text
    bb = b.artifact.bull_bear
    assert bb is not None and len(bb.openings) == 4 and len(bb.rebuttals) == 4
    assert bb.verdict is not None and bb.verdict.verdict in bb.hypothesis.verdict_options
    assert b.artifact.meta.label == offline_label("en")


async def test_reports_are_reused_for_five_days_unless_fresh(registry, pg_pool):
    mode = make_mode(None, registry, pool=pg_pool, make_pdf=False)
    first, _ = await run_mode(mode, "600519 会涨吗")
    second, _ = await run_mode(mode, "600519 会涨吗？")
    assert "reused report from" in second[-1].label
    assert any(t.startswith("Reusing the report of") for t in texts(second))
    assert second[-1].text == first[-1].text
    assert not any(t.startswith("Round 1") for t in texts(second))
    fresh, _ = await run_mode(mode, "600519 会涨吗 fresh")
    assert "reused" not in fresh[-1].label
    other, _ = await run_mode(mode, "600519 能买吗")  # another question: a new debate
    assert "reused" not in other[-1].label
    assert await pg_pool.fetchval("SELECT count(*) FROM debate_reports") == 3
    await pg_pool.execute("UPDATE debate_reports SET created_at = now() - interval '6 days'")
    old, _ = await run_mode(mode, "600519 会涨吗")
    assert "reused" not in old[-1].label
    store = DebateReportStore(pg_pool)
    found = await store.find_recent(ticker="600519", panel="experts", question="会涨吗",
                                    lang="en", offline=True)
    assert found is not None and found.artifact.meta.ticker == "600519"
    assert await store.find_recent(ticker="600519", panel="bull_bear", question="会涨吗",
                                   lang="en", offline=True) is None


async def test_stopping_mid_debate_cancels_the_debate_task(registry):
    slow = ScriptedLLM(latency_s=30.0)
    mode = DebateMode(llm=slow, registry=registry, make_pdf=False, bars_loader=fake_bars)
    run = mode.run(AgentTurn(text="NVDA", history=[], recorder=MemoryRecorder()))
    seen = []
    async for event in run:
        seen.append(event)
        if getattr(event, "text", "").startswith("Round 1:"):
            break
    await asyncio.sleep(0.2)  # the debate task runs on while the chat is not reading
    assert len(slow.requests) == 4  # the four experts started, in parallel
    await run.aclose()
    await asyncio.sleep(0)
    assert not [t for t in asyncio.all_tasks() if t.get_name() == "debate"]
