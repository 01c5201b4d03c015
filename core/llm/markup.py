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
    JSON tool call) begins, nothing more passes: the final, cleaned text replaces it."""

    def __init__(self) -> None:
        self._seen = ""
        self._held = ""
        self.closed = False

    def feed(self, chunk: str) -> str:
        if self.closed:
            return ""
        self._seen += chunk
        if not self._seen.strip():
            return ""
        if self._seen.lstrip().startswith(("{", "```", "[{")):
            self.closed = True  # possibly a tool call written as JSON: decide at the end
            return ""
        buf = self._held + chunk
        self._held = ""
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


def _partial_opener(text: str) -> int:
    """Length of the longest suffix of `text` that could start an opener."""
    best = 0
    for opener in OPENERS:
        for n in range(min(len(opener) - 1, len(text)), best, -1):
            if text.endswith(opener[:n]):
                best = n
                break
    return best
