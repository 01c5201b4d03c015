"""Message states written by group commit: the gateway marks every message running and then
answered (or failed); on a busy bot those two UPDATEs per message cost more than the rest of
its bookkeeping. Marks made while a write is in flight are merged per message and written
together by the next one, in a single statement; an idle bot writes each mark at once, so no
mark waits longer than the write before it. Each caller still waits until its mark is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

Key = tuple[str, str, str]  # platform, chat_id, message_id
Write = Callable[[dict[Key, dict[str, Any]]], Awaitable[None]]


class StateMarks:
    def __init__(self, write: Write) -> None:
        self._write = write
        self._batch: dict[Key, dict[str, Any]] = {}
        # the callers of the batch being gathered, each waiting on a future of its own: a
        # cancelled caller cancels only its own (its mark is in the batch and is written)
        self._waiting: list[asyncio.Future[None]] = []
        self._writer: asyncio.Task[None] | None = None
        self.writes = 0  # statements issued (tests, benches)

    async def mark(self, key: Key, status: str, **fields: Any) -> None:
        """Record `status` (and the non-None `fields`) for the message `key`; returns once
        written, raises what the write raised."""
        row = self._batch.setdefault(key, {})
        row.update({k: v for k, v in fields.items() if v is not None})
        row["status"] = status
        written: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(written)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain(), name="state-marks")
        await written

    async def _drain(self) -> None:
        while self._batch:
            batch, waiting = self._batch, self._waiting
            self._batch, self._waiting = {}, []
            try:
                self.writes += 1
                await self._write(batch)
            except Exception as exc:
                for written in waiting:
                    if not written.done():
                        written.set_exception(exc)
            else:
                for written in waiting:
                    if not written.done():
                        written.set_result(None)
