"""Write pytest's assertion-rewritten bytecode once, before the xdist workers start (issue 31).

pytest rewrites the asserts of every test module, conftest and plugin module it imports and
caches the result beside the source (`__pycache__/*-pytest-<version>.pyc`). Where
PYTHONDONTWRITEBYTECODE is set (as in the sessions that run this suite) it never writes that
cache, and on a fresh clone the four workers start together with none: each rewrote all ~340
modules itself, 7-10 s of CPU per worker before its first test. `make test` runs this first,
beside the static checks: the same rewrite, with pytest's own functions, written once.

It uses pytest internals (`_pytest.assertion.rewrite`), pinned by uv.lock; if they move, it
says so in one line and the suite runs as before (each worker rewrites for itself).
"""

from __future__ import annotations

import importlib.metadata
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _plugin_sources() -> Iterator[Path]:
    """The .py files of every installed distribution that registers a pytest plugin: pytest
    rewrites all of their modules (`Config._mark_plugins_for_rewrite`)."""
    for dist in importlib.metadata.distributions():
        if not any(ep.group == "pytest11" for ep in dist.entry_points):
            continue
        for file in dist.files or []:
            if file.suffix == ".py" and "tests" not in file.parts:
                yield Path(str(dist.locate_file(file)))


def _test_sources() -> Iterator[Path]:
    for path in (ROOT / "tests").rglob("*.py"):
        if path.name == "conftest.py" or path.name.startswith("test_"):
            yield path


def main() -> int:
    began = time.process_time()
    try:
        from _pytest.assertion import AssertionState
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            get_cache_dir,
            try_makedirs,
        )
        from _pytest.config import get_config

        config = get_config()
        state = AssertionState(config, "rewrite")
    except (ImportError, AttributeError, TypeError) as exc:
        print(f"prewrite_asserts: pytest's rewrite internals moved ({exc}); skipped")
        return 0
    written = 0
    for path in [*_test_sources(), *_plugin_sources()]:
        if not path.is_file():
            continue
        cache = get_cache_dir(path)
        pyc = cache / (path.name[:-3] + PYC_TAIL)
        if _read_pyc(path, pyc, state.trace) is not None:
            continue  # already there and current
        try:
            try_makedirs(cache)
            source_hash, code = _rewrite_test(path, config)
        except (OSError, SyntaxError):
            continue  # pytest will say what is wrong with it when it imports it
        written += _write_pyc(state, code, source_hash, pyc)
    print(f"prewrite_asserts: {written} modules rewritten in "
          f"{time.process_time() - began:.1f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
