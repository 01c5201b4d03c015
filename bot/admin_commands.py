"""/usage (a person's spend, budget and reset times) and /admin usage|allow|block|budget."""

from __future__ import annotations

from datetime import UTC, datetime

from bot import budget_gateway
from bot.command_table import CommandContext, command
from core.store import Budget
from core.usage_gate import next_day, next_month

ADMIN_USAGE = ("/admin usage | /admin allow PLATFORM:ID | /admin block PLATFORM:ID | "
               "/admin budget PLATFORM:ID DAILY MONTHLY  (a number of tokens, $ and an amount "
               "in US dollars, or - for the default)")


def _l(lang: str, en: str, zh: str) -> str:
    return zh if lang == "zh" else en


def _limit(tokens: int | None, usd: float | None) -> str:
    parts = ([f"{tokens:,} tokens"] if tokens is not None else []) + (
        [f"${usd:.2f}"] if usd is not None else [])
    return " / ".join(parts) or "∞"


@command("usage")
async def usage(ctx: CommandContext) -> None:
    store, now = ctx.store, datetime.now(UTC)
    conv = await store.conversations.active(ctx.msg.chat, ctx.user_id)
    c = await store.usage.for_conversation(conv.id)
    spend = await store.budgets.spend(ctx.user_id, now)
    gate = ctx.gateway.gate
    budget = await gate.budget_of(ctx.user_id) if gate is not None else Budget()
    day, month = next_day(now), next_month(now)
    cached_en = f", {c.cached_tokens:,} of them from the model's cache" if c.cached_tokens else ""
    cached_zh = f"，其中 {c.cached_tokens:,} 来自模型缓存" if c.cached_tokens else ""
    await ctx.say(_l(
        ctx.lang,
        f"This conversation: {c.tokens:,} tokens{cached_en} (${c.cost_usd:.4f}) in {c.calls}"
        " model calls."
        f"\nToday: {spend.day_tokens:,} tokens (${spend.day_usd:.4f}) of "
        f"{_limit(budget.daily_tokens, budget.daily_usd)}; resets {day:%Y-%m-%d %H:%M} UTC."
        f"\nThis month: {spend.month_tokens:,} tokens (${spend.month_usd:.4f}) of "
        f"{_limit(budget.monthly_tokens, budget.monthly_usd)}; resets "
        f"{month:%Y-%m-%d %H:%M} UTC.",
        f"本对话：{c.tokens:,} tokens{cached_zh}（${c.cost_usd:.4f}），{c.calls} 次模型调用。"
        f"\n今日：{spend.day_tokens:,} tokens（${spend.day_usd:.4f}），预算 "
        f"{_limit(budget.daily_tokens, budget.daily_usd)}；{day:%Y-%m-%d %H:%M} UTC 重置。"
        f"\n本月：{spend.month_tokens:,} tokens（${spend.month_usd:.4f}），预算 "
        f"{_limit(budget.monthly_tokens, budget.monthly_usd)}；"
        f"{month:%Y-%m-%d %H:%M} UTC 重置。"))


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


@command("admin")
async def admin(ctx: CommandContext) -> None:
    if not await budget_gateway.is_admin_person(ctx.gateway, ctx.msg, ctx.user_id):
        await ctx.say(_l(ctx.lang, "Only the bot's admins may use /admin.",
                         "只有管理员可以使用 /admin。"))
        return
    gate = ctx.gateway.gate
    words = ctx.args.split()
    sub = words[0].lower() if words else ""
    if sub == "usage":
        now = datetime.now(UTC)
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
        await ctx.say(_l(ctx.lang, "Usage: ", "用法：") + ADMIN_USAGE)
        return
    platform, sep, uid = words[1].partition(":")
    if not sep or not platform or not uid:
        await ctx.say(_l(ctx.lang, f"{words[1]!r} is not PLATFORM:ID (e.g. telegram:12345).",
                         f"{words[1]!r} 不是 PLATFORM:ID 格式（例如 telegram:12345）。"))
        return
    user_id = await ctx.store.accounts.user_for(platform, uid)
    if sub in ("allow", "block"):
        await gate.set_access(user_id, sub)
        done = "允许" if sub == "allow" else "屏蔽"
        await ctx.say(_l(ctx.lang, f"{words[1]}: {sub}ed.", f"{words[1]}：已{done}。"))
        return
    if len(words) != 4:
        await ctx.say(_l(ctx.lang, "Usage: ", "用法：") + ADMIN_USAGE)
        return
    try:
        daily, monthly = parse_limit(words[2]), parse_limit(words[3])
    except ValueError:
        await ctx.say(_l(ctx.lang, f"DAILY and MONTHLY are token counts, $amounts or -: got "
                                   f"{words[2]!r} {words[3]!r}.",
                         f"DAILY 和 MONTHLY 应为 token 数、$金额或 -：收到 "
                         f"{words[2]!r} {words[3]!r}。"))
        return
    budget = Budget(daily[0], monthly[0], daily[1], monthly[1])
    await gate.set_budget(user_id, None if budget.unlimited else budget)
    await ctx.say(_l(ctx.lang, f"{words[1]}: daily {_limit(daily[0], daily[1])}, monthly "
                               f"{_limit(monthly[0], monthly[1])} (from now on).",
                     f"{words[1]}：每日 {_limit(daily[0], daily[1])}，每月 "
                     f"{_limit(monthly[0], monthly[1])}（立即生效）。"))
