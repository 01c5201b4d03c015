"""Messages of one chat reach the gateway in the order they came, chats side by side."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Hashable


class Lanes:
    """A FIFO lock per key (a chat, a WeChat user), forgotten when nobody holds or waits for
    it, so idle chats cost nothing."""

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        return len(self._locks)


async def drain(tasks: set[asyncio.Task[None]], *, timeout_s: float) -> None:
    """On close: let the messages in hand reach the gateway for up to `timeout_s`, then
    cancel what is left and wait for it to end."""
    if not tasks:
        return
    _, pending = await asyncio.wait(set(tasks), timeout=timeout_s)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(asyncio.CancelledError):
            await task
