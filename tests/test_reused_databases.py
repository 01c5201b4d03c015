"""The suite's reused test databases (`tests/conftest.py`, `_Databases`): one handed back is the
template again (rows, the migrations' own rows, sequences), and one a test changed the schema
of, or left a client on, is dropped instead."""

from __future__ import annotations

import asyncpg

from tests.conftest import _DATABASES, _with_db

_EVERY_TABLE = ("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1")


async def _rows(dsn: str) -> dict[str, list[tuple[object, ...]]]:
    conn = await asyncpg.connect(dsn)
    try:
        return {t: sorted((tuple(r) for r in await conn.fetch(f"SELECT * FROM public.{t}")),
                          key=repr)
                for t in [r["relname"] for r in await conn.fetch(_EVERY_TABLE)]}
    finally:
        await conn.close()


async def _exists(base: str, name: str) -> bool:
    conn = await asyncpg.connect(base)
    try:
        return bool(await conn.fetchval("SELECT EXISTS (SELECT FROM pg_database"
                                        " WHERE datname = $1)", name))
    finally:
        await conn.close()


async def _a_subscription(conn: asyncpg.Connection) -> int:
    """A new person's subscription; its id (from a sequence)."""
    user = await conn.fetchval("INSERT INTO users DEFAULT VALUES RETURNING id")
    return int(await conn.fetchval(
        "INSERT INTO subscriptions (owner_id, platform, chat_id, chat, at_time, recurrence, tz)"
        " VALUES ($1, 'telegram', '1', '{}', '08:00', 'daily', 'UTC') RETURNING id", user))


async def test_a_database_handed_back_is_the_template_again(pg_server: str) -> None:
    template = await _rows(_with_db(pg_server, "bullpen_template"))
    assert template["market_data_ttl"], "the migrations leave rows of their own"
    assert len(template["stocknames"]) > 15_000, "and a started Bullpen its symbols directory"
    name = await _DATABASES.take(pg_server)
    dsn = _with_db(pg_server, name)
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("DELETE FROM market_data_ttl WHERE dataset = 'bars'")
        await conn.execute("UPDATE market_data_ttl SET ttl_seconds = 1")
        await conn.execute("INSERT INTO market_data_ttl VALUES ('made.by.a.test', 5)")
        await conn.execute("DELETE FROM stocknames WHERE code = '600519'")
        first = await _a_subscription(conn)
    finally:
        await conn.close()
    await _DATABASES.give_back(pg_server, name)
    assert await _DATABASES.take(pg_server) == name, "a clean database is reused"
    assert await _rows(dsn) == template
    conn = await asyncpg.connect(dsn)
    try:
        again = await _a_subscription(conn)
    finally:
        await conn.close()
    assert again == first, "sequences start again where the template's start"
    await _DATABASES.give_back(pg_server, name)


async def test_ddl_or_a_client_left_connected_drops_the_database(pg_server: str) -> None:
    for damage in ("ddl", "grant", "client"):
        name = await _DATABASES.take(pg_server)
        dsn = _with_db(pg_server, name)
        conn = await asyncpg.connect(dsn)
        if damage == "ddl":
            await conn.execute("ALTER TABLE users ADD COLUMN nickname text")
        elif damage == "grant":
            await conn.execute("GRANT SELECT ON users TO PUBLIC")
        if damage != "client":
            await conn.close()
        try:
            await _DATABASES.give_back(pg_server, name)
        finally:
            if not conn.is_closed():
                conn.terminate()
        assert name not in _DATABASES.free, damage
        assert not await _exists(pg_server, name), damage
