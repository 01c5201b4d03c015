"""Conversations (one active per chat) and the messages said in them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from uuid import UUID

import asyncpg

from core.types import ChatMessage, ChatRef, ToolCall


@dataclass(frozen=True)
class Conversation:
    id: UUID
    user_id: UUID | None
    chat_key: str
    mode: str
    title: str
    summary: str
    summary_up_to: int
    token_used: int
    token_budget: int | None


@dataclass(frozen=True)
class StoredMessage:
    id: int
    message: ChatMessage


def _conv(row: asyncpg.Record) -> Conversation:
    return Conversation(
        id=UUID(str(row["id"])), user_id=UUID(str(row["user_id"])) if row["user_id"] else None,
        chat_key=f"{row['platform']}:{row['chat_id']}:{row['thread_id']}", mode=row["mode"],
        title=row["title"], summary=row["summary"], summary_up_to=row["summary_up_to"],
        token_used=row["token_used"], token_budget=row["token_budget"],
    )


class ConversationsRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def active(self, chat: ChatRef, user_id: UUID | None) -> Conversation:
        """The chat's active conversation, created on first use (race-safe)."""
        thread = chat.thread_id or ""
        row = await self._pool.fetchrow(
            "SELECT * FROM conversations WHERE platform=$1 AND chat_id=$2 AND thread_id=$3"
            " AND is_active", chat.platform, chat.chat_id, thread)
        if row is None:
            row = await self._pool.fetchrow(
                "INSERT INTO conversations (user_id, platform, chat_id, thread_id)"
                " VALUES ($1,$2,$3,$4) ON CONFLICT (platform, chat_id, thread_id)"
                " WHERE is_active DO UPDATE SET updated_at=now() RETURNING *",
                user_id, chat.platform, chat.chat_id, thread)
        assert row is not None
        return _conv(row)

    async def get(self, conversation_id: UUID) -> Conversation:
        row = await self._pool.fetchrow("SELECT * FROM conversations WHERE id=$1",
                                        conversation_id)
        assert row is not None, f"no conversation {conversation_id}"
        return _conv(row)

    async def start_new(self, chat: ChatRef, user_id: UUID | None) -> Conversation:
        """Retire the chat's conversation; the new one keeps its mode."""
        thread = chat.thread_id or ""
        async with self._pool.acquire() as conn, conn.transaction():
            mode = await conn.fetchval(
                "UPDATE conversations SET is_active=false, updated_at=now()"
                " WHERE platform=$1 AND chat_id=$2 AND thread_id=$3 AND is_active"
                " RETURNING mode", chat.platform, chat.chat_id, thread)
            row = await conn.fetchrow(
                "INSERT INTO conversations (user_id, platform, chat_id, thread_id, mode)"
                " VALUES ($1,$2,$3,$4,$5) RETURNING *",
                user_id, chat.platform, chat.chat_id, thread, mode or "normal")
        assert row is not None
        return _conv(row)

    async def set_mode(self, conversation_id: UUID, mode: str) -> None:
        await self._pool.execute(
            "UPDATE conversations SET mode=$2, updated_at=now() WHERE id=$1",
            conversation_id, mode)

    async def set_title(self, conversation_id: UUID, title: str) -> None:
        await self._pool.execute(
            "UPDATE conversations SET title=$2 WHERE id=$1 AND title=''", conversation_id,
            title[:120])

    async def add_tokens(self, conversation_id: UUID, tokens: int) -> None:
        await self._pool.execute(
            "UPDATE conversations SET token_used = token_used + $2, updated_at=now()"
            " WHERE id=$1", conversation_id, tokens)

    async def set_summary(self, conversation_id: UUID, summary: str, up_to: int) -> None:
        await self._pool.execute(
            "UPDATE conversations SET summary=$2, summary_up_to=$3 WHERE id=$1",
            conversation_id, summary, up_to)

    async def add_message(
        self, conversation_id: UUID, message: ChatMessage, *,
        platform_message_id: str | None = None,
    ) -> int:
        calls = ([c.model_dump() for c in message.tool_calls] if message.tool_calls else None)
        return int(await self._pool.fetchval(
            "INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id,"
            " platform_message_id) VALUES ($1,$2,$3,$4,$5,$6) RETURNING id",
            conversation_id, message.role, message.content, calls, message.tool_call_id,
            platform_message_id))

    async def add_reply_refs(self, message_id: int, refs: list[str]) -> None:
        await self._pool.execute(
            "UPDATE messages SET reply_message_ids = reply_message_ids || $2 WHERE id=$1",
            message_id, refs)

    async def count_messages(self, conversation_id: UUID, *, after_id: int = 0) -> int:
        return int(await self._pool.fetchval(
            "SELECT count(*) FROM messages WHERE conversation_id=$1 AND id > $2",
            conversation_id, after_id))

    async def messages(
        self, conversation_id: UUID, *, after_id: int = 0, limit: int | None = None,
        before_id: int | None = None,
    ) -> list[StoredMessage]:
        """Messages in order; with `limit`, the last `limit` of them."""
        rows = await self._pool.fetch(
            "SELECT * FROM (SELECT id, role, content, tool_calls, tool_call_id FROM messages"
            " WHERE conversation_id=$1 AND id > $2 AND ($3::bigint IS NULL OR id < $3)"
            " ORDER BY id DESC LIMIT $4) m ORDER BY id",
            conversation_id, after_id, before_id, limit)
        out = []
        for r in rows:
            calls = r["tool_calls"] or []
            if isinstance(calls, str):
                calls = json.loads(calls)
            out.append(StoredMessage(int(r["id"]), ChatMessage(
                role=r["role"], content=r["content"],
                tool_calls=[ToolCall(**c) for c in calls], tool_call_id=r["tool_call_id"])))
        return out
