"""The inbound log: every platform update is recorded first, and only once."""

from __future__ import annotations

from typing import Any

import asyncpg


class InboundRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def record(
        self, *, platform: str, chat_id: str, message_id: str, sender_uid: str = "",
        payload: dict[str, Any] | None = None,
    ) -> bool:
        """True when this update is new; False for a platform retry or duplicate delivery."""
        got = await self._pool.fetchval(
            "INSERT INTO inbound_events (platform, chat_id, message_id, sender_uid, payload)"
            " VALUES ($1,$2,$3,$4,$5) ON CONFLICT (platform, chat_id, message_id) DO NOTHING"
            " RETURNING id", platform, chat_id, message_id, sender_uid, payload or {})
        return got is not None

    async def set_status(self, *, platform: str, chat_id: str, message_id: str,
                         status: str) -> None:
        await self._pool.execute(
            "UPDATE inbound_events SET status=$4 WHERE platform=$1 AND chat_id=$2"
            " AND message_id=$3", platform, chat_id, message_id, status)

    async def count(self, *, platform: str, chat_id: str, message_id: str) -> int:
        return int(await self._pool.fetchval(
            "SELECT count(*) FROM inbound_events WHERE platform=$1 AND chat_id=$2"
            " AND message_id=$3", platform, chat_id, message_id))
