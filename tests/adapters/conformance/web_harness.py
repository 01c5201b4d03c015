"""The web platform's conformance harness: the real `WebAdapter` on the real App (its
`StoreWebDirectory` on the test's Postgres), and for each user a browser-like client (aiohttp with
a cookie jar) that signs in with a one-time link, keeps the page's event stream open and
records what the page shows: the bot's messages as they stand now, the files (downloaded from
the page's links), and every send / edit as it arrived.

The web has no platform rate limits (nothing to inject a 429 into) and no voice notes; the
suite's cases for those are not run on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, ClassVar

import aiohttp
from yarl import URL

from adapters.web import WebAdapter
from adapters.web.render import markdown_html
from bot.app import App
from core.ports import Adapter
from tests.adapters.conformance.conftest import BaseHarness, On, SentFile


class _Text(HTMLParser):
    """The text a browser shows for the page's HTML (blocks on their own lines)."""

    BLOCKS: ClassVar[set[str]] = {"p", "li", "tr", "h1", "h2", "h3", "h4", "pre", "blockquote",
                                  "table"}

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def shown(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text.strip()


class _LateDirectory:
    """The App's `StoreWebDirectory`, known once the App is running (`run_app` makes the
    adapter before it hands the App over)."""

    target: Any = None

    def __getattr__(self, name: str) -> Any:
        assert self.target is not None, "the App is not attached yet"
        return getattr(self.target, name)


@dataclass
class _Page:
    """One user's open page."""

    http: aiohttp.ClientSession
    csrf: str
    uid: str
    chat_id: str
    messages: dict[str, str] = field(default_factory=dict)  # id -> shown text, in order
    files: list[SentFile] = field(default_factory=list)
    calls: list[tuple[float, On, str]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None
    ready: asyncio.Event = field(default_factory=asyncio.Event)


class WebClients:
    """The harness's "fake platform": the users' browsers, and what their pages show."""

    def __init__(self) -> None:
        self.pages: dict[int, _Page] = {}
        self.last_event = time.monotonic()
        self._sessions: list[aiohttp.ClientSession] = []

    async def __aenter__(self) -> WebClients:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close_pages()

    async def close_pages(self) -> None:
        for page in self.pages.values():
            if page.reader is not None:
                page.reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await page.reader
        self.pages.clear()
        for http in self._sessions:
            await http.close()
        self._sessions.clear()

    def session(self) -> aiohttp.ClientSession:
        http = aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))
        self._sessions.append(http)
        return http

    async def wait_for(self, predicate: Callable[[], bool], within_s: float) -> None:
        end = time.monotonic() + within_s
        while not predicate():
            if time.monotonic() > end:
                raise AssertionError("the page did not show it in time")
            await asyncio.sleep(0.02)

    async def settle(self, quiet_s: float) -> None:
        """Until no event has come for `quiet_s`."""
        while True:
            left = quiet_s - (time.monotonic() - self.last_event)
            if left <= 0:
                return
            await asyncio.sleep(left)


class WebHarness(BaseHarness):
    """The chat page: typed text and commands over HTTP (with the session's CSRF token), the
    answer over the page's server-sent events."""

    name = "web"
    voice_format = ""
    has_groups = False
    SEND, EDIT = "send", "edit"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.fake = WebClients()
        self._directory = _LateDirectory()
        self._base = ""

    def make_adapter(self, *, signed: bool) -> Adapter:
        return WebAdapter(directory=self._directory, port=0)  # type: ignore[arg-type]

    def attach(self, app: App, adapter: Adapter) -> None:
        from bot.web_directory import StoreWebDirectory

        super().attach(app, adapter)
        self._directory.target = StoreWebDirectory(app.store)
        assert isinstance(adapter, WebAdapter)
        self._base = f"http://127.0.0.1:{adapter.port}"

    async def _page(self, user: int) -> _Page:
        """The user's page, signed in and listening (after a restart: signed in again)."""
        page = self.fake.pages.get(user)
        if page is not None and page.reader is not None and not page.reader.done():
            return page
        old = page
        user_id = await self.app.store.accounts.user_for("console", f"web-user-{user}")
        token = await self._directory.issue_login(user_id)
        http = self.fake.session()
        async with http.post(f"{self._base}/login/{token}", allow_redirects=False) as resp:
            assert resp.status == 303, await resp.text()
        async with http.get(f"{self._base}/api/me") as resp:
            me = await resp.json()
        cookie = http.cookie_jar.filter_cookies(URL(self._base))["bullpen_session"].value
        session = await self._directory.session(cookie)
        page = _Page(http=http, csrf=me["csrf"], uid=session.person.platform_uid,
                     chat_id=f"web:{user_id}")
        if old is not None:  # what the page showed before the restart, as a reload shows it
            page.messages, page.files, page.calls = old.messages, old.files, old.calls
        self.fake.pages[user] = page
        page.reader = asyncio.create_task(self._read(page), name=f"web-page-{user}")
        await asyncio.wait_for(page.ready.wait(), 10)
        return page

    async def _read(self, page: _Page) -> None:
        async with page.http.get(f"{self._base}/api/events") as resp:
            data = ""
            async for raw in resp.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    data += line[6:]
                elif line == "" and data:
                    await self._show(page, json.loads(data))
                    data = ""

    async def _show(self, page: _Page, event: dict[str, Any]) -> None:
        self.fake.last_event = time.monotonic()
        kind = event["type"]
        if kind == "snapshot":
            for item in event["items"]:
                if item["role"] == "assistant":
                    page.messages[item["id"]] = shown(item["html"])
            page.ready.set()
        elif kind in ("message_sent", "message_edited"):
            item = event["item"]
            page.messages[item["id"]] = shown(item["html"])
            page.calls.append((time.monotonic(), "send" if kind == "message_sent" else "edit",
                               page.messages[item["id"]]))
        elif kind == "file_sent":
            file = event["item"]["file"]
            async with page.http.get(self._base + file["url"]) as resp:
                data = await resp.read()
            page.files.append(SentFile(file["kind"], file["filename"], data))

    # --- what the suite does ---------------------------------------------------------------

    def uid(self, user: int) -> str:
        return self.fake.pages[user].uid

    def _key(self, user: int) -> str:
        return self.fake.pages[user].chat_id

    async def _post(self, user: int, text: str, *, client_id: str | None = None) -> None:
        page = await self._page(user)
        async with page.http.post(f"{self._base}/api/messages",
                                  json={"text": text, "client_id": client_id or uuid.uuid4().hex},
                                  headers={"X-CSRF-Token": page.csrf}) as resp:
            assert resp.status == 202, await resp.text()

    async def send_text(self, user: int, text: str) -> None:
        await self._post(user, text)

    async def send_command(self, user: int, command: str) -> None:
        await self._post(user, command)  # typed on the page

    async def send_voice(self, user: int, fixture: Any) -> None:
        raise NotImplementedError("the web page sends no voice notes")

    async def deliver_duplicate(self, user: int, text: str) -> None:
        client_id = uuid.uuid4().hex  # a resubmitted form: the same message id again
        await self._post(user, text, client_id=client_id)
        await self._post(user, text, client_id=client_id)

    async def send_forged(self, user: int, text: str) -> list[int]:
        page = await self._page(user)
        url = f"{self._base}/api/messages"
        statuses = []
        for headers in ({}, {"X-CSRF-Token": "forged"}, {"X-CSRF-Token": page.csrf[:-1]}):
            async with page.http.post(url, json={"text": text}, headers=headers) as resp:
                statuses.append(resp.status)
        async with aiohttp.ClientSession() as anonymous, anonymous.post(
                url, json={"text": text}, headers={"X-CSRF-Token": page.csrf}) as resp:
            statuses.append(resp.status)  # the token without the session's cookie
        return statuses

    async def send_signed(self, user: int, text: str) -> None:
        await self.send_text(user, text)

    def _refuse(self, method: str, when: Callable[[dict[str, Any]], bool]) -> None:
        raise NotImplementedError("the web platform has no rate limits to inject")

    def visible_messages(self, user: int) -> list[str]:
        page = self.fake.pages.get(user)
        return list(page.messages.values()) if page is not None else []

    def sent_files(self, user: int) -> list[SentFile]:
        page = self.fake.pages.get(user)
        return list(page.files) if page is not None else []

    def outgoing(self, on: On, user: int) -> list[Any]:
        from tests.adapters.conformance.conftest import Outgoing

        page = self.fake.pages.get(user)
        return [Outgoing(t, text) for t, kind, text in (page.calls if page else []) if kind == on]

    def rendered(self, md: str) -> str:
        return shown(markdown_html(md.strip()))
