"""Real `bullpen` processes on their embedded PostgreSQL (no DATABASE_URL), killed with -9
(issue #28): the server is stopped by its watchdog within a minute of its last holder's
death, kept while another holder (a second `serve`, a `bullpen chat`) lives, started again
for a holder restarted at once, and still stopped by a clean exit.

`serve` and `chat` run the console (no platform configured) on a pipe kept open, so they
hold the database until killed or until the pipe is closed. Every wait polls its condition
with a generous bound.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from core.store.pgwatch import HOLDERS_FILE, watchdog_pid
from tests.bot.test_serve_faults import _ENV_DROP
from tests.warm_bullpen import COLD as BULLPEN


def until[T](check: Callable[[], T], *, within_s: float, what: str, logs: str = "") -> T:
    end = time.monotonic() + within_s
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < end, f"no {what} within {within_s:g} s\n{logs}"
        time.sleep(0.2)


def running(pid: int | None) -> bool:
    # a negative pid in postmaster.pid is a single-user backend (initdb still bootstrapping)
    if pid is None or pid <= 0:
        return False
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def postmaster(pgdata: Path) -> int | None:
    """The running postmaster of the data dir, if any."""
    try:
        pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if running(pid) else None


def holders(pgdata: Path) -> list[int]:
    try:
        return [int(p) for p in json.loads((pgdata / HOLDERS_FILE).read_text())]
    except (OSError, ValueError, TypeError):
        return []


class Bullpen:
    """`bullpen <command>` on `data_dir`'s embedded server, its console on an open pipe."""

    def __init__(self, command: str, data_dir: Path, log: Path) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
        env |= {"BULLPEN_DATA_DIR": str(data_dir), "BULLPEN_LOG_LEVEL": "INFO"}
        self.log = log
        with log.open("ab") as out:
            self.proc = subprocess.Popen([*BULLPEN, command], cwd=data_dir.parent, env=env,
                                         stdin=subprocess.PIPE, stdout=out,
                                         stderr=subprocess.STDOUT)
        self.pid = self.proc.pid

    def holding(self, pgdata: Path) -> bool:
        assert self.proc.poll() is None, f"exited {self.proc.returncode}\n{self.tail()}"
        return (self.pid in holders(pgdata) and postmaster(pgdata) is not None
                and watchdog_pid(pgdata) is not None)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def tail(self) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-30:])
        except OSError:
            return ""


@pytest.fixture
def bullpens(tmp_path: Path) -> Iterator[Callable[[str], Bullpen]]:
    data_dir = tmp_path / "data"
    started: list[Bullpen] = []

    def start(command: str) -> Bullpen:
        got = Bullpen(command, data_dir, tmp_path / f"{command}-{len(started)}.log")
        started.append(got)
        return got

    yield start
    for b in started:
        b.kill()
    pid = postmaster(data_dir / "pgdata")  # the watchdog should have seen to it; if not:
    if pid is not None:
        os.kill(pid, signal.SIGINT)


def _stopped_within(pgdata: Path, pm: int, dog: int, within_s: float, logs: str) -> float:
    """Seconds until the postmaster and its watchdog are gone."""
    t0 = time.monotonic()
    until(lambda: not running(pm), within_s=within_s, what="the server stopped", logs=logs)
    took = time.monotonic() - t0
    until(lambda: not running(dog), within_s=30, what="the watchdog's exit", logs=logs)
    assert postmaster(pgdata) is None
    return took


def test_two_holders_killed_with_9_the_server_lives_for_the_second_and_stops_after_it(
        tmp_path: Path, bullpens: Callable[[str], Bullpen]) -> None:
    pgdata = tmp_path / "data" / "pgdata"
    serve = bullpens("serve")
    until(lambda: serve.holding(pgdata), within_s=180, what="serve up", logs=serve.tail())
    chat = bullpens("chat")
    until(lambda: chat.holding(pgdata), within_s=180, what="chat up", logs=chat.tail())
    pm, dog = postmaster(pgdata), watchdog_pid(pgdata)
    assert pm is not None and dog is not None
    assert dog not in [p.pid for p in psutil.Process().children(recursive=True)]

    serve.kill()  # kill -9: no atexit, the library never hears of it
    until(lambda: serve.pid not in holders(pgdata), within_s=60,
          what="the killed serve forgotten")
    assert postmaster(pgdata) == pm and watchdog_pid(pgdata) == dog  # chat keeps it
    assert chat.proc.poll() is None

    chat.kill()
    took = _stopped_within(pgdata, pm, dog, 60, chat.tail())
    print(f"server stopped {took:.1f} s after its last holder was killed")


def test_a_holder_restarted_at_once_keeps_a_watched_server_and_a_clean_exit_stops_it(
        tmp_path: Path, bullpens: Callable[[str], Bullpen]) -> None:
    pgdata = tmp_path / "data" / "pgdata"
    first = bullpens("chat")
    until(lambda: first.holding(pgdata), within_s=180, what="chat up", logs=first.tail())

    first.kill()
    again = bullpens("chat")  # restarted at once, racing the watchdog
    until(lambda: again.holding(pgdata), within_s=180, what="chat up again",
          logs=again.tail())
    pm, dog = postmaster(pgdata), watchdog_pid(pgdata)
    assert pm is not None and dog is not None

    assert again.proc.stdin is not None
    again.proc.stdin.close()  # EOF: the console leaves, the process exits cleanly
    assert again.proc.wait(timeout=120) == 0, again.tail()
    took = _stopped_within(pgdata, pm, dog, 60, again.tail())
    print(f"server stopped {took:.1f} s after a clean exit")
