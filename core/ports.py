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
    Sender,
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
        require_tool: bool = False,  # the reply must be a call of one of `tools`
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


@dataclass(frozen=True)
class DeliveryRequest:
    """One delivery of a batch (`Outbox.deliver_many`): what `deliver` takes, as data."""

    chat: ChatRef
    items: Sequence[OutItem]
    key: str
    source: str = ""
    subscription_id: int | None = None


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

    async def deliver_many(self, requests: Sequence[DeliveryRequest], *,
                           deadline_s: float | None = None) -> list[Receipt]:
        """`deliver` for many chats at once, stored in one transaction (a scheduled fire's
        fan-out: thousands of subscribers, a few statements); receipts in the given order."""
        ...

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


# --- the web platform -----------------------------------------------------------------------
# The web adapter is translation only, like the others: what it shows beyond the live chat
# (sign-in, a person's conversations and files, share links, the admin console) it asks of a
# `WebDirectory` that `bot` implements over the store. Ids are opaque strings to the adapter.


@dataclass(frozen=True)
class WebPerson:
    """Who a web session belongs to: the linked person (`user_id`), as the gateway knows them
    on the web platform (`platform_uid`, the sender id the adapter puts on their messages)."""

    user_id: str
    platform_uid: str
    display_name: str = ""
    lang: str = "en"  # the page's language, en or zh
    is_admin: bool = False


@dataclass(frozen=True)
class WebSession:
    """A signed-in browser. `token` goes in an HttpOnly cookie, `csrf` in every unsafe
    request's ``X-CSRF-Token`` header (or ``csrf`` form field)."""

    token: str
    csrf: str
    person: WebPerson
    expires_at: datetime


@dataclass(frozen=True)
class WebConversationInfo:
    id: str
    platform: str
    chat_id: str
    title: str
    mode: str
    is_active: bool
    updated_at: datetime
    writable: bool  # only the person's own web chat is; other platforms' chats are read-only


@dataclass(frozen=True)
class WebFileInfo:
    id: str
    filename: str
    kind: str  # "image" | "document"
    mime_type: str
    size_bytes: int
    created_at: datetime
    conversation_id: str | None = None


@dataclass(frozen=True)
class WebEntry:
    """One shown message of a transcript: what the user asked or the agent answered (never a
    tool call or a tool result), or a file the answer carried."""

    role: Literal["user", "assistant", "file"]
    text: str
    at: datetime
    file: WebFileInfo | None = None


@dataclass(frozen=True)
class WebTranscript:
    conversation: WebConversationInfo
    entries: tuple[WebEntry, ...]


@dataclass(frozen=True)
class WebFileData:
    info: WebFileInfo
    data: bytes


@dataclass(frozen=True)
class WebTable:
    """Rows for the admin console; values already rendered as text (None stays None)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]
    total: int | None = None  # row count of the table, when paging one
    truncated: bool = False  # the row or byte limit cut the result
    note: str = ""  # what cut it, to show with the result ("" when whole)


@dataclass(frozen=True)
class WebUsageDay:
    day: str  # ISO date (UTC)
    questions: int
    calls: int  # model calls
    tokens: int


@dataclass(frozen=True)
class WebUsagePerson:
    name: str
    questions: int
    calls: int
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class WebFailure:
    at: datetime
    what: str
    detail: str


@dataclass(frozen=True)
class WebDashboard:
    """The admin console's first screen: usage per day and per person, what runs, what failed."""

    days: tuple[WebUsageDay, ...]
    people: tuple[WebUsagePerson, ...]
    platforms: tuple[str, ...]  # the platforms this process serves
    model: str  # the configured model ("" when none: the offline analyst answers)
    model_problem: str | None  # why the model check failed at start, if it did
    last_call_at: datetime | None
    failures: tuple[WebFailure, ...]


class WebDirectory(Protocol):
    """What the web platform needs from the rest of Bullpen. Every lookup by id is scoped to
    the asking person: someone else's conversation or file is None (the page answers 404)."""

    async def redeem_login(self, token: str) -> WebSession | None:
        """A one-time sign-in link's token, exchanged for a new session; None when unknown,
        used or expired (the link works once, for 10 minutes)."""
        ...

    async def session(self, token: str) -> WebSession | None:
        """The live session for a cookie, or None (unknown, expired, or logged out)."""
        ...

    async def end_session(self, token: str) -> None: ...

    async def conversations(self, person: WebPerson) -> list[WebConversationInfo]: ...

    async def transcript(self, person: WebPerson,
                         conversation_id: str) -> WebTranscript | None: ...

    async def web_transcript(self, person: WebPerson) -> WebTranscript | None:
        """The person's active web conversation, to draw the page with on load."""
        ...

    async def search(self, person: WebPerson, text: str) -> list[WebConversationInfo]:
        """The person's conversations whose title or messages contain `text`."""
        ...

    async def rename(self, person: WebPerson, conversation_id: str,
                     title: str) -> WebConversationInfo | None:
        """Retitle the person's own conversation; None when it is not theirs."""
        ...

    async def delete(self, person: WebPerson,
                     conversation_id: str) -> WebConversationInfo | None:
        """Delete the person's own conversation, its messages, links and files; what it was,
        or None when it is not theirs."""
        ...

    async def coverage(self, lang: str) -> str:
        """What the installed data covers, as Markdown (the empty chat's note)."""
        ...

    async def files(self, person: WebPerson) -> list[WebFileInfo]:
        """The person's files for their list: the newest copy of each, none of the internal
        ones (a podcast's script.json)."""
        ...

    async def file(self, person: WebPerson, file_id: str) -> WebFileData | None: ...

    async def share(self, person: WebPerson, conversation_id: str) -> str | None:
        """Publish the conversation; the share token (None if it is not the person's)."""
        ...

    async def unshare(self, person: WebPerson, conversation_id: str) -> bool: ...

    async def shared(self, share_token: str) -> WebTranscript | None:
        """A published conversation, read-only; None once revoked or when never issued."""
        ...

    async def shared_file(self, share_token: str, file_id: str) -> WebFileData | None:
        """A file of a published conversation (its charts), None otherwise."""
        ...

    async def admin_status(self) -> str | None:
        """None when the admin console can run; else why it is off (it logs in only as its
        own weak role, never a stronger one). Every admin call below raises
        `core.errors.ConsoleOff` with that reason while it is off."""
        ...

    async def admin_dashboard(self, days: int) -> WebDashboard:
        """Usage over the last `days` days, platform and model status, recent failures."""
        ...

    async def admin_tables(self) -> list[tuple[str, int]]:
        """Every table of the schema the console may read, with its row count (admins only:
        the adapter checks `person.is_admin` before any admin call)."""
        ...

    async def admin_rows(self, table: str, *, page: int, page_size: int) -> WebTable | None:
        """A page of a table's rows; None when `table` is not a table of the schema."""
        ...

    async def admin_query(self, sql: str) -> WebTable:
        """`sql` inside a READ ONLY transaction with a statement timeout and a row limit.
        Raises `core.errors.QueryRefused` with Postgres's own message on any error (a write
        attempt: "cannot execute DELETE in a read-only transaction")."""
        ...


@runtime_checkable
class EventObserver(Protocol):
    """An adapter that shows the run's typed events as they come (the web page: status, tool
    progress, thinking), besides the replies the renderer sends and edits. `ref` is the
    placeholder the events belong to."""

    async def observe(self, chat: ChatRef, ref: MessageRef | None, event: Event) -> None: ...


# --- group admins -----------------------------------------------------------------------------


@runtime_checkable
class ChatAdmins(Protocol):
    """An adapter that can say who administers a group chat, as the platform reports it.

    `bot` asks only when a group's mode or subscriptions are about to change (never for every
    message) and keeps the answer for a minute. True/False is the platform's answer; None means
    the platform does not say for this chat (`bot` then allows, and logs it once). Raises
    `core.errors.PlatformError` when the platform could not be asked."""

    async def is_chat_admin(self, chat: ChatRef, sender: Sender) -> bool | None: ...
