"""Watchlists (a person's, across linked accounts), subscriptions (a chat's scheduled pushes),
their fires (once per subscription and fire time) and each person's time zone."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

import asyncpg

from core.types import ChatRef

MAX_WATCHLIST = 50


@dataclass(frozen=True)
class Subscription:
    id: int
    owner_id: UUID
    chat: ChatRef
    kind: str
    symbols: list[str]  # empty: the owner's watchlist at fire time
    at_time: str  # HH:MM
    recurrence: str
    tz: str
    calendar: str | None
    lang: str
    options: dict[str, Any] = field(default_factory=dict)
    status: str = "active"
    paused_reason: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None


@dataclass(frozen=True)
class Subscribed:
    """What `SubscriptionsRepo.subscribe` did: stored `sub`, or refused it because it is
    `existing` again ("duplicate") or one more than a cap allows ("owner_cap", "chat_cap",
    with the `count` there already)."""

    sub: Subscription | None
    refused: str = ""
    existing: Subscription | None = None
    count: int = 0


@dataclass(frozen=True)
class FireOutcome:
    """How one recorded fire ended (`job_fires.status`: done, failed, missed)."""

    subscription_id: int
    fire_at: datetime
    status: str
    delivery_key: str | None = None
    detail: str = ""


CHANNEL = "bullpen_subscriptions"  # NOTIFY'd with the ids of subscriptions added or changed
MAX_PAYLOAD = 7000  # bytes of ids in one NOTIFY (Postgres allows just under 8000)
Group = tuple[str, str, str, str]  # a schedule: (at_time, recurrence, tz, calendar or "")
# a schedule's active subscriptions, along subscriptions_active_by_schedule ($1-$4: the group)
_OF_SCHEDULE = ("status = 'active' AND at_time = $1 AND recurrence = $2 AND tz = $3"
                " AND coalesce(calendar, '') = $4")


def schedule_key(group: Group) -> str:
    """A schedule as one string (the scheduler's job id, `job_schedule_marks.schedule`)."""
    return "|".join(group)


WATCHLISTS_SQL = ("SELECT user_id, symbol FROM watchlist WHERE user_id = ANY($1::uuid[])"
                  " ORDER BY user_id, position, added_at")


def _subscription(row: asyncpg.Record) -> Subscription:
    return Subscription(
        id=row["id"], owner_id=row["owner_id"], chat=ChatRef(**row["chat"]), kind=row["kind"],
        symbols=list(row["symbols"]), at_time=row["at_time"], recurrence=row["recurrence"],
        tz=row["tz"], calendar=row["calendar"], lang=row["lang"], options=dict(row["options"]),
        status=row["status"], paused_reason=row["paused_reason"],
        created_at=row["created_at"], updated_at=row["updated_at"])


class SubscriptionsRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    # --- watchlist -------------------------------------------------------------------------

    async def watchlist(self, user_id: UUID) -> list[str]:
        rows = await self._pool.fetch(
            "SELECT symbol FROM watchlist WHERE user_id = $1 ORDER BY position, added_at",
            user_id)
        return [r["symbol"] for r in rows]

    async def watch(self, user_id: UUID, symbols: list[str]) -> list[str]:
        """Add symbols (kept once, in the order added); the watchlist after."""
        async with self._pool.acquire() as conn, conn.transaction():
            start = await conn.fetchval(
                "SELECT coalesce(max(position), 0) FROM watchlist WHERE user_id = $1", user_id)
            await conn.executemany(
                "INSERT INTO watchlist (user_id, symbol, position) VALUES ($1, $2, $3)"
                " ON CONFLICT DO NOTHING",
                [(user_id, s, int(start) + i + 1) for i, s in enumerate(symbols)])
        return await self.watchlist(user_id)

    async def unwatch(self, user_id: UUID, symbols: list[str]) -> list[str]:
        await self._pool.execute(
            "DELETE FROM watchlist WHERE user_id = $1 AND symbol = ANY($2::text[])",
            user_id, symbols)
        return await self.watchlist(user_id)

    # --- time zone -------------------------------------------------------------------------

    async def timezone(self, user_id: UUID) -> str | None:
        got: str | None = await self._pool.fetchval("SELECT tz FROM users WHERE id = $1",
                                                    user_id)
        return got

    async def set_timezone(self, user_id: UUID, tz: str) -> None:
        await self._pool.execute("UPDATE users SET tz = $2 WHERE id = $1", user_id, tz)

    # --- subscriptions ---------------------------------------------------------------------

    async def add(self, *, owner_id: UUID, chat: ChatRef, symbols: list[str], at_time: str,
                  recurrence: str, tz: str, calendar: str | None, lang: str,
                  kind: str = "report", options: dict[str, Any] | None = None) -> Subscription:
        row = await self._pool.fetchrow(
            _INSERT, owner_id, chat.platform, chat.chat_id, chat.model_dump(mode="json"), kind,
            symbols, at_time, recurrence, tz, calendar, lang, options or {})
        assert row is not None
        await self._notify([row["id"]])
        return _subscription(row)

    async def subscribe(self, *, owner_id: UUID, chat: ChatRef, symbols: list[str],
                        at_time: str, recurrence: str, tz: str, calendar: str | None,
                        lang: str, kind: str = "report", options: dict[str, Any] | None = None,
                        per_owner: int = 0, per_chat: int = 0) -> Subscribed:
        """`add`, unless the chat has the same subscription already (same kind, symbols in any
        order, time, recurrence, zone, calendar, language and options; for a watchlist one,
        the same owner too: it reads their list) or the owner has `per_owner` subscriptions
        anywhere, or the chat `per_chat` (0: no cap). Checked and stored under transaction
        locks on the owner and the chat, so a burst of /subscribe in any processes stops at
        the cap exactly."""
        options = options or {}
        async with self._pool.acquire() as conn, conn.transaction():
            await conn.execute(
                "SELECT pg_advisory_xact_lock(28, hashtext('owner:' || $1)),"
                " pg_advisory_xact_lock(28, hashtext('chat:' || $2 || ':' || $3))",
                str(owner_id), chat.platform, chat.chat_id)
            same = await conn.fetchrow(
                "SELECT * FROM subscriptions WHERE platform = $1 AND chat_id = $2"
                " AND status <> 'removed' AND kind = $3 AND at_time = $4 AND recurrence = $5"
                " AND tz = $6 AND calendar IS NOT DISTINCT FROM $7 AND lang = $8"
                " AND options = $9::jsonb"
                " AND ARRAY(SELECT x FROM unnest(symbols) x ORDER BY x)"
                "     = ARRAY(SELECT x FROM unnest($10::text[]) x ORDER BY x)"
                " AND (cardinality($10::text[]) > 0 OR owner_id = $11) ORDER BY id LIMIT 1",
                chat.platform, chat.chat_id, kind, at_time, recurrence, tz, calendar, lang,
                options, symbols, owner_id)
            if same is not None:
                return Subscribed(None, "duplicate", _subscription(same))
            counts = await conn.fetchrow(
                "SELECT count(*) FILTER (WHERE owner_id = $1) AS mine,"
                " count(*) FILTER (WHERE platform = $2 AND chat_id = $3) AS here"
                " FROM subscriptions WHERE status <> 'removed'"
                " AND (owner_id = $1 OR (platform = $2 AND chat_id = $3))",
                owner_id, chat.platform, chat.chat_id)
            assert counts is not None
            if per_owner > 0 and counts["mine"] >= per_owner:
                return Subscribed(None, "owner_cap", count=int(counts["mine"]))
            if per_chat > 0 and counts["here"] >= per_chat:
                return Subscribed(None, "chat_cap", count=int(counts["here"]))
            row = await conn.fetchrow(_INSERT, owner_id, chat.platform, chat.chat_id,
                                      chat.model_dump(mode="json"), kind, symbols, at_time,
                                      recurrence, tz, calendar, lang, options)
            assert row is not None
            await conn.execute("SELECT pg_notify($1, $2)", CHANNEL, str(row["id"]))
        return Subscribed(_subscription(row))

    async def get(self, subscription_id: int) -> Subscription | None:
        row = await self._pool.fetchrow("SELECT * FROM subscriptions WHERE id = $1",
                                        subscription_id)
        return _subscription(row) if row is not None else None

    async def for_chat(self, chat: ChatRef) -> list[Subscription]:
        rows = await self._pool.fetch(
            "SELECT * FROM subscriptions WHERE platform = $1 AND chat_id = $2"
            " AND status <> 'removed' ORDER BY id", chat.platform, chat.chat_id)
        return [_subscription(r) for r in rows]

    async def active(self) -> list[Subscription]:
        rows = await self._pool.fetch(
            "SELECT * FROM subscriptions WHERE status = 'active' ORDER BY id")
        return [_subscription(r) for r in rows]

    async def record_schedule_fire(self, group: Group, fire_at: datetime, *, after_id: int = 0,
                                   limit: int = 500, only: int | None = None
                                   ) -> list[tuple[Subscription, bool]]:
        """One page of a schedule's fire: the next `limit` active subscriptions of `group`
        (by id, after `after_id`; existing at the fire time) with the fire recorded for each
        in the same statement; `(subscription, True)` for those this caller recorded first,
        False for those recorded before (another process, a repeated catch-up)."""
        rows = await self._pool.fetch(
            "WITH page AS (SELECT * FROM subscriptions WHERE " + _OF_SCHEDULE +
            "   AND created_at <= $5::timestamptz + interval '1 minute' AND id > $6"
            "   AND ($8::bigint IS NULL OR id = $8) ORDER BY id LIMIT $7),"
            " fresh AS (INSERT INTO job_fires (subscription_id, fire_at, status)"
            "   SELECT id, $5::timestamptz, 'fired' FROM page ON CONFLICT DO NOTHING"
            "   RETURNING subscription_id)"
            " SELECT page.*, fresh.subscription_id IS NOT NULL AS fresh FROM page"
            " LEFT JOIN fresh ON fresh.subscription_id = page.id ORDER BY page.id",
            *group, fire_at, after_id, limit, only)
        return [(_subscription(r), r["fresh"]) for r in rows]

    async def record_schedule_missed(self, group: Group, fires: Sequence[datetime], *,
                                     only: int | None = None) -> list[tuple[int, datetime]]:
        """The fires of `group` past the grace period recorded `missed` for every active
        subscription that existed then, in one statement; the (subscription, fire time) pairs
        recorded now (not before)."""
        if not fires:
            return []
        rows = await self._pool.fetch(
            "INSERT INTO job_fires (subscription_id, fire_at, status)"
            " SELECT s.id, f, 'missed' FROM subscriptions s"
            " CROSS JOIN unnest($5::timestamptz[]) AS f WHERE " + _OF_SCHEDULE +
            " AND s.created_at <= f + interval '1 minute' AND ($6::bigint IS NULL OR s.id = $6)"
            " ON CONFLICT DO NOTHING RETURNING subscription_id, fire_at",
            *group, list(fires), only)
        return sorted((r["subscription_id"], r["fire_at"]) for r in rows)

    async def schedule_marks(self) -> dict[Group, datetime]:
        """How far each schedule has been fired (`mark_fired`)."""
        rows = await self._pool.fetch("SELECT schedule, fired_through FROM job_schedule_marks")
        out: dict[Group, datetime] = {}
        for r in rows:
            parts = r["schedule"].split("|")
            if len(parts) == 4:
                out[(parts[0], parts[1], parts[2], parts[3])] = r["fired_through"]
        return out

    async def mark_fired(self, group: Group, fire_at: datetime) -> None:
        """Every active subscription of `group` has its fires recorded through `fire_at`."""
        await self._pool.execute(
            "INSERT INTO job_schedule_marks (schedule, fired_through) VALUES ($1, $2)"
            " ON CONFLICT (schedule) DO UPDATE SET fired_through ="
            " greatest(job_schedule_marks.fired_through, EXCLUDED.fired_through)",
            schedule_key(group), fire_at)

    async def schedules_of(self, ids: Sequence[int]) -> list[tuple[int, bool, Group]]:
        """(id, active, schedule) of these subscriptions: what a change NOTIFY'd means to the
        scheduler, read by primary key."""
        rows = await self._pool.fetch(
            "SELECT id, status = 'active' AS active, at_time, recurrence, tz,"
            " coalesce(calendar, '') AS calendar FROM subscriptions WHERE id = ANY($1::bigint[])",
            list(ids))
        return [(r["id"], r["active"],
                 (r["at_time"], r["recurrence"], r["tz"], r["calendar"])) for r in rows]

    async def schedules_in_use(self, groups: Sequence[Group]) -> set[Group]:
        """Which of these schedules still have an active subscription (one index probe each)."""
        if not groups:
            return set()
        rows = await self._pool.fetch(
            "SELECT a, r, z, c FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])"
            " AS g(a, r, z, c) WHERE EXISTS (SELECT 1 FROM subscriptions WHERE status = 'active'"
            " AND at_time = a AND recurrence = r AND tz = z AND coalesce(calendar, '') = c)",
            [g[0] for g in groups], [g[1] for g in groups], [g[2] for g in groups],
            [g[3] for g in groups])
        return {(r["a"], r["r"], r["z"], r["c"]) for r in rows}

    async def listing(self) -> list[Subscription]:
        rows = await self._pool.fetch(
            "SELECT * FROM subscriptions WHERE status <> 'removed' ORDER BY id")
        return [_subscription(r) for r in rows]

    async def remove(self, chat: ChatRef, subscription_id: int | None, *,
                     owner_id: UUID | None = None) -> list[int]:
        """Remove one subscription of the chat, or one the person owns anywhere (a chat the
        bot lost); None: all of the chat's. The ids removed."""
        rows = await self._pool.fetch(
            "UPDATE subscriptions SET status = 'removed', updated_at = now()"
            " WHERE status <> 'removed' AND ($3::bigint IS NULL OR id = $3)"
            " AND ((platform = $1 AND chat_id = $2)"
            "      OR ($3::bigint IS NOT NULL AND owner_id = $4::uuid)) RETURNING id",
            chat.platform, chat.chat_id, subscription_id, owner_id)
        ids = [r["id"] for r in rows]
        if ids:
            await self._notify(ids)
        return ids

    async def cancel_deliveries(self, subscription_id: int) -> int:
        """Its deliveries not sent yet are cancelled (an unsubscribe that raced a fire)."""
        from core.store.deliveries import DeliveriesRepo

        return await DeliveriesRepo(self._pool).cancel_for_subscription(subscription_id)

    async def pause(self, subscription_id: int, reason: str) -> None:
        paused = await self._pool.fetchval(
            "UPDATE subscriptions SET status = 'paused', paused_reason = $2, updated_at = now()"
            " WHERE id = $1 AND status = 'active' RETURNING id", subscription_id, reason)
        if paused is not None:
            await self._notify([subscription_id])

    async def _notify(self, ids: Sequence[int]) -> None:
        """Tell the leading scheduler which subscriptions changed (it reads only those); a
        list too long for a NOTIFY payload says "reload" instead."""
        payload = ",".join(str(i) for i in ids)
        await self._pool.execute("SELECT pg_notify($1, $2)", CHANNEL,
                                 payload if len(payload) <= MAX_PAYLOAD else "reload")

    async def acknowledge_pause(self, subscription_id: int) -> None:
        """The owner was told: keep it paused, stop telling."""
        await self._pool.execute(
            "UPDATE subscriptions SET paused_reason = '' WHERE id = $1", subscription_id)

    # --- fires -----------------------------------------------------------------------------

    async def record_fire(self, subscription_id: int, fire_at: datetime, *,
                          status: str = "fired") -> bool:
        """True for the one caller that records this (subscription, fire time) first."""
        got = await self._pool.fetchval(
            "INSERT INTO job_fires (subscription_id, fire_at, status) VALUES ($1, $2, $3)"
            " ON CONFLICT DO NOTHING RETURNING 1", subscription_id, fire_at, status)
        return got is not None

    async def record_fires(self, fires: Sequence[tuple[int, datetime]], *,
                           status: str = "fired") -> set[tuple[int, datetime]]:
        """`record_fire` for many in one statement: the (subscription, fire time) pairs this
        caller recorded first."""
        if not fires:
            return set()
        rows = await self._pool.fetch(
            "INSERT INTO job_fires (subscription_id, fire_at, status)"
            " SELECT s, f, $3 FROM unnest($1::bigint[], $2::timestamptz[]) AS t(s, f)"
            " ON CONFLICT DO NOTHING RETURNING subscription_id, fire_at",
            [s for s, _ in fires], [f for _, f in fires], status)
        return {(r["subscription_id"], r["fire_at"]) for r in rows}

    async def finish_fires(self, done: Sequence[FireOutcome]) -> None:
        """How the fires ended (status, delivery key, detail), in one statement."""
        if not done:
            return
        await self._pool.execute(
            "UPDATE job_fires j SET status = t.st, delivery_key = t.k, detail = t.d"
            " FROM unnest($1::bigint[], $2::timestamptz[], $3::text[], $4::text[], $5::text[])"
            " AS t(s, f, st, k, d) WHERE j.subscription_id = t.s AND j.fire_at = t.f",
            [o.subscription_id for o in done], [o.fire_at for o in done],
            [o.status for o in done], [o.delivery_key for o in done],
            [o.detail for o in done])

    async def removed_among(self, ids: Sequence[int]) -> set[int]:
        """Which of these subscriptions were removed (an unsubscribe that raced a fire)."""
        rows = await self._pool.fetch(
            "SELECT id FROM subscriptions WHERE id = ANY($1::bigint[]) AND status = 'removed'",
            list(ids))
        return {r["id"] for r in rows}

    async def watchlists(self, owners: Sequence[UUID]) -> dict[UUID, list[str]]:
        """`watchlist` of many people in one query."""
        out: dict[UUID, list[str]] = {o: [] for o in owners}
        if not owners:
            return out
        rows = await self._pool.fetch(WATCHLISTS_SQL, list(owners))
        for r in rows:
            out[r["user_id"]].append(r["symbol"])
        return out

    async def groups(self) -> list[Group]:
        """The distinct schedules of the active subscriptions (the scheduler's jobs), read
        without reading the subscriptions themselves."""
        rows = await self._pool.fetch(
            "SELECT DISTINCT at_time, recurrence, tz, coalesce(calendar, '') AS calendar"
            " FROM subscriptions WHERE status = 'active'")
        return [(r["at_time"], r["recurrence"], r["tz"], r["calendar"]) for r in rows]

    async def unfinished(self) -> list[tuple[Subscription, datetime]]:
        """`unfinished_fires` with their subscriptions, in one query."""
        rows = await self._pool.fetch(
            "SELECT s.*, f.fire_at AS unfinished_fire_at FROM job_fires f"
            " JOIN subscriptions s ON s.id = f.subscription_id"
            " WHERE f.status = 'fired' AND s.status = 'active' ORDER BY f.fire_at, s.id")
        return [(_subscription(r), r["unfinished_fire_at"]) for r in rows]

    async def unfinished_fires(self) -> list[tuple[int, datetime]]:
        """Fires recorded but not done (a crash between the fire and the delivery's storing)."""
        rows = await self._pool.fetch(
            "SELECT f.subscription_id, f.fire_at FROM job_fires f"
            " JOIN subscriptions s ON s.id = f.subscription_id"
            " WHERE f.status = 'fired' AND s.status = 'active' ORDER BY f.fire_at")
        return [(r["subscription_id"], r["fire_at"]) for r in rows]


_INSERT = ("INSERT INTO subscriptions (owner_id, platform, chat_id, chat, kind, symbols,"
           " at_time, recurrence, tz, calendar, lang, options)"
           " VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12) RETURNING *")
