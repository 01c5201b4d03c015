"""Fitting a request into a model profile's context window.

Token counts are estimated without the model's tokenizer, on the safe side (ASCII text at 3
characters a token, any other character as 1.5 tokens, plus a chat-template overhead per
message), and scaled by what the server's own counts showed (`ratio`).

Tools take at most half of the window (`TOOLS_SHARE`): past that, the least relevant are not
offered (callers list them most relevant first). When the prompt and the answer's
`max_tokens` still do not fit, the request is trimmed in this order, stopping as soon as it
fits:

1. tool results of earlier questions are shortened to 600 characters;
2. the oldest turns of the history are dropped (a tool call goes with its results);
3. tools are dropped from the end of the offered list (callers list them most relevant first);
4. this question's tool results are shortened, longest first, down to 600 characters;
5. `max_tokens` is lowered, down to `MIN_OUTPUT` tokens.

What still does not fit raises `ContextOverflow`, which says by how much.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import LLMError
from core.types import ChatMessage

MIN_OUTPUT = 256
MESSAGE_OVERHEAD = 8
TOOLS_OVERHEAD = 120  # the template's instructions around the tool list
SAFETY = 0.04  # share of the window kept free for estimate error
SHORT_RESULT = 600
TOOLS_SHARE = 0.5


class ContextOverflow(LLMError):
    """A request that cannot be made to fit the profile's context window."""


def estimate_text(text: str) -> float:
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return ascii_chars / 3.0 + (len(text) - ascii_chars) * 1.5


def estimate_message(m: ChatMessage) -> float:
    n = estimate_text(m.content) + MESSAGE_OVERHEAD
    for c in m.tool_calls:
        n += estimate_text(c.name) + estimate_text(c.arguments) + 10
    return n


def estimate_tools(tools: Sequence[dict[str, Any]] | None) -> float:
    if not tools:
        return 0.0
    return TOOLS_OVERHEAD + sum(estimate_text(json.dumps(t, ensure_ascii=False))
                                for t in tools)


def estimate_request(messages: Sequence[ChatMessage],
                     tools: Sequence[dict[str, Any]] | None, ratio: float = 1.0) -> int:
    return int((sum(estimate_message(m) for m in messages) + estimate_tools(tools)) * ratio) + 1


@dataclass
class Fitted:
    messages: list[ChatMessage]
    tools: list[dict[str, Any]] | None
    max_tokens: int
    prompt_tokens: int  # the estimate, after trimming
    trimmed: list[str] = field(default_factory=list)  # what was cut, for the log


def _shorten(m: ChatMessage, chars: int) -> ChatMessage:
    if len(m.content) <= chars:
        return m
    cut = len(m.content) - chars
    return m.model_copy(update={"content": m.content[:chars]
                                + f"\n[... {cut} characters cut to fit the context]"})


def _current_start(messages: list[ChatMessage]) -> int:
    """Index of the last user message: what comes from it on is this question's run."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return i
    return len(messages)


def fit_request(messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] | None, *,
                context: int, max_tokens: int, ratio: float = 1.0,
                min_output: int = MIN_OUTPUT) -> Fitted:
    """The request trimmed (in the order above) so prompt + max_tokens fits `context`."""
    msgs = list(messages)
    offered = list(tools) if tools else None
    room = int(context * (1 - SAFETY))
    want = max(1, max_tokens)
    floor = min(want, min_output)
    trimmed: list[str] = []

    def prompt() -> int:
        return estimate_request(msgs, offered, ratio)

    def fits(out: int) -> bool:
        return prompt() + out <= room

    if offered and estimate_tools(offered) * ratio > context * TOOLS_SHARE:
        before = len(offered)
        while offered and estimate_tools(offered) * ratio > context * TOOLS_SHARE:
            offered.pop()
        trimmed.append(f"tools narrowed from {before} to {len(offered)} (half the window)")
        offered = offered or None
    if fits(want):
        return Fitted(msgs, offered, want, prompt(), trimmed)
    # 1. earlier questions' tool results
    start = _current_start(msgs)
    cut = 0
    for i in range(start):
        if msgs[i].role == "tool" and len(msgs[i].content) > SHORT_RESULT:
            msgs[i] = _shorten(msgs[i], SHORT_RESULT)
            cut += 1
    if cut:
        trimmed.append(f"{cut} earlier tool result(s) shortened")
    # 2. oldest history turns (after the leading system messages, before this question)
    head = 0
    while head < len(msgs) and msgs[head].role == "system":
        head += 1
    dropped = 0
    while not fits(want) and head < _current_start(msgs):
        first = msgs.pop(head)
        dropped += 1
        if first.tool_calls:  # its results go with it
            while head < len(msgs) and msgs[head].role == "tool":
                msgs.pop(head)
                dropped += 1
        while head < _current_start(msgs) and msgs[head].role == "tool":
            msgs.pop(head)  # results whose call was dropped
            dropped += 1
    if dropped:
        trimmed.append(f"{dropped} oldest history message(s) dropped")
    # 3. the least relevant tools
    if offered and not fits(want):
        before = len(offered)
        while offered and not fits(want):
            offered.pop()
        trimmed.append(f"tools narrowed from {before} to {len(offered)}")
        if not offered:
            offered = None
    # 4. this question's tool results, longest first
    if not fits(want):
        start = _current_start(msgs)
        order = sorted((i for i in range(start, len(msgs)) if msgs[i].role == "tool"),
                       key=lambda i: -len(msgs[i].content))
        for i in order:
            if fits(want):
                break
            over = (prompt() + want - room) * 3  # characters to lose, roughly
            keep = max(SHORT_RESULT, len(msgs[i].content) - over)
            if keep < len(msgs[i].content):
                msgs[i] = _shorten(msgs[i], keep)
                trimmed.append(f"tool result {msgs[i].name or i} shortened")
    # 5. a shorter answer
    out = want
    if not fits(out):
        out = max(floor, room - prompt())
        if out < want:
            trimmed.append(f"max_tokens lowered from {want} to {out}")
    if not fits(out):
        raise ContextOverflow(
            f"the request needs about {prompt() + floor:,} tokens with the shortest answer, "
            f"more than this model's context of {context:,} tokens, even after trimming; "
            "shorten the question or start a new conversation with /new")
    return Fitted(msgs, offered, out, prompt(), trimmed)
