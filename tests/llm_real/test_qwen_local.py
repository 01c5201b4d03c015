"""Bullpen on the model `BULLPEN_LLM=local` serves: Qwen2.5-Coder-0.5B-Instruct (the smaller of
the two pinned models, `bullpen model install 0.5b`) behind llama.cpp's server with its own
template (`make test-llm`). What is tested is the agent loop a small model can succeed in:
the tool call it writes as text is run, a Chinese question gets a Chinese answer (or says it
did not), a follow-up turn fits the window, and the first request of a quote question stays
within 1,500 prompt tokens as the server counts them. Answers are printed for the record.

As in `serve`, one server and one router serve every question: the time limits start from the
pace the server measured when it started (on this machine, as loaded as it is) and follow
what each call shows."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import tools
from bot.eval.score import markup_leaked
from bot.local_llm import MODELS, LocalServer, gguf_path, installed
from bot.symbols_bridge import find_symbols
from core.agent import NormalMode, Turn
from core.agent.language import question_lang, written_in
from core.events import Done, Event, Failed, ToolStarted
from core.llm import LLMRouter
from core.testing import MemoryRecorder
from core.types import ChatMessage

PIN = MODELS["0.5b"]
DATA_DIR = Path("data")
BOUND_S = 900.0  # a hang fails the test instead of blocking the suite (not a timing claim)


@pytest.fixture(scope="module")
async def server() -> AsyncIterator[LocalServer]:
    if not installed(PIN, DATA_DIR):
        pytest.fail(f"the 0.5b model is not in {DATA_DIR}/models: `bullpen model install 0.5b`"
                    " (make test-llm runs it)")
    async with LocalServer(gguf_path(PIN, DATA_DIR), model=PIN.model, ctx=8192,
                           threads=2) as s:
        yield s


@pytest.fixture(scope="module")
async def mode(server: LocalServer) -> AsyncIterator[NormalMode]:
    llm = LLMRouter(default=server.profile("0.5b", timeout_s=60.0, max_output_tokens=384))
    print(f"\npace measured at start: {server.prompt_tps} prompt, {server.gen_tps} generated "
          "tokens/s")
    try:
        yield NormalMode(llm=llm, registry=tools.build_registry(), small=True,
                         find_symbols=find_symbols)
    finally:
        await llm.aclose()


async def ask(mode: NormalMode, text: str, history: list[ChatMessage] | None = None
              ) -> tuple[list[Event], MemoryRecorder]:
    rec = MemoryRecorder()
    turn = Turn(text=text, history=history or [], recorder=rec, lang=question_lang(text))
    async with asyncio.timeout(BOUND_S):
        events = [e async for e in mode.run(turn)]
    last = events[-1]
    for m in rec.messages:
        print(f"  {m.role}: {m.content[:300]!r} {[(c.name, c.arguments) for c in m.tool_calls]}")
    calls = [(u.prompt_tokens, u.completion_tokens, round(u.latency_s, 1)) for u in rec.usages]
    print(f"\nQ: {text}\nA: {getattr(last, 'text', '') or getattr(last, 'error', '')}\n"
          f"label: {getattr(last, 'label', '')}\ncalls (prompt, completion, s): {calls}")
    return events, rec


def answered(events: list[Event]) -> Done:
    last = events[-1]
    assert not isinstance(last, Failed), last.error
    assert isinstance(last, Done) and last.text.strip()
    assert not markup_leaked(last.text), last.text
    assert not last.text.lstrip().startswith(("{", "```")), last.text  # words, not JSON
    return last


async def test_a_quote_question_runs_the_tool_the_model_wrote_and_fits_the_budget(mode):
    events, rec = await ask(mode, "What was NVDA's latest close?")
    answered(events)
    assert any(isinstance(e, ToolStarted) for e in events), "no tool was called"
    assert rec.usages[0].prompt_tokens <= 1500, rec.usages[0].prompt_tokens  # server-counted
    calls = [c for m in rec.messages for c in m.tool_calls]
    print("tool calls:", [(c.id, c.name, c.arguments) for c in calls])


async def test_a_chinese_question_is_answered_in_chinese_or_says_it_was_not(mode):
    events, rec = await ask(mode, "英伟达最新收盘价是多少？")
    done = answered(events)
    results = [m.content for m in rec.messages if m.role == "tool"]
    assert results and all('"symbol":"NVDA"' in r for r in results), results  # NVDA, not 600519
    assert written_in(done.text, "zh") or "模型没有用提问的语言回答" in done.label


async def test_a_follow_up_turn_is_answered_within_the_window(mode, server):
    events, rec = await ask(mode, "What was AAPL's latest close?")
    first = answered(events)
    history = [ChatMessage(role="user", content="What was AAPL's latest close?"),
               *(m for m in rec.messages if m.role != "user")]
    assert history[-1].content == first.text
    events, rec2 = await ask(mode, "And its 52-week high?", history)
    answered(events)
    assert all(u.prompt_tokens + 384 <= server.ctx for u in rec2.usages)
