"""One run at a time per person across every process sharing the database.

Each running person is a Postgres session advisory lock, all of a process's held on one
connection of its own: when the process dies, Postgres drops the connection and its locks with
it, so a person is never left locked. The lock is only tried (never waited on inside Postgres),
so one connection serves every person; a person running in another process is polled.

When the database cannot be reached the lock is skipped (logged once): the gateway's
in-process lock still holds, and answering matters more than the cross-process order.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import Awaitable, Callable
from uuid import UUID

import asyncpg

from core.store.retry import DATABASE_TROUBLE

log = logging.getLogger(__name__)

RETRY_CONNECT_S = 10.0  # after a failed connect, runs go unlocked this long before a retry


def lock_key(user_id: UUID) -> int:
    """A signed 64-bit advisory key for the person (namespaced, apart from the scheduler's)."""
    digest = hashlib.sha256(b"bullpen:person:" + user_id.bytes).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PersonLocks:
    def __init__(self, dsn: str, *, poll_s: float = 0.25) -> None:
        self._dsn = dsn
        self._poll_s = poll_s
        self._conn: asyncpg.Connection | None = None
        self._use = asyncio.Lock()  # one statement at a time on the connection
        self._down_until = 0.0
        self._warned = False

    async def acquire(self, user_id: UUID, on_wait: Callable[[], Awaitable[None]],
                      ) -> Callable[[], Awaitable[None]]:
        """Wait until no other process runs for `user_id` and hold that; `on_wait` is awaited
        once if it has to wait. Returns the release (safe to call when the lock was skipped)."""
        key = lock_key(user_id)
        told = False
        while True:
            got = await self._try_shielded(key)
            if got is None:  # no database: unlocked
                return _nothing
            if got[0]:
                conn = got[1]
                return lambda: self._release(conn, key)
            if not told:
                told = True
                await on_wait()
            await asyncio.sleep(self._poll_s)

    async def aclose(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close(timeout=5)

    async def _try_shielded(self, key: int) -> tuple[bool, asyncpg.Connection] | None:
        """`_try`, finished even when the caller is cancelled: a lock granted just as the
        caller was stopped is released, not left held on the connection."""
        task = asyncio.ensure_future(self._try(key))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                late = await task
                if late is not None and late[0]:
                    await self._release(late[1], key)
            raise

    async def _try(self, key: int) -> tuple[bool, asyncpg.Connection] | None:
        async with self._use:
            conn = await self._connection()
            if conn is None:
                return None
            try:
                got = await conn.fetchval("SELECT pg_try_advisory_lock($1)", key, timeout=5)
            except DATABASE_TROUBLE as exc:
                self._lost(exc)
                return None
            return bool(got), conn

    async def _release(self, conn: asyncpg.Connection, key: int) -> None:
        async with self._use:
            current = self._conn
            if current is None or current is not conn or current.is_closed():
                return  # that connection (and the lock with it) is gone
            try:
                await current.fetchval("SELECT pg_advisory_unlock($1)", key, timeout=5)
            except DATABASE_TROUBLE as exc:
                self._lost(exc)

    async def _connection(self) -> asyncpg.Connection | None:
        loop = asyncio.get_running_loop()
        if self._conn is not None and not self._conn.is_closed():
            return self._conn
        if loop.time() < self._down_until:
            return None
        try:
            self._conn = await asyncpg.connect(self._dsn, timeout=5)
        except DATABASE_TROUBLE as exc:
            self._down_until = loop.time() + RETRY_CONNECT_S
            self._lost(exc)
            return None
        self._warned = False
        return self._conn

    def _lost(self, exc: BaseException) -> None:
        """Drop the connection (its locks go with it); the runs it held carry on unlocked."""
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.terminate()
        if not self._warned:
            self._warned = True
            log.warning("person locks: %s: %s; one run per person holds in this process only"
                        " until the database is back", type(exc).__name__, exc)


async def _nothing() -> None:
    return None
