"""What sandboxed code may use: one policy shared by the AST check and the runtime guard."""

from __future__ import annotations

from dataclasses import dataclass

# Modules a script may import (top-level names). Everything else is refused, statically and at
# run time. matplotlib is here for charts (the Agg canvas, no display, files only in the work dir).
ALLOWED_MODULES: frozenset[str] = frozenset({
    "pandas", "pandas_ta", "numpy", "math", "cmath", "statistics", "datetime", "json",
    "typing", "collections", "itertools", "functools", "decimal", "fractions", "dataclasses",
    "enum", "re", "matplotlib",
})

# Names that must not be called or even referenced: they run strings as code, reach the
# interpreter's internals, or walk around the other checks.
BANNED_NAMES: frozenset[str] = frozenset({
    "eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr", "globals",
    "locals", "vars", "dir", "breakpoint", "input", "help", "exit", "quit", "memoryview",
    "__builtins__", "__loader__", "__spec__",
})

# Attribute names that lead to the operating system through an allowed module's internals
# (`pandas.io.common.os`, `numpy.ctypeslib`) or run code from strings/pickles.
BANNED_ATTRIBUTES: frozenset[str] = frozenset({
    "os", "_os", "sys", "subprocess", "socket", "ctypes", "ctypeslib", "builtins", "importlib",
    "shutil", "pickle", "marshal", "pathlib", "io", "f2py", "distutils", "system", "popen",
    "fork", "eval", "read_pickle", "to_pickle", "urlopen", "request", "load_library",
    "get_type_hints", "ForwardRef", "_evaluate", "format_map",
    # frame introspection reaches the guard's own state (`dataclasses.inspect`, a traceback)
    "inspect", "currentframe", "_getframe", "f_back", "f_globals", "f_locals", "f_builtins",
    "tb_frame", "gi_frame", "cr_frame", "ag_frame", "gi_code", "co_code",
    # deserialisers that run code: pickles hidden in numpy/pandas files, and their cousins
    "allow_pickle", "shelve", "joblib", "dill", "cloudpickle", "torch",
})

# Keyword arguments that turn a safe loader into a pickle loader (`np.load(f, allow_pickle=1)`).
BANNED_KEYWORDS: frozenset[str] = frozenset({"allow_pickle", "fix_imports"})

# Shown to the model when it asks for something else.
ALLOWED_TEXT = ", ".join(sorted(ALLOWED_MODULES))


@dataclass(frozen=True)
class SandboxPolicy:
    """Which layers are on. Every one is on unless a caller turns it off by name (house rule 9).

    The first two are Python and can be got round by clever code; the OS jail is the wall, and
    it must hold with them off. Where the host cannot build the jail, code is not run at all
    unless `weak_isolation_ok` says otherwise (BULLPEN_SANDBOX_WEAK_ISOLATION)."""

    ast_check: bool = True  # layer 1: static check of the source before anything runs
    runtime_guard: bool = True  # layer 2: audit hook + import guard + trimmed builtins
    os_isolation: bool = True  # layer 3: rlimits, and (below) the jail and its filter
    os_jail: bool = True  # bubblewrap: unprivileged user, mount/pid/net namespaces
    seccomp: bool = True  # in the jail: no exec, fork, sockets, namespaces, ptrace
    weak_isolation_ok: bool = False  # without a jail on this host, run anyway (rlimits only)
    jail_uid: int = 65534  # the user the code runs as when `serve` is root
    jail_gid: int = 65534
    allowed_modules: frozenset[str] = ALLOWED_MODULES
