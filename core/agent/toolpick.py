"""The tools offered for a question: chosen by relevance, listed in a STABLE order, compact.

A local server (llama.cpp) reuses its cache of the prompt's longest unchanged prefix; the tool
schemas sit near the top of that prompt (the chat template writes them into the system turn),
so their order must not depend on the question. `pick_schemas` therefore chooses by relevance
(what fits the budget, most relevant first) but returns the chosen tools in one fixed order:
the `BASE` tools every market question may need first, in `BASE` order, then the others in
registry order. Two questions that get the same tools send the same bytes; a question that
needs more only appends to that prefix.

`compact` cuts what a small model pays for in every request: titles, `null` alternatives,
long descriptions (to their first sentence), and with `small` the optional parameters a
question rarely needs (`KEEP_OPTIONAL` stay) and the examples in parameter descriptions.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Sequence
from typing import Any

from core.tools import ToolRegistry
from core.types import ToolCall


def _family(words: str) -> re.Pattern[str]:
    """One family's pattern: an English word matches at a word's start only ("etf" is not
    in "Netflix"); a Chinese one anywhere ("NVDA价")."""
    return re.compile("|".join(f"(?<![A-Za-z]){w}" if re.match(r"[A-Za-z0-9\\]", w) else w
                               for w in words.split("|")), re.IGNORECASE)


def _needle(word: str) -> str:
    """A piece of text every match of `word` (one alternative of a family) contains: its
    longest run of plain characters, once `\\b` and what `?` makes optional are left out."""
    plain = re.sub(r".\?", "|", word.replace("\\b", ""))
    return max(re.split(r"[\\.^$*+?()\[\]{}|]", plain), key=len).casefold()


# tag -> words of a question that call for tools with that tag (English and Chinese)
_WORDS: dict[str, str] = {
    "quote": r"price|quote|close|latest|today|now|价|行情|收盘|现价|报价",
    "ohlcv": r"range|history|high|low|week|month|year|bars|since|between|区间|历史|最高|最低|走势",
    "indicators": r"rsi|macd|sma|ema|bollinger|kdj|atr|indicator|moving average|overbought|"
                  r"oversold|均线|指标|超买|超卖|布林",
    "ict": r"\bict\b|order block|fvg|fair value gap|smart money|liquidity|\bbos\b|choch|"
           r"structure|trade plan|订单块|流动性|结构",
    "fundamentals": r"revenue|profit|earnings|financial|dividend|shareholder|margin|cash flow|"
                    r"营收|利润|财报|分红|股东|现金流",
    "valuation": r"dcf|valuation|fair value|intrinsic|估值|内在价值",
    "flows": r"flow|northbound|capital|dragon|tiger|资金|北向|龙虎|主力",
    "funds": r"fund|etf|\bnav\b|13f|holdings|基金|净值|持仓",
    "news": r"news|headline|why did|新闻|消息|为什么",
    "sec": r"\bsec\b|10-k|10-q|8-k|filing|annual report|年报",
    "screener": r"screen|hotspot|market today|top gainers|选股|热点|涨幅榜",
    "web": r"search|web|website|网页|搜索",
    "chart": r"chart|plot|graph|图",
}
FAMILIES: dict[str, re.Pattern[str]] = {tag: _family(words) for tag, words in _WORDS.items()}
# tag -> what a question holds (casefolded) when the family's pattern can match: the patterns
# run only for the families whose needle is there (13 patterns per question were 4% of the
# gateway's CPU per message)
_NEEDLES: dict[str, tuple[str, ...]] = {
    tag: tuple(_needle(w) for w in words.split("|")) for tag, words in _WORDS.items()}
# what a question about a security needs first when it names no family
BASELINE = {"quote": 2, "market": 2, "ohlcv": 1, "indicators": 1}
# offered first, in this order, whenever they are chosen (the stable head of every request)
BASE = ("get_quote", "get_ohlcv", "get_indicators")
# optional parameters kept for small models: the ones questions actually use
KEEP_OPTIONAL = frozenset({"period", "interval", "indicators"})
# what a small model's call gets for an optional parameter its schema went without: a table
# tool's `limit` (60 bars by default, ~2,000 tokens a year of them, which the 1.5B recited or
# answered with an apology); every tool that takes `limit` bounds its rows by it and keeps
# what covers the whole range (get_ohlcv's summary: first and last close, change, high, low)
SMALL_ARGS: dict[str, Any] = {"limit": 5}
# a question that names a bar size; without one a small model's `interval` is dropped (the
# tool's daily default): the 1.5B read 奈飞最近一个月 as monthly bars (`1mo` is both a period
# and an interval), so the month's one bar gave the high of a longer span
NAMES_INTERVAL = re.compile(
    r"\b(?:daily|weekly|monthly|hourly|intraday|minutes?|\d+\s*(?:m|min|h|hr|hour)s?|"
    r"1d|1w|1wk|1mo)\b|日线|日K|周线|周K|月线|月K|分钟|小时|分时", re.IGNORECASE)
DESCRIPTION_CHARS = 160
SMALL_TOOLS = 4  # at most this many tools for a small model (its window and its attention)


def _score(wanted: frozenset[str], tags: Sequence[str]) -> int:
    return 10 * len(wanted.intersection(tags)) + max((BASELINE.get(t, 0) for t in tags),
                                                     default=0)


def _ranked(wanted: frozenset[str], registry: ToolRegistry) -> list[dict[str, Any]]:
    """The registry's schemas, most relevant to the `wanted` families first (registry order
    on ties)."""
    specs = registry.specs()
    order = sorted(range(len(specs)), key=lambda i: -_score(wanted, sorted(specs[i].tags)))
    by_name = {s["function"]["name"]: s for s in registry.schemas()}
    return [by_name[specs[i].name] for i in order if specs[i].name in by_name]


def stable_order(schemas: Sequence[dict[str, Any]], registry_names: Sequence[str]
                 ) -> list[dict[str, Any]]:
    """`schemas` in the fixed order: `BASE` first, then registry order."""
    rank = {name: i for i, name in enumerate((*BASE, *(n for n in registry_names
                                                     if n not in BASE)))}
    return sorted(schemas, key=lambda s: rank.get(s["function"]["name"], len(rank)))


_SENTENCE_END = re.compile(r"(?<!e\.g)(?<!i\.e)(?<!etc)\.(?=\s+[A-Z(]|$)")


def _first_sentence(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    """The first sentence (not cut at "e.g."), at most `limit` characters (cut at a word)."""
    text = " ".join(text.split())
    m = _SENTENCE_END.search(text)
    out = text[:m.end()] if m else text
    if len(out) <= limit:
        return out
    return out[:limit].rsplit(" ", 1)[0].rstrip(",;:") + "…"


# ", e.g. "600519", "NVDA"": a small model copies an example into its call (it asked 600519
# about 英伟达), so its descriptions go without them
_EXAMPLES = re.compile(r"[,;]?\s*(?:e\.g\.|for example|such as)\s.*$", re.IGNORECASE)


def _compact_property(prop: dict[str, Any], *, small: bool = False) -> dict[str, Any]:
    out = {k: v for k, v in prop.items() if k not in ("title", "default")}
    variants = out.pop("anyOf", None)
    if isinstance(variants, list):  # `X | None` -> X: a missing argument already means None
        real = [v for v in variants if v.get("type") != "null"]
        if len(real) == 1:
            out = {**real[0], **out}
        else:
            out["anyOf"] = real
    if "description" in out:
        text = str(out["description"])
        if small:
            text = _EXAMPLES.sub("", " ".join(text.split())).rstrip(",;: ") or text
        out["description"] = _first_sentence(text, 90)
    out.pop("format", None)
    return out


def small_call(call: ToolCall, registry: ToolRegistry, period: str | None = None,
               question: str = "") -> ToolCall:
    """`call` with `SMALL_ARGS` for the parameters its tool takes and the call left out, the
    period the question names (`period`, read by code) as its `period` (the 1.5B wrote its
    parameter's description as the value, "back from the last bar", or none for 近一年, the
    whole history, even with the period spelt out beside the question), and no `interval`
    unless the question names a bar size (`NAMES_INTERVAL`)."""
    if call.name not in registry:
        return call
    props = registry.get(call.name).args_model.model_fields
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return call
    if not isinstance(args, dict):
        return call
    extra = {k: v for k, v in SMALL_ARGS.items() if k in props and k not in args}
    if period and "period" in props and args.get("period") != period:
        extra["period"] = period
        for field in ("start", "end"):  # the period stands instead of start/end
            args.pop(field, None)
    dropped = "interval" in args and not NAMES_INTERVAL.search(question)
    if dropped:
        args.pop("interval")
    if not extra and not dropped:
        return call
    return call.model_copy(update={"arguments": json.dumps(args | extra, ensure_ascii=False)})


def compact(schema: dict[str, Any], *, small: bool = False) -> dict[str, Any]:
    """A copy of one tool schema with fewer tokens (see the module's docstring)."""
    fn = copy.deepcopy(schema["function"])
    params = fn.get("parameters", {})
    required = list(params.get("required", []))
    props = params.get("properties", {})
    kept = {name: _compact_property(p, small=small) for name, p in props.items()
            if not small or name in required or name in KEEP_OPTIONAL}
    new_params: dict[str, Any] = {"type": "object", "properties": kept}
    if required:
        new_params["required"] = required
    return {"type": "function", "function": {
        "name": fn["name"], "description": _first_sentence(fn.get("description", "")),
        "parameters": new_params}}


# compact() and its token estimate per (registry schema, small): the registry builds its
# schemas once, so a message reuses them instead of deep-copying and measuring every tool again
# (29% of the gateway's message path in the issue 34 profile). The schema is kept in the value,
# so its id cannot be reused while the entry lives; the result is shared: treat it as read-only.
_COMPACTED: dict[tuple[int, bool], tuple[dict[str, Any], dict[str, Any], float]] = {}
_COMPACTED_MAX = 1024


def _compacted(schema: dict[str, Any], small: bool) -> tuple[dict[str, Any], float]:
    from core.llm.fit import estimate_text

    got = _COMPACTED.get((id(schema), small))
    if got is None or got[0] is not schema:
        if len(_COMPACTED) >= _COMPACTED_MAX:
            _COMPACTED.clear()
        done = compact(schema, small=small)
        got = (schema, done, estimate_text(json.dumps(done, ensure_ascii=False)))
        _COMPACTED[id(schema), small] = got
    return got[1], got[2]


def schema_tokens(schemas: Sequence[dict[str, Any]]) -> int:
    """A safe-side token estimate of the offered schemas (as `core.llm.fit` counts them)."""
    from core.llm.fit import estimate_tools

    return int(estimate_tools(schemas))


# pick_schemas per (the registry's schemas, the families a question names, budget, small): the
# choice depends on nothing else, and every message made it again (8% of the gateway's CPU per
# message). Keyed by the registry's cached schema list, which it replaces when a tool is added;
# the list is kept in the value, so its id cannot be reused while the entry lives.
_PICKED: dict[tuple[int, frozenset[str], int | None, bool],
              tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
_PICKED_MAX = 512


def wanted_families(question: str) -> frozenset[str]:
    """The tags of the `FAMILIES` that `question` names."""
    folded = question.casefold()
    return frozenset(tag for tag, pattern in FAMILIES.items()
                     if any(n in folded for n in _NEEDLES[tag]) and pattern.search(question))


def pick_schemas(question: str, registry: ToolRegistry, *, budget_tokens: int | None = None,
                 small: bool = False) -> list[dict[str, Any]]:
    """The tools to offer for `question`, compact, in the stable order.

    Chosen most relevant first while they fit `budget_tokens`; for a small model at most
    `SMALL_TOOLS`: the tools of the families the question names, or the `BASE` tools when it
    names none (offered get_ohlcv beside get_indicators, the 1.5B answered "BTC-USD MACD" with
    the bars' summary). Then listed in `stable_order`.
    """
    if not len(registry):
        return []
    schemas = registry.schemas()
    key = (id(schemas), wanted_families(question), budget_tokens, small)
    got = _PICKED.get(key)
    if got is None or got[0] is not schemas:
        if len(_PICKED) >= _PICKED_MAX:
            _PICKED.clear()
        got = (schemas, _pick(key[1], registry, budget_tokens=budget_tokens, small=small))
        _PICKED[key] = got
    return list(got[1])


def _pick(wanted: frozenset[str], registry: ToolRegistry, *, budget_tokens: int | None,
          small: bool) -> list[dict[str, Any]]:
    tags = {s.name: sorted(s.tags) for s in registry.specs()}
    ranked = _ranked(wanted, registry)
    if small:
        by_name = {s["function"]["name"]: s for s in ranked}
        named = [s for s in ranked if wanted.intersection(tags[s["function"]["name"]])]
        ranked = named or [by_name[n] for n in BASE if n in by_name]
    from core.llm.fit import TOOLS_OVERHEAD

    chosen: list[dict[str, Any]] = []
    spent: float = TOOLS_OVERHEAD  # schema_tokens(chosen), summed as it grows
    for schema in ranked:
        if small and len(chosen) >= SMALL_TOOLS:
            break
        candidate, tokens = _compacted(schema, small)
        if budget_tokens is not None and int(spent + tokens) > budget_tokens:
            continue
        chosen.append(candidate)
        spent += tokens
    return stable_order(chosen, registry.names())


def fingerprint(schemas: Sequence[dict[str, Any]]) -> str:
    """The bytes a request carries for `schemas` (what a prompt cache compares)."""
    return json.dumps(list(schemas), ensure_ascii=False, separators=(",", ":"))
