"""The WeChat adapter (official accounts and WeCom) through real wechatpy against the loopback
WeChat fake, with the real App (gateway, renderer, Postgres) and the real `openai` client
against the local OpenAI-compatible fake, or the offline analyst."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from adapters.wechat import WeChatAdapter, split_bytes
from adapters.wechat.clients import MEDIA_CHUNK_BYTES
from bot.app import App
from bot.settings import load_settings
from core.errors import (
    ConfigError,
    Forbidden,
    InputError,
    PlatformError,
    RateLimited,
    StoreError,
    TooLarge,
)
from core.ports import KeptReply, MemoryKeptReplies
from core.store import Database, Store
from core.types import ChatRef, IncomingMessage, OutgoingFile, Reply
from tests.adapters.conftest import AUDIO, inbound_count, wechat_adapter
from tests.adapters.conftest import user_texts as asked
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.fakes.wechat_server import AES_KEY, FakeWeChat, openid, render_xml

AMR = AUDIO / "zh_moutai.amr"
USER = openid(1)
AppFactory = Callable[..., Any]
Bare = tuple[WeChatAdapter, list[IncomingMessage]]
OTHER = openid(2)


@pytest.fixture
async def wx() -> AsyncIterator[FakeWeChat]:
    async with FakeWeChat() as fake:
        yield fake


def platform_settings(fake: FakeWeChat) -> dict[str, Any]:
    """The settings that configure the adapter for the fake's app (official or WeCom)."""
    if fake.kind == "wecom":
        return dict(wecom_corp_id=fake.app_id, wecom_agent_id=fake.agent_id,
                    wecom_secret=fake.app_secret, wecom_token=fake.token,
                    wecom_encoding_aes_key=fake.aes_key, wecom_api_base_url=fake.api_base_url,
                    wecom_port=0, wecom_path="/wechat")
    return dict(wechat_token=fake.token, wechat_app_id=fake.app_id,
                wechat_app_secret=fake.app_secret, wechat_encoding_aes_key=fake.aes_key,
                wechat_api_base_url=fake.api_base_url, wechat_port=0)


@pytest.fixture
def wechat_app(pg_dsn: str, tmp_path: Path) -> Callable[..., Any]:
    """`async with wechat_app(fake, llm=...) as (app, adapter)`: the App on this test's database
    (the same one on every call: a restart) with the WeChat adapter built from settings as the
    bot builds it (`App.build_adapters`: refusals held by the outbox), started, and the fake's
    callbacks pointed at it. Keyword arguments build the adapter directly instead. Passive
    replies are off (answers go through the customer-service API, what most tests follow)
    unless `passive_setting` is given (None: the setting's default)."""

    @asynccontextmanager
    async def factory(fake: FakeWeChat, *, llm: FakeOpenAI | None = None,
                      passive_setting: float | None = 0.0,
                      **adapter: Any) -> AsyncIterator[tuple[App, WeChatAdapter]]:
        overrides: dict[str, Any] = {}
        if passive_setting is not None:
            overrides["wechat_passive_reply_s"] = passive_setting
        if llm is not None:
            overrides.update(llm_base_url=llm.base_url, llm_model="fake-model", llm_plan=False)
        settings = load_settings(database_url=pg_dsn, data_dir=tmp_path / "data",
                                 **platform_settings(fake), **overrides)
        app = await App.create(settings)
        try:
            if adapter:
                adapter.setdefault("kept_replies", app.store.kept_replies)
                built: list[Any] = [wechat_adapter(fake, **adapter)]
            else:
                built = app.build_adapters(["wecom" if fake.kind == "wecom" else "wechat"])
            # jobs=False: tests fire subscriptions by hand (`app.jobs.due`); a live scheduler
            # would also fire one whose time falls while the test runs (08:00 Shanghai at
            # 00:00 UTC), a second report and a second model call
            await app.start_adapters(built, jobs=False)
            started = app.adapters[0]
            assert isinstance(started, WeChatAdapter)
            fake.callback_url = f"http://127.0.0.1:{started.port}/wechat"
            yield app, started
        finally:
            await app.aclose()

    return factory


@asynccontextmanager
async def started_adapter(wx: FakeWeChat, **kwargs: Any) -> AsyncIterator[Bare]:
    """The adapter alone (no App), started on the fake; messages collected as translated."""
    adapter = wechat_adapter(wx, **kwargs)
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)

    await adapter.start(on_message)
    wx.callback_url = f"http://127.0.0.1:{adapter.port}/wechat"
    try:
        yield adapter, got
    finally:
        await adapter.aclose()


@pytest.fixture
async def bare(wx: FakeWeChat) -> AsyncIterator[Bare]:
    """The adapter alone (no App): messages are collected as they are translated."""
    async with started_adapter(wx) as started:
        yield started


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


# --- the must-show paths -----------------------------------------------------------------------


async def test_a_question_is_acked_at_once_and_answered_through_customer_service(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    answer = "NVDA closed higher on the day per the snapshot; volume was about average."
    # a data question: the model looks the quote up first
    async with FakeOpenAI([Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                           Turn(text=answer, latency_s=0.5)]) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            ack = await wx.post(wx.text(USER, "How did NVDA do today?"))
            assert (ack.status, ack.text) == (200, "success")
            assert wx.texts(USER) == []  # acknowledged before the answer exists
            await wx.wait_for(lambda: wx.texts(USER) == [answer])
            await app.gateway.idle()
            stored = await app.db.pool.fetchval(
                "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1")
    assert stored == answer and asked(llm) == ["How did NVDA do today?"] * 2
    [send] = wx.calls_of("message/custom/send")
    assert send.body == {"touser": USER, "msgtype": "text", "text": {"content": answer}}
    assert wx.tokens_issued == 1  # from the fake's base URL, fetched once


async def test_by_default_an_answer_ready_in_time_is_the_callbacks_own_reply(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    answer = "NVDA closed higher on the day per the snapshot; volume was about average."
    async with FakeOpenAI([Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                           Turn(text=answer, latency_s=0.2)]) as llm:
        async with wechat_app(wx, llm=llm, passive_setting=None) as (app, adapter):
            got = await wx.post(wx.text(USER, "How did NVDA do today?"))
            await app.gateway.idle()
    assert got.status == 200 and f"<Content><![CDATA[{answer}]]></Content>" in got.text
    assert wx.calls_of("message/custom/send") == [] and adapter.stats.passive == 1


async def test_a_long_answer_arrives_split_at_the_byte_limit_and_complete(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    english = [f"Paragraph {i}: " + " ".join(f"w{i}x{j}" for j in range(110)) for i in range(4)]
    chinese = [f"第{i}段：" + "贵州茅台的估值与现金流需要结合行业周期来看。" * 12 for i in range(3)]
    answer = "\n\n".join(english + chinese)
    assert len(answer) < 2 * 2048 < len(answer.encode("utf-8"))
    async with FakeOpenAI([Turn(text=answer, chunk=800)]) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            await wx.post(wx.text(USER, "请给一个很长的回答"))
            await wx.wait_for(lambda: any(chinese[-1][-20:] in t for t in wx.texts(USER)))
            await app.gateway.idle()
    texts = wx.texts(USER)
    assert 3 <= len(texts) <= 5  # within the five messages one user message allows
    assert all(len(t.encode("utf-8")) <= 2048 for t in texts)
    assert squash("".join(texts)) == squash(answer)


async def test_a_chart_is_uploaded_as_media_and_sent(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    async with wechat_app(wx) as (app, _):  # the offline analyst draws from the snapshot
        await wx.post(wx.text(USER, "/chart NVDA 6mo"))
        await wx.wait_for(lambda: any(s.kind == "image" for s in wx.sent_to(USER)),
                          within_s=30)
        await app.gateway.idle()
    image = next(s for s in wx.sent_to(USER) if s.kind == "image")
    assert image.data.startswith(b"\x89PNG") and image.filename.endswith(".png")
    [upload] = wx.calls_of("media/upload")
    assert upload.query["type"] == "image"
    assert "NVDA" in " ".join(wx.texts(USER))  # and the text that goes with it


async def test_safe_mode_end_to_end(wechat_app: AppFactory) -> None:
    async with FakeWeChat(encoding_aes_key=AES_KEY) as wx, \
            FakeOpenAI(default=Turn(text="两个方向都已加密。")) as llm, \
            wechat_app(wx, llm=llm) as (app, _):
        assert (await wx.verify_url("echo-42")).text == "echo-42"
        delivered = await wx.post(wx.text(USER, "安全模式下的问题"))
        assert b"<Encrypt>" in delivered.body and "安全".encode() not in delivered.body
        await wx.wait_for(lambda: wx.texts(USER) == ["两个方向都已加密。"])
        forged = await wx.post(wx.text(USER, "forged"), forge=True)
        wx.aes_key = None  # a plain callback while safe mode is on
        plain = await wx.post(wx.text(USER, "plain"))
        await app.gateway.idle()
        assert (forged.status, plain.status) == (403, 403)
        assert await inbound_count(app) == 1
    assert asked(llm) == ["安全模式下的问题"]


async def test_a_retry_storm_of_one_msgid_runs_once(wechat_app: AppFactory, wx: FakeWeChat) -> None:
    question = wx.text(USER, "Are you there?")
    async with FakeOpenAI(default=Turn(text="Answered once.", latency_s=1.0)) as llm:
        async with wechat_app(wx, llm=llm) as (app, adapter):
            storm = await wx.storm(question, retries=3, spacing_s=0.2)
            assert [(d.status, d.text) for d in storm] == [(200, "success")] * 4
            await wx.wait_for(lambda: wx.texts(USER) == ["Answered once."])
            await app.gateway.idle()
            await wx.settle(0.3)
            assert await inbound_count(app) == 1
            assert (adapter.stats.accepted, adapter.stats.duplicates) == (1, 3)
        async with wechat_app(wx, llm=llm) as (app, adapter):  # a late retry, after a restart
            assert (await wx.post(question)).text == "success"
            assert adapter.stats.accepted == 1  # new to this adapter: on to the gateway
            await wx.settle(0.3)
            await app.gateway.idle()
            assert await inbound_count(app) == 1  # the gateway's inbound log catches it
    assert len(llm.requests) == 1 and wx.texts(USER) == ["Answered once."]


async def test_forged_stale_and_replayed_callbacks_never_reach_the_core(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    async with FakeOpenAI(default=Turn(text="should not run")) as llm:
        async with wechat_app(wx, llm=llm) as (app, adapter):
            forged = await wx.forge(url=wx.callback_url, users=[USER, OTHER])
            assert forged["statuses"] == [403] * 6  # forged, stale, replayed; for each user
            no_signature = await wx.post_raw({}, render_xml(wx.text(USER, "hi")).encode())
            assert no_signature.status == 403
            assert (await wx.verify_url(forge=True)).status == 403
            await app.gateway.idle()
            assert await inbound_count(app) == 0
            assert adapter.stats.rejected == 8 and adapter.stats.accepted == 0
    assert not llm.requests and not wx.calls_of("message/custom/send")


async def test_malformed_xml_gets_400_and_nothing_is_processed(bare: Bare, wx: FakeWeChat) -> None:
    adapter, got = bare
    bodies = [b"<xml><MsgType>text</MsgType", b"not xml at all", b"<notxml/>",
              b'<!DOCTYPE xml [<!ENTITY e "x">]><xml><Content>&e;</Content></xml>',
              render_xml({"MsgType": "text", "Content": "no sender"}).encode(),
              render_xml({**wx.text(USER, "x"), "MsgId": "not-a-number"}).encode()]
    for body in bodies:
        query, _ = wx.sign_query("")
        assert (await wx.post_raw(query, body)).status == 400
    assert got == [] and adapter.stats.malformed == len(bodies)


async def test_a_voice_message_with_recognition_is_answered_from_its_text(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    media = wx.add_media(b"#!AMR\nnot-downloaded")
    async with FakeOpenAI([Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
                           Turn(text="Both rose.")]) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            await wx.post(wx.voice(USER, media, recognition="What's the latest on Nvidia?"))
            await wx.wait_for(lambda: "Both rose." in wx.texts(USER), within_s=30)
            await app.gateway.idle()
    heard, answer = wx.texts(USER)
    assert heard.startswith("Heard: What's the latest on Nvidia?") and "NVDA" in heard
    assert answer == "Both rose." and "NVDA" in asked(llm)[0]
    assert not wx.calls_of("media/get")  # WeChat's transcript: nothing downloaded


async def ask_as_the_window_closes(app: App, wx: FakeWeChat) -> None:
    """A question whose answer comes after the user's 48 hours: WeChat refuses to deliver it."""
    await wx.post(wx.text(USER, "first question"))
    wx.close_window(USER)
    await wx.wait_for(lambda: bool(wx.calls_of("message/custom/send")))
    await app.gateway.idle()


async def test_a_closed_window_keeps_the_answer_for_the_next_message(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    script = [Turn(text="The kept answer.", latency_s=0.5), Turn(text="The second answer.")]
    async with FakeOpenAI(script) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            await ask_as_the_window_closes(app, wx)
            await wx.settle(0.2)
            assert wx.texts(USER) == []
            [refused] = wx.calls_of("message/custom/send")
            await wx.post(wx.text(USER, "anyone there?"))
            await wx.wait_for(lambda: len(wx.texts(USER)) == 2)
            await app.gateway.idle()
    assert wx.texts(USER) == ["The kept answer.", "The second answer."]
    assert refused.body is not None and refused.body["text"]["content"] == "The kept answer."


async def kept_rows(app: App) -> list[str]:
    """The texts the outbox holds for the next message (the bot's one mechanism for what
    WeChat refuses for now), in delivery order."""
    rows = await app.db.pool.fetch(
        "SELECT items FROM deliveries WHERE status = 'held' ORDER BY id")
    return [i.get("text") or f"<{i['kind']}>" for r in rows for i in r["items"]]


async def test_a_kept_answer_survives_a_restart_and_arrives_before_the_next_one(
        wechat_app: AppFactory, wx: FakeWeChat, caplog: pytest.LogCaptureFixture) -> None:
    script = [Turn(text="The kept answer.", latency_s=0.5), Turn(text="The answer after.")]
    async with FakeOpenAI(script) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            await ask_as_the_window_closes(app, wx)
            assert wx.texts(USER) == [] and await kept_rows(app) == ["The kept answer."]
        async with wechat_app(wx, llm=llm) as (app, _):  # a new process on the same database
            await wx.post(wx.text(USER, "anyone there?"))
            await wx.wait_for(lambda: len(wx.texts(USER)) == 2)
            await app.gateway.idle()
            assert await kept_rows(app) == []
    assert wx.texts(USER) == ["The kept answer.", "The answer after."]
    assert asked(llm) == ["first question", "anyone there?"]


async def test_a_kept_reply_refused_again_stays_kept_and_keeps_its_place(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    script = [Turn(text="Kept once.", latency_s=0.5), Turn(text="Second."), Turn(text="Third.")]
    async with FakeOpenAI(script) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            await wx.post(wx.text(USER, "one"))
            wx.close_window(USER)
            await wx.wait_for(lambda: bool(wx.calls_of("message/custom/send")))
            await app.gateway.idle()
        async with wechat_app(wx, llm=llm) as (app, _):
            # the window is still closed when the kept answer is tried again (the user's
            # message crossed an expiry): it stays, and the new answer is kept behind it
            wx.fail("message/custom/send", 45015, "response out of time limit")
            await wx.post(wx.text(USER, "two"))
            await wx.wait_for(lambda: len(llm.requests) == 2)
            await app.gateway.idle()
            await wx.settle(0.2)
            assert wx.texts(USER) == [] and await kept_rows(app) == ["Kept once.", "Second."]
            await wx.post(wx.text(USER, "three"))
            await wx.wait_for(lambda: len(wx.texts(USER)) == 3)
            await app.gateway.idle()
            assert await kept_rows(app) == []
    assert wx.texts(USER) == ["Kept once.", "Second.", "Third."]
    assert len(wx.calls_of("message/custom/send")) == 5  # refused, refused again, then 3


async def test_kept_files_are_stored_with_their_bytes_and_sent_again_after_a_restart(
        wx: FakeWeChat, pg_db: Database, tmp_path: Path) -> None:
    repo = Store(pg_db, files_dir=tmp_path).kept_replies
    chat = ChatRef(platform="wechat", chat_id=USER)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    chart = OutgoingFile(kind="image", filename="nvda.png", data=png, mime_type="image/png",
                         caption="NVDA, six months.")
    async with started_adapter(wx, kept_replies=repo) as (adapter, _):
        wx.close_window(USER)
        assert (await adapter.send(chat, Reply(text="Before the chart."))).message_id \
            .startswith("kept-")
        await adapter.send_file(chat, chart)  # behind a kept reply: kept as bytes, caption too
        await adapter.send(chat, Reply(text="After."))
    assert wx.sent_to(USER) == [] and len(wx.calls_of("message/custom/send")) == 1
    assert not wx.calls_of("media/upload")  # nothing tried while replies wait
    async with started_adapter(wx, kept_replies=repo) as (adapter, got):
        await wx.post(wx.text(USER, "back"))
        await wx.wait_for(lambda: len(wx.sent_to(USER)) == 4 and len(got) == 1)
        assert await repo.recipients("wechat:" + wx.app_id) == set()
    sent = wx.sent_to(USER)
    assert [(s.kind, s.text) for s in sent] == [
        ("text", "Before the chart."), ("image", ""), ("text", "NVDA, six months."),
        ("text", "After.")]
    assert sent[1].data == png and len(wx.calls_of("media/upload")) == 1


async def test_refused_for_good_drops_one_kept_reply_and_a_gone_user_drops_all(
        wx: FakeWeChat, pg_db: Database, tmp_path: Path) -> None:
    repo = Store(pg_db, files_dir=tmp_path).kept_replies
    chat, other = ChatRef(platform="wechat", chat_id=USER), ChatRef(platform="wechat",
                                                                    chat_id=OTHER)
    async with started_adapter(wx, kept_replies=repo) as (adapter, got):
        for text in ("bad one", "good one"):
            await adapter.send(chat, Reply(text=text))
        for text in ("x", "y"):
            await adapter.send(other, Reply(text=text))
        wx.fail("message/custom/send", 40008, "invalid message type",
                when=lambda body: body["text"]["content"] == "bad one")
        wx.fail("message/custom/send", 43004, "require subscribe",
                when=lambda body: body["touser"] == OTHER)
        await wx.post(wx.text(USER, "hi"))
        await wx.post(wx.text(OTHER, "hi"))
        await wx.wait_for(lambda: len(got) == 2)
        assert await repo.recipients("wechat:" + wx.app_id) == set()
        await adapter.send(other, Reply(text="fresh"))  # nothing kept: straight out
    assert wx.texts(USER) == ["good one"] and wx.texts(OTHER) == ["fresh"]


async def test_a_kept_reply_that_meets_a_passing_failure_goes_out_before_the_next_send(
        wx: FakeWeChat, pg_db: Database, tmp_path: Path) -> None:
    repo = Store(pg_db, files_dir=tmp_path).kept_replies
    chat = ChatRef(platform="wechat", chat_id=USER)
    async with started_adapter(wx, kept_replies=repo) as (adapter, got):
        await adapter.send(chat, Reply(text="kept"))  # the user never wrote: window closed
        wx.fail("message/custom/send", 45009, "reach max api daily quota limit")
        await wx.post(wx.text(USER, "hi"))
        await wx.wait_for(lambda: len(got) == 1)
        assert wx.texts(USER) == [] and await repo.recipients("wechat:" + wx.app_id) == {USER}
        await adapter.send(chat, Reply(text="the answer"))  # tries the kept one first
        assert await repo.recipients("wechat:" + wx.app_id) == set()
    assert wx.texts(USER) == ["kept", "the answer"]


class FlakyKept(MemoryKeptReplies):
    """The in-memory store of kept replies, with the next `failing` calls of one kind raising
    StoreError as Postgres does when its connection drops."""

    def __init__(self) -> None:
        super().__init__()
        self.failing: dict[str, int] = {}

    def _maybe_fail(self, op: str) -> None:
        if self.failing.get(op):
            self.failing[op] -= 1
            raise StoreError(f"kept replies: {op} failed: connection was closed")

    async def keep(self, key: str, recipient: str, reply: KeptReply, *, limit: int) -> int:
        self._maybe_fail("keep")
        return await super().keep(key, recipient, reply, limit=limit)

    async def remove(self, key: str, recipient: str, reply_id: int) -> None:
        self._maybe_fail("remove")
        await super().remove(key, recipient, reply_id)


async def test_a_reply_that_can_be_neither_sent_nor_kept_is_a_platform_error(
        wx: FakeWeChat) -> None:
    store = FlakyKept()
    store.failing["keep"] = 1
    async with started_adapter(wx, kept_replies=store) as (adapter, _):
        with pytest.raises(PlatformError, match="could not be sent nor kept"):  # window closed
            await adapter.send(ChatRef(platform="wechat", chat_id=USER), Reply(text="answer"))


async def test_a_store_blip_while_delivering_kept_replies_does_not_hold_back_the_next_answer(
        wx: FakeWeChat) -> None:
    store = FlakyKept()
    chat = ChatRef(platform="wechat", chat_id=USER)
    async with started_adapter(wx, kept_replies=store) as (adapter, got):
        await adapter.send(chat, Reply(text="kept"))  # the user never wrote: kept
        store.failing["remove"] = 1  # delivered, but the store cannot forget it yet
        await wx.post(wx.text(USER, "hi"))
        await wx.wait_for(lambda: len(got) == 1)
        ref = await adapter.send(chat, Reply(text="the answer"))
        assert not ref.message_id.startswith("kept-")  # sent, not kept behind the blip
    assert wx.texts(USER) == ["kept", "kept", "the answer"]  # at least once, then in order


async def test_a_kept_reply_older_than_a_week_is_dropped_not_delivered(
        wx: FakeWeChat, pg_db: Database, tmp_path: Path) -> None:
    repo = Store(pg_db, files_dir=tmp_path).kept_replies
    chat = ChatRef(platform="wechat", chat_id=USER)
    async with started_adapter(wx, kept_replies=repo) as (adapter, got):
        await adapter.send(chat, Reply(text="stale"))
        async with pg_db.pool.acquire() as conn:
            await conn.execute("UPDATE kept_replies SET created_at = now() - interval '8 days'")
        await adapter.send(chat, Reply(text="recent"))
        await wx.post(wx.text(USER, "hi"))
        await wx.wait_for(lambda: len(got) == 1)
        await wx.wait_for(lambda: wx.texts(USER) == ["recent"])
        assert await repo.recipients("wechat:" + wx.app_id) == set()


async def test_without_a_store_replies_are_kept_in_memory_and_shutdown_says_they_are_lost(
        wx: FakeWeChat, caplog: pytest.LogCaptureFixture) -> None:
    async with started_adapter(wx) as (adapter, _):
        await adapter.send(ChatRef(platform="wechat", chat_id=USER), Reply(text="kept"))
    assert "kept in memory only and are lost" in caplog.text
    assert wx.texts(USER) == []


async def test_wecom_app_message_flow(wechat_app: AppFactory) -> None:
    async with FakeWeChat(kind="wecom", encoding_aes_key=AES_KEY) as wx, \
            FakeOpenAI(default=Turn(text="From the WeCom app.")) as llm, \
            wechat_app(wx, llm=llm) as (app, adapter):
        assert (await wx.verify_url("wecom-echo")).text == "wecom-echo"
        assert (await wx.verify_url(forge=True)).status == 403
        await wx.post(wx.text("zhangsan", "/mode fast"))
        await wx.wait_for(lambda: any("fast" in t for t in wx.texts("zhangsan")))
        await wx.post(wx.text("zhangsan", "NVDA?"))
        await wx.wait_for(lambda: "From the WeCom app." in wx.texts("zhangsan"))
        await app.gateway.idle()
        user = await app.store.accounts.user_for("wecom", "zhangsan")
        chat = ChatRef(platform="wecom", chat_id="zhangsan")
        assert (await app.store.conversations.active(chat, user)).mode == "fast"
        ref = await adapter.send_file(chat, OutgoingFile(
            kind="document", filename="report.pdf", data=b"%PDF-1.7", caption="NVDA report"))
        wx.invisible.add("lisi")
        with pytest.raises(Forbidden):
            await adapter.send(ChatRef(platform="wecom", chat_id="lisi"), Reply(text="x"))
    sends = wx.calls_of("message/send")
    assert all(c.body is not None and c.body["agentid"] == wx.agent_id for c in sends)
    assert [s.kind for s in wx.sent_to("zhangsan")][-2:] == ["file", "text"]
    assert ref.message_id.startswith("wecom-msg-")
    assert adapter.capabilities.supports_documents


# --- the adapter alone -------------------------------------------------------------------------


async def test_platform_refusals_map_to_core_errors_and_quota_refusals_are_kept(
        bare: Bare, wx: FakeWeChat) -> None:
    adapter, _ = bare
    chat = ChatRef(platform="wechat", chat_id=USER)
    await wx.post(wx.event(USER, "subscribe"))  # opens the window; not for the core
    wx.fail("message/custom/send", 45009, "reach max api daily quota limit")
    with pytest.raises(RateLimited) as limited:
        await adapter.send(chat, Reply(text="x"))
    wx.fail("message/custom/send", 43004, "require subscribe")
    with pytest.raises(Forbidden):
        await adapter.send(chat, Reply(text="x"))
    wx.fail("message/custom/send", 40008, "invalid message type")
    with pytest.raises(PlatformError) as other:
        await adapter.send(chat, Reply(text="x"))
    with pytest.raises(PlatformError):
        await adapter.edit(await adapter.send(chat, Reply(text="one")), Reply(text="two"))
    wx.quota = 2
    for text in ("two", "three", "four"):  # the quota is used up after "two"
        await adapter.send(chat, Reply(text=text))
    assert wx.texts(USER) == ["one", "two"]
    await wx.post(wx.text(USER, "next"))
    await wx.wait_for(lambda: len(wx.texts(USER)) == 4)
    assert wx.texts(USER) == ["one", "two", "three", "four"]
    for exc in (limited.value, other.value):
        assert wx.app_secret not in str(exc) and "access_token" not in str(exc)
    assert limited.value.retry_after > 0


async def test_voice_media_downloads_and_tokens_refresh_on_the_base_url(
        bare: Bare, wx: FakeWeChat) -> None:
    adapter, got = bare
    amr = AMR.read_bytes()
    media = wx.add_media(amr)
    await wx.post(wx.voice(USER, media))
    await wx.post(wx.voice(USER, "MEDIA_GONE"))
    await wx.wait_for(lambda: len(got) == 2)
    voice = got[0].attachments[0]
    assert (voice.kind, voice.file_id, voice.mime_type, voice.recognition) == (
        "voice", media, "audio/amr", None)
    wx.expire_tokens()
    assert await adapter.fetch_attachment(got[0], 0) == amr
    assert wx.tokens_issued == 2  # 42001: wechatpy fetched a new one from the fake
    with pytest.raises(PlatformError) as missing:
        await adapter.fetch_attachment(got[1], 0)
    assert "40007" in str(missing.value) and "access_token" not in str(missing.value)
    with pytest.raises(InputError):
        await adapter.fetch_attachment(got[0], 3)


FIFTY_MB = 50 * 1024 * 1024


async def test_a_50_mb_voice_is_refused_without_being_downloaded_whole(
        bare: Bare, wx: FakeWeChat) -> None:
    adapter, got = bare
    huge = b"#!AMR\n" + bytes(FIFTY_MB - 6)
    declared = wx.add_media(huge)  # Content-Length says 50 MB: refused before the body
    chunked = wx.add_media(huge, declare_size=False)  # no length: refused while streaming
    small = wx.add_media(AMR.read_bytes())
    for media in (declared, chunked, small):
        await wx.post(wx.voice(USER, media))
    await wx.wait_for(lambda: len(got) == 3)
    assert got[0].attachments[0].size is None  # WeChat's voice callback declares no size
    with pytest.raises(TooLarge) as by_length:
        await adapter.fetch_attachment(got[0], 0)
    assert (by_length.value.size, by_length.value.read) == (FIFTY_MB, 0)
    with pytest.raises(TooLarge) as by_reading:
        await adapter.fetch_attachment(got[1], 0)
    limit = by_reading.value.limit
    assert by_reading.value.size is None
    assert limit < by_reading.value.read <= limit + MEDIA_CHUNK_BYTES
    await wx.wait_for(lambda: chunked in wx.media_sent)
    await wx.settle(0.2)
    assert wx.media_sent[chunked] < FIFTY_MB  # the server never got to send it all
    for exc in (by_length.value, by_reading.value):
        assert "access_token" not in str(exc) and "http" not in str(exc)
    assert await adapter.fetch_attachment(got[2], 0) == AMR.read_bytes()  # still fine after


@pytest.mark.parametrize("declare_size", [True, False])
async def test_a_50_mb_voice_gets_the_too_large_reply(
        wechat_app: AppFactory, wx: FakeWeChat, declare_size: bool) -> None:
    media = wx.add_media(b"#!AMR\n" + bytes(FIFTY_MB - 6), declare_size=declare_size)
    async with FakeOpenAI(default=Turn(text="never asked")) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            await wx.post(wx.voice(USER, media))
            await wx.wait_for(lambda: bool(wx.texts(USER)), within_s=30)
            await app.gateway.idle()
    [reply] = wx.texts(USER)  # in Mandarin: a WeChat user who never wrote is taken for one
    if declare_size:
        assert reply == "这个音频文件有 50.0 MB，最大只能处理 20 MB，请发一条短一点的语音。"
    else:  # no size declared: it says how much it read before stopping (20.1 MB)
        assert reply.startswith("这个音频文件有 20.") and "最大只能处理 20 MB" in reply
        assert wx.media_sent[media] < FIFTY_MB
    assert len(wx.calls_of("media/get")) == 1 and not llm.requests


async def test_bad_credentials_are_a_config_error_that_names_no_secret(
        wx: FakeWeChat, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # urllib3 logs every URL, query string included
    adapter = WeChatAdapter(token=wx.token, app_id=wx.app_id, app_secret="wrong-secret-123",
                            api_base_url=wx.api_base_url, port=0)

    async def on_message(message: IncomingMessage) -> None:
        return None

    with pytest.raises(ConfigError) as err:
        await adapter.start(on_message)
    assert "wrong-secret" not in str(err.value) and "40125" in str(err.value)
    assert "/cgi-bin/token" in caplog.text and "wrong-secret" not in caplog.text
    with pytest.raises(ConfigError):
        WeChatAdapter(kind="wecom", token="t", app_id="c", app_secret="s", agent_id=1)
    with pytest.raises(ConfigError):
        WeChatAdapter(token="t", app_id="a", app_secret="s", encoding_aes_key="short")


def test_split_bytes_keeps_every_character_within_the_limit() -> None:
    text = "。".join("平安银行今日成交活跃" for _ in range(300)) + " tail"
    pieces = split_bytes(text, 2048)
    assert len(pieces) > 1 and all(len(p.encode("utf-8")) <= 2048 for p in pieces)
    assert "".join(pieces) == text
    assert split_bytes("short", 2048) == ["short"]


def test_the_gateway_bench_runs_every_server_and_rejects_every_forgery(pg_dsn: str) -> None:
    from bot.benches import gateway_common as common
    from bot.benches import gateway_wechat

    # shape only: timings are not asserted (rule 11); this test's database
    result = gateway_wechat.run(chats=2, repeat=1, database_url=pg_dsn)
    assert result["ours"]["messages"] == result["peer_result"]["messages"] == 6
    assert result["durable_peer_result"]["messages"] == result["ceiling"]["messages"] == 6
    assert result["ceiling"]["paced"]["messages"] == 4  # the ceiling answered every question
    # the durable peer stored question and reply of all 12 (warm-up 2, closed 6, paced 4)
    assert asyncio.run(common.peer_rows(pg_dsn, platform="wechat")) == 2 * 12
    assert result["forged_reached_core"] == 0 and result["forged_sent"] > 0
    assert result["forged_statuses"] == {"403": result["forged_sent"]}
    assert result["adapter_only"]["messages"] == 6 and result["persisted"]["inbound_events"] == 12
    assert result["cpu_split"]["our_adapter_alone"] > 0 and "our_core" in result["cpu_split"]
    assert {"throughput_ratio", "adapter_only_ratio", "durable_throughput_ratio",
            "ceiling_ratio", "within_target", "peer"} <= result.keys()


async def test_a_scheduled_report_is_held_while_the_window_is_closed_and_comes_first(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    from datetime import UTC, datetime

    from jobs.runner import schedule_of

    script = [Turn(text="NVDA closed lower."), Turn(text="The answer after.")]  # narrative first
    async with FakeOpenAI(script) as llm:
        async with wechat_app(wx, llm=llm) as (app, _):
            owner = await app.store.accounts.user_for("wechat", USER, "")
            sub = await app.store.subscriptions.add(
                owner_id=owner, chat=ChatRef(platform="wechat", chat_id=USER),
                symbols=["NVDA"], at_time="08:00", recurrence="daily", tz="Asia/Shanghai",
                calendar=None, lang="en")
            wx.close_window(USER)
            fire_at = schedule_of(sub).next_fire(datetime.now(UTC))
            [fired] = await app.jobs.due(fire_at)
            key = fired.delivery_key or ""
            got = await app.outbox.wait(key, timeout_s=20)
            assert got is not None and got.status == "held", got
            assert wx.texts(USER) == []
            await wx.post(wx.text(USER, "good morning"))
            await wx.wait_for(lambda: "The answer after." in wx.texts(USER), within_s=30)
            await app.gateway.idle()
            got = await app.outbox.wait(key, timeout_s=20)
            assert got is not None and got.status == "delivered", got
    texts = wx.texts(USER)
    assert "NVDA" in texts[0] and texts[-1] == "The answer after."  # the report came first
    assert [s.kind for s in wx.sent_to(USER)].count("image") == 1  # the chart, once


async def test_success_waits_until_the_core_has_taken_the_message_but_not_past_its_bound(
        wx: FakeWeChat) -> None:
    """Nothing acknowledged that is only in memory (issue 28): "success" goes when the handler
    returns (the gateway returns once the message is stored or spooled), and at the latest
    after `ack_wait_s`, inside WeChat's 5 s."""
    taken = asyncio.Event()
    got: list[IncomingMessage] = []

    async def on_message(message: IncomingMessage) -> None:
        got.append(message)
        await taken.wait()  # the store is slow

    adapter = wechat_adapter(wx)
    adapter.ack_wait_s = 30.0
    await adapter.start(on_message)
    wx.callback_url = f"http://127.0.0.1:{adapter.port}/wechat"
    try:
        posting = asyncio.create_task(wx.post(wx.text(USER, "q1")))
        await wx.wait_for(lambda: len(got) == 1)
        await asyncio.sleep(0.3)
        assert not posting.done()  # in the core's hands, not yet taken: no "success" yet
        taken.set()
        ack = await asyncio.wait_for(posting, 10)
        assert (ack.status, ack.text) == (200, "success")
        adapter.ack_wait_s = 0.2  # a core that never returns: acknowledged at the bound
        taken.clear()
        ack = await asyncio.wait_for(wx.post(wx.text(USER, "q2")), 10)
        assert (ack.status, ack.text) == (200, "success") and len(got) == 2
    finally:
        taken.set()
        await adapter.aclose()


# --- passive replies (issue 34: reply inside the callback when the answer is ready in time) ---
# The tests give the adapter far more than WeChat's 5 s to wait for an answer, so that a busy
# machine cannot turn a passive reply into an API one; the fake does not hold them to 5 s.


@asynccontextmanager
async def answering_adapter(wx: FakeWeChat, answer: Callable[[IncomingMessage], Any],
                            **kwargs: Any) -> AsyncIterator[WeChatAdapter]:
    """The adapter alone, whose core takes each message (returns) and then answers it from a
    task of its own, as the gateway does."""
    tasks: set[asyncio.Task[Any]] = set()
    adapter = wechat_adapter(wx, **kwargs)

    async def on_message(message: IncomingMessage) -> None:
        task = asyncio.create_task(answer(message))
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    await adapter.start(on_message)
    wx.callback_url = f"http://127.0.0.1:{adapter.port}/wechat"
    try:
        yield adapter
    finally:
        for task in list(tasks):
            await task
        await adapter.aclose()


def passive_content(text: str) -> str | None:
    from xml.etree import ElementTree

    if not text.startswith("<xml>"):
        return None
    root = ElementTree.fromstring(text)
    assert root.findtext("MsgType") == "text" and root.findtext("ToUserName") == USER
    return root.findtext("Content")


async def test_an_answer_ready_in_time_is_the_callbacks_own_answer(wx: FakeWeChat) -> None:
    """No customer-service call for it; a second piece goes through the API, after it."""
    sent: list[str] = []

    async def answer(message: IncomingMessage) -> None:
        await adapter.send(message.chat, Reply(text=f"pong: {message.text}", markup="plain"))
        sent.append("first")
        await adapter.send(message.chat, Reply(text="and more", markup="plain"))
        sent.append("second")

    async with answering_adapter(wx, answer, passive_reply_s=30.0) as adapter:
        got = await wx.post(wx.text(USER, "ping"))
        assert got.status == 200 and passive_content(got.text) == "pong: ping"
        await wx.wait_for(lambda: sent == ["first", "second"])
    assert wx.calls_of("message/custom/send") and wx.texts(USER) == ["and more"]
    assert adapter.stats.passive == 1


async def test_an_answer_too_late_for_the_callback_goes_through_the_api(wx: FakeWeChat) -> None:
    released = asyncio.Event()

    async def answer(message: IncomingMessage) -> None:
        await released.wait()  # the callback has been answered "success" by then
        await adapter.send(message.chat, Reply(text="late answer", markup="plain"))

    async with answering_adapter(wx, answer, passive_reply_s=0.3) as adapter:
        got = await wx.post(wx.text(USER, "slow question"))
        assert (got.status, got.text) == (200, "success")
        released.set()
        await wx.wait_for(lambda: wx.texts(USER) == ["late answer"])
    assert adapter.stats.passive == 0


async def test_passive_replies_are_off_by_default_and_in_safe_mode(wx: FakeWeChat) -> None:
    async def answer(message: IncomingMessage) -> None:
        await adapter.send(message.chat, Reply(text="via the api", markup="plain"))

    async with answering_adapter(wx, answer) as adapter:
        got = await wx.post(wx.text(USER, "q"))
        assert got.text == "success"
        await wx.wait_for(lambda: wx.texts(USER) == ["via the api"])
    async with FakeWeChat(encoding_aes_key=AES_KEY) as safe, \
            answering_adapter(safe, answer, passive_reply_s=30.0) as adapter:
        got = await safe.post(safe.text(USER, "q"))
        assert got.status == 200 and passive_content(got.text) is None
        await safe.wait_for(lambda: safe.texts(USER) == ["via the api"])


async def test_kept_replies_go_first_so_no_passive_reply_jumps_them(wx: FakeWeChat) -> None:
    """A reply kept while the window was closed is owed first: the next answer is not given
    passively ahead of it, both go through the API in order."""
    async def answer(message: IncomingMessage) -> None:
        await adapter.send(message.chat, Reply(text=f"re: {message.text}", markup="plain"))

    async with answering_adapter(wx, answer, passive_reply_s=30.0) as adapter:
        wx.close_window(USER)
        await adapter.send(ChatRef(platform="wechat", chat_id=USER),
                           Reply(text="owed", markup="plain"))  # kept: the window is closed
        got = await wx.post(wx.text(USER, "hello again"))
        assert passive_content(got.text) is None
        await wx.wait_for(lambda: wx.texts(USER) == ["owed", "re: hello again"])


async def test_the_app_answers_passively_when_the_adapter_is_set_to(
        wechat_app: AppFactory, wx: FakeWeChat) -> None:
    """Through the real gateway: the question stored, the answer stored, and the answer in the
    callback's own response."""
    async with FakeOpenAI(default=Turn(text="A quick answer.")) as llm, \
            wechat_app(wx, llm=llm, passive_reply_s=30.0) as (app, _):
        got = await wx.post(wx.text(USER, "quick?"))
        await app.gateway.idle()
        stored = await app.db.pool.fetchval(
            "SELECT content FROM messages WHERE role = 'assistant' ORDER BY id DESC LIMIT 1")
    assert passive_content(got.text) == "A quick answer." == stored
    assert wx.calls_of("message/custom/send") == []
