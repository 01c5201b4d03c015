"""Statements retried while the database is briefly unreachable (restarting, failing over).

`RetryingPool` is the asyncpg pool the store uses: its one-statement calls (`execute`,
`fetch`, `fetchrow`, `fetchval`, `executemany`) are retried with backoff on connection errors
until a budget runs out, then `StoreUnavailable` is raised. Anything else (a constraint, a bad
query) is raised at once. Transactions (`acquire()`) are not retried here: their callers retry
the whole block if they need to.

The budget is `RetryingPool.budget_s`, or for the calls of one task the budget set with
`retry_budget(seconds)` (the gateway's inbound record uses a short one: a platform update that
cannot be stored is better left to the platform's redelivery than held for long).

A statement cut off by a crash may have been committed before its connection broke; it is run
again. Inbound records are idempotent; a rare duplicate elsewhere is the price of not losing
the write.
"""

# ruff: noqa: ASYNC109  (the overrides keep asyncpg's own `timeout` parameter)
from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import random
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import asyncpg
from asyncpg.pool import Pool

from core.errors import StoreUnavailable

log = logging.getLogger(__name__)

DEFAULT_BUDGET_S = 30.0
FIRST_WAIT_S = 0.1
MAX_WAIT_S = 2.0

_budget: contextvars.ContextVar[float | None] = contextvars.ContextVar("store_retry_budget",
                                                                       default=None)


def transient(exc: BaseException) -> bool:
    """A connection problem that may go away: the server down, restarting or shutting down."""
    return isinstance(exc, (
        OSError,  # refused, reset, the socket file gone
        asyncpg.ConnectionDoesNotExistError,  # the connection closed mid-statement
        asyncpg.CannotConnectNowError,  # starting up or shutting down
        asyncpg.PostgresConnectionError,  # class 08
        asyncpg.AdminShutdownError, asyncpg.CrashShutdownError,
        # a connection the server dropped mid-statement can be left in its protocol's
        # middle state: the next statement on it is refused with "cannot switch to state
        # N; another operation is in progress" (seen when the postmaster was killed under
        # load); that connection is discarded and the statement tried on another
        asyncpg.InternalClientError,
    )) and not isinstance(exc, asyncpg.TooManyConnectionsError)


# what a statement can raise when the database, not the statement, is the trouble (a caller
# that carries on without the database catches these; the pool's retries are above)
DATABASE_TROUBLE: tuple[type[BaseException], ...] = (
    OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError,
    asyncpg.InternalClientError)


def unusable_input(exc: BaseException) -> bool:
    """A statement refused for a value it was given, not for the database's state: a number out
    of its column's range, text that is not a number or a date, a value of the wrong type
    (asyncpg's DataError, raised before the statement is sent, or SQLSTATE class 22). Trying
    again gives the same refusal: the input is to be refused, not retried."""
    return isinstance(exc, asyncpg.DataError)


def current_budget() -> float | None:
    """The budget `retry_budget` set for this task, or None (the pool's own)."""
    return _budget.get()


@contextlib.contextmanager
def retry_budget(seconds: float) -> Iterator[None]:
    """Within this block (and the tasks it starts), give up on an unreachable database after
    `seconds`."""
    token = _budget.set(seconds)
    try:
        yield
    finally:
        _budget.reset(token)


class RetryingPool(Pool):  # type: ignore[misc]  # asyncpg is untyped here
    """An asyncpg `Pool` whose single statements outlast a short outage (see the module)."""

    budget_s: float = DEFAULT_BUDGET_S

    async def _retrying[T](self, what: str, call: Callable[[], Awaitable[T]]) -> T:
        budget = _budget.get()
        loop = asyncio.get_running_loop()
        end = loop.time() + (self.budget_s if budget is None else budget)
        wait, failures = FIRST_WAIT_S, 0
        while True:
            try:
                return await call()
            except Exception as exc:
                if not transient(exc) or self._closing:
                    raise
                failures += 1
                left = end - loop.time()
                if left <= 0:
                    raise StoreUnavailable(
                        f"the database is unreachable ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:160] if str(exc) else ''}); "
                        f"gave up after {failures} attempt(s)") from exc
                if failures == 1:
                    log.warning("database unreachable (%s: %s): retrying %s",
                                type(exc).__name__, str(exc)[:160], what)
                await asyncio.sleep(min(wait * (0.5 + random.random()), left))
                wait = min(wait * 2, MAX_WAIT_S)

    async def execute(self, query: str, *args: Any, timeout: float | None = None) -> str:
        return await self._retrying("execute", lambda: super(RetryingPool, self).execute(
            query, *args, timeout=timeout))

    async def executemany(self, command: str, args: Any, *,
                          timeout: float | None = None) -> None:
        await self._retrying("executemany", lambda: super(RetryingPool, self).executemany(
            command, args, timeout=timeout))

    async def fetch(self, query: str, *args: Any, timeout: float | None = None,
                    record_class: Any = None) -> list[Any]:
        return await self._retrying("fetch", lambda: super(RetryingPool, self).fetch(
            query, *args, timeout=timeout, record_class=record_class))

    async def fetchval(self, query: str, *args: Any, column: int = 0,
                       timeout: float | None = None) -> Any:
        return await self._retrying("fetchval", lambda: super(RetryingPool, self).fetchval(
            query, *args, column=column, timeout=timeout))

    async def fetchrow(self, query: str, *args: Any, timeout: float | None = None,
                       record_class: Any = None) -> Any:
        return await self._retrying("fetchrow", lambda: super(RetryingPool, self).fetchrow(
            query, *args, timeout=timeout, record_class=record_class))
