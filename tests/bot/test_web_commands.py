"""/web, /web logout, /share and /unshare through the gateway on real Postgres: a sign-in link
is never posted in a group, works once, and share links go as soon as they are revoked."""

from __future__ import annotations

import asyncio
import itertools
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.commands import web as web_commands
from bot.gateway import Gateway
from bot.web_directory import StoreWebDirectory
from core.agent import AgentRunner, NormalMode
from core.errors import Forbidden
from core.store import Database, Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import ChatRef, IncomingMessage, Sender
from tests import warm_bullpen

BASE = "https://bullpen.example"
PRIVATE = ChatRef(platform="telegram", chat_id="100")
GROUP = ChatRef(platform="telegram", chat_id="-500", is_group=True)
_ids = itertools.count(1)
_LOGIN = re.compile(re.escape(BASE) + r"/login/([A-Za-z0-9]+)")
_SHARE = re.compile(re.escape(BASE) + r"/s/([A-Za-z0-9]+)")


class Bot:
    def __init__(self, pg_db: Database, tmp_path: Path, platform: str = "telegram") -> None:
        self.store = Store(pg_db, files_dir=tmp_path)
        self.gateway = Gateway(store=self.store, runner=AgentRunner(store=self.store, modes={
            "normal": NormalMode(llm=ScriptedLLM(default=text("an answer")),
                                 registry=ToolRegistry(), plan=False)}))
        web_commands.configure(self.gateway, base_url=BASE + "/")
        self.adapter = RecordingAdapter(name=platform)
        self.directory = StoreWebDirectory(self.store)

    async def say(self, body: str, chat: ChatRef = PRIVATE, uid: str = "100") -> str:
        """Send `body`; the bot's replies to it in `chat`, joined."""
        before = len(self.adapter.ops)
        await self.gateway.handle(self.adapter, IncomingMessage(
            platform=chat.platform, chat=chat, sender=Sender(platform_uid=uid),
            message_id=f"m{next(_ids)}", text=body))
        await self.gateway.idle()
        return "\n".join(self.adapter.texts[o.message_id] for o in self.adapter.ops[before:]
                         if o.kind == "send" and o.chat == chat)

    def everything_sent_to(self, chat: ChatRef) -> str:
        return "\n".join(o.text for o in self.adapter.ops if o.chat == chat)


@pytest.fixture
async def bot(pg_db: Database, tmp_path: Path) -> Bot:
    return Bot(pg_db, tmp_path)


async def test_web_gives_a_link_that_works_once(bot: Bot) -> None:
    said = await bot.say("/web")
    assert "10 minutes" in said
    token = _LOGIN.search(said).group(1)  # type: ignore[union-attr]
    session = await bot.directory.redeem_login(token)
    assert session is not None
    assert session.person.user_id == str(await bot.store.accounts.user_for("telegram", "100"))
    assert await bot.directory.redeem_login(token) is None
    # nothing of the link is kept in the outbox
    assert await bot.store.pool.fetchval("SELECT count(*) FROM deliveries") == 0


async def test_web_logout_ends_every_session(bot: Bot) -> None:
    sessions = []
    for _ in range(2):
        token = _LOGIN.search(await bot.say("/web")).group(1)  # type: ignore[union-attr]
        sessions.append(await bot.directory.redeem_login(token))
    for s in sessions:
        assert s is not None and await bot.directory.session(s.token) is not None
    assert "2 session(s) ended" in await bot.say("/web logout")
    for s in sessions:
        assert s is not None and await bot.directory.session(s.token) is None
    assert "No web session" in await bot.say("/web logout")
    assert "Usage: /web" in await bot.say("/web please")


async def test_web_in_a_group_sends_the_link_privately(bot: Bot) -> None:
    said = await bot.say("/web", chat=GROUP)
    assert "private message" in said
    assert "/login/" not in bot.everything_sent_to(GROUP)
    private = bot.everything_sent_to(ChatRef(platform="telegram", chat_id="100"))
    assert _LOGIN.search(private)


async def test_web_in_a_group_is_refused_when_the_private_chat_refuses(bot: Bot) -> None:
    bot.adapter.faults["send"] = [Forbidden("bot was never started by this user")]
    said = await bot.say("/web", chat=GROUP)
    assert "only given in a private chat" in said
    assert "/login/" not in bot.everything_sent_to(GROUP)


async def test_web_in_a_group_of_a_platform_without_private_addressing_is_refused(
        pg_db: Database, tmp_path: Path) -> None:
    bot = Bot(pg_db, tmp_path, platform="slack")
    group = ChatRef(platform="slack", chat_id="C1", is_group=True)
    said = await bot.say("/web", chat=group, uid="U1")
    assert "only given in a private chat" in said
    assert all("/login/" not in o.text for o in bot.adapter.ops)
    assert await bot.store.pool.fetchval("SELECT count(*) FROM web_logins") == 0


async def test_share_then_unshare(bot: Bot) -> None:
    assert "Nothing to share yet" in await bot.say("/share")
    await bot.say("what is up?")
    said = await bot.say("/share")
    assert "/unshare" in said
    token = _SHARE.search(said).group(1)  # type: ignore[union-attr]
    shared = await bot.directory.shared(token)
    assert shared is not None
    assert [e.text for e in shared.entries] == ["what is up?", "an answer"]
    assert "Revoked 1 share link" in await bot.say("/unshare")
    assert await bot.directory.shared(token) is None
    assert "Nothing of this chat is shared" in await bot.say("/unshare")


async def test_unshare_in_another_chat_revokes_nothing_there(bot: Bot) -> None:
    await bot.say("question")
    token = _SHARE.search(await bot.say("/share")).group(1)  # type: ignore[union-attr]
    other = ChatRef(platform="telegram", chat_id="300")
    assert "Nothing of this chat is shared" in await bot.say("/unshare", chat=other, uid="300")
    assert await bot.directory.shared(token) is not None


async def test_without_the_web_platform_web_and_share_say_so(bot: Bot) -> None:
    web_commands.configure(bot.gateway, base_url=None)
    assert "not set up" in await bot.say("/web")
    await bot.say("question")
    assert "not set up" in await bot.say("/share")
    assert await bot.store.pool.fetchval("SELECT count(*) FROM web_logins") == 0
    assert await bot.store.pool.fetchval("SELECT count(*) FROM shares") == 0


async def test_chinese(bot: Bot) -> None:
    await bot.say("/lang zh")
    assert "登录链接" in await bot.say("/web")
    assert "分享" in await bot.say("/share")


def _cli(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("BULLPEN_", "DATABASE_URL", "WEB_"))}
    base.update({"BULLPEN_DATA_DIR": str(tmp_path / "data"), **env})
    return warm_bullpen.run(args, cwd=tmp_path, env=base, timeout=180)


async def test_cli_web_login_prints_a_link_for_the_console_person(
        pg_dsn: str, pg_db: Database, tmp_path: Path) -> None:
    out = await asyncio.to_thread(_cli, ["web", "login"], tmp_path, DATABASE_URL=pg_dsn,
                                  WEB_PORT="8099")
    assert out.returncode == 0, out.stderr
    token = re.fullmatch(r"http://127\.0\.0\.1:8099/login/([A-Za-z0-9]+)\n", out.stdout)
    assert token is not None, out.stdout
    session = await StoreWebDirectory(Store(pg_db, files_dir=tmp_path)).redeem_login(
        token.group(1))
    assert session is not None
    store = Store(pg_db, files_dir=tmp_path)
    assert session.person.user_id == str(await store.accounts.user_for("console", "local"))
    out = await asyncio.to_thread(_cli, ["web", "login"], tmp_path, DATABASE_URL=pg_dsn)
    assert out.returncode == 2 and "not configured: set WEB_PORT" in out.stderr
    out = await asyncio.to_thread(_cli, ["web", "login", "--user", "nobody"], tmp_path,
                                  DATABASE_URL=pg_dsn, WEB_BASE_URL="https://b.example/")
    assert out.returncode == 2 and "is not PLATFORM:UID" in out.stderr


async def test_the_app_starts_the_web_platform_and_a_link_from_telegram_signs_in(
        make_app: Callable[..., Any]) -> None:
    """WEB_PORT set: the web platform starts like any platform; /web in Telegram gives a link
    that signs in on it as the same person, whose questions from the page are theirs."""
    import aiohttp

    from adapters.web import WebAdapter

    async with make_app(web_port=0, admins="telegram:100") as app:  # any free port
        assert app.settings.platforms_configured() == ["web"]
        [web] = app.build_adapters(["web"])
        assert isinstance(web, WebAdapter)
        await app.start_adapters([web], jobs=False)
        port = web.port
        telegram = RecordingAdapter(name="telegram")
        await app.gateway.handle(telegram, IncomingMessage(
            platform="telegram", chat=PRIVATE, sender=Sender(platform_uid="100"),
            message_id="t1", text="/web"))
        url = telegram.ops[-1].text.split()[-1]  # WEB_BASE_URL unset: http://127.0.0.1:<port>
        assert url.startswith(f"http://127.0.0.1:{port}/login/")
        ann = await app.store.accounts.user_for("telegram", "100")
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.post(url, allow_redirects=False) as r:
                assert r.status == 303
            async with http.get(f"http://127.0.0.1:{port}/api/me") as r:
                me = await r.json()
            assert me["user_id"] == str(ann) and me["is_admin"]
            async with http.post(url, allow_redirects=False) as r:
                assert r.status == 404  # once
            async with http.post(f"http://127.0.0.1:{port}/api/messages",
                                 json={"text": "hello from the page"},
                                 headers={"X-CSRF-Token": me["csrf"]}) as r:
                assert r.status < 300, await r.text()
        await asyncio.sleep(0.2)
        await app.gateway.idle()
        owners = await app.store.pool.fetch(
            "SELECT c.user_id FROM conversations c JOIN messages m ON m.conversation_id = c.id"
            " WHERE c.platform = 'web' AND m.content = 'hello from the page'")
        assert [r["user_id"] for r in owners] == [ann]
