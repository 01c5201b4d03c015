"""The symbols directory: every A-share, US ticker (and a few HK names) by code, name, pinyin,
traditional characters, aliases and sound, plus the main indices, crypto and FX pairs (curated,
see ``instruments``); ``resolve`` one query, ``extract`` from a sentence.

Nothing is built at import time. ``default_directory()`` builds once per process, from the
installed packages or from a pickle cache when given ``cache_dir``.
"""

from __future__ import annotations

import gc
import hashlib
import logging
import os
import pickle
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata
from pathlib import Path

from tools.symbols.index import (
    EXTRACT_MAX_CHARS,
    ExtractWork,
    SymbolIndex,
    build_index,
    paused_gc,
)
from tools.symbols.model import Kind, Market, Match, SymbolEntry, instrument_kind

__all__ = [
    "EXTRACT_MAX_CHARS",
    "ExtractWork",
    "Kind",
    "Match",
    "SymbolDirectory",
    "SymbolEntry",
    "default_directory",
    "instrument_kind",
]

log = logging.getLogger(__name__)
_CACHE_VERSION = 2


class SymbolDirectory:
    """Resolve names and codes to securities; thin, typed facade over :class:`SymbolIndex`."""

    def __init__(self, entries: Sequence[SymbolEntry], *, index: SymbolIndex | None = None):
        self._index = index if index is not None else build_index(entries)
        self.build_seconds = 0.0

    @classmethod
    def from_entries(cls, entries: Iterable[SymbolEntry]) -> SymbolDirectory:
        """Index the given entries (e.g. loaded from Postgres)."""
        start = time.perf_counter()
        d = cls(list(entries))
        d.build_seconds = time.perf_counter() - start
        return d

    @classmethod
    def from_packages(cls, *, live: bool = False) -> SymbolDirectory:
        """Build from the data shipped by pip packages (plus online lists when ``live``)."""
        from tools.symbols.sources import build_entries

        start = time.perf_counter()
        d = cls(build_entries(live=live))
        d.build_seconds = time.perf_counter() - start
        return d

    @property
    def entries(self) -> list[SymbolEntry]:
        """The listed securities, in directory order (what the ``stocknames`` table holds)."""
        return self._index.entries[: self._index.n_listed]

    @property
    def instruments(self) -> list[SymbolEntry]:
        """The curated indices, crypto and FX pairs (built in; never stored)."""
        return self._index.entries[self._index.n_listed :]

    def __len__(self) -> int:
        """Number of listed securities (instruments not included)."""
        return self._index.n_listed

    def counts(self) -> dict[str, int]:
        """Number of listed securities per market."""
        return self._index.counts()

    def get(self, code: str, market: Market | None = None) -> SymbolEntry | None:
        """The entry for an exact canonical code (``600519``, ``BRK-B``, ``0700``, ``^GSPC``,
        ``BTC-USD``). A listed share keeps its code when an index shares it (``000001``)."""
        return self._index.get(code, market)

    def instrument(self, text: str) -> SymbolEntry | None:
        """The index, crypto or FX pair ``text`` names exactly (a symbol, name or qualified
        code: ``ETH``, ``EUR/USD``, ``上证指数``, ``000001.SH``), else None. No fuzzy match,
        and never for a bare code a listed share also uses."""
        try:
            return self._index.instrument(text)
        except (ValueError, TypeError, OverflowError):
            return None

    def resolve(self, query: str, *, market: str | None = None, limit: int = 5) -> list[Match]:
        """Best matches for a name, code, pinyin, alias or misspelling, best first.

        Several matches with close scores and ``ambiguous=True`` mean the query names more
        than one security; the caller should ask, not pick.
        """
        try:
            return self._index.resolve(query, market=market, limit=limit)
        except (ValueError, TypeError, OverflowError) as exc:  # hostile input: no result
            log.debug("resolve(%r) failed: %s", query[:80] if isinstance(query, str) else "", exc)
            return []

    def extract(self, text: str, *, work: ExtractWork | None = None) -> list[Match]:
        """Every security named in a free sentence (either language), with spans. Only the
        first `EXTRACT_MAX_CHARS` characters are read, so a long or hostile message costs at
        most what that many do; ``work`` counts what the call did."""
        try:
            return self._index.extract(text, work=work)
        except (ValueError, TypeError, OverflowError) as exc:
            log.debug("extract failed: %s", exc)
            return []


_lock = threading.Lock()
_default: SymbolDirectory | None = None

# Where the process-wide directory's entries are kept between processes (the bot: Postgres).
# `load(key)` returns the stored entries when they were built from the same packages and code
# (`key`), else None; `save(key, entries)` stores a fresh build. Both are synchronous.
EntriesLoad = Callable[[str], Sequence[SymbolEntry] | None]
EntriesSave = Callable[[str, Sequence[SymbolEntry]], None]
_store: tuple[EntriesLoad, EntriesSave] | None = None


def set_entries_store(load: EntriesLoad | None, save: EntriesSave | None = None) -> None:
    """Load the process-wide directory from (and save a fresh build to) a store; None unsets.

    Loading stored entries skips the package readers and the pinyin phrase dictionary, which
    keeps about 170 MB out of a long-running process."""
    global _store
    _store = (load, save or (lambda key, entries: None)) if load is not None else None


def _from_store(key: str) -> list[SymbolEntry] | None:
    if _store is None:
        return None
    try:
        got = _store[0](key)
    except Exception as exc:  # the store is a cache: build from the packages instead
        log.warning("symbols: stored directory not loaded: %s", exc)
        return None
    return list(got) if got else None


def _to_store(key: str, entries: Sequence[SymbolEntry]) -> None:
    if _store is None:
        return
    try:
        _store[1](key, entries)
    except Exception as exc:
        log.warning("symbols: directory not stored: %s", exc)


def content_key() -> str:
    """What the entries are built from (package versions, curated files, code): a stored
    directory with another key is stale."""
    return _cache_key()


def _cache_key() -> str:
    parts = [str(_CACHE_VERSION)]
    for dist in ("chstockdata", "edgartools", "index-constitution", "pypinyin", "opencc-purepy"):
        try:
            parts.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist}=none")
    here = Path(__file__).parent
    for name in ("aliases.json", "sources.py", "normalize.py", "model.py"):
        parts.append(hashlib.sha1((here / name).read_bytes()).hexdigest()[:12])
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


def _load_cached(cache_dir: Path) -> list[SymbolEntry] | None:
    path = cache_dir / f"symbols-{_cache_key()}.pickle"
    if not path.exists():
        return None
    try:
        with path.open("rb") as fh:
            rows = pickle.load(fh)
        with paused_gc():
            return [SymbolEntry.trusted(row) for row in rows]
    except Exception as exc:  # stale or corrupt cache: rebuild
        log.warning("ignoring symbols cache %s: %s", path, exc)
        return None


def _save_cached(cache_dir: Path, entries: Sequence[SymbolEntry]) -> None:
    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"symbols-{_cache_key()}.pickle"
    tmp = path.with_suffix(f".{os.getpid()}.tmp")  # two processes starting at once
    with tmp.open("wb") as fh:
        pickle.dump([e.model_dump() for e in entries], fh, protocol=pickle.HIGHEST_PROTOCOL)
    tmp.replace(path)


def default_directory(*, cache_dir: Path | str | None = None) -> SymbolDirectory:
    """The process-wide directory, made on first use: from ``cache_dir`` or the entries store
    when they hold this build's entries, else built from the packages (and stored)."""
    global _default
    if _default is not None:
        return _default
    with _lock:
        if _default is None:
            start = time.perf_counter()
            key = _cache_key()
            entries = _load_cached(Path(cache_dir)) if cache_dir else None
            if entries is None:
                entries = _from_store(key)
            if entries is None:
                from tools.symbols.sources import build_entries

                entries = build_entries()
                _to_store(key, entries)
                if cache_dir:
                    try:
                        _save_cached(Path(cache_dir), entries)
                    except OSError as exc:
                        log.warning("cannot write symbols cache: %s", exc)
            d = SymbolDirectory(entries)
            d.build_seconds = time.perf_counter() - start
            _settle_heap()
            _default = d
    return _default


def _settle_heap() -> None:
    """Move the (immutable, long-lived) index out of the cyclic GC's sight.

    Without this the first full collection after building walks ~10^6 index objects and one
    unlucky query pays ~100 ms; frozen objects are never scanned again.
    """
    gc.collect()
    gc.freeze()


def set_default_directory(directory: SymbolDirectory | None) -> None:
    """Replace the process-wide directory (after a refresh, or loading from Postgres)."""
    global _default
    with _lock:
        _default = directory
        if directory is not None:
            _settle_heap()
