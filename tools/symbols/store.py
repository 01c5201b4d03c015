"""Postgres persistence of the directory (table ``stocknames``, migration 0002).

Only listed securities are stored; the curated indices, crypto and FX pairs are built into
every index from ``aliases.json`` (``tools.symbols.instruments``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import asyncpg

from core.errors import StoreError
from tools.symbols.index import paused_gc
from tools.symbols.model import FIELDS, SymbolEntry

COLUMNS = (
    "market",
    "code",
    "exchange",
    "name",
    "name_en",
    "pinyin",
    "initials",
    "name_tw",
    "aliases",
    "sector",
    "list_date",
    "indices",
    "cik",
    "rank",
    "is_primary",
    "updated_at",
)
_STORED_MARKETS = frozenset({"cn", "us", "hk"})  # the table's CHECK constraint
# columns in ``SymbolEntry`` field order, so a record's values make an entry as they are
_SELECT = (
    "SELECT code, market, exchange, name, name_en, pinyin, initials, name_tw, aliases, sector,"
    " list_date, indices, cik, rank, is_primary AS primary FROM stocknames"
    " ORDER BY market, rank NULLS LAST, code"
)


def _record(e: SymbolEntry, now: datetime) -> tuple[Any, ...]:
    return (
        e.market,
        e.code,
        e.exchange,
        e.name,
        e.name_en,
        e.pinyin,
        e.initials,
        e.name_tw,
        list(e.aliases),
        e.sector,
        e.list_date,
        list(e.indices),
        e.cik,
        e.rank,
        e.primary,
        now,
    )


async def save_entries(
    conn_or_pool: asyncpg.Connection | asyncpg.Pool, entries: Sequence[SymbolEntry]
) -> int:
    """Replace the whole table with ``entries`` in one transaction (bulk COPY); returns rows."""
    if isinstance(conn_or_pool, asyncpg.Pool):
        async with conn_or_pool.acquire() as conn:
            return await _save(conn, entries)
    return await _save(conn_or_pool, entries)


async def _save(conn: asyncpg.Connection, entries: Sequence[SymbolEntry]) -> int:
    now = datetime.now(UTC)
    seen: set[tuple[str, str]] = set()
    records = []
    for e in entries:
        if e.kind != "stock" or e.market not in _STORED_MARKETS:
            continue  # indices, crypto, FX: built into every index from aliases.json
        if (e.market, e.code) not in seen:
            seen.add((e.market, e.code))
            records.append(_record(e, now))
    async with conn.transaction():
        # one writer at a time (two first starts both build); the rows are replaced, so the
        # content key no longer says what they are until `save_current` sets it again
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext('bullpen.stocknames'))")
        await conn.execute("DELETE FROM stocknames")
        await conn.copy_records_to_table("stocknames", records=records, columns=COLUMNS)
        await conn.execute("COMMENT ON TABLE stocknames IS NULL")
    return len(records)


async def load_entries(pool: asyncpg.Pool | asyncpg.Connection) -> list[SymbolEntry]:
    """Every row of ``stocknames`` as entries (trusted rows: no re-validation, for speed).

    Each record becomes a slotted entry directly (no dict per row); repeated values (market,
    exchange, sector, index memberships) are shared, and the records are dropped as we go so
    the peak stays near one copy of the table."""
    rows: list[Any] = await pool.fetch(_SELECT)
    if rows and tuple(rows[0].keys()) != FIELDS:
        raise StoreError(f"stocknames columns {tuple(rows[0].keys())} != {FIELDS}")
    out = []
    make = SymbolEntry.from_values
    with paused_gc():
        for i, row in enumerate(rows):
            out.append(make(row))
            rows[i] = None
    return out


async def count_entries(pool: asyncpg.Pool | asyncpg.Connection) -> dict[str, int]:
    """Rows per market."""
    rows = await pool.fetch("SELECT market, count(*) AS n FROM stocknames GROUP BY market")
    return {r["market"]: int(r["n"]) for r in rows}


async def load_current(conn: asyncpg.Connection, key: str) -> list[SymbolEntry] | None:
    """The stored entries when they were saved with ``key`` (same packages and code), else
    None: a stale table is rebuilt rather than served."""
    async with conn.transaction(isolation="repeatable_read", readonly=True):  # key and rows
        stored = await conn.fetchval(  # of one save
            "SELECT obj_description('stocknames'::regclass, 'pg_class')")
        if stored != key:
            return None
        return await load_entries(conn) or None


async def save_current(conn: asyncpg.Connection, key: str, entries: Sequence[SymbolEntry]
                       ) -> int:
    """Replace the table with ``entries`` and mark it as built with ``key``."""
    async with conn.transaction():
        rows = await _save(conn, entries)
        await conn.execute(f"COMMENT ON TABLE stocknames IS {_literal(key)}")
    return rows


def _literal(text: str) -> str:
    """A SQL string literal (COMMENT takes no parameters); the key is hex, quoted anyway."""
    return "'" + text.replace("'", "''") + "'"
