"""The answer: a question the chat queue hands over, run through the renderer. In order: what a
stopped process already stored (resumed: its question, perhaps its answer), the preprocessor
(a voice note to text), the chat's conversation, the person's turn (`one_run_per_person`),
spend (the usage gate, the conversation's token budget), the placeholder, the message recorded
`running`, then the run's events; the message's final state (`answered`, `failed` with its
error, or left `running` for the next process on shutdown).

A `StoreUnavailable` mid-answer is not the message's fault: it stays `running`, its
placeholder kept, and the resume stage takes it again once the database is back
(`Resume.left`). Any other exception is a poison message: said (in its placeholder),
recorded `failed`, not tried again.

Its own state: who is told each run's events (`on_event`: the web page's stream).
Never switched off: it is what the path is for.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from uuid import UUID

from bot.pipeline.chat_queue import ChatQueue
from bot.pipeline.context import Epoch, Job
from bot.pipeline.held import HeldDeliveries
from bot.pipeline.outcome import ERROR_CHARS, Outcome, error_of
from bot.pipeline.person_turns import PersonTurns, Release
from bot.pipeline.resume import Resume
from bot.pipeline.spend import Spend
from bot.renderer import Renderer, with_label
from core.agent.runner import CANCEL_SHUTDOWN, AgentRunner
from core.errors import StoreUnavailable
from core.events import Done, Event, Failed
from core.ports import Adapter, Outbox
from core.store import Conversation, Store
from core.store.retry import DATABASE_TROUBLE
from core.types import IncomingMessage, MessageRef
from core.words import t

log = logging.getLogger(__name__)

# turns a voice note (or another attachment) into the question's text; None: refused, said
Preprocessor = Callable[[Adapter, IncomingMessage, UUID, str], Awaitable[str | None]]
OnEvent = Callable[[IncomingMessage, Event], None]
# what keeping a stopped question in the history may meet: the database away
_HISTORY_TROUBLE: tuple[type[BaseException], ...] = (*DATABASE_TROUBLE, StoreUnavailable)


class Answer:
    def __init__(self, *, store: Store, runner: AgentRunner, outbox: Outbox | None,
                 epoch: Epoch, queue: ChatQueue, held: HeldDeliveries, persons: PersonTurns,
                 spend: Spend, resume: Resume, outcome: Outcome,
                 preprocess: Preprocessor | None = None, on_event: OnEvent | None = None) -> None:
        self._store = store
        self._runner = runner
        self._outbox = outbox
        self._epoch = epoch
        self._queue = queue
        self._held = held
        self._persons = persons
        self._spend = spend
        self._resume = resume
        self._outcome = outcome
        self._preprocess = preprocess
        self.on_event = on_event

    async def person_turn(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                          lang: str) -> Release:
        """One run at a time per person (linked accounts are one): a question, or a sandboxed
        script (/ta), from another chat or platform waits here, the user told once that it is
        queued; in this process on an asyncio lock, across the processes sharing the database
        on `person_locks`. Returns the release, which the caller awaits."""
        async def tell(key: str) -> None:
            await self._outcome.say(adapter, msg, t(key, lang))

        return await self._persons.take(user_id, tell)

    async def _keep_stopped(self, job: Job, conv: Conversation | None, text: str) -> None:
        """A question the person stopped before its run began is kept in the conversation it
        was asked in (read when it arrived: /new has started another by now), its stop noted."""
        conv = conv or job.conversation
        try:
            if conv is None:
                conv = await self._store.conversations.active(job.message.chat, job.user_id)
            await self._store.conversations.keep_stopped(conv.id, text,
                                                         inbound_id=job.inbound_id)
        except _HISTORY_TROUBLE as exc:  # the stop is said; only the history misses it
            log.warning("stopped question %s/%s not kept: %s", job.message.platform,
                        job.message.message_id, exc)

    async def __call__(self, job: Job) -> None:
        msg = job.message
        began = job.queued_at or asyncio.get_running_loop().time()  # a voice note: from now
        text = job.question.text
        status = "failed"
        error: str | None = None
        person: Release | None = None
        renderer: Renderer | None = None
        conv: Conversation | None = None
        try:
            # resumed: how far the stopped process got (the question stored, its own answer
            # too), found by the message's inbound id
            turn = (await self._store.conversations.turn_of(job.inbound_id)
                    if job.resumed and job.inbound_id is not None else None)
            if turn is not None:
                text = turn.text
            elif self._preprocess is not None and not text:
                got = await self._preprocess(job.adapter, msg, job.user_id, job.lang)
                if got is None:
                    status = "answered"  # refused with a reason, said
                    return
                text = got
            conv = job.conversation
            if turn is not None:
                conv = await self._store.conversations.get(turn.conversation_id)
            elif conv is None or job.epoch != self._epoch.value:
                conv = await self._store.conversations.active(msg.chat, job.user_id)
            if self._persons.active:
                person = await self.person_turn(job.adapter, msg, job.user_id, job.lang)
            if turn is None and self._spend.active:
                async def tell(text: str) -> None:
                    await self._outcome.say(job.adapter, msg, text)

                got_conv = await self._spend.before_run(job, conv, tell)
                if got_conv is None:
                    status = "answered"  # refused with the reset time, said
                    return
                conv = got_conv
            adopt = (MessageRef(chat=msg.chat, message_id=job.placeholder)
                     if job.placeholder else None)
            async def holder(message_id: str) -> None:
                await self._running(job, message_id)

            renderer = Renderer(job.adapter, msg.chat, lang=job.lang,
                                in_reply_to=msg.message_id, outbox=self._outbox,
                                queue_behind=self._held.behind(msg.chat), adopt=adopt,
                                on_holder=holder)
            await renderer.start()
            job.shown()
            await self._running(job, renderer.placeholder_id)
            if turn is not None and turn.answer is not None:
                # its own answer was stored before the process stopped (perhaps shown too):
                # shown now, in its placeholder, without asking the model again
                try:
                    await renderer.deliver_final(with_label(turn.answer, turn.label))
                finally:
                    await renderer.aclose()
                status = "answered" if renderer.result.delivered else "failed"
                return
            status, error = await self._run(job, conv, text, renderer,
                                            stored_as=turn.user_message_id if turn else None)
        except asyncio.CancelledError as exc:
            shutdown = bool(exc.args) and exc.args[0] == CANCEL_SHUTDOWN
            status = "running" if shutdown else "answered"  # the next process answers it;
            # or stopped by the user (/stop, /new), and said: in the placeholder when the
            # stop came after it went out and before the run began (the run says it itself)
            if renderer is not None and renderer.placeholder_id is not None \
                    and not renderer.ended:
                await asyncio.shield(renderer.cut_short(
                    t("chat.interrupted" if shutdown else "chat.stopped", job.lang)))
            if not shutdown and text:
                await asyncio.shield(self._keep_stopped(job, conv, text))
            raise
        except StoreUnavailable as exc:
            # the database is away: not this message's fault, nor a reason to give up; it
            # stays running and is taken again here once the database is back
            status = "running"
            log.warning("message %s/%s waits for the database: %s", msg.platform,
                        msg.message_id, exc)
            if renderer is not None:
                await renderer.aclose()  # its placeholder stays, for the next try to adopt
            self._resume.left(job.adapter, msg, renderer.placeholder_id
                              if renderer is not None else job.placeholder)
        except Exception as exc:  # a poison message: said, recorded, not tried again
            status, error = "failed", error_of(exc)
            await asyncio.shield(self._outcome.poisoned(job.adapter, msg, job.lang, exc,
                                                        renderer))
        finally:
            if person is not None:
                await asyncio.shield(person())
            self._queue.done((msg.chat.key, msg.message_id))
            if status != "running":
                # not shielded: the mark joins its batch before this first waits (`StateMarks`),
                # so a cancel here leaves it written all the same, without a task per message
                await self._outcome.mark(msg, status, error=error)
            log.info("message %s/%s %s: mode %s, %.1f s, %d tokens", msg.platform,
                     msg.chat.chat_id, status, job.mode or "-",
                     asyncio.get_running_loop().time() - began, job.tokens)

    async def _running(self, job: Job, placeholder: str | None) -> None:
        """The message is running, with what a resumed run needs (user, language, the
        placeholder: the message that holds the answer, or one sent anew to hold it when no
        placeholder could be sent). One just sent is recorded at once, not behind the batched
        states: until its id is written a crash leaves it unreplaceable, saying it is working,
        or the answer shown twice (Telegram has no way to find a bot's message again)."""
        msg = job.message
        if placeholder is None or placeholder == job.placeholder:
            await self._outcome.mark(msg, "running", user_id=job.user_id, lang=job.lang,
                                     placeholder=placeholder)
            return
        try:
            await self._store.inbound.mark(
                platform=msg.platform, chat_id=msg.chat.chat_id, message_id=msg.message_id,
                status="running", user_id=job.user_id, lang=job.lang, placeholder=placeholder)
        except StoreUnavailable:
            raise  # the run waits for the database; the placeholder is written then
        except Exception as exc:
            log.warning("placeholder of %s/%s not recorded: %s", msg.platform, msg.message_id,
                        exc)

    async def _run(self, job: Job, conv: Conversation, text: str, renderer: Renderer,
                   stored_as: int | None = None) -> tuple[str, str | None]:
        """The run's events through the renderer; the message's final state, and why it
        failed: `answered` only when the run's own answer was delivered (or handed to the
        outbox), `failed` with the error when the run ended in one (said to the user)."""
        msg = job.message
        failed: Failed | None = None
        job.mode = job.question.mode or conv.mode
        try:
            async for event in self._runner.run(
                    conversation=conv, user_id=job.user_id, text=text, lang=job.lang,
                    mode=job.question.mode, options=job.question.options,
                    platform_message_id=msg.message_id, stored_as=stored_as,
                    token_allowance=job.token_allowance, inbound_id=job.inbound_id):
                if self.on_event is not None:
                    self.on_event(msg, event)
                if isinstance(event, Failed):
                    failed = event
                if isinstance(event, Done):
                    job.tokens += sum(u.total_tokens for u in event.usage)
                await renderer.on_event(event)
        except asyncio.CancelledError as exc:
            shutdown = bool(exc.args) and exc.args[0] == CANCEL_SHUTDOWN
            await asyncio.shield(renderer.cut_short(
                t("chat.interrupted" if shutdown else "chat.stopped", job.lang)))
            raise
        finally:
            await renderer.aclose()
        if failed is not None and failed.kind == "internal":  # recorded as a poison one is
            return "failed", failed.error[:ERROR_CHARS]
        if failed is not None and failed.kind not in ("cancelled", "input", "budget"):
            return "failed", f"{failed.kind}: {failed.error}"[:ERROR_CHARS]
        return ("answered" if renderer.result.delivered else "failed"), None
