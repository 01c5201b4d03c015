"""`bullpen serve` under faults: real serve subprocesses against the Telegram fake in this test
process, one fresh database per test, killed with SIGKILL.

- a report fired while Telegram refuses every send (429 retry_after=30) survives `kill -9` of
  the process that holds it, and the next process delivers it exactly once;
- a 429 on every send for 60 s (retry_after 1..5 s) is waited out: the report arrives once,
  after the window, and the retries honour each retry_after;
- two serve processes on one database deliver a fire once, and when the scheduler's process is
  killed the other takes the schedule over and fires the next minute's subscription once.

Every wait is a bounded polling loop on an outcome (the fake shows it, the database records
it); one that gives up says what it waited for and the last state seen: the fake's last calls,
the inbound messages' states and the outbox's rows. Every process is killed in `finally`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import math
import os
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from core.store import Database, Store
from core.store.subscriptions import Subscription
from core.types import ChatRef
from jobs.runner import delivery_key, schedule_of
from jobs.scheduler import LOCK_KEY
from tests import warm_bullpen
from tests.fakes.telegram_server import FakeMessage, FakeTelegram, rate_limited

SENDS = frozenset({"sendMessage", "sendPhoto", "sendDocument", "editMessageText"})
_ENV_DROP = ("BULLPEN_", "DATABASE_URL", "TELEGRAM_", "DISCORD_", "SLACK_", "WECHAT_", "WECOM_")
# A serve's start-up (imports, migrations, an embedded server's initdb) is the part of a test
# that stretches most with the machine's load: it is waited for on its own event (the process
# polls Telegram) with this bound, and every later bound counts from there. Giving up, the wait
# says so with the process's log; a process that exits fails it at once.
STARTUP_S = 300.0
# the scheduler's advisory lock as pg_locks shows a bigint key: high and low 32 bits
_LOCK_HI, _LOCK_LO = LOCK_KEY >> 32, LOCK_KEY & 0xFFFF_FFFF


# --- the Telegram fake, with a time window in which every send is refused -------------------


class RefusingTelegram(FakeTelegram):
    """FakeTelegram that answers every send with 429 while a refusal window is open.

    `refuse(for_s=..., retry_after=(...))` opens the window (`math.inf`: until `lift()`);
    each refusal says the next `retry_after` of the cycle, and is recorded in `refused` as
    (method, monotonic time, retry_after)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.refuse_until: float | None = None
        self.refused: list[tuple[str, float, int]] = []
        self._retry_after: itertools.cycle[int] = itertools.cycle([30])
        self._from_first: float | None = None  # the window's length, once it is refused

    def refuse(self, *, for_s: float = math.inf, retry_after: Sequence[int] = (30,),
               from_first: bool = False) -> float:
        """Open the window; its end (monotonic). With `from_first` the `for_s` run from the
        first refusal, however late the first send comes (a report fired by a one-shot
        `bullpen` process that starts slowly on a busy machine): `refuse_until` is math.inf
        until then, and the window's end after."""
        self._retry_after = itertools.cycle(retry_after)
        self._from_first = for_s if from_first else None
        self.refuse_until = math.inf if from_first else time.monotonic() + for_s
        return self.refuse_until

    def lift(self) -> None:
        self.refuse_until = self._from_first = None

    def _inject(self, method: str, params: dict[str, Any]) -> None:
        if (method in SENDS and self.refuse_until is not None
                and time.monotonic() < self.refuse_until):
            wait = next(self._retry_after)
            if self._from_first is not None:  # the window starts now
                self.refuse_until = time.monotonic() + self._from_first
                self._from_first = None
            self.refused.append((method, time.monotonic(), wait))
            params["__refused__"] = wait  # the recorded call shows it (`Processes.state`)
            raise rate_limited(wait)
        super()._inject(method, params)

    def reports(self, chat_id: int) -> list[FakeMessage]:
        """The scheduled reports the chat shows (text messages naming NVDA with a narrative)."""
        return [m for m in self.bot_messages(chat_id)
                if m.kind == "text" and "NVDA" in m.text and "Narrative" in m.text]

    def photos(self, chat_id: int) -> list[FakeMessage]:
        return [m for m in self.bot_messages(chat_id) if m.kind == "photo"]


# --- serve processes -------------------------------------------------------------------------


@dataclass
class Serve:
    name: str
    proc: asyncio.subprocess.Process | warm_bullpen.WarmProcess
    log: Path
    polls_before: int = 0  # the Telegram fake's getUpdates count when this process started

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return f"--- {self.name} (rc={self.proc.returncode}) ---\n" + "\n".join(
            text.splitlines()[-lines:])

    async def kill(self) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.proc.wait(), timeout=30)


def _env(dsn: str, tmp_path: Path, name: str, tg: FakeTelegram) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
    sep = "&" if "?" in dsn else "?"
    if dsn:  # else serve starts its own embedded server under its data directory
        # asyncpg passes unknown DSN parameters as server settings: pg_stat_activity names
        # every connection of this process, the scheduler's lock connection included
        env["DATABASE_URL"] = f"{dsn}{sep}application_name={name}"
    env.update({
        "BULLPEN_DATA_DIR": str(tmp_path / name),
        "BULLPEN_LOG_LEVEL": "INFO",
        "BULLPEN_JOBS_LEADER_CHECK_S": "1",
        "TELEGRAM_BOT_TOKEN": tg.token,
        "TELEGRAM_API_BASE_URL": tg.base_url,
        "TELEGRAM_FILE_BASE_URL": tg.base_file_url,
    })
    return env


class Processes:
    """The serve processes of one test; all of them are SIGKILLed at the end."""

    def __init__(self, dsn: str, tmp_path: Path, tg: FakeTelegram, *,
                 extra_env: dict[str, str] | None = None) -> None:
        self.dsn = dsn
        self.tmp_path = tmp_path
        self.tg = tg
        self.extra_env = dict(extra_env or {})
        self.all: list[Serve] = []

    async def serve(self, name: str) -> Serve:
        log = self.tmp_path / f"{name}.log"
        polls = self.tg.polls
        proc = await warm_bullpen.start(
            ["serve"], cwd=self.tmp_path, log=log,
            env=_env(self.dsn, self.tmp_path, name, self.tg) | self.extra_env)
        got = Serve(name, proc, log, polls)
        self.all.append(got)
        return got

    async def started(self, serve: Serve, *, within_s: float = STARTUP_S) -> None:
        """`serve` has started: the Telegram fake heard a getUpdates after it was launched
        (its processes before it are dead or polled before: a kill and restart counts anew)."""

        async def polling() -> bool:
            return self.tg.polls > serve.polls_before

        await until(polling, within_s=within_s, what=f"{serve.name} polling Telegram",
                    procs=self, alive=[serve])

    async def bullpen(self, *args: str) -> list[dict[str, Any]]:
        """A one-shot `bullpen ...` on the same database; its JSON lines."""
        try:
            done = await asyncio.to_thread(
                warm_bullpen.run, args, cwd=self.tmp_path, timeout=120,
                env=_env(self.dsn, self.tmp_path, "cli", self.tg)
                | {"BULLPEN_LOG_LEVEL": "WARNING"})
        except subprocess.TimeoutExpired:
            raise AssertionError(f"`bullpen {' '.join(args)}` not done within 120 s\n"
                                 f"{await self.state()}\n{self.logs()}") from None
        assert done.returncode == 0, done.stderr
        return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]

    def logs(self) -> str:
        return "\n".join(s.tail() for s in self.all)

    async def settle(self, *, quiet_s: float, within_s: float) -> None:
        """The Telegram fake heard no call for `quiet_s` (nothing more is on its way);
        giving up after `within_s`, it says so with the last state seen."""
        try:
            await self.tg.settle(quiet_s=quiet_s, within_s=within_s)
        except TimeoutError:
            raise AssertionError(f"the Telegram fake not quiet for {quiet_s:g} s within"
                                 f" {within_s:g} s\n{await self.state()}\n{self.logs()}"
                                 ) from None

    async def state(self) -> str:
        """The last state seen, for a wait that gives up: the fake's last calls (refused
        ones marked), then the database's inbound messages and deliveries."""
        now = time.monotonic()
        lines = ["--- the Telegram fake's last calls (s before now) ---"]
        for c in self.tg.calls[-15:]:
            refused = c.params.get("__refused__")
            text = str(c.params.get("text") or c.params.get("caption") or "")[:60]
            lines.append(f"{c.t - now:8.1f} {c.method} chat={c.params.get('chat_id')}"
                         f" message={c.params.get('message_id', '-')}"
                         f"{f' 429 retry_after={refused}' if refused else ''} {text!r}")
        until = getattr(self.tg, "refuse_until", None)
        if until is not None:
            lines.append(f"refusal window ends {until - now:.1f} s from now")
        if not self.dsn:
            return "\n".join(lines)
        try:
            conn = await asyncpg.connect(self.dsn, timeout=10)
            try:
                inbound = await conn.fetch(
                    "SELECT chat_id, message_id, status, owner, placeholder, updated_at"
                    " FROM inbound_events ORDER BY id DESC LIMIT 6")
                deliveries = await conn.fetch(
                    "SELECT key, status, attempts, pieces_sent, last_error, next_attempt_at,"
                    " message_ids FROM deliveries ORDER BY id DESC LIMIT 6")
            finally:
                await conn.close()
        except (OSError, TimeoutError, asyncpg.PostgresError) as exc:
            lines.append(f"--- the database was not read: {type(exc).__name__}: {exc}")
            return "\n".join(lines)
        lines.append("--- inbound messages (newest first) ---")
        lines += [str(dict(r)) for r in inbound] or ["none"]
        lines.append("--- deliveries (newest first) ---")
        lines += [str(dict(r)) for r in deliveries] or ["none"]
        return "\n".join(lines)

    async def aclose(self) -> None:
        for s in self.all:
            await s.kill()


@contextlib.asynccontextmanager
async def setup(pg_dsn: str, tmp_path: Path) -> AsyncIterator[tuple[RefusingTelegram, Processes,
                                                                     Store]]:
    tg = RefusingTelegram()
    async with tg:
        procs = Processes(pg_dsn, tmp_path, tg)
        db = await Database.open(dsn=pg_dsn, data_dir=tmp_path / "test")
        try:
            yield tg, procs, Store(db, files_dir=tmp_path / "test" / "files")
        finally:
            await procs.aclose()
            await db.aclose()


async def until[T](check: Callable[[], Awaitable[T]], *, within_s: float, what: str,
                   procs: Processes | None = None, alive: Sequence[Serve] = (),
                   every_s: float = 0.2,
                   explain: Callable[[], Awaitable[str]] | None = None) -> T:
    """Poll `check` until it returns something truthy (bounded); the serve processes in
    `alive` must stay up meanwhile. Giving up, it says what it waited for, what `explain`
    says is missing, the last state seen (`Processes.state`) and the processes' logs."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while True:
        got = await check()
        if got:
            return got
        dead = [s.name for s in alive if not s.alive]
        if dead or loop.time() >= end:
            why = (f"{dead} exited while waiting for {what}" if dead
                   else f"no {what} within {within_s:g} s")
            seen = await procs.state() if procs is not None else ""
            logs = procs.logs() if procs is not None else ""
            missing = f"{await explain()}\n" if explain is not None else ""
            raise AssertionError(f"{why}\n{missing}{seen}\n{logs}")
        await asyncio.sleep(every_s)


async def delivery(store: Store, key: str) -> dict[str, Any] | None:
    row = await store.pool.fetchrow(
        "SELECT status, attempts, last_error, pieces_sent, created_at, next_attempt_at"
        " FROM deliveries WHERE key = $1", key)
    return dict(row) if row is not None else None


async def lock_holder(store: Store) -> str | None:
    """The application_name of the process holding the scheduler's lock on this database."""
    got: str | None = await store.pool.fetchval(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted"
        " AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        " AND l.classid::bigint = $1 AND l.objid::bigint = $2 AND l.objsubid = 1",
        _LOCK_HI, _LOCK_LO)
    return got


async def ready(store: Store, name: str) -> bool:
    """The process's outbox sender listens: the adapters started before it."""
    got = await store.pool.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1"
        " AND query LIKE 'LISTEN%bullpen_outbox%'", name)
    return bool(got)


async def subscribe(tg: RefusingTelegram, store: Store, procs: Processes, serve: Serve,
                    chat: int) -> Subscription:
    """The user's `/subscribe NVDA at 08:00`, answered (Telegram accepts the answer)."""
    await procs.started(serve)
    tg.push(tg.message(chat, "/subscribe NVDA at 08:00"))

    async def answered() -> bool:
        return any("Subscribed (#" in t for t in tg.texts(chat))

    await until(answered, within_s=90, what="answer to /subscribe", procs=procs, alive=[serve])
    [sub] = await store.subscriptions.for_chat(ChatRef(platform="telegram", chat_id=str(chat)))
    assert sub.symbols == ["NVDA"] and sub.at_time == "08:00"
    return sub


async def fire_due(procs: Processes, sub: Subscription, at: datetime) -> str:
    """`bullpen jobs due --at <at>`: the subscription fires once; its delivery key."""
    results = await procs.bullpen("jobs", "due", "--at", at.isoformat())
    mine = [r for r in results if r["subscription_id"] == sub.id]
    assert [r["status"] for r in mine] == ["done"], results
    key: str = mine[0]["delivery_key"]
    assert key == delivery_key(sub, at)
    return key


def assert_report_once(tg: RefusingTelegram, chat: int) -> None:
    reports, photos = tg.reports(chat), tg.photos(chat)
    assert len(reports) == 1, [m.text[:80] for m in tg.bot_messages(chat)]
    assert len(photos) == 1, [m.kind for m in tg.bot_messages(chat)]
    assert photos[0].data.startswith(b"\x89PNG")
    assert photos[0].message_id > reports[0].message_id  # the chart follows its text


# --- the tests -------------------------------------------------------------------------------


async def test_kill_9_between_fire_and_delivery_delivers_once_after_restart(
        pg_dsn: str, tmp_path: Path) -> None:
    chat = 910001
    async with setup(pg_dsn, tmp_path) as (tg, procs, store):
        a = await procs.serve("serve-a")
        sub = await subscribe(tg, store, procs, a, chat)
        tg.refuse(retry_after=(30,))  # from now on nothing goes out
        fire_at = schedule_of(sub).next_fire(datetime.now(UTC))
        key = await fire_due(procs, sub, fire_at)

        # serve A tried (NOTIFY woke it), Telegram said 429 retry_after=30: still pending
        async def refused_and_pending() -> bool:
            d = await delivery(store, key)
            return bool(tg.refused and d and d["status"] == "pending" and d["attempts"] >= 1
                        and "rate limited" in d["last_error"])

        await until(refused_and_pending, within_s=30, what="a refused, pending delivery",
                    procs=procs, alive=[a])
        assert tg.reports(chat) == [] and tg.photos(chat) == []

        await a.kill()
        assert a.proc.returncode == -signal.SIGKILL
        tg.lift()
        b = await procs.serve("serve-b")
        await procs.started(b)

        async def delivered() -> bool:
            d = await delivery(store, key)
            return bool(d and d["status"] == "delivered")

        # B honours the retry_after=30 A was told, then sends
        await until(delivered, within_s=90, what="the report delivered by serve B",
                    procs=procs, alive=[b])
        await procs.settle(quiet_s=1.0, within_s=20)
        assert_report_once(tg, chat)
        d = await delivery(store, key)
        assert d is not None and d["pieces_sent"] == 2
        n = await store.pool.fetchval("SELECT count(*) FROM deliveries WHERE subscription_id"
                                      " = $1", sub.id)
        assert n == 1


@pytest.mark.slow
async def test_a_429_on_every_send_for_60_s_still_delivers_once_after_it(
        pg_dsn: str, tmp_path: Path) -> None:
    chat = 910002
    window_s = 60.0
    async with setup(pg_dsn, tmp_path) as (tg, procs, store):
        a = await procs.serve("serve-a")
        sub = await subscribe(tg, store, procs, a, chat)
        # the 60 s start at the first send, not now: the report is fired by a one-shot
        # `bullpen` process whose start-up alone can take half a minute on a busy machine
        tg.refuse(for_s=window_s, retry_after=(1, 2, 3, 4, 5), from_first=True)
        fire_at = schedule_of(sub).next_fire(datetime.now(UTC))
        key = await fire_due(procs, sub, fire_at)

        statuses: set[str] = set()

        async def arrived() -> bool:
            d = await delivery(store, key)
            if d is not None:
                statuses.add(d["status"])
            return bool(tg.photos(chat)) and bool(d and d["status"] == "delivered")

        await until(arrived, within_s=window_s + 120, what="the report after the 429 window",
                    procs=procs, alive=[a], every_s=0.5)
        await procs.settle(quiet_s=1.0, within_s=20)
        end = tg.refuse_until
        assert end is not None and end < math.inf  # the window was opened by a refusal
        assert statuses <= {"pending", "delivered"}, statuses  # never given up
        assert_report_once(tg, chat)
        # not before the window closed
        assert all(m.sent_at >= end for m in tg.reports(chat) + tg.photos(chat))
        # it kept trying through the window, each time after the retry_after it was told
        refused = sorted(tg.refused, key=lambda r: r[1])
        assert len(refused) >= 10, refused
        assert refused[-1][1] >= end - 6.0, (refused[-1][1], end)
        for (_, t0, wait), (_, t1, _) in itertools.pairwise(refused):
            assert t1 - t0 >= wait - 0.2, (t0, wait, t1)


async def test_two_serves_deliver_once_and_the_schedule_moves_when_its_process_dies(
        pg_dsn: str, tmp_path: Path) -> None:
    chat_due, chat_cron = 910003, 910004
    async with setup(pg_dsn, tmp_path) as (tg, procs, store):
        serves = {s.name: s for s in [await procs.serve("serve-a"),
                                      await procs.serve("serve-b")]}
        for name in serves:
            await until(functools.partial(ready, store, name), within_s=STARTUP_S,
                        what=f"{name} ready", procs=procs, alive=list(serves.values()))
        leader_name = await until(functools.partial(lock_holder, store), within_s=30,
                                  what="a scheduler leader", procs=procs,
                                  alive=list(serves.values()))
        assert leader_name in serves
        leader = serves[leader_name]
        [survivor] = [s for s in serves.values() if s is not leader]

        subs = store.subscriptions
        owner = await store.accounts.user_for("telegram", str(chat_due), "due")
        # fired by hand below; its time is half a day away so the live schedulers never fire
        # it while the test runs (a fixed 08:00 would, when the suite runs at 08:00 UTC)
        far = (datetime.now(UTC) + timedelta(hours=12)).strftime("%H:%M")
        due_sub = await subs.add(
            owner_id=owner, chat=ChatRef(platform="telegram", chat_id=str(chat_due)),
            symbols=["NVDA"], at_time=far, recurrence="daily", tz="UTC", calendar=None,
            lang="en")

        # one fire, two senders: delivered once
        fire_at = schedule_of(due_sub).next_fire(datetime.now(UTC))
        key = await fire_due(procs, due_sub, fire_at)

        async def delivered(key: str) -> bool:
            d = await delivery(store, key)
            return bool(d and d["status"] == "delivered")

        await until(functools.partial(delivered, key), within_s=60,
                    what="the fired report delivered", procs=procs,
                    alive=list(serves.values()))
        await procs.settle(quiet_s=1.5, within_s=20)
        assert_report_once(tg, chat_due)

        # a subscription due at the next minute (>= 10 s away) in UTC, stored while the leader
        # still leads; then its process dies
        now = datetime.now(UTC)
        cron_at = (now + timedelta(seconds=10 + 60)).replace(second=0, microsecond=0)
        owner2 = await store.accounts.user_for("telegram", str(chat_cron), "cron")
        cron_sub = await subs.add(
            owner_id=owner2, chat=ChatRef(platform="telegram", chat_id=str(chat_cron)),
            symbols=["NVDA"], at_time=cron_at.strftime("%H:%M"), recurrence="daily",
            tz="UTC", calendar=None, lang="en")
        assert schedule_of(cron_sub).next_fire(now) == cron_at
        await leader.kill()
        killed = datetime.now(UTC)
        t0 = time.monotonic()

        async def survivor_leads() -> bool:
            return await lock_holder(store) == survivor.name

        await until(survivor_leads, within_s=30,
                    what="the survivor taking the scheduler's lock", procs=procs,
                    alive=[survivor])
        took_over_s = time.monotonic() - t0
        assert took_over_s < 30

        cron_key = delivery_key(cron_sub, cron_at)
        wait_s = (cron_at - datetime.now(UTC)).total_seconds() + 60
        await until(functools.partial(delivered, cron_key), within_s=wait_s,
                    what="the next minute's report from the survivor", procs=procs,
                    alive=[survivor], every_s=0.5)
        await procs.settle(quiet_s=1.5, within_s=20)
        assert_report_once(tg, chat_cron)
        fires = await store.pool.fetch(
            "SELECT fire_at, status, delivery_key FROM job_fires WHERE subscription_id = $1",
            cron_sub.id)
        assert [(r["fire_at"], r["status"], r["delivery_key"]) for r in fires] == [
            (cron_at, "done", cron_key)]
        rows = await store.pool.fetch(
            "SELECT key, created_at FROM deliveries WHERE subscription_id = $1", cron_sub.id)
        assert [r["key"] for r in rows] == [cron_key]
        assert rows[0]["created_at"] > killed  # fired by the survivor, after the kill
        assert_report_once(tg, chat_due)  # and the first fire was not sent again
