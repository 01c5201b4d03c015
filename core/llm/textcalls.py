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

The calls found are ordinary `ToolCall`s: the registry validates their arguments like any
other. What is left of the text, markup removed, is returned beside them.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Collection
from typing import Any

from core.llm.markup import strip_markup
from core.types import ToolCall

_FUNCTION = re.compile(r"<function=([A-Za-z0-9_.\-]+)>(.*?)(?:</function>|\Z)", re.DOTALL)
_DECODER = json.JSONDecoder()


def _as_call(obj: Any, names: Collection[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(obj, dict):
        return None
    raw_fn = obj.get("function")
    fn: dict[str, Any] = raw_fn if isinstance(raw_fn, dict) else {}
    name = obj.get("name") or fn.get("name") or obj.get("tool") or obj.get("tool_name")
    if not isinstance(name, str) or name not in names:
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
    return name, args


def _json_spans(text: str) -> list[tuple[int, int, Any]]:
    """Every top-level JSON object or array in `text`, with its span."""
    spans: list[tuple[int, int, Any]] = []
    i = 0
    while i < len(text):
        if text[i] in "{[":
            try:
                value, end = _DECODER.raw_decode(text, i)
            except json.JSONDecodeError:
                i += 1
                continue
            spans.append((i, end, value))
            i = end
        else:
            i += 1
    return spans


def _pythonic(text: str, names: Collection[str]) -> list[tuple[int, int, str, dict[str, Any]]]:
    if not names:
        return []
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in names) + r")\(([^()]*)\)")
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


def parse_text_calls(text: str, names: Collection[str]) -> tuple[list[ToolCall], str]:
    """(calls written as text, the rest of the text without them and without markup)."""
    if not text or not names:
        return [], strip_markup(text)
    found: list[tuple[str, dict[str, Any]]] = []
    cuts: list[tuple[int, int]] = []
    for m in _FUNCTION.finditer(text):
        try:
            args = json.loads(m.group(2).strip() or "{}")
        except json.JSONDecodeError:
            continue
        if m.group(1) in names and isinstance(args, dict):
            found.append((m.group(1), args))
            cuts.append(m.span())
    for start, end, value in _json_spans(text):
        if any(a <= start < b for a, b in cuts):
            continue
        items = value if isinstance(value, list) else [value]
        calls = [c for c in (_as_call(v, names) for v in items) if c is not None]
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
    if cuts:
        rest = re.sub(r"```(?:json|python)?\s*```|\[\s*(?:,\s*)*\]", "", rest)
    calls_out = [ToolCall(id=f"text_call_{i}", name=name,
                          arguments=json.dumps(args, ensure_ascii=False))
                 for i, (name, args) in enumerate(found)]
    return calls_out, strip_markup(rest)
