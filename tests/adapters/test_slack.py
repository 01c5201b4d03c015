"""The Slack adapter through the real slack-bolt AsyncApp and slack-sdk clients against the local
fake Slack (Web API, upload host, file host, Socket Mode), with the real App (gateway,
renderer, Postgres) and the real `openai` client against the local OpenAI-compatible fake, or
the offline analyst. Events reach the adapter signed over HTTP, or over the Socket Mode socket."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from adapters.slack import SlackAdapter
from bot.app import App
from bot.settings import load_settings
from core.errors import (
    ConfigError,
    Forbidden,
    FormattingRejected,
    InputError,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
)
from core.types import Button, ChatRef, IncomingMessage, OutgoingFile, Reply
from tests.adapters.conftest import (
    WORKING,
    inbound_count,
    shows,
    slack_adapter,
    user_texts,
)
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.fakes.slack_server import BOT_USER, ApiError, FakeSlack, rate_limited, sign

DM = "D0ALICE"
CHANNEL = "C0MARKETS"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
def slack_app(pg_dsn: str, tmp_path: Path, slack: FakeSlack) -> Callable[..., Any]:
    """`async with slack_app(llm=..., adapter={...}) as (app, adapter, url)`: an App on this
    test's database (the same one on every call: a restart) with the adapter started; `url` is
    its events endpoint (None in Socket Mode)."""

    @asynccontextmanager
    async def factory(*, llm: Any = None, adapter: dict[str, Any] | None = None,
                      ) -> AsyncIterator[tuple[App, SlackAdapter, str | None]]:
        overrides: dict[str, Any] = {}
        if llm is not None:
            overrides = {"llm_base_url": llm.base_url, "llm_model": "fake-model",
                         "llm_plan": False}
        settings = load_settings(database_url=pg_dsn, data_dir=tmp_path / "data", **overrides)
        app = await App.create(settings)
        try:
            started = slack_adapter(slack, **(adapter or {}))
            # jobs=False: tests fire subscriptions by hand (`app.jobs.due`); a live scheduler
            # would also fire one whose time falls while the test runs (08:00 Shanghai at
            # 00:00 UTC), a second report and a second model call
            await app.start_adapters([started], jobs=False)
            url = (f"http://127.0.0.1:{started.events_port}/slack/events"
                   if started.events_port else None)
            yield app, started, url
        finally:
            await app.aclose()

    return factory


async def post_ok(slack: FakeSlack, url: str | None, body: dict[str, Any], **kw: Any) -> None:
    assert url is not None
    status, text = await slack.post(url, body, **kw)
    assert status == 200, text


# --- the must-show paths -----------------------------------------------------------------------


async def test_a_question_gets_one_placeholder_growing_updates_and_the_core_answer(
        slack_app, slack):
    answer = "NVDA closed higher on the day per the snapshot; volume was about average."
    # a data question: the model looks the quote up first
    async with FakeOpenAI([Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                           Turn(text=answer, chunk=9)]) as llm:
        async with slack_app(llm=llm) as (app, _, url):
            await post_ok(slack, url, slack.envelope(slack.message(DM, "How did NVDA do?")))
            await slack.wait_for(lambda: slack.texts(DM)[-1:] == [answer])
            await app.gateway.idle()
            stored = await app.db.pool.fetchval(
                "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1")
    [message] = slack.bot_messages(DM)  # one placeholder, updated in place, not threaded
    assert message.history[0] == WORKING and message.thread_ts is None
    assert message.edits >= 2
    assert message.text == stored == answer
    assert user_texts(llm) == ["How did NVDA do?"] * 2  # the tool call, the answer


async def test_a_channel_mention_is_answered_in_its_thread_and_the_thread_stays_there(
        slack_app, slack):
    async with FakeOpenAI(default=Turn(text="In the thread.")) as llm:
        async with slack_app(llm=llm) as (app, _, url):
            mention = slack.mention(CHANNEL, "what do you think?", user="U0BOB")
            await post_ok(slack, url, slack.envelope(mention))
            await slack.wait_for(lambda: slack.texts(CHANNEL) == ["In the thread."])
            thread = mention["ts"]
            # chatter at top level is not for the bot; a reply in its thread is
            await post_ok(slack, url, slack.envelope(slack.message(
                CHANNEL, "lunch anyone?", user="U0BOB")))
            await post_ok(slack, url, slack.envelope(slack.message(
                CHANNEL, "and then?", user="U0BOB", thread_ts=thread)))
            await slack.wait_for(lambda: len(slack.texts(CHANNEL)) == 2)
            await app.gateway.idle()
            await slack.settle(0.2)
            assert await inbound_count(app) == 3  # every message is recorded
    assert user_texts(llm) == ["what do you think?", "and then?"]
    assert [m.thread_ts for m in slack.bot_messages(CHANNEL)] == [thread, thread]
    assert not slack.bot_messages(CHANNEL, thread=None)


async def test_a_9000_character_answer_arrives_split_and_complete(slack_app, slack):
    paragraphs = [f"Paragraph {i}: " + " ".join(f"w{i}x{j}" for j in range(75))
                  for i in range(20)]
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 9000
    async with FakeOpenAI([Turn(text=answer, chunk=1500)]) as llm:
        async with slack_app(llm=llm) as (app, adapter, url):
            await post_ok(slack, url, slack.envelope(slack.message(DM, "a long answer")))
            await slack.wait_for(lambda: shows(slack, DM, paragraphs[-1]))
            await app.gateway.idle()
    texts = slack.texts(DM)
    limit = adapter.capabilities.max_message_length
    assert len(texts) >= 3 and all(len(t) <= limit for t in texts)
    assert re.sub(r"\s+", " ", " ".join(texts)) == re.sub(r"\s+", " ", answer)
    assert all(any(p in t for t in texts) for p in paragraphs)


async def test_a_chart_is_uploaded_through_the_v2_flow_into_the_thread(slack_app, slack):
    async with slack_app() as (app, _, url):  # the offline analyst draws from the snapshot
        mention = slack.mention(CHANNEL, "/chart NVDA 6mo")
        await post_ok(slack, url, slack.envelope(mention))
        await slack.wait_for(lambda: any(m.kind == "file" for m in slack.bot_messages(CHANNEL)),
                             within_s=30)
        await app.gateway.idle()
    [shared] = [m for m in slack.bot_messages(CHANNEL) if m.kind == "file"]
    [chart] = shared.files
    assert chart.data.startswith(b"\x89PNG") and chart.name.endswith(".png")
    assert shared.thread_ts == mention["ts"]
    steps = [c.method for c in slack.calls if c.method.startswith(("files.", "upload"))]
    assert steps == ["files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    assert slack.texts(CHANNEL)[0] != WORKING  # the text answer replaced the placeholder


async def test_a_429_on_the_final_update_is_waited_out_and_the_final_text_arrives(
        slack_app, slack):
    answer = "*Final* answer after a rate limit."  # as mrkdwn; the previews show the Markdown
    slack.fail("chat.update", rate_limited(1), when=lambda p: p.get("text") == answer)
    async with FakeOpenAI([Turn(text="**Final** answer after a rate limit.", chunk=8)]) as llm:
        async with slack_app(llm=llm) as (app, _, url):
            await post_ok(slack, url, slack.envelope(slack.message(DM, "question")))
            await slack.wait_for(lambda: slack.texts(DM)[-1:] == [answer] and not slack.faults)
            await app.gateway.idle()
    finals = [c for c in slack.calls_of("chat.update", DM) if c.params.get("text") == answer]
    assert len(finals) == 2  # refused with 429, then delivered after Retry-After
    assert finals[1].t - finals[0].t >= 0.9
    assert slack.texts(DM) == [answer]


async def test_a_redelivered_event_and_its_mention_twin_run_once(slack_app, slack):
    async with FakeOpenAI(default=Turn(text="Answered once.")) as llm:
        async with slack_app(llm=llm) as (app, _, url):
            message = slack.message(CHANNEL, f"<@{BOT_USER}> Are you there?")
            body = slack.envelope(message)
            await post_ok(slack, url, body)
            await post_ok(slack, url, body, retry_num=1)  # Slack was unsure: the same event
            mention = {**slack.mention(CHANNEL, "Are you there?"), "ts": message["ts"]}
            await post_ok(slack, url, slack.envelope(mention))  # the same message, as a mention
            await slack.wait_for(lambda: slack.texts(CHANNEL) == ["Answered once."])
            await app.gateway.idle()
            await slack.settle(0.2)
            assert await inbound_count(app) == 1
    assert len(llm.requests) == 1
    assert len(slack.calls_of("chat.postMessage", CHANNEL)) == 1


async def test_bullpen_mode_debate_persists_across_a_restart_and_buttons_switch_it(
        slack_app, slack):
    async with slack_app() as (_, _, url):
        await post_ok(slack, url, slack.command("mode debate"), kind="command")
        await slack.wait_for(lambda: shows(slack, DM, "Mode set to *debate*"))
    async with slack_app() as (app, _, url):
        await post_ok(slack, url, slack.command(""), kind="command")  # /bullpen alone: help
        await post_ok(slack, url, slack.command("mode"), kind="command")
        await slack.wait_for(lambda: shows(slack, DM, "Current mode: *debate*"))
        menu = slack.bot_messages(DM)[-1]
        values = [e["value"] for b in menu.blocks or [] if b["type"] == "actions"
                  for e in b["elements"]]
        assert values == ["mode:normal", "mode:fast", "mode:debate"]
        await post_ok(slack, url, slack.press(menu, "mode:fast"), kind="action")
        await slack.wait_for(lambda: shows(slack, DM, "Mode set to *fast*"))
        user = await app.store.accounts.user_for("slack", "U0ALICE")
        chat = ChatRef(platform="slack", chat_id=DM)
        assert (await app.store.conversations.active(chat, user)).mode == "fast"
    assert "/mode" in slack.texts(DM)[1]  # the help text


async def test_forged_stale_and_tampered_requests_are_refused_before_any_processing(
        slack_app, slack):
    async with FakeOpenAI(default=Turn(text="Signed and answered.")) as llm:
        async with slack_app(llm=llm) as (app, _, url):
            assert url is not None
            calls = len(slack.calls)
            stale = int(time.time()) - 6 * 60
            refused = []
            for how in ({"secret": "not-the-signing-secret"}, {"timestamp": stale},
                        {"tamper": True}):
                body = slack.envelope(slack.message(DM, "forged question"))
                refused.append((await slack.post(url, body, **how))[0])
                command = slack.command("mode fast")
                refused.append((await slack.post(url, command, kind="command", **how))[0])
            assert slack._http is not None
            event = slack.envelope(slack.message(DM, "no signature at all"))
            async with slack._http.post(url, json=event) as resp:
                refused.append(resp.status)
            raw, headers = slack.signed(event)
            async with slack._http.post(url, data=raw, headers={
                    **headers, "X-Slack-Request-Timestamp": "soon"}) as resp:
                refused.append(resp.status)
            assert refused == [401] * 8
            await asyncio.sleep(0.2)
            assert await inbound_count(app) == 0 and not llm.requests
            assert len(slack.calls) == calls  # not even Bolt's auth.test ran

            raw, headers = slack.signed(event)  # signed for another body
            async with slack._http.post(url, data=b"{not json", headers=headers) as resp:
                assert resp.status == 401
            stamp = int(time.time())
            async with slack._http.post(url, data=b"{not json", headers={
                    "Content-Type": "application/json", "X-Slack-Request-Timestamp": str(stamp),
                    "X-Slack-Signature": sign(slack.signing_secret, stamp, "{not json")}) as resp:
                assert resp.status == 400  # signed, but not an event
            await post_ok(slack, url, slack.envelope(slack.message(DM, "a real question")))
            await slack.wait_for(lambda: slack.texts(DM) == ["Signed and answered."])
            await app.gateway.idle()
            assert await inbound_count(app) == 1
    assert user_texts(llm) == ["a real question"]


async def test_url_verification_is_answered_with_the_challenge(slack_app, slack):
    async with slack_app() as (_, _, url):
        status, text = await slack.post(url, {"token": "x", "challenge": "c-123",
                                              "type": "url_verification"})
    assert status == 200 and "c-123" in text


async def test_socket_mode_delivers_a_mention_end_to_end(slack_app, slack):
    async with FakeOpenAI(default=Turn(text="Over the socket.")) as llm:
        async with slack_app(llm=llm, adapter={"app_token": slack.app_token}) as (app, _, url):
            assert url is None
            await slack.wait_for(lambda: bool(slack.sockets))
            mention = slack.mention(CHANNEL, "anyone around?")
            first = await slack.push(slack.envelope(mention))
            again = await slack.push(slack.envelope(mention), retry_attempt=1)
            await slack.wait_for(lambda: slack.texts(CHANNEL) == ["Over the socket."])
            command = await slack.push(slack.command("mode fast"), kind="slash_commands")
            await slack.wait_for(lambda: shows(slack, DM, "Mode set to *fast*"))
            # every envelope acknowledged: waited for, as an ack can trail the answer under load
            await slack.wait_for(lambda: {first, again, command} <= slack.acks.keys())
            await app.gateway.idle()
            assert await inbound_count(app) == 2
    assert user_texts(llm) == ["anyone around?"]
    assert slack.bot_messages(CHANNEL)[0].thread_ts == mention["ts"]
    assert not slack.sockets  # closed on shutdown
    assert len(slack.calls_of("apps.connections.open")) == 1


# --- the adapter's own translation -------------------------------------------------------------


@pytest.fixture
async def bare(slack: FakeSlack):
    """The adapter alone (no App): messages are collected as they are translated."""
    adapter = slack_adapter(slack)
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)

    await adapter.start(on_message)
    try:
        yield adapter, got, f"http://127.0.0.1:{adapter.events_port}/slack/events"
    finally:
        await adapter.aclose()


async def test_audio_clips_become_voice_attachments_downloaded_with_the_token_header(
        bare, slack):
    adapter, got, url = bare
    data = b"\x1aE\xdf\xa3webm-voice-bytes"
    clip = slack.add_file(data, "audio_message.webm", mimetype="audio/webm",
                          subtype="slack_audio", duration_ms=4200)
    song = slack.add_file(b"ID3mp3", "song.mp3", mimetype="audio/mpeg")
    await post_ok(slack, url, slack.envelope(slack.message(
        DM, "", subtype="file_share", files=[clip, song])))
    other = slack.add_file(data, "clip.webm", mimetype="audio/webm", subtype="slack_audio")
    bare_clip = {k: v for k, v in other.items() if not k.startswith("url_")}  # Slack Connect
    await post_ok(slack, url, slack.envelope(slack.message(DM, "", files=[bare_clip])))
    await slack.wait_for(lambda: len(got) == 2)
    voice, audio = got[0].attachments
    assert (voice.kind, voice.file_id, voice.mime_type, voice.duration_s, voice.size) == (
        "voice", clip["id"], "audio/webm", 4.2, len(data))
    assert audio.kind == "audio"
    assert await adapter.fetch_attachment(got[0], 0) == data
    assert await adapter.fetch_attachment(got[1], 0) == data  # the URL from files.info
    assert [d["token"] for d in slack.downloads] == [slack.token] * 2
    assert len(slack.calls_of("files.info")) == 1
    with pytest.raises(InputError):
        await adapter.fetch_attachment(got[0], 5)
    slack.files[song["id"]].data = b""  # gone from the file host
    with pytest.raises(PlatformError) as gone:
        await adapter.fetch_attachment(got[0], 1)
    far = {**clip, "id": "F0ELSEWHERE", "url_private_download": "https://evil.example/x"}
    await post_ok(slack, url, slack.envelope(slack.message(DM, "", files=[far])))
    await slack.wait_for(lambda: len(got) == 3)
    with pytest.raises(PlatformError) as foreign:
        await adapter.fetch_attachment(got[2], 0)
    assert len(slack.downloads) == 3  # the foreign host never saw the token
    for err in (gone.value, foreign.value):
        assert slack.token not in str(err) and "http" not in str(err)


async def test_platform_refusals_map_to_the_core_error_types(bare, slack):
    adapter, _, _ = bare
    chat = ChatRef(platform="slack", chat_id=DM)
    ref = await adapter.send(chat, Reply(text="P/E < 20 & rising", markup="plain"))
    assert slack.find(DM, ref.message_id).text == "P/E &lt; 20 &amp; rising"
    slack.fail("chat.update", rate_limited(3))
    with pytest.raises(RateLimited) as limited:
        await adapter.edit(ref, Reply(text="x"))
    assert limited.value.retry_after == 3
    slack.fail("chat.postMessage", ApiError("msg_too_long"))
    with pytest.raises(PlatformError) as too_long:
        await adapter.send(chat, Reply(text="x"))
    assert type(too_long.value) is PlatformError and "msg_too_long" in str(too_long.value)
    slack.fail("chat.postMessage", ApiError("invalid_blocks"))
    with pytest.raises(FormattingRejected):
        await adapter.send(chat, Reply(text="x", buttons=[[Button(label="a", data="b")]]))
    for code in ("channel_not_found", "is_archived"):
        slack.fail("chat.postMessage", ApiError(code))
        with pytest.raises(Forbidden):
            await adapter.send(chat, Reply(text="x"))
    slack.kick(CHANNEL)
    with pytest.raises(Forbidden):
        await adapter.send_file(ChatRef(platform="slack", chat_id=CHANNEL, is_group=True),
                                OutgoingFile(kind="document", filename="r.pdf", data=b"%PDF"))
    slack.fail("chat.postMessage", ApiError("fatal_error", status=500))
    with pytest.raises(PlatformUnavailable) as other:  # failed on its side: try again
        await adapter.send(chat, Reply(text="x"))
    for exc in (limited.value, too_long.value, other.value):
        assert slack.token not in str(exc)
    await adapter.typing(chat)  # no typing indicator for bots: nothing is called


async def test_a_429_on_an_upload_step_is_waited_out_by_the_sdk_itself(bare, slack):
    adapter, _, _ = bare
    chat = ChatRef(platform="slack", chat_id=DM, thread_id="1700000000.000100")
    slack.fail("files.getUploadURLExternal", rate_limited(1))
    ref = await adapter.send_file(chat, OutgoingFile(
        kind="image", filename="nvda.png", data=b"\x89PNGchart", mime_type="image/png",
        caption="NVDA <6mo>"))
    [shared] = [m for m in slack.bot_messages(DM) if m.kind == "file"]
    assert ref.message_id == shared.files[0].id and shared.thread_ts == chat.thread_id
    assert shared.text == "NVDA &lt;6mo&gt;" and shared.files[0].alt_txt == "NVDA <6mo>"
    assert len(slack.calls_of("files.getUploadURLExternal")) == 2  # the SDK waited it out


async def test_edits_bot_messages_and_service_messages_translate(bare, slack):
    _, got, url = bare
    original = slack.message(DM, "hello &lt;there&gt; <https://x.org|x.org> <@U0BOB>")
    for event in (original, slack.edited(original, "hello, edited"),
                  slack.message(DM, "from another bot", bot_id="B0OTHER"),
                  slack.message(DM, "", subtype="channel_join"),
                  slack.message(DM, "mine", user=BOT_USER),
                  slack.message("G0PRIVATE", "group chatter", channel_type="group")):
        await post_ok(slack, url, slack.envelope(event))
    await slack.wait_for(lambda: len(got) == 3)
    await slack.settle(0.2)
    text, edit, chatter = got
    assert (text.text, text.is_edit, text.addressed, text.message_id) == (
        "hello <there> x.org @U0BOB", False, True, original["ts"])
    assert edit.is_edit and edit.text == "hello, edited"
    assert edit.message_id.startswith(f"{original['ts']}:edit:")
    assert chatter.chat.is_group and not chatter.addressed


async def test_a_rejected_token_is_a_config_error_that_does_not_show_it(slack):
    adapter = SlackAdapter(bot_token="xoxb-not-the-right-token-0000", api_base_url=slack.base_url,
                           signing_secret=slack.signing_secret, events_port=0)

    async def on_message(message: IncomingMessage) -> None:
        return None

    with pytest.raises(ConfigError) as err:
        await adapter.start(on_message)
    assert "not-the-right-token" not in str(err.value)
    with pytest.raises(ConfigError):
        SlackAdapter(bot_token=slack.token)  # neither a signing secret nor an app token
    socket = slack_adapter(slack, app_token="xapp-wrong")
    with pytest.raises(ConfigError) as app_err:
        await socket.start(on_message)
    assert "xapp-wrong" not in str(app_err.value)


def test_the_slack_gateway_bench_runs_every_side_and_counts_no_forgery(pg_dsn):
    from bot.benches import gateway_common as common
    from bot.benches import gateway_slack

    # shape only: timings are not asserted (rule 11); this test's database
    result = gateway_slack.run(chats=2, repeat=1, database_url=pg_dsn)
    assert result["ours"]["messages"] == result["peer_result"]["messages"] == 6
    assert result["durable_peer_result"]["messages"] == result["ceiling"]["messages"] == 6
    assert result["ceiling"]["paced"]["messages"] == 4  # the ceiling answered every question
    assert result["adapter_only"]["messages"] == 6  # our adapter alone, echoing
    assert result["adapter_only"]["paced"]["messages"] == 4
    assert result["cpu_split"]["our_adapter_alone"] > 0 and "our_core" in result["cpu_split"]
    assert result["persisted"]["inbound_events"] == 12
    # the durable peer stored question and reply of all 12 (warm-up 2, closed 6, paced 4)
    assert asyncio.run(common.peer_rows(pg_dsn, platform="slack")) == 2 * 12
    assert result["forged_reached_core"] == 0 and result["forged_sent"] > 0
    assert {"throughput_ratio", "durable_throughput_ratio", "ceiling_ratio", "within_target",
            "peer"} <= result.keys()


async def test_the_ack_waits_until_the_core_has_taken_the_message_but_not_past_its_bound(slack):
    """Nothing acknowledged that is only in memory (issue 28): Slack's HTTP answer goes when
    the handler returns (the gateway returns once the message is stored or spooled), and at
    the latest after `ack_wait_s`, inside Slack's 3 s."""
    taken = asyncio.Event()
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)
        await taken.wait()  # the store is slow

    adapter = slack_adapter(slack)
    adapter.ack_wait_s = 30.0
    await adapter.start(on_message)
    url = f"http://127.0.0.1:{adapter.events_port}/slack/events"
    try:
        posting = asyncio.create_task(slack.post(url, slack.envelope(slack.message(DM, "q1"))))
        await slack.wait_for(lambda: len(got) == 1)
        await asyncio.sleep(0.3)
        assert not posting.done()  # in the core's hands, not yet taken: no ack yet
        taken.set()
        assert (await asyncio.wait_for(posting, 10))[0] == 200
        adapter.ack_wait_s = 0.2  # a core that never returns: acknowledged at the bound
        taken.clear()
        status, _ = await asyncio.wait_for(
            slack.post(url, slack.envelope(slack.message(DM, "q2"))), 10)
        assert status == 200 and len(got) == 2
        taken.set()
    finally:
        taken.set()
        await adapter.aclose()
