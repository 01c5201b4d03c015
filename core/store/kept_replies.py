"""Replies a platform refused for now, kept per (adapter, recipient) until delivered: the
Postgres `core.ports.KeptReplies`, so a restart loses none of them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

from core.errors import StoreError
from core.ports import KeptReply
from core.types import OutgoingFile

# The reply and the trimming to `limit` in one round trip. Both sub-statements see the snapshot
# from before the insert, so the DELETE skips the newest `limit - 1` existing rows: with the new
# one, `limit` remain.
_KEEP = """
WITH ins AS (
    INSERT INTO kept_replies (adapter, recipient, kind, body, filename, mime_type, data)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    RETURNING id
), gone AS (
    DELETE FROM kept_replies WHERE id IN (
        SELECT id FROM kept_replies WHERE adapter = $1 AND recipient = $2
        ORDER BY id DESC OFFSET $8::int - 1)
    RETURNING id
)
SELECT (SELECT id FROM ins) AS id, (SELECT count(*) FROM gone) AS dropped
"""


@asynccontextmanager
async def _store_errors(what: str) -> AsyncIterator[None]:
    """asyncpg's failures as `StoreError`: the callers are adapters, across a package line."""
    try:
        yield
    except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError) as exc:
        raise StoreError(f"kept replies: {what} failed: {type(exc).__name__}") from exc


class KeptRepliesRepo:
    """`core.ports.KeptReplies` on the `kept_replies` table (migration 0005)."""

    durable = True

    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def keep(self, key: str, recipient: str, reply: KeptReply, *, limit: int) -> int:
        if limit < 1:
            raise ValueError("the limit of kept replies must be at least 1")
        file = reply.file
        async with _store_errors("keep"):
            row = await self._pool.fetchrow(
                _KEEP, key, recipient, file.kind if file else "text", reply.text,
                file.filename if file else None, file.mime_type if file else None,
                file.data if file else None, limit)
        assert row is not None
        return int(row["dropped"])

    async def peek(self, key: str, recipient: str) -> KeptReply | None:
        async with _store_errors("peek"):
            row = await self._pool.fetchrow(
                "SELECT id, kind, body, filename, mime_type, data, created_at FROM kept_replies"
                " WHERE adapter = $1 AND recipient = $2 ORDER BY id LIMIT 1", key, recipient)
        if row is None:
            return None
        file = None
        if row["kind"] != "text":
            file = OutgoingFile(kind=row["kind"], filename=row["filename"] or "file",
                                data=bytes(row["data"]),
                                mime_type=row["mime_type"] or "application/octet-stream")
        return KeptReply(text=row["body"], file=file, id=int(row["id"]),
                         kept_at=row["created_at"])

    async def remove(self, key: str, recipient: str, reply_id: int) -> None:
        async with _store_errors("remove"):
            await self._pool.execute(
                "DELETE FROM kept_replies WHERE id = $3 AND adapter = $1 AND recipient = $2",
                key, recipient, reply_id)

    async def clear(self, key: str, recipient: str) -> int:
        async with _store_errors("clear"):
            gone = await self._pool.fetchval(
                "WITH gone AS (DELETE FROM kept_replies WHERE adapter = $1 AND recipient = $2"
                " RETURNING 1) SELECT count(*) FROM gone", key, recipient)
        return int(gone)

    async def recipients(self, key: str) -> set[str]:
        async with _store_errors("recipients"):
            rows = await self._pool.fetch(
                "SELECT DISTINCT recipient FROM kept_replies WHERE adapter = $1", key)
        return {str(r["recipient"]) for r in rows}
