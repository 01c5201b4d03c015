"""The one way out: every text, edit and file Bullpen sends leaves through a `Sender`.

A `Sender` wraps one platform's adapter. It is the only code that calls the adapter's `send`,
`edit` and `send_file` (`tests/bot/test_delivery_seam.py` holds every other module to that);
it knows the platform's dialect (Markdown converted, or plain), its length (split) and the
plain fallback, and one table says what each refusal means:

| error              | live (renderer, `say`, a file)   | stored (the outbox's sender)      |
|--------------------|----------------------------------|-----------------------------------|
| MessageNotModified | DONE: it already says that       | DONE                              |
| RateLimited        | WAIT `retry_after`, until the    | PAUSE the platform, then wait in  |
|                    | live deadline                    | place when short, else RESCHEDULE |
| FormattingRejected | PLAIN: the piece again, plain    | PLAIN                             |
| Held               | HOLD: to the outbox, held for    | HOLD: due when the chat writes    |
|                    | the chat's next message          |                                   |
| Forbidden          | DROP: may not write there (log)  | DROP: `failed`, `on_forbidden`    |
| PlatformUnavailable| RETRY: the final text again      | RESCHEDULE; an edit into a        |
| (5xx, network)     | after 0.5, 1, 2 ... s until the  | placeholder stays an edit (the    |
|                    | live deadline, then OUTBOX, an   | placeholder is still there)       |
|                    | edit still an edit (`say`, a     |                                   |
|                    | file: OUTBOX at once)            |                                   |
| other PlatformError| OUTBOX: stored, retried until    | RESCHEDULE: back off (1, 2, 4 ... |
|                    | its deadline                     | 60 s) until the deadline; an edit |
|                    |                                  | into a placeholder: sent anew     |

`decide(exc, stored=...)` reads the table; the renderer's live retries and the outbox's
attempts branch on what it returns. Progress edits of a growing answer are best effort: any
refusal drops the edit (the final text is what must arrive).

A message that must not be stored (a sign-in link) says so with `keep=False`: it is sent
live or not at all, never written to the outbox's table.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from bot.markup import convert, split_text, to_plain
from core.errors import (
    Forbidden,
    FormattingRejected,
    Held,
    MessageNotModified,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
)
from core.ports import Adapter, Outbox, OutItem
from core.types import Button, ChatRef, IncomingMessage, MessageRef, OutgoingFile, Reply

log = logging.getLogger(__name__)


class Policy(StrEnum):
    """What to do with a piece the platform refused (the module's table)."""

    DONE = "done"
    WAIT = "wait"
    PAUSE = "pause"
    RESCHEDULE = "reschedule"
    PLAIN = "plain"
    HOLD = "hold"
    RETRY = "retry"
    OUTBOX = "outbox"
    DROP = "drop"


# error type -> (live policy, stored policy); the first class of the error's MRO found wins
_TABLE: dict[type[PlatformError], tuple[Policy, Policy]] = {
    MessageNotModified: (Policy.DONE, Policy.DONE),
    RateLimited: (Policy.WAIT, Policy.PAUSE),
    FormattingRejected: (Policy.PLAIN, Policy.PLAIN),
    Held: (Policy.HOLD, Policy.HOLD),
    Forbidden: (Policy.DROP, Policy.DROP),
    PlatformUnavailable: (Policy.RETRY, Policy.RESCHEDULE),
    PlatformError: (Policy.OUTBOX, Policy.RESCHEDULE),
}


def decide(exc: PlatformError, *, stored: bool) -> Policy:
    """The table's answer for `exc`: live (the user is waiting) or `stored` (the outbox)."""
    for cls in type(exc).__mro__:
        row = _TABLE.get(cls)
        if row is not None:
            return row[1] if stored else row[0]
    raise AssertionError("every PlatformError has a row")  # pragma: no cover


@dataclass(frozen=True)
class Piece:
    """One platform operation of a delivery: a text message or a file."""

    reply: Reply | None = None
    file: OutgoingFile | None = None
    edit_of: str | None = None  # a message of ours this piece is edited into


class Sender:
    """One platform's way out (see the module's table). `outbox` takes what the platform
    refuses for now from the live verbs (`say`, `file`); without one it is logged."""

    def __init__(self, adapter: Adapter, *, outbox: Outbox | None = None) -> None:
        self._adapter = adapter
        self.outbox = outbox
        self.caps = adapter.capabilities

    @property
    def platform(self) -> str:
        return self._adapter.name

    # --- the platform's operations: the only calls of the adapter's send, edit, send_file ----

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        return await self._adapter.send(chat, reply)

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        await self._adapter.edit(ref, reply)

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        return await self._adapter.send_file(chat, file)

    # --- dialect, length, plain fallback -----------------------------------------------------

    def text_limit(self, *, plain: bool = False) -> int:
        """The length a piece of Markdown is split at (room for Telegram's entities)."""
        limit = self.caps.max_message_length
        if self.caps.markup == "telegram_html" and not plain:
            limit = int(limit * 0.9)
        return limit

    def rendered(self, reply: Reply, *, plain: bool = False) -> Reply:
        """`reply` (Markdown) in the platform's dialect; plain text when asked, when the
        platform has no markup, or when the converted text would not fit."""
        caps = self.caps
        buttons = reply.buttons if caps.supports_buttons else []
        if not (plain or reply.markup == "plain" or caps.markup == "plain"):
            text = convert(reply.text, caps.markup)
            if len(text) <= caps.max_message_length:
                return reply.model_copy(update={"text": text, "markup": "markdown",
                                                "buttons": buttons})
        return reply.model_copy(update={"text": to_plain(reply.text), "markup": "plain",
                                        "buttons": buttons})

    def pieces(self, items: Sequence[OutItem]) -> list[Piece]:
        """Items as the platform takes them: split at its length; files it cannot show become
        their caption (or nothing). Deterministic, so a delivery's `pieces_sent` resumes."""
        caps = self.caps
        out: list[Piece] = []
        for item in items:
            if isinstance(item, Reply):
                limit = self.text_limit(plain=item.markup == "plain")
                for i, part in enumerate(split_text(item.text.strip() or "…", limit)):
                    edit_of = item.replaces if i == 0 and caps.can_edit else None
                    out.append(Piece(reply=item.model_copy(update={"text": part,
                                                                   "replaces": None}),
                                     edit_of=edit_of))
                continue
            ok = caps.supports_images if item.kind == "image" else caps.supports_documents
            if ok:
                out.append(Piece(file=item))
            elif item.caption:
                out.append(Piece(reply=Reply(text=item.caption, in_reply_to=item.in_reply_to)))
        return out

    # --- the live verbs ----------------------------------------------------------------------

    async def say(self, msg: IncomingMessage, text: str, *,
                  buttons: list[list[Button]] | None = None, plain: bool = False,
                  keep: bool = True) -> None:
        """A short reply to `msg` (a command's answer, "Heard: ..."), sent at once; what the
        platform refuses for now goes to the outbox (unless `keep` is False: a secret is never
        stored). A chat that refuses the bot for good is only logged."""
        reply = self.rendered(Reply(text=text, markup="plain" if plain else "markdown",
                                    buttons=buttons or [], in_reply_to=msg.message_id),
                              plain=plain)
        try:
            await self.send(msg.chat, reply)
        except PlatformError as exc:
            if self.outbox is None or not keep or decide(exc, stored=False) is Policy.DROP:
                log.warning("reply not sent to %s: %s", msg.chat.key, exc)
                return
            digest = hashlib.sha1(text.encode()).hexdigest()[:12]
            await self.outbox.deliver(
                msg.chat, [Reply(text=text, markup="plain" if plain else "markdown",
                                 buttons=buttons or [], in_reply_to=msg.message_id)],
                key=f"say:{msg.chat.key}:{msg.message_id}:{digest}", source="say")

    async def send_unkept(self, chat: ChatRef, text: str) -> None:
        """A secret `text` to `chat`, plain, never stored; raises `PlatformError` when the
        platform refuses it (the caller says so where it was asked)."""
        await self.send(chat, Reply(text=text, markup="plain"))

    async def file(self, msg: IncomingMessage, file: OutgoingFile) -> None:
        """A file in reply to `msg`; refused for now: to the outbox."""
        file = file.model_copy(update={"in_reply_to": msg.message_id})
        try:
            await self.send_file(msg.chat, file)
        except PlatformError as exc:
            if self.outbox is None or decide(exc, stored=False) is Policy.DROP:
                log.warning("file not sent to %s: %s", msg.chat.key, exc)
                return
            await self.outbox.deliver(msg.chat, [file], source="say",
                                      key=f"say:{msg.platform}:{msg.chat.key}:"
                                          f"{msg.message_id}:{file.filename}")

    async def edit_notice(self, ref: MessageRef, text: str) -> bool:
        """`text` (plain) into a message of ours (a placeholder); False when the platform
        cannot edit or refused it (the caller says it anew)."""
        if not self.caps.can_edit:
            return False
        try:
            await self.edit(ref, Reply(text=text, markup="plain"))
        except PlatformError:
            return False
        return True


async def say(adapter: Adapter, msg: IncomingMessage, text: str, *, outbox: Outbox | None,
              buttons: list[list[Button]] | None = None, plain: bool = False,
              keep: bool = True) -> None:
    """`Sender(adapter, outbox=outbox).say(...)`: for callers that hold an adapter."""
    await Sender(adapter, outbox=outbox).say(msg, text, buttons=buttons, plain=plain,
                                             keep=keep)
