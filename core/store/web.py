"""The web platform's records: one-time sign-in links, browser sessions, share links, and the
admin console's read-only view of the database.

Every secret (link, cookie, share token) is 256 random bits (`new_token`); only its SHA-256 is
stored, so what the database holds cannot be replayed as a link or a cookie.

The admin console logs in as `bullpen_console` (`core.store.roles`) and nothing else: where it
cannot, or the login it was given is a stronger role, the console is off (`ConsoleOff`, which
says why) rather than run SQL as the application's user behind SET ROLE, a fence a superuser's
`set_config('role', ...)` stepped over. Its results are capped in rows and in bytes, read from
a cursor a few rows at a time so a huge answer is never held whole.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
import string
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any
from uuid import UUID

import asyncpg

from core.errors import ConsoleOff, QueryRefused
from core.store.roles import CONSOLE_ROLE

log = logging.getLogger(__name__)

LOGIN_TTL = timedelta(minutes=10)
SESSION_TTL = timedelta(days=30)
WEB_PLATFORM = "web"
DEFAULT_BYTE_LIMIT = 2 * 1024 * 1024
_FETCH_MAX = 100  # rows per round trip from the console's cursor, at most


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


_ALPHABET = string.ascii_letters + string.digits


def new_token() -> str:
    """43 letters and digits (256 bits, like `secrets.token_urlsafe(32)`, but without `_` and
    `-`: a link survives every platform's Markdown, where `_x_` is italics)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(43))


@dataclass(frozen=True)
class SessionRow:
    user_id: UUID
    csrf: str
    expires_at: datetime


@dataclass(frozen=True)
class PersonRow:
    user_id: UUID
    display_name: str
    lang: str | None
    accounts: tuple[tuple[str, str], ...]  # (platform, platform_uid), oldest link first


@dataclass(frozen=True)
class ConversationRow:
    id: UUID
    user_id: UUID | None
    platform: str
    chat_id: str
    thread_id: str
    title: str
    mode: str
    is_active: bool
    updated_at: datetime


@dataclass(frozen=True)
class FileRow:
    id: int
    user_id: UUID | None
    conversation_id: UUID | None
    filename: str
    kind: str
    mime_type: str
    size_bytes: int
    path: str
    created_at: datetime


@dataclass(frozen=True)
class ShownMessage:
    """A message a person may be shown: what the user asked or the agent answered."""

    id: int
    role: str  # "user" | "assistant"
    content: str
    created_at: datetime
    label: str = ""  # the note the run put under an answer ("offline analyst", ...)


@dataclass(frozen=True)
class UsageDay:
    day: date
    questions: int  # messages people sent
    calls: int  # model calls
    tokens: int


@dataclass(frozen=True)
class UsagePerson:
    user_id: UUID
    name: str
    questions: int
    calls: int
    tokens: int
    cost_usd: float


@dataclass(frozen=True)
class FailureRow:
    at: datetime
    what: str  # "delivery <platform>" or "job <subscription id>"
    detail: str


@dataclass(frozen=True)
class LastCall:
    at: datetime
    provider: str
    model: str


@dataclass(frozen=True)
class QueryResult:
    columns: tuple[str, ...]
    rows: tuple[tuple[str | None, ...], ...]
    truncated: bool = False
    total: int | None = None
    cut_by: str = ""  # what cut it when truncated: "rows" or "bytes"


def _conversation(row: asyncpg.Record) -> ConversationRow:
    return ConversationRow(
        id=UUID(str(row["id"])), user_id=UUID(str(row["user_id"])) if row["user_id"] else None,
        platform=row["platform"], chat_id=row["chat_id"], thread_id=row["thread_id"],
        title=row["title"], mode=row["mode"], is_active=row["is_active"],
        updated_at=row["updated_at"])


def _file(row: asyncpg.Record) -> FileRow:
    return FileRow(
        id=int(row["id"]), user_id=UUID(str(row["user_id"])) if row["user_id"] else None,
        conversation_id=UUID(str(row["conversation_id"])) if row["conversation_id"] else None,
        filename=row["filename"], kind=row["kind"], mime_type=row["mime_type"],
        size_bytes=int(row["size_bytes"]), path=row["path"], created_at=row["created_at"])


_CONVERSATION_COLUMNS = ("id, user_id, platform, chat_id, thread_id, title, mode, is_active,"
                         " updated_at")
_FILE_COLUMNS = ("id, user_id, conversation_id, filename, kind, mime_type, size_bytes, path,"
                 " created_at")


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def as_text(value: Any) -> str | None:
    """A value from any query, as the admin console shows it (None stays None)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray | memoryview):
        return "\\x" + bytes(value).hex()
    if isinstance(value, datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


# Issuing a link or opening a session also forgets the links and sessions over a day past
# their end (used, expired or revoked), so neither table grows without end.
_ISSUE_LOGIN = """
WITH gone AS (
    DELETE FROM web_logins WHERE expires_at < now() - interval '1 day'
)
INSERT INTO web_logins (token_hash, user_id, expires_at) VALUES ($1, $2, now() + $3::interval)
"""
_OPEN_SESSION = """
WITH gone AS (
    DELETE FROM web_sessions
    WHERE expires_at < now() - interval '1 day' OR revoked_at < now() - interval '1 day'
)
INSERT INTO web_sessions (token_hash, csrf, user_id, expires_at)
VALUES ($1, $2, $3, now() + $4::interval) RETURNING expires_at
"""


class WebRepo:
    def __init__(self, pool: asyncpg.Pool, *, console_dsn: str | None) -> None:
        self._pool = pool
        # the admin console's queries run on a connection of their own, logged in as
        # CONSOLE_ROLE with this DSN; None: no such login, the console is off
        self._console_dsn = console_dsn

    # --- sign-in links and sessions --------------------------------------------------------

    async def issue_login(self, user_id: UUID, *, ttl: timedelta = LOGIN_TTL) -> str:
        """A one-time sign-in token for `user_id`, valid for `ttl`."""
        token = new_token()
        await self._pool.execute(_ISSUE_LOGIN, token_hash(token), user_id, ttl)
        return token

    async def redeem_login(self, token: str) -> UUID | None:
        """The person a sign-in token was issued to, once: None when unknown, used or
        expired. Using it is one atomic UPDATE, so two tabs racing get one session."""
        got = await self._pool.fetchval(
            "UPDATE web_logins SET used_at = now() WHERE token_hash = $1"
            " AND used_at IS NULL AND expires_at > now() RETURNING user_id", token_hash(token))
        return UUID(str(got)) if got is not None else None

    async def open_session(self, user_id: UUID, *,
                           ttl: timedelta = SESSION_TTL) -> tuple[str, SessionRow]:
        """A new session: its cookie token and what is stored of it."""
        token, csrf = new_token(), new_token()
        expires_at = await self._pool.fetchval(_OPEN_SESSION, token_hash(token), csrf, user_id,
                                               ttl)
        return token, SessionRow(user_id, csrf, expires_at)

    async def session(self, token: str) -> SessionRow | None:
        row = await self._pool.fetchrow(
            "SELECT user_id, csrf, expires_at FROM web_sessions WHERE token_hash = $1"
            " AND revoked_at IS NULL AND expires_at > now()", token_hash(token))
        if row is None:
            return None
        return SessionRow(UUID(str(row["user_id"])), row["csrf"], row["expires_at"])

    async def end_session(self, token: str) -> None:
        await self._pool.execute(
            "UPDATE web_sessions SET revoked_at = now() WHERE token_hash = $1"
            " AND revoked_at IS NULL", token_hash(token))

    async def end_sessions(self, user_id: UUID) -> int:
        """Revoke every live session of the person (/web logout); how many there were."""
        rows = await self._pool.fetch(
            "UPDATE web_sessions SET revoked_at = now() WHERE user_id = $1"
            " AND revoked_at IS NULL AND expires_at > now() RETURNING 1", user_id)
        return len(rows)

    # --- the person ------------------------------------------------------------------------

    async def web_account(self, user_id: UUID, display_name: str = "") -> str:
        """The person's web identity: a platform account ("web", uid) linked to them, made
        on first sign-in (uid: their user id then), so the gateway resolves what they send
        from the page to the same person."""
        async with self._pool.acquire() as conn:
            uid = await conn.fetchval(
                "SELECT platform_uid FROM platform_accounts WHERE user_id = $1 AND platform = $2"
                " ORDER BY linked_at, id LIMIT 1", user_id, WEB_PLATFORM)
            if uid is not None:
                return str(uid)
            for candidate in (str(user_id), f"{user_id}-{secrets.token_hex(4)}"):
                got = await conn.fetchval(
                    "INSERT INTO platform_accounts (user_id, platform, platform_uid,"
                    " display_name) VALUES ($1, $2, $3, $4)"
                    " ON CONFLICT (platform, platform_uid) DO NOTHING RETURNING platform_uid",
                    user_id, WEB_PLATFORM, candidate, display_name)
                if got is not None:
                    return str(got)
            raise RuntimeError(f"no web account could be made for {user_id}")

    async def person(self, user_id: UUID) -> PersonRow | None:
        row = await self._pool.fetchrow(
            "SELECT u.id, u.display_name, u.lang,"
            " (SELECT array_agg(ARRAY[pa.platform, pa.platform_uid] ORDER BY pa.linked_at, pa.id)"
            "  FROM platform_accounts pa WHERE pa.user_id = u.id) AS accounts"
            " FROM users u WHERE u.id = $1", user_id)
        if row is None:
            return None
        accounts = tuple((str(a[0]), str(a[1])) for a in row["accounts"] or ())
        return PersonRow(UUID(str(row["id"])), row["display_name"], row["lang"], accounts)

    # --- conversations and files -----------------------------------------------------------

    async def conversations(self, user_id: UUID, *, limit: int = 200) -> list[ConversationRow]:
        rows = await self._pool.fetch(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE user_id = $1"
            " ORDER BY updated_at DESC, created_at DESC LIMIT $2", user_id, limit)
        return [_conversation(r) for r in rows]

    async def conversation(self, conversation_id: UUID) -> ConversationRow | None:
        row = await self._pool.fetchrow(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations WHERE id = $1", conversation_id)
        return _conversation(row) if row is not None else None

    async def chat_conversations(self, platform: str, chat_id: str,
                                 thread_id: str) -> list[UUID]:
        rows = await self._pool.fetch(
            "SELECT id FROM conversations WHERE platform = $1 AND chat_id = $2"
            " AND thread_id = $3", platform, chat_id, thread_id)
        return [UUID(str(r["id"])) for r in rows]

    async def shown_messages(self, conversation_id: UUID, *,
                             limit: int = 2000) -> list[ShownMessage]:
        """What the user asked and the agent answered, in order: no system prompt, no tool
        call (an assistant message carrying calls is a step, not an answer), no tool result,
        nothing empty."""
        rows = await self._pool.fetch(
            "SELECT * FROM (SELECT id, role, content, created_at, label FROM messages"
            " WHERE conversation_id = $1 AND role IN ('user', 'assistant') AND content <> ''"
            " AND (role = 'user' OR tool_calls IS NULL OR tool_calls IN ('null', '[]'))"
            " ORDER BY id DESC LIMIT $2) m ORDER BY id", conversation_id, limit)
        return [ShownMessage(int(r["id"]), r["role"], r["content"], r["created_at"],
                             r["label"]) for r in rows]

    async def files_of_user(self, user_id: UUID, *, limit: int = 500) -> list[FileRow]:
        rows = await self._pool.fetch(
            f"SELECT {_FILE_COLUMNS} FROM files WHERE user_id = $1"
            " ORDER BY created_at DESC, id DESC LIMIT $2", user_id, limit)
        return [_file(r) for r in rows]

    async def files_of_conversation(self, conversation_id: UUID) -> list[FileRow]:
        rows = await self._pool.fetch(
            f"SELECT {_FILE_COLUMNS} FROM files WHERE conversation_id = $1 ORDER BY id",
            conversation_id)
        return [_file(r) for r in rows]

    async def file(self, file_id: int) -> FileRow | None:
        row = await self._pool.fetchrow(f"SELECT {_FILE_COLUMNS} FROM files WHERE id = $1",
                                        file_id)
        return _file(row) if row is not None else None

    async def rename(self, conversation_id: UUID, user_id: UUID, title: str) -> bool:
        """Retitle the person's own conversation; False when it is not theirs (or gone)."""
        got = await self._pool.fetchval(
            "UPDATE conversations SET title = $3 WHERE id = $1 AND user_id = $2 RETURNING 1",
            conversation_id, user_id, title)
        return got is not None

    async def delete(self, conversation_id: UUID, user_id: UUID) -> list[str] | None:
        """Delete the person's own conversation with its messages, share links and file rows
        (one transaction); the deleted files' paths on disk (the caller removes them), or
        None when it is not theirs."""
        async with self._pool.acquire() as conn, conn.transaction():
            owned = await conn.fetchval(
                "SELECT 1 FROM conversations WHERE id = $1 AND user_id = $2 FOR UPDATE",
                conversation_id, user_id)
            if owned is None:
                return None
            paths = [r["path"] for r in await conn.fetch(
                "DELETE FROM files WHERE conversation_id = $1 RETURNING path", conversation_id)]
            await conn.execute("DELETE FROM conversations WHERE id = $1", conversation_id)
        return paths

    async def search(self, user_id: UUID, text: str, *,
                     limit: int = 50) -> list[ConversationRow]:
        """The person's conversations whose title or shown messages contain `text` (any
        case), the most recent first."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        pattern = f"%{escaped}%"
        rows = await self._pool.fetch(
            f"SELECT {_CONVERSATION_COLUMNS} FROM conversations c WHERE c.user_id = $1"
            " AND (c.title ILIKE $2 OR EXISTS (SELECT 1 FROM messages m"
            "  WHERE m.conversation_id = c.id AND m.role IN ('user', 'assistant')"
            "  AND m.content ILIKE $2))"
            " ORDER BY c.updated_at DESC, c.created_at DESC LIMIT $3", user_id, pattern, limit)
        return [_conversation(r) for r in rows]

    # --- share links -----------------------------------------------------------------------

    async def share(self, conversation_id: UUID, *, created_by: UUID | None) -> str:
        """A new public read-only link to the conversation (earlier ones keep working until
        `unshare`)."""
        token = new_token()
        await self._pool.execute(
            "INSERT INTO shares (token_hash, conversation_id, created_by) VALUES ($1, $2, $3)",
            token_hash(token), conversation_id, created_by)
        return token

    async def unshare(self, conversation_ids: Sequence[UUID]) -> int:
        """Revoke every live link to these conversations, at once; how many there were."""
        rows = await self._pool.fetch(
            "UPDATE shares SET revoked_at = now() WHERE conversation_id = ANY($1::uuid[])"
            " AND revoked_at IS NULL RETURNING 1", list(conversation_ids))
        return len(rows)

    async def shared(self, token: str) -> UUID | None:
        got = await self._pool.fetchval(
            "SELECT conversation_id FROM shares WHERE token_hash = $1 AND revoked_at IS NULL",
            token_hash(token))
        return UUID(str(got)) if got is not None else None

    # --- the admin console -----------------------------------------------------------------

    # The dashboard's figures: fixed queries on the application's pool (no text of the
    # admin's reaches them; the SQL box below runs on the console's own weak role).

    async def usage_by_day(self, days: int) -> list[UsageDay]:
        """Questions, model calls and tokens per UTC day, the last `days` days (days without
        any included as zeros)."""
        rows = await self._pool.fetch(
            "WITH d AS (SELECT generate_series((now() AT TIME ZONE 'UTC')::date - ($1 - 1),"
            "  (now() AT TIME ZONE 'UTC')::date, interval '1 day')::date AS day),"
            " q AS (SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n"
            "  FROM messages WHERE role = 'user' AND created_at >= now() - $1 * interval '1 day'"
            "  GROUP BY 1),"
            " u AS (SELECT (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n,"
            "  sum(prompt_tokens + completion_tokens) AS tokens FROM usage"
            "  WHERE created_at >= now() - $1 * interval '1 day' GROUP BY 1)"
            " SELECT d.day, coalesce(q.n, 0) AS questions, coalesce(u.n, 0) AS calls,"
            " coalesce(u.tokens, 0) AS tokens FROM d LEFT JOIN q USING (day)"
            " LEFT JOIN u USING (day) ORDER BY d.day", days)
        return [UsageDay(r["day"], int(r["questions"]), int(r["calls"]), int(r["tokens"]))
                for r in rows]

    async def usage_by_person(self, days: int, *, limit: int = 50) -> list[UsagePerson]:
        """Per person over the last `days` days, the busiest first."""
        rows = await self._pool.fetch(
            "WITH q AS (SELECT c.user_id, count(*) AS n FROM messages m"
            "  JOIN conversations c ON c.id = m.conversation_id WHERE m.role = 'user'"
            "  AND m.created_at >= now() - $1 * interval '1 day' GROUP BY 1),"
            " u AS (SELECT user_id, count(*) AS n, sum(prompt_tokens + completion_tokens)"
            "  AS tokens, sum(cost_usd) AS cost FROM usage"
            "  WHERE created_at >= now() - $1 * interval '1 day' GROUP BY 1)"
            " SELECT p.id, p.display_name, coalesce(q.n, 0) AS questions,"
            " coalesce(u.n, 0) AS calls, coalesce(u.tokens, 0) AS tokens,"
            " coalesce(u.cost, 0) AS cost FROM users p LEFT JOIN q ON q.user_id = p.id"
            " LEFT JOIN u ON u.user_id = p.id WHERE q.n IS NOT NULL OR u.n IS NOT NULL"
            " ORDER BY questions DESC, calls DESC, p.id LIMIT $2", days, limit)
        return [UsagePerson(UUID(str(r["id"])), r["display_name"], int(r["questions"]),
                            int(r["calls"]), int(r["tokens"]), float(r["cost"]))
                for r in rows]

    async def last_call(self) -> LastCall | None:
        row = await self._pool.fetchrow(
            "SELECT created_at, provider, model FROM usage ORDER BY id DESC LIMIT 1")
        return LastCall(row["created_at"], row["provider"], row["model"]) if row else None

    async def recent_failures(self, *, limit: int = 20) -> list[FailureRow]:
        """Deliveries that failed for good and scheduled jobs that failed, newest first."""
        rows = await self._pool.fetch(
            "(SELECT created_at AS at, 'delivery ' || platform AS what, last_error AS detail"
            "  FROM deliveries WHERE status = 'failed' ORDER BY created_at DESC LIMIT $1)"
            " UNION ALL (SELECT created_at, 'job ' || subscription_id::text, detail"
            "  FROM job_fires WHERE status = 'failed' ORDER BY created_at DESC LIMIT $1)"
            " ORDER BY at DESC LIMIT $1", limit)
        return [FailureRow(r["at"], r["what"], r["detail"]) for r in rows]

    async def _admin_connection(self) -> asyncpg.Connection:
        """A connection of its own for the console, logged in as `CONSOLE_ROLE`, checked to be
        that weak role (no superuser, no CREATEROLE, member of no role). `ConsoleOff` when
        it cannot be had: there is no fallback to the application's user."""
        if not self._console_dsn:
            raise ConsoleOff(f"no login is configured for the console's role {CONSOLE_ROLE}")
        try:
            conn = await asyncpg.connect(self._console_dsn, timeout=10)
        except (asyncpg.PostgresError, asyncpg.InterfaceError, OSError, TimeoutError) as exc:
            text = str(exc).splitlines()[0][:200] if str(exc) else ""
            log.warning("admin console off: cannot log in as %s (%s)", CONSOLE_ROLE,
                        type(exc).__name__)
            raise ConsoleOff(f"it cannot log in as the role {CONSOLE_ROLE}: "
                             f"{type(exc).__name__}: {text}") from exc
        try:
            row = await conn.fetchrow(
                "SELECT r.rolname, r.rolsuper OR r.rolcreaterole OR r.rolcreatedb"
                " OR r.rolbypassrls OR r.rolreplication AS strong,"
                " EXISTS (SELECT 1 FROM pg_auth_members m WHERE m.member = r.oid) AS member"
                " FROM pg_roles r WHERE r.rolname = current_user")
        except BaseException:
            await conn.close()
            raise
        if row is None or row["rolname"] != CONSOLE_ROLE or row["strong"] or row["member"]:
            await conn.close()
            who = row["rolname"] if row is not None else "?"
            raise ConsoleOff(f"its login ({who}) is not the role {CONSOLE_ROLE} without powers"
                             " or memberships")
        return conn

    async def admin_status(self) -> str | None:
        """None when the console can log in as its role; else why it is off."""
        try:
            conn = await self._admin_connection()
        except ConsoleOff as exc:
            return str(exc)
        await conn.close()
        return None

    async def admin_tables(self, *, timeout_ms: int) -> list[tuple[str, int]]:
        """Every table of the public schema the console may read, with its row count (exact;
        the planner's estimate for a table too large to count within `timeout_ms`)."""
        conn = await self._admin_connection()
        try:
            names = [r["relname"] for r in await conn.fetch(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
                " AND has_any_column_privilege(c.oid, 'SELECT') ORDER BY c.relname")]
            out: list[tuple[str, int]] = []
            for name in names:
                try:
                    async with conn.transaction(readonly=True):
                        await conn.execute(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
                        count = await conn.fetchval(f"SELECT count(*) FROM {quote_ident(name)}")
                except asyncpg.QueryCanceledError:
                    count = await conn.fetchval(
                        "SELECT greatest(reltuples, 0)::bigint FROM pg_class"
                        " WHERE oid = $1::regclass", quote_ident(name))
                out.append((name, int(count)))
            return out
        finally:
            await conn.close()

    async def admin_rows(self, table: str, *, page: int, page_size: int,
                         timeout_ms: int) -> QueryResult | None:
        """A page (1-based) of a public table's rows (the columns the console may read),
        ordered by its primary key, every value in Postgres's own text form; None when `table`
        is not a table of the schema the console may read (the name is checked against the
        catalogue, then quoted as an identifier)."""
        page, page_size = max(1, page), max(1, min(page_size, 1000))
        conn = await self._admin_connection()
        try:
            oid = await conn.fetchval(
                "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname = $1"
                " AND has_any_column_privilege(c.oid, 'SELECT')", table)
            if oid is None:
                return None
            columns = tuple(r["attname"] for r in await conn.fetch(
                "SELECT attname FROM pg_attribute WHERE attrelid = $1 AND attnum > 0"
                " AND NOT attisdropped AND has_column_privilege(attrelid, attnum, 'SELECT')"
                " ORDER BY attnum", oid))
            keys = [r["attname"] for r in await conn.fetch(
                "SELECT a.attname FROM pg_index i JOIN pg_attribute a"
                " ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
                " WHERE i.indrelid = $1 AND i.indisprimary ORDER BY a.attnum", oid)]
            select = ", ".join(f"{quote_ident(c)}::text" for c in columns) or "NULL"
            keys = [k for k in keys if k in columns] or list(columns[:1])  # a key it may read
            order = ("ORDER BY " + ", ".join(quote_ident(k) for k in keys)) if keys else ""
            try:
                async with conn.transaction(readonly=True):
                    await conn.execute(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
                    total = await conn.fetchval(f"SELECT count(*) FROM {quote_ident(table)}")
                    rows = await conn.fetch(
                        f"SELECT {select} FROM {quote_ident(table)} {order}"
                        " LIMIT $1 OFFSET $2", page_size, (page - 1) * page_size)
            except asyncpg.PostgresError as exc:
                raise QueryRefused(str(exc)) from exc
            return QueryResult(columns=columns, rows=tuple(tuple(r) for r in rows),
                               total=int(total))
        finally:
            await conn.close()

    async def admin_query(self, sql: str, *, timeout_ms: int, row_limit: int,
                          byte_limit: int = DEFAULT_BYTE_LIMIT) -> QueryResult:
        """One statement inside a READ ONLY transaction (always rolled back) with a statement
        timeout, as `CONSOLE_ROLE` (`_admin_connection`), on a connection of its own (closed
        after: nothing the statement sets outlives it). At most `row_limit` rows and
        `byte_limit` bytes of values are kept (`truncated` and `cut_by` say when more came):
        rows come from a cursor in batches sized from the largest row seen, and reading stops
        at either limit, so serve never holds much more than `byte_limit` of a huge answer.
        Any error is `QueryRefused` with Postgres's own message."""
        if not sql.strip():
            raise QueryRefused("the query is empty")
        conn = await self._admin_connection()
        try:
            tr = conn.transaction(readonly=True)
            await tr.start()
            try:
                await conn.execute(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
                stmt = await conn.prepare(sql)
                columns = tuple(a.name for a in stmt.get_attributes())
                if columns:
                    rows, cut_by = await _read_capped(await stmt.cursor(), row_limit,
                                                      byte_limit)
                else:  # a statement that returns no rows: run it (a write is refused here)
                    await stmt.fetch()
                    rows, cut_by = [], ""
            except (asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
                raise QueryRefused(str(exc)) from exc
            finally:
                if not conn.is_closed():
                    try:
                        await tr.rollback()
                    except (asyncpg.PostgresError, asyncpg.InterfaceError):
                        pass  # the statement ended the transaction itself: nothing to undo
            return QueryResult(columns=columns, rows=tuple(rows), truncated=bool(cut_by),
                               cut_by=cut_by)
        finally:
            await conn.close()


def _size(row: tuple[str | None, ...]) -> int:
    return sum(len(v.encode("utf-8", "surrogatepass")) for v in row if v is not None)


async def _read_capped(cursor: Any, row_limit: int,
                       byte_limit: int) -> tuple[list[tuple[str | None, ...]], str]:
    """Rows from `cursor` as text until it ends, `row_limit` rows are kept (one more is read
    to know there were more) or the next row would pass `byte_limit`; the rows and what cut
    them ("", "rows", "bytes"). The first batch is one row; later ones as many as the bytes
    left would hold at the largest row so far (at most `_FETCH_MAX`)."""
    rows: list[tuple[str | None, ...]] = []
    used, largest, batch = 0, 0, 1
    while True:
        want = min(batch, row_limit + 1 - len(rows))
        got = await cursor.fetch(want)
        for record in got:
            if len(rows) == row_limit:
                return rows, "rows"
            row = tuple(as_text(v) for v in record)
            size = _size(row)
            if used + size > byte_limit:
                return rows, "bytes"
            rows.append(row)
            used, largest = used + size, max(largest, size)
        if len(got) < want:
            return rows, ""
        batch = max(1, min(_FETCH_MAX, (byte_limit - used) // max(largest, 1)))
