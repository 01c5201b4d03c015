"""In-process twins of the ports, for unit tests: a scripted LLM, a recorder, an adapter.

Integration tests use the real things over loopback (`tests/fakes/`); these are for tests of
one component's logic.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Literal

from core.errors import ConsoleOff, LLMError, MessageNotModified, QueryRefused, RateLimited
from core.llm.base import Final, StreamItem, TextChunk
from core.ports import (
    DeliveryRequest,
    KeptReplies,
    KeptReply,
    MemoryKeptReplies,
    MessageHandler,
    OutItem,
    Receipt,
    WebConversationInfo,
    WebDashboard,
    WebEntry,
    WebFileData,
    WebFileInfo,
    WebPerson,
    WebSession,
    WebTable,
    WebTranscript,
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
    utcnow,
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
                     max_tokens: int | None = None,
                     require_tool: bool = False) -> AsyncIterator[StreamItem]:
        resp = await self.complete(messages, role=role, tools=tools, max_tokens=max_tokens)
        self.requests[-1]["require_tool"] = require_tool
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

    async def deliver_many(self, requests: Sequence[DeliveryRequest], *,
                           deadline_s: float | None = None) -> list[Receipt]:
        return [await self.deliver(r.chat, r.items, key=r.key, source=r.source,
                                   subscription_id=r.subscription_id) for r in requests]

    async def receipt(self, key: str) -> Receipt | None:
        return Receipt(key=key, status="delivered") if key in self.deliveries else None

    def kick(self) -> None:
        return None

    async def flush_chat(self, chat: ChatRef) -> int:
        return 0

    async def wait(self, key: str, *, timeout_s: float) -> Receipt | None:
        return await self.receipt(key)


# --- the web platform's directory ------------------------------------------------------------


class MemoryWebDirectory:
    """`core.ports.WebDirectory` in memory, for the web adapter's tests: people, one-time
    sign-in links (once, until they expire), sessions, conversations, files, share links and an
    admin console whose tables are given by the test. `admin_query` answers the statements in
    `queries` and refuses every statement that is not a read the way Postgres does in a READ
    ONLY transaction ("cannot execute DELETE in a read-only transaction")."""

    def __init__(self) -> None:
        from datetime import timedelta

        self.people: dict[str, WebPerson] = {}
        self.login_ttl = timedelta(minutes=10)
        self.session_ttl = timedelta(days=7)
        self._logins: dict[str, tuple[str, datetime, bool]] = {}  # token -> user, expiry, used
        self._sessions: dict[str, WebSession] = {}
        self.conversations_of: dict[str, list[WebConversationInfo]] = {}
        self.entries: dict[str, list[WebEntry]] = {}  # conversation id -> entries
        self.files_of: dict[str, dict[str, WebFileData]] = {}  # user id -> file id -> data
        self._shares: dict[str, str] = {}  # token -> conversation id
        self.tables: dict[str, WebTable] = {}
        self.queries: dict[str, WebTable] = {}
        self.console_off: str | None = None  # set: the admin console is off, saying this
        self.coverage_md: dict[str, str] = {"en": "| Market | Data |\n|---|---|\n| US | 2020 |",
                                            "zh": "| 市场 | 数据 |\n|---|---|\n| 美股 | 2020 |"}
        self.dashboard = WebDashboard(days=(), people=(), platforms=("web",), model="",
                                      model_problem=None, last_call_at=None, failures=())
        self._ids = itertools.count(1)

    # --- what tests set up -----------------------------------------------------------------

    def person(self, user_id: str, *, lang: str = "en", is_admin: bool = False,
               display_name: str = "") -> WebPerson:
        p = WebPerson(user_id=user_id, platform_uid=f"web-{user_id}", lang=lang,
                      display_name=display_name or user_id, is_admin=is_admin)
        self.people[user_id] = p
        self.conversations_of.setdefault(user_id, [])
        self.files_of.setdefault(user_id, {})
        return p

    def login_link(self, user_id: str, *, expires_in_s: float = 600.0) -> str:
        from datetime import timedelta

        token = secrets.token_urlsafe(24)
        self._logins[token] = (user_id, utcnow() + timedelta(seconds=expires_in_s), False)
        return token

    def sign_in(self, user_id: str) -> WebSession:
        session = WebSession(token=secrets.token_urlsafe(32), csrf=secrets.token_urlsafe(24),
                             person=self.people[user_id], expires_at=utcnow() + self.session_ttl)
        self._sessions[session.token] = session
        return session

    def conversation(self, user_id: str, *, platform: str = "web", title: str = "",
                     mode: str = "normal", active: bool = True) -> WebConversationInfo:
        conv = WebConversationInfo(
            id=str(next(self._ids)), platform=platform,
            chat_id=f"web:{user_id}" if platform == "web" else f"{platform}-chat-{user_id}",
            title=title, mode=mode, is_active=active, updated_at=utcnow(),
            writable=platform == "web")
        self.conversations_of[user_id].append(conv)
        self.entries[conv.id] = []
        return conv

    def say(self, conversation_id: str, role: Literal["user", "assistant"], text: str) -> None:
        self.entries[conversation_id].append(WebEntry(role=role, text=text, at=utcnow()))

    def add_file(self, user_id: str, filename: str, data: bytes, *, kind: str = "document",
                 mime_type: str = "application/pdf",
                 conversation_id: str | None = None) -> WebFileInfo:
        info = WebFileInfo(id=str(next(self._ids)), filename=filename, kind=kind,
                           mime_type=mime_type, size_bytes=len(data), created_at=utcnow(),
                           conversation_id=conversation_id)
        self.files_of[user_id][info.id] = WebFileData(info=info, data=data)
        if conversation_id is not None:
            self.entries[conversation_id].append(
                WebEntry(role="file", text="", at=utcnow(), file=info))
        return info

    # --- the port --------------------------------------------------------------------------

    async def redeem_login(self, token: str) -> WebSession | None:
        found = self._logins.get(token)
        if found is None:
            return None
        user_id, expires_at, used = found
        if used or expires_at <= utcnow():
            return None
        self._logins[token] = (user_id, expires_at, True)
        return self.sign_in(user_id)

    async def session(self, token: str) -> WebSession | None:
        session = self._sessions.get(token)
        if session is None or session.expires_at <= utcnow():
            return None
        return session

    async def end_session(self, token: str) -> None:
        self._sessions.pop(token, None)

    async def conversations(self, person: WebPerson) -> list[WebConversationInfo]:
        return list(self.conversations_of.get(person.user_id, []))

    def _own(self, person: WebPerson, conversation_id: str) -> WebConversationInfo | None:
        return next((c for c in self.conversations_of.get(person.user_id, [])
                     if c.id == conversation_id), None)

    async def transcript(self, person: WebPerson,
                         conversation_id: str) -> WebTranscript | None:
        conv = self._own(person, conversation_id)
        return None if conv is None else WebTranscript(conv, tuple(self.entries[conv.id]))

    async def web_transcript(self, person: WebPerson) -> WebTranscript | None:
        conv = next((c for c in self.conversations_of.get(person.user_id, [])
                     if c.platform == "web" and c.is_active), None)
        return None if conv is None else WebTranscript(conv, tuple(self.entries[conv.id]))

    async def search(self, person: WebPerson, text: str) -> list[WebConversationInfo]:
        needle = text.strip().lower()
        return [c for c in self.conversations_of.get(person.user_id, [])
                if needle and (needle in c.title.lower()
                               or any(needle in e.text.lower() for e in self.entries[c.id]))]

    async def rename(self, person: WebPerson, conversation_id: str,
                     title: str) -> WebConversationInfo | None:
        conv = self._own(person, conversation_id)
        if conv is None:
            return None
        renamed = replace(conv, title=title.strip()[:120])
        convs = self.conversations_of[person.user_id]
        convs[convs.index(conv)] = renamed
        return renamed

    async def delete(self, person: WebPerson,
                     conversation_id: str) -> WebConversationInfo | None:
        conv = self._own(person, conversation_id)
        if conv is None:
            return None
        self.conversations_of[person.user_id].remove(conv)
        del self.entries[conv.id]
        files = self.files_of[person.user_id]
        for file_id in [k for k, f in files.items() if f.info.conversation_id == conv.id]:
            del files[file_id]
        for token in [t for t, c in self._shares.items() if c == conv.id]:
            del self._shares[token]
        return conv

    async def coverage(self, lang: str) -> str:
        return self.coverage_md.get(lang, self.coverage_md.get("en", ""))

    async def files(self, person: WebPerson) -> list[WebFileInfo]:
        return [f.info for f in self.files_of.get(person.user_id, {}).values()]

    async def file(self, person: WebPerson, file_id: str) -> WebFileData | None:
        return self.files_of.get(person.user_id, {}).get(file_id)

    async def share(self, person: WebPerson, conversation_id: str) -> str | None:
        if self._own(person, conversation_id) is None:
            return None
        for token, conv_id in self._shares.items():
            if conv_id == conversation_id:
                return token
        token = secrets.token_urlsafe(24)
        self._shares[token] = conversation_id
        return token

    async def unshare(self, person: WebPerson, conversation_id: str) -> bool:
        if self._own(person, conversation_id) is None:
            return False
        tokens = [t for t, c in self._shares.items() if c == conversation_id]
        for token in tokens:
            del self._shares[token]
        return bool(tokens)

    async def shared(self, share_token: str) -> WebTranscript | None:
        conv_id = self._shares.get(share_token)
        if conv_id is None:
            return None
        conv = next(c for convs in self.conversations_of.values() for c in convs
                    if c.id == conv_id)
        return WebTranscript(conv, tuple(self.entries[conv_id]))

    async def shared_file(self, share_token: str, file_id: str) -> WebFileData | None:
        conv_id = self._shares.get(share_token)
        if conv_id is None:
            return None
        for files in self.files_of.values():
            found = files.get(file_id)
            if found is not None and found.info.conversation_id == conv_id:
                return found
        return None

    async def admin_status(self) -> str | None:
        return self.console_off

    def _console_on(self) -> None:
        if self.console_off is not None:
            raise ConsoleOff(self.console_off)

    async def admin_dashboard(self, days: int) -> WebDashboard:
        return self.dashboard

    async def admin_tables(self) -> list[tuple[str, int]]:
        self._console_on()
        return [(name, t.total if t.total is not None else len(t.rows))
                for name, t in sorted(self.tables.items())]

    async def admin_rows(self, table: str, *, page: int, page_size: int) -> WebTable | None:
        self._console_on()
        found = self.tables.get(table)
        if found is None:
            return None
        rows = found.rows[(page - 1) * page_size: page * page_size]
        return WebTable(columns=found.columns, rows=rows, total=len(found.rows))

    async def admin_query(self, sql: str) -> WebTable:
        self._console_on()
        verb = sql.strip().split(None, 1)[0].upper() if sql.strip() else ""
        if verb not in ("SELECT", "WITH", "SHOW", "EXPLAIN", "VALUES", "TABLE"):
            raise QueryRefused(f"cannot execute {verb} in a read-only transaction")
        found = self.queries.get(sql.strip())
        if found is None:
            raise QueryRefused(f'syntax error at or near "{verb.lower()}"')
        return found
