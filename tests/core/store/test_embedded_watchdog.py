"""The embedded server's watchdog (`core.store.pgwatch`, issue #28): it stops the server when
the last holder is gone, even one killed with -9, keeps it while any holder lives, exits
with the data dir, and comes back with `Database.supervise` (a restarted server, a killed
watchdog). The first tests stand a sleeping process in for the postmaster (its command line
names the data dir, as the real one's does); the last one runs the real server.

Every wait polls its condition with a generous bound.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from core.store import Database
from core.store.pgwatch import HOLDERS_FILE, WATCHDOG_FILE, ensure_watchdog, watchdog_pid

SLEEPER = "import signal, time; signal.signal(signal.SIGINT, lambda *_: exit(0)); time.sleep(600)"


def until[T](check: Callable[[], T], *, within_s: float, what: str) -> T:
    end = time.monotonic() + within_s
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"no {what} within {within_s:g} s"
        time.sleep(0.1)


async def until_async[T](check: Callable[[], T], *, within_s: float, what: str) -> T:
    """`until` that lets the event loop (the supervisor) run meanwhile."""
    end = time.monotonic() + within_s
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"no {what} within {within_s:g} s"
        await asyncio.sleep(0.1)


def gone(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return True


@pytest.fixture
def sleepers() -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def start(*argv: str) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-c", SLEEPER, *argv])
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def fake_data_dir(tmp_path: Path, start: Callable[..., subprocess.Popen[bytes]],
                  holders: list[int]) -> tuple[Path, subprocess.Popen[bytes]]:
    """A data dir with PG_VERSION, a holders' list and a 'postmaster' named by postmaster.pid
    whose command line names the data dir."""
    pgdata = tmp_path / "pgdata"
    pgdata.mkdir()
    (pgdata / "PG_VERSION").write_text("18\n")
    (pgdata / HOLDERS_FILE).write_text(json.dumps(holders))
    postmaster = start(str(pgdata))
    (pgdata / "postmaster.pid").write_text(f"{postmaster.pid}\n{pgdata}\n")
    return pgdata, postmaster


def test_the_server_is_kept_while_a_holder_lives_and_stopped_when_the_last_is_killed(
        tmp_path: Path, sleepers: Callable[..., subprocess.Popen[bytes]]) -> None:
    first, second = sleepers(), sleepers()
    pgdata, postmaster = fake_data_dir(tmp_path, sleepers, [first.pid, second.pid])
    t0 = time.monotonic()
    dog = ensure_watchdog(pgdata, tmp_path / "lock")
    started_s = time.monotonic() - t0
    assert watchdog_pid(pgdata) == dog and not gone(dog)
    assert ensure_watchdog(pgdata, tmp_path / "lock") == dog  # one per data dir
    assert dog not in [p.pid for p in psutil.Process().children(recursive=True)]  # detached

    os.kill(first.pid, signal.SIGKILL)
    first.wait()
    until(lambda: json.loads((pgdata / HOLDERS_FILE).read_text()) == [second.pid],
          within_s=30, what="the killed holder forgotten")
    assert postmaster.poll() is None and not gone(dog)  # the other holder keeps it

    os.kill(second.pid, signal.SIGKILL)
    t1 = time.monotonic()
    until(lambda: postmaster.poll() is not None, within_s=60, what="the server stopped")
    stopped_s = time.monotonic() - t1
    assert postmaster.returncode == 0  # a fast shutdown (SIGINT), not a kill
    until(lambda: gone(dog), within_s=30, what="the watchdog's exit")
    assert not (pgdata / WATCHDOG_FILE).exists()
    assert "no holder left" in (pgdata / "bullpen-watchdog.log").read_text()
    print(f"watchdog started in {started_s:.2f} s; server stopped {stopped_s:.2f} s "
          "after its last holder's death")


def test_the_watchdog_leaves_with_its_data_dir(
        tmp_path: Path, sleepers: Callable[..., subprocess.Popen[bytes]]) -> None:
    holder = sleepers()
    pgdata, postmaster = fake_data_dir(tmp_path, sleepers, [holder.pid])
    dog = ensure_watchdog(pgdata, tmp_path / "lock")
    until(lambda: (pgdata / "bullpen-watchdog.log").exists(), within_s=30,
          what="the watchdog watching")
    shutil.rmtree(pgdata)
    until(lambda: gone(dog), within_s=30, what="the watchdog's exit")
    # a server left without its data dir is stopped too, not left to run alone
    until(lambda: postmaster.poll() is not None, within_s=30, what="the server stopped")
    assert holder.poll() is None  # holders are never touched


async def test_supervise_restarts_the_server_and_the_watchdog_and_a_close_stops_both(
        tmp_path: Path) -> None:
    db = await Database.open(dsn=None, data_dir=tmp_path)
    server = db._server
    assert server is not None
    pgdata: Path = server.pgdata
    try:
        db.supervise(every_s=0.2)
        dog = watchdog_pid(pgdata)
        assert dog is not None
        assert dog not in [p.pid for p in psutil.Process().children(recursive=True)]

        os.kill(dog, signal.SIGKILL)  # the watchdog killed: the supervisor starts another
        await until_async(lambda: gone(dog), within_s=30, what="the watchdog's death")
        dog2 = await until_async(lambda: watchdog_pid(pgdata), within_s=30,
                                 what="a new watchdog")
        assert dog2 != dog and not gone(dog2)

        first_pm = server.get_pid()
        os.kill(first_pm, signal.SIGKILL)  # the server killed: started again, watched still

        await until_async(lambda: db.restarts >= 1, within_s=60, what="restart")
        assert await db.pool.fetchval("SELECT 1") == 1
        assert watchdog_pid(pgdata) == dog2
        second_pm = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
        assert second_pm != first_pm and not gone(second_pm)
    finally:
        await db.aclose()
        server.cleanup()  # what the last holder's exit does
    assert gone(second_pm)
    until(lambda: gone(dog2), within_s=30, what="the watchdog's exit")
    assert not (pgdata / WATCHDOG_FILE).exists()
