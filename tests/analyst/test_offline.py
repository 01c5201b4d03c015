"""The offline analyst on indices, crypto and FX, its introduction and its valuation note,
through the real tools, symbols directory, snapshot and ICT answer (no LLM, offline data)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from analyst.ict_answer import ict_answer
from analyst.offline import OfflineAnalyst, detect_intent, is_greeting, snapshot_coverage
from bot.symbols_bridge import find_symbols
from core.agent.turn import Turn
from core.events import Done, Event, File, ToolStarted
from core.testing import MemoryRecorder
from tools import build_registry, snapshot
from tools.data import DataConfig, configure

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _offline_data() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


async def _ask(text: str, lang: str = "en") -> tuple[list[Event], Done]:
    analyst = OfflineAnalyst(registry=build_registry(), find_symbols=find_symbols,
                             ict_answer=ict_answer)
    recorder = MemoryRecorder()
    events = [e async for e in analyst.run(Turn(text=text, history=[], recorder=recorder,
                                                 lang=lang))]
    done = events[-1]
    assert isinstance(done, Done)
    assert recorder.messages[-1].content == done.text
    return events, done


def _tools(events: list[Event]) -> list[tuple[str, dict[str, object]]]:
    return [(e.name, dict(e.arguments or {})) for e in events if isinstance(e, ToolStarted)]


@pytest.mark.parametrize(("text", "codes"), [
    ("ICT analysis of BTC-USD on 15m", ["BTC-USD"]),
    ("EURUSD ICT 1h", ["EURUSD"]),
    ("How is the CSI 300 doing?", ["000300"]),
    ("S&P 500 last month", ["^GSPC"]),
    ("bitcoin price", ["BTC-USD"]),
    ("比特币最近怎么样", ["BTC-USD"]),
    ("标普500和沪深300对比", ["^GSPC", "000300"]),
    ("上证指数和平安银行", ["000001.SH", "000001"]),
    ("000001 最近走势", ["000001"]),
    ("hello", []),
    ("What's the DCF value of AAPL?", ["AAPL"]),
    # a message that is only a symbol is that symbol
    ("btc", ["BTC-USD"]),
    ("nvda?", ["NVDA"]),
    ("spx", ["^GSPC"]),
    ("Nasdaq", ["^IXIC"]),
    ("Is the S&P up today?", ["^GSPC"]),
    ("关于道指的看法", ["^DJI"]),
    ("Apple", ["AAPL"]),  # a well-known company's name written as a proper noun
    ("Microsoft?", ["MSFT"]),
    # ... but an everyday word stays a word
    ("apple", []),
    ("gold", []),
    ("news", []),
    ("News", []),
    ("Hello!", []),
    ("crypto", []),
    ("I love my dji drone", []),
])
def test_find_symbols_gives_tool_codes(text: str, codes: list[str]) -> None:
    assert find_symbols(text) == codes


async def test_ict_on_btc_15m_from_the_snapshot() -> None:
    events, done = await _ask("ICT analysis of BTC-USD on 15m")
    assert _tools(events)[0][0] == "ict_analyze"
    assert any(isinstance(e, File) and e.file.data[:8] == PNG for e in events)
    assert "(BTC-USD) · 15m" in done.text
    assert "BTC-USD-15-MIN.csv" in done.text and "offline snapshot" in done.text


async def test_ict_on_eurusd_1h_from_the_snapshot() -> None:
    events, done = await _ask("EURUSD ICT 1h")
    assert any(isinstance(e, File) for e in events)
    assert "(EURUSD) · 1H" in done.text and "FOREX_EURUSD_1H_ASK.csv" in done.text


async def test_csi300_quote_is_labelled_with_source_and_date() -> None:
    events, done = await _ask("How is the CSI 300 doing?")
    assert _tools(events) == [("get_quote", {"symbol": "000300"})]
    last = snapshot.load("000300").index[-1].date().isoformat()
    assert "(000300)" in done.text and last in done.text
    assert "Source: snapshot" in done.text and "(offline snapshot)" in done.text


async def test_sp500_last_month_is_price_history() -> None:
    events, done = await _ask("S&P 500 last month")
    assert _tools(events) == [("get_ohlcv", {"symbol": "^GSPC", "period": "1mo", "limit": 10})]
    assert "(^GSPC)" in done.text and "yahoo_stock.csv" in done.text


async def test_bitcoin_in_chinese_answers_in_chinese() -> None:
    _, done = await _ask("比特币最近怎么样", lang="zh")
    assert "(BTC-USD)" in done.text and "数据来源：快照" in done.text
    assert "snapshot" not in done.text  # the source line said in Chinese (issue 30)
    assert done.label.startswith("离线分析师")


async def test_sse_composite_is_not_answered_as_ping_an_bank() -> None:
    events, done = await _ask("上证指数怎么样", lang="zh")
    assert _tools(events) == [("get_quote", {"symbol": "000001.SH"})]
    assert "平安银行" not in done.text and "上证指数" in done.text


async def test_greeting_gets_an_intro_with_the_snapshot_coverage() -> None:
    events, done = await _ask("hello")
    assert not _tools(events)
    assert done.text.startswith("Hi! I'm the offline analyst.")
    assert "couldn't find" not in done.text
    for symbol in snapshot.symbols():
        for series in snapshot.series_for(symbol):
            df = snapshot.load(symbol, series.interval)
            first, last = df.index[0].date().isoformat(), df.index[-1].date().isoformat()
            assert f"{first} – {last}" in done.text, (symbol, series.interval)
    assert "15-minute" in done.text and "hourly" in done.text


async def test_chinese_greeting_gets_the_intro_in_chinese() -> None:
    _, done = await _ask("你好！", lang="zh")
    assert done.text.startswith("你好！我是离线分析师。")
    assert "离线快照包含" in done.text and "15分钟线" in done.text


async def test_question_without_a_symbol_gets_a_short_pointer_not_the_intro() -> None:
    """Issue 33: the 45-line inventory after every question not understood buried the
    transcript; a greeting, /help and /start still get it."""
    _, done = await _ask("what is the meaning of life")
    assert done.text.startswith("I could not find a stock, index, crypto or FX pair in that.")
    assert "“NVDA latest close”" in done.text and "/help" in done.text
    assert "The offline snapshot covers:" not in done.text and len(done.text.splitlines()) == 1
    assert done.label  # still labelled as the offline analyst's
    _, zh = await _ask("今天天气怎么样", lang="zh")
    assert zh.text.startswith("我没有在这句话里找到股票") and "沪深300最近一个月" in zh.text
    assert "离线快照包含" not in zh.text


async def test_dcf_offline_says_statements_need_a_live_provider_and_quotes() -> None:
    events, done = await _ask("What's the DCF value of AAPL?")
    assert _tools(events) == [("get_quote", {"symbol": "AAPL"})]
    assert done.text.startswith("Financial statements")
    assert "live data provider" in done.text and "Apple Inc (AAPL)" in done.text
    _, zh = await _ask("茅台的财报和估值", lang="zh")
    assert zh.text.startswith("财务报表") and "在线数据源" in zh.text


async def test_a_valuation_comparison_compares_and_adds_the_note() -> None:
    events, done = await _ask("compare the valuation of AAPL and MSFT")
    assert [name for name, _ in _tools(events)] == ["get_quotes", "generate_chart"]
    assert done.text.startswith("Financial statements") and "live data provider" in done.text
    assert "latest quote" not in done.text
    events, done = await _ask("AAPL cash flow chart")
    assert [name for name, _ in _tools(events)] == ["generate_chart"]
    assert any(isinstance(e, File) for e in events)
    assert done.text.startswith("Financial statements")
    events, zh = await _ask("平安银行和茅台的估值对比", lang="zh")
    assert [name for name, _ in _tools(events)][:1] == ["get_quotes"]
    assert zh.text.startswith("财务报表")


async def test_a_message_that_is_only_a_symbol_is_answered_for_it() -> None:
    events, done = await _ask("btc")
    assert _tools(events) == [("get_quote", {"symbol": "BTC-USD"})]
    assert "(BTC-USD)" in done.text and "offline analyst" not in done.text
    _, hello = await _ask("gold")
    assert hello.text.startswith("I could not find a stock")


def test_coverage_is_read_from_the_snapshot() -> None:
    cover = {symbol: spans for symbol, _, spans in snapshot_coverage()}
    assert set(cover) == set(snapshot.symbols())
    assert [i for i, _, _ in cover["BTC-USD"]] == ["1d", "15m"]
    assert [i for i, _, _ in cover["EURUSD"]] == ["1h"]


@pytest.mark.parametrize(("text", "intent"), [
    ("predict bitcoin price", "quote"),  # "ict" inside a word is not ICT
    ("strict rules for AAPL", "quote"),
    ("ICT analysis of BTC-USD on 15m", "ict"),
    ("BTC fair value gap", "ict"),
    ("What's the DCF value of AAPL?", "valuation"),
    ("NVDA balance sheet", "valuation"),
    ("茅台估值", "valuation"),
    ("AAPL vs MSFT", "compare"),
    ("S&P 500 last month", "history"),
    # plurals and -ing forms
    ("show me charts of AAPL", "chart"),
    ("graphs of NVDA", "chart"),
    ("charting NVDA", "chart"),
    ("AAPL candlesticks", "chart"),
    ("AAPL trends", "history"),
    ("technicals for AAPL", "indicators"),
    ("trade plans for AAPL", "plan"),
    ("comparing AAPL and MSFT", "compare"),
    ("Is NVDA helping the index?", "quote"),  # not a request for help
    ("I pasted AAPL", "quote"),
    # a valuation word does not hide what else is asked
    ("compare the valuation of AAPL and MSFT", "compare"),
    ("AAPL cash flow chart", "chart"),
    ("平安银行和茅台的估值对比", "compare"),
])
def test_detect_intent(text: str, intent: str) -> None:
    assert detect_intent(text) == intent


@pytest.mark.parametrize(("text", "greeting"), [
    ("hello", True), ("Hi there!", True), ("你好", True), ("good morning", True),
    ("hello, how is NVDA?", False), ("history of AAPL", False), ("hi-fi stocks", False),
])
def test_is_greeting(text: str, greeting: bool) -> None:
    assert is_greeting(text) is greeting


async def test_a_comparison_charts_the_symbols_that_have_prices_and_says_why_others_lack() -> None:
    events, done = await _ask("NVDA vs ORCL")
    charts = [args for name, args in _tools(events) if name == "generate_chart"]
    assert charts == [{"symbols": ["NVDA"], "period": "1y"}]
    assert sum(isinstance(e, File) for e in events) == 1
    assert done.text.count("no data for ORCL") == 1  # said once, by the quotes, not the chart
    assert "⚠️" not in done.text


async def test_a_comparison_with_no_prices_at_all_draws_nothing_and_has_no_empty_table() -> None:
    events, done = await _ask("compare ORCL and INTC")
    assert [name for name, _ in _tools(events)] == ["get_quotes"]
    assert "| Symbol |" not in done.text
    assert "no data for ORCL" in done.text and "no data for INTC" in done.text


async def test_a_comparison_cut_to_the_shared_dates_says_so() -> None:
    _, done = await _ask("Compare NVDA and MSFT over the last year")
    assert ("Compared over the dates all series share, to 2021-03-31 "
            "(NVDA has data to 2025-02-14).") in done.text
    _, same_end = await _ask("Compare AAPL and IBM")  # both end 2013-03-01: nothing to say
    assert "dates all series share" not in same_end.text


def test_one_unit_periods_in_words_are_read_as_that_unit() -> None:
    from analyst.offline import detect_period

    assert detect_period("IBM history over the last year") == "1y"
    assert detect_period("AAPL over the past week") == "7d"
    assert detect_period("NVDA over the last 3 months") == "3mo"  # a number still wins
    assert detect_period("NVDA latest close") is None


async def test_a_currency_rate_is_quoted_to_four_decimals_without_a_dollar_sign() -> None:
    from analyst import format as fmt
    from tools.market import get_quote

    q = await get_quote("EURUSD")
    text = fmt.quote(q, "en")
    assert f"{q.close:.4f}" in text and "$" not in text
    assert q.as_of.isoformat() in text


@pytest.mark.parametrize(("question", "lang"), [
    ("NVDA latest close", "en"), ("S&P 500 last month", "en"), ("bitcoin price", "en"),
    ("浦发银行 最新收盘价", "zh"), ("沪深300最近一个月", "zh"), ("比特币价格", "zh")])
async def test_the_examples_the_short_pointer_offers_are_answered(question: str,
                                                                  lang: str) -> None:
    from core.words import t

    assert question in t("chat.not_understood", lang)
    events, done = await _ask(question, lang=lang)
    assert _tools(events) and not done.text.startswith(("I could not", "我没有"))


def test_a_tools_unknown_symbol_is_said_in_the_readers_language() -> None:
    """Issue 30: `Unknown symbol '0700'` was shown in English to a Chinese question."""
    from analyst.offline import _Step
    from core.errors import UnknownSymbol

    exc = UnknownSymbol("0700", ["000700", "600700"])
    step = _Step("get_quote", {"symbol": "0700"}, error=str(exc), exc=exc)
    assert step.message("zh") == "找不到“0700”。你是不是想找：000700、600700？"
    assert "Did you mean" not in step.message("zh") and "0700" in step.message("en")
    assert _Step("get_quote", {}, error="no bars").message("zh") == "no bars"
