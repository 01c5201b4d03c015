"""Stopping never hangs on one stuck part (`core.shutdown`): a task that swallows its
cancellation, a pool connection never given back, a worker that will not stop."""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import asyncpg
import pytest

import core.shutdown
import core.store.database
from core.shutdown import settle
from core.store import Database


async def _stubborn(started: asyncio.Event, release: asyncio.Event) -> None:
    """Ignores every cancellation until `release` (what a stuck close looks like)."""
    started.set()
    while not release.is_set():
        try:
            await release.wait()
        except asyncio.CancelledError:
            continue


async def test_a_task_that_swallows_its_cancellation_is_left_behind_with_its_stack(
        caplog: pytest.LogCaptureFixture) -> None:
    started, release = asyncio.Event(), asyncio.Event()
    task = asyncio.create_task(_stubborn(started, release), name="stubborn-close")
    await started.wait()
    task.cancel()
    begun = time.monotonic()
    with caplog.at_level(logging.ERROR, logger="core.shutdown"):
        ended = await settle(task, what="the stubborn close", within_s=0.3)
    assert ended is False and time.monotonic() - begun < 5
    assert "the stubborn close did not end within 0.3 s" in caplog.text
    assert "_stubborn" in caplog.text  # the stack names where it is stuck
    # asyncio.wait_for would still be waiting here: it waits for the cancelled task to end
    release.set()
    await task


async def test_what_ends_in_time_is_awaited_and_its_failure_raised() -> None:
    async def fails() -> None:
        raise ValueError("close failed")

    async def cancelled() -> None:
        raise asyncio.CancelledError

    assert await settle([asyncio.sleep(0.01), cancelled()], what="two closes") is True
    with pytest.raises(ValueError, match="close failed"):
        await settle(fails(), what="a failing close")
    assert await settle([], what="nothing") is True


async def test_a_pool_connection_never_given_back_does_not_hold_the_close(
        pg_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(core.store.database, "GRACE_S", 0.5)
    db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    held = await db.pool.acquire()  # a task that never gives it back
    begun = time.monotonic()
    with caplog.at_level(logging.ERROR):
        await asyncio.wait_for(db.aclose(), 30)
    assert time.monotonic() - begun < 10
    assert "was not given back" in caplog.text
    assert db.pool.is_closing()
    with pytest.raises(asyncpg.InterfaceError):  # the held connection went with the pool
        await held.fetchval("SELECT 1")


def test_the_grace_is_short_enough_for_a_service_manager() -> None:
    # systemd's default stop timeout is 90 s; a stop walks ~10 parts, few of them ever slow
    assert 1 <= core.shutdown.GRACE_S <= 15
