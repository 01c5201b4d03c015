"""/watchlist, /subscribe, /subscriptions, /unsubscribe, /tz and /report."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.chat_admins import may_change_chat
from bot.commands import Question, command
from bot.commands.context import CommandContext
from core.agent.turn import TurnOptions
from core.store.subscriptions import Subscription
from core.types import Reply
from core.words import t
from jobs.schedule import (
    MAX_SYMBOLS,
    Schedule,
    ScheduleError,
    calendar_for,
    default_timezone,
    parse_subscribe,
    valid_timezone,
    zone_name,
)

MAX_WATCHLIST = 50  # symbols on one person's watchlist
_SPLIT = re.compile(r"[\s,，、;；]+")


# a datetime's weekday() -> its catalogue key
_WEEKDAY_KEYS = ("subs.weekday_0", "subs.weekday_1", "subs.weekday_2", "subs.weekday_3",
                 "subs.weekday_4", "subs.weekday_5", "subs.weekday_6")


def _at(instant: datetime, lang: str) -> str:
    """"Fri 11-27 08:00" / "11-27（周五） 08:00": an instant already on the clock it is read
    on (the schedule's zone, which its description names)."""
    return t("subs.at_time", lang, weekday=t(_WEEKDAY_KEYS[instant.weekday()], lang),
             day=f"{instant:%m-%d}", time=f"{instant:%H:%M}")


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
            out.problems.append(t("subs.not_a_symbol", lang, token=token))
            continue
        top = matches[0]
        if top.ambiguous and len(matches) > 1:
            options = ", ".join(f"{m.name} ({m.symbol})" for m in matches[:3])
            out.problems.append(t("subs.ambiguous", lang, token=token, options=options))
            continue
        if top.score < 97:  # a sound-alike or fuzzy hit ("ZZZZZQ" sounds like SAIC): ask
            options = ", ".join(f"{m.name} ({m.symbol})" for m in matches[:3])
            out.problems.append(t("subs.did_you_mean", lang, token=token, options=options))
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


@command("watchlist", summary="chat.cmd_watchlist", usage="chat.use_watchlist")
async def watchlist(ctx: CommandContext) -> None:
    subs = ctx.store.subscriptions
    words = _tokens(ctx.args)
    verb = words[0].lower() if words else ""
    if verb in ("add", "remove", "rm", "del", "添加", "删除"):
        res = resolve_symbols(words[1:], ctx.lang)
        if not words[1:]:
            await ctx.say(ctx.tr("subs.watchlist_usage"))
            return
        if verb in ("add", "添加"):
            current = await subs.watchlist(ctx.user_id)
            room = MAX_WATCHLIST - len(current)
            if len(res.codes) > room:
                res.problems.append(ctx.tr("subs.watchlist_full", n=MAX_WATCHLIST))
                res.codes = res.codes[:max(0, room)]
            now = await subs.watch(ctx.user_id, res.codes)
        else:
            now = await subs.unwatch(ctx.user_id, res.codes)
        lines = [ctx.tr("subs.watchlist_is", codes=", ".join(now) or "—")]
        lines += res.problems
        await ctx.say("\n".join(lines))
        return
    now = await subs.watchlist(ctx.user_id)
    await ctx.say(ctx.tr("subs.watchlist_is", codes=", ".join(now)) if now
                  else ctx.tr("subs.watchlist_empty"))


@command("tz", summary="chat.cmd_tz", usage="chat.use_tz")
async def tz(ctx: CommandContext) -> None:
    if not ctx.args:
        await ctx.say(ctx.tr("subs.tz_is", zone=zone_name(await _user_tz(ctx), ctx.lang)))
        return
    try:
        zone = valid_timezone(ctx.args)
    except ScheduleError as exc:
        await ctx.say(exc.message(ctx.lang))
        return
    await ctx.store.subscriptions.set_timezone(ctx.user_id, zone)
    await ctx.say(ctx.tr("subs.tz_set", zone=zone_name(zone, ctx.lang)))


_PODCAST_WORDS = frozenset({"podcast", "播客"})


def _said(args: str, probe: str) -> bool:
    """Whether `args` already names what `probe` adds (a time, a recurrence): adding a second
    one is then refused by the parser."""
    try:
        parse_subscribe(f"{args} {probe}")
    except ScheduleError:
        return True
    return False


@command("subscribe", summary="chat.cmd_subscribe", usage="chat.use_subscribe")
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
        await ctx.say("\n".join([ctx.tr("subs.not_subscribed"), *res.problems]))
        return
    if len(res.codes) > MAX_SYMBOLS:
        await ctx.say(ctx.tr("subs.too_many", n=len(res.codes), max=MAX_SYMBOLS))
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
        per_owner=ctx.subscriptions_per_person,
        per_chat=ctx.subscriptions_per_chat)
    if got.sub is None:  # the same one again, or one more than a cap allows: nothing stored
        if got.existing is not None:
            await ctx.say(ctx.tr("chat.subscribe_duplicate", id=got.existing.id,
                                 what=_described(got.existing, ctx.lang)))
        else:
            await ctx.say(ctx.tr("chat.subscribe_" + got.refused, n=got.count))
        return
    sub = got.sub
    schedule = Schedule(at=spec.at, recurrence=spec.recurrence, tz=zone, calendar=calendar)
    nxt = schedule.next_fire(datetime.now(UTC)).astimezone(schedule.zone)
    await ctx.say(ctx.tr(
        "subs.subscribed_podcast" if kind == "podcast" else "subs.subscribed_report",
        id=sub.id, what=", ".join(res.codes) or ctx.tr("subs.your_watchlist"),
        schedule=schedule.describe(ctx.lang), pdf=ctx.tr("subs.with_pdf") if spec.pdf else "",
        next=_at(nxt, ctx.lang)))


def _described(sub: Subscription, lang: str) -> str:
    """"NVDA, AAPL · daily at 08:00 (America/New_York)": what and when, for a reply."""
    from jobs.runner import schedule_of

    return f"{_what(sub, lang)} · {schedule_of(sub).describe(lang)}"


def _what(sub: Subscription, lang: str) -> str:
    """Its symbols (or the watchlist), and whether it is a podcast."""
    what = ", ".join(sub.symbols) or t("subs.watchlist", lang)
    return what + (t("subs.podcast_tag", lang) if sub.kind == "podcast" else "")


@command("subscriptions", summary="chat.cmd_subscriptions")
async def subscriptions(ctx: CommandContext) -> None:
    subs = await ctx.store.subscriptions.for_chat(ctx.msg.chat)
    if not subs:
        await ctx.say(ctx.tr("subs.none"))
        return
    lines = []
    for sub in subs:
        from jobs.runner import schedule_of

        # every time on the line is on the schedule's own clock: the zone it names, once
        schedule = schedule_of(sub)
        nxt = schedule.next_fire(datetime.now(UTC)).astimezone(schedule.zone)
        last = await ctx.store.deliveries.last_for_subscription(sub.id)
        if last is None:
            status = ctx.tr("subs.never_delivered")
        else:
            when = (last.delivered_at or last.created_at).astimezone(schedule.zone)
            status = ctx.tr("subs.last", status=last.status, when=_at(when, ctx.lang))
        paused = ctx.tr("subs.paused_tag") if sub.status == "paused" else ""
        lines.append(f"#{sub.id} {_what(sub, ctx.lang)} · {schedule.describe(ctx.lang)}{paused}"
                     f" · {ctx.tr('subs.next', when=_at(nxt, ctx.lang))} · {status}")
    await ctx.say("\n".join(lines))


@command("unsubscribe", summary="chat.cmd_unsubscribe", usage="chat.use_unsubscribe")
async def unsubscribe(ctx: CommandContext) -> None:
    arg = ctx.args.strip().lstrip("#").lower()
    if not arg:
        await ctx.say(ctx.tr("subs.unsubscribe_usage"))
        return
    if arg not in ("all", "全部") and not arg.isdigit():
        await ctx.say(ctx.tr("subs.not_a_number", arg=ctx.args))
        return
    if not await may_change_chat(ctx):  # in groups: the group's admins only
        return
    target = None if arg in ("all", "全部") else int(arg)
    removed = await ctx.store.subscriptions.remove(ctx.msg.chat, target, owner_id=ctx.user_id)
    for sub_id in removed:  # what is waiting to go out for it is not sent any more
        await ctx.store.deliveries.cancel_for_subscription(sub_id)
    if not removed:
        await ctx.say(ctx.tr("subs.no_such"))
    else:
        ids = ", ".join(f"#{i}" for i in removed)
        await ctx.say(ctx.tr("subs.unsubscribed", ids=ids))


@command("report", summary="chat.cmd_report", usage="chat.use_report", gated=True)
async def report(ctx: CommandContext) -> None:
    """The scheduled report, now, as an answer in this chat."""
    from jobs.kinds import report_items
    from jobs.report import build_report

    tokens = _tokens(ctx.args)
    res = resolve_symbols(tokens, ctx.lang)
    codes = res.codes or ([] if tokens else await ctx.store.subscriptions.watchlist(ctx.user_id))
    if res.problems and not res.codes:
        await ctx.say("\n".join(res.problems))
        return
    if not codes:
        await ctx.say(ctx.tr("subs.report_usage"))
        return
    built = await build_report(codes, lang=ctx.lang, llm=ctx.report_llm)
    items = report_items(built)
    for item in items:
        if isinstance(item, Reply):
            await ctx.say("\n".join([item.text, *res.problems]))
        else:
            await ctx.send_file(item)


MAX_ASKED = 30  # tickers read from one /podcast; the episode itself takes 10 (it says so)


@command("podcast", summary="chat.cmd_podcast", usage="chat.use_podcast")
async def podcast(ctx: CommandContext) -> None:
    """The daily podcast now: for the tickers given, or the watchlist; queued and run like a
    question (progress shown, /stop works)."""

    words = _tokens(ctx.args)
    pdf = any(w.lower() == "pdf" for w in words)
    tokens = [w for w in words if w.lower() != "pdf"]
    notes: list[str] = []
    if len(tokens) > MAX_ASKED:
        notes.append(ctx.tr("subs.podcast_first", n=len(tokens), max=MAX_ASKED))
        tokens = tokens[:MAX_ASKED]
    res = resolve_symbols(tokens, ctx.lang)
    codes = res.codes if tokens else await ctx.store.subscriptions.watchlist(ctx.user_id)
    if not codes:
        await ctx.say("\n".join([*res.problems, ctx.tr("subs.podcast_usage")]))
        return
    if res.problems or notes:  # said first; the episode is made from the rest
        await ctx.say("\n".join([*notes, *res.problems]))
    await ctx.enqueue(Question(
        text=f"/podcast {' '.join(codes)}", mode="podcast",
        options=TurnOptions(intent="podcast", tickers=tuple(codes), pdf=pdf)))
