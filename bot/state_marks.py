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
        self._batch_written: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self.writes = 0  # statements issued (tests, benches)

    async def mark(self, key: Key, status: str, **fields: Any) -> None:
        """Record `status` (and the non-None `fields`) for the message `key`; returns once
        written, raises what the write raised."""
        row = self._batch.setdefault(key, {})
        row.update({k: v for k, v in fields.items() if v is not None})
        row["status"] = status
        if self._batch_written is None:
            self._batch_written = asyncio.get_running_loop().create_future()
            self._batch_written.add_done_callback(_retrieved)
        written = self._batch_written
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._drain(), name="state-marks")
        await asyncio.shield(written)

    async def _drain(self) -> None:
        while self._batch:
            batch, written = self._batch, self._batch_written
            self._batch, self._batch_written = {}, None
            assert written is not None
            try:
                self.writes += 1
                await self._write(batch)
            except Exception as exc:
                written.set_exception(exc)
            else:
                written.set_result(None)


def _retrieved(future: asyncio.Future[None]) -> None:
    """Every waiter may have gone (cancelled): the error is theirs to log, not asyncio's."""
    if not future.cancelled():
        future.exception()
