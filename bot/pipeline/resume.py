"""The last stage: resume. A message a stopped process left unanswered (its heartbeat went
quiet for `stale_s`) is taken over once, by one process, and answered in its placeholder;
past `too_old_s` its sender is asked to send it again. Two ways in: the sweeper (a task this
stage owns: the spool replayed, this process's heartbeat, a sweep for others' stale messages,
every `every_s`) and a platform's redelivery of a message nobody is answering. Its own state:
the sweeper, the platforms it sweeps for, and its two thresholds. What a taken message goes
through is the gateway's (`take_over`: routing, from the same stages as a new message)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from bot.pipeline.chat_queue import ChatQueue
from bot.pipeline.record import Record
from core.errors import StoreUnavailable
from core.ports import Adapter
from core.store import Store
from core.types import IncomingMessage

log = logging.getLogger(__name__)

# how often this process beats and sweeps, when another process's message counts as left
# unanswered, and when it is too old to answer now (the user is asked to resend)
SWEEP_S = 10.0
STALE_S = 30.0
TOO_OLD_S = 600.0
# a message left by a database outage mid-answer is tried again after 1, 2, 4 ... 15 s
RETAKE_FIRST_S, RETAKE_CAP_S = 1.0, 15.0

Adapters = Callable[[str], Adapter | None]
TakeOver = Callable[[Adapter, IncomingMessage, dict[str, Any], float],
                    Coroutine[Any, Any, None]]


class Resume:
    def __init__(self, *, store: Store, instance: str, record: Record, queue: ChatQueue,
                 take_over: TakeOver, stale_s: float = STALE_S, too_old_s: float = TOO_OLD_S,
                 enabled: bool = True) -> None:
        self._store = store
        self._instance = instance
        self._record = record
        self._queue = queue
        self._take_over = take_over
        self.stale_s, self.too_old_s = stale_s, too_old_s
        self.enabled = enabled
        self._platforms: list[str] = []
        self._sweeper: asyncio.Task[None] | None = None
        self._retaking: set[asyncio.Task[None]] = set()

    async def unanswered(self, adapters: Adapters, platforms: Sequence[str] | None = None, *,
                         stale_s: float | None = None, too_old_s: float | None = None) -> int:
        """Answer the messages a stopped process left unanswered (its heartbeat went quiet for
        `stale_s`): once each, reusing its placeholder; past `too_old_s` the user is asked to
        send it again instead. How many were taken."""
        stale_s = self.stale_s if stale_s is None else stale_s
        too_old_s = self.too_old_s if too_old_s is None else too_old_s
        served = [p for p in (platforms if platforms is not None else self._platforms)
                  if adapters(p) is not None]
        if not served:
            return 0
        rows = await self._store.inbound.claim_unanswered(
            owner=self._instance, platforms=served, stale_s=stale_s)
        for row in rows:
            adapter = adapters(row["platform"])
            if adapter is not None:
                await self._resume(adapter, row, too_old_s)
        return len(rows)

    async def redelivered(self, adapter: Adapter, msg: IncomingMessage,
                          previous: tuple[str, str | None, float] | None) -> bool:
        """A platform's redelivery of a message nobody is answering (its process stopped, or
        this one lost it to a database outage between storing and answering it): resumed now
        instead of dropped as a duplicate. True when it was."""
        if previous is None or not self.enabled:
            return False
        status, owner, quiet_s = previous
        if status not in ("received", "running"):
            return False
        mine = owner == self._instance
        if mine and self._queue.busy((msg.chat.key, msg.message_id)):
            return False  # being answered here
        if not mine and quiet_s < self.stale_s:
            return False  # its process is alive and answering it
        row = await self._store.inbound.claim(
            owner=self._instance, platform=msg.platform, chat_id=msg.chat.chat_id,
            message_id=msg.message_id, stale_s=self.stale_s)
        if row is None:
            return False
        await self._resume(adapter, row, self.too_old_s)
        return True

    def left(self, adapter: Adapter, msg: IncomingMessage, placeholder: str | None) -> None:
        """A message this process was answering when the database went away (`StoreUnavailable`
        mid-answer). Nothing else would take it: this process's heartbeat keeps it its own, and
        its platform acknowledged it already. Taken again here once the database answers (its
        placeholder written first, the one the chat shows), then answered as a stopped
        process's message is; left to another process that took it meanwhile."""
        if not self.enabled:
            log.warning("%s/%s left unanswered: the database went away", msg.platform,
                        msg.message_id)
            return
        task = asyncio.create_task(self._retake(adapter, msg, placeholder),
                                   name=f"retake:{msg.chat.key}:{msg.message_id}")
        self._retaking.add(task)
        task.add_done_callback(self._retaking.discard)

    async def _retake(self, adapter: Adapter, msg: IncomingMessage,
                      placeholder: str | None) -> None:
        wait = RETAKE_FIRST_S
        while True:
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETAKE_CAP_S)
            try:
                row = await self._store.inbound.claim(
                    owner=self._instance, platform=msg.platform, chat_id=msg.chat.chat_id,
                    message_id=msg.message_id, stale_s=self.stale_s)
                if row is None:
                    log.info("%s/%s is another process's now", msg.platform, msg.message_id)
                    return
                if placeholder is not None and row["placeholder"] is None:
                    await self._store.inbound.placeholder(row["id"], placeholder)
                    row["placeholder"] = placeholder
            except StoreUnavailable as exc:
                log.info("%s/%s not taken again yet: %s", msg.platform, msg.message_id, exc)
                continue
            log.info("%s/%s taken again: the database is back", msg.platform, msg.message_id)
            await self._resume(adapter, row, self.too_old_s)
            return

    async def _resume(self, adapter: Adapter, row: dict[str, Any], too_old_s: float) -> None:
        """A message taken over: answered once, in its placeholder (or asked for again)."""
        msg = IncomingMessage(**row["message"])
        key = (msg.chat.key, msg.message_id)
        if self._queue.busy(key):
            # taken twice in this process (the sweep, then a redelivery, before the first
            # take queued it): answered once, by the first
            log.info("%s/%s is being answered here already", msg.platform, msg.message_id)
            return
        with self._queue.in_hand(key):
            await self._take_over(adapter, msg, row, too_old_s)

    def start(self, adapters: Adapters, platforms: list[str], *,
              every_s: float = SWEEP_S) -> None:
        """The sweeper: a heartbeat for this process's messages and a sweep for other
        processes' stale ones, every `every_s` (a task this stage owns)."""
        self._platforms = list(platforms)
        if self._sweeper is None and self.enabled:
            self._sweeper = asyncio.create_task(self._sweep(adapters, every_s),
                                                name="inbound-sweeper")

    async def aclose(self) -> None:
        for task in list(self._retaking):  # the next process's sweep takes these
            task.cancel()
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def _sweep(self, adapters: Adapters, every_s: float) -> None:
        while True:
            try:  # first: what was acknowledged but not stored (this process's or a dead one's)
                await self._record.replay_spool(adapters)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("spool replay: %s: %s", type(exc).__name__, exc)
            try:
                await self._store.inbound.heartbeat(self._instance)
                await self.unanswered(adapters)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("inbound sweep: %s: %s", type(exc).__name__, exc)
            await asyncio.sleep(every_s)
