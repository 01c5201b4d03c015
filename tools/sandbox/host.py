"""The host side of the sandbox: check, stage the files, run the child, collect, clean up.

A run is one child process (`runner.py`) inside the OS jail (`jail.py`: bubblewrap, an
unprivileged user, its own mount, pid and network namespaces, the seccomp filter of
`seccomp.py`), in its own session, with a minimal environment and a fresh work directory
holding the code, the inputs as JSON and data frames as CSV files; the child answers with a JSON
file (nothing is evaluated from strings). At the deadline the whole process group is killed;
after every run any process still carrying the work dir is killed too and counted in `leftover`
(it is 0 unless something escaped the group). Files the child leaves are read without following
links (a link to a host file must not be read by the host for it).

Where the host cannot build the jail, runs are refused (status `blocked`, `refused_by` "os
jail") unless the policy accepts weaker isolation by name.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, Field

from core.errors import ToolError
from core.shutdown import settle
from tools.sandbox.ast_check import Violation, check_code, describe
from tools.sandbox.jail import Jail, JailUnavailable, probe
from tools.sandbox.policy import SandboxPolicy
from tools.sandbox.seccomp import build_filter
from tools.sandbox.spare import Spare, SpareGone, reaped

log = logging.getLogger(__name__)

RUNNER = Path(__file__).with_name("runner.py")
MAX_OUTPUT_BYTES = 4 * 1024 * 1024
MAX_CHART_BYTES = 2 * 1024 * 1024

RunMode = Literal["script", "call", "test"]
Status = Literal["ok", "blocked", "error", "timeout", "killed"]


@dataclass(frozen=True)
class SandboxLimits:
    cpu_s: int = 10  # CPU seconds (SIGXCPU, then SIGKILL two seconds later)
    wall_s: float = 30.0  # wall-clock deadline; the process group is killed after it
    memory_mb: int = 1536  # address space (pandas + pandas-ta + matplotlib map ~550 MB)
    file_mb: int = 16  # largest file the code may write (and at most 32 writes)
    nproc: int = 16  # processes beyond those the uid already has (not enforced for root)
    nofile: int = 256
    max_charts: int = 3

    def as_json(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class TestOutcome(BaseModel):
    name: str
    ok: bool
    error: str = ""


class SandboxRun(BaseModel):
    """What one sandboxed run gave: a result, or a reason the model can act on."""

    status: Status
    result: Any = None
    error: str = ""
    error_type: str = ""
    error_line: int | None = None
    refused_by: str = Field(default="",
                            description="ast, runtime guard, os limits, os jail or ''")
    violations: list[str] = Field(default_factory=list)
    refusals: list[str] = Field(default_factory=list,
                                description="what the guard refused, even if the code hid it")
    tests: list[TestOutcome] = Field(default_factory=list)
    stdout: str = ""
    charts: list[bytes] = Field(default_factory=list, exclude=True)
    chart_names: list[str] = Field(default_factory=list)
    charts_dropped: int = 0
    isolation: dict[str, Any] = Field(default_factory=dict)
    leftover: int = 0
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def message(self) -> str:
        """One line for the model or the user: what went wrong and where."""
        if self.ok:
            return "ok"
        where = f" (line {self.error_line})" if self.error_line else ""
        by = f" [refused by the {self.refused_by}]" if self.refused_by else ""
        return f"{self.status}: {self.error_type + ': ' if self.error_type else ''}" \
               f"{self.error}{where}{by}"


class ScriptFailed(ToolError):
    """Sandboxed code was refused or failed; the message says why, for the model to act on."""

    def __init__(self, message: str, run: SandboxRun) -> None:
        super().__init__(message)
        self.run = run


MPL_DIR = ".mpl"


def _mpl_cache() -> Path:
    return Path(tempfile.gettempdir()) / f"bullpen-sandbox-mpl-{os.getuid()}"


def _env(workdir: Path) -> dict[str, str]:
    """Nothing of the parent's environment: no keys, no DATABASE_URL, no proxies. matplotlib's
    config dir is the run's own (seeded with the font cache): a read-only one makes it build a
    new cache in a temporary dir on every run (a second of CPU)."""
    return {
        "PATH": "/usr/bin:/bin", "HOME": str(workdir), "TMPDIR": str(workdir),
        "LANG": "C.UTF-8", "MPLCONFIGDIR": str(workdir / MPL_DIR), "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "NUMBA_NUM_THREADS": "1", "NUMBA_CACHE_DIR": str(workdir),
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
    }


def _write_frame(df: pd.DataFrame, path: Path) -> None:
    """Bars as CSV with a tz-naive local date index (the sandbox reads no time-zone files)."""
    out = df.copy()
    idx = pd.DatetimeIndex(out.index)
    out.index = idx.tz_localize(None) if idx.tz is not None else idx
    out.index.name = "date"
    out.to_csv(path)


def _read_inside(path: Path, limit: int) -> bytes | None:
    """A regular file the child left, read without following a link (the child may have put a
    link to a host file there) and only up to `limit` bytes; None when it is not one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        import stat

        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_size > limit:
            return None
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(limit + 1)[:limit]
    finally:
        os.close(fd)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _sweep(workdir: Path) -> int:
    """Kill and count processes still working in `workdir` (escaped the process group). A
    jail that is still tearing itself down (its init exiting, a zombie) is not an escape: a
    process is counted only if it is still there, and not a zombie, a moment later."""
    import psutil

    def carrying() -> list[psutil.Process]:
        found = []
        for proc in psutil.process_iter(["cwd", "cmdline", "status"]):
            try:
                cwd = proc.info.get("cwd") or ""
                cmd = " ".join(proc.info.get("cmdline") or [])
                zombie = proc.info.get("status") == psutil.STATUS_ZOMBIE
            except (psutil.Error, OSError):
                continue
            if (proc.pid != os.getpid() and not zombie
                    and (cwd.startswith(str(workdir)) or str(workdir) in cmd)):
                found.append(proc)
        return found

    if not carrying():
        return 0
    time.sleep(0.5)
    found = 0
    for proc in carrying():
        with contextlib.suppress(psutil.Error):
            proc.kill()
            found += 1
    return found


@dataclass
class Sandbox:
    """Runs code in a jailed child process under `policy` and `limits` (every layer on by
    default).

    `warm`: each run takes a spare that has the heavy modules imported (`spare.py`), started in
    the background after the previous run (and on first use), ended by `aclose`; a run falls
    back to a cold start when no spare is ready.
    """

    limits: SandboxLimits = field(default_factory=SandboxLimits)
    policy: SandboxPolicy = field(default_factory=SandboxPolicy)
    python: str = sys.executable
    warm: bool = False
    _next: asyncio.Task[Spare] | None = field(default=None, init=False, repr=False)
    _mpl_ready: bool = field(default=False, init=False, repr=False)

    # --- the jail --------------------------------------------------------------------------

    async def jail(self) -> Jail | None:
        """The jail runs go into, None where the policy turns it off or accepts running without
        it; raises JailUnavailable where the policy requires it and the host cannot give it."""
        if not (self.policy.os_isolation and self.policy.os_jail):
            return None
        try:
            jail = await asyncio.to_thread(probe, self.python, RUNNER,
                                           uid=self.policy.jail_uid, gid=self.policy.jail_gid)
        except JailUnavailable as exc:
            if not self.policy.weak_isolation_ok:
                raise
            log.warning("sandbox: running WITHOUT the OS jail (accepted by setting): %s", exc)
            return None
        if not self._mpl_ready:
            await self._prepare_mpl_cache(jail)
        return jail

    async def _prepare_mpl_cache(self, jail: Jail) -> None:
        """matplotlib's font cache, built once by our own code in the jail, then copied into
        each run's work dir (a run neither pays for it nor leaves anything for the next)."""
        cache = _mpl_cache()
        cache.mkdir(mode=0o755, exist_ok=True)
        if not any(cache.glob("fontlist-*.json")):
            jail.prepare_dir(cache)
            env = dict(_env(cache), MPLCONFIGDIR=str(cache))
            argv = jail.command([self.python, "-I", "-c",
                                 "import matplotlib; matplotlib.use('Agg'); "
                                 "import matplotlib.font_manager"], workdir=cache)
            proc = await asyncio.create_subprocess_exec(
                *argv, env=env, stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
                start_new_session=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), 120)
            _kill_group(proc.pid)
            await reaped(proc)
        cache.chmod(0o755)
        self._mpl_ready = True

    def _command(self, jail: Jail | None, workdir: Path, argv: list[str]) -> list[str]:
        return argv if jail is None else jail.command(argv, workdir=workdir)

    def _new_workdir(self, jail: Jail | None) -> Path:
        """A fresh work dir the jailed user owns, with its own copy of the font cache."""
        workdir = Path(tempfile.mkdtemp(prefix="bullpen-sandbox-"))
        mpl = workdir / MPL_DIR
        mpl.mkdir()
        for font_list in _mpl_cache().glob("fontlist-*.json"):
            shutil.copyfile(font_list, mpl / font_list.name)
        if jail is not None:
            jail.prepare_dir(workdir)
            jail.prepare_dir(mpl)
            for file in mpl.iterdir():
                jail.prepare_file(file)
        return workdir

    # --- the warm spare ----------------------------------------------------------------------

    def _refill(self, jail: Jail | None) -> None:
        """Start the next spare in the background (owned here, ended by `aclose`)."""
        if self._next is not None and not self._next.done():
            return
        workdir = self._new_workdir(jail)
        argv = self._command(jail, workdir, [self.python, "-I", str(RUNNER), "--spare",
                                             str(workdir / "request.json")])
        self._next = asyncio.create_task(Spare.start(argv, env=_env(workdir), workdir=workdir),
                                         name="sandbox-spare")

    async def _take_spare(self, jail: Jail | None) -> Spare | None:
        task, self._next = self._next, None
        if task is not None and task.get_loop() is not asyncio.get_running_loop():
            _drop_stale(task)  # a spare of an event loop that has ended
            task = None
        if task is None:
            self._refill(jail)
            task, self._next = self._next, None
        assert task is not None
        try:
            spare = await task
        except (SpareGone, OSError, TimeoutError) as exc:
            log.warning("sandbox: no warm spare (%s); running cold", exc)
            return None
        if not spare.alive:
            shutil.rmtree(spare.workdir, ignore_errors=True)
            return None
        return spare

    async def pending_spare(self) -> Spare | None:
        """The spare the next run will take, once it is ready (None if it failed or none is
        being started)."""
        task = self._next
        if task is None or task.get_loop() is not asyncio.get_running_loop():
            return None
        try:
            return await asyncio.shield(task)
        except (SpareGone, OSError, TimeoutError):
            return None

    async def aclose(self) -> None:
        """End the warm spare, if any."""
        task, self._next = self._next, None
        if task is None:
            return
        if task.get_loop() is not asyncio.get_running_loop():
            _drop_stale(task)
            return
        task.cancel()
        try:
            if not await settle(task, what="the warm sandbox's start"):
                return
            spare = task.result()
        except (asyncio.CancelledError, SpareGone, OSError, TimeoutError):
            return
        spare.kill()
        await reaped(spare.proc)
        shutil.rmtree(spare.workdir, ignore_errors=True)

    # --- a run -------------------------------------------------------------------------------

    def check(self, code: str) -> list[Violation]:
        return check_code(code, allowed_modules=self.policy.allowed_modules) \
            if self.policy.ast_check else []

    async def run(self, code: str, *, mode: RunMode = "script", entry: str = "",
                  args: dict[str, Any] | None = None,
                  frames: dict[str, pd.DataFrame] | None = None,
                  frame_args: tuple[str, ...] = (), writable: bool = True) -> SandboxRun:
        """Check and run `code`. Modes: `script` (the code assigns `result`), `call` (the
        function `entry` is called with `args`, plus the `frame_args` frames), `test` (every
        `test_*` function runs). `frames` are handed in as DataFrames of those names; without
        `writable` the code may write no file at all."""
        started = time.perf_counter()
        violations = self.check(code)
        if violations:
            return SandboxRun(status="blocked", error=describe(violations), refused_by="ast",
                              error_type="SandboxViolation",
                              violations=[str(v) for v in violations],
                              error_line=violations[0].line or None,
                              elapsed_s=time.perf_counter() - started)
        try:
            jail = await self.jail()
        except JailUnavailable as exc:
            return SandboxRun(status="blocked", refused_by="os jail",
                              error_type="SandboxUnavailable",
                              error=f"the OS sandbox is not available on this host, so no code "
                                    f"is run: {exc}",
                              elapsed_s=time.perf_counter() - started)
        spare = await self._take_spare(jail) if self.warm else None
        workdir = spare.workdir if spare is not None else self._new_workdir(jail)
        try:
            req_path = await self._stage(workdir, code, mode, entry, args or {}, frames or {},
                                         {"frame_args": list(frame_args), "writable": writable},
                                         jail)
            run: SandboxRun | None = None
            if spare is not None:
                with contextlib.suppress(SpareGone):
                    run = await self._run_spare(spare, workdir)
            if run is None:
                run = await self._run_cold(workdir, req_path, jail)
        finally:
            if spare is not None:
                spare.kill()
            leftover = await asyncio.to_thread(_sweep, workdir)
            shutil.rmtree(workdir, ignore_errors=True)
            if self.warm:
                self._refill(jail)
        run.leftover = leftover
        run.elapsed_s = time.perf_counter() - started
        return run

    async def _stage(self, workdir: Path, code: str, mode: RunMode, entry: str,
                     args: dict[str, Any], frames: dict[str, pd.DataFrame],
                     extra: dict[str, Any], jail: Jail | None) -> Path:
        (workdir / "code.py").write_text(code, "utf-8")
        frame_files: dict[str, str] = {}
        for name, df in frames.items():
            path = workdir / f"{name}.csv"
            await asyncio.to_thread(_write_frame, df, path)
            frame_files[name] = path.name
        request: dict[str, Any] = {
            "workdir": str(workdir), "code_file": "code.py", "output_file": "output.json",
            "mode": mode, "entry": entry, "args": args, "frames": frame_files,
            "limits": self.limits.as_json(), "runtime_guard": self.policy.runtime_guard,
            "os_isolation": self.policy.os_isolation,
            "allowed_modules": sorted(self.policy.allowed_modules), **extra,
        }
        if jail is not None:
            request["jail"] = jail.describe()
            program = build_filter() if self.policy.seccomp else None
            if program is not None:
                (workdir / "filter.bpf").write_bytes(program)
                request["seccomp_file"] = "filter.bpf"
            else:
                request["jail"]["seccomp"] = False
        req_path = workdir / "request.json"
        req_path.write_text(json.dumps(request), "utf-8")
        return req_path

    async def _run_cold(self, workdir: Path, req_path: Path, jail: Jail | None) -> SandboxRun:
        log_path = workdir / "runner.log"
        argv = self._command(jail, workdir, [self.python, "-I", str(RUNNER), str(req_path)])
        with log_path.open("wb") as log_file:
            proc = await asyncio.create_subprocess_exec(
                *argv, cwd=str(workdir), env=_env(workdir), stdin=asyncio.subprocess.DEVNULL,
                stdout=log_file, stderr=log_file, start_new_session=True)
        return await self._wait(workdir, proc)

    async def _run_spare(self, spare: Spare, workdir: Path) -> SandboxRun:
        await spare.go()
        return await self._wait(workdir, spare.proc)

    async def _wait(self, workdir: Path, proc: asyncio.subprocess.Process) -> SandboxRun:
        timed_out = False
        try:
            await asyncio.wait_for(proc.wait(), self.limits.wall_s)
        except TimeoutError:
            timed_out = True
        finally:
            _kill_group(proc.pid)
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await reaped(proc)
        return self._collect(workdir, proc.returncode, timed_out)

    def _collect(self, workdir: Path, returncode: int | None, timed_out: bool) -> SandboxRun:
        raw = _read_inside(workdir / "output.json", MAX_OUTPUT_BYTES)
        data: dict[str, Any] = {}
        if raw is not None:
            with contextlib.suppress(ValueError):
                loaded = json.loads(raw.decode("utf-8", "replace"))
                data = loaded if isinstance(loaded, dict) else {}
        isolation = data.get("isolation") if isinstance(data.get("isolation"), dict) else {}
        raw_refusals = data.get("refusals")
        refusals: list[Any] = raw_refusals if isinstance(raw_refusals, list) else []
        base: dict[str, Any] = {"isolation": isolation or {},
                                "stdout": str(data.get("stdout", ""))[:4000],
                                "refusals": [str(r)[:300] for r in refusals[:20]]}
        if timed_out:
            return SandboxRun(status="timeout", error_type="Timeout", refused_by="os limits",
                              error=f"the script did not finish within {self.limits.wall_s:g} "
                                    "s and was killed (an endless loop?)", **base)
        if not data:
            sig = -returncode if returncode is not None and returncode < 0 else (
                returncode - 128 if returncode is not None and returncode > 128 else 0)
            log = _log_tail(workdir / "runner.log")
            what = signal.Signals(sig).name if sig in signal.valid_signals() else \
                f"exit code {returncode}"
            reason = ("it exceeded its CPU time limit" if sig in (signal.SIGKILL, signal.SIGXCPU)
                      else "it crashed")
            return SandboxRun(status="killed", error_type="Killed", refused_by="os limits",
                              error=f"the script was stopped ({what}): {reason}. "
                                    f"{log.strip()[-300:]}".strip(), **base)
        charts, names = self._charts(workdir, data.get("charts"))
        tests = [TestOutcome(name=str(t.get("name", "?")), ok=bool(t.get("ok")),
                             error=_err_text(t.get("error")))
                 for t in data.get("tests") or [] if isinstance(t, dict)]
        common = dict(base, tests=tests, charts=charts, chart_names=names,
                      charts_dropped=int(data.get("charts_dropped") or 0))
        if data.get("ok"):
            return SandboxRun(status="ok", result=data.get("result"), **common)
        raw_err = data.get("error")
        err: dict[str, Any] = raw_err if isinstance(raw_err, dict) else {}
        kind = str(err.get("type", "Error"))
        status: Status = "timeout" if kind == "CpuLimitExceeded" else "error"
        refused = "runtime guard" if err.get("guard") else (
            "os limits" if kind in ("MemoryError", "CpuLimitExceeded") else "")
        return SandboxRun(status=status, error=str(err.get("message", "")), error_type=kind,
                          error_line=err.get("line") if isinstance(err.get("line"), int)
                          else None, refused_by=refused, **common)

    def _charts(self, workdir: Path, names: Any) -> tuple[list[bytes], list[str]]:
        charts: list[bytes] = []
        kept: list[str] = []
        for name in (names or [])[: self.limits.max_charts]:
            path = workdir / str(name)
            data = _read_inside(path, MAX_CHART_BYTES) if (
                path.parent == workdir and path.suffix == ".png") else None
            if data is not None:
                if data.startswith(b"\x89PNG"):
                    charts.append(data)
                    kept.append(path.name)
        return charts, kept


def _log_tail(path: Path) -> str:
    """The end of the runner's log (the child may have replaced it by a link: then nothing)."""
    try:
        size = os.lstat(path).st_size
    except OSError:
        return ""
    data = _read_inside(path, max(size, 1)) or b""
    return data[-1500:].decode("utf-8", "replace")


def _drop_stale(task: asyncio.Task[Spare]) -> None:
    """A spare started in an event loop that has ended: kill it by pid if it was ready."""
    if task.done() and not task.cancelled() and task.exception() is None:
        spare = task.result()
        spare.kill_stale()
        shutil.rmtree(spare.workdir, ignore_errors=True)
    elif not task.done():
        task.cancel()


def _err_text(err: Any) -> str:
    if not isinstance(err, dict):
        return ""
    line = f" (line {err['line']})" if isinstance(err.get("line"), int) else ""
    return f"{err.get('type', 'Error')}: {err.get('message', '')}{line}"


_default: Sandbox | None = None


def default_sandbox() -> Sandbox:
    """The sandbox tools use (both layers on) unless `use_sandbox` set another."""
    global _default
    if _default is None:
        _default = Sandbox()
    return _default


def use_sandbox(sandbox: Sandbox | None) -> None:
    """Set the process-wide sandbox (the composition root does, from settings); None resets."""
    global _default
    _default = sandbox
