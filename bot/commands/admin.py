"""/usage (a person's spend, budget and reset times) and /admin usage|allow|block|budget."""

from __future__ import annotations

from bot.commands import command
from bot.commands.context import CommandContext
from core.store import Budget
from core.usage_gate import next_day, next_month


def _limit(tokens: int | None, usd: float | None) -> str:
    parts = ([f"{tokens:,} tokens"] if tokens is not None else []) + (
        [f"${usd:.2f}"] if usd is not None else [])
    return " / ".join(parts) or "∞"


@command("usage", summary="admin.cmd_usage")
async def usage(ctx: CommandContext) -> None:
    store, now = ctx.store, ctx.now()
    conv = await store.conversations.active(ctx.msg.chat, ctx.user_id)
    c = await store.usage.for_conversation(conv.id)
    spend = await store.budgets.spend(ctx.user_id, now)
    gate = ctx.gate
    budget = await gate.budget_of(ctx.user_id) if gate is not None else Budget()
    day, month = next_day(now), next_month(now)
    cached = ctx.tr("admin.cached", n=f"{c.cached_tokens:,}") if c.cached_tokens else ""
    await ctx.say(ctx.tr(
        "admin.usage", tokens=f"{c.tokens:,}", cached=cached, cost=f"{c.cost_usd:.4f}",
        calls=c.calls, day_tokens=f"{spend.day_tokens:,}", day_usd=f"{spend.day_usd:.4f}",
        day_limit=_limit(budget.daily_tokens, budget.daily_usd), day_reset=f"{day:%Y-%m-%d %H:%M}",
        month_tokens=f"{spend.month_tokens:,}", month_usd=f"{spend.month_usd:.4f}",
        month_limit=_limit(budget.monthly_tokens, budget.monthly_usd),
        month_reset=f"{month:%Y-%m-%d %H:%M}"))


def parse_limit(text: str) -> tuple[int | None, float | None]:
    """'-' (the default: no limit of its own), '250000' tokens or '$2.50'; ValueError else."""
    text = text.strip()
    if text in ("-", "none", "default"):
        return None, None
    if text.startswith("$"):
        usd = float(text[1:])
        if usd < 0:
            raise ValueError(text)
        return None, usd
    tokens = int(text.replace(",", "").replace("_", ""))
    if tokens < 0:
        raise ValueError(text)
    return tokens, None


@command("admin", summary="admin.cmd_admin", usage="admin.use_admin")
async def admin(ctx: CommandContext) -> None:
    if not await ctx.is_admin():
        await ctx.say(ctx.tr("admin.admins_only"))
        return
    gate = ctx.gate
    words = ctx.args.split()
    sub = words[0].lower() if words else ""
    if sub == "usage":
        now = ctx.now()
        day = now.replace(hour=0, minute=0, second=0, microsecond=0)
        month = day.replace(day=1)
        lines = []
        for title, since in (("Today", day), ("This month", month)):
            top = await ctx.store.budgets.top_spenders(since)
            lines.append(f"{title}:")
            lines += [f"  {s.display_name or s.user_id}: {s.tokens:,} tokens, "
                      f"${s.cost_usd:.4f}" for s in top] or ["  (nothing)"]
        await ctx.say("\n".join(lines))
        return
    if sub not in ("allow", "block", "budget") or len(words) < 2 or gate is None:
        await ctx.say(ctx.usage() + "\n" + ctx.tr("admin.limits_are"))
        return
    platform, sep, uid = words[1].partition(":")
    if not sep or not platform or not uid:
        await ctx.say(ctx.tr("admin.not_platform_id", arg=repr(words[1])))
        return
    user_id = await ctx.store.accounts.user_for(platform, uid)
    if sub in ("allow", "block"):
        await gate.set_access(user_id, sub)
        await ctx.say(ctx.tr("admin.allowed" if sub == "allow" else "admin.blocked",
                             who=words[1]))
        return
    if len(words) != 4:
        await ctx.say(ctx.usage() + "\n" + ctx.tr("admin.limits_are"))
        return
    try:
        daily, monthly = parse_limit(words[2]), parse_limit(words[3])
    except ValueError:
        await ctx.say(ctx.tr("admin.bad_limits", daily=repr(words[2]), monthly=repr(words[3])))
        return
    budget = Budget(daily[0], monthly[0], daily[1], monthly[1])
    await gate.set_budget(user_id, None if budget.unlimited else budget)
    await ctx.say(ctx.tr("admin.budget_set", who=words[1], daily=_limit(daily[0], daily[1]),
                         monthly=_limit(monthly[0], monthly[1])))
