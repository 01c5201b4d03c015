"""Where every platform's messages meet the agent: the shell that builds the message path's
stages (`bot.pipeline.build_pipeline`: record and dedupe, held deliveries, admission, added
stages, routing, rate limits, the chat queue, spend, one run per person, the answer, resume),
holds them, and gives command handlers their verbs (`bot.commands.context.CommandHost`).
`handle` returns quickly: questions go on the chat queue, answered in order by a worker task
the queue owns (cancelled on shutdown); `/stop` cancels the chat's current run.
"""

from __future__ import annotations

import gc
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from uuid import UUID

from bot.commands import Command, Question
from bot.pipeline import Pipeline, build_pipeline
from bot.pipeline.answer import OnEvent, Preprocessor
from bot.pipeline.context import Stage
from bot.pipeline.limits import Limits
from bot.pipeline.record import SPOOL_AFTER_S
from bot.pipeline.resume import STALE_S, TOO_OLD_S
from bot.sender import Sender
from bot.spool import Spool
from core.agent.runner import AgentRunner
from core.ports import Adapter, MessageHandler, Outbox
from core.store import Conversation, Store
from core.types import Button, IncomingMessage, OutgoingFile

__all__ = ["Gateway", "Preprocessor"]

_heap_frozen = False


# container objects allocated (net) before the youngest generation is collected; Python's 700
# ran a collection every ~0.4 messages (a message makes ~1,900), 8-10% of the gateway's CPU
# per message with the older generations' passes it triggers (issue 34's profile: 0.26 ms of
# ~2.6); at 10,000 it is 0.06 ms. What waits for a collection is cyclic garbage only (a few MB)
YOUNG_THRESHOLD = 10_000


def _freeze_startup_heap() -> None:
    """Once per process, when a gateway starts serving: collect, then move every object alive
    now (modules, SDKs, the tool registry, settings) out of the collector's generations
    (`gc.freeze`). A full collection then scans what was allocated since, not the ~330k
    objects of startup (~160 ms each, a few per thousand messages). And the youngest
    generation is collected every `YOUNG_THRESHOLD` allocations, not every 700."""
    global _heap_frozen
    if not _heap_frozen:
        _heap_frozen = True
        gc.collect()
        gc.freeze()
        young, older, oldest = gc.get_threshold()
        gc.set_threshold(max(YOUNG_THRESHOLD, young), older, oldest)


class Gateway:
    def __init__(self, *, store: Store, runner: AgentRunner,
                 preprocess: Preprocessor | None = None, on_event: OnEvent | None = None,
                 outbox: Outbox | None = None, report_llm: Any = None,
                 limits: Limits | None = None, instance: str | None = None,
                 spool: Spool | None = None, spool_after_s: float = SPOOL_AFTER_S,
                 stale_s: float = STALE_S, too_old_s: float = TOO_OLD_S,
                 added: Sequence[Stage] = (), off: Sequence[str] = ()) -> None:
        self._store = store
        # where replies go when the platform refuses them live, and held deliveries are
        # released from when the chat writes again
        self.outbox = outbox
        # crash safety: this process's id on the messages it answers
        self.instance = instance or secrets.token_hex(8)
        self.report_llm = report_llm  # the narrative of /report (None: the offline template)
        # where /web and /share links point (bot.commands.web.configure; None: no web page)
        self.web_base_url: str | None = None
        # the platforms' recent answers on who administers a group (bot.chat_admins)
        self.chat_admin_answers: dict[tuple[str, str, str], tuple[float, bool | None]] = {}
        # the stages, in order (bot.pipeline): who may spend what is `limits`; `off` names
        # the stages switched off (`serve`: bot.pipeline.switched_off(settings))
        self.stages: Pipeline = build_pipeline(
            store=store, runner=runner, outbox=outbox, limits=limits or Limits(),
            instance=self.instance, dispatch=self._dispatch, preprocess=preprocess,
            on_event=on_event, spool=spool, spool_after_s=spool_after_s, stale_s=stale_s,
            too_old_s=too_old_s, added=added, off=off)

    @property
    def store(self) -> Store:
        return self._store

    @property
    def limits(self) -> Limits:
        return self.stages.limits

    def handler_for(self, adapter: Adapter) -> MessageHandler:
        _freeze_startup_heap()

        async def on_message(message: IncomingMessage) -> None:
            await self.handle(adapter, message)

        return on_message

    async def handle(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """The message into the first stage (record; `bot.pipeline.record`)."""
        await self.stages.record.handle(adapter, msg)

    async def idle(self) -> None:
        """Wait until every message taken in is answered (tests, one-shot runs): those still
        being recorded first, then every queued question."""
        await self.stages.record.settled()
        await self.stages.queue.idle()

    async def aclose(self) -> None:
        self.stages.record.aclose()
        await self.stages.resume.aclose()
        await self.stages.queue.aclose()
        await self.stages.persons.aclose()

    async def _dispatch(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                        cmd: Command, conversation: Conversation | None, epoch: int) -> None:
        """A routed command to its handler, which sees this shell through `CommandContext`."""
        from bot.commands.context import CommandContext, dispatch

        await dispatch(CommandContext.of(self, adapter, msg, user_id=user_id, lang=lang, cmd=cmd,
                                         conversation=conversation, epoch=epoch))

    # --- what command handlers use (bot.commands.context.CommandHost) -----------------------

    async def say(self, adapter: Adapter, msg: IncomingMessage, text: str,
                  buttons: list[list[Button]] | None = None) -> None:
        await self.stages.outcome.say(adapter, msg, text, buttons)

    async def send_file(self, adapter: Adapter, msg: IncomingMessage,
                        file: OutgoingFile) -> None:
        await Sender(adapter, outbox=self.outbox).file(msg, file)

    async def enqueue(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                      question: Question, conversation: Conversation | None = None,
                      epoch: int = -1) -> None:
        """A command's question queued, after the person's heavy-mode rates (`Routing`)."""
        await self.stages.routing.enqueue(adapter, msg, user_id, lang, question, conversation,
                                          epoch)

    def stop_chat(self, key: str) -> bool:
        return self.stages.queue.stop(key)

    async def person_turn(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                          lang: str) -> Callable[[], Awaitable[None]]:
        """The person's turn (one run per person; `Answer.person_turn`); returns its release."""
        return await self.stages.answer.person_turn(adapter, msg, user_id, lang)

    async def is_admin(self, msg: IncomingMessage, user_id: UUID) -> bool:
        """The person is one of Bullpen's admins (BULLPEN_ADMINS, through any linked account)."""
        return await self.stages.admission.is_admin_person(msg, user_id)
