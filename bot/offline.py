"""The offline analyst: with no LLM configured, a deterministic planner reads the intent and
the symbols, calls the same tools directly and writes a templated answer, labelled as such."""

from __future__ import annotations

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

LABEL = {"en": "offline analyst · no LLM configured",
         "zh": "离线分析师 · 未配置大模型"}

_INTENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("help", ("help", "what can you do", "帮助", "你能做什么")),
    ("plan", ("trade plan", "plan for", "交易计划")),
    ("ict", ("ict", "smart money", "order block", "fvg", "fair value gap", "聪明钱", "订单块")),
    ("chart", ("chart", "plot", "graph", "candle", "图", "k线")),
    ("indicators", ("rsi", "macd", "bollinger", "kdj", "atr", "obv", "indicator",
                    "technical", "技术指标", "指标", "布林")),
    ("compare", ("compare", " vs", "versus", "对比", "比较")),
    ("history", ("history", "trend", "performance", "last month", "past", "走势", "表现",
                 "历史")),
)

_PERIOD = re.compile(r"(?:last|past)?\s*(\d+)\s*(day|week|month|year|d|w|mo|m|y)s?\b", re.I)
_PERIOD_ZH = re.compile(r"(?:最近|近)?(\d+|一|两|三|六)\s*(天|周|个月|月|年)")
_ZH_NUM = {"一": 1, "两": 2, "三": 3, "六": 6}


def detect_intent(text: str) -> str:
    low = f" {text.lower()} "
    for intent, words in _INTENTS:
        if any(w in low for w in words):
            return intent
    return "quote"


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
        symbols = ([turn.options["symbol"]] if turn.options.get("symbol")
                   else self._find(text))
        if not symbols:
            answer = fmt.no_symbol(lang)
            await turn.recorder.message(ChatMessage(role="assistant", content=answer))
            yield Done(text=answer, label=LABEL[lang])
            return
        period = turn.options.get("period") or detect_period(text)
        parts: list[str] = []
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
                         for s in steps)
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
