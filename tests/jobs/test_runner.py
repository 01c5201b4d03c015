"""Firing subscriptions on real Postgres: each fire recorded once (twice in a row, two processes
at once), missed fires past the grace period, a crash between recording and handing over
resumed once, one report per distinct (symbols, language), the watchlist read at fire time,
removed subscriptions and their pending deliveries. Only the report builder is a stand-in (a
fast one that counts its calls); the store, the outbox and the runner are the real ones."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest

from bot.outbox import AdapterRegistry, PostgresOutbox
from core.store import Database, DeliveriesRepo, Store, Subscription, SubscriptionsRepo
from core.testing import RecordingAdapter
from core.types import ChatRef
from jobs.report import Report, report_key
from jobs.runner import JobRunner, delivery_key

# a Monday, 30 s after the 08:00 UTC fire of a daily subscription (after any created_at)
FIRE = datetime(2030, 1, 7, 8, 0, tzinfo=UTC)
AT = FIRE + timedelta(seconds=30)


class FakeBuilder:
    """A report builder that answers at once (or after `delay`) and counts its calls."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.calls: list[tuple[tuple[str, ...], str, bool]] = []

    async def __call__(self, symbols: Sequence[str], *, lang: str = "en", llm: Any = None,
                       pdf: bool = False) -> Report:
        self.calls.append((tuple(symbols), lang, pdf))
        if self.delay:
            await asyncio.sleep(self.delay)
        lg = "zh" if lang == "zh" else "en"
        return Report(symbols=list(symbols), lang=lg, data_date=None, rows=[], errors=[],
                      text=f"report {','.join(symbols)} {lg}", narrative="",
                      narrative_source="offline template", key=report_key(symbols, lg, None))


async def no_sleep(_: float) -> None:
    await asyncio.sleep(0)


@dataclass
class Env:
    """One "process": its repositories, outbox (sender not started) and runner."""

    db: Database
    store: Store
    subs: SubscriptionsRepo
    deliveries: DeliveriesRepo
    adapter: RecordingAdapter
    outbox: PostgresOutbox
    build: FakeBuilder
    runner: JobRunner

    async def user(self, uid: str = "u1") -> UUID:
        return await self.store.accounts.user_for("test", uid, uid)

    async def add(self, *, symbols: Sequence[str] = ("NVDA",), chat: str = "c1",
                  lang: str = "en", at_time: str = "08:00", owner: UUID | None = None,
                  **options: Any) -> Subscription:
        return await self.subs.add(
            owner_id=owner or await self.user(), chat=ChatRef(platform="test", chat_id=chat),
            symbols=list(symbols), at_time=at_time, recurrence="daily", tz="UTC",
            calendar=None, lang=lang, options=options)

    async def count(self, table: str, where: str = "true") -> int:
        return int(await self.db.pool.fetchval(f"SELECT count(*) FROM {table} WHERE {where}"))


def make_env(db: Database, tmp_path: Path, *, build: FakeBuilder | None = None,
             adapter: RecordingAdapter | None = None, grace_s: float = 3600.0) -> Env:
    store = Store(db, files_dir=tmp_path)
    adapter = adapter or RecordingAdapter()
    registry = AdapterRegistry()
    registry.add(adapter)
    outbox = PostgresOutbox(store.deliveries, registry, sleep=no_sleep)
    build = build or FakeBuilder()
    runner = JobRunner(subscriptions=store.subscriptions, outbox=outbox, grace_s=grace_s,
                       build=build)
    return Env(db, store, store.subscriptions, store.deliveries, adapter, outbox, build, runner)


@pytest.fixture
def env(pg_db: Database, tmp_path: Path) -> Env:
    return make_env(pg_db, tmp_path)


def statuses(results: Sequence[Any]) -> list[str]:
    return [r.status for r in results]


async def test_due_twice_at_the_same_instant_fires_once(env: Env) -> None:
    sub = await env.add()
    first = await env.runner.due(AT)
    assert [(r.subscription_id, r.fire_at, r.status) for r in first] == [(sub.id, FIRE, "done")]
    assert first[0].delivery_key == delivery_key(sub, FIRE)
    assert delivery_key(sub, FIRE).startswith("push:") and delivery_key(sub, FIRE).endswith(
        ":2030-01-07T08:00Z")
    again = await env.runner.due(AT)
    assert statuses(again) == ["skipped"]
    assert await env.count("job_fires") == 1
    assert await env.count("job_fires", "status = 'done'") == 1
    assert await env.count("deliveries") == 1
    assert len(env.build.calls) == 1
    await env.outbox.drain()
    assert env.adapter.visible_text(sub.chat) == ["report NVDA en"]


async def test_two_processes_firing_at_once_fire_each_subscription_once(
        pg_dsn: str, tmp_path: Path) -> None:
    """Two runners, each with its own pool (two `serve` processes, or `serve` and
    `bullpen jobs due`), due at the same instant: every fire is recorded and delivered once."""
    a_db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    b_db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    try:
        adapter = RecordingAdapter()
        a = make_env(a_db, tmp_path, build=FakeBuilder(delay=0.01), adapter=adapter)
        b = make_env(b_db, tmp_path, build=FakeBuilder(delay=0.01), adapter=adapter)
        subs = [await a.add(symbols=[f"S{i % 4}"], chat=f"c{i}") for i in range(24)]
        ra, rb = await asyncio.gather(a.runner.due(AT), b.runner.due(AT))
        done = [r.subscription_id for r in ra + rb if r.status == "done"]
        assert sorted(done) == sorted(s.id for s in subs)
        assert statuses(ra + rb).count("skipped") == len(subs)
        assert await a.count("job_fires") == len(subs)
        assert await a.count("job_fires", "status = 'done'") == len(subs)
        assert await a.count("deliveries") == len(subs)
        await asyncio.gather(a.outbox.drain(), b.outbox.drain())
        for s in subs:
            assert adapter.visible_text(s.chat) == [f"report {s.symbols[0]} en"]
        assert len(adapter.ops) == len(subs)
    finally:
        await a_db.aclose()
        await b_db.aclose()


async def test_fires_older_than_the_grace_are_missed_and_newer_ones_catch_up(env: Env) -> None:
    """Down for three days: the fires of the first two days are recorded `missed` and deliver
    nothing; today's, within the grace period, runs once when the process comes back."""
    sub = await env.add()
    await env.db.pool.execute("UPDATE subscriptions SET created_at = $1", FIRE - timedelta(30))
    back_at = FIRE + timedelta(minutes=40)  # the process is back 40 min after today's fire
    results = await env.runner.due(back_at, since=back_at - timedelta(days=3))
    assert [(r.fire_at, r.status) for r in results] == [
        (FIRE - timedelta(days=2), "missed"), (FIRE - timedelta(days=1), "missed"),
        (FIRE, "done")]
    rows = await env.db.pool.fetch(
        "SELECT fire_at, status, delivery_key FROM job_fires ORDER BY fire_at")
    assert [(r["status"], r["delivery_key"]) for r in rows] == [
        ("missed", None), ("missed", None), ("done", delivery_key(sub, FIRE))]
    assert await env.count("deliveries") == 1
    assert len(env.build.calls) == 1
    # a second catch-up over the same window changes nothing
    assert statuses(await env.runner.due(back_at, since=back_at - timedelta(days=3))) == [
        "skipped"]
    assert await env.count("deliveries") == 1 and await env.count("job_fires") == 3
    # default window: (at - grace, at]; 61 min after the fire it is out of reach, not re-missed
    assert await env.runner.due(FIRE + timedelta(minutes=61)) == []
    # a fire just past the grace with `since` before it: missed, even by one second
    late = FIRE + timedelta(days=1, seconds=3601)
    assert [(r.fire_at, r.status) for r in await env.runner.due(
        late, since=FIRE)] == [(FIRE + timedelta(days=1), "missed")]
    assert await env.count("deliveries") == 1


async def test_resume_completes_a_fire_recorded_but_never_handed_over(env: Env) -> None:
    sub = await env.add()
    assert await env.subs.record_fire(sub.id, FIRE)  # ... and the process died here
    assert await env.count("deliveries") == 0
    assert await env.subs.unfinished_fires() == [(sub.id, FIRE)]
    resumed = await env.runner.resume()
    assert [(r.subscription_id, r.fire_at, r.status) for r in resumed] == [(sub.id, FIRE, "done")]
    assert await env.count("deliveries") == 1
    assert await env.count("job_fires", "status = 'done'") == 1
    assert await env.runner.resume() == []
    assert statuses(await env.runner.due(AT)) == ["skipped"]  # not fired again either
    assert len(env.build.calls) == 1
    await env.outbox.drain()
    assert env.adapter.visible_text(sub.chat) == ["report NVDA en"]


async def test_resume_after_a_crash_between_handing_over_and_recording_it(env: Env) -> None:
    """The delivery was stored but `finish_fires` never ran: resuming hands it over again under
    the same key, which the outbox already holds, so nothing is sent twice."""
    sub = await env.add()
    assert statuses(await env.runner.due(AT)) == ["done"]
    await env.db.pool.execute("UPDATE job_fires SET status = 'fired', delivery_key = NULL")
    assert statuses(await env.runner.resume()) == ["done"]
    assert await env.count("deliveries") == 1
    assert await env.runner.resume() == []
    await env.outbox.drain()
    assert env.adapter.visible_text(sub.chat) == ["report NVDA en"]


async def test_one_report_per_distinct_symbols_and_language(env: Env) -> None:
    owner = await env.user()
    specs = [(["NVDA", "AAPL"], "en"), (["NVDA", "AAPL"], "en"), (["AAPL", "NVDA"], "en"),
             (["NVDA", "AAPL"], "zh"), (["TSLA"], "en"), (["TSLA"], "en")]
    subs = [await env.add(symbols=s, lang=lang, chat=f"c{i}", owner=owner)
            for i, (s, lang) in enumerate(specs)]
    assert statuses(await env.runner.due(AT)) == ["done"] * len(subs)
    assert sorted((tuple(sorted(c[0])), c[1]) for c in env.build.calls) == [
        (("AAPL", "NVDA"), "en"), (("AAPL", "NVDA"), "zh"), (("TSLA",), "en")]
    assert env.runner.reports_built == 3
    assert await env.count("deliveries") == len(subs)
    # the scheduler fires a group's subscriptions concurrently: still one build per report
    env.build.delay = 0.05
    next_day = FIRE + timedelta(days=1)
    results = await asyncio.gather(*(env.runner.fire(s, next_day) for s in subs))
    assert statuses(results) == ["done"] * len(subs)
    assert len(env.build.calls) == 6 and env.runner.reports_built == 6
    await env.outbox.drain()
    for s, (_, lang) in zip(subs, specs, strict=True):
        texts = env.adapter.visible_text(s.chat)
        assert len(texts) == 2 and all(t.endswith(f" {lang}") for t in texts)


async def test_a_watchlist_subscription_reads_the_watchlist_at_fire_time(env: Env) -> None:
    ann, bob, chen = await env.user("ann"), await env.user("bob"), await env.user("chen")
    follows = await env.add(symbols=[], owner=ann, chat="ann")
    empty = await env.add(symbols=[], owner=bob, chat="bob")
    empty_zh = await env.add(symbols=[], owner=chen, chat="chen", lang="zh")
    await env.subs.watch(ann, ["NVDA", "AAPL"])  # after subscribing: read when it fires
    assert statuses(await env.runner.due(AT)) == ["done"] * 3
    assert env.build.calls == [(("NVDA", "AAPL"), "en", False)]
    await env.outbox.drain()
    assert env.adapter.visible_text(follows.chat) == ["report NVDA,AAPL en"]
    [text] = env.adapter.visible_text(empty.chat)
    assert "watchlist is empty" in text and "/watchlist add" in text
    [text_zh] = env.adapter.visible_text(empty_zh.chat)
    assert "自选为空" in text_zh
    # the next day the watchlist has changed: the report follows it
    await env.subs.unwatch(ann, ["NVDA"])
    await env.runner.due(AT + timedelta(days=1))
    assert env.build.calls[-1] == (("AAPL",), "en", False)


async def test_a_removed_subscription_does_not_fire_and_its_pending_delivery_is_cancelled(
        env: Env) -> None:
    kept = await env.add(chat="keep")
    gone = await env.add(chat="gone")
    assert await env.subs.remove(gone.chat, gone.id) == [gone.id]
    assert [r.subscription_id for r in await env.runner.due(AT)] == [kept.id]
    assert await env.count("job_fires", f"subscription_id = {gone.id}") == 0
    assert await env.count("deliveries", f"subscription_id = {gone.id}") == 0

    # fired, stored, not yet sent; then unsubscribed: the sender must not send it
    later = await env.add(chat="later")
    next_day = AT + timedelta(days=1)
    assert {r.subscription_id for r in await env.runner.due(next_day)} == {kept.id, later.id}
    assert await env.subs.remove(later.chat, None) == [later.id]
    assert await env.deliveries.cancel_for_subscription(later.id) == 1
    assert await env.deliveries.cancel_for_subscription(later.id) == 0
    # a fire recorded for it but never handed over is not resumed either
    await env.subs.record_fire(later.id, FIRE + timedelta(days=5))
    assert await env.runner.resume() == []
    await env.outbox.drain()
    assert env.adapter.visible_text(later.chat) == []
    assert env.adapter.visible_text(kept.chat) == ["report NVDA en"] * 2
    last = await env.deliveries.last_for_subscription(later.id)
    assert last is not None and last.status == "cancelled"


async def test_identical_subscriptions_of_one_chat_deliver_one_report_per_fire(
        pg_dsn: str, tmp_path: Path) -> None:
    """Issue 28: 200 identical subscriptions (stored before /subscribe refused them) used to
    fire 200 identical reports into one chat in the same minute. The outbox key is the chat,
    what the push says and the fire time: identical ones (symbols in any order) deliver once,
    even fired by two processes at once; each fire is still recorded. Another chat, another
    language or other options are other pushes."""
    a_db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    b_db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    try:
        adapter = RecordingAdapter()
        a = make_env(a_db, tmp_path, build=FakeBuilder(delay=0.01), adapter=adapter)
        b = make_env(b_db, tmp_path, build=FakeBuilder(delay=0.01), adapter=adapter)
        owner = await a.user()
        same = [await a.add(symbols=s, owner=owner) for s in (["NVDA", "AAPL"], ["NVDA", "AAPL"],
                                                               ["AAPL", "NVDA"])]
        others = [await a.add(symbols=["NVDA", "AAPL"], owner=owner, chat="c2"),
                  await a.add(symbols=["NVDA", "AAPL"], owner=owner, lang="zh"),
                  await a.add(symbols=["NVDA", "AAPL"], owner=owner, pdf=True)]
        ra, rb = await asyncio.gather(a.runner.due(AT), b.runner.due(AT))
        done = [r for r in ra + rb if r.status == "done"]
        assert sorted(r.subscription_id for r in done) == sorted(s.id for s in same + others)
        assert len({r.delivery_key for r in done if r.subscription_id in
                    {s.id for s in same}}) == 1
        assert await a.count("job_fires", "status = 'done'") == 6
        assert await a.count("deliveries") == 4
        await asyncio.gather(a.outbox.drain(), b.outbox.drain())
        shown = adapter.visible_text(same[0].chat)  # the three alike, zh, and with a PDF
        assert len(shown) == 3 and sorted(t[-2:] for t in shown) == ["en", "en", "zh"]
        assert len(adapter.visible_text(others[0].chat)) == 1
        # the next fire time is another push: once again
        await a.runner.due(AT + timedelta(days=1))
        await a.outbox.drain()
        assert len(adapter.visible_text(same[0].chat)) == 6
    finally:
        await a_db.aclose()
        await b_db.aclose()


class CountingPool:
    """The pool, counting the statements sent through it (a connection taken from it counts
    each statement run on it)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        self.statements = 0

    def __getattr__(self, name: str) -> Any:
        got = getattr(self._pool, name)
        if name in ("fetch", "fetchrow", "fetchval", "execute", "executemany"):
            self.statements += 1
        if name == "acquire":
            return lambda: _CountingAcquire(self, got())
        return got


class _CountingAcquire:
    def __init__(self, owner: CountingPool, ctx: Any) -> None:
        self._owner, self._ctx = owner, ctx

    async def __aenter__(self) -> Any:
        return CountingConn(self._owner, await self._ctx.__aenter__())

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._ctx.__aexit__(*exc)


class CountingConn:
    def __init__(self, owner: CountingPool, conn: Any) -> None:
        self._owner, self._conn = owner, conn

    def __getattr__(self, name: str) -> Any:
        if name in ("fetch", "fetchrow", "fetchval", "execute", "executemany"):
            self._owner.statements += 1
        return getattr(self._conn, name)


async def test_thousands_of_due_subscriptions_fire_in_a_few_statements(env: Env) -> None:
    """A fan-out is set-based: 2,000 due subscriptions (1,500 on symbols, 500 on their owners'
    watchlists) are recorded, stored in the outbox and finished in a statement or a few per
    FIRE_BATCH, not several per subscription (which cost ~5 ms each: 48 s for 10,000)."""
    owner = await env.user()
    await env.subs.watch(owner, ["AAPL", "MSFT"])
    await env.db.pool.execute(
        "INSERT INTO subscriptions (owner_id, platform, chat_id, chat, kind, symbols, at_time,"
        " recurrence, tz, calendar, lang, options)"
        " SELECT $1, 'test', 'c' || i, jsonb_build_object('platform', 'test', 'chat_id', 'c' || i),"
        " 'report', CASE WHEN i % 4 = 0 THEN '{}'::text[] ELSE ARRAY['S' || (i % 7)] END,"
        " '08:00', 'daily', 'UTC', NULL, CASE WHEN i % 2 = 0 THEN 'zh' ELSE 'en' END, '{}'"
        " FROM generate_series(1, 2000) AS i", owner)
    counted = CountingPool(env.db.pool)
    outbox = PostgresOutbox(DeliveriesRepo(counted), AdapterRegistry(), sleep=no_sleep)
    runner = JobRunner(subscriptions=SubscriptionsRepo(counted), outbox=outbox,
                       build=env.build)
    results = await runner.due(AT)
    assert statuses(results) == ["done"] * 2000
    assert await env.count("deliveries") == 2000
    assert await env.count("job_fires", "status = 'done'") == 2000
    assert await env.count("deliveries", "items::text LIKE '%report AAPL,MSFT%'") == 500
    # 7 symbols x 2 languages, and the watchlist's (every fourth chat: all Chinese), once each
    assert len(env.build.calls) == 15
    # the schedules, then per page of FIRE_BATCH (500): the page read with its fires recorded
    # (one statement), the watchlists, the deliveries (rows + one NOTIFY), the removed check,
    # the outcomes; then an empty last page and the schedule's mark
    assert counted.statements <= 3 + 4 * 6, counted.statements
    again = await runner.due(AT)
    assert statuses(again) == ["skipped"] * 2000
