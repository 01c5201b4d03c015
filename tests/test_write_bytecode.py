"""The install's bytecode (devtools/write_bytecode.py): every module a jailed run can reach has
a valid .pyc beside it, since the jail (the venv read-only) can neither write one nor afford to
compile pandas again on every run."""

from __future__ import annotations

import importlib.util
import struct
from pathlib import Path

from devtools.write_bytecode import _sources, sandbox_distributions


def _valid_pyc(source: Path) -> bool:
    """What the importer checks before it uses a .pyc (timestamp-based, PEP 552 flags 0)."""
    pyc = Path(importlib.util.cache_from_source(str(source)))
    try:
        head = pyc.read_bytes()[:16]
    except FileNotFoundError:
        return False
    stat = source.stat()
    return (head[:4] == importlib.util.MAGIC_NUMBER
            and struct.unpack("<III", head[4:16])
            == (0, int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF))


def test_the_sandbox_libraries_and_what_they_require_are_compiled() -> None:
    dists = sandbox_distributions()
    # the allowed modules' own, and what they pull in (numba: pandas_ta's indicators)
    assert {"numpy", "pandas", "pandas-ta", "matplotlib", "numba", "llvmlite"} <= dists, dists
    sources = [Path(s) for dist in dists for s in _sources(dist)]
    missing = [str(s) for s in sources if not _valid_pyc(s)]
    assert len(sources) > 1000
    assert missing == [], f"{len(missing)} of {len(sources)} without bytecode: {missing[:5]}"
