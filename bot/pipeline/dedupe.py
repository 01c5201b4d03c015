"""Dedupe, the record's second half: what the record stored (idempotent on platform + chat +
message id) is let on only the first time. A duplicate delivery is dropped, unless nobody is
answering it (its process stopped, or this one lost it to a database outage): then it is resumed
(`Resume.redelivered`). A new message is in hand (the sweep does not take it again) while the
stages before the chat queue take it; one that raises there is a poison message: said, recorded
`failed`, never raised (a `StoreUnavailable` is: stored, not answered, a redelivery or the
sweeper resumes it). Its own state: how many duplicates it dropped.

Never switched off: without it a platform's retry would be answered twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from bot.pipeline.chat_queue import ChatQueue
from bot.pipeline.outcome import Outcome
from bot.pipeline.resume import Resume
from core.errors import StoreUnavailable
from core.ports import Adapter
from core.store.inbound import Inbound
from core.types import IncomingMessage
from core.words import detect_lang

log = logging.getLogger(__name__)

# the stages a new message goes on to (`arrival.Arrivals`)
Arrived = Callable[[Adapter, IncomingMessage, Inbound, int], Coroutine[Any, Any, None]]


class Dedupe:
    def __init__(self, *, queue: ChatQueue, resume: Resume, outcome: Outcome,
                 arrived: Arrived) -> None:
        self._queue = queue
        self._resume = resume
        self._outcome = outcome
        self._arrived = arrived
        self.dropped = 0  # duplicate deliveries dropped

    async def __call__(self, adapter: Adapter, msg: IncomingMessage, got: Inbound,
                       epoch: int) -> None:
        if not got.new:
            if await self._resume.redelivered(adapter, msg, got.previous):
                return
            self.dropped += 1
            log.info("duplicate delivery %s/%s ignored", msg.platform, msg.message_id)
            return
        with self._queue.in_hand((msg.chat.key, msg.message_id)):
            try:
                await self._arrived(adapter, msg, got, epoch)
            except StoreUnavailable:
                raise  # stored, not answered: a redelivery or the sweeper resumes it
            except Exception as exc:  # a poison message: said and recorded, never raised
                await self._outcome.failed(adapter, msg, got.lang or detect_lang(msg.text), exc)
