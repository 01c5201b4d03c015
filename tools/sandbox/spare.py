"""The warm start: a spare runner (`runner.py --spare`) started before it is needed.

A spare is an ordinary run (the same jail, user, limits and filter) whose process has already
imported numpy, pandas, pandas-ta and matplotlib, and waits for `go` on its stdin; the host
then writes the request into the spare's own work dir and says `go`. It serves exactly one run
and a new spare is started behind it, so no two runs ever share a process, a work dir or a
namespace (a long-lived zygote forking runs would share them).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path

from core.shutdown import settle

READY_TIMEOUT_S = 120.0


async def reaped(proc: asyncio.subprocess.Process) -> None:
    """Wait for a killed process's exit, but not for ever: CPython 3.12's `Process.wait()` can
    miss an exit (see `core.shutdown`); a jailed process killed is gone either way."""
    await settle(proc.wait(), what=f"the exit of sandbox process {proc.pid}")


class SpareGone(RuntimeError):
    """The spare ended or never got ready; the caller runs cold instead."""


class Spare:
    def __init__(self, proc: asyncio.subprocess.Process, workdir: Path) -> None:
        self.proc = proc
        self.workdir = workdir
        self.loop = asyncio.get_running_loop()

    @classmethod
    async def start(cls, argv: list[str], *, env: dict[str, str], workdir: Path) -> Spare:
        """Start the spare and wait until it says `ready`."""
        log = os.open(workdir / "runner.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=str(workdir), env=env, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, stderr=log, start_new_session=True)
        finally:
            os.close(log)
        spare = cls(proc, workdir)
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), READY_TIMEOUT_S)
        except (TimeoutError, asyncio.CancelledError):
            spare.kill()
            await reaped(proc)
            raise
        if line.strip() != b"ready":
            spare.kill()
            await reaped(proc)
            raise SpareGone("the warm sandbox process did not start")
        spare._stop_reading()
        return spare

    def _stop_reading(self) -> None:
        """Nothing more is read from a ready spare: its stdout pipe is closed on this side.
        CPython 3.12's `Process.wait()` also waits for every pipe to close (#119710), and a
        pipe left open and unread would tie the wait to what the jailed code does with fd 1."""
        transport = getattr(self.proc, "_transport", None)  # asyncio keeps it private
        pipe = transport.get_pipe_transport(1) if transport is not None else None
        if pipe is not None:
            pipe.close()

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def go(self) -> None:
        """Tell the spare its request is in place."""
        if not self.alive or self.proc.stdin is None:
            raise SpareGone("the warm sandbox process ended before its run")
        try:
            self.proc.stdin.write(b"go\n")
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise SpareGone("the warm sandbox process is gone") from exc
        self.proc.stdin.close()  # one line is all it reads; the wait then hangs on no pipe

    def kill(self) -> None:
        """Kill the spare's process group (bwrap and, with it, its namespace)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def kill_stale(self) -> None:
        """A spare of another (finished) event loop cannot be awaited: kill and reap by pid."""
        self.kill()
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.proc.pid, os.WNOHANG)
