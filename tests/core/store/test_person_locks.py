"""One run per person across processes: Postgres advisory locks, two `PersonLocks` standing
for two processes on one real database."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from uuid import uuid4

import asyncpg
import pytest

from core.store.person_locks import PersonLocks, lock_key

Two = tuple[PersonLocks, PersonLocks]


@pytest.fixture
async def two(pg_dsn: str) -> AsyncIterator[Two]:
    """Two processes' locks on one database."""
    a, b = PersonLocks(pg_dsn, poll_s=0.05), PersonLocks(pg_dsn, poll_s=0.05)
    yield a, b
    await a.aclose()
    await b.aclose()


class Waits:
    def __init__(self) -> None:
        self.count = 0

    async def __call__(self) -> None:
        self.count += 1


async def test_a_person_running_in_one_process_waits_in_the_other(two: Two) -> None:
    a, b = two
    ann, bob = uuid4(), uuid4()
    release_a = await a.acquire(ann, Waits())
    waits = Waits()
    second = asyncio.create_task(b.acquire(ann, waits))
    await asyncio.sleep(0.3)
    assert not second.done() and waits.count == 1  # told once, however long it polls
    release_bob = await asyncio.wait_for(b.acquire(bob, Waits()), 5)  # others: not held
    await release_a()
    release_b = await asyncio.wait_for(second, 5)
    assert waits.count == 1
    await release_b()
    await release_bob()
    again = await asyncio.wait_for(a.acquire(ann, Waits()), 5)  # free again
    await again()


async def test_a_dead_process_leaves_no_one_locked(two: Two, pg_dsn: str) -> None:
    a, b = two
    ann = uuid4()
    await a.acquire(ann, Waits())
    conn = await asyncpg.connect(pg_dsn)
    try:  # the process holding it dies: Postgres drops its connection and the lock
        killed = await conn.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_locks"
            " WHERE locktype = 'advisory' AND granted"
            " AND ((classid::bigint << 32) | objid::bigint) = $1::bigint", lock_key(ann))
    finally:
        await conn.close()
    assert killed == 1
    release = await asyncio.wait_for(b.acquire(ann, Waits()), 5)
    await release()


async def test_stopped_while_waiting_leaves_nothing_held(two: Two) -> None:
    a, b = two
    ann = uuid4()
    release_a = await a.acquire(ann, Waits())
    waiting = asyncio.create_task(b.acquire(ann, Waits()))
    await asyncio.sleep(0.2)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await release_a()
    # neither process holds it now: each can take it and give it back
    for locks in (a, b):
        release = await asyncio.wait_for(locks.acquire(ann, Waits()), 5)
        await release()


async def test_without_a_database_runs_go_on_unlocked_and_it_is_logged_once(
        caplog: pytest.LogCaptureFixture) -> None:
    locks = PersonLocks("postgresql://nobody@127.0.0.1:9/none", poll_s=0.05)
    with caplog.at_level(logging.WARNING, logger="core.store.person_locks"):
        for _ in range(3):
            release = await asyncio.wait_for(locks.acquire(uuid4(), Waits()), 10)
            await release()
    warnings = [r for r in caplog.records if r.name == "core.store.person_locks"]
    assert len(warnings) == 1 and "this process only" in warnings[0].getMessage()
    await locks.aclose()


def test_keys_are_stable_signed_64_bit_and_differ_per_person() -> None:
    ann, bob = uuid4(), uuid4()
    assert lock_key(ann) == lock_key(ann) != lock_key(bob)
    assert -(2 ** 63) <= lock_key(ann) < 2 ** 63


class _LeftMidStatement:
    """A connection as asyncpg leaves one the server dropped mid-statement (the postmaster
    killed under load): its protocol refuses the next statement with InternalClientError."""

    terminated = False

    def is_closed(self) -> bool:
        return False

    async def fetchval(self, *args: object, **kwargs: object) -> object:
        raise asyncpg.InternalClientError(
            "cannot switch to state 12; another operation (2) is in progress")

    def terminate(self) -> None:
        self.terminated = True


async def test_a_connection_left_mid_statement_is_dropped_and_the_run_goes_on(
        pg_dsn: str) -> None:
    """Seen in a kill-load run: the error escaped `acquire` and the question was answered
    'something went wrong'. Now the connection is dropped, the run goes on unlocked, and the
    next run locks on a fresh connection."""
    from core.store.retry import transient

    assert transient(asyncpg.InternalClientError("cannot switch to state 12"))
    locks = PersonLocks(pg_dsn, poll_s=0.05)
    broken = _LeftMidStatement()
    locks._conn = broken  # type: ignore[assignment]
    release = await locks.acquire(uuid4(), Waits())
    await release()
    assert broken.terminated
    locks._down_until = 0.0
    ann = uuid4()
    release = await locks.acquire(ann, Waits())
    other = PersonLocks(pg_dsn, poll_s=0.05)
    assert not (await other._try(lock_key(ann)) or (False,))[0]  # really held again
    await release()
    await other.aclose()
    await locks.aclose()
