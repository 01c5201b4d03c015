"""One understanding of a question, shared by every mode: which instruments (exchange-
qualified), which period (`tools.periods`, the tools' own rules), which metrics and what it
wants done (the intent).

    understand("上证指数和沪深300对比", directory)
    -> instruments 上证指数 (000001.SH) and 沪深300 (000300), intent "compare"

Intents, checked in this order (the first that fits wins):

- ``help``; ``prediction`` (会涨吗, will it rise, price target); ``advice`` (该买什么, what
  should I buy, 值得买吗); ``sector`` (半导体板块, semiconductor sector); ``fund`` (基金净值,
  fund NAV); ``filings`` (10-K, risk factors); ``northbound``; ``dividends``; ``holders``;
  ``plan``; ``ict``; ``chart``; ``indicators``; ``compare``; ``fundamentals`` (statements,
  DCF, or a metric from them: P/E, P/B, market cap, dividend yield, revenue, profit, EPS);
  ``performance`` (a period, or a change asked for: 涨了多少, how did it do, 走势);
  ``market`` (大盘, how is the market: no instrument named); ``quote`` otherwise.

A question may ask for more than its intent (a prediction about a stock still names it; a
comparison of valuations still wants statements): `metrics` and `wants_statements` keep that.
Pure: no I/O besides the symbols directory it is given.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from analyst.instruments import Instrument, find_instruments
from tools.periods import Period, find_period

Intent = Literal["help", "prediction", "advice", "sector", "fund", "filings", "northbound",
                 "dividends", "holders", "plan", "ict", "chart", "indicators", "compare",
                 "fundamentals", "performance", "market", "quote"]
Metric = Literal["price", "change", "high", "low", "volume", "pe", "pb", "market_cap",
                 "dividend_yield", "revenue", "profit", "eps", "roe", "rsi", "macd"]

# metrics a valuation multiple needs a price and statements for
MULTIPLES: frozenset[str] = frozenset({"pe", "pb", "market_cap", "dividend_yield"})
STATEMENT_LINES: frozenset[str] = frozenset({"revenue", "profit", "eps", "roe"})


# Latin words that take no ending: abbreviations, "past" ("pasted" is no history), "help"
_UNINFLECTED = frozenset({"macd", "past", "help", "rsi", "eps", "roe", "nav", "etf"})


def _inflected(word: str) -> str:
    """A Latin word with its plural and -ing/-ed forms: chart(s|ing|ed), compar(e|es|ing),
    plot(s|ting), history/histories."""
    w = re.escape(word)
    if word[-1:] == "e":
        return rf"{re.escape(word[:-1])}(?:e|es|ed|ing)"
    if word[-1:] == "y":
        return rf"(?:{w}|{re.escape(word[:-1])}(?:ies|ied))"
    return rf"{w}(?:s|es|{re.escape(word[-1])}?(?:ing|ed))?"


def words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """Latin words as whole words ("ict" is not in "predict") with their plural and -ing
    forms ("charts", "trends", "trade plans"); Chinese ones anywhere."""
    parts = []
    for w in sorted(words, key=len, reverse=True):
        if not w.isascii():
            parts.append(re.escape(w))
            continue
        body = re.escape(w) if w in _UNINFLECTED else r"\s+".join(
            _inflected(x) if len(x) > 3 else re.escape(x) for x in w.split())
        parts.append(rf"(?<![a-z]){body}(?![a-z])")
    return re.compile("|".join(parts))


# what the question asks done, in the order the module docstring gives
_INTENT_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("help", ("help", "what can you do", "帮助", "你能做什么")),
    ("prediction", ("会涨吗", "会跌吗", "会不会涨", "会不会跌", "能涨吗", "还会涨", "还会跌",
                    "还能涨", "明天涨", "明天跌", "明天会", "下周会", "能涨到", "会涨到",
                    "涨到多少",
                    "目标价", "预测", "后市", "走势预测", "会上涨", "会下跌", "will it rise",
                    "will it go up", "will it fall", "will it drop", "will it crash",
                    "going to rise", "going to go up", "going to fall", "go up tomorrow",
                    "price target", "predict", "prediction", "forecast", "price prediction",
                    "tomorrow", "next week", "next month", "明天", "下周", "下个月", "未来走势")),
    ("sector", ("板块", "行业", "概念股", "sector", "industry stocks")),
    ("advice", ("该买什么", "买什么股票", "买哪只", "买哪个", "推荐股票", "推荐一只", "推荐几只",
                "值得买", "能买吗", "可以买吗", "该不该买", "要不要买", "应该买", "该卖",
                "应该卖", "要不要卖", "抄底", "值得投资", "值得关注", "should i buy",
                "should i sell", "what should i buy", "what to buy", "what stock to buy",
                "recommend", "recommendation", "worth buying", "good buy", "good investment",
                "is it a buy", "buy or sell", "should i invest", "good time to invest",
                "good time to buy", "time to buy", "适合买", "适合入手", "买入还是卖出")),
    ("fund", ("基金", "净值", "etf", "nav", "mutual fund", "fund")),
    ("filings", ("10-k", "10-q", "20-f", "risk factors", "sec filing", "filing", "md&a",
                 "风险因素", "年报原文")),
    ("northbound", ("northbound", "stock connect", "北向", "沪股通", "深股通", "沪深港通",
                    "陆股通")),
    ("dividends", ("dividend", "分红", "派息")),
    ("holders", ("shareholders", "top holders", "股东")),
    ("plan", ("trade plan", "plan for", "交易计划")),
    ("ict", ("ict", "smart money", "order block", "order blocks", "fvg", "fair value gap",
             "聪明钱", "订单块")),
    ("chart", ("chart", "plot", "graph", "candle", "candles", "candlestick", "图", "k线")),
    ("indicators", ("rsi", "macd", "bollinger", "kdj", "atr", "obv", "indicator", "indicators",
                    "technical", "技术指标", "指标", "布林")),
    ("compare", ("compare", "vs", "versus", "对比", "比较", "相比")),
)
_INTENT_RES = tuple((name, words_pattern(words)) for name, words in _INTENT_WORDS)
_INTENTS = dict(_INTENT_RES)

_STATEMENTS = words_pattern((
    "dcf", "valuation", "valuations", "valuate", "intrinsic value", "fair value", "financials",
    "financial statements", "fundamentals", "income statement", "balance sheet", "cash flow",
    "free cash flow", "估值", "财报", "现金流", "利润表", "资产负债表", "内在价值", "基本面",
    "财务报表", "财务数据", "净利润", "营收", "营业收入", "利润", "每股收益", "net profit",
    "net income", "revenue", "earnings", "eps"))
VALUATION_ONLY = words_pattern(("dcf", "valuation", "valuate", "intrinsic value", "fair value",
                                "估值", "内在价值"))

_METRIC_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pe", ("市盈率", "pe ratio", "p/e", "pe", "price to earnings", "price-to-earnings",
            "ttm pe", "动态市盈率", "静态市盈率")),
    ("pb", ("市净率", "pb ratio", "p/b", "price to book", "price-to-book")),
    ("market_cap", ("市值", "market cap", "market capitalization", "market value")),
    ("dividend_yield", ("股息率", "dividend yield", "股息收益率")),
    ("revenue", ("营收", "营业收入", "收入", "revenue", "sales")),
    ("profit", ("净利润", "利润", "盈利", "net profit", "net income", "profit", "earnings")),
    ("eps", ("每股收益", "eps")),
    ("roe", ("净资产收益率", "roe")),
    ("rsi", ("rsi",)),
    ("macd", ("macd",)),
    ("volume", ("成交量", "成交额", "volume", "turnover")),
    ("high", ("最高", "新高", "high", "highest", "peak")),
    ("low", ("最低", "新低", "low", "lowest")),
    ("change", ("涨了多少", "跌了多少", "涨跌", "涨幅", "跌幅", "涨了", "跌了", "收益率",
                "change", "return", "returns", "gain", "gained", "how did", "how has",
                "how much did", "performance", "走势", "表现", "trend", "history", "历史")),
    ("price", ("股价", "价格", "收盘", "点位", "多少钱", "报价", "price", "close", "quote",
               "level")),
)
_METRIC_RES = tuple((name, words_pattern(words)) for name, words in _METRIC_WORDS)

# the market as a whole, when no instrument is named
_MARKET = re.compile(
    r"大盘|股市|a股|市场|行情怎么样|今天.*(?:涨|跌)了?吗|(?<![a-z])(?:the|stock|overall)\s+market"
    r"|(?<![a-z])markets?\s+(?:today|overview|doing)|market\s+overview|how\s+are\s+stocks",
    re.I)
# a question word asking how something did over time (with a period: performance)
_HISTORY = words_pattern(("history", "trend", "performance", "last month", "past", "走势", "表现",
                          "历史"))


@dataclass(frozen=True)
class Understanding:
    """What one question asks."""

    text: str
    intent: Intent
    instruments: tuple[Instrument, ...] = ()
    period: Period | None = None
    metrics: tuple[Metric, ...] = ()
    wants_statements: bool = False
    market_words: bool = False  # 大盘, "the market": the question is about the market
    asks_advice: bool = False  # what to buy or sell, whatever else it asks
    asks_prediction: bool = False  # where a price will go, whatever else it asks
    lang: str = "en"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def symbols(self) -> list[str]:
        """The instruments as the tools take them (``000001.SH``, ``000300``, ``NVDA``)."""
        return [i.symbol for i in self.instruments]

    @property
    def multiples(self) -> tuple[Metric, ...]:
        return tuple(m for m in self.metrics if m in MULTIPLES)


def metrics_in(text: str) -> tuple[Metric, ...]:
    low = text.lower()
    out = [name for name, pattern in _METRIC_RES if pattern.search(low)]
    if "pe" in out and not re.search(r"市盈率|p/e|pe\s*ratio|price.to.earnings|(?<![a-z])pe"
                                     r"(?![a-z])", low):
        out.remove("pe")
    return tuple(out)  # type: ignore[arg-type]


def intent_of(text: str, *, instruments: int = 0, period: Period | None = None,
              metrics: tuple[str, ...] = ()) -> Intent:
    low = text.lower()
    for name, pattern in _INTENT_RES:
        if not pattern.search(low):
            continue
        if name == "fund" and instruments and not re.search(r"基金|净值|fund|(?<![a-z])nav",
                                                             low):
            continue  # "ETF" beside a named stock index is still that index
        if name == "compare" and instruments < 2 and "vs" not in low:
            continue
        return name  # type: ignore[return-value]
    if (set(metrics) & (MULTIPLES | STATEMENT_LINES)) or _STATEMENTS.search(low):
        return "fundamentals"
    if instruments >= 2 and re.search(r"和|与|跟|(?<![a-z])and(?![a-z])", low) and (
            "change" in metrics or period is not None):
        return "compare"
    if period is not None or _HISTORY.search(low) or (
            ("change" in metrics and "how did" in low)
            or re.search(r"涨了多少|跌了多少|涨跌", low)):
        return "performance"
    if not instruments and _MARKET.search(low):
        return "market"
    return "quote"


def understand(text: str, directory: Any = None, *, lang: str = "en",
               instruments: list[Instrument] | None = None) -> Understanding:
    """What `text` asks (see the module's docstring). `directory` is the symbols directory
    (`tools.symbols.default_directory()` when None); `instruments` given by the caller (a
    command's argument) replace those found in the text."""
    if instruments is None:
        if directory is None:
            directory = _default_directory()
        instruments = find_instruments(text, directory)
    period = find_period(text)
    metrics = metrics_in(text)
    intent = intent_of(text, instruments=len(instruments), period=period, metrics=metrics)
    low = text.lower()
    return Understanding(
        text=text, intent=intent, instruments=tuple(instruments), period=period,
        metrics=metrics, wants_statements=_STATEMENTS.search(low) is not None
        or bool(set(metrics) & (MULTIPLES | STATEMENT_LINES)),
        market_words=_MARKET.search(low) is not None, lang=lang,
        asks_advice=_INTENTS["advice"].search(low) is not None,
        asks_prediction=_INTENTS["prediction"].search(low) is not None)


def _default_directory() -> Any:
    try:
        from tools.symbols import default_directory

        return default_directory()
    except Exception:  # no directory: the index words and codes alone
        return None


__all__ = ["MULTIPLES", "STATEMENT_LINES", "Instrument", "Intent", "Metric", "Understanding",
           "intent_of", "metrics_in", "understand", "words_pattern"]
