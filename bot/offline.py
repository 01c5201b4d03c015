"""The offline analyst: with no LLM configured, a deterministic planner reads the intent and
the symbols, calls the same tools directly and writes a templated answer, labelled as such.

A greeting, or a question naming nothing it can look up, gets a short introduction listing
what the offline snapshot covers (computed from the snapshot itself). A valuation or
financial-statements question, while the data layer is offline, says those need a live
provider and still gives the quote.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pydantic import BaseModel

from bot import format as fmt
from bot.commands import help_text
from core import context
from core.agent.turn import Turn
from core.errors import BullpenError, UnknownSymbol
from core.events import Done, Event, File, Status, TextDelta, ToolFinished, ToolStarted
from core.tools import ToolRegistry
from core.types import ChatMessage, OutgoingFile

log = logging.getLogger(__name__)

LABEL = {"en": "offline analyst · no LLM configured",
         "zh": "离线分析师 · 未配置大模型"}

_INTENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("help", ("help", "what can you do", "帮助", "你能做什么")),
    ("plan", ("trade plan", "plan for", "交易计划")),
    ("ict", ("ict", "smart money", "order block", "order blocks", "fvg", "fair value gap",
             "聪明钱", "订单块")),
    ("valuation", ("dcf", "valuation", "valuations", "valuate", "intrinsic value",
                   "fair value", "financials", "financial statements", "fundamentals",
                   "income statement", "balance sheet", "cash flow", "free cash flow",
                   "估值", "财报", "现金流", "利润表", "资产负债表", "内在价值", "基本面",
                   "财务报表", "财务数据")),
    ("chart", ("chart", "plot", "graph", "candle", "candles", "candlestick", "图", "k线")),
    ("indicators", ("rsi", "macd", "bollinger", "kdj", "atr", "obv", "indicator", "indicators",
                    "technical", "技术指标", "指标", "布林")),
    ("compare", ("compare", "vs", "versus", "对比", "比较")),
    ("history", ("history", "trend", "performance", "last month", "past", "走势", "表现",
                 "历史")),
)


# Latin words that take no ending: abbreviations, "past" ("pasted" is no history), "help"
# ("helps", "Is NVDA helping?" ask for no help text); a short word ("for") never does
_UNINFLECTED = frozenset({"macd", "past", "help"})


def _inflected(word: str) -> str:
    """A Latin word with its plural and -ing/-ed forms: chart(s|ing|ed), compar(e|es|ing),
    plot(s|ting), history/histories."""
    w = re.escape(word)
    if word[-1:] == "e":
        return rf"{re.escape(word[:-1])}(?:e|es|ed|ing)"
    if word[-1:] == "y":
        return rf"(?:{w}|{re.escape(word[:-1])}(?:ies|ied))"
    return rf"{w}(?:s|es|{re.escape(word[-1])}?(?:ing|ed))?"


def _intent_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """Latin words as whole words ("ict" is not in "predict") with their plural and -ing
    forms ("charts", "trends", "technicals", "trade plans"); Chinese ones anywhere."""
    parts = []
    for w in sorted(words, key=len, reverse=True):
        if not w.isascii():
            parts.append(re.escape(w))
            continue
        body = re.escape(w) if w in _UNINFLECTED else r"\s+".join(
            _inflected(x) if len(x) > 3 else re.escape(x) for x in w.split())
        parts.append(rf"(?<![a-z]){body}(?![a-z])")
    return re.compile("|".join(parts))


_INTENT_RES = tuple((intent, _intent_pattern(words)) for intent, words in _INTENTS)
_VALUATION_RE = dict(_INTENT_RES)["valuation"]
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening)|"
    r"你好|您好|嗨|哈喽|哈啰|早上好|下午好|晚上好|早安|在吗|在么)"
    r"(?:\s*(?:there|all|everyone|bullpen|bot|啊|呀|吗))?[\s!！.。,，~～?？]*$",
    re.I,
)

_PERIOD = re.compile(r"(?:last|past)?\s*(\d+)\s*(day|week|month|year|d|w|mo|m|y)s?\b", re.I)
_PERIOD_ZH = re.compile(r"(?:最近|近)?(\d+|一|两|三|六)\s*(天|周|个月|月|年)")
_ZH_NUM = {"一": 1, "两": 2, "三": 3, "六": 6}


def detect_intent(text: str) -> str:
    """The first intent the text asks for; a valuation question only when it asks for
    nothing else ("compare the valuation of AAPL and MSFT" is a comparison, "AAPL cash flow
    chart" a chart: ``wants_statements`` adds the note that statements need a provider)."""
    low = text.lower()
    valuation = False
    for intent, pattern in _INTENT_RES:
        if pattern.search(low):
            if intent != "valuation":
                return intent
            valuation = True
    return "valuation" if valuation else "quote"


def wants_statements(text: str) -> bool:
    """The text asks for a valuation or financial statements (whatever else it asks)."""
    return _VALUATION_RE.search(text.lower()) is not None


def is_greeting(text: str) -> bool:
    """"hello", "hi there!", "你好" - a greeting and nothing else."""
    return _GREETING.match(text) is not None


_INTERVAL_NAME = {"1d": ("daily", "日线"), "1h": ("hourly", "小时线"),
                  "15m": ("15-minute", "15分钟线")}


@functools.lru_cache(maxsize=1)
def snapshot_coverage() -> tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...]:
    """(symbol, name, ((interval, first date, last date), ...)) of every offline series,
    read from the snapshot itself (a series whose package is missing is left out)."""
    from tools import snapshot

    out = []
    for symbol in snapshot.symbols():
        spans = []
        for series in snapshot.series_for(symbol):
            try:
                df = snapshot.load(symbol, series.interval)
            except (BullpenError, OSError, ValueError) as exc:
                log.debug("snapshot %s %s unavailable: %s", symbol, series.interval, exc)
                continue
            if len(df):
                spans.append((series.interval, str(df.index[0].date()),
                              str(df.index[-1].date())))
        if spans:
            out.append((symbol, snapshot.info(symbol).name, tuple(spans)))
    return tuple(out)


def intro_text(lang: str, *, greeting: bool) -> str:
    """What the offline analyst can do and what the offline snapshot covers."""
    zh = lang == "zh"
    lines = []
    for symbol, name, spans in snapshot_coverage():
        parts = [f"{_INTERVAL_NAME.get(i, (i, i))[1 if zh else 0]} {a} – {b}"
                 for i, a, b in spans]
        lines.append(f"- {symbol} ({name}): " + ("；" if zh else "; ").join(parts))
    covered = "\n".join(lines) or ("- （快照数据包未安装）" if zh else
                                    "- (no snapshot package is installed)")
    if zh:
        head = ("你好！我是离线分析师。" if greeting else
                "我没有在问题里找到股票、指数、加密货币或外汇代码/名称。")
        return (f"{head}\n未配置大模型，我直接调用工具，用本机已安装的数据包里的真实历史行情作答，"
                "每个数字都由代码计算，并注明来源和日期。\n\n"
                "可以问：报价（“比特币价格”）、走势（“沪深300最近一个月”）、技术指标、图表、"
                "对比，以及 ICT 分析（“BTC-USD 15分钟 ICT 分析”）。"
                "股票、指数、加密货币、外汇均可按代码或名称提问。\n\n"
                f"离线快照包含：\n{covered}\n\n"
                "其他代码，以及财务报表、新闻和基金净值，需要在线数据源。输入 /help 查看命令。")
    head = ("Hi! I'm the offline analyst." if greeting else
            "I couldn't find a stock, index, crypto or FX pair in your question.")
    return (f"{head}\nNo LLM is configured, so I call the tools directly and answer from real "
            "historical prices shipped with the bot; every number is computed in code and "
            "labelled with its source and date.\n\n"
            "Ask for a quote (\"bitcoin price\"), price history (\"S&P 500 last month\"), "
            "indicators, charts, comparisons or an ICT analysis (\"ICT analysis of BTC-USD "
            "on 15m\"), naming a stock, index, crypto or FX pair by ticker, code or name.\n\n"
            f"The offline snapshot covers:\n{covered}\n\n"
            "Anything else, and financial statements, news and fund NAVs, need a live data "
            "provider. Type /help for the commands.")


def statements_note(lang: str, *, quote: bool = True) -> str:
    """Why a valuation question gets only prices while the data layer is offline (the latest
    quote, or with ``quote=False`` the chart, comparison or history it also asked for)."""
    if lang == "zh":
        tail = "以下是快照中的最新报价。" if quote else "以下是快照中的价格数据。"
        return ("财务报表（DCF 估值、估值倍数、利润表、资产负债表、现金流量表）需要在线数据源；"
                f"离线快照只有价格数据。{tail}")
    tail = "Here is the latest quote it has." if quote else "Here is what its prices show."
    return ("Financial statements (and so a DCF, valuation multiples, income statement, "
            f"balance sheet and cash flow) need a live data provider; the offline snapshot "
            f"holds prices only. {tail}")


def _data_offline() -> bool:
    from tools.data.config import get_config

    return get_config().mode == "offline"


def detect_period(text: str) -> str | None:
    m = _PERIOD.search(text)
    if m:
        n, unit = int(m.group(1)), m.group(2).lower()
        if unit in ("day", "d"):
            return f"{n}d"
        if unit in ("week", "w"):
            return f"{n * 7}d"
        if unit in ("month", "mo", "m"):
            return f"{n}mo"
        return f"{n}y"
    m2 = _PERIOD_ZH.search(text)
    if m2:
        raw = m2.group(1)
        n = _ZH_NUM.get(raw) or int(raw)
        return {"天": f"{n}d", "周": f"{n * 7}d", "个月": f"{n}mo", "月": f"{n}mo"}.get(
            m2.group(2), f"{n}y")
    return None


SymbolFinder = Callable[[str], list[str]]


class ICTAnswer(Protocol):
    def __call__(self, symbol: str, interval: str, plan: bool, *,
                 lang: str = "en") -> Awaitable[tuple[str, list[OutgoingFile]]]: ...


@dataclass
class _Step:
    tool: str
    args: dict[str, Any]
    result: BaseModel | None = None
    error: str = ""
    files: list[OutgoingFile] = field(default_factory=list)


class OfflineAnalyst:
    """Implements the Mode port without an LLM."""

    name = "offline"

    def __init__(self, *, registry: ToolRegistry, find_symbols: SymbolFinder,
                 ict_answer: ICTAnswer | None = None) -> None:
        self._registry = registry
        self._find = find_symbols
        self._ict = ict_answer

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        lang = turn.lang
        text = turn.text
        intent = turn.options.get("intent") or detect_intent(text)
        if intent == "help":
            answer = help_text(lang)
            await turn.recorder.message(ChatMessage(role="assistant", content=answer))
            yield Done(text=answer, label=LABEL[lang])
            return
        yield Status(text="Reading the question..." if lang == "en" else "正在理解问题…")
        # off the loop: the first use in a process loads the symbols directory (~0.7 s)
        symbols = ([turn.options["symbol"]] if turn.options.get("symbol")
                   else await asyncio.to_thread(self._find, text))
        if not symbols:
            answer = await asyncio.to_thread(intro_text, lang, greeting=is_greeting(text))
            await turn.recorder.message(ChatMessage(role="assistant", content=answer))
            yield Done(text=answer, label=LABEL[lang])
            return
        period = turn.options.get("period") or detect_period(text)
        parts: list[str] = []
        if (intent == "valuation" or wants_statements(text)) and _data_offline():
            parts.append(statements_note(lang, quote=intent in ("valuation", "quote")))
        if intent in ("ict", "plan") and self._ict is not None:
            interval = turn.options.get("interval") or _interval_in(text) or "1d"
            yield ToolStarted(call_id="ict", name="ict_analyze", label=f"ICT analysis of "
                              f"{symbols[0]} ({interval})")
            try:
                body, files = await self._ict(symbols[0], interval, intent == "plan",
                                              lang=lang)
            except BullpenError as exc:
                body, files = fmt.tool_error(exc, lang), []
            yield ToolFinished(call_id="ict", name="ict_analyze", ok=bool(files))
            parts.append(body)
            for f in files:
                yield File(file=f)
        else:
            steps = self._plan(intent, symbols, period)
            for i, step in enumerate(steps):
                if not _only_symbols_with_quotes(step, steps[:i]):
                    continue
                spec = self._registry.get(step.tool)
                yield ToolStarted(call_id=f"s{i}", name=step.tool, arguments=step.args,
                                  label=spec.render_label(step.args))
                started = time.perf_counter()
                await self._execute(step)
                yield ToolFinished(call_id=f"s{i}", name=step.tool, ok=not step.error,
                                   elapsed_s=time.perf_counter() - started)
                for f in step.files:
                    yield File(file=f)
            parts.extend(fmt.render_step(s.tool, s.result, s.error, lang, period=period)
                         for s in steps if s.result is not None or s.error)
        answer = "\n\n".join(p for p in parts if p)
        await turn.recorder.message(ChatMessage(role="assistant", content=answer))
        yield TextDelta(text=answer)
        yield Done(text=answer, label=LABEL[lang])

    def _plan(self, intent: str, symbols: list[str], period: str | None) -> list[_Step]:
        first = symbols[0]
        if intent == "chart":
            return [_Step("generate_chart", {"symbols": symbols[:6], "period": period or "6mo"})]
        if intent == "compare" and len(symbols) > 1:
            return [_Step("get_quotes", {"symbols": symbols[:6]}),
                    _Step("generate_chart", {"symbols": symbols[:6], "period": period or "1y"})]
        if intent == "indicators":
            return [_Step("get_indicators", {"symbol": s}) for s in symbols[:3]]
        if intent == "history":
            return [_Step("get_ohlcv", {"symbol": s, "period": period or "1mo", "limit": 10})
                    for s in symbols[:3]]
        if len(symbols) > 1:
            return [_Step("get_quotes", {"symbols": symbols[:10]})]
        return [_Step("get_quote", {"symbol": first})]

    async def _execute(self, step: _Step) -> None:
        spec = self._registry.get(step.tool)
        ctx = context.RunContext(on_file=step.files.append)
        token = context.use(ctx)
        try:
            args = spec.validate(step.args)
            step.result = await spec.func(**{k: getattr(args, k)
                                             for k in type(args).model_fields})
        except UnknownSymbol as exc:
            step.error = str(exc)
        except BullpenError as exc:
            step.error = str(exc)
        finally:
            context.reset(token)


def _only_symbols_with_quotes(step: _Step, before: list[_Step]) -> bool:
    """A comparison chart after a quotes step draws the symbols that have prices (the quotes
    already say why the others are missing); False when none has."""
    quoted: list[Any] | None = next((getattr(b.result, "quotes", None) for b in before
                                     if b.tool == "get_quotes" and b.result is not None), None)
    if step.tool != "generate_chart" or quoted is None:
        return True
    ok = [q.symbol for q in quoted]
    step.args["symbols"] = ok
    return bool(ok)


def _interval_in(text: str) -> str | None:
    m = re.search(r"\b(1m|5m|15m|30m|1h|4h|1d|1w|60m)\b", text.lower())
    if m:
        return m.group(1)
    low = text.lower()
    for words, tf in ((("four hour", "4 hour", "4-hour", "4小时"), "4h"),
                      (("hourly", "1 hour", "one hour", "小时"), "1h"),
                      (("15 minute", "fifteen minute", "15分钟"), "15m"),
                      (("weekly", "周线"), "1w"), (("daily", "日线"), "1d")):
        if any(w in low for w in words):
            return tf
    return None
