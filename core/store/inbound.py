"""The inbound log: every platform update is recorded first, and only once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg

from core.store.conversations import Conversation, conversation_from


@dataclass(frozen=True)
class Inbound:
    """An update recorded by `InboundRepo.record_for_sender`, with its sender's user when the
    account is known (None on first sight: create it with `AccountsRepo.user_and_lang`) and
    the chat's active conversation as it was read (None when the chat has none yet)."""

    new: bool
    user_id: UUID | None
    lang: str | None
    conversation: Conversation | None = None
    held: int = 0  # deliveries held for this chat that are due again now
    # the sender's subscriptions paused since they last wrote (the bot lost a chat): to tell
    paused_subscriptions: tuple[int, ...] = ()
    # a duplicate: the recorded message's state, owner and seconds since its owner last beat
    previous: tuple[str, str | None, float] | None = None
    id: int | None = None  # the inbound row's id when new: what its run's rows are stored with


# The dedupe insert, the sender's user and chosen language, and the chat's active conversation,
# in one round trip (the hot path of every message; the reads are harmless for duplicates and
# ignored updates).
_RECORD_FOR_SENDER = """
WITH ins AS (
    INSERT INTO inbound_events (platform, chat_id, message_id, sender_uid, payload, message,
                                owner)
    VALUES ($1, $2, $3, $4, $5, $7, $8) ON CONFLICT (platform, chat_id, message_id) DO NOTHING
    RETURNING id
), prev AS (  -- a duplicate: the row as it was (the insert's own row is not visible here)
    SELECT status, owner, extract(epoch FROM now() - updated_at)::float8 AS quiet_s
    FROM inbound_events WHERE platform = $1 AND chat_id = $2 AND message_id = $3
), released AS (  -- the chat wrote again: deliveries held for it (WeChat's window) are due now
    UPDATE deliveries SET status = 'pending', next_attempt_at = now(),
                          deadline = greatest(deadline, now() + interval '1 hour')
    WHERE status = 'held' AND platform = $1 AND chat_id = $2 AND EXISTS (SELECT 1 FROM ins)
    RETURNING id
)
SELECT (SELECT id FROM ins) AS inbound_id, pa.user_id AS sender_user_id, u.lang, c.*,
       (SELECT count(*) FROM released) AS released,
       (SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') FROM subscriptions s
         WHERE s.owner_id = pa.user_id AND s.status = 'paused' AND s.paused_reason <> ''
       ) AS paused_subscriptions,
       (SELECT ROW(status, owner, quiet_s) FROM prev) AS previous
FROM (SELECT 1) AS one
LEFT JOIN platform_accounts pa ON pa.platform = $1 AND pa.platform_uid = $4
LEFT JOIN users u ON u.id = pa.user_id
LEFT JOIN conversations c
       ON c.platform = $1 AND c.chat_id = $2 AND c.thread_id = $6 AND c.is_active
"""


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

    async def record_for_sender(
        self, *, platform: str, chat_id: str, message_id: str, sender_uid: str = "",
        payload: dict[str, Any] | None = None, thread_id: str | None = None,
        message: dict[str, Any] | None = None, owner: str | None = None,
    ) -> Inbound:
        """`record`, the user behind `sender_uid` on `platform` with their language, and the
        active conversation of the chat (`chat_id`, `thread_id`). `message` (the whole
        IncomingMessage) and `owner` (the serve process) let a crash's survivor answer it."""
        row = await self._pool.fetchrow(
            _RECORD_FOR_SENDER, platform, chat_id, message_id, sender_uid, payload or {},
            thread_id or "", message, owner)
        assert row is not None
        user = row["sender_user_id"]
        return Inbound(new=row["inbound_id"] is not None,
                       user_id=UUID(str(user)) if user is not None else None,
                       lang=row["lang"] if user is not None else None,
                       conversation=conversation_from(row) if row["id"] is not None else None,
                       held=int(row["released"]),
                       paused_subscriptions=tuple(row["paused_subscriptions"] or ()),
                       previous=tuple(row["previous"]) if row["previous"] else None,
                       id=row["inbound_id"])

    async def set_status(self, *, platform: str, chat_id: str, message_id: str,
                         status: str) -> None:
        await self._pool.execute(
            "UPDATE inbound_events SET status=$4 WHERE platform=$1 AND chat_id=$2"
            " AND message_id=$3", platform, chat_id, message_id, status)

    async def count(self, *, platform: str, chat_id: str, message_id: str) -> int:
        return int(await self._pool.fetchval(
            "SELECT count(*) FROM inbound_events WHERE platform=$1 AND chat_id=$2"
            " AND message_id=$3", platform, chat_id, message_id))

    # --- states: received -> running -> answered | failed | ignored -------------------------

    async def mark(self, *, platform: str, chat_id: str, message_id: str, status: str,
                   user_id: Any = None, lang: str | None = None,
                   placeholder: str | None = None, error: str | None = None) -> None:
        await self._pool.execute(
            "UPDATE inbound_events SET status = $4, updated_at = now(),"
            " user_id = coalesce($5, user_id), lang = coalesce($6, lang),"
            " placeholder = coalesce($7, placeholder), error = coalesce($8, error)"
            " WHERE platform = $1 AND chat_id = $2 AND message_id = $3",
            platform, chat_id, message_id, status, user_id, lang, placeholder, error)

    async def placeholder(self, inbound_id: int, placeholder: str) -> None:
        """Record the bot's placeholder for a message at once, on its own (not batched with
        the states): until it is written, a crash leaves a placeholder nobody can replace."""
        await self._pool.execute(
            "UPDATE inbound_events SET placeholder = $2, updated_at = now() WHERE id = $1",
            inbound_id, placeholder)

    async def mark_many(self, marks: dict[tuple[str, str, str], dict[str, Any]]) -> None:
        """`mark` for many messages in one statement: (platform, chat_id, message_id) ->
        {"status": ..., and optionally "user_id", "lang", "placeholder", "error"} (one entry
        each)."""
        if not marks:
            return
        keys = list(marks)
        rows = [marks[k] for k in keys]
        await self._pool.execute(
            """
            UPDATE inbound_events e SET status = x.status, updated_at = now(),
                   user_id = coalesce(x.user_id, e.user_id), lang = coalesce(x.lang, e.lang),
                   placeholder = coalesce(x.placeholder, e.placeholder),
                   error = coalesce(x.error, e.error)
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::text[],
                        $7::text[], $8::text[]) AS x(platform, chat_id, message_id, status,
                                                     user_id, lang, placeholder, error)
            WHERE e.platform = x.platform AND e.chat_id = x.chat_id
              AND e.message_id = x.message_id
            """,
            [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys],
            [r["status"] for r in rows], [r.get("user_id") for r in rows],
            [r.get("lang") for r in rows], [r.get("placeholder") for r in rows],
            [r.get("error") for r in rows])

    async def heartbeat(self, owner: str) -> None:
        """This process is alive: the messages it is answering are not anyone else's."""
        await self._pool.execute(
            "UPDATE inbound_events SET updated_at = now()"
            " WHERE owner = $1 AND status IN ('received', 'running')", owner)

    async def claim(self, *, owner: str, platform: str, chat_id: str, message_id: str,
                    stale_s: float) -> dict[str, Any] | None:
        """One message still received or running, taken over by `owner` when it has it
        already or its owner went quiet for `stale_s` (a redelivery of a message nobody is
        answering); its saved fields, or None when someone else is on it."""
        row = await self._pool.fetchrow(
            """
            UPDATE inbound_events SET owner = $1, updated_at = now()
            WHERE platform = $2 AND chat_id = $3 AND message_id = $4
              AND status IN ('received', 'running') AND message IS NOT NULL
              AND (owner IS NOT DISTINCT FROM $1
                   OR updated_at < now() - make_interval(secs => $5))
            RETURNING id, platform, chat_id, message_id, message, user_id, lang, placeholder,
                      received_at, status
            """, owner, platform, chat_id, message_id, stale_s)
        return dict(row) if row is not None else None

    async def claim_unanswered(self, *, owner: str, platforms: list[str], stale_s: float,
                               limit: int = 50) -> list[dict[str, Any]]:
        """Messages left received or running by a process that stopped beating for
        `stale_s`, taken over by `owner` (oldest first)."""
        rows = await self._pool.fetch(
            """
            UPDATE inbound_events SET owner = $1, updated_at = now()
            WHERE id IN (
                SELECT id FROM inbound_events
                WHERE status IN ('received', 'running') AND message IS NOT NULL
                  AND platform = ANY($2::text[]) AND owner IS DISTINCT FROM $1
                  AND updated_at < now() - make_interval(secs => $3)
                ORDER BY id LIMIT $4 FOR UPDATE SKIP LOCKED)
            RETURNING id, platform, chat_id, message_id, message, user_id, lang, placeholder,
                      received_at, status
            """, owner, platforms, stale_s, limit)
        return [dict(r) for r in rows]
