"""The venv's bytecode, written at install for what Bullpen runs, not for every module installed.

`uv sync --compile-bytecode` compiled all ~12,600 modules of the venv: 46 s of CPU on a fresh
2-core machine, a tenth of a fresh `make test`, mostly for modules nothing imports (2,300 of
them are the libraries' own tests; most of openai's 2,000 type modules are never loaded). The
Makefile now installs without it and runs this instead; any module it misses is compiled and
written by the first process that imports it (the Makefile unexports PYTHONDONTWRITEBYTECODE).

What must be written here, not on first use:

- the sandbox's libraries and what they require, whole (`sandbox_distributions`, their tests
  left out; ~1,800 modules): a jailed run sees the venv read-only, so a module without its .pyc
  is compiled again by every run that imports it (2 s of CPU for pandas, against a 10 s limit),
  and its code may reach any of their modules;
- what the warm spare imports and what a started Bullpen imports (`import_the_product`), with
  everything they import in turn: written once here rather than by four test workers at once.

    .venv/bin/python devtools/write_bytecode.py
"""

from __future__ import annotations

import compileall
import importlib
import importlib.metadata
import os
import pkgutil
import sys
import time
import tomllib
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = frozenset({"tests", "test"})


def sandbox_distributions() -> set[str]:
    """The installed distributions of the sandbox's allowed modules (tools/sandbox/policy.py;
    the standard library among them was compiled when Python was installed) and every
    distribution they require in turn: code in the jail can reach any of their modules, numba's
    compiler among them the first time a pandas_ta indicator runs in that process."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from tools.sandbox.policy import ALLOWED_MODULES

    by_module = importlib.metadata.packages_distributions()
    todo = [dist for name in ALLOWED_MODULES for dist in by_module.get(name, [])]
    found: set[str] = set()
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            requires = importlib.metadata.distribution(name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue  # an optional dependency that is not installed
        found.add(name)
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return found


def _sources(distribution: str) -> list[str]:
    dist = importlib.metadata.distribution(distribution)
    return [str(dist.locate_file(f)) for f in dist.files or []
            if f.suffix == ".py" and not SKIP_DIRS.intersection(f.parts)]


def _compile(path: str) -> bool:
    return bool(compileall.compile_file(path, quiet=2))


def import_the_product() -> None:
    """Every module of the product's packages (the import-linter's root packages), the way a
    started `bullpen` has them after its first answers. Left out: `bot.benches` (it reaches into
    tests/) and the `__main__` modules; heavy libraries imported on first use (Whisper) stay so."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    for root in config["tool"]["importlinter"]["root_packages"]:
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, f"{root}."):
            if not (info.name.startswith("bot.benches") or info.name.endswith("__main__")):
                importlib.import_module(info.name)


def main() -> int:
    began = time.process_time()
    sys.dont_write_bytecode = False
    sources = [path for name in sorted(sandbox_distributions()) for path in _sources(name)]
    with ProcessPoolExecutor(os.cpu_count() or 1) as pool:
        if not all(pool.map(_compile, sources, chunksize=64)):
            return 1
    # pandas as the jail starts it, with pyarrow (`bullpen` itself starts it without)
    from tools.sandbox.runner import WARM_MODULES

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in (*WARM_MODULES, "matplotlib.pyplot", "matplotlib.font_manager"):
            importlib.import_module(name)
        import_the_product()
    print(f"write_bytecode: {len(sources)} sandbox modules checked; "
          f"{time.process_time() - began:.1f} s of CPU in this process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
