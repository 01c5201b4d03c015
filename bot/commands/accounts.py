"""One person across platforms: /link and /unlink."""

from __future__ import annotations

from bot import budget_gateway
from bot.commands import command
from bot.commands.context import CommandContext
from bot.logs import register_ephemeral
from core.store.accounts import LINK_CODE_TTL
from core.types import Reply


@command("link", summary="chat.cmd_link", usage="chat.use_link")
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
        if ctx.gate is not None:  # the person's limits are now both accounts' merged
            ctx.gate.forget(res.user_id)
            ctx.gate.forget(ctx.user_id)
        linked = await accounts.accounts_of(res.user_id)
        platforms = ", ".join(sorted({a.platform for a in linked}))
        await ctx.say(ctx.tr("chat.link_ok", platforms=platforms))
        outbox = ctx.outbox
        if res.issued_in is not None and outbox is not None:
            who = ctx.msg.sender.display_name or ctx.msg.sender.platform_uid
            await outbox.deliver(res.issued_in, [Reply(text=ctx.tr(
                "chat.link_used", platform=ctx.msg.platform, who=who), markup="plain")],
                key=f"link:{ctx.msg.platform}:{ctx.msg.message_id}", source="link")
    else:
        await ctx.say(ctx.tr("chat.link_failed", reason=res.reason))


@command("unlink", summary="chat.cmd_unlink")
async def unlink(ctx: CommandContext) -> None:
    """At most `unlinks_per_day` per person (counted in Postgres, across processes): the spend
    stays with both sides (`AccountsRepo.unlink`), and link/unlink cycles are few."""
    accounts = ctx.store.accounts
    per_day = ctx.unlinks_per_day
    if per_day > 0 and len(await accounts.accounts_of(ctx.user_id)) > 1:
        over = await ctx.store.rate_limits.take(ctx.user_id, [("unlink", per_day, 86_400.0)])
        if over is not None:
            await ctx.say(ctx.tr("chat.unlink_limited", n=per_day,
                                 wait=budget_gateway.duration(over[1], ctx.lang)))
            return
    got = await accounts.unlink(ctx.msg.platform, ctx.msg.sender.platform_uid)
    if got is not None and ctx.gate is not None:
        ctx.gate.forget(ctx.user_id)
    await ctx.say(ctx.tr("chat.unlink_ok" if got else "chat.unlink_none"))
