"""The outbox: deliveries stored in Postgres first, then sent through the platform's adapter.

`PostgresOutbox.deliver` stores (idempotent on the key) and wakes the sender; the sender, a task
the outbox owns, claims due deliveries with a lease (`core.store.deliveries`), sends them piece
by piece in each chat's order through the platform's `bot.sender.Sender` (its dialect, its
length), and decides per error by the sender's table (`decide(exc, stored=True)`):

(DONE, PLAIN, PAUSE then a short wait in place or RESCHEDULE, HOLD: `held` until the chat
next writes, DROP: `failed` and `on_forbidden`, RESCHEDULE: back off 1, 2, 4 ... 60 s until
the deadline, then `failed`).

Adapters are found by platform through `AdapterRegistry` (one per app, nonebot2's `get_bot`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from typing import Any

import asyncpg

from bot.sender import Piece, Policy, Sender, decide, say
from core.errors import (
    Forbidden,
    FormattingRejected,
    MessageNotModified,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
    StoreError,
)
from core.ports import Adapter, DeliveryRequest, OutItem, Receipt
from core.store.deliveries import CHANNEL, DeliveriesRepo, Delivery
from core.store.retry import DATABASE_TROUBLE
from core.types import ChatRef, IncomingMessage, MessageRef, utcnow

__all__ = ["AdapterRegistry", "PostgresOutbox", "say"]  # `say`: bot.sender's, for old callers

log = logging.getLogger(__name__)

DEFAULT_DEADLINE_S = 6 * 3600.0  # a report still worth reading; held ones wait longer
INLINE_WAIT_S = 5.0  # a shorter retry_after is waited out by the sending worker itself
INLINE_BUDGET_S = 15.0  # at most this much waiting in place per claim, then rescheduled
MAX_BACKOFF_S = 60.0


class AdapterRegistry:
    """The running adapters by platform name (`ChatRef.platform`)."""

    def __init__(self) -> None:
        self._adapters: dict[str, Adapter] = {}

    def add(self, adapter: Adapter) -> None:
        self._adapters[adapter.name] = adapter

    def get(self, platform: str) -> Adapter | None:
        return self._adapters.get(platform)

    def platforms(self) -> list[str]:
        return sorted(self._adapters)

    def __len__(self) -> int:
        return len(self._adapters)


ForbiddenHook = Callable[[Delivery], Awaitable[None]]


class PostgresOutbox:
    """`core.ports.Outbox` on the `deliveries` table. `start()` runs the sender; without it,
    deliveries are stored and sent by whichever process runs one (`bullpen serve`)."""

    def __init__(self, deliveries: DeliveriesRepo, registry: AdapterRegistry, *,
                 dsn: str | None = None, workers: int = 8, lease_s: float = 120.0,
                 poll_s: float = 2.0, default_deadline_s: float = DEFAULT_DEADLINE_S,
                 on_forbidden: ForbiddenHook | None = None,
                 sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep) -> None:
        self._repo = deliveries
        self._registry = registry
        self._dsn = dsn
        self._workers = max(1, workers)
        self._lease_s = lease_s
        self._poll_s = poll_s
        self._default_deadline_s = default_deadline_s
        self.on_forbidden = on_forbidden
        self._sleep = sleep
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._listener: asyncpg.Connection | None = None
        self._done: dict[str, asyncio.Event] = {}
        self._paused: dict[str, float] = {}  # platform -> loop time its rate limit ends

    # --- the port --------------------------------------------------------------------------

    async def deliver(self, chat: ChatRef, items: Sequence[OutItem], *, key: str,
                      deadline_s: float | None = None, source: str = "",
                      subscription_id: int | None = None, hold: bool = False) -> Receipt:
        deadline = utcnow() + timedelta(seconds=deadline_s or self._default_deadline_s)
        delivery, created = await self._repo.create(
            key=key, chat=chat, items=list(items), deadline=deadline, source=source,
            subscription_id=subscription_id, status="held" if hold else "pending")
        if created and not hold:
            self._wake.set()
        return delivery.receipt(created=created)

    async def deliver_many(self, requests: Sequence[DeliveryRequest], *,
                           deadline_s: float | None = None) -> list[Receipt]:
        deadline = utcnow() + timedelta(seconds=deadline_s or self._default_deadline_s)
        receipts = await self._repo.create_many(requests, deadline=deadline)
        if any(r.created for r in receipts):
            self._wake.set()
        return receipts

    async def receipt(self, key: str) -> Receipt | None:
        got = await self._repo.by_key(key)
        return got.receipt() if got is not None else None

    async def wait(self, key: str, *, timeout_s: float) -> Receipt | None:
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout_s
        while True:
            got = await self.receipt(key)
            if got is None or got.status != "pending" or loop.time() >= end:
                return got
            event = self._done.setdefault(key, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), timeout=min(0.5, end - loop.time()))

    async def release_held(self, message: IncomingMessage) -> int:
        """The chat wrote: what was held for it is due now."""
        n = await self._repo.release_held(message.platform, message.chat.chat_id)
        if n:
            self._wake.set()
        return n

    def kick(self) -> None:
        self._wake.set()

    async def flush_chat(self, chat: ChatRef) -> int:
        if self._registry.get(chat.platform) is not None:
            await self._send_in_order(await self._repo.claim(
                platforms=[chat.platform], chat_id=chat.chat_id, limit=50,
                lease_s=self._lease_s))
        return await self._repo.waiting(chat.platform, chat.chat_id)

    async def _send_in_order(self, queue: list[Delivery]) -> None:
        """One chat's deliveries in order; once one is held, the rest wait behind it."""
        for i, d in enumerate(queue):
            if await self._send_one(d):
                for rest in queue[i + 1:]:
                    await self._repo.finish(rest.id, "held",
                                            error="behind an earlier held delivery")
                return

    # --- the sender ------------------------------------------------------------------------

    async def start(self) -> None:
        if self._task is None:
            await self._listen()
            self._task = asyncio.create_task(self._run(), name="outbox-sender")

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close()
            self._listener = None

    async def _listen(self) -> None:
        """NOTIFY wakes the sender at once when another process stores a delivery; polling
        every `poll_s` covers a lost connection (a database restart)."""
        if self._dsn is None:
            return
        try:
            conn = await asyncpg.connect(self._dsn, timeout=5)
            await conn.add_listener(CHANNEL, lambda *_: self._wake.set())
            self._listener = conn
        except (OSError, asyncpg.PostgresError) as exc:
            log.warning("outbox: no LISTEN connection (%s); polling only", type(exc).__name__)

    async def _run(self) -> None:
        while True:
            try:
                await self.drain()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # the database is away: try again in a moment
                log.warning("outbox sender: %s: %s", type(exc).__name__, exc)
            self._wake.clear()
            wait = self._poll_s
            with contextlib.suppress(Exception):
                due = await self._repo.next_due_in(platforms=self._registry.platforms())
                if due is not None:
                    wait = min(wait, max(due, 0.05))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=wait)

    async def drain(self) -> int:
        """Send everything due now; how many deliveries were worked on."""
        platforms = self._registry.platforms()
        if not platforms:
            return 0
        total = 0
        while True:
            batch = await self._repo.claim(platforms=platforms, limit=self._workers * 4,
                                           lease_s=self._lease_s)
            if not batch:
                return total
            total += len(batch)
            by_chat: dict[tuple[str, str], list[Delivery]] = {}
            for d in batch:
                by_chat.setdefault((d.chat.platform, d.chat.key), []).append(d)
            sem = asyncio.Semaphore(self._workers)

            async def chat_run(queue: list[Delivery], sem: asyncio.Semaphore = sem) -> None:
                async with sem:
                    await self._send_in_order(queue)

            await asyncio.gather(*(chat_run(q) for q in by_chat.values()))

    async def _send_one(self, d: Delivery) -> bool:
        """One delivery; True when it is held (what follows for the chat waits behind it)."""
        try:
            return await self._attempt(d)
        except StoreError:
            raise
        except DATABASE_TROUBLE:
            raise  # the lease runs out and the delivery is taken again
        finally:
            event = self._done.pop(d.key, None)
            if event is not None:
                event.set()

    async def _attempt(self, d: Delivery) -> bool:
        """Send what is left of `d`; True when the platform holds it for now."""
        adapter = self._registry.get(d.chat.platform)
        if adapter is None:  # another process may run it: leave the claim to run out
            return False
        if utcnow() >= d.deadline:
            log.warning("outbox: %s failed: deadline passed; last error: %s", d.key,
                        d.last_error)
            await self._repo.finish(d.id, "failed",
                                    error=f"deadline passed; last error: {d.last_error}")
            return False
        # the claim was for a batch: before sending, make sure the lease is still ours (a
        # long batch may outlive it, and another sender may have claimed the delivery)
        if not await self._repo.renew(d.id, d.attempts, lease_s=self._lease_s):
            return False
        sender = Sender(adapter)
        pieces = sender.pieces(d.items)
        sent = d.pieces_sent
        ids = list(d.message_ids)
        plain = False
        waited = 0.0  # rate-limit waits in place: bounded, so one chat cannot hold the batch
        while sent < len(pieces):
            piece = pieces[sent]
            await self._respect_pause(d.chat.platform)
            if d.subscription_id is not None and sent > d.pieces_sent \
                    and await self._repo.status_of(d.id) == "cancelled":
                return False  # unsubscribed while it was going out: the rest is not sent
            try:
                ref = await self._send_piece(sender, d.chat, piece, plain=plain)
            except PlatformError as exc:
                policy = decide(exc, stored=True)
                if policy is Policy.DONE:
                    ref = None
                elif policy is Policy.PLAIN:
                    if plain:
                        await self._repo.finish(d.id, "failed", error="formatting rejected")
                        return False
                    plain = True
                    continue
                elif policy is Policy.PAUSE:
                    assert isinstance(exc, RateLimited)
                    wait = max(exc.retry_after, 0.05)
                    # the limit is the platform's, not this delivery's: every worker waits
                    loop = asyncio.get_running_loop()
                    self._paused[d.chat.platform] = max(
                        self._paused.get(d.chat.platform, 0.0), loop.time() + wait)
                    if (wait <= INLINE_WAIT_S and waited + wait <= INLINE_BUDGET_S
                            and utcnow() + timedelta(seconds=wait) < d.deadline):
                        log.info("outbox: %s piece %d rate limited: waiting %g s in place",
                                 d.key, sent, wait)
                        waited += wait
                        await self._sleep(wait)
                        if not await self._repo.renew(d.id, d.attempts, lease_s=self._lease_s):
                            return False
                        continue
                    await self._later(d, wait, f"rate limited ({exc.retry_after:g} s)")
                    return False
                elif policy is Policy.HOLD:
                    await self._repo.finish(d.id, "held", error=str(exc))
                    return True
                elif policy is Policy.DROP:
                    await self._repo.finish(d.id, "failed", error=f"forbidden: {exc}")
                    if self.on_forbidden is not None:
                        with contextlib.suppress(Exception):
                            await self.on_forbidden(d)
                    return False
                else:  # RESCHEDULE
                    backoff = min(MAX_BACKOFF_S, 2.0 ** max(0, d.attempts - 1))
                    await self._later(d, backoff, f"{type(exc).__name__}: {exc}")
                    return False
            plain = False
            sent += 1
            if ref is not None:
                ids.append(ref.message_id)
            await self._repo.progress(d.id, pieces_sent=sent, message_ids=ids)
        await self._repo.finish(d.id, "delivered")
        log.info("outbox: %s delivered to %s/%s (%d piece(s), attempt %d)", d.key,
                 d.chat.platform, d.chat.chat_id, len(pieces), d.attempts)
        return False

    @staticmethod
    async def _send_piece(sender: Sender, chat: ChatRef, piece: Piece, *,
                          plain: bool) -> MessageRef | None:
        """One piece through the seam; an edit into a placeholder that cannot be edited any
        more (deleted, too old) is sent anew instead. A platform that failed on its side says
        nothing about the placeholder: the edit is tried again later (`RESCHEDULE`), so it
        does not stay behind saying it is working."""
        if piece.reply is not None and piece.edit_of is not None:
            reply = sender.rendered(piece.reply, plain=plain)
            ref = MessageRef(chat=chat, message_id=piece.edit_of)
            try:  # the placeholder becomes the answer; a gone one: sent anew
                await sender.edit(ref, reply)
                return ref
            except (MessageNotModified, RateLimited, FormattingRejected, Forbidden,
                    PlatformUnavailable):
                raise
            except PlatformError as exc:
                log.info("outbox: placeholder not editable (%s); sending anew", exc)
                return await sender.send(chat, reply)
        if piece.reply is not None:
            return await sender.send(chat, sender.rendered(piece.reply, plain=plain))
        assert piece.file is not None
        return await sender.send_file(chat, piece.file)

    async def _respect_pause(self, platform: str) -> None:
        until = self._paused.get(platform)
        if until is None:
            return
        left = until - asyncio.get_running_loop().time()
        if left > 0:
            await self._sleep(min(left, INLINE_WAIT_S))
        else:
            self._paused.pop(platform, None)

    async def _later(self, d: Delivery, seconds: float, error: str) -> None:
        at = utcnow() + timedelta(seconds=seconds)
        if at >= d.deadline:
            log.warning("outbox: %s failed: deadline passed; %s", d.key, error)
            await self._repo.finish(d.id, "failed", error=f"deadline passed; {error}")
        else:
            log.info("outbox: %s again in %.1f s: %s", d.key, seconds, error)
            await self._repo.retry_at(d.id, at, error=error)

