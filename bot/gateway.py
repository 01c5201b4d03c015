"""Where every platform's messages meet the agent: dedupe, user, commands, queue, run, render.

`handle` returns quickly: questions go on a per-chat queue answered in order by a worker task
that the gateway owns (and cancels on shutdown); `/stop` cancels the chat's current run.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import secrets
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from bot import budget_gateway, commands
from bot.commands import Command, Question
from bot.renderer import Renderer, with_label
from bot.sender import Sender, say
from bot.spool import Spool, Spooled
from bot.state_marks import StateMarks
from core.agent.runner import CANCEL_SHUTDOWN, AgentRunner, error_of
from core.errors import StoreUnavailable
from core.events import Done, Event, Failed
from core.ports import Adapter, MessageHandler, Outbox
from core.rate_limit import RateLimits
from core.shutdown import settle
from core.store import Conversation, Store
from core.store.inbound import Inbound
from core.store.person_locks import PersonLocks
from core.store.retry import retry_budget, unusable_input
from core.types import (
    Button,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    storable_message,
    utcnow,
)
from core.usage_gate import UsageGate
from core.words import detect_lang, t

log = logging.getLogger(__name__)

Preprocessor = Callable[[Adapter, IncomingMessage, UUID, str], Awaitable[str | None]]


# A command's reply is held until the placeholder of a question sent before it is out, but not
# for longer than this after that question arrived (it may be queued behind a long run).
PLACEHOLDER_WAIT_S = 1.0
# the settings' defaults (bot.settings), for a gateway built without them (tests, tools)
UNLINKS_PER_DAY = 3
SUBSCRIPTIONS_PER_PERSON = 20
SUBSCRIPTIONS_PER_CHAT = 10
# crash safety: how often this process beats and sweeps, when another process's message counts
# as left unanswered, and when it is too old to answer now (the user is asked to resend)
SWEEP_S = 10.0
STALE_S = 30.0
TOO_OLD_S = 600.0
# an update that cannot be stored within this is left to the platform's redelivery (or kept
# and retried here, for platforms that do not redeliver, for up to KEEP_TRYING_S)
RECORD_BUDGET_S = 5.0
KEEP_TRYING_S = 900.0
# a message of a platform that does not redeliver, not stored within this (or while the store
# is away), is written to the local spool first (bot.spool): an fsync only when it is needed
SPOOL_AFTER_S = 0.5
# how much of a failure's error is kept with the message (inbound_events.error)
_ERROR_CHARS = 500


def _error_of(exc: BaseException) -> str:
    """A failure as recorded with its message: the type and the first line of what it said."""
    return error_of(exc)[:_ERROR_CHARS]


@dataclass
class _Job:
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


@dataclass
class _ChatWorker:
    queue: asyncio.Queue[_Job] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    current: asyncio.Task[None] | None = None
    stop_requested: bool = False
    last: _Job | None = None  # the question queued last (jobs start in order)


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
                 outbox: Outbox | None = None, report_llm: Any = None) -> None:
        self._store = store
        # where replies go when the platform refuses them live, and held deliveries are
        # released from when the chat writes again
        self.outbox = outbox
        self._behind: set[str] = set()  # chats whose answers wait behind held deliveries
        # crash safety: this process's id on the messages it answers, the ones queued now, the
        # placeholders of resumed commands, and the sweeper that resumes others' stale ones
        self.instance = secrets.token_hex(8)
        self._queued: set[tuple[str, str]] = set()
        self._resuming: dict[tuple[str, str], str | None] = {}
        self._inbound_ids: dict[tuple[str, str], int] = {}  # commands being handled
        self._platforms: list[str] = []
        self.stale_s, self.too_old_s = STALE_S, TOO_OLD_S
        self.record_budget_s, self.keep_trying_s = RECORD_BUDGET_S, KEEP_TRYING_S
        self._sweeper: asyncio.Task[None] | None = None
        # database outages: messages not stored yet (told once), and their background retries
        self._unstored: dict[tuple[str, str], bool] = {}
        self._in_hand: set[tuple[str, str]] = set()  # recorded, being routed now
        self._marks = StateMarks(store.inbound.mark_many)  # states, by group commit
        self._retrying: set[asyncio.Task[None]] = set()
        # acknowledged messages the store cannot take yet, on local disk (bot.spool; None: in
        # memory only, as in tests and tools), and whether the last record attempt failed
        self.spool: Spool | None = None
        self.spool_after_s = SPOOL_AFTER_S
        self._store_away = False
        self.report_llm = report_llm  # the narrative of /report (None: the offline template)

        self._runner = runner
        self._preprocess = preprocess
        self._on_event = on_event
        self._workers: dict[str, _ChatWorker] = {}
        self._closing = False
        # moves on every /mode and /new: a conversation read before is then read again
        self._conv_epoch = 0
        # who may spend what (bot.budget_gateway; None/off: everyone, unlimited, in parallel)
        self.gate: UsageGate | None = None
        self.rates: RateLimits | None = None
        # link/unlink cycles and what multiplies pushes (bot.settings; configure sets them)
        self.unlinks_per_day = UNLINKS_PER_DAY
        self.subscriptions_per_person = SUBSCRIPTIONS_PER_PERSON
        self.subscriptions_per_chat = SUBSCRIPTIONS_PER_CHAT
        self.admins: frozenset[str] = frozenset()  # "platform:uid"
        # where /web and /share links point (bot.commands.web.configure; None: no web page)
        self.web_base_url: str | None = None
        # the platforms' recent answers on who administers a group (bot.chat_admins)
        self.chat_admin_answers: dict[tuple[str, str, str], tuple[float, bool | None]] = {}
        self.one_run_per_person = False
        self.person_locks: PersonLocks | None = None  # across processes (None: this one only)
        self.conversation_token_budget: int | None = None
        self._person_locks: weakref.WeakValueDictionary[UUID, asyncio.Lock] = (
            weakref.WeakValueDictionary())

    @property
    def store(self) -> Store:
        return self._store

    def handler_for(self, adapter: Adapter) -> MessageHandler:
        _freeze_startup_heap()

        async def on_message(message: IncomingMessage) -> None:
            await self.handle(adapter, message)

        return on_message

    async def aclose(self) -> None:
        self._closing = True
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None
        for retry in list(self._retrying):
            retry.cancel()
        if self.spool is not None:
            self.spool.close()  # what it holds is replayed by the next process's sweep
        tasks = [w.task for w in self._workers.values() if w.task is not None]
        for task in tasks:
            task.cancel(CANCEL_SHUTDOWN)
        await settle(tasks, what="the chats' workers")
        self._workers.clear()
        if self.person_locks is not None:
            await self.person_locks.aclose()

    async def idle(self) -> None:
        """Wait until every queued question is answered (tests, one-shot runs)."""
        while True:
            tasks = [w.task for w in self._workers.values()
                     if w.task is not None and not w.task.done()]
            if not tasks:
                return
            await asyncio.wait(tasks)

    # --- entry -----------------------------------------------------------------------------

    async def handle(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """Record `msg`, then answer it. When the database cannot store it (down, restarting:
        `StoreUnavailable` after `record_budget_s` of retries) the user is told once; a
        platform that redelivers unacknowledged updates gets the error back (so the update
        is not acknowledged), for the others the gateway keeps trying in the background. With
        a spool (`serve`), for those others `handle` returns only once the message is durable,
        stored or spooled, so an adapter that acknowledges after it acknowledges nothing that
        a crash could lose (`_handle_spooled`)."""
        if self._closing:
            return
        msg = storable_message(msg)  # NUL or a lone surrogate would fail the first insert
        try:
            if self.spool is not None and not adapter.capabilities.redelivers:
                await self._handle_spooled(adapter, msg)
            else:
                await self._handle(adapter, msg)
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
        gateway owns. The usual message costs no fsync and is routed here, in its chat's
        order; in a slow or absent database the order of a chat's messages is best effort."""
        spooled = False
        if self._store_away:
            await self._spool(adapter, msg)
            spooled = True
        task = asyncio.ensure_future(self._handle(adapter, msg))
        try:
            done, _ = await asyncio.wait({task}, timeout=self.spool_after_s)
            if not done and not spooled:
                await self._spool(adapter, msg)
        except asyncio.CancelledError:  # the adapter closing: nothing left running unowned
            task.cancel()
            raise
        if not done:
            self._own(self._finish_spooled(adapter, msg, task),
                      name=f"spooled:{msg.chat.key}:{msg.message_id}")
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

    def _own(self, coro: Coroutine[Any, Any, None], *, name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._retrying.add(task)
        task.add_done_callback(self._retrying.discard)

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
                await self._handle(adapter, storable_message(record.message))
            except StoreUnavailable:
                self._store_away = True
                return False
            except Exception:  # recorded, then failed: the record is settled either way
                log.exception("spooled message %s/%s failed", record.platform,
                              record.message.message_id)
            return True

        return await self.spool.replay(replay)

    async def _handle(self, adapter: Adapter, msg: IncomingMessage) -> None:
        epoch = self._conv_epoch
        with retry_budget(self.record_budget_s):
            got = await self._store.inbound.record_for_sender(
                platform=msg.platform, chat_id=msg.chat.chat_id, message_id=msg.message_id,
                sender_uid=msg.sender.platform_uid,
                payload={"text": msg.text[:2000], "edit": msg.is_edit,
                         "attachments": [a.kind for a in msg.attachments]},
                thread_id=msg.chat.thread_id, message=msg.model_dump(mode="json"),
                owner=self.instance)
        self._store_away = False
        self._unstored.pop((msg.chat.key, msg.message_id), None)
        if not got.new:
            if await self._redelivered_unanswered(adapter, msg, got.previous):
                return
            log.info("duplicate delivery %s/%s ignored", msg.platform, msg.message_id)
            return
        key = (msg.chat.key, msg.message_id)
        self._in_hand.add(key)
        try:
            await self._handle_new(adapter, msg, got, epoch)
        except StoreUnavailable:
            raise  # stored, not answered: a redelivery or the sweeper resumes it
        except Exception as exc:  # a poison message: said and recorded, never raised again
            await self._poisoned(adapter, msg, got.lang or detect_lang(msg.text), exc)
            await self._mark(msg, "failed", error=_error_of(exc))
        finally:
            self._in_hand.discard(key)

    async def _handle_new(self, adapter: Adapter, msg: IncomingMessage, got: Inbound,
                          epoch: int) -> None:
        behind = False
        if got.held and self.outbox is not None:  # the chat wrote: what was held goes first
            try:
                behind = await self.outbox.flush_chat(msg.chat) > 0
            except Exception as exc:  # the sender's loop takes it from here
                log.warning("held deliveries for %s not flushed: %s", msg.chat.key, exc)
                self.outbox.kick()
                behind = True
        if behind:
            self._behind.add(msg.chat.key)
        else:
            self._behind.discard(msg.chat.key)
        if msg.is_edit or (msg.chat.is_group and not msg.addressed):
            await self._mark(msg, "ignored")
            return  # edits are not re-answered; group chatter is not for us
        if got.user_id is not None:
            user_id, chosen = got.user_id, got.lang
        else:  # first sight of this account: create its user
            user_id, chosen = await self._store.accounts.user_and_lang(
                msg.platform, msg.sender.platform_uid, msg.sender.display_name)
        lang = chosen or detect_lang(msg.text)
        if self.gate is not None and not await budget_gateway.admitted(self, msg, user_id):
            await self._say(adapter, msg, t("chat.access_denied", lang,
                                            who=budget_gateway.account_of(msg)))
            await self._mark(msg, "answered")
            return
        if got.paused_subscriptions:
            await self._tell_paused(adapter, msg, lang, got.paused_subscriptions)
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
            await self._after_placeholder(msg.chat.key)
        if resumed:
            self._resuming[key] = placeholder
        if inbound_id is not None:  # a question the command queues is this message's
            self._inbound_ids[key] = inbound_id
        try:
            await self._command(adapter, msg, user_id, lang, cmd, conversation, epoch)
        finally:
            self._resuming.pop(key, None)
            self._inbound_ids.pop(key, None)
        if key not in self._queued:
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
            self._conv_epoch += 1  # conversations read before are stale from now on
        if (self.gate is not None and declared is not None and declared.gated
                and not await budget_gateway.command_allowed(self, adapter, msg, user_id, lang)):
            return
        if (self.rates is not None and (declared is None or declared.rated)
                and (msg.chat.key, msg.message_id) not in self._resuming):
            refusal = await budget_gateway.rate_refusal(self.rates, user_id, lang, ["message"])
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

    async def _redelivered_unanswered(self, adapter: Adapter, msg: IncomingMessage,
                                      previous: tuple[str, str | None, float] | None) -> bool:
        """A platform's redelivery of a message nobody is answering (its process stopped, or
        this one lost it to a database outage between storing and answering it): resumed now
        instead of dropped as a duplicate. True when it was."""
        if previous is None:
            return False
        status, owner, quiet_s = previous
        if status not in ("received", "running"):
            return False
        mine = owner == self.instance
        if mine and ((msg.chat.key, msg.message_id) in self._queued
                     or (msg.chat.key, msg.message_id) in self._in_hand):
            return False  # being answered here
        if not mine and quiet_s < self.stale_s:
            return False  # its process is alive and answering it
        row = await self._store.inbound.claim(
            owner=self.instance, platform=msg.platform, chat_id=msg.chat.chat_id,
            message_id=msg.message_id, stale_s=self.stale_s)
        if row is None:
            return False
        await self._resume(adapter, row, self.too_old_s)
        return True

    # --- database outages ------------------------------------------------------------------

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
        await say(adapter, msg, t("chat.db_unavailable", lang), outbox=self.outbox, plain=True,
                  keep=False)

    def _keep_trying(self, adapter: Adapter, msg: IncomingMessage) -> None:
        """A platform that does not redeliver: keep the message here and record it (then answer
        it) once the database is back, for up to `keep_trying_s`."""
        self._own(self._retry_later(adapter, msg),
                  name=f"unstored:{msg.chat.key}:{msg.message_id}")

    async def _retry_later(self, adapter: Adapter, msg: IncomingMessage) -> None:
        loop = asyncio.get_running_loop()
        end, wait = loop.time() + self.keep_trying_s, 1.0
        while not self._closing and loop.time() < end:
            await asyncio.sleep(wait)
            wait = min(wait * 2, 15.0)
            try:
                await self._handle(adapter, msg)
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

    # what command handlers use (bot.commands.context)

    async def say(self, adapter: Adapter, msg: IncomingMessage, text: str,
                  buttons: list[list[Button]] | None = None) -> None:
        await self._say(adapter, msg, text, buttons)

    async def send_file(self, adapter: Adapter, msg: IncomingMessage,
                        file: OutgoingFile) -> None:
        await Sender(adapter, outbox=self.outbox).file(msg, file)

    def stop_chat(self, key: str) -> bool:
        return self._stop(key)

    async def is_admin(self, msg: IncomingMessage, user_id: UUID) -> bool:
        """The person is one of Bullpen's admins (BULLPEN_ADMINS, through any linked account)."""
        return await budget_gateway.is_admin_person(self, msg, user_id)

    async def enqueue(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                      question: Question, conversation: Conversation | None = None,
                      epoch: int = -1) -> None:
        """A command's question queued: its command was counted against the message rate
        already (`_command`); a heavy mode counts against the debates per day here."""
        kinds = [k for k in budget_gateway.question_kinds(msg, question, conversation)
                 if k != "message"]
        if (kinds and self.rates is not None
                and (msg.chat.key, msg.message_id) not in self._resuming):
            refusal = await budget_gateway.rate_refusal(self.rates, user_id, lang, kinds)
            if refusal is not None:
                await self._say(adapter, msg, refusal)
                return
        self._enqueue(adapter, msg, user_id, lang, question, conversation, epoch)

    async def _rate_refused(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                            lang: str, question: Question,
                            conversation: Conversation | None) -> bool:
        """A question over the person's rate is refused before it is queued (it never reaches
        the model), the person told when to try again. True when it was."""
        if self.rates is None:
            return False
        refusal = await budget_gateway.rate_refusal(
            self.rates, user_id, lang, budget_gateway.question_kinds(msg, question, conversation))
        if refusal is None:
            return False
        await self._say(adapter, msg, refusal)
        await self._mark(msg, "answered")
        return True

    # --- the queue -------------------------------------------------------------------------

    def _stop(self, key: str) -> bool:
        worker = self._workers.get(key)
        if worker is None or worker.current is None or worker.current.done():
            return False
        worker.stop_requested = True
        worker.current.cancel()
        return True

    async def _after_placeholder(self, key: str) -> None:
        """Replies keep the order of the messages: a command sent after a question waits for
        that question's placeholder, unless the question has waited for PLACEHOLDER_WAIT_S
        already (behind a long run): the command's reply then goes first, as it always did."""
        worker = self._workers.get(key)
        job = worker.last if worker is not None else None
        if job is None or job.started is None or job.started.done():
            return
        loop = asyncio.get_running_loop()
        wait_s = job.queued_at + PLACEHOLDER_WAIT_S - loop.time()
        if wait_s > 0:
            await asyncio.wait([job.started], timeout=wait_s)

    def _enqueue(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                 question: Question, conversation: Conversation | None = None,
                 epoch: int = -1, *, placeholder: str | None = None,
                 resumed: bool = False, inbound_id: int | None = None) -> None:
        self._queued.add((msg.chat.key, msg.message_id))
        if (msg.chat.key, msg.message_id) in self._resuming:  # a resumed message's command
            resumed = True
            placeholder = placeholder or self._resuming[(msg.chat.key, msg.message_id)]
        if inbound_id is None:
            inbound_id = self._inbound_ids.get((msg.chat.key, msg.message_id))
        key = msg.chat.key
        worker = self._workers.get(key)
        if worker is None:
            worker = _ChatWorker()
            self._workers[key] = worker
        job = _Job(adapter, msg, user_id, lang, question, conversation, epoch,
                   placeholder=placeholder, resumed=resumed, inbound_id=inbound_id)
        if question.text:  # not a voice note: transcribing it may take a while
            loop = asyncio.get_running_loop()
            job.started, job.queued_at = loop.create_future(), loop.time()
            worker.last = job
        worker.queue.put_nowait(job)
        if worker.task is None or worker.task.done():
            worker.task = asyncio.create_task(self._work(key, worker), name=f"chat:{key}")

    async def _work(self, key: str, worker: _ChatWorker) -> None:
        while not worker.queue.empty():
            job = worker.queue.get_nowait()
            worker.stop_requested = False
            worker.current = asyncio.create_task(self._answer(job), name=f"run:{key}")
            try:
                await worker.current
            except asyncio.CancelledError:
                if not worker.stop_requested:  # the gateway is shutting down
                    worker.current.cancel(CANCEL_SHUTDOWN)
                    raise
            except Exception:
                log.exception("run for %s failed", key)
            finally:
                worker.current = None
                job.shown()
        if self._workers.get(key) is worker:
            del self._workers[key]

    async def _answer(self, job: _Job) -> None:
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
            elif conv is None or job.epoch != self._conv_epoch:
                conv = await self._store.conversations.active(msg.chat, job.user_id)
            if self.one_run_per_person:
                person = await self.person_turn(job.adapter, msg, job.user_id, job.lang)
            if turn is None and (self.gate is not None
                                 or self.conversation_token_budget is not None):
                got_conv = await budget_gateway.before_run(self, job, conv)
                if got_conv is None:
                    status = "answered"  # refused with the reset time, said
                    return
                conv = got_conv
            adopt = (MessageRef(chat=msg.chat, message_id=job.placeholder)
                     if job.placeholder else None)
            renderer = Renderer(job.adapter, msg.chat, lang=job.lang,
                                in_reply_to=msg.message_id, outbox=self.outbox,
                                queue_behind=msg.chat.key in self._behind, adopt=adopt)
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
        except StoreUnavailable:
            raise  # the database is away: not this message's fault, nor a reason to give up
        except Exception as exc:  # a poison message: said, recorded, not tried again
            status, error = "failed", _error_of(exc)
            await asyncio.shield(self._poisoned(job.adapter, msg, job.lang, exc, renderer))
        finally:
            if person is not None:
                await asyncio.shield(person())
            self._queued.discard((msg.chat.key, msg.message_id))
            if status != "running":
                await asyncio.shield(self._mark(msg, status, error=error))
            log.info("message %s/%s %s: mode %s, %.1f s, %d tokens", msg.platform,
                     msg.chat.chat_id, status, job.mode or "-",
                     asyncio.get_running_loop().time() - began, job.tokens)

    async def _running(self, job: _Job, placeholder: str | None) -> None:
        """The message is running, with what a resumed run needs (user, language, the
        placeholder). A placeholder just sent is recorded at once, not behind the batched
        states: until its id is written a crash leaves it unreplaceable, saying it is working
        (Telegram has no way to find a bot's message again)."""
        msg = job.message
        if placeholder is None or placeholder == job.placeholder:
            await self._mark(msg, "running", user_id=job.user_id, lang=job.lang,
                             placeholder=placeholder)
            return
        try:
            await self._store.inbound.mark(
                platform=msg.platform, chat_id=msg.chat.chat_id, message_id=msg.message_id,
                status="running", user_id=job.user_id, lang=job.lang, placeholder=placeholder)
        except Exception as exc:
            log.warning("placeholder of %s/%s not recorded: %s", msg.platform, msg.message_id,
                        exc)

    async def _run(self, job: _Job, conv: Conversation, text: str, renderer: Renderer,
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
        lock = self._person_locks.get(user_id)
        if lock is None:
            lock = asyncio.Lock()
            self._person_locks[user_id] = lock
        told = False

        async def tell_queued() -> None:
            nonlocal told
            if not told:
                told = True
                await self._say(adapter, msg, t("chat.queued_person", lang))

        if lock.locked():
            await tell_queued()
        try:
            await lock.acquire()
            try:
                shared = (await self.person_locks.acquire(user_id, tell_queued)
                          if self.person_locks is not None else None)
            except BaseException:
                lock.release()
                raise
        except asyncio.CancelledError as exc:  # /stop while it waited: said, like a run's
            if not (exc.args and exc.args[0] == CANCEL_SHUTDOWN):
                await asyncio.shield(self._say(adapter, msg, t("chat.stopped", lang)))
            raise

        async def release() -> None:
            try:
                if shared is not None:
                    await shared()
            finally:
                lock.release()

        return release

    # --- crash safety ----------------------------------------------------------------------

    async def _mark(self, msg: IncomingMessage, status: str, **fields: Any) -> None:
        """The message's recorded state; a failure to record is logged, never the user's."""
        try:
            await self._marks.mark((msg.platform, msg.chat.chat_id, msg.message_id), status,
                                   **fields)
        except Exception as exc:
            log.warning("state %s of %s/%s not recorded: %s", status, msg.platform,
                        msg.message_id, exc)

    async def resume_unanswered(self, adapters: Callable[[str], Adapter | None],
                                platforms: Sequence[str] | None = None, *,
                                stale_s: float | None = None,
                                too_old_s: float | None = None) -> int:
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
            owner=self.instance, platforms=served, stale_s=stale_s)
        for row in rows:
            adapter = adapters(row["platform"])
            if adapter is not None:
                await self._resume(adapter, row, too_old_s)
        return len(rows)

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

    async def _resume(self, adapter: Adapter, row: dict[str, Any], too_old_s: float) -> None:
        """A message taken over from a stopped process (or found unanswered on redelivery):
        answered, in its placeholder; past `too_old_s` the user is asked to send it again."""
        msg = IncomingMessage(**row["message"])
        key = (msg.chat.key, msg.message_id)
        if key in self._queued or key in self._in_hand:
            # taken twice in this process (the sweep, then a redelivery, before the first
            # take queued it): answered once, by the first
            log.info("%s/%s is being answered here already", msg.platform, msg.message_id)
            return
        self._in_hand.add(key)
        try:
            await self._resume_taken(adapter, msg, row, too_old_s)
        finally:
            self._in_hand.discard(key)

    async def _resume_taken(self, adapter: Adapter, msg: IncomingMessage, row: dict[str, Any],
                            too_old_s: float) -> None:
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
            await self._route(adapter, msg, user_id, lang, None, self._conv_epoch,
                              placeholder=row["placeholder"], resumed=True,
                              inbound_id=row["id"])
        except StoreUnavailable:
            raise
        except Exception as exc:  # a poison message: not resumed again and again
            await self._poisoned(adapter, msg, lang, exc)
            await self._mark(msg, "failed", error=_error_of(exc))

    def start_sweeper(self, adapters: Callable[[str], Adapter | None],
                      platforms: list[str], *, every_s: float = SWEEP_S) -> None:
        """A heartbeat for this process's messages and a sweep for other processes' stale
        ones, every `every_s` (a task the gateway owns)."""
        self._platforms = list(platforms)
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep(adapters, every_s),
                                                name="inbound-sweeper")

    async def _sweep(self, adapters: Callable[[str], Adapter | None], every_s: float) -> None:
        while True:
            try:  # first: what was acknowledged but not stored (this process's or a dead one's)
                await self.replay_spool(adapters)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("spool replay: %s: %s", type(exc).__name__, exc)
            try:
                await self._store.inbound.heartbeat(self.instance)
                await self.resume_unanswered(adapters)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("inbound sweep: %s: %s", type(exc).__name__, exc)
            await asyncio.sleep(every_s)
