"""What the stages after the record do with a message's outcome, in one object they share
(dedupe, routing, the answer): its state recorded (by group commit, `bot.state_marks`), a reply
through the delivery seam (the outbox when the platform refuses it live), and the apology of a
message that raised (a poison message). Its own state: the batched state marks."""

from __future__ import annotations

import logging
from typing import Any

from bot.renderer import Renderer
from bot.sender import say
from bot.state_marks import StateMarks
from core.agent.runner import error_of as run_error_of
from core.ports import Adapter, Outbox
from core.store import Store
from core.store.retry import unusable_input
from core.types import Button, IncomingMessage
from core.words import t

log = logging.getLogger(__name__)

# how much of a failure's error is kept with the message (inbound_events.error)
ERROR_CHARS = 500


def error_of(exc: BaseException) -> str:
    """A failure as recorded with its message: the type and the first line of what it said."""
    return run_error_of(exc)[:ERROR_CHARS]


class Outcome:
    def __init__(self, *, store: Store, outbox: Outbox | None) -> None:
        self._marks = StateMarks(store.inbound.mark_many)
        self._outbox = outbox

    async def say(self, adapter: Adapter, msg: IncomingMessage, text: str,
                  buttons: list[list[Button]] | None = None) -> None:
        await say(adapter, msg, text, outbox=self._outbox, buttons=buttons)

    async def mark(self, msg: IncomingMessage, status: str, **fields: Any) -> None:
        """The message's recorded state; a failure to record is logged, never the user's."""
        try:
            await self._marks.mark((msg.platform, msg.chat.chat_id, msg.message_id), status,
                                   **fields)
        except Exception as exc:
            log.warning("state %s of %s/%s not recorded: %s", status, msg.platform,
                        msg.message_id, exc)

    async def poisoned(self, adapter: Adapter, msg: IncomingMessage, lang: str,
                       exc: Exception, renderer: Renderer | None = None) -> None:
        """Handling `msg` raised: the user gets a short apology (a clear refusal when its
        input could not be used, e.g. a number out of range), in its placeholder when it has
        one. The caller records the message `failed` with the error, so that nothing takes it
        up again."""
        if unusable_input(exc):
            log.warning("message %s/%s refused: %s", msg.platform, msg.message_id,
                        error_of(exc))
            said = t("chat.bad_input", lang)
        else:
            log.error("message %s/%s failed", msg.platform, msg.message_id, exc_info=exc)
            said = t("chat.sorry", lang)
        try:
            if renderer is not None and renderer.placeholder_id is not None:
                await renderer.cut_short(said, kind="internal")
            else:
                await self.say(adapter, msg, said)
        except Exception as again:  # the apology is best effort; the state is recorded
            log.warning("apology for %s/%s not sent: %s", msg.platform, msg.message_id, again)

    async def failed(self, adapter: Adapter, msg: IncomingMessage, lang: str,
                     exc: Exception) -> None:
        """A poison message outside a run: said, and recorded `failed` with its error."""
        await self.poisoned(adapter, msg, lang, exc)
        await self.mark(msg, "failed", error=error_of(exc))
