"""In-process twins of the ports, for unit tests: a scripted LLM, a recorder, an adapter.

Integration tests use the real things over loopback (`tests/fakes/`); these are for tests of
one component's logic.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import LLMError, MessageNotModified, RateLimited
from core.llm.base import Final, StreamItem, TextChunk
from core.ports import (
    KeptReplies,
    KeptReply,
    MemoryKeptReplies,
    MessageHandler,
    OutItem,
    Receipt,
)
from core.types import (
    Capabilities,
    ChatMessage,
    ChatRef,
    IncomingMessage,
    LLMResponse,
    MessageRef,
    OutgoingFile,
    Reply,
    ToolCall,
    Usage,
)

# The `KeptReplies` twin is `MemoryKeptReplies`, defined beside the port: adapters may import
# `core.ports` but not this module, and it is their default when no store is given.

Script = LLMResponse | Exception | Callable[[Sequence[ChatMessage]], LLMResponse]


def text(content: str, *, tokens: tuple[int, int] = (10, 5)) -> LLMResponse:
    return LLMResponse(content=content,
                       usage=Usage(model="scripted", prompt_tokens=tokens[0],
                                   completion_tokens=tokens[1]))


def calls(*items: tuple[str, dict[str, Any] | str]) -> LLMResponse:
    import json

    return LLMResponse(tool_calls=[
        ToolCall(id=f"call_{i}", name=name,
                 arguments=args if isinstance(args, str) else json.dumps(args))
        for i, (name, args) in enumerate(items)
    ], usage=Usage(model="scripted", prompt_tokens=10, completion_tokens=5))


class ScriptedLLM:
    """Answers from a script, in order; records every request. Optional per-call latency."""

    def __init__(self, script: Sequence[Script] = (), *, latency_s: float = 0.0,
                 default: Script | None = None, chunk: int = 8) -> None:
        self._script = list(script)
        self._default = default
        self.latency_s = latency_s
        self.chunk = chunk
        self.requests: list[dict[str, Any]] = []

    def _next(self, messages: Sequence[ChatMessage]) -> LLMResponse:
        if self._script:
            item = self._script.pop(0)
        elif self._default is not None:
            item = self._default
        else:
            raise LLMError("scripted LLM ran out of responses")
        if isinstance(item, Exception):
            raise item
        if callable(item):
            return item(messages)
        return item

    async def complete(self, messages: Sequence[ChatMessage], *, role: str = "agent",
                       tools: Sequence[dict[str, Any]] | None = None,
                       max_tokens: int | None = None, json_mode: bool = False) -> LLMResponse:
        self.requests.append({"role": role, "messages": list(messages), "tools": tools})
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        resp = self._next(messages)
        return resp.model_copy(update={"usage": resp.usage.model_copy(update={"role": role})})

    async def stream(self, messages: Sequence[ChatMessage], *, role: str = "agent",
                     tools: Sequence[dict[str, Any]] | None = None,
                     max_tokens: int | None = None) -> AsyncIterator[StreamItem]:
        resp = await self.complete(messages, role=role, tools=tools, max_tokens=max_tokens)
        for i in range(0, len(resp.content), self.chunk):
            yield TextChunk(resp.content[i:i + self.chunk])
        yield Final(resp)


@dataclass
class MemoryRecorder:
    messages: list[ChatMessage] = field(default_factory=list)
    usages: list[Usage] = field(default_factory=list)

    async def message(self, message: ChatMessage) -> None:
        self.messages.append(message)

    async def usage(self, usage: Usage) -> None:
        self.usages.append(usage)


@dataclass
class Op:
    kind: str  # send | edit | file | typing
    chat: ChatRef
    message_id: str
    text: str = ""
    file: OutgoingFile | None = None


class RecordingAdapter:
    """An adapter that records operations; faults can be queued per operation kind."""

    def __init__(self, name: str = "test", capabilities: Capabilities | None = None) -> None:
        self.name = name
        self.capabilities = capabilities or Capabilities(
            max_message_length=4096, can_edit=True, min_edit_interval_s=0.0, markup="plain")
        self.ops: list[Op] = []
        self.faults: dict[str, list[Exception]] = {}
        self.on_message: MessageHandler | None = None
        self._ids = itertools.count(1)
        self.texts: dict[str, str] = {}

    def _fault(self, kind: str) -> None:
        queue = self.faults.get(kind)
        if queue:
            raise queue.pop(0)

    async def start(self, on_message: MessageHandler) -> None:
        self.on_message = on_message

    async def deliver(self, message: IncomingMessage) -> None:
        assert self.on_message is not None, "start() first"
        await self.on_message(message)

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        self._fault("send")
        mid = str(next(self._ids))
        self.ops.append(Op("send", chat, mid, reply.text))
        self.texts[mid] = reply.text
        return MessageRef(chat=chat, message_id=mid)

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        self._fault("edit")
        if self.texts.get(ref.message_id) == reply.text:
            raise MessageNotModified("message is not modified")
        self.ops.append(Op("edit", ref.chat, ref.message_id, reply.text))
        self.texts[ref.message_id] = reply.text

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        self._fault("file")
        mid = str(next(self._ids))
        self.ops.append(Op("file", chat, mid, file.caption, file))
        return MessageRef(chat=chat, message_id=mid)

    async def typing(self, chat: ChatRef) -> None:
        self.ops.append(Op("typing", chat, ""))

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        return b""

    async def aclose(self) -> None:
        return None

    def visible_text(self, chat: ChatRef) -> list[str]:
        """The final text of every message sent to `chat`, in order."""
        return [self.texts[o.message_id] for o in self.ops
                if o.kind == "send" and o.chat == chat]


__all__ = ["KeptReplies", "KeptReply", "MemoryKeptReplies", "MemoryRecorder", "Op", "RateLimited",
           "RecordingAdapter", "ScriptedLLM", "calls", "text"]


class MemoryOutbox:
    """`core.ports.Outbox` in memory: records each delivery once per key and reports it
    delivered (unit tests of what is handed to the outbox; the real one is tested on Postgres
    against the platform fakes)."""

    def __init__(self) -> None:
        self.deliveries: dict[str, tuple[ChatRef, list[OutItem], str]] = {}

    async def deliver(self, chat: ChatRef, items: Sequence[OutItem], *, key: str,
                      deadline_s: float | None = None, source: str = "",
                      subscription_id: int | None = None, hold: bool = False) -> Receipt:
        created = key not in self.deliveries
        if created:
            self.deliveries[key] = (chat, list(items), source)
        return Receipt(key=key, status="delivered", created=created)

    async def receipt(self, key: str) -> Receipt | None:
        return Receipt(key=key, status="delivered") if key in self.deliveries else None

    def kick(self) -> None:
        return None

    async def flush_chat(self, chat: ChatRef) -> int:
        return 0

    async def wait(self, key: str, *, timeout_s: float) -> Receipt | None:
        return await self.receipt(key)
