"""`bullpen` processes forked from a parent that has already imported the app (issue 31).

A `python -m bot.cli serve` spends about 2 s of CPU importing (pandas, the SDKs, the app) before
it does anything, over half of what a short fault test's serve costs; the fault and CLI suites
start dozens. Tests of what happens after start-up (kills, restarts, outages, the CLI's
commands) take their processes from here instead: one spawner per pytest process imports what
`python -m bot.cli serve` imports, then forks a child per request that runs `bot.cli.main(argv)`
with the environment, working directory and output files asked for. Each child is a process of
its own: its own pid, event loop, connections and data directory; SIGKILL kills it alone; its
exit status is read by the spawner (`wait4`) and reported back. Start-up errors (a bad setting,
an unreachable model) come from `main`, after the imports, and are tested warm; tests of the
imports themselves (what is loaded, memory, `--help`) and of a console under tmux or SIGTERM
keep starting `python -m bot.cli` (`COLD`).

The spawner is single-threaded and runs no event loop, so a fork copies nothing half-done; a
child closes every descriptor it inherited but its own three and keeps the signal dispositions
a fresh interpreter has (SIGPIPE ignored: a serve whose Postgres is killed must see an error,
not die of the signal). `BULLPEN_TEST_COLD=1` turns this off: every process is started cold,
as a user starts it.

Protocol on the spawner's stdin/stdout, one JSON object a line: a request
`{"id", "argv", "env", "cwd", "stdin", "stdout", "stderr"}` (paths; `stderr` may be "stdout")
is answered `{"id", "pid"}`; an exit is announced `{"exit": pid, "rc", "cpu_s"}`, `rc` as
`subprocess` gives it (minus the signal for a kill).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib
import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
COLD = [sys.executable, "-m", "bot.cli"]  # how a user starts it


def cold() -> bool:
    return os.environ.get("BULLPEN_TEST_COLD") == "1"


# --- the spawner (its own process) -------------------------------------------------------------


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become `bullpen <argv>` and never return."""
    code: int = 1
    try:
        # signals are left as the spawner's interpreter set them, which is how a fresh one sets
        # them (SIGPIPE ignored: a write to a closed socket raises; SIGINT: KeyboardInterrupt)
        fd_in = os.open(request.get("stdin") or os.devnull, os.O_RDONLY)
        fd_out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        fd_err = fd_out if request["stderr"] == "stdout" else os.open(
            request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd_in, 0)
        os.dup2(fd_out, 1)
        os.dup2(fd_err, 2)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        sys.stdin = open(0, encoding="utf-8", closefd=False)
        sys.stdout = open(1, "w", encoding="utf-8", buffering=1, closefd=False)
        sys.stderr = open(2, "w", encoding="utf-8", buffering=1,
                          errors="backslashreplace", closefd=False)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [str(ROOT / "bot" / "cli" / "__main__.py"), *request["argv"]]
        from bot.cli import main

        code = main(request["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, int) and exc.code is not None:
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def _serve_requests() -> None:
    """The spawner's loop: fork per request, report exits (single-threaded, no event loop)."""
    from bot.lean_pandas import without_pyarrow

    without_pyarrow()  # what `bot.cli.main` does first, before pandas is imported
    import bot.app
    import bot.cli  # noqa: F401
    from devtools.write_bytecode import import_the_product

    # every module of the product, so no child imports one itself: a serve imports a second lot
    # after start-up (the adapters, the tools' modules, aiohttp, openai, the words; 0.5-1.2 s of
    # CPU a child), and so do the CLI's commands. 2.3 s once here
    import_the_product()
    # what a serve loads on its first model call, not at start: the HTTP transports, openai's
    # resources, anyio's backend, the TLS contexts (the kill-9 crash tests' serves: 22.0 -> 21.3
    # core-s; small, but every model-using child pays it)
    for name in ("httpcore", "httpcore2", "openai.resources.chat", "openai.resources.models",
                 "anyio._backends._asyncio"):
        importlib.import_module(name)
    from core.llm import clients

    clients._openai_tls()
    clients._httpx_tls()
    # the start-up line's spans of the offline series (every series read, the same in every
    # child on these packs; a child on other packs reads its own)
    from analyst.offline import snapshot_coverage

    snapshot_coverage()

    # what the imports made is never collected in here, so a child's collector never walks
    # (and so copies) the pages it shares with the spawner
    gc.collect()
    gc.freeze()

    out = os.fdopen(os.dup(1), "w", buffering=1)

    def say(message: dict[str, Any]) -> None:
        with contextlib.suppress(BrokenPipeError):  # the pytest process is gone: nobody asks
            out.write(json.dumps(message) + "\n")
    children: set[int] = set()
    selector = selectors.DefaultSelector()
    selector.register(0, selectors.EVENT_READ)
    say({"ready": os.getpid()})
    pending = b""
    open_input = True
    while open_input or children:
        if open_input and selector.select(timeout=0.05):
            chunk = os.read(0, 1 << 16)
            if not chunk:
                open_input = False
                selector.unregister(0)
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                request = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    selector.close()
                    _child(request)
                children.add(pid)
                say({"id": request["id"], "pid": pid})
        elif not open_input:
            time.sleep(0.05)
        for pid in list(children):
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                children.discard(pid)
                rc = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
                say({"exit": pid, "rc": rc, "cpu_s": usage.ru_utime + usage.ru_stime})
        if not open_input:  # the tests are done: whatever is left is killed, as pytest would
            for pid in children:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)


# --- the test side -----------------------------------------------------------------------------


class _Spawner:
    """One spawner process per pytest process, started on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._starting = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._ids = 0
        self._pids: dict[int, threading.Event] = {}
        self._answers: dict[int, int] = {}
        self._exits: dict[int, int] = {}
        self._callbacks: dict[int, list[Callable[[], object]]] = {}
        self._ready = threading.Event()
        self.cpu_s = 0.0  # the children's CPU, summed as they exit (for tests/cpu_ledger.py)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def _start(self) -> subprocess.Popen[str]:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        self._ready.clear()
        proc = subprocess.Popen([sys.executable, __file__], cwd=ROOT, text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._proc = proc
        threading.Thread(target=self._read, args=(proc,), name="warm-bullpen", daemon=True
                         ).start()
        if not self._ready.wait(timeout=300):
            raise RuntimeError("the warm bullpen spawner did not start within 300 s")
        return proc

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            message = json.loads(line)
            with self._lock:
                if "ready" in message:
                    self._ready.set()
                elif "pid" in message:
                    self._answers[message["id"]] = message["pid"]
                    self._pids.pop(message["id"]).set()
                elif "exit" in message:
                    self._exits[message["exit"]] = message["rc"]
                    self.cpu_s += message["cpu_s"]
                    for callback in self._callbacks.pop(message["exit"], []):
                        callback()
        self._ready.set()  # the spawner is gone: nobody waits for it forever
        with self._lock:
            for event in self._pids.values():
                event.set()
            for callbacks in self._callbacks.values():
                for callback in callbacks:
                    callback()
            self._callbacks.clear()

    def spawn(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path,
              stdout: Path, stderr: Path | None = None, stdin: Path | None = None) -> int:
        with self._lock:
            self._ids += 1
            request_id = self._ids
            asked = self._pids[request_id] = threading.Event()
        with self._starting:
            proc = self._start()
        request = {"id": request_id, "argv": list(argv), "env": dict(env), "cwd": str(cwd),
                   "stdin": str(stdin) if stdin else None, "stdout": str(stdout),
                   "stderr": str(stderr) if stderr else "stdout"}
        assert proc.stdin is not None
        with self._lock:
            proc.stdin.write(json.dumps(request) + "\n")
            proc.stdin.flush()
        if not asked.wait(timeout=60) or request_id not in self._answers:
            raise RuntimeError(f"the warm bullpen spawner did not fork `{' '.join(argv)}`")
        with self._lock:
            return self._answers.pop(request_id)

    def returncode(self, pid: int) -> int | None:
        with self._lock:
            return self._exits.get(pid)

    def on_exit(self, pid: int, callback: Callable[[], object]) -> None:
        """`callback()` (from the reader thread, or now) once `pid` has exited."""
        with self._lock:
            if pid not in self._exits and self._proc is not None and self._proc.poll() is None:
                self._callbacks.setdefault(pid, []).append(callback)
                return
        callback()


_SPAWNER = _Spawner()


def descendants() -> list[psutil.Process]:
    """This process's descendants, less the spawner: it is the session's, idle between tests,
    not something a test left behind (what it forked is still counted)."""
    spawner = _SPAWNER.pid
    return [p for p in psutil.Process().children(recursive=True) if p.pid != spawner]


def children_cpu_s() -> float:
    """CPU seconds of the warm children that have exited so far in this pytest process."""
    return _SPAWNER.cpu_s


class WarmProcess:
    """What the tests use of `asyncio.subprocess.Process`, for a warm child."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    @property
    def returncode(self) -> int | None:
        return _SPAWNER.returncode(self.pid)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    async def wait(self) -> int:
        loop = asyncio.get_running_loop()
        exited = asyncio.Event()
        _SPAWNER.on_exit(self.pid, lambda: loop.call_soon_threadsafe(exited.set))
        await exited.wait()
        rc = self.returncode
        if rc is None:
            raise RuntimeError(f"the warm bullpen spawner went away before {self.pid} exited")
        return rc

    def wait_sync(self, timeout: float | None = None) -> int:
        exited = threading.Event()
        _SPAWNER.on_exit(self.pid, exited.set)
        if not exited.wait(timeout):
            raise subprocess.TimeoutExpired(["bullpen"], timeout or 0)
        rc = self.returncode
        if rc is None:
            raise RuntimeError(f"the warm bullpen spawner went away before {self.pid} exited")
        return rc


async def start(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log: IO[bytes] | Path,
                ) -> asyncio.subprocess.Process | WarmProcess:
    """`bullpen <argv>` with stdin from /dev/null and stdout and stderr into `log`."""
    path = Path(log.name) if not isinstance(log, Path) else log
    if cold():
        with path.open("ab") as out:
            return await asyncio.create_subprocess_exec(
                *COLD, *argv, cwd=cwd, env=dict(env), stdin=asyncio.subprocess.DEVNULL,
                stdout=out, stderr=asyncio.subprocess.STDOUT)
    pid = await asyncio.to_thread(_SPAWNER.spawn, argv, env=env, cwd=cwd, stdout=path)
    return WarmProcess(pid)


def run(argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float = 300,
        input: str = "") -> subprocess.CompletedProcess[str]:
    """`subprocess.run(["bullpen", *argv], input=input, capture_output=True, text=True)`,
    warm."""
    if cold():
        return subprocess.run([*COLD, *argv], cwd=cwd, env=dict(env), capture_output=True,
                              text=True, timeout=timeout, input=input)
    with tempfile.TemporaryDirectory(prefix="warm-bullpen-") as tmp:
        out, err, given = Path(tmp) / "out", Path(tmp) / "err", Path(tmp) / "in"
        given.write_text(input, encoding="utf-8")
        pid = _SPAWNER.spawn(argv, env=env, cwd=cwd, stdout=out, stderr=err, stdin=given)
        proc = WarmProcess(pid)
        began = time.monotonic()
        try:
            rc = proc.wait_sync(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait_sync(30)
            raise subprocess.TimeoutExpired([*COLD, *argv], time.monotonic() - began) from None
        return subprocess.CompletedProcess([*COLD, *argv], rc,
                                           out.read_text(errors="replace"),
                                           err.read_text(errors="replace"))


if __name__ == "__main__":
    sys.path[0] = str(ROOT)  # the checkout, as `python -m bot.cli` run from it sees it
    _serve_requests()
