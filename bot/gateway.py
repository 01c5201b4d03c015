"""Where every platform's messages meet the agent: the stages of `bot.pipeline`, called in
order (record, held deliveries, admission, added stages, routing, rate limits, the chat queue,
spend, one run per person, the answer, resume), built once by `build_pipeline`.

What stays here is what ties the stages together: dedupe after the record, routing (a command
to its declaration, a question to the chat queue), the answer (the run through the renderer,
the message's states), and the verbs command handlers see through `CommandContext`. `handle`
returns quickly: questions go on the chat queue, answered in order by a worker task the queue
owns (cancelled on shutdown); `/stop` cancels the chat's current run.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import secrets
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from uuid import UUID

from bot import budget_gateway, commands
from bot.commands import Command, Question
from bot.pipeline import Pipeline, build_pipeline
from bot.pipeline.context import Arrival, Job, Stage
from bot.pipeline.limits import Limits
from bot.pipeline.record import SPOOL_AFTER_S
from bot.pipeline.resume import STALE_S, TOO_OLD_S
from bot.renderer import Renderer, with_label
from bot.sender import Sender, say
from bot.spool import Spool
from bot.state_marks import StateMarks
from core.agent.runner import CANCEL_SHUTDOWN, AgentRunner, error_of
from core.errors import StoreUnavailable
from core.events import Done, Event, Failed
from core.ports import Adapter, MessageHandler, Outbox
from core.store import Conversation, Store
from core.store.inbound import Inbound
from core.store.retry import unusable_input
from core.types import (
    Button,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    utcnow,
)
from core.words import detect_lang, t

log = logging.getLogger(__name__)

Preprocessor = Callable[[Adapter, IncomingMessage, UUID, str], Awaitable[str | None]]


# how much of a failure's error is kept with the message (inbound_events.error)
_ERROR_CHARS = 500


def _error_of(exc: BaseException) -> str:
    """A failure as recorded with its message: the type and the first line of what it said."""
    return error_of(exc)[:_ERROR_CHARS]


_heap_frozen = False


def _freeze_startup_heap() -> None:
    """Once per process, when a gateway starts serving: collect, then move every object alive
    now (modules, SDKs, the tool registry, settings) out of the collector's generations
    (`gc.freeze`). A full collection then scans what was allocated since, not the ~330k
    objects of startup (~160 ms each, a few per thousand messages)."""
    global _heap_frozen
    if not _heap_frozen:
        _heap_frozen = True
        gc.collect()
        gc.freeze()


class Gateway:
    def __init__(self, *, store: Store, runner: AgentRunner,
                 preprocess: Preprocessor | None = None,
                 on_event: Callable[[IncomingMessage, Event], None] | None = None,
                 outbox: Outbox | None = None, report_llm: Any = None,
                 limits: Limits | None = None, instance: str | None = None,
                 spool: Spool | None = None, spool_after_s: float = SPOOL_AFTER_S,
                 stale_s: float = STALE_S, too_old_s: float = TOO_OLD_S,
                 added: Sequence[Stage] = (), off: Sequence[str] = ()) -> None:
        self._store = store
        # where replies go when the platform refuses them live, and held deliveries are
        # released from when the chat writes again
        self.outbox = outbox
        # crash safety: this process's id on the messages it answers, and the placeholders and
        # inbound rows of the commands being handled
        self.instance = instance or secrets.token_hex(8)
        self._resuming: dict[tuple[str, str], str | None] = {}
        self._inbound_ids: dict[tuple[str, str], int] = {}  # commands being handled
        self._marks = StateMarks(store.inbound.mark_many)  # states, by group commit
        self.report_llm = report_llm  # the narrative of /report (None: the offline template)

        self._runner = runner
        self._preprocess = preprocess
        self._on_event = on_event
        # where /web and /share links point (bot.commands.web.configure; None: no web page)
        self.web_base_url: str | None = None
        # the platforms' recent answers on who administers a group (bot.chat_admins)
        self.chat_admin_answers: dict[tuple[str, str, str], tuple[float, bool | None]] = {}
        # the stages, in order (bot.pipeline): who may spend what is `limits`
        self.stages: Pipeline = build_pipeline(
            store=store, outbox=outbox, limits=limits or Limits(), instance=self.instance,
            spool=spool, spool_after_s=spool_after_s, recorded=self._recorded,
            answer=self._answer, take_over=self._take_over, stale_s=stale_s,
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

    async def aclose(self) -> None:
        self.stages.record.aclose()
        await self.stages.resume.aclose()
        await self.stages.queue.aclose()
        await self.stages.persons.aclose()

    async def idle(self) -> None:
        """Wait until every queued question is answered (tests, one-shot runs)."""
        await self.stages.queue.idle()

    # --- entry -----------------------------------------------------------------------------

    async def handle(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """The message into the first stage (record; `bot.pipeline.record`)."""
        await self.stages.record.handle(adapter, msg)

    async def _recorded(self, adapter: Adapter, msg: IncomingMessage, got: Inbound,
                        epoch: int) -> None:
        """Dedupe: a duplicate is dropped unless nobody is answering it; a new message goes
        on through the stages."""
        if not got.new:
            if await self.stages.resume.redelivered(adapter, msg, got.previous):
                return
            log.info("duplicate delivery %s/%s ignored", msg.platform, msg.message_id)
            return
        with self.stages.queue.in_hand((msg.chat.key, msg.message_id)):
            try:
                await self._handle_new(adapter, msg, got, epoch)
            except StoreUnavailable:
                raise  # stored, not answered: a redelivery or the sweeper resumes it
            except Exception as exc:  # a poison message: said and recorded, never raised
                await self._poisoned(adapter, msg, got.lang or detect_lang(msg.text), exc)
                await self._mark(msg, "failed", error=_error_of(exc))

    async def _handle_new(self, adapter: Adapter, msg: IncomingMessage, got: Inbound,
                          epoch: int) -> None:
        await self.stages.held.chat_wrote(msg.chat, held=bool(got.held))  # what was held first
        if msg.is_edit or (msg.chat.is_group and not msg.addressed):
            await self._mark(msg, "ignored")
            return  # edits are not re-answered; group chatter is not for us
        if got.user_id is not None:
            user_id, chosen = got.user_id, got.lang
        else:  # first sight of this account: create its user
            user_id, chosen = await self._store.accounts.user_and_lang(
                msg.platform, msg.sender.platform_uid, msg.sender.display_name)
        lang = chosen or detect_lang(msg.text)
        if not await self.stages.admission.admitted(msg, user_id):
            await self._say(adapter, msg, t("chat.access_denied", lang,
                                            who=budget_gateway.account_of(msg)))
            await self._mark(msg, "answered")
            return
        if got.paused_subscriptions:
            await self._tell_paused(adapter, msg, lang, got.paused_subscriptions)
        if self.stages.added:
            async def tell(text: str) -> None:
                await self._say(adapter, msg, text)

            arrival = Arrival(adapter=adapter, message=msg, user_id=user_id, lang=lang,
                              say=tell)
            for stage in self.stages.added:
                if await stage(arrival):
                    await self._mark(msg, "answered")
                    return
        await self._route(adapter, msg, user_id, lang, got.conversation, epoch,
                          inbound_id=got.id)

    async def _route(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                     conversation: Conversation | None, epoch: int, *,
                     placeholder: str | None = None, resumed: bool = False,
                     inbound_id: int | None = None) -> None:
        """A recorded message to its answer: a question queued, or a command handled (a
        command that queues nothing is answered when it returns)."""
        key = (msg.chat.key, msg.message_id)
        text = msg.text
        if msg.callback_data:
            text = "/" + msg.callback_data.replace(":", " ", 1)
        if not text.strip() and msg.attachments:
            if self._preprocess is None:
                await self._say(adapter, msg, t("chat.unsupported", lang,
                                                kind=msg.attachments[0].kind))
                await self._mark(msg, "answered")
                return
            # voice notes and the like: the preprocessor may turn them into text
            if not resumed and await self._rate_refused(adapter, msg, user_id, lang,
                                                        Question(text=""), conversation):
                return
            self._enqueue(adapter, msg, user_id, lang, Question(text=""),
                          conversation, epoch, placeholder=placeholder, resumed=resumed,
                          inbound_id=inbound_id)
            return
        cmd = commands.parse(text)
        if cmd is None:
            if not resumed and await self._rate_refused(adapter, msg, user_id, lang,
                                                        Question(text=text), conversation):
                return
            self._enqueue(adapter, msg, user_id, lang, Question(text=text),
                          conversation, epoch, placeholder=placeholder, resumed=resumed,
                          inbound_id=inbound_id)
            return
        declared = commands.spec(cmd.name) if cmd.known else None
        if declared is None or declared.in_order:
            await self.stages.queue.after_placeholder(msg.chat.key)
        if resumed:
            self._resuming[key] = placeholder
        if inbound_id is not None:  # a question the command queues is this message's
            self._inbound_ids[key] = inbound_id
        try:
            await self._command(adapter, msg, user_id, lang, cmd, conversation, epoch)
        finally:
            self._resuming.pop(key, None)
            self._inbound_ids.pop(key, None)
        if not self.stages.queue.holds(key):
            await self._mark(msg, "answered")

    # --- commands --------------------------------------------------------------------------

    async def _say(self, adapter: Adapter, msg: IncomingMessage, text: str,
                   buttons: list[list[Button]] | None = None) -> None:
        await say(adapter, msg, text, outbox=self.outbox, buttons=buttons)

    async def _command(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                       cmd: Command, conversation: Conversation | None = None,
                       epoch: int = -1) -> None:
        from bot.commands.context import CommandContext, dispatch

        declared = commands.spec(cmd.name) if cmd.known else None
        if declared is not None and declared.new_epoch:
            self.stages.epoch.move()  # conversations read before are stale from now on

        async def tell(text: str) -> None:
            await self._say(adapter, msg, text)

        if (declared is not None and declared.gated
                and not await self.stages.admission.command_allowed(user_id, lang, tell)):
            return
        if ((declared is None or declared.rated)
                and (msg.chat.key, msg.message_id) not in self._resuming):
            refusal = await self.stages.rates.refusal(user_id, lang, ["message"])
            if refusal is not None:  # nothing a command does happens past the person's rate
                await self._say(adapter, msg, refusal)
                return
        await dispatch(CommandContext.of(self, adapter, msg, user_id=user_id, lang=lang, cmd=cmd,
                                         conversation=conversation, epoch=epoch))

    async def _tell_paused(self, adapter: Adapter, msg: IncomingMessage, lang: str,
                           ids: tuple[int, ...]) -> None:
        """A subscription whose chat refused the bot (removed, blocked) was paused: its owner
        hears of it here, once, wherever they write next."""
        subs = self._store.subscriptions
        for sub_id in ids:
            sub = await subs.get(sub_id)
            if sub is None:
                continue
            what = ", ".join(sub.symbols) or t("subs.watchlist", lang)
            where = f"{sub.chat.platform} {sub.chat.chat_id}"
            await self._say(adapter, msg, t("subs.paused_owner", lang, id=sub.id, what=what,
                                            where=where))
            await subs.acknowledge_pause(sub.id)

    # what command handlers use (bot.commands.context)

    async def say(self, adapter: Adapter, msg: IncomingMessage, text: str,
                  buttons: list[list[Button]] | None = None) -> None:
        await self._say(adapter, msg, text, buttons)

    async def send_file(self, adapter: Adapter, msg: IncomingMessage,
                        file: OutgoingFile) -> None:
        await Sender(adapter, outbox=self.outbox).file(msg, file)

    def stop_chat(self, key: str) -> bool:
        return self.stages.queue.stop(key)

    async def is_admin(self, msg: IncomingMessage, user_id: UUID) -> bool:
        """The person is one of Bullpen's admins (BULLPEN_ADMINS, through any linked account)."""
        return await self.stages.admission.is_admin_person(msg, user_id)

    async def enqueue(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                      question: Question, conversation: Conversation | None = None,
                      epoch: int = -1) -> None:
        """A command's question queued: its command was counted against the message rate
        already (`_command`); a heavy mode counts against the debates per day here."""
        kinds = [k for k in budget_gateway.question_kinds(msg, question, conversation)
                 if k != "message"]
        if kinds and (msg.chat.key, msg.message_id) not in self._resuming:
            refusal = await self.stages.rates.refusal(user_id, lang, kinds)
            if refusal is not None:
                await self._say(adapter, msg, refusal)
                return
        self._enqueue(adapter, msg, user_id, lang, question, conversation, epoch)

    async def _rate_refused(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                            lang: str, question: Question,
                            conversation: Conversation | None) -> bool:
        """A question over the person's rate is refused before it is queued (it never reaches
        the model), the person told when to try again. True when it was."""
        refusal = await self.stages.rates.refusal(
            user_id, lang, budget_gateway.question_kinds(msg, question, conversation))
        if refusal is None:
            return False
        await self._say(adapter, msg, refusal)
        await self._mark(msg, "answered")
        return True

    # --- the queue -------------------------------------------------------------------------

    def _enqueue(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                 question: Question, conversation: Conversation | None = None,
                 epoch: int = -1, *, placeholder: str | None = None,
                 resumed: bool = False, inbound_id: int | None = None) -> None:
        if (msg.chat.key, msg.message_id) in self._resuming:  # a resumed message's command
            resumed = True
            placeholder = placeholder or self._resuming[(msg.chat.key, msg.message_id)]
        if inbound_id is None:
            inbound_id = self._inbound_ids.get((msg.chat.key, msg.message_id))
        self.stages.queue.put(Job(adapter, msg, user_id, lang, question, conversation, epoch,
                                  placeholder=placeholder, resumed=resumed,
                                  inbound_id=inbound_id))

    async def _answer(self, job: Job) -> None:
        msg = job.message
        began = job.queued_at or asyncio.get_running_loop().time()  # a voice note: from now
        text = job.question.text
        status = "failed"
        error: str | None = None
        person: Callable[[], Awaitable[None]] | None = None
        renderer: Renderer | None = None
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
            elif conv is None or job.epoch != self.stages.epoch.value:
                conv = await self._store.conversations.active(msg.chat, job.user_id)
            if self.stages.persons.active:
                person = await self.person_turn(job.adapter, msg, job.user_id, job.lang)
            if turn is None and self.stages.spend.active:
                async def tell(text: str) -> None:
                    await self._say(job.adapter, msg, text)

                got_conv = await self.stages.spend.before_run(job, conv, tell)
                if got_conv is None:
                    status = "answered"  # refused with the reset time, said
                    return
                conv = got_conv
            adopt = (MessageRef(chat=msg.chat, message_id=job.placeholder)
                     if job.placeholder else None)
            async def holder(message_id: str) -> None:
                await self._running(job, message_id)

            renderer = Renderer(job.adapter, msg.chat, lang=job.lang,
                                in_reply_to=msg.message_id, outbox=self.outbox,
                                queue_behind=self.stages.held.behind(msg.chat), adopt=adopt,
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
            raise
        except StoreUnavailable as exc:
            # the database is away: not this message's fault, nor a reason to give up; it
            # stays running and is taken again here once the database is back
            status = "running"
            log.warning("message %s/%s waits for the database: %s", msg.platform,
                        msg.message_id, exc)
            if renderer is not None:
                await renderer.aclose()  # its placeholder stays, for the next try to adopt
            self.stages.resume.left(job.adapter, msg, renderer.placeholder_id
                                    if renderer is not None else job.placeholder)
        except Exception as exc:  # a poison message: said, recorded, not tried again
            status, error = "failed", _error_of(exc)
            await asyncio.shield(self._poisoned(job.adapter, msg, job.lang, exc, renderer))
        finally:
            if person is not None:
                await asyncio.shield(person())
            self.stages.queue.done((msg.chat.key, msg.message_id))
            if status != "running":
                await asyncio.shield(self._mark(msg, status, error=error))
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
            await self._mark(msg, "running", user_id=job.user_id, lang=job.lang,
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
                if self._on_event is not None:
                    self._on_event(msg, event)
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
            return "failed", failed.error[:_ERROR_CHARS]
        if failed is not None and failed.kind not in ("cancelled", "input", "budget"):
            return "failed", f"{failed.kind}: {failed.error}"[:_ERROR_CHARS]
        return ("answered" if renderer.result.delivered else "failed"), None

    # --- who may spend what ----------------------------------------------------------------

    async def person_turn(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                          lang: str) -> Callable[[], Awaitable[None]]:
        """One run at a time per person (linked accounts are one): a question, or a sandboxed
        script (/ta), from another chat or platform waits here, the user told once that it is
        queued; in this process on an asyncio lock, across the processes sharing the database
        on `person_locks`. Returns the release, which the caller awaits."""
        async def tell(key: str) -> None:
            await self._say(adapter, msg, t(key, lang))

        return await self.stages.persons.take(user_id, tell)

    # --- crash safety ----------------------------------------------------------------------

    async def _mark(self, msg: IncomingMessage, status: str, **fields: Any) -> None:
        """The message's recorded state; a failure to record is logged, never the user's."""
        try:
            await self._marks.mark((msg.platform, msg.chat.chat_id, msg.message_id), status,
                                   **fields)
        except Exception as exc:
            log.warning("state %s of %s/%s not recorded: %s", status, msg.platform,
                        msg.message_id, exc)

    async def _poisoned(self, adapter: Adapter, msg: IncomingMessage, lang: str,
                        exc: Exception, renderer: Renderer | None = None) -> None:
        """Handling `msg` raised: the user gets a short apology (a clear refusal when its
        input could not be used, e.g. a number out of range), in its placeholder when it has
        one. The caller records the message `failed` with the error, so that nothing takes it
        up again."""
        if unusable_input(exc):
            log.warning("message %s/%s refused: %s", msg.platform, msg.message_id,
                        _error_of(exc))
            said = t("chat.bad_input", lang)
        else:
            log.error("message %s/%s failed", msg.platform, msg.message_id, exc_info=exc)
            said = t("chat.sorry", lang)
        try:
            if renderer is not None and renderer.placeholder_id is not None:
                await renderer.cut_short(said, kind="internal")
            else:
                await self._say(adapter, msg, said)
        except Exception as again:  # the apology is best effort; the state is recorded
            log.warning("apology for %s/%s not sent: %s", msg.platform, msg.message_id, again)

    async def _take_over(self, adapter: Adapter, msg: IncomingMessage, row: dict[str, Any],
                         too_old_s: float) -> None:
        """A message taken over from a stopped process (or found unanswered on redelivery,
        `bot.pipeline.resume`): answered, in its placeholder, through the same routing as a
        new one; past `too_old_s` its sender is asked to send it again."""
        if row["user_id"] is not None:
            user_id, lang = row["user_id"], row["lang"] or detect_lang(msg.text)
        else:
            user_id, chosen = await self._store.accounts.user_and_lang(
                msg.platform, msg.sender.platform_uid, msg.sender.display_name)
            lang = chosen or detect_lang(msg.text)
        age = (utcnow() - row["received_at"]).total_seconds()
        log.info("answering %s/%s left unanswered (%.0f s old)", msg.platform, msg.message_id,
                 age)
        if age > too_old_s:
            notice = t("chat.restarted_resend", lang, text=msg.text[:80])
            if row["placeholder"] and await Sender(adapter).edit_notice(
                    MessageRef(chat=msg.chat, message_id=row["placeholder"]), notice):
                await self._mark(msg, "failed")
                return
            await self._say(adapter, msg, notice)
            await self._mark(msg, "failed")
            return
        try:
            await self._route(adapter, msg, user_id, lang, None, self.stages.epoch.value,
                              placeholder=row["placeholder"], resumed=True,
                              inbound_id=row["id"])
        except StoreUnavailable:
            raise
        except Exception as exc:  # a poison message: not resumed again and again
            await self._poisoned(adapter, msg, lang, exc)
            await self._mark(msg, "failed", error=_error_of(exc))
