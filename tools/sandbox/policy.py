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
})

# Shown to the model when it asks for something else.
ALLOWED_TEXT = ", ".join(sorted(ALLOWED_MODULES))


@dataclass(frozen=True)
class SandboxPolicy:
    """Which layers are on. Both are on unless a caller turns one off by name (house rule 9)."""

    ast_check: bool = True  # layer 1: static check of the source before anything runs
    runtime_guard: bool = True  # layer 2a: audit hook + import guard + trimmed builtins
    os_isolation: bool = True  # layer 2b: rlimits, network/pid namespaces where the OS allows
    allowed_modules: frozenset[str] = ALLOWED_MODULES
