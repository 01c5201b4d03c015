"""`bullpen status [--recent N]`: what a deployment is doing, read from its database (issue 33):
the platforms messages came from, the latest messages (status and seconds), what is unanswered,
the outbox (pending, held, failed) and the last failures. Read-only: it migrates nothing and
works while `serve` runs (the embedded server is shared by its holders)."""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import unquote, urlsplit

from core.words import t

FAILURES = 5
ERROR_CHARS = 120


def register(sub: Any) -> None:
    p = sub.add_parser("status", help="what a running deployment is doing: platforms, recent "
                                      "messages, the outbox, the last failures")
    p.add_argument("--recent", type=int, default=10, metavar="N",
                   help="how many of the latest messages to list (default 10)")
    p.set_defaults(func=lambda a: asyncio.run(handle(a)))


@dataclass
class Status:
    platforms: list[dict[str, Any]] = field(default_factory=list)
    recent: list[dict[str, Any]] = field(default_factory=list)
    unanswered: int = 0
    outbox: dict[str, Any] = field(default_factory=dict)
    oldest_pending: dict[str, Any] | None = None
    failures: list[dict[str, Any]] = field(default_factory=list)


async def read(conn: Any, *, recent: int = 10) -> Status | None:
    """The status from `conn` (asyncpg); None when Bullpen's tables are not there."""
    have = await conn.fetchval("SELECT to_regclass('inbound_events') IS NOT NULL"
                               " AND to_regclass('deliveries') IS NOT NULL")
    if not have:
        return None
    out = Status()
    out.platforms = [dict(r) for r in await conn.fetch(
        "SELECT platform, max(received_at) AS last, count(*) FILTER (WHERE received_at >"
        " now() - interval '24 hours') AS day FROM inbound_events GROUP BY platform"
        " ORDER BY last DESC")]
    out.recent = [dict(r) for r in await conn.fetch(
        "SELECT received_at, platform, chat_id, status,"
        " extract(epoch FROM updated_at - received_at)::float8 AS seconds"
        " FROM inbound_events ORDER BY received_at DESC, id DESC LIMIT $1", recent)]
    out.unanswered = int(await conn.fetchval(
        "SELECT count(*) FROM inbound_events WHERE status IN ('received', 'running')"))
    out.outbox = dict(await conn.fetchrow(
        "SELECT count(*) FILTER (WHERE status = 'pending') AS pending,"
        " count(*) FILTER (WHERE status = 'held') AS held,"
        " count(*) FILTER (WHERE status = 'failed' AND created_at > now() - interval"
        " '24 hours') AS failed FROM deliveries"))
    row = await conn.fetchrow(
        "SELECT key, platform, chat_id, attempts, next_attempt_at, last_error FROM deliveries"
        " WHERE status = 'pending' ORDER BY created_at LIMIT 1")
    out.oldest_pending = dict(row) if row is not None else None
    out.failures = [dict(r) for r in await conn.fetch(
        "(SELECT updated_at AS at, 'message ' || platform || '/' || chat_id AS what,"
        "  coalesce(error, '') AS error FROM inbound_events WHERE status = 'failed'"
        "  ORDER BY updated_at DESC LIMIT $1)"
        " UNION ALL"
        " (SELECT next_attempt_at AS at, 'delivery ' || key AS what, last_error AS error"
        "  FROM deliveries WHERE status = 'failed' ORDER BY next_attempt_at DESC LIMIT $1)"
        " ORDER BY at DESC LIMIT $1", FAILURES)]
    return out


def _when(at: datetime | None) -> str:
    return at.astimezone().strftime("%Y-%m-%d %H:%M:%S") if at is not None else "-"


def _short(text: str) -> str:
    line = (text or "").strip().splitlines()
    first = line[0] if line else "-"
    return first if len(first) <= ERROR_CHARS else first[:ERROR_CHARS - 1] + "…"


def lines(status: Status, lang: str) -> list[str]:
    """The status as the lines `bullpen status` prints."""
    out = [t("startup.status_platforms", lang)]
    out += [t("startup.status_platform", lang, platform=p["platform"], last=_when(p["last"]),
              day=p["day"]) for p in status.platforms] or [t("startup.status_none", lang)]
    out.append(t("startup.status_recent", lang))
    out += [t("startup.status_message", lang, at=_when(m["received_at"]),
              platform=m["platform"], chat=m["chat_id"], status=m["status"],
              seconds=f"{m['seconds']:.1f} s" if m["seconds"] is not None else "-")
            for m in status.recent] or [t("startup.status_none", lang)]
    out.append(t("startup.status_unanswered", lang, n=status.unanswered))
    out.append(t("startup.status_outbox", lang, **status.outbox))
    if status.oldest_pending is not None:
        d = status.oldest_pending
        out.append(t("startup.status_outbox_oldest", lang, delivery=d["key"],
                     platform=d["platform"], chat=d["chat_id"], attempts=d["attempts"],
                     next=_when(d["next_attempt_at"]), error=_short(d["last_error"])))
    out.append(t("startup.status_failures", lang))
    out += [t("startup.status_failure", lang, at=_when(f["at"]), what=f["what"],
              error=_short(f["error"])) for f in status.failures] or [
        t("startup.status_none", lang)]
    return out


def where(dsn: str) -> str:
    """The database as the operator knows it, never its password."""
    parts = urlsplit(dsn)
    host = (unquote(parts.netloc.rpartition("@")[2])  # an embedded server's socket directory
            or unquote(parts.query.partition("host=")[2].partition("&")[0]) or "localhost")
    return f"{host}{parts.path}"


async def handle(args: argparse.Namespace) -> int:
    from bot.cli.runtime import _db

    db, settings = await _db()
    lang = settings.operator_lang
    try:
        async with db.pool.acquire() as conn:
            status = await read(conn, recent=max(0, args.recent))
    finally:
        await db.aclose()
    database = where(db.dsn)
    if status is None:
        print(t("startup.status_no_tables", lang, database=database))
        return 1
    print(t("startup.status_head", lang, database=database,
            now=datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")))
    for line in lines(status, lang):
        print(line)
    return 0
