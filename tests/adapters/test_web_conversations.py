"""The web page's own conversations and files over HTTP, on the real store (embedded Postgres):
rename, delete and search are the person's own (someone else's conversation is a 404 and stays
as it was), a deletion takes the messages, links and files with it, the file list leaves out
internal files and repeats; the New-chat button, the empty chat's coverage note and the admin
dashboard (usage per day and person, platform and model status, recent failures)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from uuid import UUID

import aiohttp
import pytest

from adapters.web import WebAdapter
from core.events import Done, Status
from core.testing import MemoryWebDirectory
from core.types import ChatMessage, ChatRef, IncomingMessage, MessageRef, OutgoingFile, Usage

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
PDF = b"%PDF-1.4\n% test\n"


def browser() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


@dataclass
class Site:
    adapter: WebAdapter
    directory: Any  # StoreWebDirectory or MemoryWebDirectory
    store: Any = None
    received: list[IncomingMessage] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.adapter.port}"

    async def person(self, name: str) -> UUID:
        return UUID(str(await self.store.accounts.user_for("telegram", name, name.title())))

    async def browser_of(self, user_id: Any) -> tuple[aiohttp.ClientSession, str]:
        http = browser()
        token = (await self.directory.issue_login(user_id) if self.store is not None
                 else self.directory.login_link(user_id))
        async with http.post(f"{self.base}/login/{token}", allow_redirects=False) as resp:
            assert resp.status == 303
        async with http.get(f"{self.base}/api/me") as resp:
            return http, (await resp.json())["csrf"]


async def _serve(directory: Any, store: Any = None) -> Site:
    adapter = WebAdapter(directory=directory, port=0)
    site = Site(adapter, directory, store)

    async def on_message(msg: IncomingMessage) -> None:
        site.received.append(msg)

    await adapter.start(on_message)
    return site


@pytest.fixture
async def real(pg_db: Any, tmp_path: Path) -> AsyncIterator[Site]:
    from bot.web_directory import StoreWebDirectory
    from core.store import Store

    store = Store(pg_db, files_dir=tmp_path / "files")
    directory = StoreWebDirectory(store, admins=frozenset({"telegram:root"}),
                                  platforms=("web", "telegram"), model="fake-model")
    site = await _serve(directory, store)
    try:
        yield site
    finally:
        await site.adapter.aclose()


@pytest.fixture
async def memory() -> AsyncIterator[Site]:
    site = await _serve(MemoryWebDirectory())
    try:
        yield site
    finally:
        await site.adapter.aclose()


async def _titles(http: aiohttp.ClientSession, base: str, q: str = "") -> dict[str, str]:
    async with http.get(f"{base}/api/conversations", params={"q": q} if q else None) as resp:
        assert resp.status == 200
        return {c["id"]: c["title"] for c in (await resp.json())["conversations"]}


async def test_rename_delete_and_search_only_the_persons_own_conversations(real: Site) -> None:
    store = real.store
    alice, bob = await real.person("alice"), await real.person("bob")
    web = await store.conversations.active(ChatRef(platform="web", chat_id=f"web:{alice}"),
                                           alice)
    await store.conversations.add_message(web.id, ChatMessage(role="user", content="NVDA?"))
    tg = await store.conversations.active(ChatRef(platform="telegram", chat_id="100"), alice)
    await store.conversations.add_message(tg.id, ChatMessage(role="user",
                                                             content="贵州茅台 100% up?"))
    await store.conversations.add_message(tg.id, ChatMessage(role="assistant",
                                                             content="Moutai closed higher"))
    await store.files.save(OutgoingFile(kind="image", filename="moutai.png", data=PNG,
                                        mime_type="image/png"), user_id=alice,
                           conversation_id=tg.id)
    bobs = await store.conversations.active(ChatRef(platform="telegram", chat_id="200"), bob)
    await store.conversations.add_message(bobs.id, ChatMessage(role="user", content="moutai"))
    http, csrf = await real.browser_of(alice)
    headers = {"X-CSRF-Token": csrf}
    async with http:
        # search: by message text, any case, never someone else's; % is a character
        assert set(await _titles(http, real.base, "MOUTAI")) == {str(tg.id)}
        assert set(await _titles(http, real.base, "nvda")) == {str(web.id)}
        assert set(await _titles(http, real.base, "100%")) == {str(tg.id)}
        assert await _titles(http, real.base, "1%0") == {}  # as a wildcard it would match "100"
        assert await _titles(http, real.base, "nothing-like-this") == {}

        # rename: persisted, found by its new name, from another browser too
        async with http.post(f"{real.base}/api/conversations/{tg.id}/rename",
                             json={"title": "  茅台笔记  "}, headers=headers) as resp:
            assert resp.status == 200
            assert (await resp.json())["conversation"]["title"] == "茅台笔记"
        again, _ = await real.browser_of(alice)
        async with again:
            assert (await _titles(again, real.base))[str(tg.id)] == "茅台笔记"
            assert set(await _titles(again, real.base, "笔记")) == {str(tg.id)}

        # bad renames: nothing changes
        for body, status in (({"title": "  "}, 400), ({"title": 7}, 400),
                             ({"title": "x" * 121}, 400)):
            async with http.post(f"{real.base}/api/conversations/{tg.id}/rename", json=body,
                                 headers=headers) as resp:
                assert resp.status == status, body
        async with http.post(f"{real.base}/api/conversations/{tg.id}/rename",
                             json={"title": "forged"}) as resp:
            assert resp.status == 403
        assert (await _titles(http, real.base))[str(tg.id)] == "茅台笔记"

        # someone else's conversation: the same 404 as one that does not exist, untouched
        for action, body in (("rename", {"title": "mine now"}), ("delete", {})):
            for target in (str(bobs.id), "not-a-uuid", "00000000-0000-0000-0000-000000000000"):
                async with http.post(f"{real.base}/api/conversations/{target}/{action}",
                                     json=body, headers=headers) as resp:
                    assert resp.status == 404, (action, target)
        assert (await store.web.conversation(bobs.id)).title == ""
        assert await store.web.shown_messages(bobs.id)

        # delete: the conversation, its messages, its share links and its files go
        async with http.post(f"{real.base}/api/share", json={"conversation_id": str(tg.id)},
                             headers=headers) as resp:
            link = (await resp.json())["url"]
        [path] = [r["path"] for r in await store.pool.fetch(
            "SELECT path FROM files WHERE conversation_id = $1", tg.id)]
        assert await asyncio.to_thread(Path(path).exists)
        async with http.post(f"{real.base}/api/conversations/{tg.id}/delete", json={},
                             headers=headers) as resp:
            assert resp.status == 200 and (await resp.json())["deleted"] == str(tg.id)
        assert str(tg.id) not in await _titles(http, real.base)
        assert await _titles(http, real.base, "moutai") == {}
        async with http.get(f"{real.base}/api/conversations/{tg.id}") as resp:
            assert resp.status == 404
        async with http.get(f"{real.base}/api/files") as resp:
            assert (await resp.json())["files"] == []
        assert not await asyncio.to_thread(Path(path).exists)
        assert await store.pool.fetchval(
            "SELECT count(*) FROM messages WHERE conversation_id = $1", tg.id) == 0
        async with browser() as stranger, stranger.get(link) as resp:
            assert resp.status == 404
        assert str(web.id) in await _titles(http, real.base)  # the others stay


async def test_the_file_list_shows_each_file_once_and_no_internal_ones(real: Site) -> None:
    store = real.store
    alice = await real.person("alice")
    conv = await store.conversations.active(ChatRef(platform="web", chat_id=f"web:{alice}"),
                                            alice)
    other = await store.conversations.active(ChatRef(platform="telegram", chat_id="1"), alice)
    for _ in range(3):  # the same chart, sent three times
        await store.files.save(OutgoingFile(kind="image", filename="nvda.png", data=PNG,
                                            mime_type="image/png"), user_id=alice,
                               conversation_id=conv.id)
    await store.files.save(OutgoingFile(kind="image", filename="nvda.png", data=PNG,
                                        mime_type="image/png"), user_id=alice,
                           conversation_id=other.id)  # another conversation's: its own entry
    await store.files.save(OutgoingFile(kind="document", filename="script.json",
                                        data=b'{"chapter": 1}', mime_type="application/json"),
                           user_id=alice, conversation_id=conv.id)
    await store.files.save(OutgoingFile(kind="document", filename="report.pdf", data=PDF,
                                        mime_type="application/pdf"), user_id=alice,
                           conversation_id=conv.id)
    http, _ = await real.browser_of(alice)
    async with http, http.get(f"{real.base}/api/files") as resp:
        files = (await resp.json())["files"]
    assert sorted((f["filename"], f["conversation_id"]) for f in files) == sorted([
        ("nvda.png", str(conv.id)), ("nvda.png", str(other.id)), ("report.pdf", str(conv.id))])
    newest_chart = await store.pool.fetchval(
        "SELECT max(id) FROM files WHERE conversation_id = $1 AND filename = 'nvda.png'",
        conv.id)
    assert f"/files/{newest_chart}" in [f["url"] for f in files]
    assert all(f["created_at"] for f in files)


async def test_deleting_the_live_web_chat_waits_for_its_answer_then_clears_the_page(
        real: Site) -> None:
    alice = await real.person("alice")
    http, csrf = await real.browser_of(alice)
    chat = ChatRef(platform="web", chat_id=f"web:{alice}")
    live = await real.store.conversations.active(chat, alice)
    ref = MessageRef(chat=chat, message_id="m1")
    async with http:
        await real.adapter.observe(chat, ref, Status(text="Fetching NVDA bars"))
        async with http.post(f"{real.base}/api/conversations/{live.id}/delete", json={},
                             headers={"X-CSRF-Token": csrf}) as resp:
            assert resp.status == 409
        assert await real.store.web.conversation(live.id) is not None
        await real.adapter.observe(chat, ref, Done(text="NVDA closed higher."))
        async with http.get(f"{real.base}/api/events") as events:
            async with http.post(f"{real.base}/api/conversations/{live.id}/delete", json={},
                                 headers={"X-CSRF-Token": csrf}) as resp:
                assert resp.status == 200
            kinds = []
            while "cleared" not in kinds:
                line = await asyncio.wait_for(events.content.readline(), 5)
                if line.startswith(b"data: "):
                    kinds.append(json.loads(line[6:])["type"])
        assert await real.store.web.conversation(live.id) is None
        async with http.get(f"{real.base}/api/chat") as resp:  # a fresh conversation
            assert (await resp.json())["conversation"]["id"] != str(live.id)


async def test_the_new_chat_button_starts_a_conversation_without_a_typed_line(
        memory: Site) -> None:
    memory.directory.person("alice")
    http, csrf = await memory.browser_of("alice")
    async with http:
        async with http.post(f"{memory.base}/api/new", json={}) as resp:
            assert resp.status == 403
        async with http.post(f"{memory.base}/api/new", json={},
                             headers={"X-CSRF-Token": csrf}) as resp:
            assert resp.status == 202
        for _ in range(100):
            if memory.received:
                break
            await asyncio.sleep(0.01)
        [msg] = memory.received
        assert msg.text == "/new" and msg.chat.chat_id == "web:alice"
        async with http.get(f"{memory.base}/api/events") as events:
            first = b""
            while not first.startswith(b"data: "):
                first = await asyncio.wait_for(events.content.readline(), 5)
        assert json.loads(first[6:])["items"] == []  # nothing shown as typed


async def test_the_empty_chat_gets_the_coverage_in_the_pages_language(memory: Site) -> None:
    memory.directory.person("alice")
    async with browser() as anonymous, anonymous.get(f"{memory.base}/api/welcome") as resp:
        assert resp.status == 401
    http, _ = await memory.browser_of("alice")
    async with http:
        async with http.get(f"{memory.base}/api/welcome?lang=zh") as resp:
            zh = (await resp.json())["coverage_html"]
        async with http.get(f"{memory.base}/api/welcome?lang=en") as resp:
            en = (await resp.json())["coverage_html"]
    assert '<div class="table-wrap"><table>' in zh and "美股" in zh
    assert "US" in en and "美股" not in en


async def test_the_real_coverage_note_comes_from_the_installed_data(real: Site) -> None:
    text = await real.directory.coverage("zh-CN")
    assert text.startswith("| 市场 |") and "A股" in text


async def test_the_admin_dashboard_counts_usage_and_shows_status_and_failures(
        real: Site) -> None:
    store = real.store
    root, alice = await real.person("root"), await real.person("alice")
    conv = await store.conversations.active(ChatRef(platform="telegram", chat_id="9"), alice)
    for text in ("NVDA?", "AAPL?", "MSFT?"):
        await store.conversations.add_message(conv.id, ChatMessage(role="user", content=text))
    for _ in range(2):
        await store.usage.record(Usage(provider="fake", model="fake-model", prompt_tokens=100,
                                       completion_tokens=20, cost_usd=0.01),
                                 user_id=alice, conversation_id=conv.id)
    await store.pool.execute(
        "INSERT INTO deliveries (key, platform, chat_id, chat, items, status, last_error,"
        " deadline) VALUES ('k1', 'telegram', '9', '{}', '[]', 'failed', 'Forbidden: bot was"
        " blocked', now())")
    user, _ = await real.browser_of(alice)
    async with user, user.get(f"{real.base}/api/admin/dashboard") as resp:
        assert resp.status == 404
    admin, _ = await real.browser_of(root)
    async with admin, admin.get(f"{real.base}/api/admin/dashboard") as resp:
        d = await resp.json()
    assert len(d["days"]) == 14 and d["days"] == sorted(d["days"], key=lambda x: x["day"])
    today = d["days"][-1]
    assert (today["questions"], today["calls"], today["tokens"]) == (3, 2, 240)
    assert sum(x["questions"] for x in d["days"][:-1]) == 0
    [person] = d["people"]
    assert person["name"] == "Alice" and (person["questions"], person["calls"]) == (3, 2)
    assert person["cost_usd"] == pytest.approx(0.02)
    assert d["platforms"] == ["web", "telegram"] and d["model"] == "fake-model"
    assert d["last_call_at"] is not None
    [failure] = d["failures"]
    assert failure["what"] == "delivery telegram" and "blocked" in failure["detail"]
