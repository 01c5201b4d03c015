"""The outbox's table: deliveries stored before they are sent, claimed with a lease, resumed.

A delivery's items are JSON (texts as Markdown, files by the sha256 of their bytes in
`outbox_blobs`, stored once however many deliveries share a chart). Senders `claim` due rows
with `FOR UPDATE SKIP LOCKED` and a lease: two processes never send the same row at once, and a
crashed sender's rows are taken again when the lease runs out. `pieces_sent` is written after
each piece, so a delivery resumed after a crash starts where it stopped.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import asyncpg

from core.ports import DeliveryRequest, DeliveryStatus, OutItem, Receipt
from core.types import ChatRef, OutgoingFile, Reply, utcnow

CHANNEL = "bullpen_outbox"  # NOTIFY'd with the delivery id when one is stored or released


@dataclass(frozen=True)
class Delivery:
    id: int
    key: str
    chat: ChatRef
    items: list[OutItem]
    status: DeliveryStatus
    pieces_sent: int
    message_ids: list[str]
    attempts: int
    last_error: str
    deadline: datetime
    created_at: datetime
    delivered_at: datetime | None
    source: str
    subscription_id: int | None

    def receipt(self, *, created: bool = True) -> Receipt:
        return Receipt(key=self.key, status=self.status, message_ids=tuple(self.message_ids),
                       attempts=self.attempts, last_error=self.last_error,
                       delivered_at=self.delivered_at, created=created)


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _item_json(item: OutItem) -> dict[str, Any]:
    if isinstance(item, Reply):
        return {"type": "text", **item.model_dump(mode="json")}
    meta = item.model_dump(mode="json", exclude={"data"})
    return {"type": "file", **meta, "blob": _sha(item.data)}


class DeliveriesRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def create(self, *, key: str, chat: ChatRef, items: list[OutItem],
                     deadline: datetime, source: str = "", subscription_id: int | None = None,
                     status: DeliveryStatus = "pending") -> tuple[Delivery, bool]:
        """Store a delivery (its file bytes first); `(delivery, created)`: an existing key is
        returned as it stands, nothing is stored twice."""
        blobs = [(_sha(i.data), i.data) for i in items if isinstance(i, OutgoingFile)]
        async with self._pool.acquire() as conn, conn.transaction():
            if blobs:
                await conn.executemany(
                    "INSERT INTO outbox_blobs (sha256, data) VALUES ($1, $2)"
                    " ON CONFLICT (sha256) DO NOTHING", blobs)
            row = await conn.fetchrow(
                "INSERT INTO deliveries (key, platform, chat_id, chat, items, source,"
                " subscription_id, deadline, status) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"
                " ON CONFLICT (key) DO NOTHING RETURNING *",
                key, chat.platform, chat.chat_id, chat.model_dump(mode="json"),
                [_item_json(i) for i in items], source, subscription_id, deadline, status)
            created = row is not None
            if row is None:
                row = await conn.fetchrow("SELECT * FROM deliveries WHERE key = $1", key)
            else:
                await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, str(row["id"]))
            assert row is not None
            return await self._from_row(conn, row), created

    async def create_many(self, requests: Sequence[DeliveryRequest], *, deadline: datetime,
                          status: DeliveryStatus = "pending") -> list[Receipt]:
        """Many deliveries in one transaction and three statements whatever their number (the
        file bytes once, the rows, one NOTIFY); a key stored before is left as it stands and
        comes back with `created=False`. Receipts in the given order."""
        if not requests:
            return []
        blobs = {_sha(i.data): i.data for r in requests for i in r.items
                 if isinstance(i, OutgoingFile)}
        keys = [r.key for r in requests]
        # JSON as text: a list of lists would be taken for a 2-D array. The items of a fan-out
        # are one list shared by its requests: encoded once per list, not per request.
        encoded: dict[int, str] = {}
        for r in requests:
            if id(r.items) not in encoded:
                encoded[id(r.items)] = json.dumps([_item_json(i) for i in r.items])
        async with self._pool.acquire() as conn, conn.transaction():
            if blobs:
                await conn.executemany(
                    "INSERT INTO outbox_blobs (sha256, data) VALUES ($1, $2)"
                    " ON CONFLICT (sha256) DO NOTHING", list(blobs.items()))
            rows = await conn.fetch(
                "INSERT INTO deliveries (key, platform, chat_id, chat, items, source,"
                " subscription_id, deadline, status)"
                " SELECT k, p, c, ch::jsonb, it::jsonb, so, sub, $8, $9 FROM unnest($1::text[],"
                " $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::bigint[])"
                " AS t(k, p, c, ch, it, so, sub)"
                " ON CONFLICT (key) DO NOTHING RETURNING key",
                keys, [r.chat.platform for r in requests], [r.chat.chat_id for r in requests],
                [json.dumps(r.chat.model_dump(mode="json")) for r in requests],
                [encoded[id(r.items)] for r in requests],
                [r.source for r in requests], [r.subscription_id for r in requests],
                deadline, status)
            created = {r["key"] for r in rows}
            before: dict[str, asyncpg.Record] = {}
            if len(created) < len(set(keys)):
                before = {r["key"]: r for r in await conn.fetch(
                    "SELECT key, status, message_ids, attempts, last_error, delivered_at"
                    " FROM deliveries WHERE key = ANY($1::text[])",
                    [k for k in keys if k not in created])}
            if created:
                await conn.execute("SELECT pg_notify($1, 'batch')", CHANNEL)
        out: list[Receipt] = []
        for key in keys:
            old = before.get(key)
            if old is None:
                out.append(Receipt(key=key, status=status))
                continue
            out.append(Receipt(key=key, status=old["status"],
                               message_ids=tuple(old["message_ids"]), attempts=old["attempts"],
                               last_error=old["last_error"], delivered_at=old["delivered_at"],
                               created=False))
        return out

    async def _from_row(self, conn: asyncpg.Connection | asyncpg.Pool,
                        row: asyncpg.Record) -> Delivery:
        items: list[OutItem] = []
        raw_items = row["items"]
        shas = [i["blob"] for i in raw_items if i.get("type") == "file"]
        data: dict[str, bytes] = {}
        if shas:
            for b in await conn.fetch(
                    "SELECT sha256, data FROM outbox_blobs WHERE sha256 = ANY($1::text[])", shas):
                data[b["sha256"]] = bytes(b["data"])
        for raw in raw_items:
            fields = {k: v for k, v in raw.items() if k not in ("type", "blob")}
            if raw.get("type") == "file":
                items.append(OutgoingFile(**fields, data=data.get(raw["blob"], b"")))
            else:
                items.append(Reply(**fields))
        return Delivery(
            id=row["id"], key=row["key"], chat=ChatRef(**row["chat"]), items=items,
            status=row["status"], pieces_sent=row["pieces_sent"],
            message_ids=list(row["message_ids"]), attempts=row["attempts"],
            last_error=row["last_error"], deadline=row["deadline"],
            created_at=row["created_at"], delivered_at=row["delivered_at"],
            source=row["source"], subscription_id=row["subscription_id"])

    async def by_key(self, key: str) -> Delivery | None:
        row = await self._pool.fetchrow("SELECT * FROM deliveries WHERE key = $1", key)
        return await self._from_row(self._pool, row) if row is not None else None

    async def claim(self, *, platforms: list[str], limit: int = 16,
                    lease_s: float = 60.0, chat_id: str | None = None) -> list[Delivery]:
        """Due pending deliveries for these platforms (one chat's with `chat_id`), leased to
        the caller for `lease_s`."""
        rows = await self._pool.fetch(
            """
            UPDATE deliveries SET lease_until = now() + make_interval(secs => $3),
                                  attempts = attempts + 1
            WHERE id IN (
                SELECT id FROM deliveries
                WHERE status = 'pending' AND next_attempt_at <= now()
                  AND (lease_until IS NULL OR lease_until < now())
                  AND platform = ANY($1::text[])
                  AND ($4::text IS NULL OR chat_id = $4)
                ORDER BY next_attempt_at, id LIMIT $2
                FOR UPDATE SKIP LOCKED)
            RETURNING *
            """, platforms, limit, lease_s, chat_id)
        return [await self._from_row(self._pool, r) for r in rows]

    async def waiting(self, platform: str, chat_id: str) -> int:
        """Deliveries for the chat not delivered yet (held or pending)."""
        return int(await self._pool.fetchval(
            "SELECT count(*) FROM deliveries WHERE platform = $1 AND chat_id = $2"
            " AND status IN ('pending', 'held')", platform, chat_id))

    async def renew(self, delivery_id: int, attempts: int, *, lease_s: float) -> bool:
        """Extend the caller's lease; False when it is no longer the caller's (it ran out and
        another sender claimed the delivery: `attempts` moved on), so it must not send."""
        got = await self._pool.fetchval(
            "UPDATE deliveries SET lease_until = now() + make_interval(secs => $3)"
            " WHERE id = $1 AND attempts = $2 AND status = 'pending' RETURNING id",
            delivery_id, attempts, lease_s)
        return got is not None

    async def next_due_in(self, *, platforms: list[str]) -> float | None:
        """Seconds until the next pending delivery is due (0 if one is), None if none."""
        at = await self._pool.fetchval(
            "SELECT min(greatest(next_attempt_at, coalesce(lease_until, next_attempt_at)))"
            " FROM deliveries WHERE status = 'pending' AND platform = ANY($1::text[])",
            platforms)
        if at is None:
            return None
        return max(0.0, float((at - utcnow()).total_seconds()))

    async def progress(self, delivery_id: int, *, pieces_sent: int,
                       message_ids: list[str]) -> None:
        await self._pool.execute(
            "UPDATE deliveries SET pieces_sent = $2, message_ids = $3 WHERE id = $1",
            delivery_id, pieces_sent, message_ids)

    async def cancel(self, key: str) -> bool:
        got = await self._pool.fetchval(
            "UPDATE deliveries SET status = 'cancelled', lease_until = NULL"
            " WHERE key = $1 AND status IN ('pending', 'held') RETURNING id", key)
        return got is not None

    async def finish(self, delivery_id: int, status: DeliveryStatus, *,
                     error: str = "") -> None:
        """A final or held status; a held delivery waits for the chat's next message."""
        await self._pool.execute(
            "UPDATE deliveries SET status = $2, last_error = $3, lease_until = NULL,"
            " delivered_at = CASE WHEN $2 = 'delivered' THEN now() END"
            " WHERE id = $1 AND status <> 'cancelled'",
            delivery_id, status, error)

    async def retry_at(self, delivery_id: int, at: datetime, *, error: str) -> None:
        await self._pool.execute(
            "UPDATE deliveries SET next_attempt_at = $2, last_error = $3, lease_until = NULL"
            " WHERE id = $1", delivery_id, at, error)

    async def release_held(self, platform: str, chat_id: str, *,
                           extend_s: float = 3600.0) -> int:
        """The chat wrote again: its held deliveries are due now (with time to arrive)."""
        rows = await self._pool.fetch(
            "UPDATE deliveries SET status = 'pending', next_attempt_at = now(),"
            " deadline = greatest(deadline, now() + make_interval(secs => $3))"
            " WHERE status = 'held' AND platform = $1 AND chat_id = $2 RETURNING id",
            platform, chat_id, extend_s)
        if rows:
            await self._pool.execute("SELECT pg_notify($1, $2)", CHANNEL, str(rows[0]["id"]))
        return len(rows)

    async def cancel_for_subscription(self, subscription_id: int) -> int:
        got = await self._pool.fetch(
            "UPDATE deliveries SET status = 'cancelled', lease_until = NULL"
            " WHERE subscription_id = $1 AND status IN ('pending', 'held') RETURNING id",
            subscription_id)
        return len(got)

    async def status_of(self, delivery_id: int) -> str | None:
        got: str | None = await self._pool.fetchval(
            "SELECT status FROM deliveries WHERE id = $1", delivery_id)
        return got

    async def listing(self, *, status: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Rows for operators (`bullpen jobs deliveries`), newest first, without file bytes."""
        rows = await self._pool.fetch(
            "SELECT id, key, platform, chat_id, source, subscription_id, status, attempts,"
            " pieces_sent, jsonb_array_length(message_ids) AS sent, last_error, created_at,"
            " delivered_at FROM deliveries WHERE ($1::text IS NULL OR status = $1)"
            " ORDER BY id DESC LIMIT $2", status, limit)
        return [dict(r) for r in rows]

    async def last_for_subscription(self, subscription_id: int) -> Delivery | None:
        row = await self._pool.fetchrow(
            "SELECT * FROM deliveries WHERE subscription_id = $1 ORDER BY id DESC LIMIT 1",
            subscription_id)
        return await self._from_row(self._pool, row) if row is not None else None

