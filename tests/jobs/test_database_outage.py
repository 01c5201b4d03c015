"""A Postgres outage across a fire loses no fire: connections dropped and refused while the
fire comes due, then back; the scheduler steps down, leads again and fires it once."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg

from core.store import Database, Store
from core.testing import MemoryOutbox
from core.types import ChatRef
from jobs.report import Report, report_key
from jobs.runner import JobRunner, delivery_key
from jobs.scheduler import Scheduler


async def build(symbols: Sequence[str], *, lang: str = "en", **_: Any) -> Report:
    return Report(symbols=list(symbols), lang=lang, data_date=None, rows=[], errors=[],
                  text=f"report {','.join(symbols)}", narrative="",
                  narrative_source="offline template", key=report_key(symbols, lang, None))


async def until(check: Any, what: str, within_s: float = 30.0) -> None:
    end = asyncio.get_running_loop().time() + within_s
    while True:
        got = check()
        if asyncio.iscoroutine(got):
            got = await got
        if got:
            return
        assert asyncio.get_running_loop().time() < end, f"timed out: {what}"
        await asyncio.sleep(0.2)


async def test_a_fire_due_during_a_database_outage_runs_once_after_it(
        pg_dsn: str, pg_server: str, pg_db: Database, tmp_path: Any) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    owner = await store.accounts.user_for("test", "u1", "")
    now = datetime.now(UTC)
    target = (now + timedelta(seconds=75)).replace(second=0, microsecond=0)  # 15-75 s ahead
    sub = await store.subscriptions.add(
        owner_id=owner, chat=ChatRef(platform="test", chat_id="c1"), symbols=["NVDA"],
        at_time=target.strftime("%H:%M"), recurrence="daily", tz="UTC", calendar=None,
        lang="en")
    outbox = MemoryOutbox()
    runner = JobRunner(subscriptions=store.subscriptions, outbox=outbox, build=build)
    scheduler = Scheduler(dsn=pg_dsn, subscriptions=store.subscriptions, runner=runner,
                          check_s=0.3)
    dbname = await pg_db.pool.fetchval("SELECT current_database()")
    admin = await asyncpg.connect(pg_server)
    try:
        await scheduler.start()
        await until(lambda: scheduler.is_leader, "the scheduler leads")
        await asyncio.sleep(max(0.0, (target - datetime.now(UTC)).total_seconds() - 4))
        # the outage: every connection dropped, new ones refused, across the fire time
        await admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS false')
        await admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                            " WHERE datname = $1", dbname)
        await asyncio.sleep(max(0.0, (target - datetime.now(UTC)).total_seconds() + 6))
        assert not scheduler.is_leader  # it noticed: the lock went with its connection
        await admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')

        async def fired() -> bool:
            return bool(await pg_db.pool.fetchval(
                "SELECT count(*) FROM job_fires WHERE subscription_id = $1 AND status = 'done'",
                sub.id))

        await until(fired, "the missed fire runs once the database is back")
        await until(lambda: scheduler.is_leader, "the scheduler leads again")
    finally:
        await scheduler.aclose()
        await admin.execute(f'ALTER DATABASE "{dbname}" ALLOW_CONNECTIONS true')
        await admin.close()
    rows = await pg_db.pool.fetch("SELECT fire_at, status FROM job_fires")
    assert [(r["fire_at"], r["status"]) for r in rows] == [(target, "done")]
    assert list(outbox.deliveries) == [delivery_key(sub, target)]
