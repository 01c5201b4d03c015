"""The agent loop a small model can succeed in (issue 35), over the real `openai` client and the
local scripted server: stable and compact tools, the planner's tool list, the question's
language, dates and units checked before the answer is shown, limits from the measured pace."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel

import tools
from bot.eval.score import english_words
from core.agent import NormalMode, Turn, prompts
from core.agent.runner import llm_failure
from core.agent.toolpick import BASE, fingerprint
from core.errors import LLMError, LLMTimeout
from core.events import Done, Event, Status, TextDelta, ToolStarted
from core.llm import LLMRouter, ModelProfile
from core.llm.base import AllProfilesFailed
from core.llm.openai_provider import OpenAIProvider
from core.testing import MemoryRecorder
from core.tools import ToolRegistry, tool
from tests.fakes.openai_server import FakeOpenAI, prompt_size
from tests.fakes.openai_server import Turn as Reply


class Quote(BaseModel):
    symbol: str
    as_of: str
    close: float
    change: float
    change_pct: float
    currency: str


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg, tags=("market", "quote"))
    async def get_quote(symbol: str) -> Quote:
        """Latest close of a symbol, with its change and date.

        Args:
            symbol: ticker
        """
        return Quote(symbol=symbol, as_of="2025-02-14", close=138.85, change=3.56,
                     change_pct=2.63, currency="USD")

    return reg


def profile(srv: FakeOpenAI, **kw: object) -> ModelProfile:
    return ModelProfile(name="local", base_url=srv.base_url, model="fake-model",
                        max_retries=0, **kw)  # type: ignore[arg-type]


async def run(srv: FakeOpenAI, question: str, *, reg: ToolRegistry | None = None,
              small: bool = True, plan: bool = False, lang: str = "en",
              history: list | None = None) -> list[Event]:  # type: ignore[type-arg]
    router = LLMRouter(default=profile(srv, small=small))
    mode = NormalMode(llm=router, registry=reg if reg is not None else registry(),
                      plan=plan, small=small)
    turn = Turn(text=question, history=history or [], recorder=MemoryRecorder(), lang=lang)
    try:
        return [e async for e in mode.run(turn)]
    finally:
        await router.aclose()


def done(events: list[Event]) -> Done:
    assert isinstance(events[-1], Done), events[-1]
    return events[-1]


def shown(events: list[Event]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def tool_names(request: dict) -> list[str]:  # type: ignore[type-arg]
    return [t["function"]["name"] for t in request.get("tools", [])]


# --- item 2: stable, compact tools ------------------------------------------------------------


async def test_two_quote_questions_send_the_same_prefix_byte_for_byte():
    reg = tools.build_registry()
    firsts = []
    for question in ("What was NVDA's latest close?", "AAPL price today?"):
        async with FakeOpenAI(default=Reply(text="No figures here.")) as srv:
            await run(srv, question, reg=reg)
        firsts.append(srv.requests[0])
    a, b = firsts
    assert tool_names(a) and fingerprint(a["tools"]) == fingerprint(b["tools"])
    assert a["messages"][0] == b["messages"][0]  # the system prompt (date last, same day)
    # the whole prefix before the question is the same bytes
    assert json.dumps(a["messages"][:-1]) == json.dumps(b["messages"][:-1])
    # the first request of a quote question fits the budget the issue sets
    assert prompt_size(a) <= 1500, prompt_size(a)


async def test_the_order_does_not_follow_the_question_and_shared_tools_are_identical():
    reg = tools.build_registry()
    offered = []
    for question in ("NVDA RSI and price", "NVDA price and RSI", "600519 最高价 走势",
                     "AAPL dividend and price"):
        async with FakeOpenAI(default=Reply(text="ok")) as srv:
            await run(srv, question, reg=reg, small=True)
        offered.append(srv.requests[0]["tools"])
    stable = [*BASE, *(n for n in reg.names() if n not in BASE)]
    for schemas in offered:
        names = [s["function"]["name"] for s in schemas]
        assert names == sorted(names, key=stable.index)  # one fixed order, whatever was asked
    # a tool offered for two questions is the same bytes in both
    by_name = [{s["function"]["name"]: json.dumps(s) for s in x} for x in offered]
    for one in by_name:
        for other in by_name:
            assert all(one[n] == other[n] for n in one.keys() & other.keys())
    assert offered[0] == offered[1]  # the same question reworded: the same list


def test_compact_schemas_drop_what_a_small_model_does_not_need():
    from core.agent.toolpick import pick_schemas, schema_tokens

    reg = tools.build_registry()
    small = pick_schemas("NVDA close", reg, small=True, budget_tokens=700)
    full = pick_schemas("NVDA close", reg)
    assert 0 < len(small) <= 4 and schema_tokens(small) <= 700
    text = fingerprint(small)
    assert '"title"' not in text and '"null"' not in text
    assert schema_tokens(full) > 3 * schema_tokens(small)
    dcf = pick_schemas("茅台 DCF 估值", reg, small=True, budget_tokens=700)
    assert "dcf_valuation" in [s["function"]["name"] for s in dcf]


# --- item 2: the planner sees the tools, or is skipped for a small model -----------------------


async def test_the_planner_is_shown_the_offered_tools_with_their_arguments():
    script = [Reply(text="PLAN: call get_quote for NVDA"),
              Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA latest close?", small=False, plan=True)
    planner = srv.requests[0]
    assert "tools" not in planner  # the planner calls nothing
    said = planner["messages"][-1]["content"]
    assert "get_quote(symbol)" in said
    assert set(re.findall(r"(\w+)\(", said.split("Only these tools exist:")[1])) == set(
        tool_names(srv.requests[1]))
    assert done(events).text.startswith("NVDA closed at 138.85")


async def test_a_small_model_gets_no_planning_call():
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA latest close?", small=True, plan=True)
    assert len(srv.requests) == 2 and tool_names(srv.requests[0]) == ["get_quote"]
    assert done(events).label == ""


# --- item 2: the question's language ------------------------------------------------------------


async def test_a_chinese_question_gets_a_chinese_prompt_and_an_english_answer_is_sent_back():
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14, up 2.63%."),
              Reply(text="英伟达 2025-02-14 收盘价 138.85 美元，上涨 2.63%。")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "英伟达最新收盘价是多少？", lang="en")
    assert "请用简体中文回答" in srv.requests[0]["messages"][0]["content"]
    sent_back = srv.requests[2]["messages"][-1]["content"]
    assert sent_back == prompts.LANGUAGE["zh"]
    final = done(events)
    assert final.text.startswith("英伟达") and final.label == ""
    assert "closed at" not in shown(events)  # the English draft was never shown


async def test_an_answer_still_in_the_wrong_language_is_labelled_in_the_persons_language():
    english = Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), english, english]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "英伟达收盘价？", lang="zh")  # the person's language: zh
    assert "模型没有用提问的语言回答" in done(events).label


# --- item 2: dates and units ----------------------------------------------------------------------


@pytest.mark.parametrize(("question", "lang", "answer", "note"), [
    ("NVDA close?", "en", "NVDA closed at 138.85 USD.", "Data as of 2025-02-14."),
    ("英伟达收盘价？", "en", "英伟达收盘价为 138.85 美元。", "数据日期：2025-02-14。"),
])
async def test_figures_without_their_date_get_the_date_the_tool_gave(question, lang, answer,
                                                                      note):
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), Reply(text=answer)]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, question, lang=lang)
    assert done(events).text == answer + "\n\n" + note  # part of the answer, in its language
    assert done(events).label == "" and shown(events) == done(events).text


async def test_an_answer_with_its_date_gets_no_date_note():
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."


async def test_a_move_in_currency_written_as_a_percentage_is_sent_back_then_fixed():
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA rose 3.56% to 138.85 USD on 2025-02-14."),
              Reply(text="NVDA rose 3.56 USD (2.63%) to 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "How did NVDA do?")
    sent_back = srv.requests[2]["messages"][-1]["content"]
    assert "3.56%" in sent_back and "change" in sent_back
    assert done(events).label == "" and "(2.63%)" in done(events).text
    assert "3.56%" not in shown(events)  # held until checked: the wrong draft never showed


async def test_a_unit_error_that_stays_is_labelled():
    wrong = Reply(text="英伟达 2025-02-14 上涨 3.56%，收于 138.85 美元。")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), wrong, wrong]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "英伟达今天表现如何？", lang="zh")
    assert "3.56% 是以货币计的价格变动" in done(events).label
    # the progress line while the answer was sent back is in the person's language too
    statuses = [e.text for e in events if isinstance(e, Status)]
    assert "正在用工具核对数字……" in statuses
    assert not any(english_words(s) for s in statuses), statuses


async def test_a_small_models_invented_figure_is_never_shown():
    script = [Reply(text="NVDA closed at 999.99 USD on 2025-02-14."),  # no tool: invented
              Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert "999.99" not in shown(events)
    assert shown(events) == done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."
    assert any(isinstance(e, Status) for e in events)


# --- item 2: a follow-up turn ---------------------------------------------------------------------


async def test_a_follow_up_turn_keeps_the_history_within_the_window():
    from core.types import ChatMessage

    history = []
    for i in range(30):  # a long conversation: it cannot all fit a 2,048-token window
        history += [ChatMessage(role="user", content=f"question {i} " + "about NVDA " * 30),
                    ChatMessage(role="assistant", content=f"answer {i} " + "NVDA rose. " * 30)]
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script, context_tokens=2048) as srv:
        router = LLMRouter(default=profile(srv, small=True, max_output_tokens=256))
        mode = NormalMode(llm=router, registry=registry(), small=True)
        turn = Turn(text="And its close?", history=history, recorder=MemoryRecorder())
        events = [e async for e in mode.run(turn)]
        await router.aclose()
    assert not srv.refused
    first = srv.requests[0]["messages"]
    assert first[-1]["content"] == "And its close?" and 2 < len(first) < len(history) + 2
    assert "answer 29" in json.dumps(first)  # the newest history stays, the oldest goes
    assert done(events).label == ""


# --- item 2: limits from the measured pace --------------------------------------------------------


async def test_a_derived_limit_waits_for_a_slow_model_that_a_fixed_one_fails():
    slow = Reply(text="ok", latency_s=0.6, prompt_tokens=400, completion_tokens=40)
    async with FakeOpenAI(default=slow) as srv:
        fixed = OpenAIProvider(profile(srv, timeout_s=0.3))
        with pytest.raises(LLMTimeout) as info:
            await fixed.complete([])
        assert getattr(info.value, "seconds", None) == 0.3
        await fixed.aclose()
        # the same floor, but rates that say a call needs more: the slow model answers
        paced = OpenAIProvider(profile(srv, timeout_s=0.3, derive_timeouts=True,
                                       prompt_tps=2000.0, gen_tps=400.0, max_output_tokens=64))
        assert paced.call_timeout([], None, 64) > 0.6
        resp = await paced.complete([])
        assert resp.content == "ok" and paced.pace.observed == 1
        await paced.aclose()


def test_the_pace_follows_a_slower_machine_at_once_and_a_faster_one_slowly():
    from core.llm.pace import MARGIN, OVERHEAD_S, Pace

    pace = Pace(prompt_tps=100.0, gen_tps=20.0)
    assert pace.timeout(1000, 200, floor=60) == max(60, (OVERHEAD_S + 10 + 10) * 4)
    pace.observe(prompt_tokens=1000, completion_tokens=100, total_s=30.0, first_token_s=20.0)
    assert pace.prompt_tps == 50.0 and pace.gen_tps == 10.0  # slower: taken at once
    assert pace.timeout(1000, 200, floor=1) == pytest.approx((OVERHEAD_S + 20 + 20) * MARGIN)
    pace.observe(prompt_tokens=1000, completion_tokens=100, total_s=10.0, first_token_s=5.0)
    assert 50.0 < pace.prompt_tps < 200.0  # faster: blended in
    assert Pace().timeout(1000, 200, floor=60) == 60  # nothing known: the configured limit


async def test_the_router_says_what_a_call_of_a_role_would_take():
    async with FakeOpenAI(default=Reply(text="ok")) as srv:
        router = LLMRouter(default=profile(srv, derive_timeouts=True, prompt_tps=100.0,
                                           gen_tps=10.0))
        assert router.expected_seconds("expert", 1000, 100) == pytest.approx(5 + 10 + 10)
        plain = LLMRouter(default=profile(srv))
        assert plain.expected_seconds("expert", 1000, 100) is None
        await router.aclose()
        await plain.aclose()


# --- issue 30 item 5: a model's failure in the person's language ------------------------------


async def test_every_profile_failing_is_said_in_chinese_to_a_chinese_user():
    async with FakeOpenAI(default=Reply(fault="500", error="backend exploded")) as srv:
        router = LLMRouter(default=profile(srv))
        with pytest.raises(AllProfilesFailed) as info:
            await router.complete([])
        await router.aclose()
    zh = llm_failure(info.value, "zh")
    en = llm_failure(info.value, "en")
    assert zh.startswith("模型无法回答") and "backend" not in zh
    assert not re.search(r"[A-Za-z]{3,}", zh), zh  # no English words in the Chinese
    assert en.startswith("The model could not answer: every model profile failed")
    assert "backend exploded" in str(info.value)  # the log keeps the server's words
    assert llm_failure(LLMError("the model's endpoint could not be reached"), "zh") == (
        "模型无法回答：所有模型配置都失败了（共尝试 1 个）：无法连接模型服务器。请稍后再试。")


# --- a small model's habits: the instrument as the tool's name, a repeated call, the hint ----


async def test_a_small_models_call_named_after_the_ticker_runs_the_quote_tool():
    script = [Reply(tool_calls=[("NVDA", {})]),  # llama.cpp parsed it; the name is the ticker
              Reply(text='{"name": "AAPL", "arguments": {}}'),  # and as text
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14; AAPL too.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA and AAPL close?")
    started = [(e.name, e.arguments) for e in events if isinstance(e, ToolStarted)]
    assert started == [("get_quote", {"symbol": "NVDA"}), ("get_quote", {"symbol": "AAPL"})]
    assert done(events).text.startswith("NVDA closed at 138.85 USD")


async def test_a_repeated_call_is_not_run_again_and_the_model_answers_without_tools():
    again = Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})])
    script = [again, again, Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert sum(isinstance(e, ToolStarted) for e in events) == 1
    assert len(srv.requests) == 3
    last = srv.requests[2]
    assert "tools" not in last  # withdrawn: the model answers from the result it has
    assert last["messages"][-1] == {"role": "user", "content": prompts.answer_now("en")}
    assert done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."


async def test_a_call_written_again_after_the_tools_were_withdrawn_is_not_shown():
    again = Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})])
    script = [again, again,
              Reply(text='NVDA closed at 138.85 USD on 2025-02-14. '
                         '{"name": "get_quote", "arguments": {"symbol": "NVDA"}}')]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."


@pytest.mark.parametrize(("question", "lang", "hint"), [
    ("英伟达最新收盘价是多少？", "zh", "\n\n（问题中的代码：NVDA）"),
    ("What was NVDA's latest close?", "en", "\n\n(Symbols in this question: NVDA)"),
    ("hello", "en", ""),
])
async def test_a_small_model_is_told_the_instruments_its_question_names(question, lang, hint):
    found = {"英伟达最新收盘价是多少？": ["NVDA"], "What was NVDA's latest close?": ["NVDA"]}
    async with FakeOpenAI(default=Reply(text="ok")) as srv:
        router = LLMRouter(default=profile(srv, small=True))
        mode = NormalMode(llm=router, registry=registry(), small=True,
                          find_symbols=lambda text: found.get(text, []))
        turn = Turn(text=question, history=[], recorder=MemoryRecorder(), lang=lang)
        [e async for e in mode.run(turn)]
        await router.aclose()
    assert srv.requests[0]["messages"][-1]["content"] == question + hint


@pytest.mark.parametrize(("question", "lang", "hint"), [
    ("英伟达最近3个月走势", "zh", "\n\n（问题中的代码：NVDA；问的时段：3mo）"),
    ("沪深300 近一年表现", "zh", "\n\n（问题中的代码：000300；问的时段：1y）"),
    ("NVDA performance over the last 3 months", "en",
     "\n\n(Symbols in this question: NVDA; period asked: 3mo)"),
    ("IBM history over the last year", "en",
     "\n\n(Symbols in this question: IBM; period asked: 1y)"),
    ("What was NVDA's latest close?", "en", "\n\n(Symbols in this question: NVDA)"),
])
async def test_a_small_model_is_told_the_period_its_question_asks_about(question, lang, hint):
    """The same reading of a period as the offline analyst's (`tools.periods`), in the form
    the tools' `period` argument takes: the 1.5B read 近一年 as the whole history."""
    from bot.symbols_bridge import find_period

    found = {"英伟达最近3个月走势": ["NVDA"], "沪深300 近一年表现": ["000300"],
             "NVDA performance over the last 3 months": ["NVDA"],
             "IBM history over the last year": ["IBM"], "What was NVDA's latest close?": ["NVDA"]}
    async with FakeOpenAI(default=Reply(text="ok")) as srv:
        router = LLMRouter(default=profile(srv, small=True))
        mode = NormalMode(llm=router, registry=registry(), small=True,
                          find_symbols=lambda text: found[text], find_period=find_period)
        turn = Turn(text=question, history=[], recorder=MemoryRecorder(), lang=lang)
        [e async for e in mode.run(turn)]
        await router.aclose()
    assert srv.requests[0]["messages"][-1]["content"] == question + hint


class Bars(BaseModel):
    symbol: str
    rows: list[list[float]]
    high: float
    as_of: str


def bars_registry(got: list[int]) -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg, tags=("market", "ohlcv"))
    async def get_ohlcv(symbol: str, period: str | None = None, limit: int = 60) -> Bars:
        """Daily bars and the period's summary.

        Args:
            symbol: ticker
            period: back from the last bar
            limit: at most this many most recent bars in rows (the summary covers the range)
        """
        got.append(limit)
        return Bars(symbol=symbol, rows=[[1.0]] * limit, high=153.13, as_of="2025-02-14")

    return reg


@pytest.mark.parametrize(("small", "call", "limit"), [
    (True, {"symbol": "NVDA", "period": "3mo"}, 5),  # the schema it saw had no `limit`
    (True, {"symbol": "NVDA", "limit": 20}, 20),  # one it gave stands
    (False, {"symbol": "NVDA", "period": "3mo"}, 60),  # a large model: the tool's default
])
async def test_a_small_models_table_call_reads_a_few_rows_and_the_summary(small, call, limit):
    got: list[int] = []
    script = [Reply(tool_calls=[("get_ohlcv", call)]),
              Reply(text="NVDA's 3-month high was 153.13 USD (as of 2025-02-14).")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA over the last 3 months", reg=bars_registry(got),
                           small=small)
    assert got == [limit]
    started = [e.arguments for e in events if isinstance(e, ToolStarted)]
    assert started == ([call | {"limit": limit}] if small else [call])
    tool_result = json.loads(srv.requests[1]["messages"][-1]["content"])
    assert len(tool_result["rows"]) == limit and tool_result["high"] == 153.13
    if small:  # the schema offered to it went without `limit`
        offered = srv.requests[0]["tools"][0]["function"]["parameters"]["properties"]
        assert "limit" not in offered


@pytest.mark.parametrize("small", [True, False])
async def test_a_small_model_that_answers_a_data_question_without_a_call_must_call_next(small):
    """The 1.5B, asked "CSI 300 index level", apologised that it needed a tool, twice; asked
    to compare two stocks, it wrote its plan of calls as prose. After that send-back a small
    model's next request requires a call (`tool_choice: required`, which llama.cpp enforces
    with a grammar); a large model is only asked."""
    script = [Reply(text="I apologize, but I cannot answer this as it requires market data."),
              Reply(tool_calls=[("get_quote", {"symbol": "000300"})]),
              Reply(text="The CSI 300 closed at 138.85 on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "CSI 300 index level", small=small)
    assert [r.get("tool_choice") for r in srv.requests] == (
        [None, "required", None] if small else [None, None, None])
    assert [e.name for e in events if isinstance(e, ToolStarted)] == ["get_quote"]
    assert done(events).text.startswith("The CSI 300 closed at 138.85")


@pytest.mark.parametrize(("question", "call", "period"), [
    # the 1.5B wrote the parameter's description as its value
    ("MSFT price history last month", {"symbol": "MSFT", "period": "back from the last bar"},
     "1mo"),
    ("沪深300 近一年表现", {"symbol": "000300"}, "1y"),  # none: the whole history's summary
    ("NVDA over the last 3 months", {"symbol": "NVDA", "start": "2024-01-01"}, "3mo"),
    ("NVDA RSI", {"symbol": "NVDA", "period": "6mo"}, "6mo"),  # the question names none
])
async def test_a_small_models_call_takes_the_period_its_question_names(question, call, period):
    from bot.symbols_bridge import find_period

    seen: list[dict[str, object]] = []
    reg = ToolRegistry()

    @tool(registry=reg, tags=("market", "ohlcv"))
    async def get_ohlcv(symbol: str, period: str | None = None, start: str | None = None,
                        limit: int = 60) -> Bars:
        """Daily bars and the period's summary.

        Args:
            symbol: ticker
            period: back from the last bar
            start: first date
            limit: at most this many most recent bars
        """
        seen.append({"period": period, "start": start, "limit": limit})
        return Bars(symbol=symbol, rows=[], high=153.13, as_of="2025-02-14")

    script = [Reply(tool_calls=[("get_ohlcv", call)]),
              Reply(text="The high was 153.13 (as of 2025-02-14).")]
    async with FakeOpenAI(script) as srv:
        router = LLMRouter(default=profile(srv, small=True))
        mode = NormalMode(llm=router, registry=reg, small=True, find_period=find_period)
        turn = Turn(text=question, history=[], recorder=MemoryRecorder())
        [e async for e in mode.run(turn)]
        await router.aclose()
    assert seen == [{"period": period, "start": None, "limit": 5}]


async def test_a_large_model_gets_the_question_as_written():
    async with FakeOpenAI(default=Reply(text="ok")) as srv:
        router = LLMRouter(default=profile(srv))
        mode = NormalMode(llm=router, registry=registry(), plan=False,
                          find_symbols=lambda text: ["NVDA"])
        turn = Turn(text="NVDA close?", history=[], recorder=MemoryRecorder())
        [e async for e in mode.run(turn)]
        await router.aclose()
    assert srv.requests[0]["messages"][-1]["content"] == "NVDA close?"


async def test_an_answer_written_beside_a_repeated_call_is_the_answer():
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text='NVDA closed at 138.85 USD on 2025-02-14.\n'
                         '{"name": "get_quote", "arguments": {"symbol": "NVDA"}}')]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert len(srv.requests) == 2 and sum(isinstance(e, ToolStarted) for e in events) == 1
    assert done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."


@pytest.mark.parametrize("echo", [
    '{"name": "NVIDIA Corp", "arguments": {"close": 138.85, "as_of": "2025-02-14"}}',
    '```json\n{"symbol": "NVDA", "close": 138.85}\n```',
    '{"name": "NVIDIA Corp", "arguments": {"market": "us", "close": 138.8',  # cut off
    # the bars it was sent, recited a line each (the 1.5B, 沪深300 近一年表现)
    "2025-12-25: 4629.32\n2025-12-26: 4639.79\n2025-12-29: 4658.27\n2025-12-30: 4617.32",
    "- 2025-02-12 138.85 139.2\n- 2025-02-13 | 138.85\n- 2025-02-14 138.85",
    # one whole bar (the quiet 1.5B, 沪深300 近一年表现), and bars in Chinese (奈飞 一个月)
    "2025-12-25 4629.32 4651.15 4621.92 4642.54 13943418600 4615.43 4576.2 4599.64",
    "2022年1月31日：401.97元，427.7元，398.2元，427.14元\n2022年2月01日：432.96元，458.48元，425.54元",
])
async def test_a_tool_result_echoed_as_json_is_not_the_answer(echo):
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), Reply(text=echo),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert "tools" not in srv.requests[2]
    assert srv.requests[2]["messages"][-1]["content"] == prompts.answer_now("en")
    assert echo not in json.dumps(srv.requests[2]["messages"])  # the echo is not kept
    assert done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."


async def test_an_echo_after_the_tools_were_withdrawn_is_said_to_be_no_answer():
    echo = Reply(text='{"symbol": "NVDA", "close": 138.85}')
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), echo, echo]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    # the echo is dropped each time; once more, the tool's figures spelt out, then labelled
    assert "{" not in done(events).text and len(srv.requests) == 4
    assert "close: 138.85" in srv.requests[3]["messages"][-1]["content"]


# --- the wrong-date class: a date no tool gave, or a data question answered with no figure ---


async def run_on(srv: FakeOpenAI, question: str, *, lang: str = "en",
                 today: str = "2026-11-27") -> list[Event]:
    """`run`, on a fixed day (the day the model may write as the data's date)."""
    from datetime import date

    router = LLMRouter(default=profile(srv, small=True))
    mode = NormalMode(llm=router, registry=registry(), small=True,
                      today=lambda: date.fromisoformat(today))
    turn = Turn(text=question, history=[], recorder=MemoryRecorder(), lang=lang)
    try:
        return [e async for e in mode.run(turn)]
    finally:
        await router.aclose()


@pytest.mark.parametrize(("question", "wrong", "fixed"), [
    ("AAPL price?", "AAPL closed at 138.85 USD on 2026-11-27.",
     "AAPL closed at 138.85 USD on 2025-02-14."),
    ("AAPL price?", "As of November 27, 2026, AAPL closed at 138.85 USD.",
     "AAPL closed at 138.85 USD on 2025-02-14."),
    ("苹果股价？", "截至2026年11月27日，苹果收盘价为 138.85 美元。",
     "截至2025年2月14日，苹果收盘价为 138.85 美元。"),
])
async def test_todays_date_given_as_the_datas_date_is_sent_back_then_fixed(question, wrong,
                                                                          fixed):
    script = [Reply(tool_calls=[("get_quote", {"symbol": "AAPL"})]), Reply(text=wrong),
              Reply(text=fixed)]
    async with FakeOpenAI(script) as srv:
        events = await run_on(srv, question)
    assert "Today's date: 2026-11-27" in srv.requests[0]["messages"][0]["content"]
    sent_back = srv.requests[2]["messages"][-1]["content"]
    assert sent_back == prompts.wrong_dates(["2026-11-27"], ["2025-02-14"])
    assert "tools" in srv.requests[2]  # it may look the figure up again
    assert done(events).text == fixed and done(events).label == ""
    assert shown(events) == fixed  # the wrongly dated draft was never shown


async def test_a_wrong_date_that_stays_is_labelled_with_the_datas_date():
    wrong = Reply(text="英伟达 2026-11-27 收盘价为 138.85 美元。")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), wrong, wrong]
    async with FakeOpenAI(script) as srv:
        events = await run_on(srv, "英伟达收盘价？", lang="zh")
    assert len(srv.requests) == 3  # sent back once, not again
    assert done(events).label == "请注意日期：数据日期为 2025-02-14，不是 2026-11-27。"
    wrong = Reply(text="NVDA closed at 138.85 USD on 2026-11-27.")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), wrong, wrong]
    async with FakeOpenAI(script) as srv:
        events = await run_on(srv, "NVDA close?", lang="en")
    assert done(events).label == "Check the date: the data is as of 2025-02-14, not 2026-11-27."


@pytest.mark.parametrize(("question", "answer"), [
    # the date the tool gave, in another way of writing it
    ("NVDA close?", "On Feb 14, 2025 NVDA closed at 138.85 USD."),
    ("英伟达收盘价？", "2025年2月14日英伟达收盘价为 138.85 美元。"),
    # a date the question gave
    ("Did NVDA close above 100 USD since 2024-01-02?", "Yes: 138.85 USD on 2025-02-14."),
])
async def test_a_date_the_tools_or_the_question_gave_is_not_sent_back(question, answer):
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), Reply(text=answer)]
    async with FakeOpenAI(script) as srv:
        events = await run_on(srv, question)
    assert len(srv.requests) == 2 and done(events).text == answer and done(events).label == ""


async def test_a_data_question_answered_with_no_figure_is_sent_back_then_answered():
    script = [Reply(tool_calls=[("get_quote", {"symbol": "AAPL"})]),
              Reply(text="Here is the latest quote for Apple as requested."),
              Reply(text="AAPL closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run_on(srv, "AAPL price?")
    sent = srv.requests[2]["messages"][-1]["content"]
    assert sent.startswith(prompts.NO_FIGURE)
    # the tool's own figures and date are spelt out beside the request
    assert "as_of: 2025-02-14" in sent and "close: 138.85" in sent and "currency: USD" in sent
    assert done(events).text == "AAPL closed at 138.85 USD on 2025-02-14."
    assert "Here is the latest" not in shown(events)


class Summary(BaseModel):
    first: str
    last: str
    close: float
    change_pct: float
    high: float
    low: float


class Table(BaseModel):
    symbol: str
    columns: list[str]
    rows: list[list[str | float]]
    summary: Summary
    source: str


@pytest.mark.parametrize(("question", "apology"), [
    ("BTC-USD trend over the past 6 months", "I apologize, but I can't assist with that."),
    ("IBM history over the last year", "I'm sorry, I can't help with that request."),
    ("NVDA performance over the last 3 months", "The tool results do not provide figures."),
    ("奈飞最近一个月的历史行情", "抱歉，我无法回答这个问题。"),
])
async def test_an_apology_after_a_good_call_is_sent_back_with_the_tools_summary(question,
                                                                                apology):
    """The 1.5B apologised after a call that returned a year of bars and their summary."""
    reg = ToolRegistry()

    @tool(registry=reg, tags=("market", "ohlcv"))
    async def get_ohlcv(symbol: str, period: str = "1y", limit: int = 60) -> Table:
        """Bars.

        Args:
            symbol: ticker
            period: back from the last bar
            limit: rows
        """
        return Table(symbol=symbol, columns=["date", "close"],
                     rows=[["2025-02-13", 101.25], ["2025-02-14", 102.5]],
                     summary=Summary(first="2024-02-14", last="2025-02-14", close=102.5,
                                     change_pct=12.34, high=140.76, low=86.62),
                     source="yfinance")

    answer = ("2024-02-14 至 2025-02-14 收盘 102.5，涨 12.34%，最高 140.76，最低 86.62。"
              if "奈飞" in question else "From 2024-02-14 to 2025-02-14 it closed at 102.5, "
              "up 12.34%, with a high of 140.76 and a low of 86.62.")
    script = [Reply(tool_calls=[("get_ohlcv", {"symbol": "X"})]), Reply(text=apology),
              Reply(text=answer)]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, question, reg=reg, lang="zh" if "奈飞" in question else "en")
    sent = srv.requests[2]["messages"][-1]["content"]
    assert "summary high: 140.76" in sent and "summary last: 2025-02-14" in sent
    assert "101.25" not in sent and "yfinance" not in sent  # the rows and source stay out
    assert done(events).text == answer and apology not in shown(events)


def test_a_small_models_interval_is_dropped_unless_the_question_names_one():
    from core.agent.toolpick import small_call
    from core.types import ToolCall

    reg = tools.build_registry()
    monthly = ToolCall(id="1", name="get_ohlcv",
                       arguments='{"symbol": "NFLX", "interval": "1mo", "period": "1mo"}')
    asked = json.loads(small_call(monthly, reg, "1mo", "奈飞最近一个月的历史行情").arguments)
    assert "interval" not in asked and asked["period"] == "1mo"
    for question in ("NFLX weekly bars this year", "奈飞月线", "NFLX 1h chart today"):
        assert "interval" in json.loads(small_call(monthly, reg, None, question).arguments)


@pytest.mark.parametrize(("question", "offered", "not_offered"), [
    # not get_ohlcv, which the 1.5B summarised instead (run_ta_script, tagged indicators too,
    # is registered where the sandbox can run)
    ("BTC-USD MACD", ["get_indicators"], ["get_ohlcv", "get_quote"]),
    ("沪深300 技术指标", ["get_indicators"], ["get_ohlcv", "get_quote"]),
    # "etf" in "Netflix" is not a fund question
    ("How much is Netflix stock?", list(BASE), ["get_cn_fund_data", "get_13f_holdings"]),
    ("compare NVDA and MSFT", list(BASE), []),
])
def test_a_small_model_is_offered_the_families_its_question_names(question, offered,
                                                                  not_offered):
    from core.agent.toolpick import pick_schemas

    got = [s["function"]["name"] for s in pick_schemas(question, tools.build_registry(),
                                                        small=True, budget_tokens=700)]
    assert got[:len(offered)] == offered and not set(got) & set(not_offered)


async def test_no_figure_twice_is_labelled_unanswered_and_a_question_without_one_is_not():
    empty = Reply(text="苹果的最新行情已经查到了。")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "AAPL"})]), empty, empty]
    async with FakeOpenAI(script) as srv:
        events = await run_on(srv, "苹果股价多少？", lang="zh")
    assert done(events).label == "未作答：回答没有给出数据工具返回的任何数字。"
    # a question that asks for no figure (the news about a ticker) is not sent back for one
    script = [Reply(tool_calls=[("get_quote", {"symbol": "AAPL"})]),
              Reply(text="Apple is in the news for its new phone.")]
    async with FakeOpenAI(script) as srv:
        events = await run_on(srv, "Any news on AAPL?")
    assert len(srv.requests) == 2 and done(events).label == ""


# --- item 2: a small model's replies are capped, and it is told not to echo ------------------


async def test_the_local_profile_caps_every_call_and_tells_the_model_not_to_echo():
    from bot.local_llm import SMALL_MAX_TOKENS, local_profile

    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        # serve's default of 1,024 asked for: the local profile writes at most its cap
        router = LLMRouter(default=local_profile("1.5b", base_url=srv.base_url, ctx=8192,
                                                 timeout_s=60.0, max_output_tokens=1024))
        mode = NormalMode(llm=router, registry=registry(), small=True)
        turn = Turn(text="NVDA close?", history=[], recorder=MemoryRecorder())
        events = [e async for e in mode.run(turn)]
        await router.aclose()
    assert [r["max_tokens"] for r in srv.requests] == [SMALL_MAX_TOKENS] * 2
    assert prompts.SMALL_RULES["en"] in srv.requests[0]["messages"][0]["content"]
    assert done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."
    lower = local_profile("0.5b", base_url="http://x", ctx=8192, timeout_s=60.0,
                          max_output_tokens=128)
    assert lower.max_output_tokens == 128  # a lower setting stands


async def test_a_large_model_gets_no_small_model_rules():
    async with FakeOpenAI(default=Reply(text="ok")) as large:
        await run(large, "NVDA close?", small=False)
    async with FakeOpenAI(default=Reply(text="ok")) as small:
        await run(small, "英伟达收盘价？", small=True)
    assert prompts.SMALL_RULES["en"] not in large.requests[0]["messages"][0]["content"]
    assert prompts.SMALL_RULES["zh"] in small.requests[0]["messages"][0]["content"]


# --- item 3: units in every spelling, both ways -------------------------------------------------


@pytest.mark.parametrize(("question", "wrong", "lang", "note"), [
    ("How did NVDA do?", "NVDA rose 3.56 percent to 138.85 USD on 2025-02-14.", "en",
     "Check the units: 3.56 percent is a price move in currency, not a percentage."),
    ("英伟达今天表现如何？", "英伟达 2025-02-14 上涨百分之3.56，收于 138.85 美元。", "zh",
     "请注意单位：百分之3.56 是以货币计的价格变动，不是百分比。"),
    ("How did NVDA do?", "NVDA rose $2.63 to 138.85 USD on 2025-02-14.", "en",
     "Check the units: $2.63 is a percent change, not an amount of money."),
    ("英伟达今天表现如何？", "英伟达 2025-02-14 上涨 2.63 美元，收于 138.85 美元。", "zh",
     "请注意单位：2.63 美元 是涨跌幅（百分比），不是金额。"),
])
async def test_a_unit_error_in_any_spelling_is_sent_back_once_then_labelled(question, wrong,
                                                                            lang, note):
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), Reply(text=wrong),
              Reply(text=wrong)]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, question, lang=lang)
    assert len(srv.requests) == 3  # sent back once
    sent_back = srv.requests[2]["messages"][-1]["content"]
    assert ("change_pct" in sent_back) == ("2.63" in note)
    assert done(events).label == note
    assert shown(events) == done(events).text == wrong  # shown once, with its label


async def test_the_right_units_pass_in_both_directions():
    right = Reply(text="NVDA rose 3.56 USD ($3.56, 2.63 percent) to $138.85 on 2025-02-14.")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), right]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "How did NVDA do?")
    assert len(srv.requests) == 2 and done(events).label == ""


async def test_an_amount_in_another_currency_than_the_tools_is_sent_back_then_labelled():
    wrong = Reply(text="英伟达 2025-02-14 收盘价是138.85元。")  # the 1.5B's answer, in yuan
    right = Reply(text="英伟达 2025-02-14 收盘价是 138.85 美元。")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), wrong, right]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "英伟达最新收盘价是多少？", lang="zh")
    assert srv.requests[2]["messages"][-1]["content"] == prompts.currency(["138.85元"], ["USD"])
    assert done(events).text == right.text and done(events).label == ""
    assert "138.85元" not in shown(events)
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), wrong, wrong]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "英伟达最新收盘价是多少？", lang="zh")
    assert done(events).label == "请注意币种：数据中 138.85元 的币种是 USD。"


@pytest.mark.parametrize("answer", [
    "NVDA closed at 138.85 USD on 2025-02-14.",
    "2025-02-14: 138.85",  # one dated figure is an answer
    "Closes:\n2025-02-12: 1.0\n2025-02-13: 2.0\n2025-02-14: 3.0",  # said what they are
    "沪深300 近一年最高 4761.83。\n2025-12-31 收盘 4629.94\n2025-04-08 最低 3500",
])
def test_an_answer_with_dated_lines_in_words_is_not_an_echo(answer):
    from core.agent.normal import _only_data

    assert not _only_data(answer)


@pytest.mark.parametrize("answer", [
    "On 2025-02-14 NVDA closed at 138.85 USD.",  # one date and one figure: an answer
    "2025-02-14: 138.85 USD",
])
async def test_a_short_dated_answer_is_not_an_echo(answer):
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), Reply(text=answer)]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert len(srv.requests) == 2 and done(events).text == answer


async def test_nothing_after_a_good_call_is_sent_back_with_the_tools_figures():
    """The quiet 1.5B answered 英伟达最新收盘价是多少？ with nothing after its call."""
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), Reply(text=""),
              Reply(text="英伟达 2025-02-14 收盘价 138.85 美元。")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "英伟达最新收盘价是多少？", lang="zh")
    sent = srv.requests[2]["messages"][-1]["content"]
    assert sent.startswith(prompts.NO_FIGURE) and "close: 138.85" in sent
    assert done(events).text == "英伟达 2025-02-14 收盘价 138.85 美元。"
    assert done(events).label == ""


def test_a_tables_currency_covers_its_rows_and_summary():
    """奈飞's closes (USD, said once at the table's top) were written in 元, unlabelled."""
    from core.agent.grounding import wrong_currency

    table = json.dumps({"symbol": "NFLX", "currency": "USD", "summary": {"close": 457.13},
                        "rows": [["2022-01-31", 401.97, 427.14]],
                        "fx": {"currency": "CNY", "rate": 7.1}})
    assert wrong_currency("2022年1月31日收盘 427.14元，最新 457.13元。", [table]) == [
        ("427.14元", "USD"), ("457.13元", "USD")]
    assert wrong_currency("最新 457.13 美元", [table]) == []
    assert wrong_currency("汇率 7.1元", [table]) == []  # the nested object's own currency


@pytest.mark.parametrize(("question", "echo"), [
    ("NVDA close?", "The figures and the tool results above hold them, but your answer "
                    "states none."),  # a line of a send-back
    ("英伟达收盘价？", "每个数字都写上工具结果给出的日期。"),  # a line of its instructions
    ("比特币价格", "比特币价格"),  # its question
    ("对比 英伟达 和 微软", "NVDA"),  # the hint beside its question
])
async def test_what_a_small_model_was_sent_is_not_its_answer(question, echo):
    """The 0.5B answered with lines of what it was sent; they are never shown as answers."""
    zh = not question.isascii()
    answer = ("英伟达 2025-02-14 收盘 138.85 美元。" if zh
              else "NVDA closed at 138.85 USD on 2025-02-14.")
    script = [Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]), Reply(text=echo),
              Reply(text=answer)]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, question, lang="zh" if zh else "en")
    assert "close: 138.85" in srv.requests[2]["messages"][-1]["content"]
    assert done(events).text == answer and echo not in shown(events)


async def test_a_call_written_as_text_that_names_no_tool_is_not_an_answer():
    """The 0.5B's "compare NVDA and MSFT": fenced calls of a tool that does not exist."""
    fenced = ('```json\n{"name": "compare NVDA and MSFT", "arguments": {"symbol": "NVDA"}}\n```'
              '\n```json\n{"name": "compare NVDA and MSFT", "arguments": {"symbol": "MSFT"}}\n```')
    script = [Reply(text=fenced), Reply(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
              Reply(text="NVDA closed at 138.85 USD on 2025-02-14.")]
    async with FakeOpenAI(script) as srv:
        events = await run(srv, "NVDA close?")
    assert srv.requests[1]["tool_choice"] == "required"  # a call is required next
    assert done(events).text == "NVDA closed at 138.85 USD on 2025-02-14."
    assert "compare NVDA" not in shown(events)


class Close(BaseModel):
    symbol: str
    name: str
    as_of: str
    close: float
    currency: str


def two_closes() -> ToolRegistry:
    reg = ToolRegistry()
    closes = {"NVDA": Close(symbol="NVDA", name="NVIDIA Corp", as_of="2025-02-14",
                            close=138.85, currency="USD"),
              "MSFT": Close(symbol="MSFT", name="Microsoft Corp", as_of="2021-03-31",
                            close=235.77, currency="USD")}

    @tool(registry=reg, tags=("market", "quote"))
    async def get_quote(symbol: str) -> Close:
        """Latest close.

        Args:
            symbol: ticker
        """
        return closes[symbol]

    return reg


@pytest.mark.parametrize(("answer", "found"), [
    # the quiet 1.5B's compare: NVDA's close given to MSFT as well
    ("对比 NVDA 和 MSFT，NVDA 的收盘价在 2025 年 2 月 14 日达到 138.85，而 MSFT 的收盘价在 "
     "2025 年 2 月 14 日达到 138.85。", [("138.85", "MSFT", "NVDA")]),
    ("NVDA closed at 235.77 USD on 2025-02-14.", [("235.77", "NVDA", "MSFT")]),
    ("Microsoft Corp closed at 138.85.", [("138.85", "MSFT", "NVDA")]),
    # right, however written: nothing found
    ("NVDA closed at 138.85 and MSFT at 235.77.", []),
    ("NVDA 138.85 USD (2025-02-14); MSFT 235.77 USD (2021-03-31).", []),
    ("NVDA's 138.85 is below MSFT's 235.77.", []),  # one clause names both: not judged
])
def test_a_figure_given_to_another_instrument_is_found(answer, found):
    from core.agent.grounding import wrong_instrument

    texts = [json.dumps({"symbol": "NVDA", "name": "NVIDIA Corp", "close": 138.85}),
             json.dumps({"symbol": "MSFT", "name": "Microsoft Corp", "close": 235.77})]
    assert wrong_instrument(answer, texts) == found


async def test_a_figure_given_to_another_instrument_is_sent_back_then_labelled():
    wrong = "NVDA closed at 138.85 on 2025-02-14, MSFT at 138.85 on 2021-03-31."
    right = "NVDA closed at 138.85 on 2025-02-14, MSFT at 235.77 on 2021-03-31."
    calls = Reply(tool_calls=[("get_quote", {"symbol": "NVDA"}),
                              ("get_quote", {"symbol": "MSFT"})])
    async with FakeOpenAI([calls, Reply(text=wrong), Reply(text=right)]) as srv:
        events = await run(srv, "compare NVDA and MSFT", reg=two_closes())
    sent = srv.requests[2]["messages"][-1]["content"]
    assert "138.85 for MSFT, but 138.85 is NVDA's" in sent
    assert done(events).text == right and done(events).label == ""
    async with FakeOpenAI([calls, Reply(text=wrong), Reply(text=wrong)]) as srv:
        events = await run(srv, "compare NVDA and MSFT", reg=two_closes())
    assert done(events).label == (
        "Check the instrument: the data gives these figures to another one: "
        "138.85 (MSFT → NVDA).")
