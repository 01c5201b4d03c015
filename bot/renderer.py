"""Turns a run's events into adapter operations: a placeholder at once, throttled edits as the
answer grows, then the final text split to the platform's length, and the files.

Intermediate edits may be dropped (rate limits, identical text); the final text is always
delivered: rate limits are waited out and rejected markup is retried as plain text, and what
the platform still refuses at the live deadline goes to the outbox, the first piece into the
placeholder (a placeholder is never the last word).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

from bot.markup import split_text
from bot.sender import Policy, Sender, decide
from core.errors import (
    Forbidden,
    MessageNotModified,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
)
from core.events import Done, Event, Failed, File, Status, TextDelta, ToolStarted
from core.ports import Adapter, EventObserver, Outbox
from core.types import ChatRef, MessageRef, OutgoingFile, Reply
from core.words import t

log = logging.getLogger(__name__)

# The final text is retried live for this long (rate limits waited out, a formatting refusal
# resent as plain text, a platform that failed on its side tried again after FIRST_RETRY_S,
# doubling up to RETRY_CAP_S); what still did not arrive goes to the outbox, which keeps trying
# until its own deadline, rather than being dropped.
LIVE_DEADLINE_S = 30.0
MAX_WAIT_S = 60.0
FIRST_RETRY_S, RETRY_CAP_S = 0.5, 4.0

# How one piece of final text fared live: `sent`; `refused` (rate limited or the platform
# failing until the live deadline: the outbox edits it into the placeholder later); `failed`
# (another platform error: the placeholder was deleted or is too old);
# `gone` (the bot may not write to the chat any more); `held` (the outbox holds it for now).
Outcome = Literal["sent", "refused", "failed", "gone", "held"]


def with_label(text: str, label: str) -> str:
    """An answer with the note the run put under it ("offline analyst", "unverified ...")."""
    return f"{text}\n\n_{label}_" if label else text


@dataclass
class RenderResult:
    message_ids: list[str] = field(default_factory=list)
    final_text: str = ""
    delivered: bool = False
    edits: int = 0
    dropped_edits: int = 0
    handed_over: bool = False  # the final text (or part of it) went to the outbox


class Renderer:
    def __init__(self, adapter: Adapter, chat: ChatRef, *, lang: str = "en",
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
                 min_edit_interval_s: float | None = None,
                 in_reply_to: str | None = None, outbox: Outbox | None = None,
                 live_deadline_s: float = LIVE_DEADLINE_S, queue_behind: bool = False,
                 adopt: MessageRef | None = None,
                 on_holder: Callable[[str], Awaitable[None]] | None = None) -> None:
        self._adapter = adapter
        self._sender = Sender(adapter, outbox=outbox)  # every text, edit and file goes here
        # an adapter that shows the run's events as they come (the web page) sees each one
        self._observer = adapter if isinstance(adapter, EventObserver) else None
        self._outbox = outbox
        # the chat has deliveries held by the outbox (WeChat's closed window): this answer
        # waits behind them rather than overtaking them; a Held refusal does the same
        self._held = queue_behind and outbox is not None
        self._live_deadline_s = live_deadline_s
        self._chat = chat
        # the incoming message answered: every reply and file of the answer carries it
        self._in_reply_to = in_reply_to
        self._lang = lang
        self._caps = adapter.capabilities
        # the live retries' deadlines and waits: on this clock, with this sleep
        self._clock = clock
        self._sleep = sleep
        interval = (min_edit_interval_s if min_edit_interval_s is not None
                    else self._caps.min_edit_interval_s)
        if chat.is_group:
            interval *= 3  # group chats have tighter limits
        self._interval = interval
        self._placeholder: MessageRef | None = None
        # an answer resumed after a crash reuses the placeholder the stopped process left
        self._adopt = adopt
        # told the id of a message sent anew to hold the answer (no placeholder could be sent,
        # or it was gone), before anything else is sent: recorded as the placeholder is, so a
        # crash's survivor edits that message rather than showing the answer twice
        self._on_holder = on_holder
        self._status = ""
        self._text = ""
        self._shown = ""
        self._next_edit = 0.0
        self._dirty = False
        self._gone = False
        # progress edits every interval while the answer grows: a timer, and a task only
        # while an edit is under way (no task per chat sleeping between edits)
        self._timer: asyncio.TimerHandle | None = None
        self._flush: asyncio.Task[None] | None = None
        self._flushing = False
        # the observer has seen the run end (Done or Failed): until then a page shows it running
        self._ended = False
        self.result = RenderResult()

    # --- lifecycle -------------------------------------------------------------------------

    async def _typing(self) -> None:
        with contextlib.suppress(PlatformError):
            await self._adapter.typing(self._chat)

    @property
    def placeholder_id(self) -> str | None:
        return self._placeholder.message_id if self._placeholder is not None else None

    async def start(self) -> None:
        await self._start()
        if self._placeholder is not None:
            # a page watching the chat shows the run from its placeholder on (its Stop button
            # too), not only from the first step the run reports
            await self._observe(Status(text=t("chat.working", self._lang)))

    async def _start(self) -> None:
        if not self._caps.can_edit:
            await self._typing()
            return
        if self._adopt is not None:
            try:
                await self._sender.edit(self._adopt, Reply(
                    text=t("chat.working", self._lang), markup="plain",
                    in_reply_to=self._in_reply_to))
                self._placeholder = self._adopt
            except (MessageNotModified, RateLimited, PlatformUnavailable):
                # a rate limit or an outage says nothing about the placeholder: it is still
                # there, and a new one would leave it behind for good, saying it is working
                self._placeholder = self._adopt
            except PlatformError as exc:  # gone or too old: a new one below
                log.info("placeholder %s not reused: %s", self._adopt.message_id, exc)
        if self._placeholder is not None:
            self.result.message_ids.append(self._placeholder.message_id)
            self._next_edit = self._clock() + self._interval
            if self._interval > 0:
                self._flushing = True
                self._arm()
            return
        try:
            # no typing action beside it: a message from the bot ends the platform's typing
            # indicator at once (Telegram, Discord), so it would cost a call and show nothing
            placeholder = await self._sender.send(
                self._chat, Reply(text=t("chat.working", self._lang), markup="plain",
                                  in_reply_to=self._in_reply_to))
            self._placeholder = placeholder
            self.result.message_ids.append(placeholder.message_id)
            self._next_edit = self._clock() + self._interval
        except Forbidden:
            self._gone = True
        except PlatformError as exc:
            log.warning("placeholder not sent: %s", exc)
        if self._placeholder is not None and self._interval > 0:
            self._flushing = True
            self._arm()

    async def aclose(self) -> None:
        self._flushing = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flush is not None:
            flush, self._flush = self._flush, None
            flush.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await flush

    def _arm(self) -> None:
        self._timer = asyncio.get_running_loop().call_later(max(self._interval, 0.05),
                                                            self._tick)

    def _tick(self) -> None:
        self._timer = None
        if not self._flushing:
            return
        if not self._dirty:
            self._arm()
            return
        self._flush = asyncio.create_task(self._progress_edit(), name="renderer-flush")
        self._flush.add_done_callback(self._flushed)

    def _flushed(self, task: asyncio.Task[None]) -> None:
        """The next interval starts when an edit is done, as in a sleep-then-edit loop; an
        error stops the edits and is raised by `aclose`, like such a loop's."""
        if task.cancelled() or task.exception() is not None or not self._flushing:
            return
        self._flush = None
        self._arm()

    # --- events ----------------------------------------------------------------------------

    @property
    def ended(self) -> bool:
        """The run's end is said: its answer arrived, or `cut_short` said why there is none."""
        return self._ended

    async def _observe(self, event: Event) -> None:
        if isinstance(event, (Done, Failed)):
            self._ended = True
        if self._observer is not None:
            try:
                await self._observer.observe(self._chat, self._placeholder, event)
            except Exception:  # what the page shows never breaks the answer
                log.exception("%s did not take event %s", self._adapter.name,
                              type(event).__name__)

    async def on_event(self, event: Event) -> None:
        await self._observe(event)
        if self._gone:
            return
        if isinstance(event, TextDelta):
            self._text += event.text
            self._dirty = True
        elif isinstance(event, ToolStarted):
            self._status = event.label or event.name
            self._dirty = True
        elif isinstance(event, Status):
            self._status = event.text
            self._dirty = True
        elif isinstance(event, File):
            await self.finish_text_if_needed()
            await self._send_file(event)
            return
        elif isinstance(event, Done):
            await self.deliver_final(with_label(event.text or self._text, event.label))
            return
        elif isinstance(event, Failed):
            key = {"cancelled": "chat.stopped", "internal": "chat.sorry"}.get(event.kind,
                                                                            "chat.failed")
            await self.cut_short(t(key, self._lang, error=event.error))
            return
        if self._dirty and self._interval == 0:
            await self._progress_edit()

    async def cut_short(self, said: str, *, kind: str = "cancelled") -> None:
        """The run ended without an answer (stopped, failed, interrupted): `said` says so,
        under what the user already read of it, which stays. A run cut short from outside
        (cancelled, or an exception) sent no Failed event: the observer gets one of `kind`,
        or a page would show it running for good (its Stop button with it)."""
        if not self._ended:
            await self._observe(Failed(error=said, kind=kind))
        if self._text.strip():
            await self.deliver_final(f"{self._text.rstrip()}\n\n{said}")
        else:
            await self.deliver_final(said, plain=True)

    async def finish_text_if_needed(self) -> None:
        """Files come after the text they belong to; nothing to do mid-stream."""
        return None

    # --- operations ------------------------------------------------------------------------

    def _preview(self) -> str:
        limit = self._caps.max_message_length - 20
        body = self._text.strip()
        if len(body) > limit:
            body = body[: limit - 1] + "…"
        status = f"⏳ {self._status}" if self._status else ""
        return "\n\n".join(p for p in (body, status) if p) or t("chat.working", self._lang)

    async def _progress_edit(self) -> None:
        if self._placeholder is None or self._gone or self._clock() < self._next_edit:
            return
        preview = self._preview()
        self._dirty = False
        if preview == self._shown:
            return
        try:
            await self._sender.edit(self._placeholder, Reply(
                text=preview, markup="plain", in_reply_to=self._in_reply_to))
            self._shown = preview
            self.result.edits += 1
            self._next_edit = self._clock() + self._interval
        except RateLimited as exc:
            self.result.dropped_edits += 1
            self._next_edit = self._clock() + exc.retry_after
        except MessageNotModified:
            self._shown = preview
        except Forbidden:
            self._gone = True
        except PlatformError as exc:
            self.result.dropped_edits += 1
            log.info("progress edit dropped: %s", exc)

    async def _with_retries(self, op: Callable[[Reply], object], md: str,
                            plain: bool) -> Outcome:
        """Deliver one piece of final text live, waiting out rate limits until the live
        deadline; how it fared."""
        as_plain = plain
        end = self._clock() + self._live_deadline_s
        backoff = FIRST_RETRY_S
        while self._clock() < end:
            reply = self._sender.rendered(Reply(text=md, in_reply_to=self._in_reply_to),
                                          plain=as_plain)
            as_plain = reply.markup == "plain"
            try:
                await op(reply)  # type: ignore[misc]
                return "sent"
            except PlatformError as exc:
                policy = decide(exc, stored=False)
                if policy is Policy.DONE:
                    return "sent"
                if policy is Policy.PLAIN:
                    as_plain = True
                elif policy is Policy.WAIT:
                    assert isinstance(exc, RateLimited)
                    wait = min(exc.retry_after, MAX_WAIT_S, max(0.0, end - self._clock()))
                    log.info("final text for %s rate limited (retry_after %g s): waiting "
                             "%.1f s, %.1f s of the live deadline left", self._chat.key,
                             exc.retry_after, wait, end - self._clock())
                    await self._sleep(wait)
                elif policy is Policy.RETRY:  # not reached, or failed on its side
                    log.info("final text for %s not taken (%s): again in %.1f s",
                             self._chat.key, exc, backoff)
                    await self._sleep(min(backoff, max(0.0, end - self._clock())))
                    backoff = min(backoff * 2, RETRY_CAP_S)
                elif policy is Policy.DROP:
                    self._gone = True
                    return "gone"
                elif policy is Policy.HOLD:  # refused for now: held for the chat's next one
                    self._held = self._outbox is not None
                    return "held"
                else:  # OUTBOX, e.g. the placeholder was deleted: the caller decides
                    log.warning("final text not delivered this way: %s", exc)
                    return "failed"
        log.warning("final text for %s still refused for now after the live deadline (%g s)",
                    self._chat.key, self._live_deadline_s)
        return "refused"

    async def deliver_final(self, md: str, *, plain: bool = False) -> None:
        if not self._ended:  # the final text without a Done (a resumed run's stored answer)
            await self._observe(Done(text=md))
        await self.aclose()
        if self._gone:
            return
        self.result.final_text = md
        pieces = split_text(md.strip() or "…", self._sender.text_limit(plain=plain))
        ok = True
        undelivered: list[tuple[int, str]] = []
        if self._held:  # behind held deliveries: all of it waits in the outbox, in order
            await self._hand_over(list(enumerate(pieces)), plain)
            return
        for i, piece in enumerate(pieces):
            if self._held:  # refused for now: this piece and the rest wait in the outbox
                undelivered.append((i, piece))
                continue
            if i == 0 and self._placeholder is not None:
                ref = self._placeholder

                async def edit(reply: Reply, ref: MessageRef = ref) -> None:
                    await self._sender.edit(ref, reply)

                got = await self._with_retries(edit, piece, plain)
                # a placeholder that cannot be edited (deleted, too old) is replaced by a new
                # message rather than lose the answer; one that is only rate limited is not:
                # the outbox edits the answer into it once the limit lifts. (A new message
                # sent when the limit lifted used to leave the placeholder saying it was
                # working, for good: issue #36.) Without an outbox, a new message is all
                # there is left to try.
                if got == "failed" or (got == "refused" and self._outbox is None):
                    log.info("placeholder %s in %s not edited (%s): the final text goes anew",
                             ref.message_id, self._chat.key, got)

                    async def resend(reply: Reply) -> None:
                        ref = await self._sender.send(self._chat, reply)
                        self.result.message_ids.append(ref.message_id)
                        await self._holds_the_answer(ref)

                    got = await self._with_retries(resend, piece, plain)
                if got != "sent" and not self._gone:
                    undelivered.append((i, piece))
                ok = got == "sent" and ok
            else:
                async def send(reply: Reply, first: bool = i == 0) -> None:
                    ref = await self._sender.send(self._chat, reply)
                    self.result.message_ids.append(ref.message_id)
                    if first:  # no placeholder: this message holds the answer
                        await self._holds_the_answer(ref)

                sent = await self._with_retries(send, piece, plain)
                if sent != "sent" and not self._gone:
                    undelivered.append((i, piece))
                ok = sent == "sent" and ok
        if undelivered and self._outbox is not None and not self._gone:
            await self._hand_over(undelivered, plain)
            return
        self.result.delivered = ok
        log.info("answer to %s/%s %s live: %d piece(s)", self._chat.platform,
                 self._chat.chat_id, "delivered" if ok else "NOT delivered", len(pieces))

    async def _holds_the_answer(self, ref: MessageRef) -> None:
        """`ref`, sent anew with the answer's first piece, holds the answer from now on."""
        self._placeholder = ref
        if self._on_holder is not None:
            try:
                await self._on_holder(ref.message_id)
            except Exception as exc:  # shown either way; only a crash's survivor would miss it
                log.warning("message %s holding the answer in %s not recorded: %s",
                            ref.message_id, self._chat.key, exc)

    async def _hand_over(self, pieces: list[tuple[int, str]], plain: bool) -> None:
        """The platform would not take these pieces live: the outbox delivers them (stored
        first, retried until its deadline), so the answer is not lost."""
        assert self._outbox is not None
        key = f"answer:{self._chat.key}:{self._in_reply_to or id(self)}"
        # the placeholder is never the last word: the first piece goes into it
        first_replaces = (self._placeholder.message_id
                          if self._placeholder is not None and pieces[0][0] == 0 else None)
        items = [Reply(text=md, markup="plain" if plain else "markdown",
                       in_reply_to=self._in_reply_to,
                       replaces=first_replaces if n == 0 else None)
                 for n, (_, md) in enumerate(pieces)]
        try:
            receipt = await self._outbox.deliver(self._chat, items, source="answer",
                                                 key=f"{key}:{pieces[0][0]}", hold=self._held)
        except Exception as exc:  # the database is away too: said in the log, not hidden
            log.error("final text for %s neither delivered nor stored: %s", self._chat.key, exc)
            self.result.delivered = False
            return
        log.info("final text for %s handed to the outbox: %s, %d piece(s), into placeholder"
                 " %s, %s", self._chat.key, receipt.key, len(items), first_replaces,
                 receipt.status)
        self.result.delivered = receipt.status in ("pending", "delivered", "held")
        self.result.handed_over = True

    async def _send_file(self, event: File) -> None:
        kind_ok = (self._caps.supports_images if event.file.kind == "image"
                   else self._caps.supports_documents)
        if not kind_ok:
            if event.file.mime_type in ("text/markdown", "text/plain"):
                # a platform without documents (WeChat official accounts) gets the text
                text = event.file.data.decode("utf-8", errors="replace")
                for piece in split_text(text, self._caps.max_message_length):
                    async def send(reply: Reply) -> None:
                        ref = await self._sender.send(self._chat, reply)
                        self.result.message_ids.append(ref.message_id)

                    await self._with_retries(send, piece, plain=True)
            return
        file = event.file
        if file.in_reply_to is None and self._in_reply_to is not None:
            file = file.model_copy(update={"in_reply_to": self._in_reply_to})
        if self._held:
            await self._hand_over_file(file, None)
            return
        end = self._clock() + self._live_deadline_s
        while self._clock() < end:
            try:
                ref = await self._sender.send_file(self._chat, file)
                self.result.message_ids.append(ref.message_id)
                return
            except PlatformError as exc:
                policy = decide(exc, stored=False)
                if policy is Policy.WAIT:  # the wait ends at the live deadline at the latest
                    assert isinstance(exc, RateLimited)
                    await self._sleep(min(exc.retry_after, MAX_WAIT_S,
                                          max(0.0, end - self._clock())))
                    continue
                if policy is Policy.DROP:
                    self._gone = True
                    return
                if policy is Policy.HOLD:
                    self._held = self._outbox is not None
                await self._hand_over_file(file, exc)  # HOLD, RETRY, OUTBOX (no PLAIN for files)
                return
        await self._hand_over_file(file, None)

    async def _hand_over_file(self, file: OutgoingFile, exc: PlatformError | None) -> None:
        """A file the platform would not take live goes to the outbox (not lost)."""
        if self._outbox is None:
            log.warning("file %s not sent: %s", file.filename, exc or "live deadline passed")
            return
        try:
            await self._outbox.deliver(self._chat, [file], source="answer", hold=self._held, key=(
                f"answer-file:{self._chat.key}:{self._in_reply_to or id(self)}:{file.filename}"))
            self.result.handed_over = True
        except Exception as err:
            log.error("file %s neither sent nor stored: %s", file.filename, err)
