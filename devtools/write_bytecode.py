"""The venv's bytecode, written at install for what Bullpen runs, not for every module installed.

`uv sync --compile-bytecode` compiled all ~12,600 modules of the venv: 46 s of CPU on a fresh
2-core machine, a tenth of a fresh `make test`, mostly for modules nothing imports (2,300 of
them are the libraries' own tests; most of openai's 2,000 type modules are never loaded). The
Makefile now installs without it and runs this instead; any module it misses is compiled and
written by the first process that imports it (the Makefile unexports PYTHONDONTWRITEBYTECODE).

What must be written here, not on first use:

- the sandbox's libraries, whole (`SANDBOX_PACKAGES`, their tests left out): a jailed run sees
  the venv read-only, so a module without its .pyc is compiled again by every run that imports
  it (2 s of CPU for pandas, against a 10 s limit), and its code may import any submodule;
- what the warm spare imports and what a started Bullpen imports (`import_the_product`), with
  everything they import in turn: written once here rather than by four test workers at once.

    .venv/bin/python devtools/write_bytecode.py
"""

from __future__ import annotations

import compileall
import importlib
import importlib.util
import os
import pkgutil
import re
import sys
import time
import tomllib
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The third-party packages of the sandbox's allowed modules (tools/sandbox/policy.py); the rest
# of that list is the standard library, compiled when Python was installed.
SANDBOX_PACKAGES = ("numpy", "pandas", "pandas_ta", "matplotlib")
SKIP = re.compile(r"[/\\]tests?[/\\]")


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


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"write_bytecode: {name} is not installed as a package")
    return Path(next(iter(spec.submodule_search_locations)))


def main() -> int:
    began = time.process_time()
    sys.dont_write_bytecode = False
    from tools.sandbox.policy import ALLOWED_MODULES

    missing = set(SANDBOX_PACKAGES) - ALLOWED_MODULES
    if missing:
        raise SystemExit(f"write_bytecode: {sorted(missing)} are no longer allowed in the "
                         "sandbox: update SANDBOX_PACKAGES")
    for name in SANDBOX_PACKAGES:
        if not compileall.compile_dir(_package_dir(name), quiet=1, rx=SKIP,
                                      workers=os.cpu_count() or 1):
            return 1
    # pandas as the jail starts it, with pyarrow (`bullpen` itself starts it without)
    from tools.sandbox.runner import WARM_MODULES

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in (*WARM_MODULES, "matplotlib.pyplot", "matplotlib.font_manager"):
            importlib.import_module(name)
        import_the_product()
    print(f"write_bytecode: {time.process_time() - began:.1f} s of CPU in this process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
