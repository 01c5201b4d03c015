"""pandas without pyarrow in Bullpen's own processes (issue 34: serve under 250 MB).

pandas 3 imports pyarrow while it is itself imported whenever pyarrow is installed, to back
its default string dtype: ~50 MB of RSS (pyarrow's shared libraries) in every process, though
nothing Bullpen does with pandas (bars, statements, indicators, charts) needs Arrow. Only
reading parquet does: the dartlab pack's SEC section text, edgartools' ticker table (when the
symbols directory is built), and `pd.read_parquet` imports pyarrow when it is first called.

`without_pyarrow()` makes the first import of pandas in this process run as if pyarrow were
not installed: pyarrow cannot be imported while pandas is initialising, and can be afterwards.
pandas then backs the same `str` dtype with Python strings (its documented "python" storage:
the same values, missing values and methods), and `read_parquet` still loads pyarrow on first
use and converts Arrow strings to that dtype. The CLI calls it before any command runs and
the test session before it imports anything, so every `bullpen` process and the tests run
pandas one way. The sandbox's runner is a process of its own and keeps pandas' default.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType


class _PyarrowWhilePandasStarts(importlib.abc.MetaPathFinder):
    """Refuses `pyarrow` (and its submodules) while `pandas` is being initialised."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".", 1)[0] == "pyarrow" and pandas_initialising():
            raise ModuleNotFoundError(
                f"No module named {fullname!r} while pandas starts (bot.lean_pandas)",
                name=fullname)
        return None


_FINDER = _PyarrowWhilePandasStarts()


def pandas_initialising() -> bool:
    """pandas is in `sys.modules` and its import has not finished (importlib marks a module's
    spec `_initializing` while its code runs: what its own partial-import errors read)."""
    pandas = sys.modules.get("pandas")
    spec = getattr(pandas, "__spec__", None)
    return bool(getattr(spec, "_initializing", False))


def without_pyarrow() -> bool:
    """Have pandas, when this process first imports it, start without pyarrow. True when that
    holds (already set, or pandas not imported yet); False when pandas is already imported
    with pyarrow (too late: the caller runs after something imported pandas)."""
    if _FINDER in sys.meta_path:
        return True
    pandas = sys.modules.get("pandas")
    if pandas is not None:
        return not _pandas_has_pyarrow(pandas)
    sys.meta_path.insert(0, _FINDER)
    return True


def _pandas_has_pyarrow(pandas: ModuleType) -> bool:
    compat = sys.modules.get("pandas.compat.pyarrow")
    return bool(getattr(compat, "HAS_PYARROW", True)) if compat is not None else True


def active() -> bool:
    """pandas (imported) runs without pyarrow in this process."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and not _pandas_has_pyarrow(pandas)
