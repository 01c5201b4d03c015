"""The Discord adapter through the real discord.py client against the local fake (REST +
gateway), with the real App (gateway, renderer, Postgres) and the real `openai` client against
the local OpenAI-compatible fake, or the offline analyst."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.discord import DiscordAdapter
from bot.app import App
from bot.commands import COMMANDS, menu
from bot.settings import load_settings
from core.errors import (
    ConfigError,
    Forbidden,
    InputError,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
)
from core.types import ChatRef, IncomingMessage, OutgoingFile, Reply
from tests.adapters.conftest import (
    AUDIO,
    WORKING,
    discord_adapter,
    inbound_count,
    shows,
    user_texts,
)
from tests.fakes.discord_server import (
    GUILD_CHANNEL_ID,
    FakeDiscord,
    forbidden,
    rate_limited,
    unknown_message,
)
from tests.fakes.openai_server import FakeOpenAI, Turn

DM = 5001  # a DM channel; its user is DM + 1
GUILD = GUILD_CHANNEL_ID
Bare = tuple[DiscordAdapter, list[IncomingMessage]]
AppFactory = Callable[..., Any]


@pytest.fixture(autouse=True)
def _endpoints_restored() -> Iterator[None]:
    """discord.py's REST base and gateway URL are process-global: no test may leak them."""
    before = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    yield
    after = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = before
    assert after == before


@pytest.fixture
async def dc() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        yield fake


@pytest.fixture
def discord_app(pg_dsn: str, tmp_path: Path, dc: FakeDiscord) -> Callable[..., Any]:
    """`async with discord_app(llm=..., adapter={...}) as (app, adapter)`: the App on this
    test's database with the Discord adapter started."""

    @asynccontextmanager
    async def factory(*, llm: FakeOpenAI | None = None, adapter: dict[str, Any] | None = None
                      ) -> AsyncIterator[tuple[App, DiscordAdapter]]:
        model = {"llm_base_url": llm.base_url, "llm_model": "fake-model",
                 "llm_plan": False} if llm is not None else {}
        app = await App.create(load_settings(database_url=pg_dsn, data_dir=tmp_path / "data",
                                             **model))
        try:
            running = discord_adapter(dc, **(adapter or {}))
            # jobs=False: tests fire subscriptions by hand (`app.jobs.due`); a live scheduler
            # would also fire one whose time falls while the test runs (08:00 Shanghai at
            # 00:00 UTC), a second report and a second model call
            await app.start_adapters([running], jobs=False)
            yield app, running
        finally:
            await app.aclose()

    return factory


# --- the must-show paths -----------------------------------------------------------------------


async def test_a_question_gets_one_placeholder_growing_edits_and_the_answer(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    answer = "NVDA closed higher on the day per the snapshot; volume was about average."
    # a data question: the model looks the quote up first
    async with FakeOpenAI([Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                           Turn(text=answer, chunk=9)]) as llm:
        async with discord_app(llm=llm) as (app, _):
            await dc.push(dc.message(DM, "How did NVDA do today?"))
            await dc.wait_for(lambda: dc.texts(DM)[-1:] == [answer])
            await app.gateway.idle()
            stored = await app.db.pool.fetchval(
                "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1")
    [message] = dc.bot_messages(DM)  # one placeholder, edited in place
    assert message.history[0] == WORKING
    assert message.edits >= 2
    assert message.content == stored == answer
    assert user_texts(llm) == ["How did NVDA do today?"] * 2  # the tool call, the answer
    assert [c["name"] for c in dc.bot.commands] == [name for name, _ in COMMANDS]
    zh = dict(menu("zh"))  # the menu in Chinese for Chinese clients
    assert all(c["description_localizations"] == {"zh-CN": zh[c["name"]], "zh-TW": zh[c["name"]]}
               for c in dc.bot.commands)
    assert not dc.calls_of("typing", DM)  # the placeholder shows the work; a post ends typing


async def test_a_5000_character_answer_arrives_split_at_2000_and_complete(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    paragraphs = [f"Paragraph {i}: " + " ".join(f"w{i}x{j}" for j in range(70))
                  for i in range(12)]
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 5000
    async with FakeOpenAI([Turn(text=answer, chunk=1500)]) as llm:
        async with discord_app(llm=llm) as (app, _):
            await dc.push(dc.message(DM, "a long answer please"))
            await dc.wait_for(lambda: shows(dc, DM, paragraphs[-1]))
            await app.gateway.idle()
    texts = dc.texts(DM)
    assert len(texts) >= 3 and all(len(t) <= 2000 for t in texts)
    assert re.sub(r"\s+", " ", " ".join(texts)) == re.sub(r"\s+", " ", answer)
    assert all(any(p in t for t in texts) for p in paragraphs)  # split between paragraphs


async def test_a_chart_request_sends_an_image_attachment(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with discord_app() as (app, _):  # the offline analyst draws from the snapshot
        await dc.push(dc.message(DM, "/chart NVDA 6mo"))
        await dc.wait_for(lambda: any(m.files for m in dc.bot_messages(DM)), within_s=30)
        await app.gateway.idle()
    [image] = [f for m in dc.bot_messages(DM) for f in m.files]
    assert image.data.startswith(b"\x89PNG") and image.filename.endswith(".png")
    assert dc.calls_of("send", DM)[-1].params.get("attachments")  # multipart with the file
    assert dc.texts(DM)[0] != WORKING  # the text answer replaced the placeholder


async def test_a_429_on_the_final_edit_is_waited_out_and_the_final_text_arrives(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    answer = "**Final** answer after a rate limit."
    dc.fail("edit", rate_limited(1.0), when=lambda p: p.get("content") == answer)
    async with FakeOpenAI([Turn(text=answer, chunk=8)]) as llm:
        async with discord_app(llm=llm) as (app, _):
            await dc.push(dc.message(DM, "question"))
            await dc.wait_for(lambda: dc.texts(DM)[-1:] == [answer] and not dc.faults)
            await app.gateway.idle()
    finals = [c for c in dc.calls_of("edit", DM) if c.params.get("content") == answer]
    assert len(finals) == 2  # refused with 429 (with Via), then delivered after retry_after
    assert finals[1].t - finals[0].t >= 0.9
    assert dc.texts(DM) == [answer]


async def test_the_same_message_create_delivered_twice_runs_once(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with FakeOpenAI(default=Turn(text="Answered once.")) as llm:
        async with discord_app(llm=llm) as (app, _):
            event = dc.message(DM, "Are you there?")
            await dc.push(event)
            await dc.push(event)  # the same message id again: a redelivery
            await dc.wait_for(lambda: dc.texts(DM) == ["Answered once."])
            await app.gateway.idle()
            await dc.settle(0.2)
            assert await inbound_count(app) == 1
    assert len(llm.requests) == 1
    assert len(dc.calls_of("send", DM)) == 1


async def test_slash_mode_debate_is_deferred_then_answered_in_the_response(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with discord_app() as (app, _):
        await dc.push(dc.interaction(DM, "mode", "debate"))
        await dc.wait_for(lambda: shows(dc, DM, "Mode set to *debate*"))
        user = await app.store.accounts.user_for("discord", str(DM + 1))
        chat = ChatRef(platform="discord", chat_id=str(DM))
        assert (await app.store.conversations.active(chat, user)).mode == "debate"
    [callback] = dc.calls_of("callback")
    assert callback.params["type"] == 5  # deferred: "is thinking..."
    [response] = dc.bot_messages(DM)
    assert response.via == "interaction" and not response.loading
    assert not dc.calls_of("send")  # the answer filled the deferred response


async def test_a_long_slash_command_run_is_edited_progressively_through_its_webhook(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    answer = "Bull case: data-centre demand. Bear case: valuation. The judge says HOLD."
    async with FakeOpenAI([Turn(text=answer, chunk=7)]) as llm:
        async with discord_app(llm=llm) as (app, _):
            await dc.push(dc.interaction(DM, "fast", "NVDA outlook?"))
            await dc.wait_for(lambda: dc.texts(DM) == [answer])
            await app.gateway.idle()
    [response] = dc.bot_messages(DM)
    assert response.via == "interaction"
    assert response.history[0] == WORKING and response.edits >= 2
    assert len(dc.calls_of("webhook_edit")) == len(response.history)
    assert not dc.calls_of("edit") and user_texts(llm) == ["NVDA outlook?"]


async def test_a_deferred_command_no_reply_takes_is_settled_with_its_echo(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with FakeOpenAI([Turn(text="never shown", latency_s=5)]) as llm:
        async with discord_app(llm=llm) as (app, _):
            await dc.push(dc.message(DM, "a slow question"))
            await dc.wait_for(lambda: dc.texts(DM) == [WORKING])
            await dc.push(dc.interaction(DM, "stop"))  # stops the run, says nothing itself
            await dc.wait_for(lambda: "`/stop`" in dc.texts(DM), within_s=5)
            await app.gateway.idle()
    answer, stop = dc.bot_messages(DM)
    assert answer.via == "channel" and "Stopped" in answer.content
    assert stop.via == "interaction" and stop.history == ["`/stop`"]


async def test_a_slash_command_during_a_split_answer_gets_its_own_deferred_response(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    """A typed question's answer, split in three and more, is being delivered when /help
    comes in the same channel: every piece is a channel message, complete and in order, and
    the help text fills the deferred response. (A question queued behind the long one holds
    the /help reply, as replies keep the messages' order, while the long answer's pieces go.)"""
    paragraphs = [f"Paragraph {i}: " + " ".join(f"w{i}x{j}" for j in range(70))
                  for i in range(12)]
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 5000
    script = [Turn(text=answer, chunk=1500, latency_s=0.5), Turn(text="The short answer.")]
    async with FakeOpenAI(script) as llm:
        async with discord_app(llm=llm) as (app, _):
            await dc.push(dc.message(DM, "a long answer please"))
            await dc.wait_for(lambda: dc.texts(DM) == [WORKING])
            await dc.push(dc.message(DM, "and a short one"))
            await dc.push(dc.interaction(DM, "help"))
            await dc.wait_for(lambda: shows(dc, DM, "The short answer.")
                              and shows(dc, DM, paragraphs[-1])
                              and shows(dc, DM, "financial research"), within_s=15)
            await app.gateway.idle()
            await dc.settle(0.2)
    messages = dc.bot_messages(DM)
    [response] = [m for m in messages if m.via == "interaction"]
    assert "financial research" in response.content and "/help" in response.content
    assert not response.loading and all("Paragraph" not in h for h in response.history)
    assert all(m.via == "channel" for m in messages if m is not response)
    pieces = [m.content for m in messages if "Paragraph" in m.content]  # in id order
    assert len(pieces) >= 3 and all(len(p) <= 2000 for p in pieces)
    assert re.sub(r"\s+", " ", " ".join(pieces)) == re.sub(r"\s+", " ", answer)
    assert [m.content for m in messages if m.via == "channel"][-1] == "The short answer."
    assert not dc.calls_of("followup")


async def test_an_earlier_answers_file_does_not_fill_a_later_commands_deferred_response(
        dc: FakeDiscord) -> None:
    """The chart of a typed question's answer goes out while /help is being answered: it is a
    channel message and the help fills the command's deferred response; a file answering a
    command itself does fill that command's response."""
    adapter = discord_adapter(dc)
    png = b"\x89PNG\r\n\x1a\nchart"
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)
        if message.text == "/help":  # the earlier answer's chart, then this command's reply
            await adapter.send_file(message.chat, OutgoingFile(
                kind="image", filename="nvda.png", data=png, mime_type="image/png",
                caption="NVDA 6mo", in_reply_to=got[0].message_id))
            await adapter.send(message.chat, Reply(text="the help text",
                                                   in_reply_to=message.message_id))
        elif message.text.startswith("/chart"):
            await adapter.send_file(message.chat, OutgoingFile(
                kind="image", filename="aapl.png", data=png, mime_type="image/png",
                caption="AAPL 6mo", in_reply_to=message.message_id))

    await adapter.start(on_message)
    try:
        await dc.push(dc.message(DM, "chart NVDA please"))
        await dc.wait_for(lambda: len(got) == 1)
        await dc.push(dc.interaction(DM, "help"))
        await dc.wait_for(lambda: shows(dc, DM, "the help text"))
        await dc.push(dc.interaction(DM, "chart", "AAPL"))
        await dc.wait_for(lambda: any(f.filename == "aapl.png" for m in dc.bot_messages(DM)
                                      for f in m.files))
        await dc.settle(0.2)
    finally:
        await adapter.aclose()
    # a deferred response is created by the deferral, before anything sent after it
    help_response, nvda, aapl = dc.bot_messages(DM)
    assert nvda.via == "channel" and [f.filename for f in nvda.files] == ["nvda.png"]
    assert help_response.via == "interaction" and help_response.interaction_id is not None
    assert help_response.content == "the help text" and not help_response.files
    assert got[1].message_id == f"i:{help_response.interaction_id}"
    assert aapl.via == "interaction" and [f.filename for f in aapl.files] == ["aapl.png"]
    assert aapl.content == "AAPL 6mo" and not dc.calls_of("send", DM)[1:]


async def test_a_rate_limited_fill_of_a_deferred_response_is_still_settled(
        dc: FakeDiscord) -> None:
    """The reply filling a deferred response meets a 429 discord.py does not wait out (no Via
    header: a Cloudflare block): the pending response goes back in line, and when no retry
    comes in time it gets the echo instead of "is thinking..." for 15 minutes."""
    adapter = discord_adapter(dc)
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)  # queued: answered after the handler returned, as the gateway does

    await adapter.start(on_message)
    try:
        await dc.push(dc.interaction(DM, "help"))
        await dc.wait_for(lambda: bool(got))
        dc.delay("webhook_edit", 2.5)  # the grace for the echo runs out while it is in flight
        dc.fail("webhook_edit", rate_limited(45.0, via=False))
        with pytest.raises(RateLimited):
            await adapter.send(got[0].chat, Reply(text="help", in_reply_to=got[0].message_id))
        await dc.wait_for(lambda: shows(dc, DM, "`/help`"), within_s=6)
    finally:
        await adapter.aclose()
    [response] = dc.bot_messages(DM)
    assert response.via == "interaction" and response.content == "`/help`"


async def test_forged_http_interactions_get_401_and_reach_nothing(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with discord_app(adapter={"interactions_port": 0}) as (app, adapter), \
            aiohttp.ClientSession() as http:
        url = f"http://127.0.0.1:{adapter.interactions_port}/interactions"
        event = dc.interaction(DM, "mode", "debate")
        body = json.dumps(event.data).encode()
        good = dc.sign(body)
        attempts = [
            dc.sign(body, forge=True),  # another key
            dc.sign(b'{"type": 1}'),  # another body
            dc.sign(body, timestamp=str(int(time.time()) - 3600)),  # an old, replayed one
            {"Content-Type": "application/json"},  # unsigned
            {**good, "X-Signature-Ed25519": "zz" * 64},  # not hex
        ]
        calls = len(dc.calls)
        for headers in attempts:
            async with http.post(url, data=body, headers=headers) as resp:
                assert resp.status == 401
        await asyncio.sleep(0.3)
        assert await inbound_count(app) == 0
        assert len(dc.calls) == calls and not dc.bot_messages(DM)


async def test_a_signed_http_interaction_is_processed_once_and_its_replay_refused(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with discord_app(adapter={"interactions_port": 0, "gateway": False}) as (app, adapter):
        url = f"http://127.0.0.1:{adapter.interactions_port}/interactions"
        ping = dc.interaction(DM, "help")
        ping.data["type"] = 1
        assert await dc.deliver_interaction(url, ping) == (200, {"type": 1})
        event = dc.interaction(DM, "mode", "fast")
        body = json.dumps(event.data).encode()
        headers = dc.sign(body)
        assert await dc.deliver_interaction(url, event, headers=headers, body=body) == (
            200, {"type": 5})
        await dc.wait_for(lambda: shows(dc, DM, "Mode set to *fast*"))
        status, _ = await dc.deliver_interaction(url, event, headers=headers, body=body)
        assert status == 401  # the same signature again: a replay
        bad = dc.sign(b"{not json")
        assert (await dc.deliver_interaction(url, event, headers=bad, body=b"{not json"))[0] \
            == 400
        await app.gateway.idle()
        assert await inbound_count(app) == 1
    [response] = dc.bot_messages(DM)
    assert response.via == "interaction" and response.content == "Mode set to *fast*."


async def test_a_link_code_from_telegram_joins_the_discord_account(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with discord_app() as (app, _):
        accounts = app.store.accounts
        telegram_user = await accounts.user_for("telegram", "4242", "Ann")
        code = await accounts.issue_link_code(telegram_user)
        await dc.push(dc.interaction(DM, "link", code))
        await dc.wait_for(lambda: shows(dc, DM, "Linked"))
        assert await accounts.user_for("discord", str(DM + 1)) == telegram_user
        linked = await accounts.accounts_of(telegram_user)
    assert sorted(a.platform for a in linked) == ["discord", "telegram"]
    assert shows(dc, DM, "discord, telegram")


async def test_in_guilds_only_mentions_and_replies_to_the_bot_are_answered(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    async with FakeOpenAI(default=Turn(text="ok")) as llm:
        async with discord_app(llm=llm) as (app, _):
            kw: dict[str, Any] = {"guild": True, "user_id": 77}
            await dc.push(dc.message(GUILD, "just chatting about NVDA", **kw))
            await dc.push(dc.message(GUILD, "what do you think?", mention=True, **kw))
            await dc.wait_for(lambda: dc.texts(GUILD) == ["ok"])
            answer = dc.bot_messages(GUILD)[0].id
            await app.gateway.idle()
            await dc.push(dc.message(GUILD, "and then?", reply_to=answer, **kw))
            await dc.push(dc.message(GUILD, "bots talk too", author_bot=True, mention=True))
            await dc.wait_for(lambda: dc.texts(GUILD) == ["ok", "ok"])
            await app.gateway.idle()
            await dc.settle(0.2)
            assert await inbound_count(app) == 3  # the other bot's message is not taken
    assert user_texts(llm) == ["what do you think?", "and then?"]


# --- the adapter's own translation -------------------------------------------------------------


@pytest.fixture
async def bare(dc: FakeDiscord) -> AsyncIterator[Bare]:
    """The adapter alone (no App): messages are collected as they are translated."""
    adapter = discord_adapter(dc)
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)

    await adapter.start(on_message)
    try:
        yield adapter, got
    finally:
        await adapter.aclose()


async def test_voice_messages_become_voice_attachments_and_download(
        bare: Bare, dc: FakeDiscord) -> None:
    adapter, got = bare
    ogg = b"OggS\x00voice-bytes"
    await dc.push(dc.voice_message(DM, ogg, duration_s=4.0))
    photo = dc.add_file(DM, "chart.png", b"\x89PNG", "image/png")
    await dc.push(dc.message(DM, "look", attachments=[photo]))
    await dc.wait_for(lambda: len(got) == 2)
    voice = got[0].attachments[0]
    assert (voice.kind, voice.mime_type, voice.duration_s, voice.size) == (
        "voice", "audio/ogg", 4.0, len(ogg))
    assert got[0].text == "" and got[1].attachments[0].kind == "image"
    assert await adapter.fetch_attachment(got[0], 0) == ogg
    dc.files.clear()  # expired on the CDN
    with pytest.raises(PlatformError):
        await adapter.fetch_attachment(got[0], 0)
    with pytest.raises(InputError):
        await adapter.fetch_attachment(got[0], 3)


async def test_platform_refusals_map_to_the_core_error_types(bare: Bare, dc: FakeDiscord) -> None:
    adapter, _ = bare
    chat = ChatRef(platform="discord", chat_id=str(DM))
    ref = await adapter.send(chat, Reply(text="**hi** @everyone"))
    assert dc.calls_of("send", DM)[-1].params["allowed_mentions"] == {"parse": []}
    await adapter.edit(ref, Reply(text="2*3 = 6", markup="plain"))
    assert dc.texts(DM) == ["2\\*3 = 6"]  # plain stays plain
    dc.fail("edit", rate_limited(2.0, via=False))  # no Via: discord.py sees a Cloudflare ban
    with pytest.raises(RateLimited) as cloudflare:
        await adapter.edit(ref, Reply(text="x"))
    assert cloudflare.value.retry_after == 2.0
    dc.fail("send", rate_limited(45.0))  # longer than the client waits by itself
    with pytest.raises(RateLimited) as long_wait:
        await adapter.send(chat, Reply(text="x"))
    assert long_wait.value.retry_after == 45.0
    dc.fail("send", forbidden())
    with pytest.raises(Forbidden):
        await adapter.send(chat, Reply(text="x"))
    dc.fail("edit", unknown_message())
    with pytest.raises(PlatformError) as gone:
        await adapter.edit(ref, Reply(text="x"))
    assert type(gone.value) is PlatformError and "unknown message" in str(gone.value)
    with pytest.raises(PlatformError) as long:
        await adapter.send(chat, Reply(text="x" * 2001))
    assert type(long.value) is PlatformError and "50035" in str(long.value)
    for exc in (cloudflare.value, long_wait.value, gone.value, long.value):
        assert dc.token not in str(exc) and "http" not in str(exc)
    await adapter.typing(chat)
    assert dc.calls_of("typing", DM)


async def test_files_go_as_attachments_with_their_caption(bare: Bare, dc: FakeDiscord) -> None:
    adapter, _ = bare
    chat = ChatRef(platform="discord", chat_id=str(DM))
    png = b"\x89PNG\r\n\x1a\nchart"
    await adapter.send_file(chat, OutgoingFile(kind="image", filename="nvda.png", data=png,
                                               mime_type="image/png", caption="NVDA 6mo"))
    await adapter.send_file(chat, OutgoingFile(kind="document", filename="report.pdf",
                                               data=b"%PDF-1.7", caption="x" * 2500))
    sent = [(f.filename, f.data, len(m.content)) for m in dc.bot_messages(DM) for f in m.files]
    assert sent == [("nvda.png", png, 8), ("report.pdf", b"%PDF-1.7", 2000)]


async def test_two_adapters_may_not_point_discord_py_at_different_servers(dc: FakeDiscord) -> None:
    first = discord_adapter(dc)
    second = DiscordAdapter(token=dc.token, api_base_url="http://127.0.0.1:9/api/v10",
                            gateway_url=dc.gateway_url)

    async def on_message(message: IncomingMessage) -> None:
        return None

    await first.start(on_message)
    try:
        assert Route.BASE == dc.api_base_url
        with pytest.raises(ConfigError):
            await second.start(on_message)
        assert Route.BASE == dc.api_base_url  # the failed start released nothing of the first
    finally:
        await first.aclose()
    left = [t for t in asyncio.all_tasks() if not t.done() and "discord" in t.get_name()]
    assert not left


async def test_a_rejected_token_or_key_is_a_config_error_that_does_not_show_it(
        dc: FakeDiscord) -> None:
    adapter = DiscordAdapter(token="not-the-right-token-at-all", api_base_url=dc.api_base_url,
                             gateway_url=dc.gateway_url)

    async def on_message(message: IncomingMessage) -> None:
        return None

    with pytest.raises(ConfigError) as err:
        await adapter.start(on_message)
    assert "not-the-right-token" not in str(err.value)
    with pytest.raises(ConfigError):
        DiscordAdapter(token=dc.token, interactions_port=0)  # no key: the check stays on
    with pytest.raises(ConfigError):
        DiscordAdapter(token=dc.token, public_key="not hex")
    unreachable = DiscordAdapter(token=dc.token, api_base_url="http://127.0.0.1:9/api/v10")
    with pytest.raises(PlatformError) as refused:
        await unreachable.start(on_message)
    assert dc.token not in str(refused.value) and "login" in str(refused.value)


def test_the_gateway_bench_runs_every_side_and_no_forged_interaction_gets_in(
        pg_dsn: str) -> None:
    from bot.benches import gateway_common as common
    from bot.benches import gateway_discord

    # shape only: timings are not asserted (rule 11); this test's database
    result = gateway_discord.run(chats=2, repeat=1, database_url=pg_dsn)
    assert result["ours"]["messages"] == result["peer_result"]["messages"] == 6
    assert result["durable_peer_result"]["messages"] == result["ceiling"]["messages"] == 6
    assert result["ceiling"]["paced"]["messages"] == 4  # the ceiling answered every question
    # 12 questions, and the 10 interactions delivered for real before their replays
    assert result["adapter_only"]["messages"] == 6 and result["persisted"]["inbound_events"] == 22
    assert result["cpu_split"]["our_adapter_alone"] > 0 and "our_core" in result["cpu_split"]
    # the durable peer stored question and reply of all 12 (warm-up 2, closed 6, paced 4)
    assert asyncio.run(common.peer_rows(pg_dsn, platform="discord")) == 2 * 12
    assert result["forged_reached_core"] == 0 and result["forged_statuses"] == {"401": 40}
    assert {"throughput_ratio", "durable_throughput_ratio", "ceiling_ratio", "within_target",
            "peer"} <= result.keys()


async def test_a_voice_message_is_downloaded_through_the_adapter_and_answered(
        discord_app: AppFactory, dc: FakeDiscord) -> None:
    ogg = (AUDIO / "latest_nvda_aapl.ogg").read_bytes()  # "What's the latest on Nvidia and Apple?"
    script = [Turn(tool_calls=[("get_quotes", {"symbols": ["NVDA", "AAPL"]})]),
              Turn(text="Both rose.")]
    async with FakeOpenAI(script) as llm:
        async with discord_app(llm=llm) as (app, _):
            await dc.push(dc.voice_message(DM, ogg, duration_s=3.0))
            # a cold voice pipeline (model, symbols directory) took over 60 s at load 7
            await dc.wait_for(lambda: "Both rose." in dc.texts(DM), within_s=240)
            await app.gateway.idle()
    heard, answer = dc.texts(DM)
    assert heard.startswith("Heard:") and answer == "Both rose."
    question = user_texts(llm)[0]  # transcribed by the bundled Whisper, names corrected
    assert "NVDA" in question and "AAPL" in question
    assert dc.calls_of("download")


def test_a_server_error_or_the_network_is_unavailable_not_a_refusal() -> None:
    """discord.py tries a 5xx five times itself (about 25 s) before it raises, so the mapping
    of what it raises then is checked directly: failed on Discord's side, or not reached, is
    `PlatformUnavailable` (tried again; a placeholder's edit stays an edit); a 4xx is not."""
    from types import SimpleNamespace

    import discord

    from adapters.discord import _error

    def http(status: int, code: int = 0) -> discord.HTTPException:
        return discord.HTTPException(SimpleNamespace(status=status, reason="x"),
                                     {"code": code, "message": "x"})

    assert type(_error("edit", discord.DiscordServerError(
        SimpleNamespace(status=503, reason="x"), "x"))) is PlatformUnavailable
    assert type(_error("edit", http(502))) is PlatformUnavailable
    assert type(_error("send", aiohttp.ServerDisconnectedError())) is PlatformUnavailable
    assert type(_error("send", TimeoutError())) is PlatformUnavailable
    assert type(_error("edit", http(404, 10008))) is PlatformError
    assert type(_error("send", http(400, 50035))) is PlatformError
