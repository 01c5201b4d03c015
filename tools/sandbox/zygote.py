"""The warm start: one long-lived process (`runner.py --zygote`) that has imported numpy,
pandas, pandas-ta and matplotlib once and forks a fresh runner per request, so a run skips the
~0.5 s of imports. Each forked runner is the same as a cold one from there on: its own session,
limits, namespaces, guard; the zygote itself never runs submitted code.

The zygote belongs to one `Sandbox` (its reader task too) and ends with `Sandbox.aclose()`, or
when the host dies (PR_SET_PDEATHSIG, and EOF on its stdin).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from pathlib import Path

RUNNER = Path(__file__).with_name("runner.py")
START_TIMEOUT_S = 120.0


class ZygoteGone(RuntimeError):
    """The warm process ended or never started; the caller runs cold instead."""


class Zygote:
    def __init__(self, proc: asyncio.subprocess.Process, home: Path) -> None:
        self.proc = proc
        self.home = home
        self.loop = asyncio.get_running_loop()
        self._started: dict[str, asyncio.Future[int]] = {}
        self._exited: dict[str, asyncio.Future[int]] = {}
        self._by_pid: dict[int, asyncio.Future[int]] = {}
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    async def start(cls, *, python: str, env: dict[str, str], home: Path) -> Zygote:
        proc = await asyncio.create_subprocess_exec(
            python, "-I", str(RUNNER), "--zygote", cwd=str(home), env=env,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True)
        assert proc.stdout is not None
        try:
            line = await asyncio.wait_for(proc.stdout.readline(), START_TIMEOUT_S)
        except TimeoutError:
            line = b""
        if line.strip() != b"ready":
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            raise ZygoteGone("the warm sandbox process did not start")
        zygote = cls(proc, home)
        zygote._reader = asyncio.create_task(zygote._read(), name="sandbox-zygote-reader")
        return zygote

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None and self._reader is not None \
            and not self._reader.done()

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            while line := await self.proc.stdout.readline():
                kind, pid_text, rest = [*line.decode().rstrip("\n").split(" ", 2), "", ""][:3]
                pid = int(pid_text) if pid_text.isdigit() else -1
                if kind == "started" and rest in self._started:
                    exited = self._exited.pop(rest)
                    self._by_pid[pid] = exited
                    self._started.pop(rest).set_result(pid)
                elif kind == "exited" and pid in self._by_pid:
                    fut = self._by_pid.pop(pid)
                    if not fut.done():
                        fut.set_result(int(rest) if rest.lstrip("-").isdigit() else -1)
        finally:
            gone = ZygoteGone("the warm sandbox process ended")
            for fut in [*self._started.values(), *self._exited.values(),
                        *self._by_pid.values()]:
                if not fut.done():
                    fut.set_exception(gone)
            self._started.clear()
            self._exited.clear()
            self._by_pid.clear()

    async def submit(self, request: Path) -> tuple[int, asyncio.Future[int]]:
        """Fork a runner for `request`; its pid and a future of its exit code."""
        if not self.alive or self.proc.stdin is None:
            raise ZygoteGone("the warm sandbox process is not running")
        key = str(request)
        if "\n" in key:
            raise ZygoteGone("request path with a newline")
        started: asyncio.Future[int] = self.loop.create_future()
        exited: asyncio.Future[int] = self.loop.create_future()
        self._started[key], self._exited[key] = started, exited
        try:
            self.proc.stdin.write(key.encode() + b"\n")
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError) as exc:
            self._started.pop(key, None)
            self._exited.pop(key, None)
            raise ZygoteGone("the warm sandbox process is gone") from exc
        pid = await asyncio.wait_for(started, 30.0)
        return pid, exited

    async def aclose(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        shutil.rmtree(self.home, ignore_errors=True)


def kill_stale(zygote: Zygote) -> None:
    """A zygote from another (finished) event loop cannot be awaited: kill it by pid."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(zygote.proc.pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(zygote.proc.pid, os.WNOHANG)
    shutil.rmtree(zygote.home, ignore_errors=True)

