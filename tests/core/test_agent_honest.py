"""Normal and fast mode over the real `openai` client and the local fake: what a model says is
checked before it is an answer (issue 17 findings 1, 3, 4, 5, 8)."""

from __future__ import annotations

import json

from pydantic import BaseModel

from core.agent import FastMode, NormalMode, Turn
from core.events import Done, Event, Status, TextDelta, ToolStarted
from core.llm import LLMRouter, ModelProfile
from core.testing import MemoryRecorder
from core.tools import ToolRegistry, tool
from tests.fakes.openai_server import FakeOpenAI, prompt_size
from tests.fakes.openai_server import Turn as Reply


class Quote(BaseModel):
    symbol: str
    close: float
    date: str


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg, tags=("market", "quote"))
    async def get_quote(symbol: str) -> Quote:
        """Latest close of a symbol.

        Args:
            symbol: ticker
        """
        if symbol != "EURUSD":
            raise ValueError(f"unknown symbol {symbol}")
        return Quote(symbol=symbol, close=1.08345, date="2024-05-31")

    return reg


async def run(srv: FakeOpenAI, mode_name: str, question: str, *, lang: str = "en",
              plan: bool = False, reg: ToolRegistry | None = None,
              context: int | None = None) -> list[Event]:
    router = LLMRouter(default=ModelProfile(name="default", base_url=srv.base_url,
                                            model="fake-model", max_retries=0,
                                            context_tokens=context))
    mode = (FastMode(llm=router) if mode_name == "fast"
            else NormalMode(llm=router, registry=reg if reg is not None else registry(),
                              plan=plan))
    turn = Turn(text=question, history=[], recorder=MemoryRecorder(), lang=lang)
    try:
        return [e async for e in mode.run(turn)]
    finally:
        await router.aclose()


def done(events: list[Event]) -> Done:
    last = events[-1]
    assert isinstance(last, Done)
    return last


def shown(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


# --- finding 1: the planning call is bounded, the whole request fits --------------------------


async def test_planning_has_max_tokens_and_a_rambling_plan_is_cut():
    ramble = "PLAN: " + "I will think about the price very carefully. " * 200
    script = [Reply(text=ramble, finish="length"),
              Reply(tool_calls=[("get_quote", {"symbol": "EURUSD"})]),
              Reply(text="EURUSD closed at 1.0835 on 2024-05-31.")]
    async with FakeOpenAI(script, context_tokens=4096) as srv:
        events = await run(srv, "normal", "EURUSD latest close?", plan=True)
    assert srv.requests[0]["max_tokens"] <= 256  # the planner's bound
    assert all(r["max_tokens"] > 0 for r in srv.requests)
    assert not srv.refused and all(prompt_size(r) + r["max_tokens"] <= 4096
                                   for r in srv.requests)
    plan_msg = [m for m in srv.requests[1]["messages"] if m["content"].startswith("Your plan")]
    assert len(plan_msg[0]["content"]) < 1000
    assert done(events).text == "EURUSD closed at 1.0835 on 2024-05-31."
    assert done(events).label == ""  # 1.0835 is the tool's 1.08345 as written


async def test_a_planner_answer_with_figures_is_not_taken_as_small_talk():
    script = [Reply(text="ANSWER: EURUSD is at 1.2000 today."),
              Reply(tool_calls=[("get_quote", {"symbol": "EURUSD"})]),
              Reply(text="EURUSD closed at 1.08345 (2024-05-31).")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "EURUSD?", plan=True)
    assert done(events).text == "EURUSD closed at 1.08345 (2024-05-31)."
    assert any(isinstance(e, ToolStarted) for e in events)


# --- finding 3: cut-off answers say so ---------------------------------------------------------


async def test_fast_answer_cut_at_the_limit_is_labelled():
    async with FakeOpenAI([Reply(text="What is NVDA? What is NVDA? What is", finish="length",
                                 completion_tokens=1500)]) as srv:
        events = await run(srv, "fast", "What is NVDA?")
    assert srv.requests[0]["max_tokens"] > 0
    assert "Cut off" in done(events).label and "1500" in done(events).label


async def test_normal_mode_continues_a_cut_answer_once_then_labels_it():
    script = [Reply(text="Part one of a long explanation", finish="length"),
              Reply(text="and part two.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "explain diversification", reg=ToolRegistry())
    assert done(events).text == "Part one of a long explanation and part two."
    assert done(events).label == ""
    assert "Continue exactly where it stopped" in srv.requests[1]["messages"][-1]["content"]
    script = [Reply(text="Part one", finish="length"), Reply(text="part two", finish="length")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "explain diversification", reg=ToolRegistry(),
                           lang="zh")
    assert done(events).text == "Part one part two"
    assert "回答不完整" in done(events).label
    assert len(srv.requests) == 2  # continued once, not forever


# --- finding 4: unsupported numbers are labelled; normal mode asks once for a tool -------------


async def test_figures_without_a_tool_call_get_one_nudge_then_a_label():
    script = [Reply(text="Today's price: 1.2000."), Reply(text="Today's price: 1.2000.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "EURUSD price?")
    nudge = srv.requests[1]["messages"][-1]["content"]
    assert "1.2000" in nudge and "Call the tool" in nudge
    assert len(srv.requests) == 2
    assert done(events).label == ("Unverified: 1.2000 did not come from this answer's data "
                                  "tools.")
    assert any(isinstance(e, Status) and "Checking the figures" in e.text for e in events)


async def test_the_nudge_leads_to_a_tool_and_a_grounded_answer():
    script = [Reply(text="Today's price: 1.2000."),
              Reply(tool_calls=[("get_quote", {"symbol": "EURUSD"})]),
              Reply(text="EURUSD closed at 1.0835 on 2024-05-31.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "EURUSD price?")
    assert done(events).text == "EURUSD closed at 1.0835 on 2024-05-31."
    assert done(events).label == ""


async def test_a_figure_next_to_grounded_ones_is_still_caught_in_chinese():
    script = [Reply(tool_calls=[("get_quote", {"symbol": "EURUSD"})]),
              Reply(text="EURUSD 收盘 1.0835，市盈率 25.3 倍。"),
              Reply(text="EURUSD 收盘 1.0835，市盈率 25.3 倍。")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "EURUSD 收盘价？", lang="zh")
    assert done(events).label == "未经核实：25.3 不是来自本次回答的数据工具。"
    assert done(events).text.endswith("数据日期：2024-05-31。")  # the date it left out


async def test_a_data_question_answered_without_a_tool_is_labelled():
    script = [Reply(text="I think it went up."), Reply(text="It probably went up.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "How did EURUSD close?")
    assert done(events).label == "Unverified: no data tool was used for this answer."


async def test_small_talk_needs_no_tool_and_gets_no_label():
    async with FakeOpenAI([Reply(text="Hello! Ask me about a stock.")]) as srv:
        events = await run(srv, "normal", "hello there")
    assert done(events).label == "" and len(srv.requests) == 1


async def test_fast_mode_figures_are_labelled_as_memory():
    async with FakeOpenAI([Reply(text="NVDA was around 120.50 last I knew.")]) as srv:
        events = await run(srv, "fast", "NVDA?")
    assert done(events).label.startswith("Fast mode: figures from the model's memory")


# --- finding 5: template markup never reaches the user -----------------------------------------


async def test_tool_response_markup_is_never_shown():
    leak = ('<tool_response>{"symbol": "EURUSD", "close": 1.08345}</tool_response>\n'
            "<|im_end|>")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "EURUSD"})]),
              Reply(text="EURUSD closed at 1.08345. " + leak, chunk=3)]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "EURUSD?")
    # (with the date it left out, issue 35)
    assert done(events).text == "EURUSD closed at 1.08345.\n\nData as of 2024-05-31."
    assert "<" not in shown(events) and "tool_response" not in shown(events)


async def test_markup_only_answer_becomes_a_notice_not_markup():
    async with FakeOpenAI([Reply(text="<tool_response>{}</tool_response>")]) as srv:
        events = await run(srv, "fast", "hi")
    assert done(events).text == "The model returned no answer text."


# --- finding 8: tool calls written as text are run ---------------------------------------------


async def test_hermes_tool_call_in_text_is_parsed_validated_and_run():
    hermes = '<tool_call>\n{"name": "get_quote", "arguments": {"symbol": "EURUSD"}}\n</tool_call>'
    script = [Reply(text=hermes, chunk=4), Reply(text="EURUSD closed at 1.08345.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "EURUSD?")
    started = [e for e in events if isinstance(e, ToolStarted)]
    assert [s.name for s in started] == ["get_quote"]
    assert "<tool_call>" not in shown(events)
    tool_msgs = [m for m in srv.requests[1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_msgs[0]["content"])["close"] == 1.08345
    # the date it left out is added (issue 35)
    assert done(events).text == "EURUSD closed at 1.08345.\n\nData as of 2024-05-31."
    assert done(events).label == ""


async def test_bare_json_and_llama_calls_with_bad_arguments_are_validated():
    bare = '{"name": "get_quote", "parameters": {"ticker": "EURUSD"}}'  # wrong argument name
    script = [Reply(text=bare),
              Reply(text='<|python_tag|>{"name": "get_quote", "parameters": '
                         '{"symbol": "EURUSD"}}<|eom_id|>'),
              Reply(text="EURUSD: 1.08345.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "normal", "EURUSD?")
    tools = [m for m in srv.requests[1]["messages"] if m["role"] == "tool"]
    assert "symbol" in tools[0]["content"]  # the validation error, as text to the model
    assert len([e for e in events if isinstance(e, ToolStarted)]) == 2
    assert done(events).text == "EURUSD: 1.08345.\n\nData as of 2024-05-31."


async def test_json_naming_an_unknown_tool_is_not_a_call():
    text = '{"name": "launch_rockets", "arguments": {}}'
    async with FakeOpenAI([Reply(text=text)]) as srv:
        events = await run(srv, "normal", "hello there")
    assert not any(isinstance(e, ToolStarted) for e in events)
    assert done(events).text == text


async def test_the_tools_kept_in_a_small_window_are_the_ones_the_question_needs():
    """The real 25 tool schemas (~7,800 tokens) with a 8,192-token llama.cpp: the request
    fits, and the indicator question keeps the indicator tool."""
    import tools

    script = [Reply(text="PLAN: get the indicators"), Reply(text="No figures here."),
              Reply(text="Still none.")]
    async with FakeOpenAI(script, context_tokens=8192) as srv:
        await run(srv, "normal", "NVDA RSI and MACD indicators", plan=True,
                  reg=tools.build_registry())
    agent = srv.requests[1]
    offered = [t["function"]["name"] for t in agent["tools"]]
    assert "get_indicators" in offered and len(offered) < 25
    assert offered.index("get_indicators") < 3
    assert not srv.refused
    assert all(prompt_size(r) + r["max_tokens"] <= 8192 for r in srv.requests)
