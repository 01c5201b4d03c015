"""The inbound log: every platform update is recorded first, and only once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

import asyncpg

from core.store.conversations import Conversation, conversation_from
from core.store.group_commit import GroupCommit


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


# The dedupe inserts, each sender's user and chosen language, and each chat's active
# conversation, for a batch of updates in one statement (the hot path of every message, group
# committed across chats: `GroupCommit`, at most one update per chat in a batch). The reads
# are harmless for duplicates and ignored updates.
_RECORD_FOR_SENDERS = """
WITH x AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::jsonb[],
                         $6::text[], $7::jsonb[], $8::text[])
         WITH ORDINALITY AS x(platform, chat_id, message_id, sender_uid, payload, thread_id,
                              message, owner, ord)
), ins AS (
    INSERT INTO inbound_events (platform, chat_id, message_id, sender_uid, payload, message,
                                owner)
    SELECT platform, chat_id, message_id, sender_uid, payload, message, owner FROM x
    ORDER BY ord
    ON CONFLICT (platform, chat_id, message_id) DO NOTHING
    RETURNING id, platform, chat_id, message_id
), prev AS (  -- a duplicate: the row as it was (the inserts' own rows are not visible here)
    SELECT e.platform, e.chat_id, e.message_id, e.status, e.owner,
           extract(epoch FROM now() - e.updated_at)::float8 AS quiet_s
    FROM inbound_events e JOIN x USING (platform, chat_id, message_id)
), released AS (  -- the chat wrote again: deliveries held for it (WeChat's window) are due now
    UPDATE deliveries d SET status = 'pending', next_attempt_at = now(),
                            deadline = greatest(d.deadline, now() + interval '1 hour')
    WHERE d.status = 'held' AND (d.platform, d.chat_id) IN (SELECT platform, chat_id FROM ins)
    RETURNING d.platform, d.chat_id
)
SELECT x.ord, ins.id AS inbound_id, pa.user_id AS sender_user_id, u.lang, c.*,
       (SELECT count(*) FROM released r
         WHERE r.platform = x.platform AND r.chat_id = x.chat_id) AS released,
       (SELECT coalesce(array_agg(s.id ORDER BY s.id), '{}') FROM subscriptions s
         WHERE s.owner_id = pa.user_id AND s.status = 'paused' AND s.paused_reason <> ''
       ) AS paused_subscriptions,
       (SELECT ROW(p.status, p.owner, p.quiet_s) FROM prev p
         WHERE p.platform = x.platform AND p.chat_id = x.chat_id
           AND p.message_id = x.message_id) AS previous
FROM x
LEFT JOIN ins ON ins.platform = x.platform AND ins.chat_id = x.chat_id
             AND ins.message_id = x.message_id
LEFT JOIN platform_accounts pa ON pa.platform = x.platform AND pa.platform_uid = x.sender_uid
LEFT JOIN users u ON u.id = pa.user_id
LEFT JOIN conversations c
       ON c.platform = x.platform AND c.chat_id = x.chat_id AND c.thread_id = x.thread_id
      AND c.is_active
ORDER BY x.ord
"""

# The state marks of many messages in one statement (see `InboundRepo.mark_many`).
_MARK_MANY = """
UPDATE inbound_events e SET status = x.status, updated_at = now(),
       user_id = coalesce(x.user_id, e.user_id), lang = coalesce(x.lang, e.lang),
       placeholder = coalesce(x.placeholder, e.placeholder),
       error = coalesce(x.error, e.error)
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::uuid[], $6::text[],
            $7::text[], $8::text[]) AS x(platform, chat_id, message_id, status,
                                         user_id, lang, placeholder, error)
WHERE e.platform = x.platform AND e.chat_id = x.chat_id
  AND e.message_id = x.message_id
"""

MarkKey = tuple[str, str, str]  # (platform, chat_id, message_id)
Marks = dict[MarkKey, dict[str, Any]]


@dataclass(frozen=True)
class _Record:
    platform: str
    chat_id: str
    message_id: str
    sender_uid: str
    payload: dict[str, Any]
    thread_id: str
    message: dict[str, Any] | None
    owner: str | None


def _inbound_of(row: asyncpg.Record) -> Inbound:
    user = row["sender_user_id"]
    return Inbound(new=row["inbound_id"] is not None,
                   user_id=UUID(str(user)) if user is not None else None,
                   lang=row["lang"] if user is not None else None,
                   conversation=conversation_from(row) if row["id"] is not None else None,
                   held=int(row["released"]),
                   paused_subscriptions=tuple(row["paused_subscriptions"] or ()),
                   previous=tuple(row["previous"]) if row["previous"] else None,
                   id=row["inbound_id"])


def merge_marks(batches: list[Marks]) -> Marks:
    """Marks given in this order as one: per message the last status, and each field the last
    value given (a field not given keeps what came before), as writing them one after the
    other would leave it."""
    merged: Marks = {}
    for marks in batches:
        for key, fields in marks.items():
            row = merged.setdefault(key, {})
            row.update({k: v for k, v in fields.items() if v is not None})
            row["status"] = fields["status"]
    return merged


class InboundRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool
        # one message per chat in a batch: the per-chat reads (held deliveries released, the
        # active conversation) see the batch as they would see each update alone
        self.records: GroupCommit[_Record, Inbound] = GroupCommit(
            self._record_many, name="inbound-record",
            keys=lambda r: ((r.platform, r.chat_id),))
        # a message's marks in the order given (never two batches at once for one message)
        self.marks: GroupCommit[Marks, None] = GroupCommit(self._mark_batches,
                                                           name="inbound-marks", keys=dict.keys)

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
        return await self.records.submit(_Record(
            platform, chat_id, message_id, sender_uid, payload or {}, thread_id or "",
            message, owner))

    async def _record_many(self, records: list[_Record]) -> list[Inbound]:
        rows = await self._pool.fetch(
            _RECORD_FOR_SENDERS, [r.platform for r in records], [r.chat_id for r in records],
            [r.message_id for r in records], [r.sender_uid for r in records],
            [r.payload for r in records], [r.thread_id for r in records],
            [r.message for r in records], [r.owner for r in records])
        return [_inbound_of(row) for row in rows]

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
        """Record a message's state (and the fields given); group committed with the marks of
        other messages (`mark_many`): returns once written."""
        await self.marks.submit({(platform, chat_id, message_id): {
            "status": status, "user_id": user_id, "lang": lang, "placeholder": placeholder,
            "error": error}})

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
        if marks:
            await self.marks.submit(marks)

    async def _mark_batches(self, batches: list[Marks]) -> list[None]:
        marks = merge_marks(batches)
        keys = list(marks)
        rows = [marks[k] for k in keys]
        await self._pool.execute(
            _MARK_MANY, [k[0] for k in keys], [k[1] for k in keys], [k[2] for k in keys],
            [r["status"] for r in rows], [r.get("user_id") for r in rows],
            [r.get("lang") for r in rows], [r.get("placeholder") for r in rows],
            [r.get("error") for r in rows])
        return [None] * len(batches)

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
