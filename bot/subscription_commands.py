"""/watchlist, /subscribe, /subscriptions, /unsubscribe, /tz and /report."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from bot.chat_admins import may_change_chat
from bot.command_table import CommandContext, command
from core.store.subscriptions import Subscription
from core.types import Reply
from jobs.schedule import (
    MAX_SYMBOLS,
    Schedule,
    ScheduleError,
    calendar_for,
    default_timezone,
    parse_subscribe,
    valid_timezone,
)

_SPLIT = re.compile(r"[\s,，、;；]+")


def _l(lang: str, en: str, zh: str) -> str:
    return zh if lang == "zh" else en


@dataclass
class Resolved:
    codes: list[str] = field(default_factory=list)
    markets: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def resolve_symbols(tokens: list[str], lang: str) -> Resolved:
    """Each token through the symbols directory: a sure match is taken; an ambiguous one or an
    unknown one is a problem line offering the candidates."""
    from analyst.instruments import routable
    from tools.symbols import default_directory

    directory = default_directory()
    out = Resolved()
    for token in tokens:
        matches = directory.resolve(token, limit=3)
        if not matches:
            out.problems.append(_l(lang, f"{token}: not a symbol I know",
                                   f"{token}：找不到这个股票"))
            continue
        top = matches[0]
        if top.ambiguous and len(matches) > 1:
            options = ", ".join(f"{m.name} ({m.symbol})" for m in matches[:3])
            out.problems.append(_l(lang, f"{token} is ambiguous: {options}",
                                   f"{token} 有多个可能：{options}"))
            continue
        if top.score < 97:  # a sound-alike or fuzzy hit ("ZZZZZQ" sounds like SAIC): ask
            options = ", ".join(f"{m.name} ({m.symbol})" for m in matches[:3])
            out.problems.append(_l(lang, f"{token}: did you mean {options}?",
                                   f"{token}：你是指 {options}？"))
            continue
        code = routable(top, directory)
        if code not in out.codes:
            out.codes.append(code)
            out.markets.append(top.market)
    return out


def _tokens(args: str) -> list[str]:
    return [t for t in _SPLIT.split(args.strip()) if t]


async def _user_tz(ctx: CommandContext) -> str:
    return (await ctx.store.subscriptions.timezone(ctx.user_id)) or default_timezone(ctx.lang)


@command("watchlist")
async def watchlist(ctx: CommandContext) -> None:
    subs = ctx.store.subscriptions
    words = _tokens(ctx.args)
    verb = words[0].lower() if words else ""
    if verb in ("add", "remove", "rm", "del", "添加", "删除"):
        res = resolve_symbols(words[1:], ctx.lang)
        if not words[1:]:
            await ctx.say(_l(ctx.lang, "Usage: /watchlist add|remove SYMBOLS",
                             "用法：/watchlist add|remove 股票"))
            return
        if verb in ("add", "添加"):
            current = await subs.watchlist(ctx.user_id)
            room = 50 - len(current)
            if len(res.codes) > room:
                res.problems.append(_l(ctx.lang, "a watchlist holds 50 symbols at most",
                                       "自选最多 50 个"))
                res.codes = res.codes[:max(0, room)]
            now = await subs.watch(ctx.user_id, res.codes)
        else:
            now = await subs.unwatch(ctx.user_id, res.codes)
        lines = [_l(ctx.lang, "Watchlist: ", "自选：") + (", ".join(now) or "—")]
        lines += res.problems
        await ctx.say("\n".join(lines))
        return
    now = await subs.watchlist(ctx.user_id)
    await ctx.say(_l(ctx.lang, "Watchlist: ", "自选：") + (", ".join(now) or _l(
        ctx.lang, "empty. Add with /watchlist add NVDA AAPL",
        "空。用 /watchlist add 茅台 NVDA 添加")))


@command("tz")
async def tz(ctx: CommandContext) -> None:
    if not ctx.args:
        await ctx.say(_l(ctx.lang, "Time zone: ", "时区：") + await _user_tz(ctx))
        return
    try:
        zone = valid_timezone(ctx.args)
    except ScheduleError as exc:
        await ctx.say(exc.message(ctx.lang))
        return
    await ctx.store.subscriptions.set_timezone(ctx.user_id, zone)
    await ctx.say(_l(ctx.lang, f"Time zone set to {zone}. New subscriptions use it.",
                     f"时区已设为 {zone}，新的订阅将使用它。"))


_PODCAST_WORDS = frozenset({"podcast", "播客"})


def _said(args: str, probe: str) -> bool:
    """Whether `args` already names what `probe` adds (a time, a recurrence): adding a second
    one is then refused by the parser."""
    try:
        parse_subscribe(f"{args} {probe}")
    except ScheduleError:
        return True
    return False


@command("subscribe")
async def subscribe(ctx: CommandContext) -> None:
    if not await may_change_chat(ctx):  # in groups: the group's admins only
        return
    words = _tokens(ctx.args)
    kind = "podcast" if any(w.lower() in _PODCAST_WORDS for w in words) else "report"
    args = " ".join(w for w in words if w.lower() not in _PODCAST_WORDS)
    if kind == "podcast":  # a podcast defaults to weekdays at 07:30
        if not _said(args, "at 23:59"):
            args += " at 07:30"
        if not (_said(args, "mon") and _said(args, "tue")):
            args += " weekdays"
    try:
        spec = parse_subscribe(args)
    except ScheduleError as exc:
        await ctx.say(exc.message(ctx.lang))
        return
    res = resolve_symbols(spec.symbols, ctx.lang)
    if res.problems:
        await ctx.say("\n".join([_l(ctx.lang, "Not subscribed:", "未订阅："), *res.problems]))
        return
    if len(res.codes) > MAX_SYMBOLS:
        await ctx.say(_l(ctx.lang, f"{len(res.codes)} symbols is more than one report holds "
                                   f"({MAX_SYMBOLS} at most)",
                         f"{len(res.codes)} 个股票超过一份报告的上限（{MAX_SYMBOLS}）"))
        return
    zone = await _user_tz(ctx)
    markets = res.markets
    if not res.codes:  # the watchlist, resolved at fire time: its markets now for the calendar
        watched = await ctx.store.subscriptions.watchlist(ctx.user_id)
        markets = resolve_symbols(watched, ctx.lang).markets if watched else ["us"]
    calendar = calendar_for(markets) if spec.recurrence == "tradingdays" else None
    got = await ctx.store.subscriptions.subscribe(
        owner_id=ctx.user_id, chat=ctx.msg.chat, symbols=res.codes,
        at_time=spec.at.strftime("%H:%M"), recurrence=spec.recurrence, tz=zone,
        calendar=calendar, lang=ctx.lang, options={"pdf": spec.pdf}, kind=kind,
        per_owner=ctx.gateway.subscriptions_per_person,
        per_chat=ctx.gateway.subscriptions_per_chat)
    if got.sub is None:  # the same one again, or one more than a cap allows: nothing stored
        if got.existing is not None:
            await ctx.say(ctx.tr("chat.subscribe_duplicate", id=got.existing.id,
                                 what=_described(got.existing, ctx.lang)))
        else:
            await ctx.say(ctx.tr("chat.subscribe_" + got.refused, n=got.count))
        return
    sub = got.sub
    schedule = Schedule(at=spec.at, recurrence=spec.recurrence, tz=zone, calendar=calendar)
    nxt = schedule.next_fire(datetime.now(UTC)).astimezone(ZoneInfo(zone))
    what = ", ".join(res.codes) or _l(ctx.lang, "your watchlist", "你的自选")
    thing = _l(ctx.lang, "a podcast" if kind == "podcast" else "a report",
               "播客" if kind == "podcast" else "报告")
    await ctx.say(_l(
        ctx.lang,
        f"Subscribed (#{sub.id}): {thing} on {what}, {schedule.describe('en')}"
        f"{', with PDF' if spec.pdf else ''}. Next: {nxt:%a %Y-%m-%d %H:%M} {zone}.",
        f"已订阅（#{sub.id}）：{what} 的{thing}，{schedule.describe('zh')}"
        f"{'，附 PDF' if spec.pdf else ''}。下次：{nxt:%Y-%m-%d %H:%M}（{zone}）。"))


def _described(sub: Subscription, lang: str) -> str:
    """"NVDA, AAPL · daily at 08:00 (America/New_York)": what and when, for a reply."""
    from jobs.runner import schedule_of

    what = ", ".join(sub.symbols) or _l(lang, "watchlist", "自选")
    if sub.kind == "podcast":
        what += _l(lang, " (podcast)", "（播客）")
    return f"{what} · {schedule_of(sub).describe(lang)}"


@command("subscriptions")
async def subscriptions(ctx: CommandContext) -> None:
    subs = await ctx.store.subscriptions.for_chat(ctx.msg.chat)
    if not subs:
        await ctx.say(_l(ctx.lang, "No subscriptions in this chat. Try /subscribe NVDA at 08:00",
                         "本聊天没有订阅。试试 /subscribe 茅台 at 08:00"))
        return
    zone = await _user_tz(ctx)
    lines = []
    for sub in subs:
        from jobs.runner import schedule_of

        schedule = schedule_of(sub)
        nxt = schedule.next_fire(datetime.now(UTC)).astimezone(ZoneInfo(zone))
        last = await ctx.store.deliveries.last_for_subscription(sub.id)
        if last is None:
            status = _l(ctx.lang, "nothing delivered yet", "尚未推送")
        else:
            when = (last.delivered_at or last.created_at).astimezone(ZoneInfo(zone))
            status = _l(ctx.lang, f"last: {last.status} {when:%Y-%m-%d %H:%M}",
                        f"上次：{last.status} {when:%Y-%m-%d %H:%M}")
        what = ", ".join(sub.symbols) or _l(ctx.lang, "watchlist", "自选")
        if sub.kind == "podcast":
            what += _l(ctx.lang, " (podcast)", "（播客）")
        paused = _l(ctx.lang, " (paused)", "（已暂停）") if sub.status == "paused" else ""
        lines.append(f"#{sub.id} {what} · {schedule.describe(ctx.lang)}{paused} · "
                     + _l(ctx.lang, f"next {nxt:%a %m-%d %H:%M}", f"下次 {nxt:%m-%d %H:%M}")
                     + f" · {status}")
    await ctx.say("\n".join(lines))


@command("unsubscribe")
async def unsubscribe(ctx: CommandContext) -> None:
    arg = ctx.args.strip().lstrip("#").lower()
    if not arg:
        await ctx.say(_l(ctx.lang, "Usage: /unsubscribe ID|all", "用法：/unsubscribe 编号|all"))
        return
    if arg not in ("all", "全部") and not arg.isdigit():
        await ctx.say(_l(ctx.lang, f"{ctx.args} is not a subscription number",
                         f"{ctx.args} 不是订阅编号"))
        return
    if not await may_change_chat(ctx):  # in groups: the group's admins only
        return
    target = None if arg in ("all", "全部") else int(arg)
    removed = await ctx.store.subscriptions.remove(ctx.msg.chat, target, owner_id=ctx.user_id)
    for sub_id in removed:  # what is waiting to go out for it is not sent any more
        await ctx.store.deliveries.cancel_for_subscription(sub_id)
    if not removed:
        await ctx.say(_l(ctx.lang, "No such subscription in this chat.", "本聊天没有这个订阅。"))
    else:
        ids = ", ".join(f"#{i}" for i in removed)
        await ctx.say(_l(ctx.lang, f"Unsubscribed {ids}.", f"已取消订阅 {ids}。"))


@command("report")
async def report(ctx: CommandContext) -> None:
    """The scheduled report, now, as an answer in this chat."""
    from jobs.report import build_report
    from jobs.runner import report_items

    tokens = _tokens(ctx.args)
    res = resolve_symbols(tokens, ctx.lang)
    codes = res.codes or ([] if tokens else await ctx.store.subscriptions.watchlist(ctx.user_id))
    if res.problems and not res.codes:
        await ctx.say("\n".join(res.problems))
        return
    if not codes:
        await ctx.say(_l(ctx.lang, "Usage: /report SYMBOLS (or fill /watchlist first)",
                         "用法：/report 股票（或先添加 /watchlist）"))
        return
    built = await build_report(codes, lang=ctx.lang, llm=ctx.gateway.report_llm)
    items = report_items(built)
    for item in items:
        if isinstance(item, Reply):
            await ctx.say("\n".join([item.text, *res.problems]))
        else:
            await ctx.gateway.send_file(ctx.adapter, ctx.msg, item)


MAX_ASKED = 30  # tickers read from one /podcast; the episode itself takes 10 (it says so)


@command("podcast")
async def podcast(ctx: CommandContext) -> None:
    """The daily podcast now: for the tickers given, or the watchlist; queued and run like a
    question (progress shown, /stop works)."""
    from bot.commands import Question

    words = _tokens(ctx.args)
    pdf = any(w.lower() == "pdf" for w in words)
    tokens = [w for w in words if w.lower() != "pdf"]
    notes: list[str] = []
    if len(tokens) > MAX_ASKED:
        notes.append(_l(ctx.lang, f"{len(tokens)} tickers: the first {MAX_ASKED} are read",
                        f"{len(tokens)} 个股票：只读取前 {MAX_ASKED} 个"))
        tokens = tokens[:MAX_ASKED]
    res = resolve_symbols(tokens, ctx.lang)
    codes = res.codes if tokens else await ctx.store.subscriptions.watchlist(ctx.user_id)
    if not codes:
        await ctx.say("\n".join([*res.problems, _l(
            ctx.lang, "Usage: /podcast SYMBOLS (or fill /watchlist first)",
            "用法：/podcast 股票（或先添加 /watchlist）")]))
        return
    if res.problems or notes:  # said first; the episode is made from the rest
        await ctx.say("\n".join([*notes, *res.problems]))
    await ctx.gateway.enqueue(ctx.adapter, ctx.msg, ctx.user_id, ctx.lang, Question(
        text=f"/podcast {' '.join(codes)}", mode="podcast",
        options={"intent": "podcast", "tickers": ",".join(codes), "pdf": "1" if pdf else ""}),
        ctx.conversation, ctx.epoch)
