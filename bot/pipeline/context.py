"""The typed context a question carries through the pipeline's later stages (the chat queue,
spend, one run per person, the answer), and the conversation epoch the stages share."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol
from uuid import UUID

from bot.commands import Question
from core.ports import Adapter
from core.store import Conversation
from core.types import IncomingMessage


class Epoch:
    """Moves on every /mode and /new and when a conversation is carried over: a conversation
    read before the move is read again. One object, shared by the stages that read or move it
    (instead of one stage writing another's private counter)."""

    def __init__(self) -> None:
        self.value = 0

    def move(self) -> None:
        self.value += 1


@dataclass
class Job:
    """One question on its way to an answer."""

    adapter: Adapter
    message: IncomingMessage
    user_id: UUID
    lang: str
    question: Question
    # the chat's active conversation read with the inbound record, valid while `epoch` is
    # the gateway's (no /mode or /new since)
    conversation: Conversation | None = None
    epoch: int = -1
    # resolved once the answer's placeholder is out (or the job ended without one)
    started: asyncio.Future[None] | None = None
    queued_at: float = 0.0
    placeholder: str | None = None  # resumed after a crash: the bot's message to reuse
    resumed: bool = False  # left unanswered by a stopped process: look for what it stored
    # the inbound row's id: the run's rows are stored with it and a resumed run finds its own
    # question and answer by it, never by position (house rule 15)
    inbound_id: int | None = None
    token_allowance: int | None = None  # the person's budget left (core.usage_gate)
    mode: str = ""  # the mode that ran and its model tokens: the message's log line
    tokens: int = 0

    def shown(self) -> None:
        if self.started is not None and not self.started.done():
            self.started.set_result(None)


@dataclass(frozen=True)
class Arrival:
    """A stored, admitted message before routing: what an added stage sees."""

    adapter: Adapter
    message: IncomingMessage
    user_id: UUID
    lang: str
    say: Callable[[str], Awaitable[None]]  # a reply to the message, through the seam


class Stage(Protocol):
    """A stage added to the path (`build_pipeline(added=...)`): it runs after admission and
    before routing, in the order given, with its own state; True when it answered the message
    itself (the message is then marked answered and goes no further)."""

    name: str

    async def __call__(self, arrival: Arrival) -> bool: ...
