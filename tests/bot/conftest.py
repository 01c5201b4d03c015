"""Fixtures for the bot layer: an App on a fresh database, optionally with a fake LLM."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.app import App
from bot.settings import load_settings


@pytest.fixture
def make_app(pg_dsn: str, tmp_path: Path) -> Callable[..., Any]:
    @asynccontextmanager
    async def factory(**overrides: Any) -> AsyncIterator[App]:
        settings = load_settings(database_url=pg_dsn, data_dir=tmp_path / "data",
                                 **overrides)
        app = await App.create(settings)
        try:
            yield app
        finally:
            await app.aclose()

    return factory
