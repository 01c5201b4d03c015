"""The process-wide symbols directory kept in Postgres: the first process builds it from the
packages and stores it, later ones load it from `stocknames`, and answer the same."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import pytest

from bot import symbols_store
from tools import symbols
from tools.symbols import SymbolDirectory, content_key, default_directory, set_default_directory

QUERIES = json.loads((Path(__file__).parents[1] / "symbols" / "queries.json").read_text("utf-8"))


@pytest.fixture
def fresh_default() -> Iterator[SymbolDirectory]:
    """No process-wide directory for the test; the one built before is put back after."""
    before = default_directory()
    set_default_directory(None)
    yield before
    symbols_store.stop_using()
    set_default_directory(before)


async def _stored_key(dsn: str) -> str | None:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetchval("SELECT obj_description('stocknames'::regclass, 'pg_class')")
    finally:
        await conn.close()


async def test_built_once_stored_then_loaded_and_answering_the_same(
        pg_dsn: str, fresh_default: SymbolDirectory) -> None:
    conn = await asyncpg.connect(pg_dsn)  # a first start: nothing stored yet
    await conn.execute("DELETE FROM stocknames")
    await conn.close()
    symbols_store.use_postgres(pg_dsn)
    built = default_directory()  # the table is empty: built from the packages, then stored
    assert await _stored_key(pg_dsn) == content_key()
    set_default_directory(None)
    loaded = default_directory()  # a later process: from stocknames
    assert loaded is not built and len(loaded) == len(built) == len(fresh_default)
    for item in QUERIES["resolve"]:  # the same best match; ties below it may come in another order
        got, want = loaded.resolve(item["q"]), built.resolve(item["q"])
        assert [(m.symbol, m.ambiguous) for m in got[:1]] == \
               [(m.symbol, m.ambiguous) for m in want[:1]], item
    for text in [x["text"] for x in QUERIES["extract"]] + list(QUERIES["none"]):
        assert [(m.symbol, m.span) for m in loaded.extract(text)] == \
               [(m.symbol, m.span) for m in built.extract(text)], text


async def test_a_stale_table_is_rebuilt_and_an_unreachable_store_falls_back(
        pg_dsn: str, fresh_default: SymbolDirectory, caplog: pytest.LogCaptureFixture) -> None:
    conn = await asyncpg.connect(pg_dsn)
    await conn.execute("COMMENT ON TABLE stocknames IS 'built by an older release'")
    await conn.close()
    symbols_store.use_postgres(pg_dsn)
    assert len(default_directory()) == len(fresh_default)
    assert await _stored_key(pg_dsn) == content_key()  # replaced by this release's build
    set_default_directory(None)
    symbols_store.use_postgres("postgresql://nobody@127.0.0.1:9/none")  # nothing listens
    assert default_directory().resolve("茅台")[0].code == "600519"
    assert "stored directory not loaded" in caplog.text and "directory not stored" in caplog.text
    assert symbols._store is not None


async def test_two_first_starts_saving_at_once_leave_one_current_copy(
        pg_dsn: str, fresh_default: SymbolDirectory) -> None:
    import asyncio

    from tools.symbols.store import load_current, save_current, save_entries

    entries = fresh_default.entries
    conns = [await asyncpg.connect(pg_dsn) for _ in range(2)]
    try:
        await asyncio.gather(*(save_current(c, content_key(), entries) for c in conns))
        loaded = await load_current(conns[0], content_key())
        assert loaded is not None and len(loaded) == await conns[0].fetchval(
            "SELECT count(*) FROM stocknames")
        await save_entries(conns[1], entries[:10])  # rows replaced without a key: not current
        assert await load_current(conns[0], content_key()) is None
    finally:
        for c in conns:
            await c.close()
