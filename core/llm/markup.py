"""Chat-template markup a model may write into its text (`<tool_call>`, `<tool_response>`,
`<|im_end|>`, `[TOOL_CALLS]` ...): removed from what users see, also while streaming."""

from __future__ import annotations

import re

# blocks whose whole content is template business (an unclosed one runs to the end)
_BLOCKS = ("tool_call", "tool_response", "tool_calls", "function_call", "tools")
_BLOCK = re.compile(r"<(" + "|".join(_BLOCKS) + r")>.*?(?:</\1>|\Z)", re.DOTALL)
_FUNCTION = re.compile(r"<function=[^>]*>.*?(?:</function>|\Z)", re.DOTALL)
_HEADER = re.compile(r"<\|start_header_id\|>.*?<\|end_header_id\|>", re.DOTALL)
_IM_START = re.compile(r"<\|im_start\|>\s*(?:system|user|assistant|tool)?")
_TOKEN = re.compile(r"<\|[A-Za-z0-9_]+\|>|\[/?(?:TOOL_CALLS|INST|TOOL_RESULTS|AVAILABLE_TOOLS)\]"
                    r"|</?s>|</(?:" + "|".join(_BLOCKS) + r")>")

# what starts markup in a stream: from here on nothing more is shown live
OPENERS = (*(f"<{b}>" for b in _BLOCKS), "<function=", "<|", "[TOOL_CALLS]", "[INST]")


def strip_markup(text: str) -> str:
    """`text` without template blocks and special tokens, whitespace tidied."""
    if not any(c in text for c in "<["):
        return text.strip()
    out = _BLOCK.sub("", text)
    out = _FUNCTION.sub("", out)
    out = _HEADER.sub("", out)
    out = _IM_START.sub("", out)
    out = _TOKEN.sub("", out)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip()


def has_markup(text: str) -> bool:
    return strip_markup(text) != text.strip()


class MarkupGate:
    """Streamed text in, text safe to show out. Once markup (or a reply that opens like a bare
    JSON tool call) begins, nothing more passes: the final, cleaned text replaces it. Work per
    chunk is bounded by the chunk (not by what streamed before it)."""

    def __init__(self) -> None:
        self._lead = ""  # the reply's first characters, until they tell whether it is JSON
        self._held = ""
        self.closed = False

    def feed(self, chunk: str) -> str:
        if self.closed:
            return ""
        if len(self._lead) < _LEAD:
            self._lead = (self._lead + chunk if self._lead else chunk.lstrip())[:_LEAD]
            if not self._lead:
                return ""
            if self._lead.startswith(_JSON_OPENERS):
                self.closed = True  # possibly a tool call written as JSON: decide at the end
                return ""
            if len(self._lead) < _LEAD and any(o.startswith(self._lead) for o in _JSON_OPENERS):
                self._held += chunk  # "`" or "[" alone: not decided yet
                return ""
        buf = self._held + chunk
        self._held = ""
        if "<" in buf or "[" in buf:
            for opener in OPENERS:
                idx = buf.find(opener)
                if idx >= 0:
                    self.closed = True
                    return buf[:idx]
        keep = _partial_opener(buf)
        self._held = buf[len(buf) - keep:] if keep else ""
        return buf[: len(buf) - keep]

    def flush(self) -> str:
        rest, self._held = self._held, ""
        return "" if self.closed else rest


_JSON_OPENERS = ("{", "```", "[{")
_LEAD = max(map(len, _JSON_OPENERS))
_LONGEST = max(map(len, OPENERS)) - 1


def _partial_opener(text: str) -> int:
    """Length of the longest suffix of `text` that is the start of an opener, not all of it
    (every opener starts with "<" or "[")."""
    tail = text[-_LONGEST:]
    if "<" not in tail and "[" not in tail:
        return 0
    for i, ch in enumerate(tail):
        if ch in "<[" and any(len(opener) > len(tail) - i and opener.startswith(tail[i:])
                              for opener in OPENERS):
            return len(tail) - i
    return 0
