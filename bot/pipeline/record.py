"""The first stage: record and dedupe, through database outages.

A message is stored first, idempotent on platform + chat + message id (a platform's retry never
runs twice). When the database cannot take it (`StoreUnavailable` after `record_budget_s` of
retries) the user is told once; a platform that redelivers gets the error back (its update is
not acknowledged); for the others the message is kept here and recorded when the database is
back (`keep_trying_s`), and with a spool (`bot.spool`, `serve`) it is durable on local disk
before `handle` returns. Its own state: the spool, the messages not stored yet, whether the
store was away at the last try, and the retries it owns (cancelled by `aclose`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from bot.pipeline.context import Epoch
from bot.sender import say
from bot.spool import Spool, Spooled
from core.errors import StoreUnavailable
from core.ports import Adapter
from core.store import Store
from core.store.inbound import Inbound
from core.store.retry import retry_budget
from core.types import IncomingMessage, storable_message
from core.words import detect_lang, t

log = logging.getLogger(__name__)

# an update that cannot be stored within this is left to the platform's redelivery (or kept
# and retried here, for platforms that do not redeliver, for up to KEEP_TRYING_S)
RECORD_BUDGET_S = 5.0
KEEP_TRYING_S = 900.0
# a message of a platform that does not redeliver, not stored within this (or while the store
# is away), is written to the local spool first (bot.spool): an fsync only when it is needed
SPOOL_AFTER_S = 0.5

Next = Callable[[Adapter, IncomingMessage, Inbound, int], Coroutine[Any, Any, None]]


class Record:
    def __init__(self, *, store: Store, instance: str, epoch: Epoch, next_stage: Next,
                 spool: Spool | None = None, spool_after_s: float = SPOOL_AFTER_S,
                 record_budget_s: float = RECORD_BUDGET_S,
                 keep_trying_s: float = KEEP_TRYING_S) -> None:
        self._store = store
        self._instance = instance
        self._epoch = epoch
        self._next = next_stage  # the stored message's way on (dedupe, then the rest)
        # acknowledged messages the store cannot take yet, on local disk (None: in memory
        # only, as in tests and tools)
        self.spool = spool
        self.spool_after_s = spool_after_s
        self.record_budget_s, self.keep_trying_s = record_budget_s, keep_trying_s
        self._unstored: dict[tuple[str, str], bool] = {}  # told once each
        self._store_away = False  # the last record attempt failed
        self._retrying: set[asyncio.Task[None]] = set()
        # the first attempts still recording a spooled message (a subset of `_retrying`):
        # bounded by `record_budget_s`, and `settled` waits for them
        self._first_attempts: set[asyncio.Task[None]] = set()
        self.closing = False

    @property
    def unstored(self) -> int:
        """Messages not stored yet that were told so."""
        return len(self._unstored)

    async def settled(self) -> None:
        """Returns once no message is still in its first attempt to be recorded: each one is
        then stored and handed on (queued for its answer), or told that the database is away.
        A message spooled because its record was slow may still be stored by that attempt;
        without this, `Gateway.idle` could return before it was even queued. The longer
        retries of an outage (`keep_trying_s`) are not waited for."""
        while self._first_attempts:
            await asyncio.wait(set(self._first_attempts))

    def aclose(self) -> None:
        """Stops taking messages and cancels the retries (what the spool holds is replayed by
        the next process's sweep)."""
        self.closing = True
        for retry in list(self._retrying):
            retry.cancel()
        if self.spool is not None:
            self.spool.close()

    async def handle(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """Record `msg`, then answer it. When the database cannot store it (down, restarting:
        `StoreUnavailable` after `record_budget_s` of retries) the user is told once; a
        platform that redelivers unacknowledged updates gets the error back (so the update
        is not acknowledged), for the others this stage keeps trying in the background. With
        a spool (`serve`), for those others `handle` returns only once the message is durable,
        stored or spooled, so an adapter that acknowledges after it acknowledges nothing that
        a crash could lose (`_handle_spooled`)."""
        if self.closing:
            return
        msg = storable_message(msg)  # NUL or a lone surrogate would fail the first insert
        try:
            if self.spool is not None and not adapter.capabilities.redelivers:
                await self._handle_spooled(adapter, msg)
            else:
                await self._record(adapter, msg)
        except StoreUnavailable as exc:
            self._store_away = True
            await self._unavailable(adapter, msg, exc)
            if adapter.capabilities.redelivers:
                raise
            self._keep_trying(adapter, msg)

    async def _handle_spooled(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """A platform that will not deliver again once acknowledged (its adapter acknowledges
        when this returns, or at its platform's bound): returns once the message is durable.
        The record gets `spool_after_s`; slower (or refused, or the store away at the last
        try: spooled first), the message is spooled (fsync) and the rest goes on in a task the
        stage owns. The usual message costs no fsync and is routed here, in its chat's
        order; in a slow or absent database the order of a chat's messages is best effort."""
        spooled = False
        if self._store_away:
            await self._spool(adapter, msg)
            spooled = True
        task = asyncio.ensure_future(self._record(adapter, msg))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.spool_after_s)
            if not done and not spooled:
                await self._spool(adapter, msg)
        except asyncio.CancelledError:  # the adapter closing: nothing left running unowned
            task.cancel()
            raise
        if not done:
            first = self._own(self._finish_spooled(adapter, msg, task),
                              name=f"spooled:{msg.chat.key}:{msg.message_id}")
            self._first_attempts.add(first)
            first.add_done_callback(self._first_attempts.discard)
            return
        try:
            task.result()
        except StoreUnavailable:
            if not spooled:  # refused within spool_after_s
                await self._spool(adapter, msg)
            raise

    async def _finish_spooled(self, adapter: Adapter, msg: IncomingMessage,
                              task: asyncio.Future[None]) -> None:
        """The rest of a spooled message's first attempt, as `handle` would have done it."""
        try:
            await task
        except StoreUnavailable as exc:
            self._store_away = True
            await self._unavailable(adapter, msg, exc)
            self._keep_trying(adapter, msg)
        except Exception:
            log.exception("message %s/%s failed", msg.platform, msg.message_id)

    def _own(self, coro: Coroutine[Any, Any, None], *, name: str) -> asyncio.Task[None]:
        task = asyncio.create_task(coro, name=name)
        self._retrying.add(task)
        task.add_done_callback(self._retrying.discard)
        return task

    async def _spool(self, adapter: Adapter, msg: IncomingMessage) -> None:
        assert self.spool is not None
        try:
            await self.spool.append(adapter.name, msg)
        except OSError as exc:  # a full or read-only disk: kept in memory, as without one
            log.error("message %s/%s not spooled: %s", msg.platform, msg.message_id, exc)

    async def replay_spool(self, adapters: Callable[[str], Adapter | None]) -> int:
        """The spooled messages into the database through the normal path (the record is
        idempotent: one already stored is not answered again); how many were stored."""
        if self.spool is None:
            return 0

        async def replay(record: Spooled) -> bool | None:
            adapter = adapters(record.platform)
            if adapter is None:
                return None
            try:
                await self._record(adapter, storable_message(record.message))
            except StoreUnavailable:
                self._store_away = True
                return False
            except Exception:  # recorded, then failed: the record is settled either way
                log.exception("spooled message %s/%s failed", record.platform,
                              record.message.message_id)
            return True

        return await self.spool.replay(replay)

    async def _record(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """Stored (idempotent), then on to the next stage."""
        epoch = self._epoch.value
        with retry_budget(self.record_budget_s):
            got = await self._store.inbound.record_for_sender(
                platform=msg.platform, chat_id=msg.chat.chat_id, message_id=msg.message_id,
                sender_uid=msg.sender.platform_uid,
                payload={"text": msg.text[:2000], "edit": msg.is_edit,
                         "attachments": [a.kind for a in msg.attachments]},
                thread_id=msg.chat.thread_id, message=msg.model_dump(mode="json"),
                owner=self._instance)
        self._store_away = False
        self._unstored.pop((msg.chat.key, msg.message_id), None)
        await self._next(adapter, msg, got, epoch)

    async def _unavailable(self, adapter: Adapter, msg: IncomingMessage,
                           exc: StoreUnavailable) -> None:
        """Tell the user once per message that the answer waits for the database."""
        key = (msg.chat.key, msg.message_id)
        log.warning("message %s/%s not stored: %s", msg.platform, msg.message_id, exc)
        if key in self._unstored:
            return
        if len(self._unstored) > 10_000:  # a long outage: forget the oldest
            self._unstored.pop(next(iter(self._unstored)))
        self._unstored[key] = True
        lang = detect_lang(msg.text)
        # not kept: the outbox keeps its deliveries in the database, which is away
        await say(adapter, msg, t("chat.db_unavailable", lang), outbox=None, plain=True,
                  keep=False)

    def _keep_trying(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """A platform that does not redeliver: keep the message here and record it (then answer
        it) once the database is back, for up to `keep_trying_s`."""
        self._own(self._retry_later(adapter, msg),
                  name=f"unstored:{msg.chat.key}:{msg.message_id}")

    async def _retry_later(self, adapter: Adapter, msg: IncomingMessage) -> None:
        loop = asyncio.get_running_loop()
        end, wait = loop.time() + self.keep_trying_s, 1.0
        while not self.closing and loop.time() < end:
            await asyncio.sleep(wait)
            wait = min(wait * 2, 15.0)
            try:
                await self._record(adapter, msg)
                return
            except StoreUnavailable as exc:
                log.info("message %s/%s still not stored: %s", msg.platform, msg.message_id,
                         exc)
            except Exception:
                log.exception("message %s/%s failed after the database came back",
                              msg.platform, msg.message_id)
                return
        log.error("message %s/%s dropped: the database stayed unreachable", msg.platform,
                  msg.message_id)
