"""Routing: a recorded, admitted message to its answer. A voice note (an attachment without text)
goes to the preprocessor through the chat queue; a command to its declaration (`bot.commands`:
`in_order` waits for the placeholder of a question sent before it, `new_epoch` moves the
conversation epoch, `gated` asks spend, `rated` the person's rate); the rest is a question,
counted against the person's rates (`rate_limits`) and queued on the chat queue. A message taken
over from a stopped process (`take_over`, from the resume stage) is routed the same way, in its
placeholder, without being counted again.

Its own state: the commands being handled now (a question such a command queues is the
message's: its inbound id, and its placeholder when it was resumed).

Never switched off: it is the path from a message to its answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any
from uuid import UUID

from bot import budget_gateway, commands
from bot.commands import Command, Question
from bot.pipeline.chat_queue import ChatQueue
from bot.pipeline.context import Epoch, Job
from bot.pipeline.outcome import Outcome
from bot.pipeline.spend import Rates, Spend
from bot.sender import Sender
from core.errors import StoreUnavailable
from core.ports import Adapter
from core.store import Conversation, Store
from core.types import IncomingMessage, MessageRef, utcnow
from core.words import detect_lang, t

log = logging.getLogger(__name__)

Key = tuple[str, str]  # (chat key, message id)
# a command to its handler, in the context handlers see (the gateway's `CommandContext`)
Dispatch = Callable[[Adapter, IncomingMessage, UUID, str, Command, Conversation | None, int],
                    Coroutine[Any, Any, None]]


class Routing:
    def __init__(self, *, store: Store, queue: ChatQueue, spend: Spend, rates: Rates,
                 epoch: Epoch, outcome: Outcome, dispatch: Dispatch, voice: bool) -> None:
        self._store = store
        self._queue = queue
        self._spend = spend
        self._rates = rates
        self._epoch = epoch
        self._outcome = outcome
        self._dispatch = dispatch
        self._voice = voice  # a preprocessor turns attachments (voice notes) into text
        self._resuming: dict[Key, str | None] = {}  # resumed commands: their placeholders
        self._inbound_ids: dict[Key, int] = {}  # commands being handled: their inbound ids

    def __len__(self) -> int:
        """Commands being handled now."""
        return len(self._inbound_ids.keys() | self._resuming.keys())

    async def route(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
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
            if not self._voice:
                await self._outcome.say(adapter, msg, t("chat.unsupported", lang,
                                                        kind=msg.attachments[0].kind))
                await self._outcome.mark(msg, "answered")
                return
            # voice notes and the like: the preprocessor may turn them into text
            await self._question(adapter, msg, user_id, lang, Question(text=""), conversation,
                                 epoch, placeholder=placeholder, resumed=resumed,
                                 inbound_id=inbound_id)
            return
        cmd = commands.parse(text)
        if cmd is None:
            await self._question(adapter, msg, user_id, lang, Question(text=text),
                                 conversation, epoch, placeholder=placeholder, resumed=resumed,
                                 inbound_id=inbound_id)
            return
        declared = commands.spec(cmd.name) if cmd.known else None
        if declared is None or declared.in_order:
            await self._queue.after_placeholder(msg.chat.key)
        if resumed:
            self._resuming[key] = placeholder
        if inbound_id is not None:  # a question the command queues is this message's
            self._inbound_ids[key] = inbound_id
        try:
            await self._command(adapter, msg, user_id, lang, cmd, conversation, epoch)
        finally:
            self._resuming.pop(key, None)
            self._inbound_ids.pop(key, None)
        if not self._queue.holds(key):
            await self._outcome.mark(msg, "answered")

    async def _question(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                        lang: str, question: Question, conversation: Conversation | None,
                        epoch: int, *, placeholder: str | None, resumed: bool,
                        inbound_id: int | None) -> None:
        """A question counted against the person's rates (not again when resumed), queued."""
        if not resumed and await self._rate_refused(adapter, msg, user_id, lang, question,
                                                    conversation):
            return
        self._put(adapter, msg, user_id, lang, question, conversation, epoch,
                  placeholder=placeholder, resumed=resumed, inbound_id=inbound_id)

    async def _command(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                       cmd: Command, conversation: Conversation | None, epoch: int) -> None:
        declared = commands.spec(cmd.name) if cmd.known else None
        if declared is not None and declared.new_epoch:
            self._epoch.move()  # conversations read before are stale from now on

        async def tell(text: str) -> None:
            await self._outcome.say(adapter, msg, text)

        if (declared is not None and declared.gated
                and not await self._spend.command_allowed(user_id, lang, tell)):
            return
        if ((declared is None or declared.rated)
                and (msg.chat.key, msg.message_id) not in self._resuming):
            refusal = await self._rates.refusal(user_id, lang, ["message"])
            if refusal is not None:  # nothing a command does happens past the person's rate
                await tell(refusal)
                return
        await self._dispatch(adapter, msg, user_id, lang, cmd, conversation, epoch)

    async def enqueue(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                      question: Question, conversation: Conversation | None = None,
                      epoch: int = -1) -> None:
        """A command's question queued: its command was counted against the message rate
        already (`_command`); a heavy mode counts against the debates per day here."""
        kinds = [k for k in budget_gateway.question_kinds(msg, question, conversation)
                 if k != "message"]
        if kinds and (msg.chat.key, msg.message_id) not in self._resuming:
            refusal = await self._rates.refusal(user_id, lang, kinds)
            if refusal is not None:
                await self._outcome.say(adapter, msg, refusal)
                return
        self._put(adapter, msg, user_id, lang, question, conversation, epoch)

    async def _rate_refused(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                            lang: str, question: Question,
                            conversation: Conversation | None) -> bool:
        """A question over the person's rate is refused before it is queued (it never reaches
        the model), the person told when to try again. True when it was."""
        refusal = await self._rates.refusal(
            user_id, lang, budget_gateway.question_kinds(msg, question, conversation))
        if refusal is None:
            return False
        await self._outcome.say(adapter, msg, refusal)
        await self._outcome.mark(msg, "answered")
        return True

    def _put(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
             question: Question, conversation: Conversation | None = None,
             epoch: int = -1, *, placeholder: str | None = None,
             resumed: bool = False, inbound_id: int | None = None) -> None:
        """On the chat queue (a resumed command's question in the command's placeholder)."""
        key = (msg.chat.key, msg.message_id)
        if key in self._resuming:  # a resumed message's command
            resumed = True
            placeholder = placeholder or self._resuming[key]
        if inbound_id is None:
            inbound_id = self._inbound_ids.get(key)
        self._queue.put(Job(adapter, msg, user_id, lang, question, conversation, epoch,
                            placeholder=placeholder, resumed=resumed, inbound_id=inbound_id))

    async def take_over(self, adapter: Adapter, msg: IncomingMessage, row: dict[str, Any],
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
                await self._outcome.mark(msg, "failed")
                return
            await self._outcome.say(adapter, msg, notice)
            await self._outcome.mark(msg, "failed")
            return
        try:
            await self.route(adapter, msg, user_id, lang, None, self._epoch.value,
                             placeholder=row["placeholder"], resumed=True, inbound_id=row["id"])
        except StoreUnavailable:
            raise
        except Exception as exc:  # a poison message: not resumed again and again
            await self._outcome.failed(adapter, msg, lang, exc)
