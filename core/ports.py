"""The ports (protocols) the kernel talks through. Every one has a twin in `core.testing`."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal, Protocol, runtime_checkable

from core.events import Event
from core.types import (
    Capabilities,
    ChatMessage,
    ChatRef,
    IncomingMessage,
    LLMResponse,
    MessageRef,
    OutgoingFile,
    Reply,
    utcnow,
)

MessageHandler = Callable[[IncomingMessage], Awaitable[None]]


@runtime_checkable
class Adapter(Protocol):
    """A platform, translated. Raises `core.errors.PlatformError` subclasses on refusal."""

    name: str
    capabilities: Capabilities

    async def start(self, on_message: MessageHandler) -> None: ...

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef: ...

    async def edit(self, ref: MessageRef, reply: Reply) -> None: ...

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef: ...

    async def typing(self, chat: ChatRef) -> None: ...

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes: ...

    async def aclose(self) -> None: ...


class LLMStreamEvent(Protocol):
    kind: str


class LLMProvider(Protocol):
    """An OpenAI-compatible model behind roles (agent, planner, fast, judge, ...)."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> LLMResponse: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[Any]: ...


class Mode(Protocol):
    """A way of answering: normal (tool loop), fast (one call), debate, offline analyst."""

    name: str

    def run(self, turn: Any) -> AsyncIterator[Event]: ...


@dataclass(frozen=True)
class KeptReply:
    """A reply the platform refused for now (WeChat: the user's 48-hour window is closed or its
    quota used), to deliver when the user next writes: text, or a file (its caption, if any,
    is kept as a text reply of its own). `id` orders the replies; the store assigns it."""

    text: str = ""
    file: OutgoingFile | None = None
    id: int = 0
    kept_at: datetime | None = None  # set by the store


class KeptReplies(Protocol):
    """Replies kept per (adapter, recipient), oldest first, until delivered.

    `key` names the adapter and its app (``"wechat:<app id>"``), `recipient` the user. Reading
    is peek-then-remove: a reply leaves only when the adapter `remove`s it (delivered, or
    definitively refused), so a failure or a crash mid-delivery loses nothing (at worst a reply
    is delivered twice). `durable` says whether kept replies survive a restart.
    """

    durable: bool

    async def keep(self, key: str, recipient: str, reply: KeptReply, *, limit: int) -> int:
        """Append `reply`; drop the oldest beyond `limit` for the recipient. Returns how many
        were dropped."""
        ...

    async def peek(self, key: str, recipient: str) -> KeptReply | None:
        """The oldest kept reply (with its `id`), or None."""
        ...

    async def remove(self, key: str, recipient: str, reply_id: int) -> None: ...

    async def clear(self, key: str, recipient: str) -> int:
        """Forget every reply kept for the recipient (the user is gone); how many there were."""
        ...

    async def recipients(self, key: str) -> set[str]:
        """Everyone who has replies kept under `key`."""
        ...


class MemoryKeptReplies:
    """`KeptReplies` in this process's memory: lost on restart (`durable` is False). The
    default of an adapter given no store, and the twin in `core.testing`."""

    durable = False

    def __init__(self) -> None:
        self._kept: dict[tuple[str, str], deque[KeptReply]] = {}
        self._ids = itertools.count(1)

    async def keep(self, key: str, recipient: str, reply: KeptReply, *, limit: int) -> int:
        if limit < 1:
            raise ValueError("the limit of kept replies must be at least 1")
        queue = self._kept.setdefault((key, recipient), deque())
        queue.append(replace(reply, id=next(self._ids), kept_at=utcnow()))
        dropped = 0
        while len(queue) > limit:
            queue.popleft()
            dropped += 1
        return dropped

    async def peek(self, key: str, recipient: str) -> KeptReply | None:
        queue = self._kept.get((key, recipient))
        return queue[0] if queue else None

    async def remove(self, key: str, recipient: str, reply_id: int) -> None:
        queue = self._kept.get((key, recipient))
        if queue is None:
            return
        for reply in queue:
            if reply.id == reply_id:
                queue.remove(reply)
                break
        if not queue:
            del self._kept[key, recipient]

    async def clear(self, key: str, recipient: str) -> int:
        return len(self._kept.pop((key, recipient), ()))

    async def recipients(self, key: str) -> set[str]:
        return {r for (k, r), queue in self._kept.items() if k == key and queue}


# --- the outbox -----------------------------------------------------------------------------

OutItem = Reply | OutgoingFile
DeliveryStatus = Literal["pending", "delivered", "held", "failed", "cancelled"]


@dataclass(frozen=True)
class Receipt:
    """Where a delivery stands. `created` is False when `key` was delivered (or queued) before:
    the outbox is idempotent on the key, so a repeated fire or a retried request sends nothing
    twice."""

    key: str
    status: DeliveryStatus
    message_ids: tuple[str, ...] = ()
    attempts: int = 0
    last_error: str = ""
    delivered_at: datetime | None = None
    created: bool = True


class Outbox(Protocol):
    """Everything that must arrive without an inbound message to answer: scheduled reports,
    the podcast, an answer the renderer could not deliver live, replies WeChat refuses while the
    user's window is closed.

    `deliver` stores the items first (idempotent on `key`), then sends them through the adapter
    of `chat.platform` with retries until `deadline_s` from now (honouring `retry_after`,
    backing off on network errors); a platform that refuses for now (`held`) gets them when the
    chat next writes. It returns once stored; `wait` waits for a final status. `hold` stores
    it held at once (the platform just refused it for now, or the chat has held deliveries it
    must not overtake).
    """

    async def deliver(self, chat: ChatRef, items: Sequence[OutItem], *, key: str,
                      deadline_s: float | None = None, source: str = "",
                      subscription_id: int | None = None, hold: bool = False) -> Receipt: ...

    async def receipt(self, key: str) -> Receipt | None: ...

    def kick(self) -> None:
        """Something became due (a held delivery released): send now rather than at the next
        poll."""
        ...

    async def flush_chat(self, chat: ChatRef) -> int:
        """Send what is due for `chat` now, before anything else goes there (what was held
        for a user arrives before the answer to their new message); how many deliveries for
        the chat are still waiting (held again, or pending)."""
        ...

    async def wait(self, key: str, *, timeout_s: float) -> Receipt | None:
        """The receipt once delivered, failed or held (None if `key` is unknown)."""
        ...
