"""The host side of the sandbox: check, stage the files, run the child, collect, clean up.

A run is one child process (`runner.py`) in its own session, with a minimal environment and a
fresh temporary work directory holding the code, the inputs as JSON and data frames as CSV
files; the child answers with a JSON file (nothing is evaluated from strings). At the deadline
the whole process group is killed; after every run any process still carrying the work dir is
killed too and counted in `leftover` (it is 0 unless something escaped the group).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
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
from tools.sandbox.ast_check import Violation, check_code, describe
from tools.sandbox.policy import SandboxPolicy
from tools.sandbox.zygote import Zygote, ZygoteGone, kill_stale

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
    refused_by: str = Field(default="", description="ast, runtime guard, os limits or ''")
    violations: list[str] = Field(default_factory=list)
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


def _env(workdir: Path) -> dict[str, str]:
    """Nothing of the parent's environment: no keys, no DATABASE_URL, no proxies."""
    cache = Path(tempfile.gettempdir()) / f"bullpen-sandbox-mpl-{os.getuid()}"
    cache.mkdir(mode=0o700, exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin", "HOME": str(workdir), "TMPDIR": str(workdir),
        "LANG": "C.UTF-8", "MPLCONFIGDIR": str(cache), "MPLBACKEND": "Agg",
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


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _sweep(workdir: Path) -> int:
    """Kill and count processes still working in `workdir` (escaped the process group)."""
    import psutil

    found = 0
    for proc in psutil.process_iter(["cwd", "cmdline"]):
        try:
            cwd = proc.info.get("cwd") or ""
            cmd = " ".join(proc.info.get("cmdline") or [])
        except (psutil.Error, OSError):
            continue
        if proc.pid != os.getpid() and (cwd.startswith(str(workdir)) or str(workdir) in cmd):
            with contextlib.suppress(psutil.Error):
                proc.kill()
                found += 1
    return found


@dataclass
class Sandbox:
    """Runs code in a child process under `policy` and `limits` (both layers on by default).

    `warm`: fork each run from a zygote that has the heavy modules imported (started on first
    use, ended by `aclose`); a run falls back to a cold start when the zygote is gone.
    """

    limits: SandboxLimits = field(default_factory=SandboxLimits)
    policy: SandboxPolicy = field(default_factory=SandboxPolicy)
    python: str = sys.executable
    warm: bool = False
    _zygote: Zygote | None = field(default=None, init=False, repr=False)
    _zygote_lock: asyncio.Lock | None = field(default=None, init=False, repr=False)

    async def _warm_zygote(self) -> Zygote:
        loop = asyncio.get_running_loop()
        stale = self._zygote is not None and self._zygote.loop is not loop
        if self._zygote_lock is None or stale:
            if self._zygote is not None:
                kill_stale(self._zygote)
                self._zygote = None
            self._zygote_lock = asyncio.Lock()
        async with self._zygote_lock:
            if self._zygote is None or not self._zygote.alive:
                if self._zygote is not None:
                    await self._zygote.aclose()
                home = Path(tempfile.mkdtemp(prefix="bullpen-sandbox-zygote-"))
                self._zygote = await Zygote.start(python=self.python, env=_env(home),
                                                  home=home)
            return self._zygote

    async def aclose(self) -> None:
        """End the warm zygote, if any."""
        zygote, self._zygote = self._zygote, None
        if zygote is not None:
            if zygote.loop is asyncio.get_running_loop():
                await zygote.aclose()
            else:
                kill_stale(zygote)

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
        workdir = Path(tempfile.mkdtemp(prefix="bullpen-sandbox-"))
        try:
            run = await self._spawn(workdir, code, mode, entry, args or {}, frames or {},
                                    {"frame_args": list(frame_args), "writable": writable})
        finally:
            leftover = await asyncio.to_thread(_sweep, workdir)
            shutil.rmtree(workdir, ignore_errors=True)
        run.leftover = leftover
        run.elapsed_s = time.perf_counter() - started
        return run

    async def _spawn(self, workdir: Path, code: str, mode: RunMode, entry: str,
                     args: dict[str, Any], frames: dict[str, pd.DataFrame],
                     extra: dict[str, Any]) -> SandboxRun:
        (workdir / "code.py").write_text(code, "utf-8")
        frame_files: dict[str, str] = {}
        for name, df in frames.items():
            path = workdir / f"{name}.csv"
            await asyncio.to_thread(_write_frame, df, path)
            frame_files[name] = path.name
        request = {
            "workdir": str(workdir), "code_file": "code.py", "output_file": "output.json",
            "mode": mode, "entry": entry, "args": args, "frames": frame_files,
            "limits": self.limits.as_json(), "runtime_guard": self.policy.runtime_guard,
            "os_isolation": self.policy.os_isolation,
            "allowed_modules": sorted(self.policy.allowed_modules), **extra,
        }
        req_path = workdir / "request.json"
        req_path.write_text(json.dumps(request), "utf-8")
        if self.warm:
            try:
                return await self._run_warm(workdir, req_path)
            except ZygoteGone:
                pass  # run cold
        log_path = workdir / "runner.log"
        with log_path.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                self.python, "-I", str(RUNNER), str(req_path), cwd=str(workdir),
                env=_env(workdir), stdin=asyncio.subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True)
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
                await proc.wait()
        return self._collect(workdir, proc.returncode, timed_out)

    async def _run_warm(self, workdir: Path, req_path: Path) -> SandboxRun:
        zygote = await self._warm_zygote()
        pid, exited = await zygote.submit(req_path)
        timed_out = False
        returncode: int | None = None
        try:
            returncode = await asyncio.wait_for(asyncio.shield(exited), self.limits.wall_s)
        except TimeoutError:
            timed_out = True
            _kill_group(pid)
            with contextlib.suppress(TimeoutError, ZygoteGone):
                returncode = await asyncio.wait_for(exited, 5.0)
        finally:
            _kill_group(pid)
        return self._collect(workdir, returncode, timed_out)

    def _collect(self, workdir: Path, returncode: int | None, timed_out: bool) -> SandboxRun:
        out_path = workdir / "output.json"
        data: dict[str, Any] = {}
        if out_path.exists() and out_path.stat().st_size <= MAX_OUTPUT_BYTES:
            with contextlib.suppress(ValueError):
                loaded = json.loads(out_path.read_text("utf-8"))
                data = loaded if isinstance(loaded, dict) else {}
        isolation = data.get("isolation") if isinstance(data.get("isolation"), dict) else {}
        base: dict[str, Any] = {"isolation": isolation or {},
                                "stdout": str(data.get("stdout", ""))[:4000]}
        if timed_out:
            return SandboxRun(status="timeout", error_type="Timeout", refused_by="os limits",
                              error=f"the script did not finish within {self.limits.wall_s:g} "
                                    "s and was killed (an endless loop?)", **base)
        if not data:
            sig = -returncode if returncode is not None and returncode < 0 else (
                returncode - 128 if returncode is not None and returncode > 128 else 0)
            log = (workdir / "runner.log").read_bytes()[-1500:].decode("utf-8", "replace")
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
            if (path.parent == workdir and path.suffix == ".png" and path.is_file()
                    and not path.is_symlink() and path.stat().st_size <= MAX_CHART_BYTES):
                data = path.read_bytes()
                if data.startswith(b"\x89PNG"):
                    charts.append(data)
                    kept.append(path.name)
        return charts, kept


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
