"""Trade-plan mode: deterministic analysis first, the model fills the plan, code validates it
(one repair, then rejection), the chat's timeframe is enforced."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

import ict
from analyst.plan_mode import PlanMode, extract_plan
from core.agent.turn import Turn, TurnOptions
from core.errors import ConfigError
from core.events import Done, Event, File, Status, TextDelta, ToolFinished, ToolStarted
from core.llm import LLMRouter
from core.llm.profiles import ModelProfile
from core.testing import MemoryRecorder, ScriptedLLM, calls, text
from core.tools import ToolRegistry
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.openai_server import Turn as FakeTurn
from tests.ict.test_tool import PNG, offline_data  # noqa: F401 (autouse fixture)
from tools import build_registry
from tools.ict_tool import run_ict

NVDA = TurnOptions(intent="plan", symbol="NVDA", interval="1d")


async def _nvda_plan() -> dict[str, Any]:
    """A valid short plan for NVDA 1D, its numbers taken from the deterministic proposal."""
    plan = (await run_ict("NVDA", "1d")).proposal().plan
    assert plan is not None and plan.direction == "short"
    return {"timeframe": "1D", "horizon": plan.horizon, "strategy": plan.strategy,
            "direction": "short", "entry": plan.entry, "stop": plan.stop,
            "targets": list(plan.targets), "confluence": ["bearish BOS", "premium"],
            "risk": {"risk_percent": 1, "notes": "close above the stop"}}


def _reply(plan: dict[str, Any], rationale: str = "Bearish structure from premium.") -> str:
    return f"```json\n{json.dumps(plan)}\n```\n{rationale}"


async def _run(mode: PlanMode, options: TurnOptions, *, lang: str = "en",
               message: str = "Trade plan for NVDA") -> tuple[list[Event], MemoryRecorder]:
    recorder = MemoryRecorder()
    turn = Turn(text=message, history=[], recorder=recorder, lang=lang, options=options)
    return [e async for e in mode.run(turn)], recorder


def _done(events: list[Event]) -> Done:
    assert isinstance(events[-1], Done)
    return events[-1]


async def test_valid_plan_on_the_first_reply() -> None:
    plan = await _nvda_plan()
    llm = ScriptedLLM([text(_reply(plan))])
    events, rec = await _run(PlanMode(llm=llm, registry=build_registry()), NVDA)
    kinds = [type(e) for e in events]
    assert kinds[:4] == [Status, ToolStarted, Status, ToolFinished]
    assert kinds[-2:] == [TextDelta, Done]
    files = [e for e in events if isinstance(e, File)]
    assert len(files) == 1 and files[0].file.data[:8] == PNG
    answer = _done(events).text
    assert answer.startswith("**Trade plan · NVIDIA Corp (NVDA) · 1D** · daily")
    assert f"Entry: {plan['entry']:g} USD" in answer and f"Stop: {plan['stop']:g} USD" in answer
    assert "Bearish structure from premium." in answer and "data as of 2025-02-14" in answer

    # the model saw the enforced timeframe, the schema keys and the tool's digest
    request = llm.requests[0]["messages"]
    system = request[0].content
    assert '"timeframe": "1D" exactly' in system and all(k in system for k in ict.PLAN_KEYS)
    tool_msg = request[-1]
    assert tool_msg.role == "tool" and json.loads(tool_msg.content)["timeframe"] == "1D"
    assert llm.requests[0]["tools"] is None
    # recorded: the tool call, its result, the answer; one model call's usage
    assert [m.role for m in rec.messages] == ["assistant", "tool", "assistant"]
    assert rec.messages[0].tool_calls[0].name == "ict_analyze"
    assert rec.messages[-1].content == answer and len(rec.usages) == 1


async def test_invalid_plan_gets_one_repair() -> None:
    good = await _nvda_plan()
    bad = {**good, "stop": good["entry"] - 5}  # a short with its stop below the entry
    llm = ScriptedLLM([text(_reply(bad)), text(_reply(good))])
    events, rec = await _run(PlanMode(llm=llm, registry=build_registry()), NVDA)
    assert any(isinstance(e, Status) and "correction" in e.text for e in events)
    repair = llm.requests[1]["messages"][-1]
    assert repair.role == "user" and "Your plan was rejected" in repair.content
    assert "is not above the entry" in repair.content
    assert f"Entry: {good['entry']:g}" in _done(events).text and len(rec.usages) == 2


@pytest.mark.parametrize(("change", "reason"), [
    ({"direction": "long", "stop": 100.0, "targets": [160.0]},
     "targets point up (long plan) but the bias is bearish"),
    ({"timeframe": "1H"}, "plan timeframe '1H' is not the enforced timeframe '1D'"),
])
async def test_plan_still_invalid_after_repair_is_rejected(change: dict[str, Any],
                                                           reason: str) -> None:
    bad = {**await _nvda_plan(), **change}
    llm = ScriptedLLM([text(_reply(bad)), text(_reply(bad))])
    events, _ = await _run(PlanMode(llm=llm, registry=build_registry()), NVDA)
    answer = _done(events).text
    assert "**Plan rejected.**" in answer and f"- {reason}" in answer
    assert "Entry:" not in answer and len(llm.requests) == 2


async def test_reply_without_json_counts_as_invalid() -> None:
    llm = ScriptedLLM([text("I think you should short it."), text("Still no JSON.")])
    events, _ = await _run(PlanMode(llm=llm, registry=build_registry()), NVDA)
    assert "- no plan JSON object found in the reply" in _done(events).text


async def test_model_may_say_wait() -> None:
    llm = ScriptedLLM([text('{"wait": "price is mid-range, no zone"}\nPatience.')])
    events, _ = await _run(PlanMode(llm=llm, registry=build_registry()), NVDA, lang="zh")
    answer = _done(events).text
    assert answer.startswith("**交易计划 · NVIDIA Corp (NVDA) · 1D**")
    assert "**暂不交易：等待** – price is mid-range, no zone" in answer and "Patience." in answer


async def test_model_chosen_interval_is_overridden_by_the_chat(
        caplog: pytest.LogCaptureFixture) -> None:
    plan = await _nvda_plan()
    llm = ScriptedLLM([calls(("ict_analyze", {"symbol": "NVDA", "interval": "15m",
                                              "lookback": 1000})),
                       text(_reply(plan))])
    with caplog.at_level(logging.INFO):
        events, rec = await _run(PlanMode(llm=llm, registry=build_registry()),
                                 TurnOptions(interval="1d"), message="plan a trade on nvidia")
    started = next(e for e in events if isinstance(e, ToolStarted))
    assert started.arguments["interval"] == "daily" and started.arguments["lookback"] == 365
    assert rec.messages[0].tool_calls[0].id == "call_0"  # the model's own call, enforced
    assert json.loads(rec.messages[0].tool_calls[0].arguments)["interval"] == "daily"
    assert llm.requests[0]["tools"][0]["function"]["name"] == "ict_analyze"
    answer = _done(events).text
    assert "Timeframe enforced: interval '15m' overridden with 'daily'" in answer
    assert "interval '15m' overridden with 'daily'" in llm.requests[1]["messages"][0].content
    assert any("overridden" in r.getMessage() and r.levelno == logging.WARNING
               for r in caplog.records)
    assert len(rec.usages) == 2


async def test_model_without_a_symbol_answers_itself() -> None:
    llm = ScriptedLLM([text("Which symbol should I plan?")])
    events, rec = await _run(PlanMode(llm=llm, registry=build_registry()), TurnOptions(),
                             message="give me a trade plan")
    assert _done(events).text == "Which symbol should I plan?"
    assert not any(isinstance(e, ToolStarted) for e in events) and len(rec.usages) == 1


async def test_symbols_finder_is_used_before_the_model() -> None:
    plan = await _nvda_plan()
    llm = ScriptedLLM([text(_reply(plan))])
    mode = PlanMode(llm=llm, registry=build_registry(), find_symbols=lambda _: ["NVDA"],
                    default_interval="1d")
    events, _ = await _run(mode, TurnOptions())
    assert "Entry:" in _done(events).text and len(llm.requests) == 1


async def test_tool_errors_end_the_turn_without_a_model_call() -> None:
    llm = ScriptedLLM([])
    events, rec = await _run(PlanMode(llm=llm, registry=build_registry()),
                             TurnOptions(symbol="NVDA", interval="4h"))
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert not finished.ok
    assert "no finer than 1d" in _done(events).text and not llm.requests
    assert rec.messages[-1].content == _done(events).text


def test_needs_the_tool_in_its_registry() -> None:
    with pytest.raises(ConfigError):
        PlanMode(llm=ScriptedLLM([]), registry=ToolRegistry())


def test_extract_plan_reads_fenced_bare_and_wrapped_json() -> None:
    assert extract_plan('```json\n{"entry": 1}\n```\nwhy') == ({"entry": 1}, "why")
    assert extract_plan('Here: {"entry": 2} done') == ({"entry": 2}, "Here:  done")
    assert extract_plan('{"plan": {"entry": 3}}')[0] == {"entry": 3}
    assert extract_plan("no json {here") == (None, "no json {here")


async def test_over_the_real_openai_client() -> None:
    plan = await _nvda_plan()
    bad = {**plan, "targets": [plan["entry"] + 10]}  # a target above a short's entry
    async with FakeOpenAI([FakeTurn(text=_reply(bad)), FakeTurn(text=_reply(plan))]) as fake:
        router = LLMRouter(default=ModelProfile(base_url=fake.base_url, model="fake-model"))
        try:
            events, rec = await _run(PlanMode(llm=router, registry=build_registry()), NVDA)
        finally:
            await router.aclose()
    assert f"Entry: {plan['entry']:g}" in _done(events).text
    assert len(fake.requests) == 2
    first = fake.requests[0]["messages"]
    assert first[-2]["tool_calls"][0]["function"]["name"] == "ict_analyze"
    assert first[-1]["role"] == "tool" and json.loads(first[-1]["content"])["symbol"] == "NVDA"
    assert "is on the wrong side of the entry" in fake.requests[1]["messages"][-1]["content"]
    assert [u.prompt_tokens for u in rec.usages] == [20, 20]
