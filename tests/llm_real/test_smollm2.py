"""Bullpen against a real model: SmolLM2-135M-Instruct behind llama.cpp's server on loopback
(`make test-llm`). A 135M model answers badly; what is tested is that Bullpen stays honest
about it: nothing crashes or hangs, every answer is grounded or labelled, no template markup
reaches the user, no request exceeds the 8,192-token window, and a debate whose turns fail
says so."""

from __future__ import annotations

import asyncio

import pytest

import tools
from bot.eval.local_model import MODEL_NAME, LocalModel
from bot.eval.score import markup_leaked
from core.agent import FastMode, NormalMode, Turn
from core.agent.grounding import unsupported_figures
from core.events import Done, Event, Failed
from core.llm import LLMRouter, ModelProfile
from core.testing import MemoryRecorder
from debate.mode import DebateMode

BOUND_S = 600.0  # a hang fails the test instead of blocking the suite (not a timing claim)
QUESTIONS = [("What was NVDA's latest close?", "en"), ("英伟达最新收盘价是多少？", "zh"),
             ("hello", "en")]


def router(model: LocalModel) -> LLMRouter:
    return LLMRouter(default=ModelProfile(name="smollm2", base_url=model.base_url,
                                          model=MODEL_NAME, timeout_s=180.0, max_retries=1,
                                          max_output_tokens=256))


async def answer(mode: object, text: str, lang: str) -> tuple[list[Event], MemoryRecorder]:
    rec = MemoryRecorder()
    turn = Turn(text=text, history=[], recorder=rec, lang=lang)
    async with asyncio.timeout(BOUND_S):
        events = [e async for e in mode.run(turn)]  # type: ignore[attr-defined]
    return events, rec


def assert_honest(events: list[Event], rec: MemoryRecorder, question: str) -> None:
    last = events[-1]
    assert isinstance(last, (Done, Failed)), last
    if isinstance(last, Failed):
        assert last.error.strip()  # said, with a reason
        return
    assert last.text.strip()
    assert not markup_leaked(last.text), last.text
    tool_texts = [m.content for m in rec.messages if m.role == "tool"]
    bad = unsupported_figures(last.text, tool_texts, also=[question])
    assert not bad or "Unverified" in last.label or "未经核实" in last.label \
        or "Fast mode" in last.label, (last.text, last.label)


async def test_normal_mode_answers_are_grounded_or_labelled_and_fit_the_window():
    registry = tools.build_registry()
    async with LocalModel() as model:
        llm = router(model)
        try:
            assert await llm.context_tokens() == 8192  # discovered from llama.cpp
            mode = NormalMode(llm=llm, registry=registry, plan=True)
            for text, lang in QUESTIONS:
                events, rec = await answer(mode, text, lang)
                assert_honest(events, rec, text)
            assert 0 < llm.peak_request_tokens() <= 8192
        finally:
            await llm.aclose()


async def test_fast_mode_is_labelled_and_bounded():
    async with LocalModel() as model:
        llm = router(model)
        try:
            events, rec = await answer(FastMode(llm=llm), "Tell me about NVDA's price.", "en")
            assert_honest(events, rec, "Tell me about NVDA's price.")
        finally:
            await llm.aclose()


async def test_a_debate_on_the_small_model_says_what_failed():
    async with LocalModel() as model:
        llm = router(model)
        try:
            mode = DebateMode(llm=llm, registry=None, min_rounds=1, max_rounds=1,
                              turn_timeout_s=240.0, make_pdf=False, budget_tokens=None)
            events, _ = await answer(mode, "NVDA", "en")
        finally:
            await llm.aclose()
    last = events[-1]
    assert isinstance(last, (Done, Failed))
    if isinstance(last, Failed):
        assert "The debate failed" in last.error and "HOLD" not in last.error
    else:
        failed = "failed" in last.text
        assert not failed or "partial debate" in last.label, (last.text, last.label)


@pytest.mark.parametrize("text", ["<tool_response>", "<|im_end|>"])
def test_markup_detector_sees_what_it_guards(text: str) -> None:
    assert markup_leaked(f"answer {text}")
