"""The child side of the sandbox, run as `python -I runner.py REQUEST.json` in the work dir
(inside the bubblewrap jail of `jail.py` unless a named setting accepted weaker isolation), or
as `runner.py --spare REQUEST.json`: a warm spare that imports the heavy modules, says `ready`
and runs the request once the host writes `go` on its stdin.

Standard library only (it runs before anything else is trusted). In order:

1. OS isolation: resource limits (CPU, address space, file size, open files, processes); in the
   jail, the seccomp filter the host built (`seccomp.py`: no exec, fork, sockets, namespaces,
   ptrace), installed just before the code runs and failing closed; outside the jail, a new
   network namespace and a new pid namespace where the code runs as pid 1.
2. Runtime guard: the allowed modules the code imports are loaded, then an audit hook refuses
   process creation, sockets, ctypes, and file access outside the work dir (reads also inside
   the Python installation), an import guard refuses other modules, and the code gets builtins
   without eval/exec/compile/open-anywhere.
3. The code runs (script, call or test mode); the result is written as JSON to the output file.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import math
import os
import resource
import signal
import sys
import sysconfig
import traceback
from typing import Any

CODE_NAME = "<sandbox>"
MAX_STDOUT = 4000
MAX_ITEMS = 5000
MAX_WRITES = 32
MAX_OUTPUT_CHARS = 2_000_000
_CPU_EXCEEDED = False


# Every refusal of the guard, even one the code caught and hid: reported to the host, which
# fails a generated tool's verification on any (it reached outside its inputs).
REFUSALS: list[str] = []


class SandboxViolation(PermissionError):
    """Raised by the runtime guard; the message says what was refused (and records it)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        if len(REFUSALS) < 20:
            REFUSALS.append(message[:300])


class CpuLimitExceeded(BaseException):
    pass


# --- 1. OS isolation -----------------------------------------------------------------------


def _own_tasks() -> int:
    """Threads of processes with our real uid (RLIMIT_NPROC counts them all, not just ours)."""
    uid, total = os.getuid(), 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != uid:
                continue
            with open(f"/proc/{entry}/status") as fh:
                for line in fh:
                    if line.startswith("Threads:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            continue
    return total


def _set_limits(limits: dict[str, Any]) -> dict[str, Any]:
    mb = 1024 * 1024
    used = resource.getrusage(resource.RUSAGE_SELF)  # a spare's imports are not the code's
    cpu = int(limits["cpu_s"]) + math.ceil(used.ru_utime + used.ru_stime)
    applied: dict[str, Any] = {}
    for name, soft, hard in (
        ("RLIMIT_CPU", cpu, cpu + 2),
        ("RLIMIT_AS", int(limits["memory_mb"]) * mb, int(limits["memory_mb"]) * mb),
        ("RLIMIT_FSIZE", int(limits["file_mb"]) * mb, int(limits["file_mb"]) * mb),
        ("RLIMIT_NOFILE", int(limits["nofile"]), int(limits["nofile"])),
        ("RLIMIT_CORE", 0, 0),
    ):
        resource.setrlimit(getattr(resource, name), (soft, hard))
        applied[name] = soft
    return applied


def _limit_processes(nproc: int) -> dict[str, Any]:
    """RLIMIT_NPROC counts every task of the uid; allow what exists plus `nproc` more. The kernel
    does not apply it to root, which is said in the report."""
    allowed = _own_tasks() + nproc
    resource.setrlimit(resource.RLIMIT_NPROC, (allowed, allowed))
    return {"RLIMIT_NPROC": allowed, "nproc_enforced": os.getuid() != 0}


def _namespaces() -> dict[str, Any]:
    """New network and pid namespaces: directly as root, through a user namespace otherwise."""
    flags = os.CLONE_NEWNET | os.CLONE_NEWPID
    for extra in (0, os.CLONE_NEWUSER):
        try:
            os.unshare(flags | extra)
            return {"net_namespace": True, "pid_namespace": True,
                    "user_namespace": bool(extra)}
        except OSError:
            continue
    try:
        os.unshare(os.CLONE_NEWNET | os.CLONE_NEWUSER)
        return {"net_namespace": True, "pid_namespace": False, "user_namespace": True}
    except OSError as exc:
        return {"net_namespace": False, "pid_namespace": False, "user_namespace": False,
                "namespace_error": str(exc)}


def _install_seccomp(path: str) -> dict[str, Any]:
    """Load the host's filter for this process and all its threads (TSYNC), after setting
    no_new_privs; raises when the kernel refuses, so the code never runs without it."""
    import ctypes

    with open(path, "rb") as fh:
        program = fh.read()
    if not program or len(program) % 8:
        raise OSError("the seccomp filter file is malformed")

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buf = ctypes.create_string_buffer(program, len(program))
    prog = SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS refused")
    # seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog); x86_64 number 317
    if libc.syscall(317, 1, 1, ctypes.byref(prog)) != 0:
        raise OSError(ctypes.get_errno(), "seccomp refused the filter")
    return {"seccomp": True}


def _run_as_pid1() -> None:
    """Fork into the new pid namespace; the parent waits and exits with the child's status."""
    pid = os.fork()
    if pid == 0:
        return
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            break
        except InterruptedError:
            continue
    code = os.waitstatus_to_exitcode(status)
    os._exit(128 - code if code < 0 else code)


# --- 2. runtime guard ----------------------------------------------------------------------

_BLOCKED_EVENTS = (
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
    "os.kill", "os.killpg", "os.putenv", "os.unsetenv", "os.setuid", "os.chdir", "os.chroot",
    "subprocess.", "socket.", "ctypes.", "pty.", "shutil.", "resource.setrlimit",
    "resource.prlimit", "sys.settrace", "sys.setprofile", "signal.",
    "_posixsubprocess", "mmap.", "cpython.remote_debugger", "sys.remote_exec",
    "webbrowser.", "urllib.Request", "http.client", "ftplib.", "smtplib.", "telnetlib.",
    "pickle.find_class",  # (not marshal: imports use it; not _getframe: pandas warnings do)
)
# events that touch a path: which arguments are paths, and whether they write
_PATH_EVENTS: dict[str, tuple[tuple[int, ...], bool]] = {
    "os.listdir": ((0,), False), "os.scandir": ((0,), False),
    "os.remove": ((0,), True), "os.rmdir": ((0,), True), "os.mkdir": ((0,), True),
    "os.rename": ((0, 1), True), "os.link": ((0, 1), True), "os.symlink": ((0, 1), True),
    "os.chmod": ((0,), True), "os.chown": ((0,), True), "os.truncate": ((0,), True),
    "os.utime": ((0,), True), "os.mkfifo": ((0,), True), "os.mknod": ((0,), True),
    "glob.glob": ((0,), False), "os.walk": ((0,), False), "os.fwalk": ((0,), False),
    "shutil.copyfile": ((0, 1), True),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _as_path(value: Any) -> str | None:
    if isinstance(value, int) or value is None:
        return None  # an already open descriptor
    try:
        return os.path.realpath(os.fsdecode(value))
    except (TypeError, ValueError):
        return ""


def _under(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _install_guard(workdir: str, read_roots: tuple[str, ...], allowed: frozenset[str],
                   writable: bool) -> Any:
    """Install the audit hook and the import guard; returns the `__import__` for the code.
    Without `writable` the code may write no file at all, not even in its work dir."""
    write_roots: tuple[str, ...] = (workdir,) if writable else ()
    reads = (*read_roots, workdir)
    busy = [False]
    writes = [0]

    def check_path(event: str, value: Any, write: bool) -> None:
        path = _as_path(value)
        if path is None:
            return
        if not path or not _under(path, write_roots if write else reads):
            raise SandboxViolation(f"sandbox: {'writing' if write else 'reading'} "
                                   f"{os.fsdecode(value) if value else value!r} is not allowed "
                                   f"({event}); only files in the work directory")
        if write:  # the file size limit caps each file; this caps how many
            writes[0] += 1
            if writes[0] > MAX_WRITES:
                raise SandboxViolation(f"sandbox: more than {MAX_WRITES} file writes")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if busy[0]:
            return
        busy[0] = True
        try:
            if event == "open":
                path, mode, flags = (*args, None, None, 0)[:3]
                write = any(c in str(mode or "") for c in "wax+") or bool(
                    isinstance(flags, int) and flags & _WRITE_FLAGS)
                check_path(event, path, write)
            elif event in _PATH_EVENTS:
                positions, write = _PATH_EVENTS[event]
                for i in positions:
                    if i < len(args):
                        check_path(event, args[i], write)
            elif event.startswith(_BLOCKED_EVENTS):
                raise SandboxViolation(f"sandbox: {event} is not allowed (no processes, "
                                       "network, signals, native calls or unpickling)")
        finally:
            busy[0] = False

    real_import = builtins.__import__

    def refuse(name: str, level: int) -> None:
        if level or name.split(".")[0] not in allowed:
            raise ImportError(f"sandbox: import of {name!r} is not allowed (allowed: "
                              f"{', '.join(sorted(allowed))})")

    def guarded_import(name: str, globals: Any = None, locals: Any = None,
                       fromlist: Any = (), level: int = 0) -> Any:
        """Every import in the process: the code's own are held to the allowlist."""
        if isinstance(globals, dict) and globals.get("__name__") == "__sandbox__":
            refuse(name, level)
        return real_import(name, globals, locals, fromlist, level)

    def code_import(name: str, globals: Any = None, locals: Any = None,
                    fromlist: Any = (), level: int = 0) -> Any:
        """`__import__` as the code sees it: always held to the allowlist."""
        refuse(name, level)
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded_import
    sys.addaudithook(hook)
    return code_import


def _safe_builtins(code_import: Any) -> dict[str, Any]:
    banned = {"eval", "exec", "compile", "breakpoint", "input", "help", "exit", "quit",
              "globals", "locals", "vars", "memoryview", "open"}
    safe = {k: v for k, v in vars(builtins).items() if k not in banned}
    safe["__import__"] = code_import

    def sandbox_open(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if isinstance(file, int):
            raise SandboxViolation("sandbox: open() takes a file name in the work directory")
        return builtins.open(file, mode, *args, **kwargs)

    safe["open"] = sandbox_open
    return safe


def _read_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")
             if k in paths}
    roots |= {"/usr/share/zoneinfo", "/proc/cpuinfo", "/proc/meminfo", "/dev/null",
              "/dev/urandom", "/sys/devices/system/cpu"}
    mpl = os.environ.get("MPLCONFIGDIR")
    if mpl:
        roots.add(os.path.realpath(mpl))
    return tuple(sorted(roots))


def _preload(code: str, allowed: frozenset[str], want_frames: bool) -> dict[str, Any]:
    """Import the allowed modules the code uses (before the guard, so their own imports of os
    and friends work) and return the names scripts get for free."""
    names: set[str] = {"math", "json", "datetime"}
    if want_frames:
        names |= {"pandas", "numpy"}
    try:
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    except SyntaxError:
        pass
    if "pandas_ta" in code or ".ta." in code:
        names |= {"pandas_ta", "pandas", "numpy"}
    names &= allowed
    ns: dict[str, Any] = {}
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(names):
            ns[name] = importlib.import_module(name)
        if "matplotlib" in names:
            import matplotlib

            matplotlib.use("Agg")
            importlib.import_module("matplotlib.figure")
            importlib.import_module("matplotlib.pyplot")
            importlib.import_module("matplotlib.font_manager")
    short = {"pandas": "pd", "numpy": "np", "pandas_ta": "ta"}
    return {short.get(k, k): v for k, v in ns.items()}


# --- 3. running the code -------------------------------------------------------------------


class _CappedText(io.StringIO):
    def write(self, s: str) -> int:
        if self.tell() < MAX_STDOUT:
            super().write(s[: MAX_STDOUT - self.tell()])
        return len(s)


def jsonable(obj: Any, depth: int = 0) -> Any:
    """Plain JSON values from numbers, numpy, pandas and containers (NaN and inf become None)."""
    if depth > 6:
        return str(obj)[:200]
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    np = sys.modules.get("numpy")
    pd = sys.modules.get("pandas")
    if np is not None:
        if isinstance(obj, np.generic):
            return jsonable(obj.item(), depth + 1)
        if isinstance(obj, np.ndarray):
            return [jsonable(x, depth + 1) for x in obj.ravel()[:MAX_ITEMS].tolist()]
    if pd is not None:
        if isinstance(obj, pd.DataFrame):
            frame = obj.tail(500).reset_index()
            return [{str(k): jsonable(v, depth + 1) for k, v in row.items()}
                    for row in frame.to_dict(orient="records")]
        if isinstance(obj, pd.Series):
            tail = obj.tail(MAX_ITEMS)
            return {str(k.date() if hasattr(k, "date") and k == k.normalize() else k):
                    jsonable(v, depth + 1) for k, v in tail.items()}
        if isinstance(obj, pd.Timestamp):
            return obj.isoformat()
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    if isinstance(obj, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in list(obj.items())[:MAX_ITEMS]}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [jsonable(v, depth + 1) for v in list(obj)[:MAX_ITEMS]]
    return str(obj)[:200]


def _error(exc: BaseException) -> dict[str, Any]:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == CODE_NAME]
    line = frames[-1].lineno if frames else None
    kind = type(exc).__name__
    message = str(exc)
    if isinstance(exc, MemoryError):
        message = message or "the script ran out of its memory limit"
    if isinstance(exc, CpuLimitExceeded):
        kind, message = "CpuLimitExceeded", "the script used up its CPU time limit"
    tb = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    where = [f"line {f.lineno}: {f.line}" for f in frames[-3:] if f.line]
    return {"type": kind, "message": message[:1000], "line": line,
            "trace": "\n".join([*where, tb])[-2000:],
            "guard": isinstance(exc, SandboxViolation) or "sandbox:" in message}


def _load_frames(frames: dict[str, str]) -> dict[str, Any]:
    if not frames:
        return {}
    import pandas as pd

    out: dict[str, Any] = {}
    for name, file in frames.items():
        df = pd.read_csv(file, index_col=0, parse_dates=[0])
        df.index.name = "date"
        out[name] = df
    return out


def _run(req: dict[str, Any], ns: dict[str, Any], code: str) -> dict[str, Any]:
    compiled = compile(code, CODE_NAME, "exec")
    exec(compiled, ns)  # the trusted runner executes the checked code in its namespace
    mode = req["mode"]
    if mode == "script":
        if "result" not in ns:
            raise ValueError("the script must assign its output to a variable named `result`")
        return {"result": jsonable(ns["result"])}
    if mode == "call":
        fn = ns.get(req["entry"])
        if not callable(fn):
            raise NameError(f"the code defines no function {req['entry']!r}")
        frames = {name: ns[name] for name in req.get("frame_args", [])}
        return {"result": jsonable(fn(**frames, **req.get("args", {})))}
    tests = []
    names = [k for k, v in list(ns.items()) if k.startswith("test_") and callable(v)]
    if not names:
        raise ValueError("the code defines no test_* functions")
    for name in names:
        try:
            ns[name]()
            tests.append({"name": name, "ok": True})
        except Exception as exc:  # a failing test is a result, not a crash
            tests.append({"name": name, "ok": False, "error": _error(exc)})
    return {"result": None, "tests": tests}


def main(request_path: str) -> int:
    with open(request_path) as fh:
        req = json.load(fh)
    workdir = os.path.realpath(req["workdir"])
    os.chdir(workdir)
    for key in ("HOME", "TMPDIR", "NUMBA_CACHE_DIR"):  # a warm child inherits the zygote's
        os.environ[key] = workdir
    with open(req["code_file"]) as fh:
        code = fh.read()
    isolation: dict[str, Any] = {"guard": bool(req["runtime_guard"])}
    jail = req.get("jail")
    if isinstance(jail, dict):
        isolation.update(jail)  # the namespaces are bwrap's
    if req["os_isolation"]:
        isolation.update(_set_limits(req["limits"]))
        if not jail:
            isolation.update(_namespaces())
            if isolation["pid_namespace"]:
                _run_as_pid1()
        isolation.update(_limit_processes(int(req["limits"]["nproc"])))
    output: dict[str, Any] = {"ok": False, "isolation": isolation}
    # opened before the guard: the answer is written even when the code may write nothing
    out_file = open(os.path.join(workdir, req["output_file"]), "w")
    dumps = json.dumps
    real_stdout = sys.stdout
    captured = _CappedText()

    def on_xcpu(signum: int, frame: Any) -> None:
        raise CpuLimitExceeded()

    signal.signal(signal.SIGXCPU, on_xcpu)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a file over the limit: an error, not death
    try:
        allowed = frozenset(req["allowed_modules"])
        ns: dict[str, Any] = {"__name__": "__sandbox__"}
        ns.update(_preload(code, allowed, bool(req.get("frames"))))
        ns.update(_load_frames(req.get("frames", {})))
        ns["args"] = req.get("args", {})
        if req.get("seccomp_file"):  # after our own imports, before the guard (it bars ctypes)
            isolation.update(_install_seccomp(req["seccomp_file"]))
        if req["runtime_guard"]:
            code_import = _install_guard(workdir, _read_roots(), allowed,
                                         bool(req.get("writable", True)))
            ns["__builtins__"] = _safe_builtins(code_import)
        sys.stdout = captured
        output.update(_run(req, ns, code))
        output["ok"] = True
    except BaseException as exc:  # everything the code does wrong is reported, not raised
        output["error"] = _error(exc)
    finally:
        sys.stdout = real_stdout
    output["stdout"] = captured.getvalue()
    output["refusals"] = list(REFUSALS)
    charts = sorted((f for f in os.listdir(workdir) if f.endswith(".png")),
                    key=lambda f: os.path.getmtime(os.path.join(workdir, f)))
    output["charts"] = charts[: int(req["limits"]["max_charts"])]
    output["charts_dropped"] = max(0, len(charts) - int(req["limits"]["max_charts"]))
    try:
        text = dumps(output, allow_nan=False, default=str)
    except ValueError:
        text = dumps({"ok": False, "isolation": isolation, "error": {
            "type": "ValueError", "message": "the result could not be written as JSON"}})
    if len(text) > MAX_OUTPUT_CHARS:
        text = dumps({"ok": False, "isolation": isolation, "error": {
            "type": "ValueError", "message": f"the result is too large ({len(text)} "
                                             "characters): return fewer, summarised numbers"}})
    with out_file:  # from the start, whatever the code wrote to the same name
        out_file.seek(0)
        out_file.write(text)
        out_file.truncate()
    return 0


# --- the warm start: a spare runner that imported the heavy modules before its request -------

WARM_MODULES = ("numpy", "pandas", "pandas_ta", "matplotlib")


def spare(request_path: str) -> int:
    """Import the heavy allowed modules, say `ready`, wait for `go` on stdin, then run the
    request the host has written meanwhile (the same `main` as a cold start). Any other line,
    or EOF, ends the spare unused."""
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in WARM_MODULES:
            importlib.import_module(name)
        import matplotlib

        matplotlib.use("Agg")
        for name in ("matplotlib.figure", "matplotlib.pyplot", "matplotlib.font_manager"):
            importlib.import_module(name)
    os.write(1, b"ready\n")
    if sys.stdin.readline().strip() != "go":
        return 0
    return main(request_path)


if __name__ == "__main__":
    status = spare(sys.argv[2]) if sys.argv[1] == "--spare" else main(sys.argv[1])
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # the answer is written: no interpreter teardown (pandas' costs 0.1-1 s)
