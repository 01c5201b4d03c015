"""The directory round-trips through the real (embedded) Postgres ``stocknames`` table."""

from __future__ import annotations

import time

import asyncpg

from tools.symbols import SymbolDirectory
from tools.symbols.store import count_entries, load_entries, save_entries


async def test_save_and_load_every_entry(pg_pool: asyncpg.Pool, directory: SymbolDirectory) -> None:
    saved = await save_entries(pg_pool, directory.entries)
    assert saved == len(directory)
    counts = await count_entries(pg_pool)
    assert counts["cn"] >= 5000
    assert counts["us"] >= 10000

    start = time.perf_counter()
    loaded = await load_entries(pg_pool)
    reloaded = SymbolDirectory.from_entries(loaded)
    elapsed = time.perf_counter() - start
    print(f"\nload {len(loaded)} rows + build index: {elapsed:.3f}s")  # the bench reports it

    assert len(loaded) == len(directory)
    by_key = {(e.market, e.code): e for e in loaded}
    for original in directory.entries[:50] + directory.entries[-50:]:
        assert by_key[(original.market, original.code)].model_dump() == original.model_dump()
    assert reloaded.resolve("贵州茅台")[0].code == "600519"
    assert reloaded.resolve("then video")[0].code == "NVDA"
    assert [m.code for m in reloaded.extract("buy AAPL and 宁德时代")] == ["AAPL", "300750"]


async def test_save_replaces_previous_rows(
    pg_pool: asyncpg.Pool, directory: SymbolDirectory
) -> None:
    await save_entries(pg_pool, directory.entries[:10])
    async with pg_pool.acquire() as conn:
        await save_entries(conn, directory.entries[5:8])
    assert sum((await count_entries(pg_pool)).values()) == 3


async def test_instruments_are_not_stored_but_known_after_loading(
    pg_pool: asyncpg.Pool, directory: SymbolDirectory
) -> None:
    """The table holds listed securities only (its market CHECK and (market, code) key could
    not hold 上证指数 next to 平安银行); the index builds the instruments itself."""
    listed = [directory.get("000001", "cn"), directory.get("AAPL", "us")]
    assert all(e is not None for e in listed)
    saved = await save_entries(pg_pool, [*listed, *directory.instruments])  # type: ignore[list-item]
    assert saved == 2
    assert await count_entries(pg_pool) == {"cn": 1, "us": 1}
    reloaded = SymbolDirectory.from_entries(await load_entries(pg_pool))
    assert [m.symbol for m in reloaded.resolve("000001")[:2]] == ["000001.SZ", "000001.SH"]
    assert reloaded.resolve("上证指数")[0].symbol == "000001.SH"
    assert [m.code for m in reloaded.extract("AAPL vs bitcoin")] == ["AAPL", "BTC-USD"]
