"""The web platform over HTTP: the real `WebAdapter` served by aiohttp on loopback, driven by
aiohttp's client like a browser (a cookie jar, the CSRF header the page sends), on the
in-memory `WebDirectory` twin. Every route, and what each bad request gets: a used or expired
sign-in link, a forged or missing CSRF token, another person's conversation or file, a guessed
share token, script in a message, a question or a file name, the admin console for a
non-admin (the same 404 as a path that does not exist), a write in the SQL box.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest

from adapters.web import WebAdapter
from adapters.web.adapter import COOKIE
from core.errors import MessageNotModified, PlatformError
from core.events import Done, File, Status, TextDelta, Thinking, ToolFinished, ToolStarted
from core.ports import Adapter, EventObserver, WebTable
from core.testing import MemoryWebDirectory
from core.types import ChatRef, IncomingMessage, MessageRef, OutgoingFile, Reply

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
PDF = b"%PDF-1.4\n% test\n"
XSS = ['<script>alert("x")</script>', '<img src=x onerror=alert(1)>',
       '[click](javascript:alert(1))']


@dataclass
class Web:
    adapter: WebAdapter
    directory: MemoryWebDirectory
    received: list[IncomingMessage] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.adapter.port}"


@pytest.fixture
async def web() -> AsyncIterator[Web]:
    directory = MemoryWebDirectory()
    adapter = WebAdapter(directory=directory, listen="127.0.0.1", port=0,
                         max_body_bytes=64 * 1024)
    harness = Web(adapter, directory)

    async def on_message(msg: IncomingMessage) -> None:
        harness.received.append(msg)

    await adapter.start(on_message)
    try:
        yield harness
    finally:
        await adapter.aclose()


def browser() -> aiohttp.ClientSession:
    # a cookie jar that keeps cookies of an IP host (loopback), as a browser does
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def signed_in(web: Web, user_id: str = "alice", **person: Any) -> tuple[
        aiohttp.ClientSession, str]:
    """A browser signed in as `user_id` through a one-time link; its CSRF token."""
    if user_id not in web.directory.people:
        web.directory.person(user_id, **person)
    http = browser()
    token = web.directory.login_link(user_id)
    async with http.post(f"{web.base}/login/{token}", allow_redirects=False) as resp:
        assert resp.status == 303 and resp.headers["Location"] == "/"
    async with http.get(f"{web.base}/api/me") as resp:
        assert resp.status == 200
        me = await resp.json()
    return http, me["csrf"]


async def settle(web: Web | RealWeb, count: int) -> None:
    for _ in range(100):
        if len(web.received) >= count:
            return
        await asyncio.sleep(0.01)


class Stream:
    """A server-sent events reader on an open response."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.resp = resp
        self.last_id = ""

    async def next(self, within_s: float = 5.0) -> dict[str, Any]:
        async def read() -> dict[str, Any]:
            data = ""
            while True:
                line = (await self.resp.content.readline()).decode()
                if not line:
                    raise EOFError("the stream ended")
                line = line.rstrip("\n")
                if line.startswith("id: "):
                    self.last_id = line[4:]
                elif line.startswith("data: "):
                    data += line[6:]
                elif line == "" and data:
                    return json.loads(data)

        return await asyncio.wait_for(read(), within_s)

    async def until(self, kind: str) -> dict[str, Any]:
        while True:
            event = await self.next()
            if event["type"] == kind:
                return event


# --- sign-in ---------------------------------------------------------------------------------


async def test_a_one_time_link_signs_in_once_with_an_httponly_lax_cookie(web: Web) -> None:
    web.directory.person("alice")
    token = web.directory.login_link("alice")
    async with browser() as http:
        async with http.get(f"{web.base}/login/{token}") as resp:  # a link preview: no sign-in
            page = await resp.text()
            assert resp.status == 200 and f'action="/login/{token}"' in page
        async with http.get(f"{web.base}/api/me") as resp:
            assert resp.status == 401
        async with http.post(f"{web.base}/login/{token}", allow_redirects=False) as resp:
            assert resp.status == 303 and resp.headers["Location"] == "/"
            cookie = resp.headers["Set-Cookie"]
        assert cookie.startswith(f"{COOKIE}=") and "HttpOnly" in cookie
        assert "SameSite=Lax" in cookie and "Secure" not in cookie  # plain http on loopback
        async with http.get(f"{web.base}/api/me") as resp:
            me = await resp.json()
        assert me["user_id"] == "alice" and me["csrf"] and me["is_admin"] is False
        async with http.get(f"{web.base}/") as resp:
            assert resp.status == 200 and "/static/app.js" in await resp.text()
    async with browser() as other:  # the same link again: used
        async with other.post(f"{web.base}/login/{token}", allow_redirects=False) as resp:
            assert resp.status == 404 and "used or expired" in await resp.text()
            assert "Set-Cookie" not in resp.headers


async def test_an_expired_or_unknown_link_gets_a_clear_page_and_no_session(web: Web) -> None:
    web.directory.person("alice")
    expired = web.directory.login_link("alice", expires_in_s=-1)
    async with browser() as http:
        for token in (expired, "not-a-token-we-issued", "x"):
            async with http.post(f"{web.base}/login/{token}", allow_redirects=False) as resp:
                assert resp.status == 404 and "used or expired" in await resp.text()
        async with http.get(f"{web.base}/api/me") as resp:
            assert resp.status == 401
            assert "/web" in (await resp.json())["error"]


async def test_a_sign_in_posted_from_another_site_is_refused_and_the_link_kept(
        web: Web) -> None:
    web.directory.person("alice")
    token = web.directory.login_link("alice")
    async with browser() as http:
        async with http.post(f"{web.base}/login/{token}", allow_redirects=False,
                             headers={"Origin": "https://evil.example"}) as resp:
            assert resp.status == 403
        async with http.post(f"{web.base}/login/{token}", allow_redirects=False,
                             headers={"Sec-Fetch-Site": "cross-site", "Origin": "null"}) as resp:
            assert resp.status == 403
        async with http.post(f"{web.base}/login/{token}", allow_redirects=False,
                             headers={"Origin": "null", "Sec-Fetch-Site": "same-origin"}) as resp:
            assert resp.status == 303  # not used up by the refused attempts


async def test_the_cookie_is_secure_when_the_base_url_is_https() -> None:
    directory = MemoryWebDirectory()
    directory.person("alice")
    adapter = WebAdapter(directory=directory, port=0, base_url="https://bullpen.example")

    async def ignore(msg: IncomingMessage) -> None:
        return None

    await adapter.start(ignore)
    try:
        token = directory.login_link("alice")
        async with browser() as http, http.post(
                f"http://127.0.0.1:{adapter.port}/login/{token}", allow_redirects=False) as resp:
            assert "Secure" in resp.headers["Set-Cookie"]
    finally:
        await adapter.aclose()


async def test_without_a_session_the_page_says_how_to_sign_in_and_the_api_refuses(
        web: Web) -> None:
    async with browser() as http:
        async with http.get(f"{web.base}/") as resp:
            page = await resp.text()
            assert resp.status == 200 and "/web" in page and "app.js" not in page
        for path in ("/api/me", "/api/chat", "/api/conversations", "/api/files",
                     "/api/conversations/1", "/files/1", "/api/events"):
            async with http.get(web.base + path) as resp:
                assert resp.status == 401, path
        async with http.post(f"{web.base}/api/messages", json={"text": "hi"}) as resp:
            assert resp.status == 401
    assert web.received == []


async def test_logout_ends_the_session(web: Web) -> None:
    http, csrf = await signed_in(web)
    async with http:
        async with http.post(f"{web.base}/logout") as resp:  # no CSRF token: refused
            assert resp.status == 403
        async with http.get(f"{web.base}/api/me") as resp:
            assert resp.status == 200
        async with http.post(f"{web.base}/logout", headers={"X-CSRF-Token": csrf}) as resp:
            assert resp.status == 200 and COOKIE in resp.headers.get("Set-Cookie", "")
        async with http.get(f"{web.base}/api/me") as resp:
            assert resp.status == 401


# --- messages and CSRF -----------------------------------------------------------------------


async def test_a_message_reaches_the_gateway_as_the_persons_web_chat(web: Web) -> None:
    http, csrf = await signed_in(web, "alice", display_name="Alice")
    async with http:
        async with http.post(f"{web.base}/api/messages", json={"text": " How is NVDA? "},
                             headers={"X-CSRF-Token": csrf}) as resp:
            assert resp.status == 202
            message_id = (await resp.json())["message_id"]
        async with http.post(f"{web.base}/api/stop", headers={"X-CSRF-Token": csrf}) as resp:
            assert resp.status == 202
        await settle(web, 2)
    question, stop = web.received
    person = web.directory.people["alice"]
    assert question.platform == "web" and question.text == "How is NVDA?"
    assert question.message_id == message_id
    assert question.chat == ChatRef(platform="web", chat_id="web:alice")
    assert question.sender.platform_uid == person.platform_uid
    assert question.sender.display_name == "Alice"
    assert stop.text == "/stop" and stop.chat == question.chat


async def test_a_missing_or_forged_csrf_token_is_refused_and_nothing_is_done(web: Web) -> None:
    http, csrf = await signed_in(web)
    conv = web.directory.conversation("alice")
    async with http:
        for headers in ({}, {"X-CSRF-Token": "forged"}, {"X-CSRF-Token": csrf[:-1]},
                        {"X-CSRF-Token": ""}):
            for path, body in (("/api/messages", {"text": "sell everything"}),
                               ("/api/stop", {}),
                               ("/api/share", {"conversation_id": conv.id}),
                               ("/api/unshare", {"conversation_id": conv.id})):
                async with http.post(web.base + path, json=body, headers=headers) as resp:
                    assert resp.status == 403, (path, headers)
                    assert "CSRF" in (await resp.json())["error"]
        async with http.post(f"{web.base}/logout", data={"csrf": "forged"}) as resp:
            assert resp.status == 403
        async with http.get(f"{web.base}/api/me") as resp:
            assert resp.status == 200  # still signed in
    await asyncio.sleep(0.05)
    assert web.received == []
    assert await web.directory.shared_file("x", "y") is None
    assert not web.directory._shares  # nothing was shared


async def test_bad_requests_get_a_clear_400_and_nothing_is_sent(web: Web) -> None:
    http, csrf = await signed_in(web)
    url, h = f"{web.base}/api/messages", {"X-CSRF-Token": csrf}
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"data": b"{not json", "headers": {**h, "Content-Type": "application/json"}},
         400, "not valid JSON"),
        ({"json": ["a", "list"], "headers": h}, 400, "JSON object"),
        ({"data": b"text=hi", "headers": {**h, "Content-Type": "text/plain"}}, 400,
         "application/json"),
        ({"json": {"text": "   "}, "headers": h}, 400, "Nothing to send"),
        ({"json": {"text": 42}, "headers": h}, 400, "Nothing to send"),
        ({"json": {"text": "x" * 8001}, "headers": h}, 400, "too long"),
        ({"json": {"text": "hi", "client_id": "bad id!"}, "headers": h}, 400, "client_id"),
        ({"json": {"text": "x" * 70_000}, "headers": h}, 413, "too large"),
        # too deep for the parser: a 400, not a 503 with a traceback in the log
        ({"data": b"[" * 20_000 + b"]" * 20_000,
          "headers": {**h, "Content-Type": "application/json"}}, 400, "nested too deeply"),
        ({"data": b'{"text": "hi", "x": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_001,
          "headers": {**h, "Content-Type": "application/json"}}, 400, "nested too deeply"),
        ({"json": {"text": ["NVDA?"]}, "headers": h}, 400, "Nothing to send"),
        ({"json": {"text": "hi", "client_id": 12}, "headers": h}, 400, "client_id"),
    ]
    async with http:
        for kwargs, status, says in cases:
            async with http.post(url, **kwargs) as resp:
                assert resp.status == status, (kwargs, await resp.text())
                assert says in (await resp.json())["error"]
    await asyncio.sleep(0.05)
    assert web.received == []


# --- conversations and files -----------------------------------------------------------------


async def test_a_person_sees_their_conversations_and_no_one_elses(web: Web) -> None:
    http, _ = await signed_in(web, "alice")
    web.directory.person("bob")
    mine = web.directory.conversation("alice", title="NVDA")
    telegram = web.directory.conversation("alice", platform="telegram", title="TG")
    theirs = web.directory.conversation("bob", title="secret")
    web.directory.say(mine.id, "user", "How is NVDA?")
    web.directory.say(mine.id, "assistant", "**Up** 3%")
    async with http:
        async with http.get(f"{web.base}/api/conversations") as resp:
            listed = (await resp.json())["conversations"]
        assert [(c["id"], c["writable"]) for c in listed] == [(mine.id, True),
                                                              (telegram.id, False)]
        async with http.get(f"{web.base}/api/conversations/{mine.id}") as resp:
            transcript = await resp.json()
        assert [e["role"] for e in transcript["entries"]] == ["user", "assistant"]
        assert transcript["entries"][1]["html"].strip() == "<p><strong>Up</strong> 3%</p>"
        async with http.get(f"{web.base}/api/chat") as resp:
            assert (await resp.json())["conversation"]["id"] == mine.id
        for conv_id in (theirs.id, "999", "../1", "1%20OR%201=1"):
            async with http.get(f"{web.base}/api/conversations/{conv_id}") as resp:
                assert resp.status == 404, conv_id


async def test_files_download_with_safe_names_and_only_for_their_owner(web: Web) -> None:
    http, _ = await signed_in(web, "alice")
    web.directory.person("bob")
    conv = web.directory.conversation("alice")
    report = web.directory.add_file("alice", 'NVDA "report"\r\nX-Evil: 1.pdf', PDF,
                                    conversation_id=conv.id)
    chart = web.directory.add_file("alice", "nvda.png", PNG, kind="image",
                                   mime_type="image/png", conversation_id=conv.id)
    page = web.directory.add_file("alice", "page.html", b"<script>alert(1)</script>",
                                  mime_type="text/html")
    bobs = web.directory.add_file("bob", "bob.pdf", PDF)
    async with http:
        async with http.get(f"{web.base}/api/files") as resp:
            files = (await resp.json())["files"]
        assert [f["url"] for f in files] == [f"/files/{i.id}" for i in (report, chart, page)]
        async with http.get(f"{web.base}/files/{report.id}") as resp:
            assert await resp.read() == PDF and resp.content_type == "application/pdf"
            disposition = resp.headers["Content-Disposition"]
            assert "X-Evil" not in resp.headers
        assert disposition.startswith("attachment;") and "\r" not in disposition
        assert re.search(r'filename="[A-Za-z0-9._-]+"', disposition)
        async with http.get(f"{web.base}/files/{chart.id}") as resp:
            assert resp.headers["Content-Disposition"].startswith("inline;")
            assert resp.content_type == "image/png"
        async with http.get(f"{web.base}/files/{page.id}") as resp:  # never served as a page
            assert resp.content_type == "application/octet-stream"
            assert resp.headers["Content-Disposition"].startswith("attachment;")
            assert "sandbox" in resp.headers["Content-Security-Policy"]
        for file_id in (bobs.id, "12345"):
            async with http.get(f"{web.base}/files/{file_id}") as resp:
                assert resp.status == 404


# --- the live stream -------------------------------------------------------------------------


async def test_the_event_stream_carries_replies_and_events_and_reattaches(web: Web) -> None:
    http, csrf = await signed_in(web, "alice")
    chat = ChatRef(platform="web", chat_id="web:alice")
    async with http, http.get(f"{web.base}/api/events") as resp:
        assert resp.content_type == "text/event-stream"
        stream = Stream(resp)
        snapshot = await stream.next()
        assert snapshot == {"type": "snapshot", "since": None, "items": [], "running": []}
        async with http.post(f"{web.base}/api/messages", json={"text": "NVDA?"},
                             headers={"X-CSRF-Token": csrf}) as posted:
            assert posted.status == 202
        assert (await stream.until("user_message"))["item"]["text"] == "NVDA?"
        ref = await web.adapter.send(chat, Reply(text="⏳ Working on it…", markup="plain"))
        await web.adapter.observe(chat, ref, Status(text="Looking up NVDA"))
        await web.adapter.observe(chat, ref, ToolStarted(call_id="1", name="get_quote",
                                                         label="quote NVDA"))
        await web.adapter.observe(chat, ref, Thinking(text="The user wants "))
        await web.adapter.observe(chat, ref, Thinking(text="a quote."))
        await web.adapter.observe(chat, ref, TextDelta(text="NVDA is"))
        await web.adapter.observe(chat, ref, TextDelta(text=" up 3%"))
        await web.adapter.edit(ref, Reply(text="NVDA is up", markup="plain"))
        sent = await stream.until("message_sent")
        assert sent["item"]["id"] == ref.message_id
        assert (await stream.until("status"))["ref"] == ref.message_id
        assert (await stream.until("tool_started"))["label"] == "quote NVDA"
        edited = await stream.until("message_edited")
        assert edited["item"]["html"] == "<p class=plain>NVDA is up</p>"
        resume_from = stream.last_id

    # the page reloads mid-answer: a snapshot of the answer so far, with its progress lines
    await web.adapter.edit(ref, Reply(text="NVDA is up 3%", markup="plain"))
    http, _ = await signed_in(web, "alice")  # a second browser of the same person
    async with http:
        async with http.get(f"{web.base}/api/events") as resp:
            snapshot = await Stream(resp).next()
        assert [i["text"] for i in snapshot["items"]] == ["NVDA?", "NVDA is up 3%"]
        [running] = snapshot["running"]
        assert running["ref"] == ref.message_id
        assert [line["type"] for line in running["lines"]] == ["status", "tool_started",
                                                               "thinking"]
        assert running["lines"][2]["text"] == "The user wants a quote."
        assert running["text"] == "NVDA is up 3%"  # the streamed answer so far
        assert snapshot["since"] == snapshot["items"][0]["at"]

        # a reconnect with Last-Event-ID gets exactly what it missed, then the rest live
        async with http.get(f"{web.base}/api/events",
                            headers={"Last-Event-ID": resume_from}) as resp:
            stream = Stream(resp)
            missed = await stream.next()
            assert missed["type"] == "message_edited"
            assert missed["item"]["text"] == "NVDA is up 3%"
            await web.adapter.observe(chat, ref, ToolFinished(call_id="1", name="get_quote",
                                                              ok=True))
            await web.adapter.observe(chat, ref, Done(text="NVDA is up **3%**"))
            await web.adapter.edit(ref, Reply(text="NVDA is up **3%**", markup="markdown"))
            assert (await stream.next())["type"] == "tool_finished"
            assert (await stream.next())["type"] == "done"
            final = await stream.next()
            assert final["item"]["html"].strip() == "<p>NVDA is up <strong>3%</strong></p>"
        # an id from another process (or too old) gets a snapshot instead
        async with http.get(f"{web.base}/api/events",
                            headers={"Last-Event-ID": "0000-5"}) as resp:
            snapshot = await Stream(resp).next()
        assert snapshot["type"] == "snapshot" and snapshot["running"] == []


async def test_after_new_a_reload_draws_only_the_new_conversation(web: Web) -> None:
    """/new from the page: a reload no longer draws the old conversation's messages from the
    adapter's memory (the page lists that conversation with the others)."""
    http, csrf = await signed_in(web, "alice")
    chat = ChatRef(platform="web", chat_id="web:alice")
    async with http:
        for text in ("NVDA?", "/new"):
            async with http.post(f"{web.base}/api/messages", json={"text": text},
                                 headers={"X-CSRF-Token": csrf}) as posted:
                assert posted.status == 202
            if text == "NVDA?":
                await web.adapter.send(chat, Reply(text="NVDA is up", markup="plain"))
        await web.adapter.send(chat, Reply(text="Started a new conversation.", markup="plain"))
        async with http.get(f"{web.base}/api/events") as resp:
            snapshot = await Stream(resp).next()
        assert [i["text"] for i in snapshot["items"]] == ["/new", "Started a new conversation."]


async def test_files_sent_live_reach_only_their_owner(web: Web) -> None:
    alice, _ = await signed_in(web, "alice")
    bob, _ = await signed_in(web, "bob")
    chat = ChatRef(platform="web", chat_id="web:alice")
    async with alice, bob, alice.get(f"{web.base}/api/events") as resp:
        stream = Stream(resp)
        await stream.next()
        chart = OutgoingFile(kind="image", filename="NVDA.png", data=PNG, mime_type="image/png")
        await web.adapter.observe(chat, None, File(file=chart, path="/srv/secret/NVDA.png"))
        event = await stream.until("file")
        assert "data" not in event["file"] and "path" not in event
        await web.adapter.send_file(chat, chart)
        item = (await stream.until("file_sent"))["item"]
        assert item["file"]["filename"] == "NVDA.png" and item["file"]["size_bytes"] == len(PNG)
        async with alice.get(web.base + item["file"]["url"]) as got:
            assert got.status == 200 and await got.read() == PNG
        async with bob.get(web.base + item["file"]["url"]) as got:
            assert got.status == 404


async def test_closing_the_adapter_ends_open_streams(web: Web) -> None:
    http, _ = await signed_in(web)
    async with http, http.get(f"{web.base}/api/events") as resp:
        stream = Stream(resp)
        await stream.next()
        await asyncio.wait_for(web.adapter.aclose(), 5)
        with pytest.raises((EOFError, aiohttp.ClientPayloadError)):
            await stream.next(within_s=3)


# --- share links -----------------------------------------------------------------------------


async def test_share_then_unshare_a_conversation(web: Web) -> None:
    http, csrf = await signed_in(web, "alice")
    conv = web.directory.conversation("alice", title="NVDA today")
    web.directory.say(conv.id, "user", "How is NVDA?")
    web.directory.say(conv.id, "assistant", "NVDA closed **higher**.")
    chart = web.directory.add_file("alice", "nvda.png", PNG, kind="image",
                                   mime_type="image/png", conversation_id=conv.id)
    other = web.directory.conversation("alice", platform="telegram")
    elsewhere = web.directory.add_file("alice", "other.png", PNG, kind="image",
                                       mime_type="image/png", conversation_id=other.id)
    h = {"X-CSRF-Token": csrf}
    async with http:
        async with http.post(f"{web.base}/api/share", json={}, headers=h) as resp:
            shared = await resp.json()  # no id: the page's own conversation
        assert shared["conversation_id"] == conv.id
        assert shared["url"] == f"{web.base}/s/{shared['token']}"
        async with browser() as stranger:  # a fresh browser, signed in as no one
            async with stranger.get(shared["url"]) as resp:
                page = await resp.text()
                assert resp.status == 200 and resp.headers["X-Robots-Tag"].startswith("noindex")
            assert '<meta name="robots" content="noindex' in page
            assert "NVDA closed <strong>higher</strong>." in page and "How is NVDA?" in page
            img = f"/s/{shared['token']}/files/{chart.id}"
            assert f'src="{img}"' in page
            async with stranger.get(web.base + img) as resp:
                assert resp.status == 200 and await resp.read() == PNG
            async with stranger.get(f"{web.base}/s/{shared['token']}/files/{elsewhere.id}") as r:
                assert r.status == 404  # a file of another conversation
            async with http.post(f"{web.base}/api/unshare", json={"conversation_id": conv.id},
                                 headers=h) as resp:
                assert (await resp.json())["revoked"] is True
            for url in (shared["url"], web.base + img):
                async with stranger.get(url) as resp:
                    assert resp.status == 404 and resp.headers["X-Robots-Tag"].startswith(
                        "noindex")


async def test_guessed_share_tokens_and_other_peoples_conversations_get_404(web: Web) -> None:
    http, csrf = await signed_in(web, "alice")
    web.directory.person("bob")
    bobs = web.directory.conversation("bob")
    mine = web.directory.conversation("alice")
    async with http:
        async with http.post(f"{web.base}/api/share", json={"conversation_id": bobs.id},
                             headers={"X-CSRF-Token": csrf}) as resp:
            assert resp.status == 404
        async with http.post(f"{web.base}/api/share", json={"conversation_id": mine.id},
                             headers={"X-CSRF-Token": csrf}) as resp:
            real = (await resp.json())["token"]
        for guess in (real[:-1] + ("A" if real[-1] != "A" else "B"), "AAAAAAAAAAAAAAAA",
                      "../admin", "x" * 500):
            async with http.get(f"{web.base}/s/{guess}") as resp:
                assert resp.status == 404, guess


# --- script injected anywhere is inert -------------------------------------------------------


def _inert(html: str) -> None:
    assert "<script" not in html and "<img" not in html
    assert not re.search(r"<[^>]+\son\w+=", html)  # no element with an event handler
    assert not re.search(r"href\s*=\s*[\"']?\s*javascript:", html, re.I)


async def test_script_in_messages_questions_and_file_names_is_rendered_inert(web: Web) -> None:
    http, csrf = await signed_in(web, "alice")
    conv = web.directory.conversation("alice", title="<script>alert('title')</script>")
    chat = ChatRef(platform="web", chat_id="web:alice")
    for payload in XSS:
        web.directory.say(conv.id, "user", payload)
        web.directory.say(conv.id, "assistant", f"About {payload} (symbol {payload})")
    web.directory.add_file("alice", '<img src=x onerror=alert(1)>.pdf', PDF,
                           conversation_id=conv.id)
    async with http:
        async with http.get(f"{web.base}/api/chat") as resp:
            entries = (await resp.json())["entries"]
        for entry in entries:
            _inert(entry.get("html", ""))
        async with http.get(f"{web.base}/api/events") as resp:
            stream = Stream(resp)
            await stream.next()
            for payload in XSS:
                async with http.post(f"{web.base}/api/messages", json={"text": payload},
                                     headers={"X-CSRF-Token": csrf}):
                    pass
                _inert((await stream.until("user_message"))["item"]["html"])
                ref = await web.adapter.send(chat, Reply(text=payload, markup="plain"))
                _inert((await stream.until("message_sent"))["item"]["html"])
                await web.adapter.edit(ref, Reply(text=payload, markup="markdown"))
                _inert((await stream.until("message_edited"))["item"]["html"])
        async with http.post(f"{web.base}/api/share", json={},
                             headers={"X-CSRF-Token": csrf}) as resp:
            url = (await resp.json())["url"]
        async with http.get(url) as resp:
            page = await resp.text()
    body = page.split("<body", 1)[1]
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in body
    assert "<script" not in body and not re.search(r"<[^>]+\son\w+=", body)
    assert 'href="javascript:' not in body


async def test_every_response_carries_the_security_headers(web: Web) -> None:
    http, _ = await signed_in(web)
    async with http:
        for path in ("/", "/static/app.js", "/api/me", "/login/abcdefghijkl", "/s/unknown-token",
                     "/nothing-here"):
            async with http.get(web.base + path) as resp:
                csp = resp.headers["Content-Security-Policy"]
                assert "default-src 'self'" in csp and "unsafe-inline" not in csp, path
                assert resp.headers["X-Content-Type-Options"] == "nosniff"
                assert resp.headers["Referrer-Policy"] == "no-referrer"


async def test_the_first_load_is_under_100_kb(web: Web) -> None:
    http, _ = await signed_in(web)
    async with http:
        async with http.get(f"{web.base}/") as resp:
            page = await resp.text()
            total = len(page.encode())
        assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
        assert "/static/app.js" in assets and "/static/style.css" in assets
        for asset in assets:
            async with http.get(web.base + asset) as resp:
                assert resp.status == 200
                total += len(await resp.read())
        async with http.get(f"{web.base}/static/app.js",
                            headers={"If-None-Match": resp.headers["ETag"]}) as again:
            assert again.status in (200, 304)
    assert total < 100_000, total
    assert "<script>" not in page  # no inline script: the CSP would block it


# --- the admin console -----------------------------------------------------------------------


async def test_the_admin_console_is_a_404_for_everyone_but_admins(web: Web) -> None:
    web.directory.tables["users"] = WebTable(columns=("id",), rows=(("1",),))
    http, csrf = await signed_in(web, "alice")
    async with http, browser() as anonymous:
        async with http.get(f"{web.base}/no-such-path") as resp:
            unknown = (resp.status, await resp.text())
        for client in (http, anonymous):
            for path in ("/admin", "/api/admin/tables", "/api/admin/tables/users"):
                async with client.get(web.base + path) as resp:
                    assert (resp.status, await resp.text()) == unknown, path
        for headers in ({"X-CSRF-Token": csrf}, {}):  # with or without its CSRF token
            async with http.post(f"{web.base}/api/admin/query", json={"sql": "SELECT 1"},
                                 headers=headers) as resp:
                assert (resp.status, await resp.text()) == unknown


async def test_an_admin_browses_tables_runs_select_and_is_refused_on_delete(web: Web) -> None:
    rows = tuple((str(i), f"<b>user {i}</b>") for i in range(120))
    web.directory.tables["users"] = WebTable(columns=("id", "name"), rows=rows)
    web.directory.queries["SELECT count(*) FROM users"] = WebTable(columns=("count",),
                                                                   rows=(("120",),))
    http, csrf = await signed_in(web, "root", is_admin=True)
    h = {"X-CSRF-Token": csrf}
    async with http:
        async with http.get(f"{web.base}/admin") as resp:
            assert resp.status == 200 and "/static/admin.js" in await resp.text()
        async with http.get(f"{web.base}/api/admin/tables") as resp:
            assert (await resp.json())["tables"] == [{"name": "users", "rows": 120}]
        async with http.get(f"{web.base}/api/admin/tables/users?page=3") as resp:
            page = await resp.json()
        assert page["total"] == 120 and page["rows"][0] == ["100", "<b>user 100</b>"]
        assert len(page["rows"]) == 20 and page["page_size"] == 50
        async with http.get(f"{web.base}/api/admin/tables/users?page=0") as resp:
            assert resp.status == 400 and "page" in (await resp.json())["error"]
        async with http.get(f"{web.base}/api/admin/tables/users;drop") as resp:
            assert resp.status == 404
        async with http.post(f"{web.base}/api/admin/query",
                             json={"sql": "SELECT count(*) FROM users"}, headers=h) as resp:
            assert await resp.json() == {"columns": ["count"], "rows": [["120"]],
                                         "total": None, "truncated": False, "note": ""}
        async with http.post(f"{web.base}/api/admin/query", json={"sql": "DELETE FROM users"},
                             headers=h) as resp:
            assert resp.status == 400
            assert await resp.json() == {
                "error": "cannot execute DELETE in a read-only transaction", "refused": True}
        async with http.post(f"{web.base}/api/admin/query", json={"sql": " "},
                             headers=h) as resp:
            assert resp.status == 400 and "SQL" in (await resp.json())["error"]
        async with http.post(f"{web.base}/api/admin/query",
                             json={"sql": "SELECT count(*) FROM users"}) as resp:
            assert resp.status == 403  # CSRF applies to admins too


async def test_a_console_that_cannot_log_in_as_its_role_is_off_and_the_page_says_why(
        web: Web) -> None:
    web.directory.tables["users"] = WebTable(columns=("id",), rows=(("1",),))
    http, csrf = await signed_in(web, "root", is_admin=True)
    async with http:
        async with http.get(f"{web.base}/api/admin/status") as resp:
            assert await resp.json() == {"on": True, "reason": None}
        web.directory.console_off = "The admin console is off: no login"
        async with http.get(f"{web.base}/api/admin/status") as resp:
            assert await resp.json() == {"on": False,
                                         "reason": "The admin console is off: no login"}
        for path in ("/api/admin/tables", "/api/admin/tables/users"):
            async with http.get(web.base + path) as resp:
                assert resp.status == 503, path
                assert await resp.json() == {"error": "The admin console is off: no login",
                                             "console_off": True}
        async with http.post(f"{web.base}/api/admin/query", json={"sql": "SELECT 1"},
                             headers={"X-CSRF-Token": csrf}) as resp:
            assert resp.status == 503 and (await resp.json())["console_off"] is True
        async with http.get(f"{web.base}/static/admin.js") as resp:
            script = await resp.text()
        assert "/api/admin/status" in script and "status.reason" in script


# --- the Adapter contract --------------------------------------------------------------------


async def test_the_adapter_keeps_the_adapter_and_observer_contracts(web: Web) -> None:
    adapter = web.adapter
    assert isinstance(adapter, Adapter) and isinstance(adapter, EventObserver)
    caps = adapter.capabilities
    assert caps.can_edit and caps.min_edit_interval_s <= 0.5 and caps.markup == "rich"
    assert caps.supports_images and caps.supports_documents
    chat = ChatRef(platform="web", chat_id="web:alice")
    ref = await adapter.send(chat, Reply(text="one"))
    with pytest.raises(MessageNotModified):
        await adapter.edit(ref, Reply(text="one"))
    await adapter.edit(MessageRef(chat=chat, message_id="from-before-a-restart"),
                       Reply(text="adopted"))
    with pytest.raises(PlatformError):
        await adapter.send(ChatRef(platform="telegram", chat_id="1"), Reply(text="x"))
    # an event for another platform, or one that cannot be shown, never raises
    await adapter.observe(ChatRef(platform="telegram", chat_id="1"), None, TextDelta(text="x"))
    await adapter.observe(chat, ref, TextDelta(text="x"))


# --- the same routes on the real backend: StoreWebDirectory on Postgres ----------------------


@dataclass
class RealWeb:
    adapter: WebAdapter
    directory: Any  # bot.web_directory.StoreWebDirectory
    store: Any  # core.store.Store
    received: list[IncomingMessage] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.adapter.port}"

    async def person(self, name: str) -> Any:
        """A person first seen on Telegram (account `name`)."""
        return await self.store.accounts.user_for("telegram", name, name.title())

    async def browser_of(self, user_id: Any) -> tuple[aiohttp.ClientSession, str]:
        http = browser()
        token = await self.directory.issue_login(user_id)
        async with http.post(f"{self.base}/login/{token}", allow_redirects=False) as resp:
            assert resp.status == 303
        async with http.get(f"{self.base}/api/me") as resp:
            return http, (await resp.json())["csrf"]


@pytest.fixture
async def real_web(pg_db: Any, tmp_path: Any) -> AsyncIterator[RealWeb]:
    from bot.web_directory import StoreWebDirectory
    from core.store import Store

    store = Store(pg_db, files_dir=tmp_path / "files")
    directory = StoreWebDirectory(store, admins=frozenset({"telegram:root"}),
                                  sql_timeout_ms=2000, sql_row_limit=100)
    adapter = WebAdapter(directory=directory, port=0)
    harness = RealWeb(adapter, directory, store)

    async def on_message(msg: IncomingMessage) -> None:
        harness.received.append(msg)

    await adapter.start(on_message)
    try:
        yield harness
    finally:
        await adapter.aclose()


async def test_real_backend_sign_in_once_and_messages_come_from_the_linked_person(
        real_web: RealWeb) -> None:
    alice = await real_web.person("alice")
    token = await real_web.directory.issue_login(alice)
    async with browser() as http:
        async with http.post(f"{real_web.base}/login/{token}", allow_redirects=False) as resp:
            assert resp.status == 303
        async with http.get(f"{real_web.base}/api/me") as resp:
            me = await resp.json()
        assert me["user_id"] == str(alice) and me["is_admin"] is False
        async with http.post(f"{real_web.base}/api/messages", json={"text": "NVDA?"},
                             headers={"X-CSRF-Token": me["csrf"]}) as resp:
            assert resp.status == 202
        async with http.post(f"{real_web.base}/api/messages", json={"text": "again"},
                             headers={"X-CSRF-Token": "forged"}) as resp:
            assert resp.status == 403
    async with browser() as again, again.post(f"{real_web.base}/login/{token}",
                                              allow_redirects=False) as resp:
        assert resp.status == 404  # used
    await settle(real_web, 1)
    [msg] = real_web.received
    assert msg.chat.chat_id == f"web:{alice}"
    # the gateway resolves the sender to the same person as their Telegram account
    assert await real_web.store.accounts.user_for("web", msg.sender.platform_uid) == alice


async def test_real_backend_scopes_conversations_and_files_to_their_person(
        real_web: RealWeb) -> None:
    from core.types import ChatMessage, ToolCall

    alice, bob = await real_web.person("alice"), await real_web.person("bob")
    conversations = real_web.store.conversations
    tg = await conversations.active(ChatRef(platform="telegram", chat_id="100"), alice)
    await conversations.add_message(tg.id, ChatMessage(role="user", content=XSS[0]))
    await conversations.add_message(tg.id, ChatMessage(
        role="assistant", content="", tool_calls=[ToolCall(id="c1", name="get_quote",
                                                           arguments="{}")]))
    await conversations.add_message(tg.id, ChatMessage(role="tool", content="RAW TOOL RESULT",
                                                       tool_call_id="c1"))
    await conversations.add_message(tg.id, ChatMessage(role="assistant", content="**Up** 3%"))
    await real_web.store.files.save(
        OutgoingFile(kind="document", filename="<img src=x onerror=alert(1)>.pdf", data=PDF,
                     mime_type="application/pdf"), user_id=alice, conversation_id=tg.id)
    bobs = await conversations.active(ChatRef(platform="telegram", chat_id="200"), bob)
    await real_web.store.files.save(OutgoingFile(kind="document", filename="bob.pdf", data=PDF,
                                                 mime_type="application/pdf"),
                                    user_id=bob, conversation_id=bobs.id)
    http, _ = await real_web.browser_of(alice)
    async with http:
        async with http.get(f"{real_web.base}/api/conversations") as resp:
            listed = (await resp.json())["conversations"]
        assert [(c["id"], c["platform"], c["writable"]) for c in listed
                if c["platform"] == "telegram"] == [(str(tg.id), "telegram", False)]
        async with http.get(f"{real_web.base}/api/conversations/{tg.id}") as resp:
            entries = (await resp.json())["entries"]
        assert [e["role"] for e in entries] == ["user", "assistant", "file"]
        assert "RAW TOOL RESULT" not in json.dumps(entries)
        _inert(entries[0]["html"])
        async with http.get(f"{real_web.base}/api/files") as resp:
            [mine] = (await resp.json())["files"]
        async with http.get(real_web.base + mine["url"]) as resp:
            assert await resp.read() == PDF
            assert resp.headers["Content-Disposition"].startswith("attachment;")
        bob_file = await real_web.store.pool.fetchval(
            "SELECT id FROM files WHERE user_id = $1", bob)
        for path in (f"/api/conversations/{bobs.id}", f"/files/{bob_file}",
                     "/api/conversations/not-a-uuid", "/files/99999999"):
            async with http.get(real_web.base + path) as resp:
                assert resp.status == 404, path
        async with http.post(f"{real_web.base}/api/share", json={"conversation_id": str(bobs.id)},
                             headers={"X-CSRF-Token": (await (await http.get(
                                 f"{real_web.base}/api/me")).json())["csrf"]}) as resp:
            assert resp.status == 404


async def test_real_backend_share_links_open_once_published_and_not_after(
        real_web: RealWeb) -> None:
    from core.types import ChatMessage

    alice = await real_web.person("alice")
    http, csrf = await real_web.browser_of(alice)
    conv = await real_web.store.conversations.active(
        ChatRef(platform="web", chat_id=f"web:{alice}"), alice)
    await real_web.store.conversations.add_message(conv.id, ChatMessage(role="user",
                                                                        content="NVDA?"))
    await real_web.store.conversations.add_message(conv.id, ChatMessage(
        role="assistant", content="NVDA closed **higher**."))
    await real_web.store.files.save(OutgoingFile(kind="image", filename="nvda.png", data=PNG,
                                                 mime_type="image/png"),
                                    user_id=alice, conversation_id=conv.id)
    async with http:
        async with http.post(f"{real_web.base}/api/share", json={},
                             headers={"X-CSRF-Token": csrf}) as resp:
            shared = await resp.json()
        assert shared["conversation_id"] == str(conv.id)
        async with browser() as stranger:
            async with stranger.get(shared["url"]) as resp:
                page = await resp.text()
            assert "NVDA closed <strong>higher</strong>." in page and "noindex" in page
            [img] = re.findall(r'src="(/s/[^"]+)"', page)
            async with stranger.get(real_web.base + img) as resp:
                assert await resp.read() == PNG
            async with http.post(f"{real_web.base}/api/unshare", json={},
                                 headers={"X-CSRF-Token": csrf}) as resp:
                assert (await resp.json())["revoked"] is True
            for url in (shared["url"], real_web.base + img,
                        shared["url"][:-1] + ("a" if shared["url"][-1] != "a" else "b")):
                async with stranger.get(url) as resp:
                    assert resp.status == 404


async def test_real_backend_admin_console_reads_and_postgres_refuses_writes(
        real_web: RealWeb) -> None:
    root = await real_web.person("root")  # BULLPEN_ADMINS=telegram:root
    alice = await real_web.person("alice")
    admin, csrf = await real_web.browser_of(root)
    user, user_csrf = await real_web.browser_of(alice)
    async with admin, user:
        for path in ("/admin", "/api/admin/tables", "/api/admin/tables/users"):
            async with user.get(real_web.base + path) as resp:
                assert resp.status == 404, path
        async with user.post(f"{real_web.base}/api/admin/query", json={"sql": "SELECT 1"},
                             headers={"X-CSRF-Token": user_csrf}) as resp:
            assert resp.status == 404
        async with admin.get(f"{real_web.base}/api/admin/tables") as resp:
            tables = {t["name"]: t["rows"] for t in (await resp.json())["tables"]}
        assert tables["users"] == 2
        async with admin.get(f"{real_web.base}/api/admin/tables/users?page=1") as resp:
            assert (await resp.json())["total"] == 2
        async with admin.get(f"{real_web.base}/api/admin/tables/users;drop table users") as resp:
            assert resp.status == 404
        async with admin.post(f"{real_web.base}/api/admin/query",
                              json={"sql": "SELECT count(*) AS n FROM users"},
                              headers={"X-CSRF-Token": csrf}) as resp:
            assert await resp.json() == {"columns": ["n"], "rows": [["2"]], "total": None,
                                         "truncated": False, "note": ""}
        async with admin.post(f"{real_web.base}/api/admin/query",
                              json={"sql": "DELETE FROM users"},
                              headers={"X-CSRF-Token": csrf}) as resp:
            refused = await resp.json()
        assert resp.status == 400 and refused["refused"] is True
        assert refused["error"] == "cannot execute DELETE in a read-only transaction"
    assert await real_web.store.pool.fetchval("SELECT count(*) FROM users") == 2


async def test_real_backend_console_off_without_its_role_and_cut_results_say_so(
        real_web: RealWeb, pg_db: Any) -> None:
    root = await real_web.person("root")
    admin, csrf = await real_web.browser_of(root)
    async with admin:
        async with admin.post(f"{real_web.base}/api/admin/query",
                              json={"sql": "SELECT repeat('x', 1000) FROM"
                                           " generate_series(1, 500)"},
                              headers={"X-CSRF-Token": csrf}) as resp:
            cut = await resp.json()
        assert cut["truncated"] is True and len(cut["rows"]) == 100
        assert "cut at 100 rows" in cut["note"] and "已截断" in cut["note"]
        await pg_db.pool.execute("ALTER ROLE bullpen_console NOLOGIN")
        try:
            async with admin.get(f"{real_web.base}/api/admin/status") as resp:
                status = await resp.json()
            assert status["on"] is False
            assert "The admin console is off" in status["reason"]
            assert "bullpen_console" in status["reason"]
            async with admin.post(f"{real_web.base}/api/admin/query",
                                  json={"sql": "SELECT current_user"},
                                  headers={"X-CSRF-Token": csrf}) as resp:
                assert resp.status == 503  # never run as the application's user instead
        finally:
            await pg_db.pool.execute("ALTER ROLE bullpen_console LOGIN")
