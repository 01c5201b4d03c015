"""The escape suite: every attempt is blocked and reported, by the AST check when both layers
are on, and again by the child's own defences when the AST check is switched off by name. No
attempt leaves a process behind, reads what it aimed at, writes outside its work dir or opens a
connection."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import psutil
import pytest

from tests import warm_bullpen
from tests.tools.sandbox.conftest import Listener
from tools.sandbox import Sandbox, SandboxLimits, SandboxPolicy, SandboxRun


@dataclass(frozen=True)
class Escape:
    name: str
    code: str
    # what the AST check says about it (None: nothing static to see; the OS limits stop it)
    ast_says: str | None
    runtime_says: str  # text in the report when the AST check is off


ESCAPES = [
    Escape("import_os", "import os\nresult = os.listdir('/')", "import of 'os'",
           "import of 'os' is not allowed"),
    Escape("import_subprocess",
           "import subprocess\nresult = subprocess.run(['id'], capture_output=True).stdout",
           "import of 'subprocess'", "import of 'subprocess' is not allowed"),
    Escape("import_socket", "import socket\nresult = socket.socket().fileno()",
           "import of 'socket'", "import of 'socket' is not allowed"),
    Escape("import_ctypes", "import ctypes\nresult = ctypes.CDLL(None).getpid()",
           "import of 'ctypes'", "import of 'ctypes' is not allowed"),
    Escape("dunder_import", "os = __import__('os')\nresult = os.listdir('/')",
           "'__import__' is not allowed", "import of 'os' is not allowed"),
    Escape("getattr_trick",
           "import pandas as pd\nos = getattr(pd.io.common, 'o' + 's')\n"
           "result = os.popen('id').read()",
           "'getattr' is not allowed", "subprocess.Popen is not allowed"),
    Escape("subclasses_trick",
           "c = [k for k in ().__class__.__base__.__subclasses__()\n"
           "     if k.__name__ == 'catch_warnings'][0]\n"
           "os = c()._module.__builtins__['__import__']('os')\n"
           "result = os.system('id')",
           "dunder attribute .__class__", "os.system is not allowed"),
    Escape("eval_through_a_string",
           "import typing\ndef f(x: \"__import__('os').system('id')\"): pass\n"
           "result = typing.get_type_hints(f)",
           "names a dunder attribute", "import of 'os' is not allowed"),
    Escape("os_through_pandas", "import pandas as pd\nresult = pd.io.common.os.listdir('/')",
           "attribute .os", "reading '/' is not allowed"),
    Escape("os_through_numpy",
           "import numpy as np\nresult = np.lib._datasource.os.system('id')",
           "attribute .os", "os.system is not allowed"),
    Escape("read_etc_passwd", "result = open('/etc/passwd').read()",
           "outside the work directory", "reading '/etc/passwd' is not allowed"),
    Escape("read_postgres_files", "result = open(PGDATA + '/PG_VERSION').read()",
           "outside the work directory", "is not allowed (open)"),
    Escape("write_outside", "with open(TARGET, 'w') as f:\n    f.write('escaped')\nresult = 1",
           "outside the work directory", "writing"),
    Escape("fork_bomb",
           "import pandas as pd\nos = pd.io.common.os\nwhile True:\n    os.fork()",
           "attribute .os", "os.fork is not allowed"),
    Escape("memory_bomb", "blob = bytearray(8 * 1024 ** 3)\nresult = len(blob)",
           None, "memory limit"),
    Escape("infinite_loop", "n = 0\nwhile True:\n    n += 1", None, "CPU time limit"),
    Escape("network_127_0_0_1",
           "import pandas as pd\nresult = pd.io.common.urlopen('http://127.0.0.1:PORT/').read()",
           "attribute .io", "is not allowed (no processes, network"),
    Escape("numpy_pickle",
           "import numpy as np\nclass P:\n    def __reduce__(self):\n"
           "        return (print, ('pickled code ran',))\n"
           "np.save('p.npy', np.array([P()], dtype=object), allow_pickle=True)\n"
           "result = str(np.load('p.npy', allow_pickle=True))",
           "allow_pickle= is not allowed", "pickle.find_class is not allowed"),
    Escape("socket_127_0_0_1",
           "import socket\ns = socket.create_connection(('127.0.0.1', PORT), timeout=2)\n"
           "result = s.recv(10)", "import of 'socket'", "import of 'socket' is not allowed"),
]


@pytest.fixture
async def pgdata(pg_dsn: str) -> str:
    conn = await asyncpg.connect(pg_dsn)
    try:
        return str(await conn.fetchval("SHOW data_directory"))
    finally:
        await conn.close()


LIMITS = SandboxLimits(cpu_s=2, wall_s=20, memory_mb=1024)


def _code(escape: Escape, *, pgdata: str, target: Path, port: int) -> str:
    return (escape.code.replace("PGDATA", repr(pgdata)).replace("TARGET", repr(str(target)))
            .replace("PORT", str(port)))


def _assert_contained(run: SandboxRun, target: Path, listener: Listener,
                      ) -> None:
    assert run.status != "ok", run
    assert run.result is None
    assert not target.exists(), "a file was written outside the work directory"
    assert listener.accepted == 0, "a connection reached the host"
    assert run.leftover == 0
    assert _children_but_spares() == []


def _children_but_spares() -> list[psutil.Process]:
    """Our child processes, except the warm fixture's waiting spare (and its jail)."""
    left = []
    for proc in warm_bullpen.descendants():
        try:
            if "--spare" not in " ".join(proc.cmdline()):
                left.append(proc)
        except psutil.NoSuchProcess:
            continue
    return left


@pytest.fixture(scope="module")
async def warm() -> AsyncIterator[Sandbox]:
    """The warm start (a spare with the modules imported), with the AST check off."""
    sandbox = Sandbox(limits=LIMITS, policy=SandboxPolicy(ast_check=False), warm=True)
    yield sandbox
    await sandbox.aclose()
    assert warm_bullpen.descendants() == []


@pytest.mark.parametrize("escape", ESCAPES, ids=[e.name for e in ESCAPES])
async def test_blocked_with_both_layers(escape: Escape, pgdata: str, tmp_path: Path,
                                        listener: Listener) -> None:
    target = tmp_path / "escaped.txt"
    run = await Sandbox(limits=LIMITS).run(
        _code(escape, pgdata=pgdata, target=target, port=listener.port))
    _assert_contained(run, target, listener)
    if escape.ast_says is not None:
        assert run.status == "blocked" and run.refused_by == "ast"
        assert escape.ast_says in run.error, run.error
        assert run.isolation == {}  # refused before any process started
    else:
        assert run.refused_by == "os limits"
        assert escape.runtime_says in run.message(), run.message()


@pytest.mark.parametrize("escape", ESCAPES, ids=[e.name for e in ESCAPES])
async def test_blocked_by_the_child_when_the_ast_check_is_off(
        escape: Escape, pgdata: str, tmp_path: Path, listener: Listener) -> None:
    target = tmp_path / "escaped.txt"
    sandbox = Sandbox(limits=LIMITS, policy=SandboxPolicy(ast_check=False))
    run = await sandbox.run(_code(escape, pgdata=pgdata, target=target, port=listener.port))
    _assert_contained(run, target, listener)
    assert run.refused_by in ("runtime guard", "os limits"), run
    assert escape.runtime_says in run.message(), run.message()


@pytest.mark.parametrize("escape", ESCAPES, ids=[e.name for e in ESCAPES])
async def test_blocked_in_a_warm_start_too(escape: Escape, warm: Sandbox, pgdata: str,
                                          tmp_path: Path, listener: Listener) -> None:
    """A run taken by a spare (pandas already imported) is held by the same defences."""
    target = tmp_path / "escaped.txt"
    await warm.pending_spare()  # it really runs warm
    run = await warm.run(_code(escape, pgdata=pgdata, target=target, port=listener.port))
    _assert_contained(run, target, listener)
    assert run.refused_by in ("runtime guard", "os limits"), run
    assert escape.runtime_says in run.message(), run.message()
    assert run.isolation.get("guard") is True


async def test_network_namespace_alone_refuses_loopback(listener: Listener) -> None:
    """With the AST check and the in-process guard both off, the OS layer still has no
    network: the child's namespace has only a loopback interface that is down."""
    code = ("import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {listener.port}), timeout=2)\n"
            "    result = 'connected'\nexcept OSError as exc:\n    result = str(exc)\n")
    policy = SandboxPolicy(ast_check=False, runtime_guard=False)
    run = await Sandbox(limits=LIMITS, policy=policy).run(code)
    if not run.isolation.get("net_namespace"):
        pytest.skip(f"no network namespace on this machine: {run.isolation}")
    assert run.ok, run
    assert run.result != "connected"
    assert any(w in run.result.lower() for w in ("unreachable", "not permitted", "refused"))
    assert listener.accepted == 0
    assert run.leftover == 0 and _children_but_spares() == []


async def test_pid_namespace_ends_every_process_the_code_started() -> None:
    """With only the namespaces on (no seccomp filter, which would refuse the process), a child
    that starts a sleeper and returns leaves nothing: the pid namespace ended with it."""
    code = ("import subprocess\np = subprocess.Popen(['sleep', '67.25'])\nresult = p.pid")
    policy = SandboxPolicy(ast_check=False, runtime_guard=False, seccomp=False)
    run = await Sandbox(limits=LIMITS, policy=policy).run(code)
    if not run.isolation.get("pid_namespace"):
        pytest.skip(f"no pid namespace on this machine: {run.isolation}")
    assert run.ok, run
    assert run.leftover == 0
    assleep = [p for p in psutil.process_iter(["cmdline"])
               if (p.info.get("cmdline") or [])[:2] == ["sleep", "67.25"]
               and p.ppid() in (1, 0)]
    assert assleep == [] and _children_but_spares() == []
