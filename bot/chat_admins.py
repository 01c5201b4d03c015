"""In groups, only the group's admins (as the platform reports them) change the chat's mode or
its subscriptions; in private chats nothing changes.

The platform is asked through the adapter's optional `core.ports.ChatAdmins.is_chat_admin`,
only when such a command arrives in a group, and its answer is kept for a minute per (chat,
person). Bullpen's own admins (`BULLPEN_ADMINS`) may always. An adapter that cannot tell (it
has no `is_chat_admin`, or the platform does not say for this chat) lets everyone: people are
not locked out of a group because of what a platform does not report; this is logged once per
platform. When the platform could not be asked just now (an error), the person is told to try
again and nothing changes.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from core.errors import PlatformError
from core.ports import ChatAdmins

if TYPE_CHECKING:
    from bot.commands.context import CommandContext

log = logging.getLogger(__name__)

CACHE_S = 60.0
_told_cannot_tell: set[str] = set()


async def is_group_admin(ctx: CommandContext) -> bool | None:
    """What the platform says of the sender in the chat: True, False, or None when it does not
    say (no groups on the platform, or not for this chat). Raises `PlatformError`."""
    adapter, msg = ctx.adapter, ctx.msg
    if not isinstance(adapter, ChatAdmins):
        return None
    answers = ctx.chat_admin_answers  # (platform, chat id, person) -> (until, answer)
    key = (msg.chat.platform, msg.chat.chat_id, msg.sender.platform_uid)
    now = time.monotonic()
    kept = answers.get(key)
    if kept is not None and kept[0] > now:
        return kept[1]
    answer = await adapter.is_chat_admin(msg.chat, msg.sender)
    if len(answers) > 10_000:
        for old in [k for k, (until, _) in answers.items() if until <= now]:
            del answers[old]
    answers[key] = (now + CACHE_S, answer)
    return answer


async def may_change_chat(ctx: CommandContext) -> bool:
    """Whether the sender may change this chat's mode or subscriptions; when not, they are
    told why (in their language) and False is returned."""
    if not ctx.msg.chat.is_group or await ctx.is_admin():
        return True
    try:
        admin = await is_group_admin(ctx)
    except PlatformError as exc:
        log.warning("group admins of %s not checked: %s", ctx.msg.chat.key, exc)
        await ctx.say(ctx.tr("chat.group_admin_unchecked"))
        return False
    if admin is None:
        if ctx.adapter.name not in _told_cannot_tell:
            _told_cannot_tell.add(ctx.adapter.name)
            log.info("%s does not say who administers a group: everyone there may change its "
                     "mode and subscriptions", ctx.adapter.name)
        return True
    if not admin:
        await ctx.say(ctx.tr("chat.group_admins_only", command=f"/{ctx.cmd.name}"))
    return admin
