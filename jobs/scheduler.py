"""The scheduler inside `bullpen serve`: exactly one process of those sharing a database runs it.

Leadership is a Postgres session advisory lock held on a connection of its own: when the
leader's process dies, Postgres drops the connection and the lock with it, and another process,
trying every `check_s`, takes over. The leader keeps one APScheduler `CronTrigger` job per
distinct schedule (time, recurrence, time zone, calendar): a job fires every subscription of
its group through `JobRunner`, which records each fire once per (subscription, fire time).
Subscriptions added, removed or paused anywhere are picked up by change: the NOTIFY names
their ids, and the leader reads those rows alone (a new schedule gets its job, a schedule left
without an active subscription loses it); a full resync of the schedules (one index-backed
query, never the subscriptions themselves) runs at takeover, on a "reload" NOTIFY and every
RELOAD_S as a safety net for changes made by hand. At takeover, each schedule is caught up from
where it was last fired through (`job_schedule_marks`): fires missed within the grace period
run once, older ones are recorded missed, all set-based per schedule.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from core.store.subscriptions import CHANNEL, Group, SubscriptionsRepo, schedule_key
from jobs.runner import FireResult, JobRunner, schedule_of_group

log = logging.getLogger(__name__)

LOCK_KEY = 0x6275_6C6C_7065_6E01  # 'bullpen' + 1: the scheduler's advisory lock
RELOAD_S = 600.0  # a safety net: changes arrive by NOTIFY


class Scheduler:
    def __init__(self, *, dsn: str, subscriptions: SubscriptionsRepo, runner: JobRunner,
                 check_s: float = 5.0) -> None:
        self._dsn = dsn
        self._subs = subscriptions
        self._runner = runner
        self._check_s = check_s
        self._conn: asyncpg.Connection | None = None
        self._aps: AsyncIOScheduler | None = None
        self._task: asyncio.Task[None] | None = None
        self._reload = asyncio.Event()
        self._changed: set[int] = set()  # subscriptions NOTIFY'd since the last look
        self._full = False  # a resync asked for (a "reload" NOTIFY, a lost connection)
        self._groups: set[Group] = set()
        self._fires: set[asyncio.Task[Any]] = set()
        self._next_sync = 0.0
        self.is_leader = False
        self.syncs = 0  # how many times the jobs were matched to all the schedules
        self.changes = 0  # how many times NOTIFY'd changes were applied without a resync

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="scheduler")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._step_down()

    async def _step_down(self) -> None:
        self.is_leader = False
        if self._aps is not None:
            self._aps.shutdown(wait=False)
            self._aps = None
        for task in list(self._fires):
            task.cancel()
        for task in list(self._fires):
            with contextlib.suppress(BaseException):
                await task
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
            self._conn = None

    async def _run(self) -> None:
        while True:
            try:
                if not self.is_leader:
                    await self._try_lead()
                elif self._conn is None or self._conn.is_closed():
                    log.warning("scheduler: lost the leader connection; stepping down")
                    await self._step_down()
                    continue
                if self.is_leader:
                    # every check_s: a ping on the lock's connection (a silent network cut
                    # shows here), and the jobs resynced on NOTIFY or every RELOAD_S
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._reload.wait(), timeout=self._check_s)
                    loop = asyncio.get_running_loop()
                    self._reload.clear()
                    if self._full or loop.time() >= self._next_sync:
                        self._full = False
                        self._changed.clear()
                        await self._sync()
                        self._next_sync = loop.time() + RELOAD_S
                    elif self._changed:
                        await self._apply_changes()
                    elif self._conn is not None and not self._conn.is_closed():
                        await self._conn.fetchval("SELECT 1", timeout=max(self._check_s, 2.0))
                else:
                    await asyncio.sleep(self._check_s)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("scheduler: %s: %s", type(exc).__name__, exc)
                await self._step_down()
                await asyncio.sleep(self._check_s)

    async def _try_lead(self) -> None:
        conn = await asyncpg.connect(self._dsn, timeout=5)
        try:
            got = await conn.fetchval("SELECT pg_try_advisory_lock($1)", LOCK_KEY)
        except BaseException:
            await conn.close()
            raise
        if not got:
            await conn.close()
            return
        self._conn = conn
        await conn.add_listener(CHANNEL, self._on_notify)
        # the lock goes with this connection: when it drops (a killed backend, a database
        # restart), wake the loop at once so it steps down, rather than at the next reload
        conn.add_termination_listener(lambda *_: self._reload.set())
        self.is_leader = True
        log.info("scheduler: this process leads")
        self._aps = AsyncIOScheduler(timezone=UTC)
        self._aps.start()
        self._groups = set()
        self._changed.clear()
        self._full = False
        await self._sync()
        await self._catch_up()
        self._next_sync = asyncio.get_running_loop().time() + RELOAD_S

    async def _catch_up(self) -> list[FireResult]:
        """Fires recorded but never handed to the outbox, then fires missed while no process
        led: a week back at most, each schedule from its mark on; within the grace period they
        run once, older ones are recorded missed."""
        done = await self._runner.resume()
        now = datetime.now(UTC)
        return done + await self._runner.due(now, since=now - timedelta(days=7),
                                             from_marks=True)

    def _on_notify(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        """A NOTIFY on the subscriptions channel: the ids it names, or a resync."""
        try:
            self._changed.update(int(x) for x in payload.split(",") if x)
        except ValueError:
            self._full = True
        self._reload.set()

    async def _apply_changes(self) -> None:
        """The NOTIFY'd subscriptions, read by id: a schedule none of the jobs has gets one, a
        schedule whose last active subscription went loses its job."""
        assert self._aps is not None
        ids, self._changed = list(self._changed), set()
        rows = await self._subs.schedules_of(ids)
        added = {g for _, active, g in rows if active and g not in self._groups}
        maybe_gone = {g for _, active, g in rows if not active and g in self._groups} - added
        gone = maybe_gone - await self._subs.schedules_in_use(list(maybe_gone))
        for key in added:
            self._add_job(key)
        for key in gone:
            with contextlib.suppress(Exception):
                self._aps.remove_job(_job_id(key))
        self._groups = (self._groups | added) - gone
        self.changes += 1

    def _add_job(self, key: Group) -> None:
        assert self._aps is not None
        self._aps.add_job(self._fire_group, schedule_of_group(key).trigger(), args=[key],
                          id=_job_id(key), misfire_grace_time=int(self._runner.grace_s),
                          coalesce=True, replace_existing=True)

    async def _sync(self) -> None:
        """Make the APScheduler jobs match the active subscriptions' distinct schedules (one
        small query however many subscriptions there are; a fire reads its group's)."""
        assert self._aps is not None
        groups = set(await self._subs.groups())
        for key in self._groups - groups:
            with contextlib.suppress(Exception):
                self._aps.remove_job(_job_id(key))
        for key in groups - self._groups:
            self._add_job(key)
        self._groups = groups
        self.syncs += 1

    async def _fire_group(self, key: Group) -> None:
        """Fire every active subscription of one schedule (`JobRunner.fire_schedule`: a page
        at a time, set-based, each fire recorded once), in a task of its own."""
        now = datetime.now(UTC)
        self._runner.forget_reports_before((now - timedelta(days=1)).date().isoformat())
        fires = schedule_of_group(key).fires_between(now - timedelta(minutes=5), now)
        if fires:
            task = asyncio.create_task(self._runner.fire_schedule(key, fires[-1]))
            self._fires.add(task)
            task.add_done_callback(self._fires.discard)

    def reload(self) -> None:
        self._reload.set()


def _job_id(key: Group) -> str:
    return schedule_key(key)
