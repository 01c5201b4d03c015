"""One understanding of a question (analyst.understanding): instruments exchange-qualified,
the period by the tools' rules, the metric and the intent, in Chinese and English, against the
real symbols directory."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from analyst.instruments import find_instruments
from analyst.staleness import age
from analyst.understanding import understand


@pytest.fixture(scope="module")
def directory() -> Any:
    from tools.symbols import default_directory

    return default_directory()


@pytest.mark.parametrize(("text", "symbols"), [
    # index words are the index, never the share that uses the same code
    ("上证指数和沪深300对比", ["000001.SH", "000300"]),
    ("上证指数最近一个月涨跌", ["000001.SH"]),
    ("上证最近一个月", ["000001.SH"]),
    ("沪指今天怎么样", ["000001.SH"]),
    ("深证成指和创业板指对比", ["399001", "399006"]),
    ("沪深300 2020年5月走势", ["000300"]),
    ("How did the CSI 300 do in May 2020?", ["000300"]),
    ("Shanghai Composite vs CSI 300", ["000001.SH", "000300"]),
    ("000001.SH", ["000001.SH"]),
    # ... and the share is the share
    ("平安银行股价", ["000001"]),
    ("000001 平安银行股价", ["000001"]),
    ("平安银行和上证指数对比", ["000001", "000001.SH"]),
    # names in sentences: lower case, possessive, misspelt, Chinese alias before a question
    ("Nvidea stock price", ["NVDA"]),
    ("Microsfot stock price", ["MSFT"]),
    ("how is nvidia and amd doing", ["NVDA", "AMD"]),
    ("Apple's risk factors in its latest 10-K", ["AAPL"]),
    ("苹果怎么样", ["AAPL"]),
    ("特斯拉最近一年涨了多少", ["TSLA"]),
    ("茅台的市盈率是多少", ["600519"]),
    ("中国平安的市盈率", ["601318"]),
    ("腾讯控股股价", ["0700"]),
    # plain sentences name nothing
    ("I want to know", []),
    ("how is the market", []),
    ("how is the market doing today", []),
    ("I want to know about the weather", []),
    ("what should I buy?", []),
    ("我该买什么股票", []),
    ("今天大盘怎么样", []),
    ("Is it a good time to invest?", []),
    ("thanks, that helps", []),
])
def test_instruments(directory: Any, text: str, symbols: list[str]) -> None:
    assert understand(text, directory).symbols == symbols


@pytest.mark.parametrize(("text", "intent", "period", "metrics"), [
    ("上证指数和沪深300对比", "compare", None, ()),
    ("How did NVDA do over the last 3 months?", "performance", "3mo", ("change",)),
    ("特斯拉最近一年涨了多少", "performance", "1y", ("change",)),
    ("上证指数最近一个月涨跌", "performance", "1mo", ("change",)),
    ("沪深300 2020年5月走势", "performance", "2020-05", ("change",)),
    ("How did the CSI 300 do in May 2020?", "performance", "2020-05", ("change",)),
    ("浦发银行2024年9月的走势", "performance", "2024-09", ("change",)),
    ("NVDA from 2024-01-02 to 2024-06-28", "performance", "2024-01-02..2024-06-28", ()),
    ("茅台的市盈率是多少", "fundamentals", None, ("pe",)),
    ("What is the P/E of Ping An?", "fundamentals", None, ("pe",)),
    ("中国平安的市净率", "fundamentals", None, ("pb",)),
    ("茅台市值多少", "fundamentals", None, ("market_cap",)),
    ("中国平安2019年净利润", "fundamentals", "2019", ("profit",)),
    ("茅台明天会涨吗", "prediction", None, ()),
    ("Will NVDA go up tomorrow?", "prediction", None, ()),
    ("NVDA price prediction", "prediction", None, ("price",)),
    ("what should I buy?", "advice", None, ()),
    ("我该买什么股票", "advice", None, ()),
    ("Should I buy AAPL?", "advice", None, ()),
    ("半导体板块哪些股票值得关注", "sector", None, ()),
    ("今天大盘怎么样", "market", None, ()),
    ("how is the market", "market", None, ()),
    ("招商中证白酒指数基金净值", "fund", None, ()),
    ("Apple's risk factors in its latest 10-K", "filings", None, ()),
    ("Nvidea stock price", "quote", None, ("price",)),
    ("苹果怎么样", "quote", None, ()),
    ("AAPL RSI", "indicators", None, ("rsi",)),
    ("NVDA chart last year", "chart", "1y", ()),
    ("ICT analysis of BTC-USD on 15m", "ict", None, ()),
    ("hello", "quote", None, ()),
])
def test_intent_period_and_metrics(directory: Any, text: str, intent: str,
                                   period: str | None, metrics: tuple[str, ...]) -> None:
    u = understand(text, directory)
    assert u.intent == intent
    assert (u.period.text if u.period else None) == period
    for m in metrics:
        assert m in u.metrics


def test_will_it_rise_is_a_prediction_whatever_else_is_asked(directory: Any) -> None:
    u = understand("Will NVDA rise tomorrow?", directory)
    assert u.intent == "prediction" and u.symbols == ["NVDA"]
    u = understand("半导体板块哪些股票值得关注", directory)
    assert u.intent == "sector" and u.asks_advice


def test_instruments_carry_exchange_qualified_display(directory: Any) -> None:
    sse, bank = find_instruments("上证指数和平安银行", directory)
    assert sse.display == "上证指数 (000001.SH)" and sse.kind == "index"
    assert bank.display == "平安银行 (000001.SZ)" and bank.kind == "stock"


def test_index_words_work_without_a_directory() -> None:
    assert [i.symbol for i in find_instruments("上证指数和沪深300", None)] == [
        "000001.SH", "000300"]


@pytest.mark.parametrize(("as_of", "today", "count", "unit", "stale"), [
    (date(2013, 3, 1), date(2026, 11, 26), 13, "year", True),
    (date(2025, 12, 31), date(2026, 11, 26), 10, "month", True),
    (date(2026, 11, 10), date(2026, 11, 26), 16, "day", True),
    (date(2026, 11, 24), date(2026, 11, 26), 2, "day", False),
])
def test_age(as_of: date, today: date, count: int, unit: str, stale: bool) -> None:
    a = age(as_of, today)
    assert (a.count, a.unit, a.stale) == (count, unit, stale)


class _Counting:
    """The directory, counting its searches."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.searches = inner, 0

    def resolve(self, *a: Any, **k: Any) -> Any:
        self.searches += 1
        return self.inner.resolve(*a, **k)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@pytest.mark.parametrize("shape", ["near_names", "cjk_cues", "distinct_words"])
def test_a_long_hostile_message_costs_a_bounded_number_of_searches(directory: Any,
                                                                   shape: str) -> None:
    """20,000 characters of near-names, Chinese names before question words, or distinct
    capitalised words: the reader searches the directory at most MAX_NAME_LOOKUPS times (it
    grew with the text: 1.0-1.3 s at 10,000 characters), and the question at the end is still
    read."""
    from analyst.instruments import MAX_NAME_LOOKUPS

    unit = {"near_names": "Nvidea Microsfot Amazn Teslla Appel ",
            "cjk_cues": "茅台怎么样 平安走势 宁德股价 ",
            "distinct_words": ""}[shape]
    if shape == "distinct_words":
        body = " ".join(f"Zorbl{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}x" for i in range(2200))
    else:
        body = unit * (20_000 // len(unit))
    text = body[:20_000] + " What about NVIDIA?"
    counting = _Counting(directory)
    found = find_instruments(text, counting)
    assert counting.searches <= MAX_NAME_LOOKUPS + 2, counting.searches
    assert "NVDA" in [i.code for i in found]


@pytest.mark.parametrize(("text", "codes"), [
    ("what about netflix", ["NFLX"]),
    ("netflix vs disney, which one has more upside?", ["NFLX", "DIS"]),
    ("is microsoft a buy", ["MSFT"]),
    ("I had apple pie and a visa interview", []),
])
def test_a_company_name_in_lower_case_is_read_unless_it_is_an_everyday_word(
        directory: Any, text: str, codes: list[str]) -> None:
    """"netflix" is in the word list's most common English words, which made the reader skip
    it in lower case (the held-out set's "netflix vs disney" found only Disney)."""
    assert [i.code for i in find_instruments(text, directory)] == codes


@pytest.mark.parametrize(("text", "codes"), [
    ("Give me the RSI for $COIN on the daily", ["COIN"]),
    ("CCI and ATR of NVDA", ["NVDA"]),
    ("$RSI price", ["RSI"]),
    ("RSI stock price", ["RSI"]),
])
def test_an_indicator_written_like_a_ticker_is_the_indicator_beside_another_instrument(
        directory: Any, text: str, codes: list[str]) -> None:
    """RSI is also Rush Street Interactive's ticker: "the RSI for $COIN" asked about one
    stock, not two (the held-out set of issue 34)."""
    assert [i.code for i in find_instruments(text, directory)] == codes
