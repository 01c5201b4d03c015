"""Group commit: rows of many callers written by one statement, each caller still waiting for
its own row to be durable.

Under load the gateway writes the same few statements for every chat at once (an inbound record,
a state mark, a run's messages and usage). Each alone is a round trip, a parse/bind/execute on
both sides and a commit (a WAL flush). `GroupCommit` gathers the calls that arrive while the
previous batch is being written and writes them together in one statement (one transaction, one
commit): rows arriving within the few milliseconds a write takes share it. A quiet machine writes
each row at once, alone (no timer: the first message of a chat is never held back waiting for
company). Two batches may be written at once, so that one held up by a locked row does not hold
up everyone's; rows of one chat, message or conversation are written in order, never in two
batches at once.

Nothing is acknowledged before it is committed: `submit` returns (or raises) only when the batch
holding its item has been written. When a batch statement fails for a reason other than the
database being away (`StoreUnavailable`), every item is written again on its own, so that only
the caller whose row is at fault sees the error. A caller that is cancelled while waiting does
not withdraw its row (as with a single statement already sent, it may be written).

The retry budget (`core.store.retry.retry_budget`) of a batch is the shortest among its callers'.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from core.errors import StoreUnavailable
from core.store.retry import current_budget, retry_budget

log = logging.getLogger(__name__)

MAX_BATCH = 256
MAX_IN_FLIGHT = 2


@dataclass
class _Pending[I, R]:
    item: I
    done: asyncio.Future[R]
    budget: float | None


@dataclass
class BatchStats:
    """What a committer did (tests and benches read it)."""

    statements: int = 0  # batch statements issued (a fallback's single writes included)
    items: int = 0  # items written
    largest: int = 0  # the largest batch
    fallbacks: int = 0  # batches that failed and were written one by one
    sizes: list[int] = field(default_factory=list, repr=False)  # the last batches' sizes


class GroupCommit[I, R]:
    """Writes items in batches with `write(items) -> results` (one result per item, in order).

    `keys(item)`: what an item writes to (a chat, a message, a conversation); items sharing a
    key are written in the order given, never in the same batch nor in two batches at once.
    Up to `max_in_flight` batches are written at once: one batch held up (a row locked by a
    long transaction) does not hold up the rows of everyone else."""

    def __init__(self, write: Callable[[list[I]], Awaitable[list[R]]], *, name: str,
                 keys: Callable[[I], Iterable[Hashable]] | None = None,
                 max_batch: int = MAX_BATCH, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self._write = write
        self._name = name
        self._keys = keys
        self._max_batch = max_batch
        self._max_in_flight = max_in_flight
        self._pending: list[_Pending[I, R]] = []
        self._writers: set[asyncio.Task[None]] = set()
        self._busy: set[Hashable] = set()  # the keys of the batches being written
        self._starting = False  # a writer was started and has not taken its batch yet
        self.stats = BatchStats()

    async def submit(self, item: I) -> R:
        """Write `item` with whatever else is waiting; its result once committed."""
        loop = asyncio.get_running_loop()
        if any(w.get_loop() is not loop for w in self._writers):
            # a store outliving its event loop (tests run one per test): what was left behind
            # belongs to a loop that no longer runs
            self._writers.clear()
            self._busy.clear()
            self._starting = False
            self._pending = [p for p in self._pending if p.done.get_loop() is loop]
        # awaited as it is, not shielded: a cancelled caller cancels only its own future (its
        # row stays in the batch), and the writer skips a future that is done; shielding cost
        # three more callbacks per row on the hot path of every message
        done: asyncio.Future[R] = loop.create_future()
        self._pending.append(_Pending(item, done, current_budget()))
        self._start()
        return await done

    async def drain(self) -> None:
        """Wait until everything submitted so far is written (shutdown, tests)."""
        while self._writers:
            await asyncio.wait(set(self._writers))

    def _start(self) -> None:
        """A writer for what is waiting, when a slot is free and no writer is about to take:
        the writer takes its batch when it first runs, so the calls made meanwhile join it."""
        if self._pending and not self._starting and len(self._writers) < self._max_in_flight:
            self._starting = True
            writer = asyncio.create_task(self._run(), name=f"group-commit-{self._name}")
            self._writers.add(writer)

    async def _run(self) -> None:
        self._starting = False
        batch, keys = self._take()
        self._busy |= keys
        try:
            if batch:
                await self._flush(batch)
        finally:
            self._busy -= keys
            current = asyncio.current_task()
            if current is not None:
                self._writers.discard(current)
            if batch:
                # an empty batch: everything waiting is behind a batch still being written,
                # whose own end starts the next writer (starting one here would spin, a task
                # per turn of the loop, for as long as that batch is held up)
                self._start()

    def _take(self) -> tuple[list[_Pending[I, R]], set[Hashable]]:
        batch: list[_Pending[I, R]] = []
        rest: list[_Pending[I, R]] = []
        taken: set[Hashable] = set()
        blocked = set(self._busy)  # an item left waiting blocks the later ones of its keys
        for p in self._pending:
            keys = set(self._keys(p.item)) if self._keys is not None else set()
            if len(batch) >= self._max_batch or keys & blocked or keys & taken:
                rest.append(p)
                blocked |= keys
                continue
            taken |= keys
            batch.append(p)
        self._pending = rest
        return batch, taken

    async def _flush(self, batch: list[_Pending[I, R]]) -> None:
        budgets = [p.budget for p in batch if p.budget is not None]
        try:
            if budgets:
                with retry_budget(min(budgets)):
                    await self._commit(batch)
            else:
                await self._commit(batch)
        except BaseException as exc:  # handed to every waiter
            for p in batch:
                _fail(p.done, exc)
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def _commit(self, batch: list[_Pending[I, R]]) -> None:
        stats = self.stats
        stats.statements += 1
        stats.largest = max(stats.largest, len(batch))
        stats.sizes = [*stats.sizes[-63:], len(batch)]
        try:
            results = await self._write([p.item for p in batch])
        except StoreUnavailable:
            raise  # the database is away: every row of the batch waits for it alike
        except Exception as exc:
            if len(batch) == 1:
                _fail(batch[0].done, exc)
                return
            # one row at fault: each alone, so that only its caller hears of it
            log.info("%s: a batch of %d failed (%s); writing each on its own", self._name,
                     len(batch), type(exc).__name__)
            stats.fallbacks += 1
            for p in batch:
                stats.statements += 1
                try:
                    (result,) = await self._write([p.item])
                except StoreUnavailable:
                    raise
                except Exception as one:
                    _fail(p.done, one)
                else:
                    _succeed(p.done, result)
                    stats.items += 1
            return
        assert len(results) == len(batch), f"{self._name}: {len(results)} results"
        for p, result in zip(batch, results, strict=True):
            _succeed(p.done, result)
        stats.items += len(batch)


def _succeed[R](future: asyncio.Future[R], result: R) -> None:
    if not future.done():  # done: its caller was cancelled (the row is written all the same)
        future.set_result(result)


def _fail(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)
