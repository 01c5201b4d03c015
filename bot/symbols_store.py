"""The symbols directory's entries kept in Postgres (`stocknames`) between processes.

`tools.symbols.default_directory()` is synchronous and may be first called on the event loop's
thread, so each load or save runs on a short-lived thread of its own with its own connection.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import asyncpg

from tools.symbols import SymbolEntry, set_entries_store
from tools.symbols.store import load_current, save_current


def _on_own_thread[T](make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine `make()` to its end on a new thread's own event loop."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="symbols-store") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def use_postgres(dsn: str) -> None:
    """Make the process-wide directory load from, and a fresh build save to, `dsn`."""

    async def load(key: str) -> list[SymbolEntry] | None:
        conn = await asyncpg.connect(dsn, timeout=10)
        try:
            return await load_current(conn, key)
        finally:
            await conn.close()

    async def save(key: str, entries: Sequence[SymbolEntry]) -> None:
        conn = await asyncpg.connect(dsn, timeout=10)
        try:
            await save_current(conn, key, entries)
        finally:
            await conn.close()

    set_entries_store(lambda key: _on_own_thread(lambda: load(key)),
                      lambda key, entries: _on_own_thread(lambda: save(key, entries)))


def stop_using() -> None:
    set_entries_store(None)
