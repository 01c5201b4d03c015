"""Users and their platform accounts; one-time link codes that join two accounts.

A link code is shown once, to the person who asked for it; only its SHA-256 is stored and
looked up (like the web's sign-in links), so a read of the table (a backup, a console) yields
no code that could be typed to take over a pending link.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from uuid import UUID

import asyncpg

from core.store.conversations import Conversation, conversation_from
from core.types import ChatRef

LINK_CODE_TTL = timedelta(minutes=10)
LINK_MAX_FAILURES = 5


@dataclass(frozen=True)
class Account:
    user_id: UUID
    platform: str
    platform_uid: str
    display_name: str


@dataclass(frozen=True)
class LinkResult:
    ok: bool
    reason: str = ""  # "", "unknown", "expired", "used", "locked", "self"
    user_id: UUID | None = None
    issued_in: ChatRef | None = None  # the chat the code was given in: told of the link


def code_hash(code: str) -> bytes:
    return hashlib.sha256(code.strip().encode("utf-8", "surrogatepass")).digest()


# The user behind an account and their language (`found`, $1 platform, $2 uid); on first sight
# the user and the account are created in the same statement ($3 display name; a race with
# another first sight leaves the account to the winner: `created` is then null and `new_user`
# is to be removed).
_ACCOUNT = """found AS (
    SELECT pa.user_id, u.lang FROM platform_accounts pa JOIN users u ON u.id = pa.user_id
    WHERE pa.platform = $1 AND pa.platform_uid = $2
), nu AS (
    INSERT INTO users (display_name) SELECT $3 WHERE NOT EXISTS (SELECT 1 FROM found)
    RETURNING id
), acct AS (
    INSERT INTO platform_accounts (user_id, platform, platform_uid, display_name)
    SELECT id, $1, $2, $3 FROM nu
    ON CONFLICT (platform, platform_uid) DO NOTHING RETURNING user_id
)"""
_USER_AND_LANG = f"""
WITH {_ACCOUNT}
SELECT (SELECT user_id FROM found) AS user_id, (SELECT lang FROM found) AS lang,
       (SELECT user_id FROM acct) AS created, (SELECT id FROM nu) AS new_user
"""


# A new chat's first message from a new account: the user, the account and the chat's first
# conversation in one statement (`AccountsRepo.first_sight`). The account's columns are
# renamed beside the conversation's (`conversations.user_id` is the conversation's); no
# conversation comes back when the chat has one already or the account was lost to a race.
_FIRST_SIGHT = f"""
WITH {_ACCOUNT}, who AS (
    SELECT coalesce((SELECT user_id FROM found), (SELECT user_id FROM acct)) AS id
), conv AS (
    INSERT INTO conversations (user_id, platform, chat_id, thread_id)
    SELECT who.id, $1, $4, $5 FROM who WHERE who.id IS NOT NULL
    ON CONFLICT (platform, chat_id, thread_id) WHERE is_active DO NOTHING
    RETURNING *
)
SELECT (SELECT user_id FROM found) AS found_user, (SELECT lang FROM found) AS found_lang,
       (SELECT user_id FROM acct) AS created, (SELECT id FROM nu) AS new_user, conv.*
FROM (SELECT 1) one LEFT JOIN conv ON true
"""


@dataclass(frozen=True)
class FirstSight:
    user_id: UUID
    lang: str | None
    conversation: Conversation | None  # created with the user (None: the chat had one)


class AccountsRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def user_for(self, platform: str, platform_uid: str, display_name: str = "") -> UUID:
        """The user behind a platform account, created on first sight (race-safe)."""
        async with self._pool.acquire() as conn:
            row = await conn.fetchrow(
                "SELECT user_id FROM platform_accounts WHERE platform=$1 AND platform_uid=$2",
                platform, platform_uid)
            if row:
                return UUID(str(row["user_id"]))
            async with conn.transaction():
                user_id = await conn.fetchval(
                    "INSERT INTO users (display_name) VALUES ($1) RETURNING id", display_name)
                got = await conn.fetchval(
                    "INSERT INTO platform_accounts (user_id, platform, platform_uid, display_name)"
                    " VALUES ($1,$2,$3,$4) ON CONFLICT (platform, platform_uid) DO NOTHING"
                    " RETURNING user_id", user_id, platform, platform_uid, display_name)
                if got is None:  # lost the race: another insert won
                    await conn.execute("DELETE FROM users WHERE id=$1", user_id)
                    got = await conn.fetchval(
                        "SELECT user_id FROM platform_accounts"
                        " WHERE platform=$1 AND platform_uid=$2", platform, platform_uid)
            return UUID(str(got))

    async def user_and_lang(self, platform: str, platform_uid: str,
                            display_name: str = "") -> tuple[UUID, str | None]:
        """The user behind an account and the language they chose, in one round trip (the hot
        path of every message; on first sight, the user and the account are created in it)."""
        row = await self._pool.fetchrow(_USER_AND_LANG, platform, platform_uid, display_name)
        assert row is not None
        if row["user_id"] is not None:
            return UUID(str(row["user_id"])), row["lang"]
        if row["created"] is not None:  # first sight: created in the same round trip
            return UUID(str(row["created"])), None
        # lost a race with another first sight of the account: its user won
        await self._pool.execute("DELETE FROM users WHERE id=$1", row["new_user"])
        return await self.user_for(platform, platform_uid, display_name), None

    async def first_sight(self, chat: ChatRef, platform_uid: str,
                          display_name: str = "") -> FirstSight:
        """`user_and_lang` for an account never seen in a chat without a conversation: the
        chat's first conversation is created in the same round trip (a new chat's first
        message cost two statements for these, one after the other). The chat's own
        conversation is left as it is when one exists (`conversation` None: read it with
        `ConversationsRepo.active`)."""
        row = await self._pool.fetchrow(_FIRST_SIGHT, chat.platform, platform_uid,
                                        display_name, chat.chat_id, chat.thread_id or "")
        assert row is not None
        conversation = conversation_from(row) if row["id"] is not None else None
        if row["found_user"] is not None:
            return FirstSight(UUID(str(row["found_user"])), row["found_lang"], conversation)
        if row["created"] is not None:
            return FirstSight(UUID(str(row["created"])), None, conversation)
        # lost a race with another first sight of the account: its user won
        await self._pool.execute("DELETE FROM users WHERE id=$1", row["new_user"])
        return FirstSight(await self.user_for(chat.platform, platform_uid, display_name), None,
                          None)

    async def accounts_of(self, user_id: UUID) -> list[Account]:
        rows = await self._pool.fetch(
            "SELECT user_id, platform, platform_uid, display_name FROM platform_accounts"
            " WHERE user_id=$1 ORDER BY linked_at", user_id)
        return [Account(UUID(str(r["user_id"])), r["platform"], r["platform_uid"],
                        r["display_name"]) for r in rows]

    async def get_lang(self, user_id: UUID) -> str | None:
        """The language the user chose with /lang, or None to follow each message."""
        value = await self._pool.fetchval("SELECT lang FROM users WHERE id=$1", user_id)
        return str(value) if value else None

    async def set_lang(self, user_id: UUID, lang: str) -> None:
        await self._pool.execute("UPDATE users SET lang=$2 WHERE id=$1", user_id, lang)

    async def issue_link_code(self, user_id: UUID, *, chat: ChatRef | None = None) -> str:
        """A one-time code; `chat` is where it was given (told when someone redeems it)."""
        code = f"{secrets.randbelow(10**8):08d}"
        await self._pool.execute(
            "INSERT INTO link_codes (code_hash, user_id, expires_at, chat)"
            " VALUES ($1, $2, now() + $3::interval, $4)",
            code_hash(code), user_id, LINK_CODE_TTL, chat.model_dump(mode="json") if chat else None)
        return code

    async def redeem_link_code(self, code: str, user_id: UUID) -> LinkResult:
        """Join `user_id`'s accounts onto the code's owner.

        Codes are single use and expire; five wrong tries within the code lifetime lock the
        person trying (guessing an 8-digit code is then hopeless).
        """
        async with self._pool.acquire() as conn, conn.transaction():
            failures = await conn.fetchval(
                "SELECT count(*) FROM link_failures"
                " WHERE user_id=$1 AND failed_at > now() - $2::interval",
                user_id, LINK_CODE_TTL)
            if failures >= LINK_MAX_FAILURES:
                return LinkResult(False, "locked")
            row = await conn.fetchrow(
                "SELECT code_hash, user_id, expires_at < now() AS expired, used_at, chat"
                " FROM link_codes WHERE code_hash=$1 FOR UPDATE", code_hash(code))
            reason = ""
            if row is None:
                reason = "unknown"
            elif row["used_at"] is not None:
                reason = "used"
            elif row["expired"]:
                reason = "expired"
            elif UUID(str(row["user_id"])) == user_id:
                return LinkResult(False, "self")
            if reason:
                await conn.execute("INSERT INTO link_failures (user_id) VALUES ($1)", user_id)
                return LinkResult(False, reason)
            assert row is not None
            owner = UUID(str(row["user_id"]))
            await conn.execute("UPDATE link_codes SET used_at=now() WHERE code_hash=$1",
                               row["code_hash"])
            await _merge_users(conn, keep=owner, gone=user_id)
            issued_in = ChatRef(**row["chat"]) if row["chat"] else None
            return LinkResult(True, user_id=owner, issued_in=issued_in)

    async def unlink(self, platform: str, platform_uid: str) -> UUID | None:
        """Detach one platform account onto a fresh user of its own; None if it was alone.

        Usage belongs to the human (issue 28): the account leaves with a copy of the person's
        spend this UTC day and month (`_CARRY_SPEND`), of their rate-limit windows and of
        their own budgets and access, and the person keeps all of theirs. Copied, not split:
        the usage rows say which person spent, not which account, so any split would be a
        guess the unlinker could steer to the side they keep using; a copy means neither side
        starts below what was spent. The price: an
        honest unlink counts the day's spend on both sides until the budgets reset; linking
        the two again drops the copies (`_merge_users`), so nothing is counted twice."""
        async with self._pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                "SELECT user_id, display_name FROM platform_accounts"
                " WHERE platform=$1 AND platform_uid=$2", platform, platform_uid)
            if row is None:
                return None
            n = await conn.fetchval(
                "SELECT count(*) FROM platform_accounts WHERE user_id=$1", row["user_id"])
            if n <= 1:
                return None
            new_id = await conn.fetchval(
                "INSERT INTO users (display_name) VALUES ($1) RETURNING id", row["display_name"])
            await conn.execute(
                "UPDATE platform_accounts SET user_id=$3, linked_at=now()"
                " WHERE platform=$1 AND platform_uid=$2", platform, platform_uid, new_id)
            await conn.execute(_CARRY_SPEND, row["user_id"], new_id)
            await conn.execute("INSERT INTO rate_hits (user_id, kind, hits)"
                               " SELECT $2, kind, hits FROM rate_hits WHERE user_id=$1",
                               row["user_id"], new_id)
            await conn.execute(  # a blocked or capped person is not freed by unlinking
                "INSERT INTO user_limits (user_id, access, daily_tokens, monthly_tokens,"
                " daily_usd, monthly_usd) SELECT $2, access, daily_tokens, monthly_tokens,"
                " daily_usd, monthly_usd FROM user_limits WHERE user_id=$1",
                row["user_id"], new_id)
            return UUID(str(new_id))


async def _merge_users(conn: asyncpg.Connection, *, keep: UUID, gone: UUID) -> None:
    # spend one of them carried from the other on an unlink: the originals come together now
    await conn.execute("DELETE FROM usage WHERE (user_id=$1 AND carried_from=$2)"
                       " OR (user_id=$2 AND carried_from=$1)", keep, gone)
    await conn.execute(_MERGE_RATE_HITS, keep, gone)
    for table in ("platform_accounts", "conversations", "files", "usage", "link_codes",
                  "link_failures"):
        await conn.execute(f"UPDATE {table} SET user_id=$1 WHERE user_id=$2", keep, gone)
    # the person's subscriptions and watchlist follow them (the watchlist merged, in order)
    await conn.execute("UPDATE subscriptions SET owner_id=$1 WHERE owner_id=$2", keep, gone)
    await conn.execute(
        "INSERT INTO watchlist (user_id, symbol, position, added_at)"
        " SELECT $1, symbol, position + coalesce((SELECT max(position) FROM watchlist"
        "                                         WHERE user_id=$1), 0), added_at"
        " FROM watchlist WHERE user_id=$2 ON CONFLICT DO NOTHING", keep, gone)
    await conn.execute(
        "UPDATE users SET preferences = u2.preferences || users.preferences,"
        " lang = coalesce(users.lang, u2.lang), tz = coalesce(users.tz, u2.tz)"
        " FROM users u2 WHERE users.id=$1 AND u2.id=$2", keep, gone)
    await conn.execute(_MERGE_LIMITS, keep, gone)
    await conn.execute("DELETE FROM users WHERE id=$1", gone)


# A person's own budgets and access (core.store.budgets) carried over a link: what either set
# explicitly wins over the default (NULL); set on both, the stricter wins (the lower budget;
# block over allow). The linked-away user's row goes with its user (ON DELETE CASCADE).
_MERGE_LIMITS = """
INSERT INTO user_limits AS k (user_id, access, daily_tokens, monthly_tokens, daily_usd,
                              monthly_usd)
SELECT $1, access, daily_tokens, monthly_tokens, daily_usd, monthly_usd
FROM user_limits WHERE user_id = $2
ON CONFLICT (user_id) DO UPDATE SET
    access = CASE WHEN 'block' IN (k.access, EXCLUDED.access) THEN 'block'
                  WHEN 'allow' IN (k.access, EXCLUDED.access) THEN 'allow' END,
    daily_tokens = least(k.daily_tokens, EXCLUDED.daily_tokens),
    monthly_tokens = least(k.monthly_tokens, EXCLUDED.monthly_tokens),
    daily_usd = least(k.daily_usd, EXCLUDED.daily_usd),
    monthly_usd = least(k.monthly_usd, EXCLUDED.monthly_usd),
    updated_at = now()
"""


# /unlink: the person's spend this UTC day and month copied onto the account that leaves, as
# at most two rows marked `carried_from` (today's at now; the rest of the month's at its start).
_CARRY_SPEND = """
WITH b AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS d,
                  date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS m),
s AS (SELECT coalesce(sum(prompt_tokens + completion_tokens)
                      FILTER (WHERE created_at >= b.d), 0) AS dt,
             coalesce(sum(cost_usd) FILTER (WHERE created_at >= b.d), 0) AS dc,
             coalesce(sum(prompt_tokens + completion_tokens), 0) AS mt,
             coalesce(sum(cost_usd), 0) AS mc, b.m
      FROM usage, b WHERE user_id = $1 AND created_at >= b.m GROUP BY b.m)
INSERT INTO usage (user_id, provider, role, prompt_tokens, cost_usd, created_at, carried_from)
SELECT $2, 'carried', 'carried', x.t, x.c, x.at, $1
FROM s, LATERAL (VALUES (s.dt, s.dc, now()), (s.mt - s.dt, s.mc - s.dc, s.m)) AS x(t, c, at)
WHERE x.t > 0 OR x.c > 0
"""

# A link: the gone person's rate-limit windows join the kept one's (linking a fresh account
# must not bring a fresh allowance, nor reset the count of unlinks); the copies an unlink made
# are the same instants, kept once.
_MERGE_RATE_HITS = """
WITH g AS (DELETE FROM rate_hits WHERE user_id = $2 RETURNING kind, hits)
INSERT INTO rate_hits AS r (user_id, kind, hits) SELECT $1, kind, hits FROM g
ON CONFLICT (user_id, kind) DO UPDATE
SET hits = ARRAY(SELECT DISTINCT h FROM unnest(r.hits || EXCLUDED.hits) h ORDER BY h)
"""
