"""/web (a one-time sign-in link to the web page), /web logout, /share and /unshare.

A sign-in link is a password for ten minutes: it is never posted in a group chat (sent in
private where the platform can address the person's private chat, else refused) and never
stored in the outbox (a link that did not arrive is simply asked for again).
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING

from bot.command_table import CommandContext, command
from bot.outbox import say
from bot.web_links import login_link
from core.errors import PlatformError
from core.types import ChatRef, Reply

if TYPE_CHECKING:
    from bot.gateway import Gateway

log = logging.getLogger(__name__)

# platforms whose private chat with a person is addressed by the person's own id (a Telegram
# private chat's id is the user's id): /web in a group sends the link there
PRIVATE_CHAT_IS_USER_ID = frozenset({"telegram"})

_BASE_URLS: weakref.WeakKeyDictionary[Gateway, str] = weakref.WeakKeyDictionary()


def configure(gateway: Gateway, *, base_url: str | None) -> None:
    """Where the links of `gateway`'s /web and /share point (WEB_BASE_URL); None: the web
    platform is not configured, and the commands say so."""
    if base_url:
        _BASE_URLS[gateway] = base_url.rstrip("/")
    else:
        _BASE_URLS.pop(gateway, None)


def base_url_of(gateway: Gateway) -> str | None:
    return _BASE_URLS.get(gateway)




async def _say_plain(ctx: CommandContext, text: str, *, keep: bool = True) -> None:
    """Links go as plain text (no platform's Markdown touches them); with `keep` False the
    outbox never stores the text (a secret link)."""
    await say(ctx.adapter, ctx.msg, text, outbox=ctx.gateway.outbox if keep else None,
              plain=True)


@command("web")
async def web(ctx: CommandContext) -> None:
    arg = ctx.args.strip().lower()
    if arg in ("logout", "signout", "退出"):
        n = await ctx.store.web.end_sessions(ctx.user_id)
        await ctx.say(ctx.tr("chat.web_logout", n=n) if n else ctx.tr("chat.web_logout_none"))
        return
    if arg:
        await ctx.say(ctx.tr("chat.web_usage"))
        return
    base_url = base_url_of(ctx.gateway)
    if base_url is None:
        await ctx.say(ctx.tr("chat.web_off"))
        return
    if not ctx.msg.chat.is_group:
        link = await login_link(ctx.store, base_url, ctx.user_id)
        await _say_plain(ctx, ctx.tr("chat.web_link", url=link), keep=False)
        return
    if ctx.msg.platform in PRIVATE_CHAT_IS_USER_ID:
        private = ChatRef(platform=ctx.msg.platform, chat_id=ctx.msg.sender.platform_uid)
        link = await login_link(ctx.store, base_url, ctx.user_id)
        try:
            await ctx.adapter.send(private, Reply(text=ctx.tr("chat.web_link", url=link),
                                                  markup="plain"))
        except PlatformError as exc:  # never started a private chat with the bot, say
            log.info("sign-in link not sent privately on %s: %s", ctx.msg.platform, exc)
        else:
            await ctx.say(ctx.tr("chat.web_sent_private"))
            return
    await ctx.say(ctx.tr("chat.web_private"))


@command("share")
async def share(ctx: CommandContext) -> None:
    """Publishes the chat's current conversation (anyone in the chat may: they can read it)."""
    base_url = base_url_of(ctx.gateway)
    if base_url is None:
        await ctx.say(ctx.tr("chat.share_off"))
        return
    conv = await ctx.store.conversations.active(ctx.msg.chat, ctx.user_id)
    if not await ctx.store.web.shown_messages(conv.id, limit=1):
        await ctx.say(ctx.tr("chat.share_empty"))
        return
    token = await ctx.store.web.share(conv.id, created_by=ctx.user_id)
    await _say_plain(ctx, ctx.tr("chat.share_ok", url=f"{base_url}/s/{token}"))


@command("unshare")
async def unshare(ctx: CommandContext) -> None:
    """Revokes every link to this chat's conversations (the current one and earlier ones)."""
    chat = ctx.msg.chat
    ids = await ctx.store.web.chat_conversations(chat.platform, chat.chat_id,
                                                 chat.thread_id or "")
    n = await ctx.store.web.unshare(ids)
    await ctx.say(ctx.tr("chat.unshare_ok", n=n) if n else ctx.tr("chat.unshare_none"))
