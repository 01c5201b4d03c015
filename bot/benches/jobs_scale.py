"""`bullpen bench jobs_scale`: the scheduler's own cost at scale, without the platform's send.

Three figures, each on a fresh database (an embedded Postgres in a temp dir, or a temporary
database on `database_url`), subscriptions COPY'd in as `bullpen bench jobs` does:

- `fire`: `fire` (10,000) subscriptions due at this minute over `symbols` (200) symbol sets,
  one schedule; the time from the leader's cron job starting (`Scheduler._fire_group`, as
  APScheduler calls it) until every fire is recorded and its delivery stored in the outbox
  table (`PostgresOutbox` without a sender: sending is the platform's rate limit, which `bullpen
  bench jobs` measures). Then the rows are counted: deliveries per chat (duplicates, lost) and
  `job_fires` by status.
- `load`: `load` (100,000) subscriptions over 144 schedules (24 times x 3 zones x 2
  recurrences), created 8 days ago; what a new leader does before it serves its first fire:
  the jobs matched to the schedules (`Scheduler._sync`) and the catch-up (fires missed in the
  past week recorded once, fires within the grace period fired), the first time (nothing
  recorded yet) and again (every past fire recorded: a restart's steady state).
- `change`: on that database, the real `Scheduler` leading (advisory lock, LISTEN); one
  `/subscribe` (`SubscriptionsRepo.subscribe`) on a new schedule and one on an existing one;
  the time until the scheduler has the job, and how many full re-reads (`_sync`) it cost.

Beside each: the longest stall of the event loop while it ran (a 5 ms ticker's worst lateness),
since all of this runs inside `bullpen serve`'s loop, beside the chats. The report builder is
`bullpen bench jobs`' counting one (a short text per symbol set): this measures scheduling and
storing, not report building.

Targets (issue 34 item 3): `fire.fire_s` under 5 s for 10,000; `load.load_s` (sync + catch-up
at a restart) under 1 s for 100,000; a change picked up without re-reading every subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.benches.fairness import LoadWatch
from bot.benches.jobs import (
    CHAT_BASE,
    CountingBuilder,
    _database,
    _server,
    insert_subscriptions,
    subscription_rows,
    symbol_set,
)

TARGET_FIRE_S = 5.0
TARGET_LOAD_S = 1.0
DIRECTION = "every *_s and *_ms figure: lower is better; duplicates and lost must be 0"


class LoopStall:
    """The worst lateness of a 5 ms ticker on the running loop: how long the loop was held."""

    TICK_S = 0.005

    def __init__(self) -> None:
        self.worst_s = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            start = loop.time()
            await asyncio.sleep(self.TICK_S)
            self.worst_s = max(self.worst_s, loop.time() - start - self.TICK_S)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[LoopStall]:
        self.worst_s = 0.0
        self._task = asyncio.create_task(self._tick())
        await asyncio.sleep(0)
        try:
            yield self
        finally:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    @property
    def worst_ms(self) -> float:
        return round(self.worst_s * 1000, 1)


async def _timed(make: Callable[[], Awaitable[Any]]) -> tuple[Any, float, float]:
    """(result, seconds, worst loop stall in ms) of `await make()`."""
    stall = LoopStall()
    async with stall.watching():
        t0 = time.perf_counter()
        got = await make()
        took = time.perf_counter() - t0
    return got, round(took, 3), stall.worst_ms


def _parts(dsn: str, pool: Any) -> tuple[Any, Any, Any]:
    """(subscriptions repo, runner, scheduler) on `pool`: the runner on the real outbox table
    without a sender, the scheduler with its APScheduler set as a leader's is."""
    from bot.outbox import AdapterRegistry, PostgresOutbox
    from core.store.deliveries import DeliveriesRepo
    from core.store.subscriptions import SubscriptionsRepo
    from jobs.runner import JobRunner
    from jobs.scheduler import Scheduler

    subs = SubscriptionsRepo(pool)
    runner = JobRunner(subscriptions=subs, outbox=PostgresOutbox(
        DeliveriesRepo(pool), AdapterRegistry()), build=CountingBuilder())
    scheduler = Scheduler(dsn=dsn, subscriptions=subs, runner=runner)
    return subs, runner, scheduler


async def measure_fire(server: str, n: int, symbols: int) -> dict[str, Any]:
    from core.store import Database

    fire = datetime.now(UTC).replace(second=0, microsecond=0)
    key = (fire.strftime("%H:%M"), "daily", "UTC", "")
    async with _database(server) as dsn:
        db = await Database.open(dsn=dsn, data_dir=Path(tempfile.gettempdir()))
        try:
            await insert_subscriptions(db.pool, [
                (CHAT_BASE + i, symbol_set(i % symbols), key[0], "daily", "UTC", None)
                for i in range(n)])
            await db.pool.execute("ANALYZE subscriptions")
            _, runner, scheduler = _parts(dsn, db.pool)

            async def fire_group() -> None:
                await scheduler._fire_group(key)
                while scheduler._fires:
                    await asyncio.gather(*list(scheduler._fires))

            _, took, stall = await _timed(fire_group)
            per_chat = await db.pool.fetch(
                "SELECT chat_id, count(*) AS n FROM deliveries GROUP BY chat_id")
            fires = await db.pool.fetch(
                "SELECT status, count(*) AS n FROM job_fires GROUP BY status")
            reports = runner.reports_built
        finally:
            await db.aclose()
    delivered = len(per_chat)
    return {"subscriptions": n, "symbol_sets": symbols, "fire_s": round(took, 3),
            "per_fire_ms": round(took / n * 1000, 3) if n else None,
            "loop_stall_max_ms": stall, "delivered_chats": delivered,
            "deliveries": sum(r["n"] for r in per_chat),
            "duplicates": sum(r["n"] - 1 for r in per_chat), "lost": n - delivered,
            "job_fires": {r["status"]: r["n"] for r in fires}, "reports_built": reports,
            "what": "Scheduler._fire_group (the cron job of one schedule) until every fire is "
                    "recorded and its delivery stored (no platform send)"}




async def _takeover(runner: Any, scheduler: Any) -> Any:
    """What a new leader runs after `_sync`, before its first cron fire."""
    catch_up = getattr(scheduler, "_catch_up", None)
    if catch_up is not None:
        return await catch_up()
    now = datetime.now(UTC)
    await runner.resume()
    return await runner.due(now, since=now - timedelta(days=7))


async def measure_load_and_change(server: str, n: int) -> dict[str, Any]:
    from core.store import Database
    from jobs.scheduler import Scheduler

    async with _database(server) as dsn:
        db = await Database.open(dsn=dsn, data_dir=Path(tempfile.gettempdir()))
        try:
            await insert_subscriptions(db.pool, subscription_rows(n))
            await db.pool.execute(
                "UPDATE subscriptions SET created_at = now() - interval '8 days'")
            await db.pool.execute("VACUUM ANALYZE subscriptions")
            subs, runner, scheduler = _parts(dsn, db.pool)
            from apscheduler.schedulers.asyncio import AsyncIOScheduler

            scheduler._aps = AsyncIOScheduler(timezone=UTC)
            _, sync_s, sync_stall = await _timed(scheduler._sync)
            first, first_s, first_stall = await _timed(lambda: _takeover(runner, scheduler))
            _, again_s, again_stall = await _timed(lambda: _takeover(runner, scheduler))
            fires = {r["status"]: r["n"] for r in await db.pool.fetch(
                "SELECT status, count(*) AS n FROM job_fires GROUP BY status")}
            load = {"subscriptions": n, "schedules": len(scheduler._groups),
                    "sync_s": sync_s, "sync_loop_stall_max_ms": sync_stall,
                    "catch_up_first_s": first_s, "catch_up_first_loop_stall_max_ms": first_stall,
                    "catch_up_again_s": again_s, "catch_up_again_loop_stall_max_ms": again_stall,
                    "load_s": round(sync_s + again_s, 3),
                    "job_fires_after": fires,
                    "fired_in_catch_up_first": sum(1 for r in first if r.status != "missed"),
                    "what": "a new leader before its first fire: Scheduler._sync (jobs matched "
                            "to the schedules) + the catch-up (resume, a week of missed fires "
                            "recorded once, fires within the grace period fired); load_s = "
                            "sync + catch-up again (a restart's steady state)"}

            # the real scheduler leading on this database: LISTEN, NOTIFY, the periodic reload
            live = Scheduler(dsn=dsn, subscriptions=subs, runner=runner, check_s=0.2)
            syncs: list[float] = []
            real_sync = live._sync

            async def counted_sync() -> None:
                t0 = time.perf_counter()
                await real_sync()
                syncs.append(time.perf_counter() - t0)

            live._sync = counted_sync  # type: ignore[method-assign]
            await live.start()
            try:
                await _until(lambda: live.is_leader and live._next_sync > 0, 300,
                             "the takeover (sync and catch-up)")
                owner = await db.pool.fetchval("SELECT owner_id FROM subscriptions LIMIT 1")
                change: dict[str, Any] = {}
                for name, at in (("new_schedule", "23:59"), ("existing_schedule", "07:00")):
                    before = len(syncs)
                    _, took, stall = await _timed(
                        functools.partial(_subscribe_and_wait, live, subs, owner, at))
                    change[name] = {"subscribe_to_scheduler_s": took, "loop_stall_max_ms": stall,
                                    "full_resyncs": len(syncs) - before,
                                    "resync_s": round(sum(syncs[before:]), 3)}
            finally:
                await live.aclose()
            change["what"] = ("one /subscribe (SubscriptionsRepo.subscribe) until the leading "
                              "Scheduler has it (LISTEN/NOTIFY on bullpen_subscriptions); "
                              "full_resyncs: Scheduler._sync runs it cost")
        finally:
            await db.aclose()
    return {"load": load, "change": change}


async def _until(check: Callable[[], bool], within_s: float, what: str) -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while not check():
        if loop.time() > end:
            raise TimeoutError(f"not within {within_s} s: {what}")
        await asyncio.sleep(0.002)


async def _subscribe_and_wait(live: Any, subs: Any, owner: Any, at: str) -> None:
    """One /subscribe at `at` (weekdays, New York), until the leader has it: its schedule has a
    job, after a full resync or a change applied (`Scheduler.syncs` + `Scheduler.changes`)."""
    from core.types import ChatRef

    seen = live.syncs + getattr(live, "changes", 0)
    got = await subs.subscribe(
        owner_id=owner, chat=ChatRef(platform="telegram", chat_id=f"bench-{at}"),
        symbols=["NEW"], at_time=at, recurrence="weekdays", tz="America/New_York",
        calendar=None, lang="en")
    assert got.sub is not None
    group = (at, "weekdays", "America/New_York", "")
    await _until(lambda: group in live._groups
                 and live.syncs + getattr(live, "changes", 0) > seen, 30, f"/subscribe at {at}")


async def measure(*, fire: int, load: int, symbols: int,
                  database_url: str | None) -> dict[str, Any]:
    watch = LoadWatch()
    with tempfile.TemporaryDirectory(prefix="bench-jobs-scale-") as tmp:
        async with _server(database_url, Path(tmp)) as server:
            fired = await measure_fire(server, fire, symbols)
            loaded = await measure_load_and_change(server, load)
    out: dict[str, Any] = {"bench": "jobs_scale", "fire": fired, **loaded}
    out["targets"] = {"fire_s_max": TARGET_FIRE_S, "load_s_max": TARGET_LOAD_S,
                      "change_full_resyncs": 0}
    out["met"] = {
        "fire_s": fired["fire_s"] < TARGET_FIRE_S and fired["duplicates"] == 0
        and fired["lost"] == 0,
        "load_s": loaded["load"]["load_s"] < TARGET_LOAD_S,
        "change_full_resyncs": all(v["full_resyncs"] == 0 for k, v in loaded["change"].items()
                                   if isinstance(v, dict)),
    }
    out["within_target"] = all(out["met"].values())
    out["direction"] = DIRECTION
    out.update(watch.fields())
    return out


def run(*, repeat: int = 1, fire: int = 10_000, load: int = 100_000, symbols: int = 200,
        database_url: str | None = None) -> dict[str, Any]:
    """One round (`repeat` is accepted for the CLI; the figures are single runs)."""
    return asyncio.run(measure(fire=fire, load=load, symbols=symbols,
                               database_url=database_url))


if __name__ == "__main__":
    print(json.dumps(run(), indent=2, default=str))
