"""/web (a one-time sign-in link to the web page), /web logout, /share and /unshare.

A sign-in link is a password for ten minutes: it is never posted in a group chat (sent in
private where the platform can address the person's private chat, else refused) and never
stored in the outbox (a link that did not arrive is simply asked for again).
"""

from __future__ import annotations

import logging
from typing import Protocol

from bot.commands import command
from bot.commands.context import CommandContext
from bot.web_links import login_link
from core.errors import PlatformError
from core.types import ChatRef

log = logging.getLogger(__name__)

# platforms whose private chat with a person is addressed by the person's own id (a Telegram
# private chat's id is the user's id): /web in a group sends the link there
PRIVATE_CHAT_IS_USER_ID = frozenset({"telegram"})


class _LinksHost(Protocol):
    web_base_url: str | None


def configure(gateway: _LinksHost, *, base_url: str | None) -> None:
    """Where the links of `gateway`'s /web and /share point (WEB_BASE_URL); None: the web
    platform is not configured, and the commands say so."""
    gateway.web_base_url = base_url.rstrip("/") if base_url else None


@command("web", summary="chat.cmd_web", usage="chat.use_web")
async def web(ctx: CommandContext) -> None:
    arg = ctx.args.strip().lower()
    if arg in ("logout", "signout", "退出"):
        n = await ctx.store.web.end_sessions(ctx.user_id)
        await ctx.say(ctx.tr("chat.web_logout", n=n) if n else ctx.tr("chat.web_logout_none"))
        return
    if arg:
        await ctx.say(ctx.tr("chat.web_usage"))
        return
    base_url = ctx.web_base_url
    if base_url is None:
        await ctx.say(ctx.tr("chat.web_off"))
        return
    if not ctx.msg.chat.is_group:
        link = await login_link(ctx.store, base_url, ctx.user_id)
        await ctx.say_plain(ctx.tr("chat.web_link", url=link), keep=False)
        return
    if ctx.msg.platform in PRIVATE_CHAT_IS_USER_ID:
        private = ChatRef(platform=ctx.msg.platform, chat_id=ctx.msg.sender.platform_uid)
        link = await login_link(ctx.store, base_url, ctx.user_id)
        try:
            await ctx.send_unkept(private, ctx.tr("chat.web_link", url=link))
        except PlatformError as exc:  # never started a private chat with the bot, say
            log.info("sign-in link not sent privately on %s: %s", ctx.msg.platform, exc)
        else:
            await ctx.say(ctx.tr("chat.web_sent_private"))
            return
    await ctx.say(ctx.tr("chat.web_private"))


@command("share", summary="chat.cmd_share")
async def share(ctx: CommandContext) -> None:
    """Publishes the chat's current conversation (anyone in the chat may: they can read it)."""
    base_url = ctx.web_base_url
    if base_url is None:
        await ctx.say(ctx.tr("chat.share_off"))
        return
    conv = await ctx.store.conversations.active(ctx.msg.chat, ctx.user_id)
    if not await ctx.store.web.shown_messages(conv.id, limit=1):
        await ctx.say(ctx.tr("chat.share_empty"))
        return
    token = await ctx.store.web.share(conv.id, created_by=ctx.user_id)
    await ctx.say_plain(ctx.tr("chat.share_ok", url=f"{base_url}/s/{token}"))


@command("unshare", summary="chat.cmd_unshare")
async def unshare(ctx: CommandContext) -> None:
    """Revokes every link to this chat's conversations (the current one and earlier ones)."""
    chat = ctx.msg.chat
    ids = await ctx.store.web.chat_conversations(chat.platform, chat.chat_id,
                                                 chat.thread_id or "")
    n = await ctx.store.web.unshare(ids)
    await ctx.say(ctx.tr("chat.unshare_ok", n=n) if n else ctx.tr("chat.unshare_none"))
