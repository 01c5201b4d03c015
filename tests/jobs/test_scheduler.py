"""The scheduler on real Postgres: one leader among the processes sharing a database (by an
advisory lock), a takeover within `check_s` when the leader goes, subscriptions picked up
through NOTIFY, and a leader whose connection is killed stepping down and leading again
without firing anything twice. Waits are bounded polling loops, never fixed sleeps."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from core.store import Database, Store, Subscription
from core.testing import MemoryOutbox
from core.types import ChatRef
from jobs.report import Report, report_key
from jobs.runner import FireResult, JobRunner, delivery_key, schedule_of
from jobs.scheduler import LOCK_KEY, Scheduler

ROOT = Path(__file__).resolve().parents[2]
CHECK_S = 0.2
WITHIN_S = 5.0  # every takeover and pickup below must happen well within this


class FakeBuilder:
    """Answers at once and counts its calls."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    async def __call__(self, symbols: Sequence[str], *, lang: str = "en", llm: Any = None,
                       pdf: bool = False) -> Report:
        self.calls.append(tuple(symbols))
        return Report(symbols=list(symbols), lang="en", data_date=None, rows=[], errors=[],
                      text="report", narrative="", narrative_source="offline template",
                      key=report_key(symbols, "en", None))


class WatchedRunner(JobRunner):
    """The real runner, keeping what each takeover's `resume` and `due` returned."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.resumes: list[list[FireResult]] = []
        self.dues: list[list[FireResult]] = []

    async def resume(self) -> list[FireResult]:
        got = await super().resume()
        self.resumes.append(got)
        return got

    async def due(self, at: datetime, *, since: datetime | None = None,
                  only: int | None = None, from_marks: bool = False) -> list[FireResult]:
        got = await super().due(at, since=since, only=only, from_marks=from_marks)
        self.dues.append(got)
        return got


async def until(check: Callable[[], bool | Awaitable[bool]], what: str) -> None:
    """Poll `check` until it holds, failing after WITHIN_S."""
    loop = asyncio.get_running_loop()
    end = loop.time() + WITHIN_S
    while True:
        got = check()
        if not isinstance(got, bool):
            got = await got
        if got:
            return
        if loop.time() > end:
            raise AssertionError(f"not within {WITHIN_S} s: {what}")
        await asyncio.sleep(0.02)


class Rig:
    """Schedulers ("processes") on one database, with the store and an outbox twin."""

    def __init__(self, db: Database, dsn: str, tmp_path: Path) -> None:
        self.db = db
        self.dsn = dsn
        self.store = Store(db, files_dir=tmp_path)
        self.subs = self.store.subscriptions
        self.outbox = MemoryOutbox()
        self.build = FakeBuilder()
        self.schedulers: list[Scheduler] = []
        self.runners: list[WatchedRunner] = []

    def scheduler(self) -> Scheduler:
        runner = WatchedRunner(subscriptions=self.subs, outbox=self.outbox, build=self.build)
        s = Scheduler(dsn=self.dsn, subscriptions=self.subs, runner=runner, check_s=CHECK_S)
        self.schedulers.append(s)
        self.runners.append(runner)
        return s

    async def add(self, at_time: str, *, tz: str = "UTC", chat: str = "c1") -> Subscription:
        owner = await self.store.accounts.user_for("test", "u1", "Ann")
        return await self.subs.add(owner_id=owner, chat=ChatRef(platform="test", chat_id=chat),
                                   symbols=["NVDA"], at_time=at_time, recurrence="daily", tz=tz,
                                   calendar=None, lang="en")

    async def lock_holders(self) -> list[int]:
        """Backends holding the scheduler's advisory lock in this database."""
        rows = await self.db.pool.fetch(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND classid::bigint = $1 AND objid::bigint = $2 AND objsubid = 1",
            LOCK_KEY >> 32, LOCK_KEY & 0xFFFF_FFFF)
        return [r["pid"] for r in rows]

    def runner_of(self, s: Scheduler) -> WatchedRunner:
        return self.runners[self.schedulers.index(s)]

    def leaders(self) -> list[Scheduler]:
        return [s for s in self.schedulers if s.is_leader]

    async def count(self, table: str) -> int:
        return int(await self.db.pool.fetchval(f"SELECT count(*) FROM {table}"))


@pytest.fixture
async def rig(pg_db: Database, pg_dsn: str, tmp_path: Path) -> AsyncIterator[Rig]:
    r = Rig(pg_db, pg_dsn, tmp_path)
    yield r
    for s in r.schedulers:
        await s.aclose()


def job_ids(s: Scheduler) -> set[str]:
    aps = s._aps  # the APScheduler jobs the leader keeps
    return {job.id for job in aps.get_jobs()} if aps is not None else set()


def hhmm(delta: timedelta) -> str:
    """A UTC wall-clock time `delta` from now (three hours ahead: nothing fires in a test)."""
    return (datetime.now(UTC) + delta).strftime("%H:%M")


async def test_one_leader_and_a_takeover_when_it_closes(rig: Rig) -> None:
    # a fire ten minutes ago, which the first leader catches up at takeover (and only it)
    due = await rig.add(hhmm(-timedelta(minutes=10)))
    await rig.db.pool.execute("UPDATE subscriptions SET created_at = now() - interval '2 days'")
    a, b = rig.scheduler(), rig.scheduler()
    await asyncio.gather(a.start(), b.start())
    await until(lambda: len(rig.leaders()) == 1, "a leader")
    # for a few of the other's checks, it stays a follower
    loop = asyncio.get_running_loop()
    end = loop.time() + 5 * CHECK_S
    while loop.time() < end:
        assert len(rig.leaders()) == 1
        await asyncio.sleep(CHECK_S / 4)
    [leader] = rig.leaders()
    [follower] = [s for s in (a, b) if s is not leader]
    await until(lambda: len(rig.runner_of(leader).dues) == 1, "the leader's catch-up")
    assert rig.runner_of(follower).dues == []
    assert len(await rig.lock_holders()) == 1
    assert job_ids(follower) == set() and len(job_ids(leader)) == 1
    now = datetime.now(UTC)
    [fire_at] = schedule_of(due).fires_between(now - timedelta(hours=1), now)
    # the takeover looks a week back: yesterday's fire, older than the grace, is recorded
    # missed; today's runs once
    assert [(r.status, r.fire_at) for r in rig.runner_of(leader).dues[0]
            if r.status != "missed"] == [("done", fire_at)]
    assert await rig.count("job_fires") == 2  # today done, yesterday missed
    assert rig.outbox.deliveries.keys() == {delivery_key(due, fire_at)}

    await leader.aclose()
    assert not leader.is_leader and job_ids(leader) == set()
    await until(lambda: follower.is_leader, "the follower takes over")
    await until(lambda: len(rig.runner_of(follower).dues) == 1, "the new leader's catch-up")
    assert len(await rig.lock_holders()) == 1
    assert len(job_ids(follower)) == 1
    # the catch-up at the second takeover starts where the schedule was fired through (its
    # mark): the fire done before is not even looked at again, and nothing fires twice
    assert rig.runner_of(follower).dues[0] == []
    assert await rig.count("job_fires") == 2 and len(rig.outbox.deliveries) == 1
    assert len(rig.build.calls) == 1

    # the old leader comes back (a restarted process): it follows
    await leader.start()
    end = loop.time() + 3 * CHECK_S
    while loop.time() < end:
        assert rig.leaders() == [follower]
        await asyncio.sleep(CHECK_S / 4)


async def test_subscriptions_added_and_removed_are_picked_up_through_notify(rig: Rig) -> None:
    s = rig.scheduler()
    await s.start()
    await until(lambda: s.is_leader, "leadership")
    await until(lambda: len(rig.runners[0].dues) == 1, "the takeover's catch-up")
    assert job_ids(s) == set()
    synced = s.syncs  # the takeover's: every change below is applied without another
    at = hhmm(timedelta(hours=3))
    first = await rig.add(at)
    key = (at, "daily", "UTC", "")
    group = "|".join(key)
    await until(lambda: job_ids(s) == {group}, "the new subscription's job")  # not 60 s later
    aps = s._aps
    assert aps is not None
    job = aps.get_job(group)
    assert job is not None
    assert job.next_run_time == schedule_of(first).next_fire(datetime.now(UTC))
    # a second subscription on the same schedule joins the group's job
    await rig.add(at, chat="c2")
    shanghai = await rig.add(at, tz="Asia/Shanghai", chat="c3")
    other = f"{at}|daily|Asia/Shanghai|"
    await until(lambda: job_ids(s) == {group, other}, "the Shanghai subscription's job")
    assert job_ids(s) == {group, other}  # the second one joined the first one's job
    # removing one of two keeps the job; removing the last removes it
    changed = s.changes
    assert await rig.subs.remove(first.chat, first.id) == [first.id]
    await until(lambda: s.changes > changed, "the removal applied")
    assert job_ids(s) == {group, other}
    assert await rig.subs.remove(shanghai.chat, None) == [shanghai.id]
    await until(lambda: job_ids(s) == {group}, "the removed subscription's job goes")
    # each change was read by its ids (the NOTIFY names them): no full resync of the schedules
    assert s.syncs == synced and s.changes >= 4
    assert await rig.count("job_fires") == 0 and rig.outbox.deliveries == {}


async def test_a_leader_whose_connection_is_killed_steps_down_and_leads_again(
        rig: Rig) -> None:
    """`pg_terminate_backend` on the leader's lock connection (a database restart, a network
    cut, an operator): the lock is gone, so the leader must notice at once, step down and take
    leadership again, and its catch-up must not fire what was fired."""
    await rig.add(hhmm(-timedelta(minutes=10)))
    await rig.db.pool.execute("UPDATE subscriptions SET created_at = now() - interval '2 days'")
    s = rig.scheduler()
    runner = rig.runners[0]
    await s.start()
    await until(lambda: len(runner.dues) == 1, "the first takeover's catch-up")
    assert [r.status for r in runner.dues[0]] == ["missed", "done"]  # yesterday's: missed
    [pid] = await rig.lock_holders()
    assert job_ids(s) != set()

    killer = await asyncpg.connect(rig.dsn)
    try:
        assert await killer.fetchval("SELECT pg_terminate_backend($1)", pid)
    finally:
        await killer.close()

    async def leads_on_a_new_connection() -> bool:
        holders = await rig.lock_holders()
        return s.is_leader and len(holders) == 1 and holders[0] != pid

    await until(leads_on_a_new_connection, "leadership taken again on a new connection")
    await until(lambda: len(runner.dues) == 2, "the second takeover's catch-up")
    assert len(runner.resumes) == 2 and runner.resumes[1] == []
    assert runner.dues[1] == []  # from the schedule's mark on: nothing left to look at
    assert await rig.count("job_fires") == 2 and len(rig.outbox.deliveries) == 1
    assert len(rig.build.calls) == 1
    assert job_ids(s) != set()


CHILD = """
import asyncio, sys
from pathlib import Path
from core.store import Database, Store
from core.testing import MemoryOutbox
from jobs.runner import JobRunner
from jobs.scheduler import Scheduler

async def main(dsn: str, tmp: str) -> None:
    db = await Database.open(dsn=dsn, data_dir=Path(tmp))
    subs = Store(db, files_dir=Path(tmp)).subscriptions
    runner = JobRunner(subscriptions=subs, outbox=MemoryOutbox())
    s = Scheduler(dsn=dsn, subscriptions=subs, runner=runner, check_s=0.2)
    await s.start()
    while not s.is_leader:
        await asyncio.sleep(0.02)
    print("leader", flush=True)
    await asyncio.Event().wait()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


async def test_a_killed_leader_process_is_replaced_within_the_check_interval(
        rig: Rig, tmp_path: Path) -> None:
    """A real `serve` process leads, then is SIGKILLed (no shutdown code runs): Postgres drops
    its connection and the lock with it, and the process left takes over."""
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, rig.dsn, str(tmp_path), cwd=ROOT,
        stdout=asyncio.subprocess.PIPE)
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(child.stdout.readline(), timeout=60)  # imports, then leads
        assert line.strip() == b"leader"
        [child_pid] = await rig.lock_holders()
        s = rig.scheduler()
        await s.start()
        loop = asyncio.get_running_loop()
        end = loop.time() + 3 * CHECK_S
        while loop.time() < end:
            assert not s.is_leader
            await asyncio.sleep(CHECK_S / 4)
        child.kill()
        await child.wait()
        await until(lambda: s.is_leader, "the survivor takes over")
        holders = await rig.lock_holders()
        assert len(holders) == 1 and holders != [child_pid]
    finally:
        if child.returncode is None:
            child.kill()
            await child.wait()
