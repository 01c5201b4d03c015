"""The chat and its conversation: /start and /help, /mode, /new, /stop, /lang."""

from __future__ import annotations

from bot import chat_admins, commands
from bot.commands import command
from bot.commands.context import CommandContext
from core.types import MODES, Button
from core.words import t

MODE_CHOICES = ", ".join(MODES)


@command("start", summary="chat.cmd_start")
@command("help", summary="chat.cmd_help")
async def help_(ctx: CommandContext) -> None:
    await ctx.say(commands.help_text(ctx.lang))


# /mode, /new and /stop act on the chat's run or conversation: never held behind a question's
# placeholder, so that questions waiting in the queue see their effect
@command("mode", summary="chat.cmd_mode", usage="chat.use_mode", in_order=False,
         new_epoch=True)
async def mode(ctx: CommandContext) -> None:
    conv = await ctx.store.conversations.active(ctx.msg.chat, ctx.user_id)
    choice = ctx.args.lower()
    if not choice:
        buttons = [[Button(label=m, data=f"mode:{m}") for m in MODES]]
        await ctx.say(ctx.tr("chat.mode_now", mode=conv.mode, choices=MODE_CHOICES), buttons)
    elif choice in MODES:
        if not await chat_admins.may_change_chat(ctx):  # in groups: the group's admins only
            return
        await ctx.store.conversations.set_mode(conv.id, choice)
        await ctx.say(ctx.tr("chat.mode_set", mode=choice))
    else:
        await ctx.say(ctx.tr("chat.mode_bad", mode=ctx.args, choices=MODE_CHOICES))


@command("new", summary="chat.cmd_new", in_order=False, new_epoch=True)
async def new(ctx: CommandContext) -> None:
    ctx.stop_chat()
    conv = await ctx.store.conversations.start_new(ctx.msg.chat, ctx.user_id)
    await ctx.say(ctx.tr("chat.new", mode=conv.mode))


@command("stop", summary="chat.cmd_stop", in_order=False, rated=False)
async def stop(ctx: CommandContext) -> None:
    if not ctx.stop_chat():
        await ctx.say(ctx.tr("chat.stopped_none"))


@command("lang", summary="chat.cmd_lang", usage="chat.use_lang")
async def lang(ctx: CommandContext) -> None:
    if ctx.args in ("en", "zh"):
        await ctx.store.accounts.set_lang(ctx.user_id, ctx.args)
        await ctx.say(t("chat.lang_set", ctx.args))
    else:
        await ctx.say(ctx.tr("chat.lang_bad"))
