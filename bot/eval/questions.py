"""The evaluation questions (English and Chinese) and what each one should answer.

Expected figures are computed at run time by calling the tools' functions directly, so the
set follows whatever the offline snapshot (and installed data packs) hold. A question whose
expectation cannot be computed (no data for its symbol) is reported as not covered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["quote", "range", "compare", "indicator", "ict", "unknown", "chat", "period",
               "dates", "metric", "collision", "sentence", "market", "prediction", "advice",
               "unavailable", "stale"]


@dataclass(frozen=True)
class Expected:
    """Figures the answer must contain (each to its written precision) and dates it must
    name; empty for questions where the point is to invent nothing."""

    figures: list[tuple[str, float]] = field(default_factory=list)  # (what, value)
    dates: list[str] = field(default_factory=list)  # ISO dates
    phrases: list[str] = field(default_factory=list)  # words the answer must contain
    forbidden: list[str] = field(default_factory=list)  # another instrument's name, a guess


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


def change(symbol: str, period: str, forbidden: tuple[str, ...] = ()) -> Expect:
    """The period asked, not the latest quote: the first open and last close of every bar
    of the period (`get_ohlcv`) and its first and last dates."""
    async def run() -> Expected:
        from tools.market import get_ohlcv

        o = await get_ohlcv(symbol=symbol, period=period, limit=5)
        if o.summary is None:
            raise ValueError(f"no bars of {symbol} in {period}")
        s = o.summary
        return Expected(figures=[(f"{o.symbol} {period} open", s.open),
                                 (f"{o.symbol} {period} close", s.close)],
                        dates=[s.first[:10], s.last[:10]], forbidden=list(forbidden))
    return run


def pe(symbol: str) -> Expect:
    """P/E where the offline data has statements and prices (`get_valuation_multiples`)."""
    async def run() -> Expected:
        from tools.fundamentals import get_valuation_multiples

        m = await get_valuation_multiples(symbol=symbol)
        if m.pe is None:
            raise ValueError(f"no P/E for {symbol}")
        return Expected(figures=[(f"{symbol} P/E", m.pe)], dates=[_iso(m.price_date)])
    return run


def said(*phrases: str, forbidden: tuple[str, ...] = ()) -> Expect:
    """Nothing to compute: the answer must say these words (and invent no figure)."""
    async def run() -> Expected:
        return Expected(phrases=list(phrases), forbidden=list(forbidden))
    return run


def quote_not(symbol: str, *forbidden: str) -> Expect:
    """The quote of `symbol`, and never a word of the instrument it could be taken for."""
    async def run() -> Expected:
        got = await quote(symbol)()
        return Expected(figures=got.figures, dates=got.dates, forbidden=list(forbidden))
    return run


def with_phrase(inner: Expect, *phrases: str, forbidden: tuple[str, ...] = ()) -> Expect:
    async def run() -> Expected:
        got = await inner()
        return Expected(figures=got.figures, dates=got.dates, phrases=list(phrases),
                        forbidden=list(forbidden))
    return run


def stale(symbol: str, lang: str) -> Expect:
    """The quote, and its age said in the user's language ("13 years old", "已是 13 年前"),
    the age computed from today's date."""
    async def run() -> Expected:
        from datetime import date

        from analyst.offline_data import age_text
        from tools.market import get_quote

        q = await get_quote(symbol=symbol)
        words = age_text(q.as_of, date.today(), lang)
        phrase = f"已是 {words}前" if lang == "zh" else f"{words} old"
        return Expected(figures=[(f"{q.symbol} close", q.close)], dates=[_iso(q.as_of)],
                        phrases=[phrase])
    return run


def market(lang: str) -> Expect:
    async def run() -> Expected:
        got = await compare("000001.SH", "399001", "000300")()
        head = "离线数据中的主要指数" if lang == "zh" else "The main indexes in the offline data"
        return Expected(figures=got.figures, dates=got.dates, phrases=[head],
                        forbidden=["平安银行"])
    return run


_NO_PREDICT = {"en": "Bullpen does not predict prices", "zh": "Bullpen 不预测价格"}
_NO_ADVICE = {"en": "Bullpen does not give investment advice", "zh": "Bullpen 不提供投资建议"}
_HK = {"en": "no Hong Kong prices offline", "zh": "离线数据没有港股行情"}
_FUND = {"en": "Fund NAVs need a live data provider", "zh": "基金净值需要在线数据源"}
_NO_PE = {"en": "No P/E offline for", "zh": "的市盈率："}
_GUESS = ("Did you mean", "你是不是想找")


def _q(qid: str, lang: Literal["en", "zh"], kind: Kind, text: str, expect: Expect) -> Question:
    return Question(qid, lang, kind, text, expect)


_ISSUE_29: tuple[Question, ...] = (
    # period performance: the period asked, counted back from the last bar
    _q("p-nvda-3mo-en", "en", "period", "How did NVDA do over the last 3 months?",
       change("NVDA", "3mo")),
    _q("p-tsla-1y-en", "en", "period", "How much did Tesla rise over the past year?",
       change("TSLA", "1y")),
    _q("p-amzn-6mo-en", "en", "period", "AMZN performance over the last 6 months",
       change("AMZN", "6mo")),
    _q("p-msft-ytd-en", "en", "period", "How has MSFT done this year?", change("MSFT", "ytd")),
    _q("p-btc-1mo-en", "en", "period", "How did bitcoin do in the past month?",
       change("BTC-USD", "1mo")),
    _q("p-spx-1y-en", "en", "period", "S&P 500 change over the last year",
       change("^GSPC", "1y")),
    _q("p-ko-3mo-en", "en", "period", "How did Coca-Cola do over the last 3 months?",
       change("KO", "3mo")),
    _q("p-sse-1mo-en", "en", "period", "Shanghai Composite over the last month",
       change("000001.SH", "1mo", ("平安银行", "Ping An Bank"))),
    _q("p-tsla-1y-zh", "zh", "period", "特斯拉最近一年涨了多少", change("TSLA", "1y")),
    _q("p-sse-1mo-zh", "zh", "period", "上证指数最近一个月涨跌",
       change("000001.SH", "1mo", ("平安银行",))),
    _q("p-nvda-3mo-zh", "zh", "period", "英伟达近三个月表现", change("NVDA", "3mo")),
    _q("p-csi-6mo-zh", "zh", "period", "沪深300近半年涨跌", change("000300", "6mo")),
    _q("p-spdb-1mo-zh", "zh", "period", "浦发银行最近一个月走势", change("600000", "1mo")),
    _q("p-cyb-3mo-zh", "zh", "period", "创业板指最近3个月涨了多少", change("399006", "3mo")),
    _q("p-szse-1y-zh", "zh", "period", "深证成指近一年表现",
       change("399001", "1y", ("平安银行",))),
    _q("p-amzn-ytd-zh", "zh", "period", "亚马逊今年以来涨了多少", change("AMZN", "ytd")),
    _q("p-pab-1mo-zh", "zh", "period", "平安银行最近一个月涨跌",
       change("000001", "1mo", ("上证指数",))),
    _q("p-msft-1y-zh", "zh", "period", "微软最近一年表现", change("MSFT", "1y")),
    # explicit dates and ranges
    _q("d-csi-2020-05-en", "en", "dates", "How did the CSI 300 do in May 2020?",
       change("000300", "2020-05")),
    _q("d-csi-range-en", "en", "dates", "CSI 300 from 2019-06-01 to 2020-06-16",
       change("000300", "2019-06-01..2020-06-16")),
    _q("d-nvda-2024-en", "en", "dates", "NVDA performance in 2024", change("NVDA", "2024")),
    _q("d-aapl-2012-en", "en", "dates", "How did Apple do in March 2012?",
       change("AAPL", "2012-03")),
    _q("d-msft-q1-en", "en", "dates", "MSFT in Q1 2020", change("MSFT", "2020-01-01..2020-03-31")),
    _q("d-btc-2021-en", "en", "dates", "Bitcoin from 2021-01-01 to 2021-06-30",
       change("BTC-USD", "2021-01-01..2021-06-30")),
    _q("d-csi-2020-05-zh", "zh", "dates", "沪深300 2020年5月走势", change("000300", "2020-05")),
    _q("d-spdb-2024-09-zh", "zh", "dates", "浦发银行2024年9月的走势",
       change("600000", "2024-09")),
    _q("d-sse-2024-08-zh", "zh", "dates", "上证指数2024年8月表现",
       change("000001.SH", "2024-08", ("平安银行",))),
    _q("d-nvda-2023-zh", "zh", "dates", "英伟达2023年走势", change("NVDA", "2023")),
    _q("d-csi-range-zh", "zh", "dates", "沪深300从2019年6月1日到2020年6月16日的走势",
       change("000300", "2019-06-01..2020-06-16")),
    _q("d-pingan-2019-zh", "zh", "dates", "中国平安2019年12月走势", change("601318", "2019-12")),
    # metrics: P/E where the data allows, else said unavailable
    _q("m-pingan-pe-zh", "zh", "metric", "中国平安的市盈率", pe("601318")),
    _q("m-pingan-pe-en", "en", "metric", "What is Ping An Insurance's P/E?", pe("601318")),
    _q("m-weichai-pe-zh", "zh", "metric", "潍柴动力市盈率多少", pe("000338")),
    _q("m-pab-pe-zh", "zh", "metric", "平安银行的市盈率", pe("000001")),
    _q("m-maotai-pe-zh", "zh", "metric", "茅台的市盈率是多少", said(_NO_PE["zh"])),
    _q("m-maotai-pe-en", "en", "metric", "What is Kweichow Moutai's P/E ratio?",
       said(_NO_PE["en"])),
    _q("m-aapl-pe-en", "en", "metric", "AAPL P/E ratio", said(_NO_PE["en"])),
    _q("m-nvda-pe-zh", "zh", "metric", "英伟达市盈率", said(_NO_PE["zh"])),
    _q("m-spdb-pe-zh", "zh", "metric", "浦发银行市盈率是多少", said(_NO_PE["zh"])),
    _q("m-csi-pe-en", "en", "metric", "CSI 300 P/E", said(_NO_PE["en"])),
    # one code, two instruments: the index is never the bank
    _q("x-sse-csi-zh", "zh", "collision", "上证指数和沪深300对比",
       with_phrase(compare("000001.SH", "000300"), forbidden=("平安银行",))),
    _q("x-sse-zh", "zh", "collision", "上证指数最新点位", quote_not("000001.SH", "平安银行")),
    _q("x-hu-zh", "zh", "collision", "沪指今天多少点", quote_not("000001.SH", "平安银行")),
    _q("x-shangzheng-zh", "zh", "collision", "上证现在多少点", quote_not("000001.SH", "平安银行")),
    _q("x-pab-zh", "zh", "collision", "平安银行股价", quote_not("000001", "上证指数")),
    _q("x-code-sh-zh", "zh", "collision", "000001.SH 最新收盘", quote_not("000001.SH",
                                                                       "平安银行")),
    _q("x-szse-cyb-zh", "zh", "collision", "深证成指和创业板指对比",
       with_phrase(compare("399001", "399006"), forbidden=("平安银行",))),
    _q("x-sse-en", "en", "collision", "Shanghai Composite index level",
       quote_not("000001.SH", "平安银行")),
    _q("x-sse-csi-en", "en", "collision", "compare the Shanghai Composite and the CSI 300",
       with_phrase(compare("000001.SH", "000300"), forbidden=("平安银行",))),
    _q("x-pab-en", "en", "collision", "Ping An Bank stock price", quote_not("000001", "上证指数")),
    # names inside sentences: misspelt, lower case, possessive, Chinese alias
    _q("s-nvidea-en", "en", "sentence", "Nvidea stock price", quote("NVDA")),
    _q("s-nvidia-amd-en", "en", "sentence", "how is nvidia and amd doing",
       compare("NVDA", "AMD")),
    _q("s-microsfot-en", "en", "sentence", "Microsfot stock price", quote("MSFT")),
    _q("s-apple-en", "en", "sentence", "what is apple's stock price?", quote("AAPL")),
    _q("s-tesla-en", "en", "sentence", "how is tesla doing", quote("TSLA")),
    _q("s-netflix-en", "en", "sentence", "tell me about netflix stock", quote("NFLX")),
    _q("s-amazon-en", "en", "sentence", "I want to know amazon's price", quote("AMZN")),
    _q("s-ibm-en", "en", "sentence", "What's IBM trading at?", quote("IBM")),
    _q("s-apple-zh", "zh", "sentence", "苹果怎么样", quote("AAPL")),
    _q("s-nvidia-zh", "zh", "sentence", "英伟达怎么样", quote("NVDA")),
    _q("s-tesla-zh", "zh", "sentence", "特斯拉股价如何", quote("TSLA")),
    _q("s-msft-zh", "zh", "sentence", "微软现在的价格", quote("MSFT")),
    _q("s-amzn-zh", "zh", "sentence", "亚马逊股价多少", quote("AMZN")),
    _q("s-pingan-zh", "zh", "sentence", "中国平安最新股价", quote("601318")),
    _q("s-spdb-zh", "zh", "sentence", "浦发银行现在多少钱", quote("600000")),
    _q("s-btc-zh", "zh", "sentence", "比特币现在什么价", quote("BTC-USD")),
    # the market as a whole
    _q("k-dapan-zh", "zh", "market", "今天大盘怎么样", market("zh")),
    _q("k-dapan2-zh", "zh", "market", "大盘", market("zh")),
    _q("k-ashare-zh", "zh", "market", "A股市场怎么样", market("zh")),
    _q("k-gushi-zh", "zh", "market", "股市今天如何", market("zh")),
    _q("k-market-en", "en", "market", "how is the market doing today", market("en")),
    _q("k-market2-en", "en", "market", "stock market overview", market("en")),
    _q("k-market3-en", "en", "market", "How is the market?", market("en")),
    # predictions and advice: the honest sentence, no invented figure
    _q("v-maotai-zh", "zh", "prediction", "茅台明天会涨吗", said(_NO_PREDICT["zh"])),
    _q("v-nvda-zh", "zh", "prediction", "英伟达下周会跌吗", said(_NO_PREDICT["zh"])),
    _q("v-csi-zh", "zh", "prediction", "沪深300后市预测", said(_NO_PREDICT["zh"])),
    _q("v-btc-zh", "zh", "prediction", "比特币能涨到多少", said(_NO_PREDICT["zh"])),
    _q("v-dapan-zh", "zh", "prediction", "大盘明天会涨吗", said(_NO_PREDICT["zh"])),
    _q("v-nvda-en", "en", "prediction", "Will NVDA go up tomorrow?", said(_NO_PREDICT["en"])),
    _q("v-aapl-en", "en", "prediction", "AAPL price prediction", said(_NO_PREDICT["en"])),
    _q("v-tsla-en", "en", "prediction", "What is Tesla's price target?",
       said(_NO_PREDICT["en"])),
    _q("v-btc-en", "en", "prediction", "forecast bitcoin for next month",
       said(_NO_PREDICT["en"])),
    _q("a-buy-en", "en", "advice", "what should I buy?", said(_NO_ADVICE["en"])),
    _q("a-aapl-en", "en", "advice", "Should I buy AAPL?", said(_NO_ADVICE["en"])),
    _q("a-invest-en", "en", "advice", "Is it a good time to invest?", said(_NO_ADVICE["en"])),
    _q("a-recommend-en", "en", "advice", "recommend me a stock", said(_NO_ADVICE["en"])),
    _q("a-buy-zh", "zh", "advice", "我该买什么股票", said(_NO_ADVICE["zh"])),
    _q("a-semi-zh", "zh", "advice", "半导体板块哪些股票值得关注", said(_NO_ADVICE["zh"])),
    _q("a-maotai-zh", "zh", "advice", "茅台值得买吗", said(_NO_ADVICE["zh"])),
    _q("a-recommend-zh", "zh", "advice", "推荐几只股票", said(_NO_ADVICE["zh"])),
    _q("a-sell-zh", "zh", "advice", "平安银行要不要卖", said(_NO_ADVICE["zh"])),
    # markets the offline data has nothing of: said, no unrelated codes suggested
    _q("n-tencent-zh", "zh", "unavailable", "腾讯控股股价", said(_HK["zh"], forbidden=_GUESS)),
    _q("n-tencent2-zh", "zh", "unavailable", "腾讯最近怎么样", said(_HK["zh"], forbidden=_GUESS)),
    _q("n-hk-code-zh", "zh", "unavailable", "0700.HK 股价", said(_HK["zh"], forbidden=_GUESS)),
    _q("n-meituan-zh", "zh", "unavailable", "美团股价多少", said(_HK["zh"], forbidden=_GUESS)),
    _q("n-fund-zh", "zh", "unavailable", "招商中证白酒指数基金净值",
       said(_FUND["zh"], forbidden=_GUESS)),
    _q("n-fund2-zh", "zh", "unavailable", "易方达蓝筹精选基金净值多少",
       said(_FUND["zh"], forbidden=_GUESS)),
    _q("n-tencent-en", "en", "unavailable", "Tencent Holdings share price (0700.HK)",
       said(_HK["en"], forbidden=_GUESS)),
    _q("n-hk-en", "en", "unavailable", "0700.HK price", said(_HK["en"], forbidden=_GUESS)),
    _q("n-fund-en", "en", "unavailable", "What is the NAV of fund 161725?",
       said(_FUND["en"], forbidden=_GUESS)),
    _q("n-fund2-en", "en", "unavailable", "mutual fund NAV of 110011",
       said(_FUND["en"], forbidden=_GUESS)),
    # "latest" from old data says how old it is
    _q("o-aapl-en", "en", "stale", "AAPL price", stale("AAPL", "en")),
    _q("o-tsla-en", "en", "stale", "TSLA stock price today", stale("TSLA", "en")),
    _q("o-ibm-en", "en", "stale", "IBM latest close", stale("IBM", "en")),
    _q("o-goog-en", "en", "stale", "GOOG price now", stale("GOOG", "en")),
    _q("o-nvda-en", "en", "stale", "NVDA latest price", stale("NVDA", "en")),
    _q("o-maotai-zh", "zh", "stale", "茅台最新股价", stale("600519", "zh")),
    _q("o-aapl-zh", "zh", "stale", "苹果最新股价", stale("AAPL", "zh")),
    _q("o-spdb-zh", "zh", "stale", "浦发银行最新股价", stale("600000", "zh")),
    _q("o-csi-zh", "zh", "stale", "沪深300现在多少点", stale("000300", "zh")),
    _q("o-tsla-zh", "zh", "stale", "特斯拉今天股价", stale("TSLA", "zh")),
    _q("o-pingan-zh", "zh", "stale", "中国平安今天收盘价", stale("601318", "zh")),
)

_BASE: tuple[Question, ...] = (
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

QUESTIONS: tuple[Question, ...] = (*_BASE, *_ISSUE_29)
