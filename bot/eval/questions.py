"""The evaluation questions (English and Chinese) and what each one should answer.

Expected figures are computed at run time by calling the tools' functions directly, so the
set follows whatever the offline snapshot (and installed data packs) hold. A question whose
expectation cannot be computed (no data for its symbol) is reported as not covered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["quote", "range", "compare", "indicator", "ict", "unknown", "chat"]


@dataclass(frozen=True)
class Expected:
    """Figures the answer must contain (each to its written precision) and dates it must
    name; empty for questions where the point is to invent nothing."""

    figures: list[tuple[str, float]] = field(default_factory=list)  # (what, value)
    dates: list[str] = field(default_factory=list)  # ISO dates


Expect = Callable[[], Awaitable[Expected]]


@dataclass(frozen=True)
class Question:
    id: str
    lang: Literal["en", "zh"]
    kind: Kind
    text: str
    expect: Expect | None = None  # None: nothing to find (unknown symbols, chit-chat)


def _iso(day: object) -> str:
    iso = getattr(day, "isoformat", None)
    return str(iso() if callable(iso) else day)[:10]


def quote(symbol: str) -> Expect:
    async def run() -> Expected:
        from tools.market import get_quote

        q = await get_quote(symbol=symbol)
        return Expected(figures=[(f"{q.symbol} close", q.close)], dates=[_iso(q.as_of)])
    return run


def period_high(symbol: str, period: str) -> Expect:
    """The highest high over the period, from every bar of it (computed here)."""
    async def run() -> Expected:
        from tools.market import MAX_ROWS, get_ohlcv

        o = await get_ohlcv(symbol=symbol, period=period, limit=MAX_ROWS)
        cols = o.columns
        highs = [float(h) for r in o.rows if isinstance(h := r[cols.index("high")], int | float)]
        last = str(o.rows[-1][cols.index("date")])[:10]
        return Expected(figures=[(f"{o.symbol} {period} high", max(highs))], dates=[last])
    return run


def compare(*symbols: str) -> Expect:
    async def run() -> Expected:
        from tools.market import get_quote

        figs: list[tuple[str, float]] = []
        dates: list[str] = []
        for s in symbols:
            q = await get_quote(symbol=s)
            figs.append((f"{q.symbol} close", q.close))
            dates.append(_iso(q.as_of))
        return Expected(figures=figs, dates=sorted(set(dates)))
    return run


def indicator(symbol: str, name: str, key: str) -> Expect:
    async def run() -> Expected:
        from tools.indicators import get_indicators

        r = await get_indicators(symbol=symbol, indicators=[name])  # type: ignore[list-item]
        value = r.indicators[0].latest[key]
        if value is None:
            raise ValueError(f"no latest {key} for {symbol}")
        return Expected(figures=[(f"{r.symbol} {key}", float(value))],
                        dates=[_iso(r.as_of)])
    return run


def ict_close(symbol: str) -> Expect:
    async def run() -> Expected:
        from tools.ict_tool import ict_analyze

        r = await ict_analyze(symbol=symbol, interval="1d")
        day = _iso(r.source.as_of) if r.source.as_of else ""
        return Expected(figures=[(f"{r.symbol} last close", r.last_close)],
                        dates=[day] if day else [])
    return run


QUESTIONS: tuple[Question, ...] = (
    # quotes
    Question("q-nvda-en", "en", "quote", "What was NVDA's latest close?", quote("NVDA")),
    Question("q-msft-en", "en", "quote", "MSFT stock price", quote("MSFT")),
    Question("q-btc-en", "en", "quote", "Bitcoin price", quote("BTC-USD")),
    Question("q-amzn-en", "en", "quote", "AMZN quote", quote("AMZN")),
    Question("q-nflx-en", "en", "quote", "How much is Netflix stock?", quote("NFLX")),
    Question("q-goog-en", "en", "quote", "GOOG last close", quote("GOOG")),
    Question("q-eurusd-en", "en", "quote", "EURUSD rate", quote("EURUSD")),
    Question("q-csi-en", "en", "quote", "CSI 300 index level", quote("000300")),
    Question("q-nvda-zh", "zh", "quote", "英伟达最新收盘价是多少？", quote("NVDA")),
    Question("q-csi-zh", "zh", "quote", "沪深300 最新点位", quote("000300")),
    Question("q-btc-zh", "zh", "quote", "比特币价格", quote("BTC-USD")),
    Question("q-msft-zh", "zh", "quote", "微软股价", quote("MSFT")),
    Question("q-spdb-zh", "zh", "quote", "浦发银行股价", quote("600000")),
    Question("q-tsla-zh", "zh", "quote", "特斯拉现在多少钱", quote("TSLA")),
    # ranges
    Question("r-nvda-en", "en", "range", "NVDA performance over the last 3 months",
             period_high("NVDA", "3mo")),
    Question("r-msft-en", "en", "range", "MSFT price history last month",
             period_high("MSFT", "1mo")),
    Question("r-btc-en", "en", "range", "BTC-USD trend over the past 6 months",
             period_high("BTC-USD", "6mo")),
    Question("r-ibm-en", "en", "range", "IBM history over the last year",
             period_high("IBM", "1y")),
    Question("r-nvda-zh", "zh", "range", "英伟达最近3个月走势", period_high("NVDA", "3mo")),
    Question("r-csi-zh", "zh", "range", "沪深300 近一年表现", period_high("000300", "1y")),
    Question("r-nflx-zh", "zh", "range", "奈飞最近一个月的历史行情", period_high("NFLX", "1mo")),
    # comparisons
    Question("c-nvda-msft-en", "en", "compare", "compare NVDA and MSFT", compare("NVDA", "MSFT")),
    Question("c-amzn-nflx-en", "en", "compare", "AMZN vs NFLX", compare("AMZN", "NFLX")),
    Question("c-nvda-msft-zh", "zh", "compare", "对比 英伟达 和 微软", compare("NVDA", "MSFT")),
    Question("c-csi-spx-zh", "zh", "compare", "比较 沪深300 和 标普500",
             compare("000300", "^GSPC")),
    # indicators
    Question("i-nvda-rsi-en", "en", "indicator", "NVDA RSI", indicator("NVDA", "rsi", "rsi")),
    Question("i-msft-en", "en", "indicator", "MSFT technical indicators",
             indicator("MSFT", "rsi", "rsi")),
    Question("i-btc-macd-en", "en", "indicator", "BTC-USD MACD",
             indicator("BTC-USD", "macd", "macd")),
    Question("i-csi-zh", "zh", "indicator", "沪深300 技术指标", indicator("000300", "rsi", "rsi")),
    Question("i-nvda-rsi-zh", "zh", "indicator", "英伟达 RSI 指标",
             indicator("NVDA", "rsi", "rsi")),
    # ICT
    Question("t-nvda-en", "en", "ict", "ICT analysis of NVDA", ict_close("NVDA")),
    Question("t-btc-en", "en", "ict", "BTC-USD order blocks on the daily chart",
             ict_close("BTC-USD")),
    Question("t-csi-zh", "zh", "ict", "沪深300 ICT 分析", ict_close("000300")),
    # unknown symbols: nothing to find, nothing to invent
    Question("u-xyzq-en", "en", "unknown", "XYZQ price"),
    Question("u-foobar-en", "en", "unknown", "What is the price of FOOBARCO stock?"),
    Question("u-zzzz-zh", "zh", "unknown", "ZZZZQ 股价"),
    Question("u-none-zh", "zh", "unknown", "不存在科技公司 的股价是多少"),
    # chit-chat
    Question("h-hello-en", "en", "chat", "hello"),
    Question("h-thanks-en", "en", "chat", "thanks, that helps"),
    Question("h-hello-zh", "zh", "chat", "你好"),
    Question("h-thanks-zh", "zh", "chat", "谢谢"),
)
