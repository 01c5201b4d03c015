"""Runs a mode for one user message: lock, history, persistence, usage, failures as events."""

from __future__ import annotations

import asyncio
import logging
import re
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
from uuid import UUID
from weakref import WeakValueDictionary

from core.agent import prompts
from core.agent.turn import Turn, TurnOptions
from core.errors import BullpenError, LLMError, LLMTimeout, StoreUnavailable
from core.events import Done, Event, Failed, File
from core.llm.base import AllProfilesFailed
from core.ports import LLMProvider, Mode
from core.store import INTERRUPTED_NOTE, STOPPED_NOTE, Conversation, Store
from core.types import ChatMessage, Usage
from core.words import t

log = logging.getLogger(__name__)

# the message a run's task is cancelled with when the process shuts down (not a /stop)
CANCEL_SHUTDOWN = "shutdown"

HISTORY_LIMIT = 20
SUMMARIZE_THRESHOLD = 60
MAX_INPUT_CHARS = 20_000
WINDOWS_KEPT = 2_000  # conversations whose history window is kept between turns


@dataclass
class RunLimits:
    max_input_chars: int = MAX_INPUT_CHARS
    history_limit: int = HISTORY_LIMIT
    summarize_threshold: int = SUMMARIZE_THRESHOLD


class _StoreRecorder:
    """Keeps what a mode said and spent until the runner writes it, in one round trip, before
    the run's next event goes out (and when the run ends, fails or is stopped)."""

    def __init__(self, store: Store, conversation: Conversation, user_id: UUID | None,
                 inbound_id: int | None = None, window: _Window | None = None) -> None:
        self._store = store
        self._conv = conversation
        self._user = user_id
        self._inbound_id = inbound_id  # every row of the run carries it (house rule 15)
        self.usages: list[Usage] = []
        self._messages: list[ChatMessage] = []
        self._pending_usages: list[Usage] = []
        self.window = window  # the conversation's window, kept up with what is written

    async def message(self, message: ChatMessage) -> None:
        self._messages.append(message)

    async def usage(self, usage: Usage) -> None:
        self.usages.append(usage)
        self._pending_usages.append(usage)

    @property
    def pending(self) -> bool:
        return bool(self._messages or self._pending_usages)

    async def flush(self, *also: ChatMessage) -> None:
        """Write what is pending (then `also`); a no-op without a round trip when nothing is."""
        messages, self._messages = [*self._messages, *also], []
        usages, self._pending_usages = self._pending_usages, []
        if messages or usages:
            window, self.window = self.window, None  # unknown until the write returns
            ids = await self._store.conversations.add_run_records(
                self._conv.id, user_id=self._user, messages=messages, usages=usages,
                inbound_id=self._inbound_id)
            if window is not None and len(ids) == len(messages):
                self.window = window.plus(zip(ids, messages, strict=True))


@dataclass(frozen=True)
class _Window:
    """A conversation's history window as this process last read and wrote it: the last
    `limit` messages after the summary watermark, with their ids. Only a hint: the next turn
    sends the ids to the database, which sends the rows again unless they are exactly these
    (another process wrote, the summary moved on), so a window kept here is never stale."""

    limit: int
    rows: tuple[tuple[int, ChatMessage], ...]

    @property
    def ids(self) -> list[int]:
        return [i for i, _ in self.rows]

    @property
    def messages(self) -> list[ChatMessage]:
        return [m for _, m in self.rows]

    def plus(self, rows: Iterable[tuple[int, ChatMessage]]) -> _Window:
        every = (*self.rows, *rows)
        return _Window(self.limit, every[-self.limit:] if self.limit > 0 else ())


def sanitize_history(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Drop what a cut window or a cancelled run leaves dangling, which providers reject:
    leading non-user messages, and tool calls whose results are missing."""
    while messages and messages[0].role != "user":
        messages = messages[1:]
    out: list[ChatMessage] = []
    i = 0
    while i < len(messages):
        m = messages[i]
        if m.role == "assistant" and m.tool_calls:
            ids = {c.id for c in m.tool_calls}
            j = i + 1
            results = []
            while j < len(messages) and messages[j].role == "tool":
                results.append(messages[j])
                j += 1
            if ids <= {r.tool_call_id for r in results}:
                out.append(m)
                out.extend(r for r in results if r.tool_call_id in ids)
            i = j
            continue
        if m.role == "tool":
            i += 1
            continue
        out.append(m)
        i += 1
    return out


# a provider's reason (as core.llm words it) -> the catalogue's words for it
_WHY = (("why_unreachable", re.compile(r"could not be reached")),
        ("why_timeout", re.compile(r"did not answer in time")),
        ("why_rate_limited", re.compile(r"rate limit|HTTP 429")),
        ("why_too_long", re.compile(r"context|too long|exceeds", re.IGNORECASE)))


def _why(reason: str, lang: str) -> str:
    return t("errors." + next((k for k, p in _WHY if p.search(reason)), "why_server"), lang)


def llm_failure(exc: LLMError, lang: str) -> str:
    """A model's failure as the person is told it, in their language; the provider's own
    words go to the log (they are English, and may name endpoints)."""
    seconds = getattr(exc, "seconds", None)
    if isinstance(exc, LLMTimeout) and isinstance(seconds, (int, float)):
        return t("errors.llm_timeout", lang, seconds=f"{seconds:.0f}")
    reasons = exc.reasons if isinstance(exc, AllProfilesFailed) else [str(exc)]
    return t("errors.llm_failed", lang, detail=t(
        "errors.all_profiles_failed", lang, count=len(reasons), why=_why(reasons[0], lang)))


def error_of(exc: BaseException) -> str:
    """An unexpected failure as recorded: its type and the first line of what it said."""
    said = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {said[0] if said else ''}"[:500]


class AgentRunner:
    def __init__(self, *, store: Store, modes: Mapping[str, Mode],
                 summarizer: LLMProvider | None = None, limits: RunLimits | None = None) -> None:
        self._store = store
        self._modes = dict(modes)
        self._summarizer = summarizer
        self._limits = limits or RunLimits()
        self._locks: WeakValueDictionary[UUID, asyncio.Lock] = WeakValueDictionary()
        # the history window of the conversations answered lately (least recent dropped first)
        self._windows: OrderedDict[UUID, _Window] = OrderedDict()
        self.window_hits = 0  # turns whose window was not read again (tests, benches)

    @property
    def modes(self) -> list[str]:
        return list(self._modes)

    def lock_for(self, conversation_id: UUID) -> asyncio.Lock:
        lock = self._locks.get(conversation_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[conversation_id] = lock
        return lock

    def check_input(self, text: str) -> str | None:
        """A clear reason when a message cannot be answered as typed, else None."""
        if not text.strip():
            return "Your message is empty. Ask about a stock, e.g. \"NVDA latest close\"."
        if len(text) > self._limits.max_input_chars:
            return (f"Your message is {len(text):,} characters; the limit is "
                    f"{self._limits.max_input_chars:,}. Please shorten it or ask in parts.")
        return None

    async def run(
        self, *, conversation: Conversation, user_id: UUID | None, text: str,
        lang: str = "en", mode: str | None = None, options: TurnOptions | None = None,
        platform_message_id: str | None = None, stored_as: int | None = None,
        token_allowance: int | None = None, inbound_id: int | None = None,
    ) -> AsyncIterator[Event]:
        """The run's events. `stored_as`: the user's message is stored already under that id
        (a run resumed after its process stopped): it is not stored again, and the history is
        what came before it. `token_allowance`: the run stops (Failed, kind "budget") once its
        model calls spent that many tokens (the person's budget left, `core.usage_gate`).
        `inbound_id`: the inbound message answered; every row the run stores carries it, so
        that a resumed run finds its own question and answer by it (house rule 15)."""
        problem = self.check_input(text)
        if problem:
            yield Failed(error=problem, kind="input")
            return
        mode_name = mode or conversation.mode
        runner = self._modes.get(mode_name) or self._modes["normal"]
        async with self.lock_for(conversation.id):
            conv, history, window = await self._begin(conversation.id, text,
                                                      platform_message_id, stored_as,
                                                      inbound_id)
            recorder = _StoreRecorder(self._store, conv, user_id, inbound_id, window)
            turn = Turn(text=text, history=sanitize_history(history),
                        recorder=recorder, conversation_id=conv.id, user_id=user_id,
                        lang=lang, summary=conv.summary, options=options or TurnOptions())
            try:
                async for event in runner.run(turn):
                    if recorder.pending:  # stored before it is shown
                        await recorder.flush()
                    if (token_allowance is not None and not isinstance(event, Done)
                            and sum(u.total_tokens for u in recorder.usages) >= token_allowance):
                        yield Failed(error="Your usage budget is spent: this answer stops "
                                           "here. /usage shows when it resets.", kind="budget")
                        return
                    if isinstance(event, File):
                        path = await self._store.files.save(
                            event.file, user_id=user_id, conversation_id=conv.id)
                        event = event.model_copy(update={"path": str(path)})
                    elif isinstance(event, Done):
                        event = event.model_copy(update={"usage": recorder.usages})
                        if event.label:  # shown again later (a restart, the web) with it
                            await self._store.conversations.label_answer(
                                conv.id, event.label, inbound_id=inbound_id)
                    yield event
                await recorder.flush()
            except asyncio.CancelledError as exc:
                # the record says who stopped it: the user (/stop), or a shutdown of the bot
                why = (INTERRUPTED_NOTE if exc.args and exc.args[0] == CANCEL_SHUTDOWN
                       else STOPPED_NOTE)
                await asyncio.shield(recorder.flush(ChatMessage(role="assistant", content=why)))
                raise
            except StoreUnavailable:
                # the database went away, not the run: the gateway answers the message again
                # once it is back (`bot.pipeline.resume`), so nothing is said or stored here
                raise
            except LLMTimeout as exc:
                log.warning("run failed: %s", exc)
                await recorder.flush()
                yield Failed(error=llm_failure(exc, lang), kind="timeout")
            except LLMError as exc:
                log.warning("run failed: %s", exc)
                await recorder.flush()
                yield Failed(error=llm_failure(exc, lang), kind="llm")
            except BullpenError as exc:
                log.warning("run failed: %s", exc)
                await recorder.flush()
                yield Failed(error=str(exc), kind="error")
            except Exception as exc:
                # a bug in a mode or a tool: the answer still ends, said (the renderer words
                # kind "internal" in the user's language), never a placeholder left working
                log.error("run failed unexpectedly", exc_info=exc)
                await recorder.flush()
                yield Failed(error=error_of(exc), kind="internal")
            finally:
                if recorder.pending:  # an unexpected error, or the consumer closed the run
                    recorder.window = None
                    await asyncio.shield(recorder.flush())
                self._keep_window(conv.id, recorder.window)

    def _keep_window(self, conversation_id: UUID, window: _Window | None) -> None:
        self._windows.pop(conversation_id, None)
        if window is not None:
            self._windows[conversation_id] = window
            while len(self._windows) > WINDOWS_KEPT:
                self._windows.popitem(last=False)

    async def _begin(self, conversation_id: UUID, text: str, platform_message_id: str | None,
                     stored_as: int | None = None, inbound_id: int | None = None,
                     ) -> tuple[Conversation, list[ChatMessage], _Window | None]:
        """Under the lock: the conversation as it is now, its history window, and the user's
        message stored (one round trip unless a summary is due first); the window to keep up
        during the run (None when this turn leaves it unknown: resumed or summarised)."""
        limits = self._limits
        conversations = self._store.conversations
        kept = self._windows.pop(conversation_id, None)  # back when the run ends well
        if stored_as is not None:  # resumed: the message is there, the history precedes it
            conv = await conversations.get(conversation_id)
            history = [m.message for m in await conversations.messages(
                conv.id, after_id=conv.summary_up_to, before_id=stored_as,
                limit=limits.history_limit)]
            return conv, history, None
        title = text.strip().splitlines()[0]
        start = await conversations.begin_turn(
            conversation_id, text, title=title, platform_message_id=platform_message_id,
            history_limit=limits.history_limit,
            summarize_threshold=limits.summarize_threshold if self._summarizer else None,
            inbound_id=inbound_id,
            known_window=kept.ids if kept is not None and kept.limit == limits.history_limit
            else None)
        conv = start.conversation
        if start.history_known and kept is not None:
            self.window_hits += 1
            window = kept
        else:
            window = _Window(limits.history_limit,
                             tuple(zip(start.history_ids, start.history, strict=True)))
        history = window.messages
        if start.message_id is None:  # past the threshold: summarise, then store the message
            if await self._summarize(conv):
                conv = await conversations.get(conversation_id)
                history = [m.message for m in await conversations.messages(
                    conv.id, after_id=conv.summary_up_to, limit=limits.history_limit)]
            await conversations.add_message(
                conv.id, ChatMessage(role="user", content=text),
                platform_message_id=platform_message_id, inbound_id=inbound_id)
            if not conv.title:
                await conversations.set_title(conv.id, title)
            return conv, history, None
        return conv, history, window.plus(
            [(start.message_id, ChatMessage(role="user", content=text))])

    async def _summarize(self, conv: Conversation) -> bool:
        """Summarise the messages older than the history window (the caller found more than
        the threshold past the watermark); True when a summary was written."""
        if self._summarizer is None:
            return False
        recent = await self._store.conversations.messages(
            conv.id, limit=self._limits.history_limit)
        if not recent:
            return False
        older = await self._store.conversations.messages(
            conv.id, after_id=conv.summary_up_to, before_id=recent[0].id)
        if not older:
            return False
        transcript = "\n".join(f"{m.message.role}: {m.message.content[:2000]}"
                               for m in older if m.message.content)
        prompt = [ChatMessage(role="system", content=prompts.SUMMARIZE)]
        if conv.summary:
            prompt.append(ChatMessage(role="system", content="Earlier summary:\n" + conv.summary))
        prompt.append(ChatMessage(role="user", content=transcript[-60_000:]))
        try:
            resp = await self._summarizer.complete(prompt, role="summarizer", max_tokens=600)
        except LLMError as exc:  # a failed summary must not block the answer
            log.warning("summary skipped: %s", exc)
            return False
        await self._store.usage.record(resp.usage, user_id=conv.user_id,
                                       conversation_id=conv.id)
        await self._store.conversations.set_summary(conv.id, resp.content, older[-1].id)
        return True
