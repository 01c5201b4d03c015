"""/watchlist, /subscribe, /subscriptions, /unsubscribe, /tz and /report through the gateway on
real Postgres: what each bad input is told, and that it leaves nothing behind."""

from __future__ import annotations

import itertools
import re
from pathlib import Path

import pytest

from bot.gateway import Gateway
from bot.outbox import AdapterRegistry, PostgresOutbox
from core.agent import AgentRunner
from core.errors import Forbidden
from core.store import Database, Store
from core.testing import RecordingAdapter
from core.types import ChatRef, IncomingMessage, Sender
from podcast.mode import PodcastMode

CHAT = ChatRef(platform="test", chat_id="c1")
OTHER = ChatRef(platform="test", chat_id="c2")
_ids = itertools.count(1)


class Chat:
    def __init__(self, pg_db: Database, tmp_path: Path) -> None:
        self.store = Store(pg_db, files_dir=tmp_path)
        self.adapter = RecordingAdapter()
        registry = AdapterRegistry()
        registry.add(self.adapter)
        self.outbox = PostgresOutbox(self.store.deliveries, registry)
        self.gateway = Gateway(store=self.store, runner=AgentRunner(
            store=self.store, modes={"podcast": PodcastMode(llm=None)}), outbox=self.outbox)

    async def say(self, text: str, chat: ChatRef = CHAT, uid: str = "u1") -> str:
        """Send `text`; the bot's replies to it, joined."""
        before = len(self.adapter.ops)
        await self.gateway.handle(self.adapter, IncomingMessage(
            platform=chat.platform, chat=chat, sender=Sender(platform_uid=uid),
            message_id=f"m{next(_ids)}", text=text))
        await self.gateway.idle()
        return "\n".join(self.adapter.texts[o.message_id] for o in self.adapter.ops[before:]
                         if o.kind == "send")  # each message as it reads now (edits applied)

    async def subscriptions(self, chat: ChatRef = CHAT) -> list[object]:
        return list(await self.store.subscriptions.for_chat(chat))


@pytest.fixture
async def chat(pg_db: Database, tmp_path: Path) -> Chat:
    return Chat(pg_db, tmp_path)


async def test_subscribe_list_and_unsubscribe(chat: Chat) -> None:
    said = await chat.say("/subscribe NVDA 茅台 at 07:30 weekdays pdf")
    assert "Subscribed (#" in said and "NVDA, 600519" in said and "with PDF" in said
    assert "Next: " in said and "America/New_York" in said  # English speaker's default zone
    [sub] = await chat.store.subscriptions.for_chat(CHAT)
    assert sub.symbols == ["NVDA", "600519"] and sub.at_time == "07:30"
    assert sub.recurrence == "weekdays" and sub.options == {"pdf": True}
    listed = await chat.say("/subscriptions")
    assert f"#{sub.id} NVDA, 600519" in listed and "nothing delivered yet" in listed
    assert "No such subscription" in await chat.say("/unsubscribe 999")
    assert f"Unsubscribed #{sub.id}" in await chat.say(f"/unsubscribe {sub.id}")
    assert await chat.subscriptions() == []
    assert "No subscriptions" in await chat.say("/subscriptions")


@pytest.mark.parametrize("args, told", [
    ("ZZZZZQ at 08:00", "ZZZZZQ: did you mean"),  # a sound-alike is offered, not taken
    ("NVDA at 25:00", "25:00 is not a time of day"),
    ("NVDA at 12:61", "12:61 is not a time of day"),
    ("平安 at 08:00", "平安 is ambiguous: 平安银行 (000001.SZ), 中国平安 (601318.SH)"),
    (" ".join(f"S{i:03d}" for i in range(200)), "200 symbols"),
    ("NVDA daily weekdays", "daily"),
])
async def test_bad_subscriptions_are_told_and_store_nothing(chat: Chat, args: str,
                                                            told: str) -> None:
    said = await chat.say(f"/subscribe {args}")
    assert told in said, said
    assert await chat.subscriptions() == []


async def test_time_zones(chat: Chat) -> None:
    assert "Mars/Olympus" in await chat.say("/tz Mars/Olympus")
    assert "Asia/Shanghai" in await chat.say("/tz Shanghai")
    said = await chat.say("/subscribe NVDA at 08:00")
    assert "Asia/Shanghai" in said
    assert "Asia/Shanghai" in await chat.say("/tz")



async def test_the_next_run_is_on_the_schedules_clock_and_its_zone_named_once(
        chat: Chat) -> None:
    """A New York subscription listed to someone now in Shanghai: "next" is the New York
    08:00 the line's schedule names, not 21:00 Shanghai time with no zone."""
    await chat.say("/tz New York")
    await chat.say("/subscribe NVDA at 08:00")
    await chat.say("/tz Shanghai")
    # English keeps the IANA name; Chinese says the zone as a reader does (美东时间)
    for lang, next_word, zone in (("en", "next", "America/New_York"), ("zh", "下次", "美东时间")):
        await chat.say(f"/lang {lang}")
        [line] = (await chat.say("/subscriptions")).splitlines()
        assert line.count(zone) == 1 and "Shanghai" not in line and "北京" not in line, line
        assert lang == "en" or "America/" not in line, line
        nxt = re.search(next_word + r" ([^·]+?) ·", line)
        assert nxt is not None and nxt.group(1).endswith(" 08:00"), line
    # a new subscription's confirmation names its zone once too
    said = await chat.say("/subscribe AAPL at 09:30 weekdays")
    assert said.count("北京时间") == 1 and "09:30" in said.split("下次：")[1], said
    assert "Asia/" not in said, said


async def test_time_zones_in_chinese_are_named_as_a_reader_says_them(chat: Chat) -> None:
    """/tz under /lang zh: 北京时间, 香港时间, 美东时间, never the raw IANA name; a zone
    without a Chinese name of its own keeps its IANA name."""
    await chat.say("/lang zh")
    for typed, named in (("Shanghai", "北京时间"), ("香港", "香港时间"), ("纽约", "美东时间")):
        said = await chat.say(f"/tz {typed}")
        assert named in said and "/" not in said, said
        assert named in await chat.say("/tz")
    said = await chat.say("/subscribe NVDA at 08:00")
    assert "（美东时间）" in said and "America/" not in said, said
    assert "Europe/Paris" in await chat.say("/tz Europe/Paris")

async def test_watchlist_follows_the_person_and_feeds_a_subscription(chat: Chat) -> None:
    said = await chat.say("/watchlist add NVDA 茅台 ZZZZZQ")
    assert "NVDA, 600519" in said and "ZZZZZQ" in said
    assert "600519" not in await chat.say("/watchlist remove 茅台")
    # the same person in another chat sees the same watchlist
    assert "NVDA" in await chat.say("/watchlist", chat=OTHER)
    said = await chat.say("/subscribe at 09:00 daily")
    assert "your watchlist" in said
    [sub] = await chat.store.subscriptions.for_chat(CHAT)
    assert sub.symbols == []  # resolved at fire time


async def test_report_now_sends_the_text_and_the_chart(chat: Chat) -> None:
    said = await chat.say("/report NVDA")
    assert "NVDA" in said and "2025-02-14" in said
    files = [o.file for o in chat.adapter.ops if o.kind == "file"]
    assert len(files) == 1 and files[0] is not None and files[0].data.startswith(b"\x89PNG")
    assert "Usage: /report" in await chat.say("/report", uid="u-new")  # empty watchlist


async def test_a_chat_that_refuses_the_bot_pauses_its_subscription_and_the_owner_is_told(
        chat: Chat) -> None:
    from jobs.runner import JobRunner, schedule_of

    await chat.say("/subscribe NVDA at 08:00 daily", chat=OTHER)
    [sub] = await chat.store.subscriptions.for_chat(OTHER)

    async def pause(delivery):  # type: ignore[no-untyped-def]
        await chat.store.subscriptions.pause(delivery.subscription_id, "forbidden")

    chat.outbox.on_forbidden = pause
    chat.adapter.faults["send"] = [Forbidden("bot was removed from the group")]
    runner = JobRunner(subscriptions=chat.store.subscriptions, outbox=chat.outbox)
    from datetime import UTC, datetime

    fire = schedule_of(sub).next_fire(datetime.now(UTC))
    [result] = await runner.due(fire)
    assert result.status == "done"
    await chat.outbox.drain()
    paused = await chat.store.subscriptions.get(sub.id)
    assert paused is not None and paused.status == "paused"
    told = await chat.say("hello?")  # the owner writes anywhere: told once
    assert f"Subscription #{sub.id} (NVDA) is paused" in told
    assert "is paused" not in await chat.say("/help")
    assert (await runner.due(schedule_of(sub).next_fire(fire))) == []  # paused: no more fires
    assert f"Unsubscribed #{sub.id}" in await chat.say(f"/unsubscribe {sub.id}")


GROUP = ChatRef(platform="test", chat_id="g1", is_group=True)


async def test_link_codes_are_private_and_the_issuer_is_told(chat: Chat) -> None:
    assert "private chat" in await chat.say("/link", chat=GROUP)
    assert "private chat" in await chat.say("/link 12345678", chat=GROUP, uid="u2")
    assert await chat.store.pool.fetchval("SELECT count(*) FROM link_codes") == 0
    said = await chat.say("/link")
    code = re.search(r"\b(\d{8})\b", said)
    assert code is not None
    # the second account has a watchlist and a subscription of its own: both follow it
    await chat.say("/watchlist add AAPL", chat=OTHER, uid="u2")
    await chat.say("/subscribe AAPL at 09:00 daily", chat=OTHER, uid="u2")
    await chat.say("/watchlist add NVDA")
    assert "Linked" in await chat.say(f"/link {code.group(1)}", chat=OTHER, uid="u2")
    await chat.outbox.drain()
    assert "was just used by the test account u2" in chat.adapter.visible_text(CHAT)[-1]
    assert "NVDA, AAPL" in await chat.say("/watchlist")
    [sub] = await chat.store.subscriptions.for_chat(OTHER)
    owner = await chat.store.accounts.user_for("test", "u1", "")
    assert sub.owner_id == owner



async def test_podcast_bad_input_is_told_and_the_rest_is_produced(chat: Chat) -> None:
    assert "Usage: /podcast" in await chat.say("/podcast")  # no tickers, empty watchlist
    said = await chat.say("/podcast NVDA ZZZZZQ ORCL")
    assert "ZZZZZQ: did you mean" in said  # unknown: said first, not guessed
    assert "Daily podcast" in said and "(NVDA)" in said and "ticker:" not in said
    assert "(ORCL) — no verdict" in said  # no data offline: an honest section
    twelve = "NVDA AAPL MSFT AMZN NFLX TSLA GOOG IBM ORCL INTC AMD QCOM"
    said = await chat.say(f"/podcast {twelve}")
    assert "(QCOM)" not in said and "10" in said  # capped, and the cap is said
    many = " ".join(["NVDA"] * 31)
    assert "31 tickers: the first 30 are read" in await chat.say(f"/podcast {many}")


# --- issue 28: caps and de-duplication for what multiplies pushes ------------------------------


async def test_a_burst_of_subscribe_stops_at_the_chats_cap(chat: Chat) -> None:
    """40 different /subscribe at once in one chat (limits off): the chat's cap (10 by default)
    is stored, exactly, and every other one is told why."""
    import asyncio

    async def send(i: int) -> None:
        await chat.gateway.handle(chat.adapter, IncomingMessage(
            platform=CHAT.platform, chat=CHAT, sender=Sender(platform_uid="u1"),
            message_id=f"burst{i}", text=f"/subscribe NVDA at 08:{i:02d}"))

    await asyncio.gather(*(send(i) for i in range(40)))
    await chat.gateway.idle()
    assert len(await chat.subscriptions()) == 10
    said = chat.adapter.visible_text(CHAT)
    assert sum("Subscribed (#" in s for s in said) == 10
    assert sum(s == "This chat has 10 subscriptions, the most one chat may have. "
                    "/unsubscribe ID one first." for s in said) == 30


async def test_a_person_has_at_most_their_cap_of_subscriptions_anywhere(chat: Chat) -> None:
    chat.gateway.limits.subscriptions_per_person, chat.gateway.limits.subscriptions_per_chat = 3, 2
    for i, where in enumerate([CHAT, CHAT, OTHER]):
        assert "Subscribed (#" in await chat.say(f"/subscribe NVDA at 09:0{i}", chat=where)
    assert "/unsubscribe" in await chat.say("/subscribe NVDA at 09:09", chat=CHAT)  # chat cap
    third = ChatRef(platform="test", chat_id="c3")
    said = await chat.say("/subscribe NVDA at 09:09", chat=third)
    assert said == ("You have 3 subscriptions, the most one person may have. "
                    "/unsubscribe ID one first.")
    assert await chat.subscriptions(third) == []
    assert await chat.say("/lang zh", chat=third)
    assert "你已有 3 个订阅，已达每人上限" in await chat.say("/subscribe NVDA at 09:09", chat=third)


async def test_an_identical_subscribe_is_refused_with_the_existing_one_named(chat: Chat) -> None:
    said = await chat.say("/subscribe NVDA AAPL at 08:00 weekdays")
    [sub] = await chat.subscriptions()
    again = await chat.say("/subscribe AAPL NVDA at 08:00 weekdays")  # same symbols, any order
    assert again == (f"This chat already has that subscription: #{sub.id} (NVDA, AAPL · "
                     f"08:00 America/New_York, weekdays (Mon-Fri)). /subscriptions lists them.")
    assert len(await chat.subscriptions()) == 1 and "Subscribed" in said
    # another time, or a PDF, or another chat is another subscription
    assert "Subscribed (#" in await chat.say("/subscribe NVDA AAPL at 08:00 weekdays pdf")
    assert "Subscribed (#" in await chat.say("/subscribe NVDA AAPL at 08:01 weekdays")
    assert "Subscribed (#" in await chat.say("/subscribe NVDA AAPL at 08:00 weekdays",
                                             chat=OTHER)
    # an unsubscribed one may be made again
    assert f"Unsubscribed #{sub.id}" in await chat.say(f"/unsubscribe {sub.id}")
    assert "Subscribed (#" in await chat.say("/subscribe NVDA AAPL at 08:00 weekdays")
