"""What a command handler sees: the message, the person, the store, and a few verbs (say, send
a file, queue a question, stop the chat's answer, take the person's turn). The gateway stays
behind these methods, so a handler cannot reach the message path's state."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol
from uuid import UUID

from bot import commands
from bot.commands import Command, Question
from bot.sender import Sender, say
from core import clock
from core.ports import Adapter, Outbox
from core.store import Conversation, Store
from core.types import Button, ChatRef, IncomingMessage, OutgoingFile
from core.words import t

if TYPE_CHECKING:
    from bot.pipeline.limits import Limits
    from core.usage_gate import UsageGate


class CommandHost(Protocol):
    """What the context asks of the message path (`bot.gateway.Gateway` is one): the handlers
    never see more than this."""

    @property
    def store(self) -> Store: ...
    @property
    def outbox(self) -> Outbox | None: ...
    @property
    def limits(self) -> Limits: ...
    @property
    def report_llm(self) -> Any: ...
    @property
    def web_base_url(self) -> str | None: ...
    @property
    def chat_admin_answers(self) -> dict[tuple[str, str, str], tuple[float, bool | None]]: ...

    async def say(self, adapter: Adapter, msg: IncomingMessage, text: str,
                  buttons: list[list[Button]] | None = None) -> None: ...

    async def send_file(self, adapter: Adapter, msg: IncomingMessage,
                        file: OutgoingFile) -> None: ...

    async def enqueue(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID, lang: str,
                      question: Question, conversation: Conversation | None = None,
                      epoch: int = -1) -> None: ...

    def stop_chat(self, key: str) -> bool: ...

    async def person_turn(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                          lang: str) -> Callable[[], Awaitable[None]]: ...

    async def is_admin(self, msg: IncomingMessage, user_id: UUID) -> bool: ...


@dataclass
class CommandContext:
    store: Store
    msg: IncomingMessage
    user_id: UUID
    lang: str
    cmd: Command
    conversation: Conversation | None = None
    epoch: int = -1
    _gateway: CommandHost = field(default=None, repr=False)  # type: ignore[assignment]
    _adapter: Adapter = field(default=None, repr=False)  # type: ignore[assignment]

    @classmethod
    def of(cls, gateway: CommandHost, adapter: Adapter, msg: IncomingMessage, *, user_id: UUID,
           lang: str, cmd: Command, conversation: Conversation | None = None,
           epoch: int = -1) -> CommandContext:
        return cls(store=gateway.store, msg=msg, user_id=user_id, lang=lang, cmd=cmd,
                   conversation=conversation, epoch=epoch, _gateway=gateway, _adapter=adapter)

    @property
    def args(self) -> str:
        return self.cmd.args

    @property
    def adapter(self) -> Adapter:
        """The platform the message came from (what it can tell: `core.ports.ChatAdmins`)."""
        return self._adapter

    def tr(self, key: str, **params: Any) -> str:
        return t(key, self.lang, **params)

    def usage(self) -> str:
        """"Usage: /name ARGS" in the person's language, from the command's declaration."""
        return self.tr("chat.needs_arg", usage=commands.usage_line(self.cmd.name, self.lang))

    # --- saying things: every reply goes the gateway's way (the outbox when refused) ---------

    async def say(self, text: str, buttons: list[list[Button]] | None = None) -> None:
        await self._gateway.say(self._adapter, self.msg, text, buttons)

    async def say_plain(self, text: str, *, keep: bool = True) -> None:
        """`text` as plain text (no platform's Markdown touches a link); with `keep` False the
        outbox never stores it (a secret: a sign-in link that did not arrive is asked for
        again)."""
        await say(self._adapter, self.msg, text, outbox=self._gateway.outbox, plain=True,
                  keep=keep)

    async def send_unkept(self, chat: ChatRef, text: str) -> None:
        """A secret `text` to another chat of the platform (the person's private chat), plain,
        never stored; raises `PlatformError` when the platform refuses it."""
        await Sender(self._adapter).send_unkept(chat, text)

    async def send_file(self, file: OutgoingFile) -> None:
        await self._gateway.send_file(self._adapter, self.msg, file)

    # --- the message path -------------------------------------------------------------------

    async def enqueue(self, question: Question) -> None:
        """`question` queued as this message's, after the person's heavy-mode rates."""
        await self._gateway.enqueue(self._adapter, self.msg, self.user_id, self.lang, question,
                                    self.conversation, self.epoch)

    def stop_chat(self) -> bool:
        """Stops the answer running in this chat; False when none is."""
        return self._gateway.stop_chat(self.msg.chat.key)

    async def person_turn(self) -> Callable[[], Awaitable[None]]:
        """Waits for the person's turn (one run per person); returns its release."""
        return await self._gateway.person_turn(self._adapter, self.msg, self.user_id, self.lang)

    async def is_admin(self) -> bool:
        """The person is one of Bullpen's admins (BULLPEN_ADMINS, through any linked account)."""
        return await self._gateway.is_admin(self.msg, self.user_id)

    # --- what the gateway was configured with -----------------------------------------------

    def now(self) -> datetime:
        """The instant budgets and spend are read at (the gate's clock: a test pins it)."""
        gate = self._gateway.limits.gate
        return gate.now() if gate is not None else clock.current().now()

    @property
    def gate(self) -> UsageGate | None:
        return self._gateway.limits.gate

    @property
    def outbox(self) -> Outbox | None:
        return self._gateway.outbox

    @property
    def unlinks_per_day(self) -> int:
        return self._gateway.limits.unlinks_per_day

    @property
    def subscriptions_per_person(self) -> int:
        return self._gateway.limits.subscriptions_per_person

    @property
    def subscriptions_per_chat(self) -> int:
        return self._gateway.limits.subscriptions_per_chat

    @property
    def report_llm(self) -> Any:
        """The model that writes /report's narrative (None: the offline template)."""
        return self._gateway.report_llm

    @property
    def web_base_url(self) -> str | None:
        return self._gateway.web_base_url

    @property
    def chat_admin_answers(self) -> dict[tuple[str, str, str], tuple[float, bool | None]]:
        """The platforms' recent answers to "is this person a group admin" (bot.chat_admins)."""
        return self._gateway.chat_admin_answers


async def dispatch(ctx: CommandContext) -> None:
    """The declared handler of `ctx.cmd`, or the help for a command nobody declared."""
    found = commands.spec(ctx.cmd.name)
    if found is None:
        found = commands.spec("help")
        assert found is not None
    await found.handler(ctx)
