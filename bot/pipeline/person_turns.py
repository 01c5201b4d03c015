"""One run at a time per person (linked accounts are one): its own state is the per-person
asyncio locks of this process; across processes it takes the limits' `person_locks`
(`core.store.person_locks`)."""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from uuid import UUID

from bot.pipeline.limits import Limits
from core.agent.runner import CANCEL_SHUTDOWN

Release = Callable[[], Awaitable[None]]
Tell = Callable[[str], Awaitable[None]]  # says a catalogue key to the person


class PersonTurns:
    def __init__(self, *, limits: Limits, enabled: bool = True) -> None:
        self._limits = limits  # `person_locks`: the turn across processes (None: this one)
        self.enabled = enabled
        self._locks: weakref.WeakValueDictionary[UUID, asyncio.Lock] = (
            weakref.WeakValueDictionary())

    @property
    def active(self) -> bool:
        """One run per person is asked for (`Limits.one_run_per_person`) and not switched off."""
        return self.enabled and self._limits.one_run_per_person

    def __len__(self) -> int:
        """Persons holding or waiting for a turn now (locks nobody holds are collected)."""
        return len(self._locks)

    async def take(self, user_id: UUID, tell: Tell) -> Release:
        """Waits for the person's turn: a question, or a sandboxed script (/ta), from another
        chat or platform waits here, the person told once that it is queued
        (`chat.queued_person`); /stop while it waits is said (`chat.stopped`). Returns the
        release, which the caller awaits."""
        lock = self._locks.get(user_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[user_id] = lock
        told = False

        async def tell_queued() -> None:
            nonlocal told
            if not told:
                told = True
                await tell("chat.queued_person")

        if lock.locked():
            await tell_queued()
        try:
            await lock.acquire()
            try:
                across = self._limits.person_locks
                shared = (await across.acquire(user_id, tell_queued)
                          if across is not None else None)
            except BaseException:
                lock.release()
                raise
        except asyncio.CancelledError as exc:  # /stop while it waited: said, like a run's
            if not (exc.args and exc.args[0] == CANCEL_SHUTDOWN):
                await asyncio.shield(tell("chat.stopped"))
            raise

        async def release() -> None:
            try:
                if shared is not None:
                    await shared()
            finally:
                lock.release()

        return release

    async def aclose(self) -> None:
        if self._limits.person_locks is not None:
            await self._limits.person_locks.aclose()
