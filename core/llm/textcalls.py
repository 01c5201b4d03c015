"""Tool calls a model wrote as text instead of the API's `tool_calls`.

Small local models often do (SmolLM2 behind llama.cpp always did). Recognised, when the name is
one of the offered tools:

- Hermes / Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (closed or not);
- a bare JSON object (or a list of them, or one in a code fence) naming a tool, with its
  arguments under `arguments`, `parameters` (Llama 3.x, after `<|python_tag|>` or not) or
  `args`, or OpenAI-style under `function`;
- Mistral: `[TOOL_CALLS] [{"name": ..., "arguments": ...}]`;
- Llama's `<function=name>{...}</function>`;
- Llama 3.2's pythonic `[get_quote(symbol="NVDA")]` (keyword literals only).

A small model (Qwen2.5-Coder-0.5B) also names the *instrument* where the tool's name belongs:
`{"name": "NVDA", "arguments": {}}`, `<tool_call>{"name": "600519", ...}`. With
`by_symbol` (`symbol_tools`: the offered tools that take one `symbol`), a call whose name is
no tool but is shaped like a symbol (`looks_like_symbol`), or is one of the question's
`symbols`, becomes a call of the first of those tools that takes every argument it gave,
with the name as its symbol (a `symbol` the model did give wins). `remap_symbol_calls` does
the same for API `tool_calls` (llama.cpp parses the markup, not the names).

The calls found are ordinary `ToolCall`s: the registry validates their arguments like any
other. What is left of the text, markup removed, is returned beside them.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from core.llm.markup import strip_markup
from core.types import ToolCall

# a ticker (NVDA, BRK.B, BTC-USD, ^GSPC), an A-share or HK code (600519, 000001.SH, 0700.HK),
# a Chinese name (英伟达, 沪深300): never a tool's name
_SYMBOL = re.compile(r"\^?[A-Z]{1,5}(?:[.-][A-Z]{1,4})?|\d{6}(?:\.(?:SH|SZ|BJ))?|\d{4,5}\.HK"
                     r"|[\u4e00-\u9fff]{2,10}\d{0,3}")
_FUNCTION = re.compile(r"<function=([A-Za-z0-9_.\-]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_DECODER = json.JSONDecoder()
_OPENER = re.compile(r"[{\[]")


def looks_like_symbol(name: str, symbols: Collection[str] = ()) -> bool:
    """Whether a call's name is an instrument: one of the question's `symbols` (any case), or
    shaped like a ticker, a code or a Chinese name (upper case only: `rm_rf` and
    `get_price` are not)."""
    if name.strip().upper() in {s.upper() for s in symbols}:
        return True
    return _SYMBOL.fullmatch(name.strip()) is not None


BySymbol = Mapping[str, Collection[str]]  # tool -> its parameters, in the order offered


def symbol_tools(schemas: Sequence[dict[str, Any]]) -> dict[str, frozenset[str]]:
    """The offered tools a call named after an instrument may mean: those whose one required
    parameter is `symbol`, in the order offered, with their parameters. Read once per set of
    offered schemas (`toolpick` shares them between messages; treat the result as read-only)."""
    key = tuple(map(id, schemas))
    got = _SYMBOL_TOOLS.get(key)
    if got is not None and all(a is b for a, b in zip(got[0], schemas, strict=True)):
        return got[1]
    out: dict[str, frozenset[str]] = {}
    for schema in schemas:
        fn = schema.get("function", {})
        params = fn.get("parameters", {})
        if list(params.get("required", [])) == ["symbol"]:
            out[fn["name"]] = frozenset(params.get("properties", {}))
    if len(_SYMBOL_TOOLS) >= 256:
        _SYMBOL_TOOLS.clear()
    _SYMBOL_TOOLS[key] = (tuple(schemas), out)  # the schemas kept: their ids stay theirs
    return out


_SymbolTools = dict[str, frozenset[str]]
_SYMBOL_TOOLS: dict[tuple[int, ...], tuple[tuple[dict[str, Any], ...], _SymbolTools]] = {}


def _by_symbol(name: str, args: dict[str, Any], by_symbol: BySymbol | None,
               symbols: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    """(the first tool of `by_symbol` that takes every argument given, the arguments with the
    name as `symbol`) for a call named after an instrument."""
    if not by_symbol or not looks_like_symbol(name, symbols):
        return None
    given = args.get("symbol")
    args = {**args, "symbol": given if isinstance(given, str) and given.strip()
            else name.strip()}
    tool = next((t for t, params in by_symbol.items() if set(args) <= set(params)),
                next(iter(by_symbol)))
    return tool, args


def remap_symbol_calls(calls: list[ToolCall], names: Collection[str], *,
                       by_symbol: BySymbol | None, symbols: Collection[str] = ()
                       ) -> list[ToolCall]:
    """API tool calls, a call named after an instrument made a call of `by_symbol`."""
    out = []
    for call in calls:
        if call.name not in names:
            try:
                args = json.loads(call.arguments or "{}")
            except json.JSONDecodeError:
                args = {}
            mapped = _by_symbol(call.name, args if isinstance(args, dict) else {}, by_symbol,
                                symbols)
            if mapped is not None:
                call = call.model_copy(update={
                    "name": mapped[0], "arguments": json.dumps(mapped[1], ensure_ascii=False)})
        out.append(call)
    return out


def _as_call(obj: Any, names: Collection[str], by_symbol: BySymbol | None = None,
             symbols: Collection[str] = ()) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(obj, dict):
        return None
    raw_fn = obj.get("function")
    fn: dict[str, Any] = raw_fn if isinstance(raw_fn, dict) else {}
    name = obj.get("name") or fn.get("name") or obj.get("tool") or obj.get("tool_name")
    if not isinstance(name, str):
        return None
    known = name in names
    if not known and (not by_symbol or not looks_like_symbol(name, symbols)):
        return None
    args: Any = None
    for key in ("arguments", "parameters", "args", "input"):
        if key in obj:
            args = obj[key]
            break
    else:
        args = fn.get("arguments", {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError:
            return None
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return None
    if not known:
        return _by_symbol(name, args, by_symbol, symbols)
    return name, args


def _json_spans(text: str) -> list[tuple[int, int, Any]]:
    """Every top-level JSON object or array in `text`, with its span."""
    spans: list[tuple[int, int, Any]] = []
    i = 0
    # from one opener to the next (a regex search), not a Python step per character
    while (opener := _OPENER.search(text, i)) is not None:
        start = opener.start()
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        spans.append((start, end, value))
        i = end
    return spans


@functools.lru_cache(maxsize=64)
def _call_pattern(names: frozenset[str]) -> re.Pattern[str]:
    """`name(args)` for the offered tools (made once per tool set, not per answer)."""
    return re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\(([^()]*)\)")


def _pythonic(text: str, names: Collection[str]) -> list[tuple[int, int, str, dict[str, Any]]]:
    if not names or "(" not in text:
        return []
    pattern = _call_pattern(frozenset(names))
    found = []
    for m in pattern.finditer(text):
        try:
            node = ast.parse(f"f({m.group(2)})", mode="eval").body
        except SyntaxError:
            continue
        if not isinstance(node, ast.Call) or node.args:
            continue
        try:
            args = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        except ValueError:
            continue
        if args or not m.group(2).strip():
            found.append((m.start(), m.end(), m.group(1), args))
    return found


def parse_text_calls(text: str, names: Collection[str], *, by_symbol: BySymbol | None = None,
                     symbols: Collection[str] = ()) -> tuple[list[ToolCall], str]:
    """(calls written as text, the rest of the text without them and without markup).
    `by_symbol`, `symbols`: a call named after an instrument (see the module's docstring)."""
    if not text or not names:
        return [], strip_markup(text)
    found: list[tuple[str, dict[str, Any]]] = []
    cuts: list[tuple[int, int]] = []
    for m in _FUNCTION.finditer(text):
        try:
            args = json.loads(m.group(2).strip() or "{}")
        except json.JSONDecodeError:
            continue
        if not isinstance(args, dict):
            continue
        call = ((m.group(1), args) if m.group(1) in names
                else _by_symbol(m.group(1), args, by_symbol, symbols))
        if call is not None:
            found.append(call)
            cuts.append(m.span())
    for start, end, value in _json_spans(text):
        if any(a <= start < b for a, b in cuts):
            continue
        items = value if isinstance(value, list) else [value]
        calls = [c for c in (_as_call(v, names, by_symbol, symbols) for v in items)
                 if c is not None]
        if calls and len(calls) == len(items):
            found += calls
            cuts.append((start, end))
    if not found:
        for start, end, name, args in _pythonic(text, names):
            found.append((name, args))
            cuts.append((start, end))
    rest = text
    for start, end in sorted(cuts, reverse=True):
        rest = rest[:start] + rest[end:]
    rest = _cut_call_tail(rest, names, by_symbol, symbols)
    if cuts:
        rest = re.sub(r"```(?:json|python)?\s*```|\[\s*(?:,\s*)*\]", "", rest)
    unique: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, args in found:  # the same call written again and again (a small model's loop)
        unique.setdefault(name + json.dumps(args, sort_keys=True), (name, args))
    calls_out = [ToolCall(id=f"text_call_{i}", name=name,
                          arguments=json.dumps(args, ensure_ascii=False))
                 for i, (name, args) in enumerate(unique.values())]
    return calls_out, strip_markup(rest)


_CALL_OPEN = re.compile(r"(?:```(?:json)?\s*)?\{\s*\"(?:name|function|tool)\"\s*:\s*"
                        r"(?:\{\s*\"name\"\s*:\s*)?\"([^\"]*)(\"?)")


def _cut_call_tail(text: str, names: Collection[str], by_symbol: BySymbol | None,
                   symbols: Collection[str]) -> str:
    """`text` without a call that was cut off before it was complete (an answer stopped at
    its length limit in the middle of `{"name": "get_quote", "argu`): never shown."""
    for m in _CALL_OPEN.finditer(text):
        name, closed = m.group(1), m.group(2)
        if not closed and m.end() == len(text):  # cut inside the name itself
            return text[:m.start()]
        if name in names or (by_symbol and looks_like_symbol(name, symbols)):
            try:
                _DECODER.raw_decode(text, text.index("{", m.start()))
            except json.JSONDecodeError:
                return text[:m.start()]
    return text
