"""The wall holds alone: every escape attempt is stopped by the OS layer (the bubblewrap jail,
the unprivileged user, the seccomp filter) with BOTH Python layers switched off (no AST check,
no in-process guard), when the host is root (as `serve` and CI run here) and when it is an
ordinary user (the jail in a user namespace, driven by a process that dropped root first).

Each attempt catches its own error and reports it, so a test sees what the code got: nothing
that it aimed at may come back, nothing may change on the host, no connection may arrive.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from tests import warm_bullpen
from tests.tools.sandbox.conftest import Listener
from tools.sandbox import Sandbox, SandboxLimits, SandboxPolicy
from tools.sandbox.seccomp import build_filter

SECRET = "escape-canary-7f3a9c"  # in the host's environment for the whole module
LIMITS = SandboxLimits(cpu_s=5, wall_s=60, memory_mb=1024)
NO_PYTHON_LAYERS = SandboxPolicy(ast_check=False, runtime_guard=False)


@dataclass(frozen=True)
class Attempt:
    name: str
    code: str  # sets `result`; placeholders filled per run


def _try(body: str) -> str:
    """Wrap an attempt: result is 'ESCAPED: ...' when it worked, else the error it met."""
    indented = "\n".join("    " + line for line in body.strip().splitlines())
    return f"try:\n{indented}\nexcept BaseException as exc:\n" \
           "    result = 'blocked: ' + type(exc).__name__ + ': ' + str(exc)[:200]\n"


ATTEMPTS = [
    Attempt("read_etc_passwd", _try("result = 'ESCAPED: ' + open('/etc/passwd').read()")),
    Attempt("read_pid1_environ", _try(  # pid 1 is the jail's own init: its environment is ours
        "data = open('/proc/1/environ', 'rb').read().decode('latin1')\n"
        "result = ('ESCAPED: ' + data) if 'SECRET' in data or 'DATABASE' in data "
        "else 'blocked: the jail init, ' + data")),
    Attempt("read_parent_environ", _try(
        "result = 'ESCAPED: ' + open('/proc/HOSTPID/environ', 'rb').read().decode('latin1')")),
    Attempt("find_the_secret_anywhere", _try(
        "import os\nfound = []\n"
        "for pid in os.listdir('/proc'):\n"
        "    try:\n"
        "        data = open('/proc/' + pid + '/environ', 'rb').read().decode('latin1')\n"
        "    except Exception:\n"
        "        continue\n"
        "    if 'SECRET' in data:\n"
        "        found.append(pid)\n"
        "result = ('ESCAPED: ' + str(found)) if found else 'blocked: not visible'")),
    Attempt("write_outside_the_work_dir", _try(
        "open('TARGET', 'w').write('x')\nresult = 'ESCAPED: wrote'")),
    Attempt("os_system", _try(
        "import os\nrc = os.system('touch TARGET')\n"
        "result = 'ESCAPED: ran' if rc == 0 else 'blocked: exit status ' + str(rc)")),
    Attempt("fork", _try("import os\npid = os.fork()\n"
                         "if pid == 0:\n    os._exit(0)\nresult = 'ESCAPED: forked'")),
    Attempt("exec", _try("import os\nos.execv('/usr/bin/touch', ['touch', 'TARGET'])")),
    Attempt("subprocess", _try(
        "import subprocess\nsubprocess.run(['touch', 'TARGET'])\nresult = 'ESCAPED: ran'")),
    Attempt("tcp_to_loopback", _try(
        "import socket\ns = socket.create_connection(('127.0.0.1', PORT), timeout=3)\n"
        "result = 'ESCAPED: connected'")),
    Attempt("postgres_unix_socket", _try(
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('PGSOCKET')\n"
        "result = 'ESCAPED: connected'")),
    Attempt("read_the_data_directory", _try(
        "result = 'ESCAPED: ' + open('PGDATA/PG_VERSION').read()")),
    Attempt("list_the_data_directory", _try(
        "import os\nresult = 'ESCAPED: ' + str(os.listdir('PGDATA'))")),
    Attempt("signal_the_parent", _try(
        "import os, signal\nos.kill(HOSTPID, signal.SIGSTOP)\nresult = 'ESCAPED: signalled'")),
    Attempt("ptrace_the_parent", _try(
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "rc = libc.ptrace(16, HOSTPID, 0, 0)\n"  # PTRACE_ATTACH
        "result = 'ESCAPED: attached' if rc == 0 else "
        "'blocked: errno ' + str(ctypes.get_errno())")),
    Attempt("pickle_runs_a_command", _try(
        "import pickle, os\n"
        "class P:\n    def __reduce__(self):\n"
        "        return (os.system, ('touch TARGET',))\n"
        "rc = pickle.loads(pickle.dumps(P()))\n"
        "result = 'ESCAPED: ran' if rc == 0 else 'blocked: exit status ' + str(rc)")),
    Attempt("new_user_namespace", _try(
        "import os\nos.unshare(os.CLONE_NEWUSER | os.CLONE_NEWNS)\n"
        "result = 'ESCAPED: new namespace'")),
    Attempt("become_root", _try("import os\nos.setuid(0)\nresult = 'ESCAPED: root'")),
]


@pytest.fixture(autouse=True)
def secret_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BULLPEN_ESCAPE_SECRET", SECRET)


@pytest.fixture
async def pg(pg_dsn: str) -> tuple[str, str]:
    """The data directory and the Unix socket of the Postgres the tests run."""
    conn = await asyncpg.connect(pg_dsn)
    try:
        data = str(await conn.fetchval("SHOW data_directory"))
        dirs = str(await conn.fetchval("SHOW unix_socket_directories"))
        port = int(await conn.fetchval("SHOW port"))
    finally:
        await conn.close()
    return data, f"{dirs.split(',')[0].strip()}/.s.PGSQL.{port}"


def _fill(code: str, *, target: Path, port: int, pg: tuple[str, str]) -> str:
    return (code.replace("TARGET", str(target)).replace("HOSTPID", str(os.getpid()))
            .replace("PORT", str(port)).replace("PGDATA", pg[0]).replace("PGSOCKET", pg[1])
            .replace("SECRET", SECRET))


def _assert_blocked(result: object, everything: str, target: Path,
                    listener: Listener) -> None:
    assert isinstance(result, str) and result.startswith("blocked"), result
    assert SECRET not in everything, "the host's environment was read"
    assert "root:x:0:0" not in everything
    assert not target.exists(), "the attempt changed the host's file system"
    assert listener.accepted == 0, "a connection reached the host"


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=[a.name for a in ATTEMPTS])
async def test_the_os_layer_alone_stops_it_with_serve_as_root(
        attempt: Attempt, tmp_path: Path, listener: Listener, pg: tuple[str, str]) -> None:
    if os.geteuid() != 0:
        pytest.skip("this case is the root host's; the next test is the ordinary user's")
    target = tmp_path / "escaped.txt"
    sandbox = Sandbox(limits=LIMITS, policy=NO_PYTHON_LAYERS)
    run = await sandbox.run(_fill(attempt.code, target=target, port=listener.port, pg=pg))
    assert run.ok, run.message()  # the code ran to its end: the OS answered the attempt
    assert run.isolation["jail"] == "bubblewrap" and run.isolation["uid"] != 0
    assert run.isolation["seccomp"] is True and run.isolation["guard"] is False
    _assert_blocked(run.result, run.model_dump_json(), target, listener)
    assert run.leftover == 0 and warm_bullpen.descendants() == []


# --- the same attempts with the host as an ordinary user ---------------------------------------

_DRIVER = r'''
import importlib.util, json, os, subprocess, sys, tempfile
from pathlib import Path
def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
HERE = sys.argv[1]
jail_mod = load("jail")
jail = jail_mod.probe(sys.executable, Path(HERE, "runner.py"))
assert jail.drop_to is None and os.getuid() != 0
out = {}
for name, code in json.load(open(sys.argv[2])).items():
    work = tempfile.mkdtemp(prefix="bullpen-sandbox-")
    open(os.path.join(work, "code.py"), "w").write(code)
    open(os.path.join(work, "filter.bpf"), "wb").write(open(sys.argv[3], "rb").read())
    req = {"workdir": work, "code_file": "code.py", "output_file": "output.json",
           "mode": "script", "entry": "", "args": {}, "frames": {},
           "limits": json.loads(sys.argv[4]), "runtime_guard": False, "os_isolation": True,
           "allowed_modules": [], "jail": jail.describe(), "seccomp_file": "filter.bpf"}
    open(os.path.join(work, "request.json"), "w").write(json.dumps(req))
    argv = jail.command([sys.executable, "-I", os.path.join(HERE, "runner.py"),
                         os.path.join(work, "request.json")], workdir=Path(work))
    subprocess.run(argv, env={"PATH": "/usr/bin:/bin", "HOME": work}, timeout=60,
                   stdin=subprocess.DEVNULL, capture_output=True)
    out[name] = json.load(open(os.path.join(work, "output.json")))
print(json.dumps(out))
'''


def _run_as_ordinary_user(python: str, codes: dict[str, str], tmp_path: Path,
                          ) -> dict[str, Any]:
    """Copy the jail, the runner and the filter where user 65534 can read them, and run the
    driver as that user; the runner's output per attempt."""
    here = Path(tempfile.mkdtemp(prefix="bullpen-jail-user-"))
    try:
        for name in ("jail.py", "runner.py"):
            shutil.copy(Path(__file__).parents[3] / "tools" / "sandbox" / name, here / name)
        program = build_filter()
        assert program is not None
        (here / "filter.bpf").write_bytes(program)
        tmp_path.chmod(0o777)  # the ordinary user could write here, were it not jailed
        (here / "codes.json").write_text(json.dumps(codes))
        os.chmod(here, 0o755)
        for path in here.iterdir():
            path.chmod(0o644)
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-I",
                "-c", _DRIVER, str(here), str(here / "codes.json"), str(here / "filter.bpf"),
                json.dumps(LIMITS.as_json())]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600,
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp",
                                   "BULLPEN_ESCAPE_SECRET": SECRET})
        assert done.returncode == 0, done.stderr[-2000:]
        result: dict[str, Any] = json.loads(done.stdout)
        return result
    finally:
        shutil.rmtree(here, ignore_errors=True)


async def test_the_os_layer_alone_stops_it_with_serve_as_an_ordinary_user(
        tmp_path: Path, listener: Listener, pg: tuple[str, str]) -> None:
    """The host drops to an ordinary user (65534) and drives the same jail, runner and filter
    with the system's Python (the project's venv may sit in a directory only root enters)."""
    python = shutil.which("python3", path="/usr/bin:/bin")
    if os.geteuid() != 0 or python is None:
        pytest.skip("needs root to become an ordinary user, and /usr/bin/python3")
    target = tmp_path / "escaped.txt"
    codes = {a.name: _fill(a.code, target=target, port=listener.port, pg=pg) for a in ATTEMPTS}
    outputs = await asyncio.to_thread(_run_as_ordinary_user, python, codes, tmp_path)
    for attempt in ATTEMPTS:
        out = outputs[attempt.name]
        assert out["ok"], (attempt.name, out)
        assert out["isolation"]["user_namespace"] is True and out["isolation"]["seccomp"]
        _assert_blocked(out["result"], json.dumps(out), target, listener)


async def test_without_the_jail_code_is_not_run_unless_accepted(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A host without bubblewrap: the run is refused and says why; the named setting that
    accepts weaker isolation runs it with what is left (and says so in the report)."""
    from tools.sandbox import jail as jail_mod

    monkeypatch.setenv("PATH", str(tmp_path))  # no bwrap to be found
    jail_mod.forget_probe()
    try:
        refused = await Sandbox(limits=LIMITS).run("result = 1")
        assert refused.status == "blocked" and refused.refused_by == "os jail"
        assert "bubblewrap" in refused.error and refused.result is None
        weak = await Sandbox(limits=LIMITS, policy=SandboxPolicy(weak_isolation_ok=True)).run(
            "result = 1")
        assert weak.ok and weak.result == 1 and "jail" not in weak.isolation
    finally:
        monkeypatch.undo()
        jail_mod.forget_probe()
    assert sys.executable  # the interpreter path is untouched by PATH
