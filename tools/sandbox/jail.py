"""The wall: the operating system's own isolation around every sandboxed run (bubblewrap).

The AST check and the in-process guard are layers a clever script may get round; this one holds
with both switched off. Each run (and each warm spare) is a `bwrap` process that gives the code:

- **an unprivileged user, never root**: as root, the mounts are made as root, then `setpriv`
  drops to `uid` (65534 by default) with no groups, no capabilities and no_new_privs; as
  another user, that user inside a new user namespace with every capability dropped;
- **a file system of its own**: a mount namespace with `/usr`, the Python runtime and the
  runner read-only, the work dir read-write, an empty `/tmp` and a minimal `/dev`; no `/etc`
  but the loader's cache, no home, no data directory, no Postgres socket, no checkout;
- **no view of other processes**: a pid namespace with its own `/proc`: the parent's
  environment, its pid and Postgres are not there to read, trace or signal;
- **no network**: a network namespace (loopback only) and the seccomp filter (no sockets);
- **no programs or processes**: the seccomp filter (`seccomp.py`) refuses exec, fork and
  namespace calls once the runner starts the code;
- **an end**: `--die-with-parent` and a new session; killing bwrap ends the namespace.

`probe()` tries the jail once per interpreter; where the host cannot give it (no bwrap, no user
namespaces for a non-root `serve`), it says why and the caller refuses to run code unless a
named setting accepts the weaker isolation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

NOBODY = 65534
PROBE_TIMEOUT_S = 60.0


class JailUnavailable(RuntimeError):
    """This host cannot build the OS jail; the message says why."""


@dataclass(frozen=True)
class Jail:
    """How to start a command inside the jail; `command` builds the argv."""

    bwrap: str
    python: str
    read_only: tuple[str, ...]  # host paths bound read-only at the same place
    drop_to: tuple[int, int] | None  # (uid, gid) set by setpriv when the host is root
    setpriv: str = ""

    @property
    def uid(self) -> int:
        return self.drop_to[0] if self.drop_to else os.getuid()

    def describe(self) -> dict[str, object]:
        """What the runner reports as its isolation."""
        return {"jail": "bubblewrap", "uid": self.uid, "root_host": self.drop_to is not None,
                "mount_namespace": True, "pid_namespace": True, "net_namespace": True,
                "user_namespace": self.drop_to is None}

    def prepare_dir(self, path: Path) -> None:
        """A directory the jailed user may write (the work dir): owned by it, 0700."""
        if self.drop_to is not None:
            os.chown(path, *self.drop_to)
        path.chmod(0o700)

    def prepare_file(self, path: Path) -> None:
        """A file in the work dir the jailed user may rewrite (its own copy of a cache)."""
        if self.drop_to is not None:
            os.chown(path, *self.drop_to)

    def command(self, argv: list[str], *, workdir: Path,
                extra_read_only: tuple[str, ...] = ()) -> list[str]:
        """`argv` (an absolute program inside the jail) wrapped in bwrap (and setpriv)."""
        args = [self.bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--die-with-parent", "--new-session",
                "--hostname", "sandbox"]
        if self.drop_to is None:
            args += ["--unshare-user", "--cap-drop", "ALL"]
        for name in ("/bin", "/lib", "/lib64", "/sbin"):  # merged-/usr links, or the dirs
            if os.path.islink(name):
                args += ["--symlink", os.readlink(name), name]
            elif os.path.isdir(name):
                args += ["--ro-bind", name, name]
        args += ["--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev",
                 "--tmpfs", "/tmp"]
        if os.path.exists("/etc/ld.so.cache"):
            args += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
        paths = [*self.read_only, *extra_read_only, str(workdir)]
        made: set[str] = {"/", "/usr", "/tmp", "/dev", "/proc"}
        for path in paths:  # parents world-traversable (bwrap would copy /root's 0700)
            parent = Path(path).parent
            for anc in [*reversed(parent.parents), parent]:
                text = str(anc)
                if text not in made and not text.startswith("/usr/"):
                    made.add(text)
                    args += ["--perms", "0755", "--dir", text]
        for path in (*self.read_only, *extra_read_only):
            if not path.startswith("/usr/"):
                args += ["--ro-bind", path, path]
        args += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir), "--"]
        if self.drop_to is not None:
            uid, gid = self.drop_to
            args += [self.setpriv, f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
                     "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all"]
        return args + argv


def _runtime_paths(python: str, runner: Path) -> tuple[str, ...]:
    """The interpreter, its standard library and site-packages (the venv), and the runner."""
    paths = sysconfig.get_paths()
    found = {os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix),
             os.path.realpath(os.path.dirname(os.path.realpath(python))),
             *(os.path.realpath(paths[k]) for k in ("stdlib", "purelib", "platlib")
               if k in paths)}
    if os.path.abspath(python) != os.path.realpath(python):  # the venv's bin/python link
        found.add(os.path.dirname(os.path.abspath(python)))
    found.add(str(runner.resolve()))
    # keep the outermost of nested paths, drop what /usr already shows
    kept: list[str] = []
    for path in sorted(found, key=len):
        if path == "/usr" or path.startswith("/usr/"):
            continue
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return tuple(sorted(kept))


_probed: dict[tuple[str, int], Jail | JailUnavailable] = {}


def probe(python: str, runner: Path, *, uid: int = NOBODY, gid: int = NOBODY) -> Jail:
    """The jail for `python`, tried once (cached): raises JailUnavailable with the reason."""
    key = (python, uid)
    cached = _probed.get(key)
    if cached is None:
        cached = _try(python, runner, uid, gid)
        _probed[key] = cached
    if isinstance(cached, JailUnavailable):
        raise cached
    return cached


def _try(python: str, runner: Path, uid: int, gid: int) -> Jail | JailUnavailable:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return JailUnavailable("bubblewrap (bwrap) is not installed: `apt-get install "
                               "bubblewrap` (make test and make run install it)")
    root = os.geteuid() == 0
    setpriv = shutil.which("setpriv") or ""
    if root and not setpriv:
        return JailUnavailable("setpriv (util-linux) is needed to drop root inside the jail")
    if root and uid == 0:
        return JailUnavailable("the sandbox user must not be root (BULLPEN_SANDBOX_UID)")
    jail = Jail(bwrap=bwrap, python=python, read_only=_runtime_paths(python, runner),
                drop_to=(uid, gid) if root else None, setpriv=setpriv)
    import tempfile

    work = Path(tempfile.mkdtemp(prefix="bullpen-jail-probe-"))
    try:
        jail.prepare_dir(work)
        argv = jail.command([python, "-I", "-c", "import os; print(os.getuid())"],
                            workdir=work)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return JailUnavailable(f"bubblewrap could not start: {exc}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return JailUnavailable(f"bubblewrap failed on this host ({why[0][:200]}); user "
                               "namespaces may be disabled for this user")
    if done.stdout.strip() == "0":
        return JailUnavailable("the jailed process ran as root")
    return jail


def forget_probe() -> None:
    """Tests that change the host (PATH, the uid) probe again."""
    _probed.clear()
