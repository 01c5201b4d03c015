"""No platform secret reaches the logs, even at DEBUG where the SDKs write out URLs, request
parameters and raw gateway events: each adapter runs against its loopback fake with the root
logger at DEBUG and a handler installed the way `bot.logs.setup` installs its own
(`logs.redacting`, the configured secrets registered from the settings)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot import logs
from bot.settings import load_settings
from core.types import IncomingMessage, Reply
from tests.adapters.conftest import (
    discord_adapter,
    slack_adapter,
    telegram_adapter,
    wechat_adapter,
)
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.wechat_server import FakeWeChat, openid

CHAT = 1001
DM = 5001


class Captured(logging.Handler):
    """Every record, formatted as the log line would be (traceback included)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def leaks(self, *secrets: str) -> list[str]:
        return [line[:300] for line in self.lines for s in secrets if s and s in line]


@pytest.fixture
def captured() -> Iterator[Captured]:
    root = logging.getLogger()
    handler = logs.redacting(Captured())
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler  # type: ignore[misc]
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        logs.REDACTOR.clear()


def configured(**settings: Any) -> None:
    """Register the secrets of these settings the way `bot.cli` does at start."""
    logs.register_secrets(*logs.secrets_of(load_settings(**settings)))


async def _ignore(message: IncomingMessage) -> None:
    return None


async def test_telegram_token_and_webhook_secrets_stay_out_of_debug_logs(
        captured: Captured) -> None:
    async with FakeTelegram() as tg:
        configured(telegram_bot_token=tg.token, telegram_webhook_secret="configured-Secret-77")
        hooked = telegram_adapter(tg, webhook_url="https://bot.example.com/tg", webhook_port=0,
                                  webhook_secret="configured-Secret-77")
        await hooked.start(_ignore)
        await hooked.aclose()
        generated = telegram_adapter(tg, webhook_url="https://bot.example.com/tg",
                                     webhook_port=0)  # a secret nobody configured
        await generated.start(_ignore)
        made_up = tg.webhook["secret_token"]
        await generated.aclose()

        got: list[IncomingMessage] = []

        async def collect(message: IncomingMessage) -> None:
            got.append(message)

        polling = telegram_adapter(tg)
        await polling.start(collect)
        try:
            fid = tg.add_file(b"OggS\x00voice", "voice/file_1.oga")
            tg.push(tg.message(CHAT, voice={"file_id": fid, "file_unique_id": fid,
                                            "duration": 2, "mime_type": "audio/ogg"}))
            await tg.wait_for(lambda: len(got) == 1)
            assert await polling.fetch_attachment(got[0], 0) == b"OggS\x00voice"
            await polling.send(got[0].chat, Reply(text="hi", markup="plain"))
        finally:
            await polling.aclose()
    assert "setWebhook" in captured.text and "Set Bot API URL" in captured.text
    _, token_secret = tg.token.split(":")
    assert not captured.leaks(tg.token, token_secret, "configured-Secret-77", made_up)


@pytest.fixture
def _endpoints_restored() -> Iterator[None]:
    before = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)
    yield
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = before


async def test_discord_bot_and_interaction_tokens_stay_out_of_debug_logs(
        captured: Captured, _endpoints_restored: None) -> None:
    async with FakeDiscord() as dc:
        configured(discord_bot_token=dc.token)
        adapter = discord_adapter(dc)
        answered: list[str] = []

        async def answer(message: IncomingMessage) -> None:
            ref = await adapter.send(message.chat, Reply(text="thinking", markup="plain",
                                                         in_reply_to=message.message_id))
            await adapter.edit(ref, Reply(text="done", markup="plain"))
            answered.append(message.message_id)

        await adapter.start(answer)
        try:
            await dc.push(dc.interaction(DM, "help"))
            await dc.wait_for(lambda: dc.texts(DM) == ["done"])
            await dc.push(dc.message(DM, "hello"))
            await dc.wait_for(lambda: len(answered) == 2)
        finally:
            await adapter.aclose()
    interaction_tokens = list(dc.interactions)
    assert interaction_tokens and "/webhooks/" in captured.text
    assert "INTERACTION_CREATE" in captured.text  # the raw gateway event, token and all
    assert not captured.leaks(dc.token, *interaction_tokens)


@pytest.mark.parametrize("socket_mode", [False, True])
async def test_slack_tokens_and_signing_secret_stay_out_of_debug_logs(
        captured: Captured, socket_mode: bool) -> None:
    async with FakeSlack() as slack:
        configured(slack_bot_token=slack.token, slack_app_token=slack.app_token,
                   slack_signing_secret=slack.signing_secret)
        kwargs = {"app_token": slack.app_token} if socket_mode else {}
        adapter = slack_adapter(slack, **kwargs)

        async def answer(message: IncomingMessage) -> None:
            await adapter.send(message.chat, Reply(text="hi", markup="plain"))

        await adapter.start(answer)
        try:
            event = slack.envelope(slack.message("D0ALICE", "hello"))
            if socket_mode:
                await slack.wait_for(lambda: bool(slack.sockets))
                await slack.push(event)
            else:
                status, _ = await slack.post(
                    f"http://127.0.0.1:{adapter.events_port}/slack/events", event)
                assert status == 200
            await slack.wait_for(lambda: slack.texts("D0ALICE") == ["hi"])
        finally:
            await adapter.aclose()
    assert "chat.postMessage" in captured.text
    assert not captured.leaks(slack.token, slack.app_token, slack.signing_secret)


@pytest.fixture
async def wx() -> AsyncIterator[FakeWeChat]:
    async with FakeWeChat(encoding_aes_key="abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG") as fake:
        yield fake


async def test_wechat_secret_token_aes_key_and_access_tokens_stay_out_of_debug_logs(
        captured: Captured, wx: FakeWeChat) -> None:
    assert wx.aes_key is not None
    configured(wechat_token=wx.token, wechat_app_id=wx.app_id, wechat_app_secret=wx.app_secret,
               wechat_encoding_aes_key=wx.aes_key)
    adapter = wechat_adapter(wx)
    got: list[IncomingMessage] = []

    async def collect(message: IncomingMessage) -> None:
        got.append(message)

    await adapter.start(collect)
    wx.callback_url = f"http://127.0.0.1:{adapter.port}/wechat"
    try:
        media = wx.add_media(b"#!AMR\nvoice")
        await wx.post(wx.voice(openid(1), media))
        await wx.wait_for(lambda: len(got) == 1)
        wx.expire_tokens()  # the next call fetches a new token: the secret is in that URL
        assert await adapter.fetch_attachment(got[0], 0) == b"#!AMR\nvoice"
        await adapter.send(got[0].chat, Reply(text="hi", markup="plain"))
    finally:
        await adapter.aclose()
    access_tokens = list(wx._tokens)  # every token the fake issued
    assert len(access_tokens) == 2 and "/cgi-bin/token" in captured.text
    assert "access_token=***" in captured.text
    assert not captured.leaks(wx.app_secret, wx.token, wx.aes_key, *access_tokens)
