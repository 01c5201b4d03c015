"""The web page in a real browser: Debian's chromium driven by Playwright's Python client.
Runs only under `make test-web` (BULLPEN_TEST_WEB=1), which installs the `web-test` extra
and, where it is missing, chromium: `make test` skips it. The App is the real one (embedded
Postgres, the web platform on a loopback port, the OpenAI-compatible fake streaming slowly or
the offline analyst). Screenshots of the main states go to tests/web_browser/artifacts/."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.app import App
from bot.settings import load_settings
from tests.fakes.openai_server import FakeOpenAI

ENABLED = os.environ.get("BULLPEN_TEST_WEB") == "1"
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(reason="the browser suite runs with `make test-web`")
    for item in items:
        if str(item.fspath).startswith(here) and not ENABLED:
            item.add_marker(skip)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def fonts_conf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fontconfig file: the system's fonts and the CJK font the charts use (the
    `cvttf-notosanscjk-regular` package), so that Chinese on the page is drawn, not boxes, on a
    machine with no CJK font installed (a Chinese reader's browser has one)."""
    from tools.fonts import cjk_font_path

    here = tmp_path_factory.mktemp("fonts")
    conf = here / "fonts.conf"
    conf.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n'
        '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n'
        f"  <dir>{Path(cjk_font_path()).parent}</dir>\n"
        f"  <cachedir>{here / 'cache'}</cachedir>\n</fontconfig>\n")
    return conf


@pytest.fixture
async def chromium(fonts_conf: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.fail("BULLPEN_TEST_WEB=1 but Playwright is not installed: run `make test-web`")
    from bot.benches.web import launch_chromium

    # the browser inherits the environment of Playwright's driver, started below
    monkeypatch.setenv("FONTCONFIG_FILE", str(fonts_conf))
    async with async_playwright() as p:
        browser = await launch_chromium(p)
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
def shot(request: pytest.FixtureRequest) -> Callable[[Any, str], Any]:
    """`await shot(page, "name")`: a screenshot kept as a test artefact."""
    ARTIFACTS.mkdir(exist_ok=True)

    async def take(page: Any, name: str) -> Path:
        path = ARTIFACTS / f"{request.node.name}-{name}.png"
        await page.screenshot(path=str(path), full_page=True)
        print(f"screenshot: {path}")
        return path

    return take


@pytest.fixture
def serving(pg_dsn: str, tmp_path: Path) -> Callable[..., Any]:
    """`async with serving(port, llm=None) as (app, link)`: the App with the web platform on
    `port` (the same database every time), and a one-time sign-in link for the console's
    person, who is an admin (BULLPEN_ADMINS=console:local)."""

    @asynccontextmanager
    async def run(port: int, *, llm: FakeOpenAI | None = None) -> AsyncIterator[tuple[App, str]]:
        from bot.web_links import login_link

        overrides: dict[str, Any] = {}
        if llm is not None:
            overrides = {"llm_base_url": llm.base_url, "llm_model": "fake-model",
                         "llm_plan": False}
        settings = load_settings(database_url=pg_dsn, data_dir=tmp_path / "data",
                                 web_port=port, admins="console:local", **overrides)
        app = await App.create(settings)
        try:
            await app.start_adapters(app.build_adapters(["web"]), jobs=False)
            user = await app.store.accounts.user_for("console", "local", "local")
            base = settings.web_links_base()
            assert base is not None
            yield app, await login_link(app.store, base, user)
        finally:
            await app.aclose()

    return run
