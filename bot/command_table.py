"""One table of command handlers (PTB's `CommandHandler` idea): a command is added here, in one
place, as a function taking a small context. The gateway parses, looks up and calls."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from bot import budget_gateway, chat_admins, commands
from bot.commands import Command
from bot.logs import register_ephemeral
from core.ports import Adapter
from core.store import Conversation, Store
from core.store.accounts import LINK_CODE_TTL
from core.types import MODES, Button, IncomingMessage, Reply
from core.words import t

if TYPE_CHECKING:
    from bot.gateway import Gateway


@dataclass
class CommandContext:
    gateway: Gateway
    store: Store
    adapter: Adapter
    msg: IncomingMessage
    user_id: UUID
    lang: str
    cmd: Command
    conversation: Conversation | None = None
    epoch: int = -1

    @property
    def args(self) -> str:
        return self.cmd.args

    async def say(self, text: str, buttons: list[list[Button]] | None = None) -> None:
        await self.gateway.say(self.adapter, self.msg, text, buttons)

    def tr(self, key: str, **params: Any) -> str:
        return t(key, self.lang, **params)


Handler = Callable[[CommandContext], Awaitable[None]]
HANDLERS: dict[str, Handler] = {}


def command(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for name in names:
            HANDLERS[name] = fn
        return fn

    return register


async def dispatch(ctx: CommandContext) -> None:
    handler = HANDLERS.get(ctx.cmd.name) if ctx.cmd.known else None
    await (handler or help_)(ctx)


# --- the chat and the conversation ------------------------------------------------------------


@command("start", "help")
async def help_(ctx: CommandContext) -> None:
    await ctx.say(commands.help_text(ctx.lang))


@command("mode")
async def mode(ctx: CommandContext) -> None:
    conv = await ctx.store.conversations.active(ctx.msg.chat, ctx.user_id)
    choice = ctx.args.lower()
    if not choice:
        buttons = [[Button(label=m, data=f"mode:{m}") for m in MODES]]
        await ctx.say(ctx.tr("chat.mode_now", mode=conv.mode, choices=commands.MODE_CHOICES),
                      buttons)
    elif choice in MODES:
        if not await chat_admins.may_change_chat(ctx):  # in groups: the group's admins only
            return
        await ctx.store.conversations.set_mode(conv.id, choice)
        await ctx.say(ctx.tr("chat.mode_set", mode=choice))
    else:
        await ctx.say(ctx.tr("chat.mode_bad", mode=ctx.args, choices=commands.MODE_CHOICES))


@command("new")
async def new(ctx: CommandContext) -> None:
    ctx.gateway.stop_chat(ctx.msg.chat.key)
    conv = await ctx.store.conversations.start_new(ctx.msg.chat, ctx.user_id)
    await ctx.say(ctx.tr("chat.new", mode=conv.mode))


@command("stop")
async def stop(ctx: CommandContext) -> None:
    if not ctx.gateway.stop_chat(ctx.msg.chat.key):
        await ctx.say(ctx.tr("chat.stopped_none"))


@command("lang")
async def lang(ctx: CommandContext) -> None:
    if ctx.args in ("en", "zh"):
        await ctx.store.accounts.set_lang(ctx.user_id, ctx.args)
        await ctx.say(t("chat.lang_set", ctx.args))
    else:
        await ctx.say(ctx.tr("chat.lang_bad"))


# --- accounts --------------------------------------------------------------------------------


@command("link")
async def link(ctx: CommandContext) -> None:
    """Codes are given and taken in private chats only (in a group anyone could take one and
    be merged into the person); the account that gave the code is told when it is used."""
    accounts = ctx.store.accounts
    if ctx.msg.chat.is_group:
        await ctx.say(ctx.tr("chat.link_private"))
        return
    if not ctx.args:
        code = await accounts.issue_link_code(ctx.user_id, chat=ctx.msg.chat)
        register_ephemeral(code, LINK_CODE_TTL.total_seconds())  # SDKs log request bodies
        await ctx.say(ctx.tr("chat.link_issued", code=code))
        return
    res = await accounts.redeem_link_code(ctx.args, ctx.user_id)
    if res.ok and res.user_id is not None:
        if ctx.gateway.gate is not None:  # the person's limits are now both accounts' merged
            ctx.gateway.gate.forget(res.user_id)
            ctx.gateway.gate.forget(ctx.user_id)
        linked = await accounts.accounts_of(res.user_id)
        platforms = ", ".join(sorted({a.platform for a in linked}))
        await ctx.say(ctx.tr("chat.link_ok", platforms=platforms))
        outbox = ctx.gateway.outbox
        if res.issued_in is not None and outbox is not None:
            who = ctx.msg.sender.display_name or ctx.msg.sender.platform_uid
            await outbox.deliver(res.issued_in, [Reply(text=ctx.tr(
                "chat.link_used", platform=ctx.msg.platform, who=who), markup="plain")],
                key=f"link:{ctx.msg.platform}:{ctx.msg.message_id}", source="link")
    else:
        await ctx.say(ctx.tr("chat.link_failed", reason=res.reason))


@command("unlink")
async def unlink(ctx: CommandContext) -> None:
    """At most `unlinks_per_day` per person (counted in Postgres, across processes): the spend
    stays with both sides (`AccountsRepo.unlink`), and link/unlink cycles are few."""
    accounts = ctx.store.accounts
    per_day = ctx.gateway.unlinks_per_day
    if per_day > 0 and len(await accounts.accounts_of(ctx.user_id)) > 1:
        over = await ctx.store.rate_limits.take(ctx.user_id, [("unlink", per_day, 86_400.0)])
        if over is not None:
            await ctx.say(ctx.tr("chat.unlink_limited", n=per_day,
                                 wait=budget_gateway.duration(over[1], ctx.lang)))
            return
    got = await accounts.unlink(ctx.msg.platform, ctx.msg.sender.platform_uid)
    if got is not None and ctx.gateway.gate is not None:
        ctx.gateway.gate.forget(ctx.user_id)
    await ctx.say(ctx.tr("chat.unlink_ok" if got else "chat.unlink_none"))


# --- questions: commands that become a question for the agent --------------------------------


@command("fast", "debate", "ict", "chart", "plan")
async def question(ctx: CommandContext) -> None:
    q = commands.as_question(ctx.cmd)
    tf = q.options.get("interval") if q is not None else None
    if q is None:
        await ctx.say(ctx.tr("chat.needs_arg", usage=commands.USAGE.get(ctx.cmd.name, "/help")))
    elif tf is not None and not commands.timeframe_known(tf):
        await ctx.say(ctx.tr("chat.bad_timeframe", tf=tf))
    else:
        await ctx.gateway.enqueue(ctx.adapter, ctx.msg, ctx.user_id, ctx.lang, q,
                                  ctx.conversation, ctx.epoch)


# the watchlist, subscriptions, reports, /usage, /admin, /web and /share register themselves
# on import
from bot import (  # noqa: E402,F401
    admin_commands,
    subscription_commands,
    ta_commands,
    web_commands,
)
