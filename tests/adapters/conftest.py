"""Fixtures for adapter tests: the fake Bot API, and the real App with the real Telegram adapter
(python-telegram-bot against the fake) on a fresh embedded-Postgres database; the adapters of
every platform pointed at their fakes, and the helpers the per-platform tests and the
conformance suite share."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal, Protocol

import pytest

from adapters.discord import DiscordAdapter
from adapters.slack import SlackAdapter
from adapters.telegram import TelegramAdapter
from adapters.wechat import WeChatAdapter
from bot.app import App
from bot.commands import menu
from bot.settings import load_settings
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.fakes.telegram_server import FakeTelegram
from tests.fakes.wechat_server import FakeWeChat

AUDIO = Path(__file__).resolve().parents[1] / "fixtures" / "audio"
WORKING = "⏳ Working on it…"


def user_texts(llm: FakeOpenAI) -> list[str]:
    """What the model was asked, in order (the last user message of each request)."""
    return [[m for m in r["messages"] if m["role"] == "user"][-1]["content"]
            for r in llm.requests]


async def inbound_count(app: App) -> int:
    """Messages the gateway recorded: everything that reached the core."""
    return int(await app.db.pool.fetchval("SELECT count(*) FROM inbound_events"))


class _ShowsTexts(Protocol):
    def texts(self, chat: Any, /) -> list[str]: ...


def shows(fake: _ShowsTexts, chat: Any, needle: str) -> bool:
    """Some message the bot has in `chat` shows `needle`."""
    return any(needle in t for t in fake.texts(chat))


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


def telegram_adapter(fake: FakeTelegram, **kwargs: Any) -> TelegramAdapter:
    """The adapter pointed at the fake; edits as often as events come unless told otherwise."""
    kwargs.setdefault("min_edit_interval_s", 0.0)
    kwargs.setdefault("commands", menu("en"))
    kwargs.setdefault("localized_commands", {"zh": menu("zh")})
    return TelegramAdapter(token=fake.token, base_url=fake.base_url,
                           base_file_url=fake.base_file_url, **kwargs)


def discord_adapter(fake: FakeDiscord, **kwargs: Any) -> DiscordAdapter:
    """The adapter pointed at the fake; edits as often as events come unless told otherwise."""
    kwargs.setdefault("min_edit_interval_s", 0.0)
    kwargs.setdefault("commands", menu("en"))
    kwargs.setdefault("localized_commands", {"zh": menu("zh")})
    kwargs.setdefault("public_key", fake.public_key)
    return DiscordAdapter(token=fake.token, api_base_url=fake.api_base_url,
                          gateway_url=fake.gateway_url, **kwargs)


def slack_adapter(fake: FakeSlack, **kwargs: Any) -> SlackAdapter:
    """The adapter on the fake: HTTP events on a free port, edits as often as events come."""
    kwargs.setdefault("min_edit_interval_s", 0.0)
    kwargs.setdefault("commands", menu("en"))
    kwargs.setdefault("events_port", 0)
    if "app_token" not in kwargs:
        kwargs.setdefault("signing_secret", fake.signing_secret)
    return SlackAdapter(bot_token=fake.token, api_base_url=fake.base_url, **kwargs)


def wechat_adapter(fake: FakeWeChat, **kwargs: Any) -> WeChatAdapter:
    """The adapter for the fake's app, on any free port."""
    if fake.kind == "wecom":
        kwargs.setdefault("agent_id", fake.agent_id)
    kind: Literal["official", "wecom"] = "wecom" if fake.kind == "wecom" else "official"
    return WeChatAdapter(kind=kind, token=fake.token, app_id=fake.app_id,
                         app_secret=fake.app_secret, encoding_aes_key=fake.aes_key,
                         api_base_url=fake.api_base_url, port=0, **kwargs)


@pytest.fixture
def telegram_app(pg_dsn: str, tmp_path: Path, tg: FakeTelegram) -> Callable[..., Any]:
    """`async with telegram_app(llm=..., adapter={...}, **settings) as (app, adapter)`: an App on
    this test's database (the same one on every call: a restart) with the adapter started."""

    @asynccontextmanager
    async def factory(*, llm: Any = None, adapter: dict[str, Any] | None = None,
                      **overrides: Any) -> AsyncIterator[tuple[App, TelegramAdapter]]:
        if llm is not None:
            overrides.setdefault("llm_base_url", llm.base_url)
            overrides.setdefault("llm_model", "fake-model")
            overrides.setdefault("llm_plan", False)
        settings = load_settings(database_url=pg_dsn, data_dir=tmp_path / "data", **overrides)
        app = await App.create(settings)
        try:
            # jobs=False: tests fire subscriptions by hand (`app.jobs.due`); a live scheduler
            # would also fire one whose time falls while the test runs (08:00 Shanghai at
            # 00:00 UTC), a second report and a second model call
            await app.start_adapters([telegram_adapter(tg, **(adapter or {}))], jobs=False)
            yield app, app.adapters[0]  # type: ignore[misc]
        finally:
            await app.aclose()

    return factory
