"""The Telegram adapter through the real python-telegram-bot Application against the local fake
Bot API, with the real App (gateway, renderer, Postgres) and the real `openai` client against
the local OpenAI-compatible fake, or the offline analyst."""

from __future__ import annotations

import asyncio
import copy
import io
import re
from typing import Any

import aiohttp
import pytest
from rich.console import Console

from adapters.console import ConsoleAdapter
from adapters.telegram import TelegramAdapter
from bot.commands import COMMANDS, menu
from core.errors import (
    ConfigError,
    Forbidden,
    FormattingRejected,
    InputError,
    MessageNotModified,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
    StoreUnavailable,
)
from core.types import Button, ChatRef, IncomingMessage, OutgoingFile, Reply
from tests.adapters.conftest import (
    AUDIO,
    WORKING,
    inbound_count,
    shows,
    telegram_adapter,
    user_texts,
)
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.fakes.telegram_server import (
    ApiError,
    FakeTelegram,
    blocked,
    cant_parse,
    rate_limited,
)

CHAT = 1001
GROUP = -100777


# --- the must-show paths -----------------------------------------------------------------------


async def test_a_question_gets_one_placeholder_growing_edits_and_the_core_answer(
        telegram_app, tg):
    answer = "NVDA closed higher on the day per the snapshot; volume was about average."
    # a data question: the model looks the quote up first
    async with FakeOpenAI([Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                           Turn(text=answer, chunk=9)]) as llm:
        async with telegram_app(llm=llm) as (app, _):
            tg.push(tg.message(CHAT, "How did NVDA do today?"))
            await tg.wait_for(lambda: tg.texts(CHAT)[-1:] == [answer])
            await app.gateway.idle()
            stored = await app.db.pool.fetchval(
                "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1")
    [message] = tg.bot_messages(CHAT)  # one placeholder, edited in place
    assert message.history[0] == WORKING
    assert message.edits >= 2
    assert message.text == stored == answer
    assert user_texts(llm) == ["How did NVDA do today?"] * 2  # the tool call, the answer
    assert [c["command"] for c in tg.commands] == [name for name, _ in COMMANDS]
    assert [(c["command"], c["description"]) for c in tg.localized_commands["zh"]] == menu("zh")


async def test_mode_debate_persists_across_a_restart_and_buttons_switch_it(telegram_app, tg):
    async with telegram_app():
        tg.push(tg.message(CHAT, "/mode debate"))
        await tg.wait_for(lambda: shows(tg, CHAT, "Mode set to debate"))
    async with telegram_app() as (app, _):
        tg.push(tg.message(CHAT, "/mode"))
        await tg.wait_for(lambda: shows(tg, CHAT, "Current mode: debate"))
        menu = tg.bot_messages(CHAT)[-1]
        buttons = [b["callback_data"] for row in menu.reply_markup["inline_keyboard"]
                   for b in row]
        assert buttons == ["mode:normal", "mode:fast", "mode:debate"]
        press = tg.push(tg.callback(CHAT, menu.message_id, "mode:fast"))
        await tg.wait_for(lambda: shows(tg, CHAT, "Mode set to fast"))
        user = await app.store.accounts.user_for("telegram", str(CHAT))
        chat = ChatRef(platform="telegram", chat_id=str(CHAT))
        assert (await app.store.conversations.active(chat, user)).mode == "fast"
    assert [a["callback_query_id"] for a in tg.answered] == [press["callback_query"]["id"]]


async def test_a_chart_request_sends_a_photo(telegram_app, tg):
    async with telegram_app() as (app, _):  # the offline analyst draws from the snapshot
        tg.push(tg.message(CHAT, "/chart NVDA 6mo"))
        await tg.wait_for(lambda: any(m.kind == "photo" for m in tg.bot_messages(CHAT)),
                          within_s=30)
        await app.gateway.idle()
    photo = next(m for m in tg.bot_messages(CHAT) if m.kind == "photo")
    assert photo.data.startswith(b"\x89PNG") and photo.filename.endswith(".png")
    assert tg.texts(CHAT)[0] != WORKING  # the text answer replaced the placeholder


async def test_a_429_on_the_final_edit_is_waited_out_and_the_final_text_arrives(
        telegram_app, tg):
    answer = "Final answer after a flood wait."
    tg.fail("editMessageText", rate_limited(1), when=lambda p: p.get("parse_mode") is None)
    tg.fail("editMessageText", rate_limited(1),
            when=lambda p: p.get("parse_mode") == "HTML" and p.get("text") == answer)
    async with FakeOpenAI([Turn(text=answer, chunk=8)]) as llm:
        async with telegram_app(llm=llm) as (app, _):
            tg.push(tg.message(CHAT, "question"))
            await tg.wait_for(lambda: tg.texts(CHAT)[-1:] == [answer] and not tg.faults)
            await app.gateway.idle()
    finals = [c for c in tg.calls_of("editMessageText", CHAT)
              if c.params.get("parse_mode") == "HTML"]
    assert len(finals) == 2  # refused with 429, then delivered after retry_after
    assert finals[1].t - finals[0].t >= 0.9
    assert tg.texts(CHAT) == [answer]


async def test_a_9000_character_answer_arrives_split_and_complete(telegram_app, tg):
    paragraphs = [f"Paragraph {i}: " + " ".join(f"w{i}x{j}" for j in range(75))
                  for i in range(20)]
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 9000
    async with FakeOpenAI([Turn(text=answer, chunk=1500)]) as llm:
        async with telegram_app(llm=llm) as (app, _):
            tg.push(tg.message(CHAT, "a long answer please"))
            await tg.wait_for(lambda: shows(tg, CHAT, paragraphs[-1]))
            await app.gateway.idle()
    texts = tg.texts(CHAT)
    assert len(texts) >= 3 and all(len(t) <= 4096 for t in texts)
    assert re.sub(r"\s+", " ", " ".join(texts)) == re.sub(r"\s+", " ", answer)
    assert all(any(p in t for t in texts) for p in paragraphs)  # split between paragraphs


async def test_a_markdown_answer_telegram_rejects_still_arrives_as_plain_text(telegram_app, tg):
    tg.fail("editMessageText", cant_parse(), times=5,
            when=lambda p: p.get("parse_mode") == "HTML")
    async with FakeOpenAI([Turn(text="**NVDA** rose `sharply` today.")]) as llm:
        async with telegram_app(llm=llm) as (app, _):
            tg.push(tg.message(CHAT, "In a word?"))
            await tg.wait_for(lambda: tg.texts(CHAT)[-1:] == ["NVDA rose sharply today."])
            await app.gateway.idle()
    [message] = tg.bot_messages(CHAT)
    assert message.parse_mode is None and message.text == "NVDA rose sharply today."
    assert tg.faults[0].times == 4  # exactly one HTML attempt was refused


async def test_valid_markdown_arrives_as_telegram_html(telegram_app, tg):
    async with FakeOpenAI([Turn(text="**NVDA** < $x & `RSI` [src](https://x.org/a?b=1)")]) \
            as llm:
        async with telegram_app(llm=llm) as (app, _):
            tg.push(tg.message(CHAT, "In a word?"))
            await tg.wait_for(lambda: shows(tg, CHAT, "NVDA < $x & RSI src"))
            await app.gateway.idle()
    [message] = tg.bot_messages(CHAT)
    assert message.parse_mode == "HTML"
    assert [e[0] for e in message.entities] == ["b", "code", "a"]


async def test_the_same_update_delivered_twice_runs_once(telegram_app, tg):
    async with FakeOpenAI(default=Turn(text="Answered once.")) as llm:
        async with telegram_app(llm=llm) as (app, _):
            update = tg.message(CHAT, "Are you there?")
            tg.push(update)
            tg.push(copy.deepcopy(update))  # the same update_id again: a redelivery
            await tg.wait_for(lambda: tg.texts(CHAT) == ["Answered once."])
            await app.gateway.idle()
            await tg.settle(0.2)
            assert await inbound_count(app) == 1
    assert len(llm.requests) == 1
    assert len(tg.calls_of("sendMessage", CHAT)) == 1


async def test_webhook_checks_the_secret_before_anything_else(telegram_app, tg):
    hook = {"webhook_url": "https://bot.example.com/tg/hook", "webhook_secret": "s3cret-Token",
            "webhook_port": 0}
    async with FakeOpenAI(default=Turn(text="Via webhook.")) as llm:
        async with telegram_app(llm=llm, adapter=hook) as (app, adapter), \
                aiohttp.ClientSession() as http:
            assert tg.webhook == {"url": hook["webhook_url"], "secret_token": "s3cret-Token",
                                  "allowed_updates": ["message", "edited_message",
                                                      "callback_query"]}
            url = f"http://127.0.0.1:{adapter.webhook_port}/tg/hook"
            update = {"update_id": 5001, **tg.message(CHAT, "hello through the webhook")}
            for headers in ({"X-Telegram-Bot-Api-Secret-Token": "wrong"}, {}):
                async with http.post(url, json=update, headers=headers) as resp:
                    assert resp.status == 401
            await asyncio.sleep(0.2)
            assert await inbound_count(app) == 0 and not llm.requests
            assert not tg.bot_messages(CHAT)

            ok = {"X-Telegram-Bot-Api-Secret-Token": "s3cret-Token"}
            for _ in range(2):  # Telegram retries a delivery it is unsure of
                async with http.post(url, json=update, headers=ok) as resp:
                    assert resp.status == 200
            async with http.post(url, data=b"not json", headers=ok) as resp:
                assert resp.status == 400
            await tg.wait_for(lambda: tg.texts(CHAT) == ["Via webhook."])
            await app.gateway.idle()
            assert await inbound_count(app) == 1
    assert len(llm.requests) == 1


@pytest.mark.parametrize("insecure", [False, True])
async def test_webhook_without_a_secret_gets_a_generated_one_unless_turned_off(tg, insecure):
    adapter = telegram_adapter(tg, webhook_url="https://bot.example.com/hook", webhook_port=0,
                               webhook_insecure=insecure)
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)

    await adapter.start(on_message)
    try:
        secret = tg.webhook["secret_token"]
        url = f"http://127.0.0.1:{adapter.webhook_port}/hook"
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json={"update_id": 1, **tg.message(CHAT, "hi")}) as resp:
                assert resp.status == (200 if insecure else 401)
            if not insecure:
                assert secret and len(secret) >= 32
                async with http.post(url, json={"update_id": 2, **tg.message(CHAT, "hi")},
                                     headers={"X-Telegram-Bot-Api-Secret-Token": secret}) as resp:
                    assert resp.status == 200
            else:
                assert secret is None
        await tg.wait_for(lambda: len(got) == 1, within_s=5)
    finally:
        await adapter.aclose()
    assert got[0].text == "hi"


async def test_link_from_the_console_then_the_code_from_telegram_joins_the_accounts(
        telegram_app, tg, tmp_path):
    async with telegram_app() as (app, _):
        out = io.StringIO()
        console = ConsoleAdapter(files_dir=tmp_path, user="local", stdin=io.StringIO("/link\n"),
                                 console=Console(file=out, width=200))
        await app.start_adapters([console])
        await asyncio.wait_for(console.closed.wait(), 10)
        # the console's input ends once /link is handed over, its answer comes after (at a
        # load of 10 the console was closed before the code was printed)
        await tg.wait_for(lambda: "link code is" in out.getvalue())
        await console.aclose()
        code = re.search(r"link code is (\d{8})", out.getvalue()).group(1)
        tg.push(tg.message(CHAT, f"/link {code}"))
        await tg.wait_for(lambda: shows(tg, CHAT, "Linked"))
        user = await app.store.accounts.user_for("console", "local")
        assert user == await app.store.accounts.user_for("telegram", str(CHAT))
        accounts = await app.store.accounts.accounts_of(user)
    assert sorted(a.platform for a in accounts) == ["console", "telegram"]
    assert shows(tg, CHAT, "console, telegram")


# --- chats, groups, ordering -------------------------------------------------------------------


async def test_in_groups_only_messages_addressed_to_the_bot_are_answered(telegram_app, tg):
    async with FakeOpenAI(default=Turn(text="ok")) as llm:
        async with telegram_app(llm=llm) as (app, _):
            me = f"@{tg.username}"
            kw: dict[str, Any] = {"user_id": 5, "chat_type": "supergroup"}
            tg.push(tg.message(GROUP, "just chatting about NVDA", **kw))
            tg.push(tg.message(GROUP, "/help@some_other_bot", **kw))
            tg.push(tg.message(GROUP, f"{me} what do you think?", **kw,
                               entities=[{"type": "mention", "offset": 0,
                                          "length": len(me)}]))
            await tg.wait_for(lambda: tg.texts(GROUP) == ["ok"])
            answer = tg.bot_messages(GROUP)[0].message_id
            tg.push(tg.message(GROUP, "and then?", reply_to=answer, **kw))
            tg.push(tg.message(GROUP, f"/help@{tg.username}", **kw))
            await tg.wait_for(lambda: len(tg.texts(GROUP)) == 3)
            await app.gateway.idle()
            await tg.settle(0.2)
            assert await inbound_count(app) == 5  # every message is recorded
    assert user_texts(llm) == ["what do you think?", "and then?"]
    texts = tg.texts(GROUP)  # the help reply may come before or after the second answer
    assert texts.count("ok") == 2
    assert [t for t in texts if "/mode" in t] == [t for t in texts if t != "ok"] != []


async def test_a_chats_messages_are_answered_in_order_while_other_chats_go_ahead(
        telegram_app, tg):
    other = CHAT + 1
    tg.delay("sendMessage", 1.0, when=lambda p: p.get("chat_id") == CHAT
             and "/mode" in p.get("text", ""))  # the help text for this chat is slow
    async with FakeOpenAI(default=Turn(text="ok")) as llm:
        async with telegram_app(llm=llm) as (app, _):
            for text in ("/help", "q1", "q2", "q3"):
                tg.push(tg.message(CHAT, text))
            tg.push(tg.message(other, "/help"))
            await tg.wait_for(lambda: bool(tg.texts(other)))
            assert not tg.texts(CHAT)  # the slow chat does not hold up the other one
            await tg.wait_for(lambda: tg.texts(CHAT)[-3:] == ["ok"] * 3, within_s=15)
            await app.gateway.idle()
    assert user_texts(llm) == ["q1", "q2", "q3"]
    assert "/mode" in tg.texts(CHAT)[0]


# --- bad input ---------------------------------------------------------------------------------


async def test_a_50000_character_message_gets_a_clear_refusal_and_nothing_sticks(
        telegram_app, tg):
    async with telegram_app() as (app, _):
        tg.push(tg.message(CHAT, "x" * 50_000))
        await tg.wait_for(lambda: shows(tg, CHAT, "50,000 characters"))
        tg.push(tg.message(CHAT, "/help"))
        await tg.wait_for(lambda: shows(tg, CHAT, "/mode"))
        await app.gateway.idle()
        payload = await app.db.pool.fetchval(
            "SELECT payload FROM inbound_events ORDER BY id LIMIT 1")
    assert len(payload["text"]) <= 2000


async def test_a_sticker_and_an_unsupported_file_get_a_polite_refusal(telegram_app, tg):
    sticker = {"file_id": "STK1", "file_unique_id": "s1", "type": "regular", "width": 512,
               "height": 512, "is_animated": False, "is_video": False}
    exe = {"file_id": "DOC1", "file_unique_id": "d1", "file_name": "setup.exe",
           "mime_type": "application/x-msdownload", "file_size": 1234}
    async with telegram_app() as (app, _):
        tg.push(tg.message(CHAT, sticker=sticker))
        tg.push(tg.message(CHAT, document=exe))
        await tg.wait_for(lambda: len(tg.texts(CHAT)) == 2)
        tg.push(tg.message(CHAT, "/help"))  # nothing is stuck
        await tg.wait_for(lambda: len(tg.texts(CHAT)) == 3)
        await app.gateway.idle()
    refusals = tg.texts(CHAT)[:2]  # no text: the voice pipeline says what it can read
    assert all(t.startswith("I can read text and voice notes") for t in refusals)
    assert not tg.calls_of("getFile")  # nothing was downloaded


async def test_an_edited_message_is_recorded_but_not_answered_again(telegram_app, tg):
    async with FakeOpenAI(default=Turn(text="first answer")) as llm:
        async with telegram_app(llm=llm) as (app, _):
            original = tg.message(CHAT, "Hello there?")
            tg.push(original)
            await tg.wait_for(lambda: tg.texts(CHAT) == ["first answer"])
            await app.gateway.idle()
            calls = len(tg.calls)
            tg.push(tg.edited(original, "Hello again?"))
            for _ in range(250):  # the edit is recorded ...
                if await inbound_count(app) == 2:
                    break
                await asyncio.sleep(0.02)
            await app.gateway.idle()
            await tg.settle(0.3)  # ... and nothing is sent for it
            edits = await app.db.pool.fetch(
                "SELECT message_id, payload FROM inbound_events ORDER BY id")
    assert len(llm.requests) == 1 and len(tg.calls) == calls
    assert [r["payload"]["edit"] for r in edits] == [False, True]
    assert edits[1]["message_id"].startswith(f"{original['message']['message_id']}:edit:")


async def test_a_user_who_blocked_the_bot_leaves_nothing_stuck(telegram_app, tg):
    async with FakeOpenAI(default=Turn(text="answer")) as llm:
        async with telegram_app(llm=llm) as (app, _):
            tg.block(CHAT)
            tg.push(tg.message(CHAT, "question while blocked"))
            tg.push(tg.message(CHAT, "/help"))
            await tg.wait_for(lambda: len(tg.calls_of("sendMessage", CHAT)) == 2)
            await asyncio.wait_for(app.gateway.idle(), 5)
            assert not tg.bot_messages(CHAT)
            tg.blocked.clear()  # unblocked: the chat works again
            tg.push(tg.message(CHAT, "question after unblocking"))
            await tg.wait_for(lambda: tg.texts(CHAT) == ["answer"])
            await app.gateway.idle()
    assert len(tg.calls_of("editMessageText", CHAT)) >= 1
    assert user_texts(llm)[-1] == "question after unblocking"


# --- the adapter's own translation -------------------------------------------------------------


@pytest.fixture
async def bare(tg: FakeTelegram):
    """The adapter alone (no App): updates are collected as they are translated."""
    adapter = telegram_adapter(tg)
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)

    await adapter.start(on_message)
    try:
        yield adapter, got
    finally:
        await adapter.aclose()


async def test_voice_notes_become_attachments_and_download_without_leaking_the_token(bare, tg):
    adapter, got = bare
    data = b"OggS\x00voice-bytes"
    fid = tg.add_file(data, "voice/file_7.oga")
    lost = tg.add_file(b"expired", "voice/file_8.oga")
    tg.lose(lost)
    for file_id in (fid, "UNKNOWN", lost):
        tg.push(tg.message(CHAT, voice={"file_id": file_id, "file_unique_id": file_id,
                                        "duration": 4, "mime_type": "audio/ogg",
                                        "file_size": len(data)}))
    await tg.wait_for(lambda: len(got) == 3)
    voice = got[0].attachments[0]
    assert (voice.kind, voice.file_id, voice.mime_type, voice.duration_s, voice.size) == (
        "voice", fid, "audio/ogg", 4.0, len(data))
    assert await adapter.fetch_attachment(got[0], 0) == data
    errors = []
    for message in got[1:]:  # getFile refuses; getFile answers but the download 404s
        with pytest.raises(PlatformError) as failed:
            await adapter.fetch_attachment(message, 0)
        errors.append(str(failed.value))
    with pytest.raises(InputError):
        await adapter.fetch_attachment(got[0], 3)
    assert all(tg.token not in e and "http" not in e and "file_8" not in e for e in errors)


class Outage:
    """A gateway that cannot store the message `text` the first `refusals` times."""

    def __init__(self, refusals: int, text: str) -> None:
        self.refusals, self.text = refusals, text
        self.handed: list[str] = []
        self.stored: list[str] = []

    async def __call__(self, message: IncomingMessage) -> None:
        self.handed.append(message.text)
        if message.text == self.text and self.refusals > 0:
            self.refusals -= 1
            raise StoreUnavailable("the database is unreachable")
        self.stored.append(message.text)


async def test_an_update_that_could_not_be_stored_is_not_confirmed_and_comes_again(tg):
    """Polling: the offset stays at an update the gateway could not store, so Telegram keeps
    it and it is handed on again; updates after it are handed on once."""
    adapter = telegram_adapter(tg)
    outage = Outage(refusals=2, text="during the outage")
    await adapter.start(outage)
    try:
        first = tg.push(tg.message(CHAT, "during the outage"))
        tg.push(tg.message(CHAT + 1, "another chat"))
        await tg.wait_for(lambda: "during the outage" in outage.stored, within_s=30)
        await tg.wait_for(lambda: tg.pending_updates() == 0, within_s=30)
    finally:
        await adapter.aclose()
    assert outage.handed.count("during the outage") == 3  # refused twice, then stored
    assert outage.stored.count("during the outage") == 1
    assert outage.handed.count("another chat") == 1
    assert first["update_id"] < tg.confirmed_offset()


async def test_a_process_that_dies_with_an_update_in_hand_leaves_it_to_the_next(tg):
    """An update handed on but not yet stored when the adapter stops is not confirmed: the
    next poller gets it."""
    stop = asyncio.Event()
    handed: list[str] = []

    async def stuck(message: IncomingMessage) -> None:
        handed.append(message.text)
        await stop.wait()  # the database hangs

    adapter = telegram_adapter(tg)
    await adapter.start(stuck)
    tg.push(tg.message(CHAT, "in hand"))
    await tg.wait_for(lambda: handed == ["in hand"], within_s=30)
    assert tg.pending_updates() == 1  # not confirmed
    stop.set()
    await adapter.aclose()


async def test_an_update_in_hand_is_parsed_once_however_often_polls_bring_it_again(tg):
    """While an update is in hand the offset stays before it, so every poll brings it and all
    after it again: only the updates handed on are turned into PTB objects (a burst of new
    chats parsed each ~8 times)."""
    stop = asyncio.Event()
    handed: list[str] = []

    async def slow(message: IncomingMessage) -> None:
        handed.append(message.text)
        if message.text == "first":
            await stop.wait()  # in hand: its store is slow

    adapter = telegram_adapter(tg)
    await adapter.start(slow)
    try:
        tg.push(tg.message(CHAT, "first"))
        await tg.wait_for(lambda: handed == ["first"], within_s=30)
        polls = tg.polls
        tg.push(tg.message(CHAT + 1, "second"))  # another chat: handled meanwhile
        await tg.wait_for(lambda: "second" in handed and tg.polls >= polls + 3, within_s=30)
        assert tg.pending_updates() == 2  # both brought again by every poll since
        assert adapter.updates_parsed == 2
    finally:
        stop.set()
        await adapter.aclose()
    assert handed == ["first", "second"]


async def test_webhook_answers_503_for_an_update_that_could_not_be_stored(tg):
    adapter = telegram_adapter(tg, webhook_url="https://bot.example.com/hook", webhook_port=0,
                               webhook_secret="s3cret-Token")
    outage = Outage(refusals=1, text="webhook during the outage")
    await adapter.start(outage)
    try:
        url = f"http://127.0.0.1:{adapter.webhook_port}/hook"
        headers = {"X-Telegram-Bot-Api-Secret-Token": "s3cret-Token"}
        update = {"update_id": 77, **tg.message(CHAT, "webhook during the outage")}
        async with aiohttp.ClientSession() as http:
            async with http.post(url, json=update, headers=headers) as resp:
                assert resp.status == 503  # Telegram delivers it again later
            async with http.post(url, json=update, headers=headers) as resp:
                assert resp.status == 200
    finally:
        await adapter.aclose()
    assert outage.handed == ["webhook during the outage"] * 2
    assert outage.stored == ["webhook during the outage"]


async def test_platform_refusals_map_to_the_core_error_types(bare, tg):
    adapter, _ = bare
    chat = ChatRef(platform="telegram", chat_id=str(CHAT))
    ref = await adapter.send(chat, Reply(text="<b>hi</b>",
                                         buttons=[[Button(label="Fast", data="mode:fast")]]))
    message = tg.find(CHAT, int(ref.message_id))
    assert message.text == "hi" and message.parse_mode == "HTML"
    assert message.reply_markup == {"inline_keyboard": [[{"text": "Fast",
                                                          "callback_data": "mode:fast"}]]}
    with pytest.raises(MessageNotModified):
        await adapter.edit(ref, Reply(text="<b>hi</b>",
                                      buttons=[[Button(label="Fast", data="mode:fast")]]))
    tg.fail("editMessageText", rate_limited(3))
    with pytest.raises(RateLimited) as limited:
        await adapter.edit(ref, Reply(text="x", markup="plain"))
    assert limited.value.retry_after == 3
    with pytest.raises(FormattingRejected):
        await adapter.send(chat, Reply(text="<b>unclosed"))
    tg.fail("sendMessage", ApiError(500, "Internal Server Error"))
    with pytest.raises(PlatformUnavailable) as other:  # failed on its side: try again
        await adapter.send(chat, Reply(text="x", markup="plain"))
    tg.fail("editMessageText", ApiError(400, "Bad Request: message to edit not found"))
    with pytest.raises(PlatformError) as gone:  # refused: not to be tried again
        await adapter.edit(ref, Reply(text="x", markup="plain"))
    assert type(gone.value) is PlatformError
    tg.fail("sendMessage", blocked())
    with pytest.raises(Forbidden):
        await adapter.send(chat, Reply(text="x", markup="plain"))
    for exc in (limited.value, other.value):
        assert tg.token not in str(exc)
    await adapter.typing(chat)
    assert tg.calls_of("sendChatAction", CHAT)[-1].params["action"] == "typing"


async def test_files_go_as_photos_or_documents(bare, tg):
    adapter, _ = bare
    chat = ChatRef(platform="telegram", chat_id=str(CHAT))
    png = b"\x89PNG\r\n\x1a\nchart"
    await adapter.send_file(chat, OutgoingFile(kind="image", filename="nvda.png", data=png,
                                               mime_type="image/png", caption="NVDA 6mo"))
    await adapter.send_file(chat, OutgoingFile(kind="document", filename="report.pdf",
                                               data=b"%PDF-1.7", caption="x" * 2000))
    tg.fail("sendPhoto", ApiError(400, "Bad Request: PHOTO_INVALID_DIMENSIONS"))
    await adapter.send_file(chat, OutgoingFile(kind="image", filename="wide.png", data=png))
    kinds = [(m.kind, m.filename, m.data, len(m.caption)) for m in tg.bot_messages(CHAT)]
    assert kinds == [("photo", "nvda.png", png, 8), ("document", "report.pdf", b"%PDF-1.7", 1024),
                     ("document", "wide.png", png, 0)]


async def test_callbacks_edits_and_service_messages_translate(bare, tg):
    _, got = bare
    sent = tg.push(tg.message(CHAT, "hello"))
    tg.push(tg.edited(sent, "hello, edited"))
    tg.push(tg.message(CHAT, new_chat_title="renamed"))  # a service message: nothing for us
    tg.push(tg.callback(CHAT, sent["message"]["message_id"], "mode:debate"))
    tg.push(tg.message(CHAT, location={"latitude": 1.0, "longitude": 2.0}))
    await tg.wait_for(lambda: len(got) == 4)
    text, edit, press, location = got
    assert (text.text, text.is_edit, text.addressed) == ("hello", False, True)
    assert edit.is_edit and edit.text == "hello, edited" and edit.message_id != text.message_id
    assert press.callback_data == "mode:debate" and press.message_id.startswith("cb:")
    assert [a.kind for a in location.attachments] == ["other"]
    await tg.wait_for(lambda: len(tg.answered) == 1)


async def test_a_rejected_token_is_a_config_error_that_does_not_show_it(tg):
    adapter = TelegramAdapter(token="123:not-the-right-token-at-all-000", base_url=tg.base_url)

    async def on_message(message: IncomingMessage) -> None:
        return None

    with pytest.raises(ConfigError) as err:
        await adapter.start(on_message)
    await adapter.aclose()
    assert "not-the-right-token" not in str(err.value)


async def test_a_failed_start_stops_what_it_started_and_names_no_secret(tg):
    tg.fail("deleteWebhook", ApiError(500, "Internal Server Error"))
    adapter = telegram_adapter(tg)

    async def on_message(message: IncomingMessage) -> None:
        return None

    with pytest.raises(PlatformError) as failed:
        await adapter.start(on_message)
    assert tg.token not in str(failed.value)
    left = [t.get_name() for t in asyncio.all_tasks() if not t.done()
            and t.get_name().startswith(("Application", "Updater"))]
    assert not left  # the Application it had started is stopped again
    unreachable = TelegramAdapter(token=tg.token, base_url="http://127.0.0.1:9/bot")
    with pytest.raises(PlatformError) as refused:
        await unreachable.start(on_message)
    assert tg.token not in str(refused.value) and "getMe" in str(refused.value)


def test_the_gateway_bench_runs_every_side_and_the_durable_peer_stores_every_message(
        pg_dsn):
    from bot.benches import gateway
    from bot.benches import gateway_common as common

    # shape only: timings are not asserted (rule 11); this test's database, not an embedded one
    result = gateway.run(chats=2, repeat=2, database_url=pg_dsn)
    closed = 2 * 2 * 3  # chats × rounds × messages per chat
    assert result["ours"]["messages"] == result["peer_result"]["messages"] == closed
    assert result["durable_peer_result"]["messages"] == result["ceiling"]["messages"] == closed
    assert result["adapter_only"]["messages"] == closed  # our adapter alone, echoing
    split = result["cpu_split"]  # our core's CPU beside what persisting costs the durable peer
    assert split["our_core"] == pytest.approx(split["ours"] - split["our_adapter_alone"], abs=0.01)
    assert split["durable_peer_persistence"] == pytest.approx(
        split["durable_peer"] - split["echo_peer"], abs=0.01)
    asked = 2 + closed + 2 * 2 * 2  # warm-up, closed loop, paced (chats × rounds × 2)
    assert result["ceiling"]["paced"]["messages"] == 2 * 2 * 2  # every question answered
    assert result["persisted"] == {"inbound_events": asked, "messages": 2 * asked}
    # the durable peer stored question and reply of every message
    assert asyncio.run(common.peer_rows(pg_dsn, platform="telegram")) == 2 * asked
    assert len(result["ours"]["messages_per_s_rounds"]) == 2
    assert result["ratio_reads"].startswith("ours / peer") and len(result["load_average"]) == 3
    assert "aiohttp" in result["peer"] and "no SDK" in result["ceiling_about"]
    assert {"throughput_ratio", "durable_throughput_ratio", "ceiling_ratio", "ceiling_reads",
            "within_target"} <= result.keys()
    for side in ("ours", "peer_result", "durable_peer_result", "ceiling"):  # each round's CPU
        cpu = result[side]["cpu_ms_per_message"]
        assert len(cpu["process_rounds"]) == 2 and cpu["process"] > 0
    assert result["cpu_per_message_ratio"]["process"] > 0
    assert result["durable_cpu_per_message_ratio"]["reads"].endswith("lower is better for Bullpen")


async def test_a_voice_note_is_downloaded_through_the_adapter_and_answered(telegram_app, tg):
    ogg = (AUDIO / "latest_nvda_aapl.ogg").read_bytes()  # "What's the latest on Nvidia and Apple?"
    fid = tg.add_file(ogg, "voice/file_1.oga")
    script = [Turn(tool_calls=[("get_quotes", {"symbols": ["NVDA", "AAPL"]})]),
              Turn(text="Both rose.")]
    async with FakeOpenAI(script) as llm:
        async with telegram_app(llm=llm) as (app, _):
            tg.push(tg.message(CHAT, voice={"file_id": fid, "file_unique_id": "v1",
                                            "duration": 3, "mime_type": "audio/ogg",
                                            "file_size": len(ogg)}))
            await tg.wait_for(lambda: "Both rose." in tg.texts(CHAT), within_s=60)
            await app.gateway.idle()
    heard, answer = tg.texts(CHAT)
    assert heard.startswith("Heard:") and answer == "Both rose."
    question = user_texts(llm)[0]  # transcribed by the bundled Whisper, names corrected
    assert "NVDA" in question and "AAPL" in question
