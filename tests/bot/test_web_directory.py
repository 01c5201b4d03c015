"""The web platform's directory over real Postgres, fed by real runs through the gateway: who a
session is, what a person may see (their own conversations and files only, no tool
internals), share links, and the admin console."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from pydantic import BaseModel

from bot.gateway import Gateway
from bot.web_directory import StoreWebDirectory, web_chat
from core.agent import AgentRunner, NormalMode
from core.errors import ConsoleOff, QueryRefused
from core.events import Done, Event
from core.ports import EventObserver, WebPerson
from core.store import Database, Store
from core.testing import RecordingAdapter, ScriptedLLM, calls, text
from core.tools import ToolRegistry, tool
from core.types import (
    ChatMessage,
    ChatRef,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    Sender,
)

ANN_CHAT = ChatRef(platform="telegram", chat_id="100")
BOB_CHAT = ChatRef(platform="telegram", chat_id="200")
_ids = itertools.count(1)


class Echo(BaseModel):
    said: str


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg)
    async def echo(word: str) -> Echo:
        """Repeat a word.

        Args:
            word: what to repeat
        """
        return Echo(said=f"TOOL_RESULT_{word}")

    return reg


class World:
    def __init__(self, pg_db: Database, tmp_path: Path, script: Sequence[Any] = ()) -> None:
        self.store = Store(pg_db, files_dir=tmp_path)
        self.llm = ScriptedLLM(script, default=text("plain answer"))
        self.gateway = Gateway(store=self.store, runner=AgentRunner(store=self.store, modes={
            "normal": NormalMode(llm=self.llm, registry=registry(), plan=False)}))
        self.telegram = RecordingAdapter(name="telegram")
        self.web = RecordingAdapter(name="web")
        self.directory = StoreWebDirectory(self.store, admins=frozenset({"telegram:100"}),
                                           sql_timeout_ms=2000, sql_row_limit=2)

    async def ask(self, adapter: RecordingAdapter, chat: ChatRef, uid: str, body: str) -> None:
        await self.gateway.handle(adapter, IncomingMessage(
            platform=chat.platform, chat=chat, sender=Sender(platform_uid=uid),
            message_id=f"m{next(_ids)}", text=body))
        await self.gateway.idle()

    async def person(self, platform: str, uid: str) -> WebPerson:
        user = await self.store.accounts.user_for(platform, uid, uid)
        session = await self.directory.redeem_login(await self.directory.issue_login(user))
        assert session is not None
        return session.person


@pytest.fixture
async def world(pg_db: Database, tmp_path: Path) -> World:
    return World(pg_db, tmp_path)


async def test_a_link_opens_one_session_for_the_linked_person(world: World) -> None:
    ann = await world.store.accounts.user_for("telegram", "100", "Ann")
    token = await world.directory.issue_login(ann)
    session = await world.directory.redeem_login(token)
    assert session is not None and session.person.user_id == str(ann)
    assert session.person.display_name == "Ann" and session.person.is_admin
    assert await world.directory.redeem_login(token) is None  # once
    assert (await world.directory.session(session.token)) == session
    assert await world.directory.session("") is None
    assert await world.directory.session(session.token[:-1]) is None
    await world.directory.end_session(session.token)
    assert await world.directory.session(session.token) is None
    bob = await world.person("telegram", "200")
    assert not bob.is_admin


async def test_what_the_page_sends_reaches_the_same_person(world: World) -> None:
    ann = await world.person("telegram", "100")
    await world.ask(world.telegram, ANN_CHAT, "100", "from telegram")
    await world.ask(world.web, web_chat(ann.user_id), ann.platform_uid, "from the page")
    assert world.web.visible_text(web_chat(ann.user_id))[-1] == "plain answer"
    convs = await world.directory.conversations(ann)
    assert {(c.platform, c.writable) for c in convs} == {("telegram", False), ("web", True)}
    page = await world.directory.web_transcript(ann)
    assert page is not None and page.conversation.writable
    assert [(e.role, e.text) for e in page.entries] == [("user", "from the page"),
                                                        ("assistant", "plain answer")]
    await world.ask(world.web, web_chat(ann.user_id), ann.platform_uid, "/new")
    convs = await world.directory.conversations(ann)
    assert sorted((c.platform, c.is_active, c.writable) for c in convs) == [
        ("telegram", True, False), ("web", False, False), ("web", True, True)]


async def test_transcripts_show_no_tool_internals_and_files_after_their_answer(
        pg_db: Database, tmp_path: Path) -> None:
    world = World(pg_db, tmp_path,
                  script=[calls(("echo", {"word": "SECRET_ARG"})), text("the answer")])
    ann = await world.person("telegram", "100")
    await world.ask(world.telegram, ANN_CHAT, "100", "echo please")
    conv = await world.store.conversations.active(ANN_CHAT, UUID(ann.user_id))
    kinds = [m.message.role for m in await world.store.conversations.messages(conv.id)]
    assert "tool" in kinds  # the tool call and its result are stored ...
    await world.store.files.save(OutgoingFile(kind="image", filename="<img onerror=x>.png",
                                              data=b"\x89PNG chart", mime_type="image/png"),
                                 user_id=UUID(ann.user_id), conversation_id=conv.id)
    got = await world.directory.transcript(ann, str(conv.id))
    assert got is not None
    assert [(e.role, e.text) for e in got.entries] == [
        ("user", "echo please"), ("assistant", "the answer"), ("file", "<img onerror=x>.png")]
    shown = repr(got)
    assert "SECRET_ARG" not in shown and "TOOL_RESULT" not in shown  # ... and never shown
    file = got.entries[-1].file
    assert file is not None and file.conversation_id == str(conv.id)
    data = await world.directory.file(ann, file.id)
    assert data is not None and data.data == b"\x89PNG chart"
    assert [f.id for f in await world.directory.files(ann)] == [file.id]


async def test_another_persons_conversation_or_file_is_none(world: World) -> None:
    ann = await world.person("telegram", "100")
    bob = await world.person("telegram", "200")
    await world.ask(world.telegram, ANN_CHAT, "100", "ann's question")
    conv = await world.store.conversations.active(ANN_CHAT, UUID(ann.user_id))
    await world.store.files.save(OutgoingFile(kind="document", filename="r.pdf", data=b"%PDF"),
                                 user_id=UUID(ann.user_id), conversation_id=conv.id)
    [file] = await world.directory.files(ann)
    assert await world.directory.transcript(bob, str(conv.id)) is None
    assert await world.directory.file(bob, file.id) is None
    assert await world.directory.share(bob, str(conv.id)) is None
    assert not await world.directory.unshare(bob, str(conv.id))
    assert await world.directory.files(bob) == []
    assert [c.platform for c in await world.directory.conversations(bob)] == []
    for bad in ("", "nope", "1; drop table users", "-1", "9" * 40, str(conv.id) + "x"):
        assert await world.directory.transcript(ann, bad) is None
        assert await world.directory.file(ann, bad) is None


async def test_share_is_read_only_and_revoked_at_once(world: World) -> None:
    ann = await world.person("telegram", "100")
    await world.ask(world.telegram, ANN_CHAT, "100", "shared question")
    await world.ask(world.telegram, BOB_CHAT, "200", "bob's question")
    conv = await world.store.conversations.active(ANN_CHAT, UUID(ann.user_id))
    bob_conv = await world.store.conversations.active(BOB_CHAT, None)
    await world.store.files.save(OutgoingFile(kind="image", filename="c.png", data=b"png"),
                                 user_id=UUID(ann.user_id), conversation_id=conv.id)
    await world.store.files.save(OutgoingFile(kind="image", filename="b.png", data=b"bob"),
                                 user_id=None, conversation_id=bob_conv.id)
    token = await world.directory.share(ann, str(conv.id))
    assert token is not None
    shared = await world.directory.shared(token)
    assert shared is not None and not shared.conversation.writable
    assert shared.conversation.chat_id == ""  # where it was said is not published
    assert [e.text for e in shared.entries] == ["shared question", "plain answer", "c.png"]
    chart = shared.entries[-1].file
    assert chart is not None
    got = await world.directory.shared_file(token, chart.id)
    assert got is not None and got.data == b"png"
    bob_file = await world.store.pool.fetchval("SELECT id FROM files WHERE filename = 'b.png'")
    assert await world.directory.shared_file(token, str(bob_file)) is None
    guess = token[:-1] + ("0" if token[-1] != "0" else "1")  # one character off
    assert await world.directory.shared(guess) is None
    assert await world.directory.shared("") is None
    assert await world.directory.unshare(ann, str(conv.id))
    assert await world.directory.shared(token) is None
    assert await world.directory.shared_file(token, chart.id) is None


async def test_admin_console_through_the_directory(world: World) -> None:
    for uid in ("1", "2", "3"):
        await world.store.accounts.user_for("telegram", uid, uid)
    tables = dict(await world.directory.admin_tables())
    assert tables["users"] == 3
    rows = await world.directory.admin_rows("users", page=1, page_size=2)
    assert rows is not None and rows.total == 3 and len(rows.rows) == 2
    assert await world.directory.admin_rows("users; drop table users", page=1,
                                            page_size=2) is None
    got = await world.directory.admin_query("SELECT display_name FROM users ORDER BY 1")
    assert got.rows == (("1",), ("2",)) and got.truncated  # the row limit setting: 2
    with pytest.raises(QueryRefused, match="cannot execute DELETE in a read-only transaction"):
        await world.directory.admin_query("DELETE FROM users")
    with pytest.raises(QueryRefused, match="statement timeout"):
        await world.directory.admin_query("SELECT pg_sleep(10)")  # the setting: 2 s
    assert await world.store.pool.fetchval("SELECT count(*) FROM users") == 3


async def test_a_result_cut_in_bytes_says_so_and_a_console_off_says_why(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    directory = StoreWebDirectory(store, sql_row_limit=500, sql_byte_limit=4096)
    got = await directory.admin_query("SELECT repeat('x', 3000) FROM generate_series(1, 3)")
    assert got.truncated and len(got.rows) == 1
    assert got.note.startswith("cut at 4 KB (4096 bytes)") and "已截断" in got.note
    assert await directory.admin_status() is None
    await pg_db.pool.execute("ALTER ROLE bullpen_console NOLOGIN")
    try:
        reason = await directory.admin_status()
        assert reason is not None and reason.startswith("The admin console is off: it cannot")
        assert "管理控制台已关闭" in reason
        with pytest.raises(ConsoleOff, match="The admin console is off"):
            await directory.admin_tables()
    finally:
        await pg_db.pool.execute("ALTER ROLE bullpen_console LOGIN")


class Observing(RecordingAdapter):
    """An adapter that also shows the run's events (as the web page does)."""

    def __init__(self, *, fail: bool = False) -> None:
        super().__init__(name="web")
        self.seen: list[tuple[str, str | None]] = []
        self.fail = fail

    async def observe(self, chat: ChatRef, ref: MessageRef | None, event: Event) -> None:
        self.seen.append((event.type, ref.message_id if ref is not None else None))
        if self.fail:
            raise RuntimeError("the page went away")


@pytest.mark.parametrize("fail", [False, True])
async def test_the_renderer_shows_every_event_to_an_observer_and_survives_its_errors(
        world: World, fail: bool) -> None:
    page = Observing(fail=fail)
    assert isinstance(page, EventObserver)
    chat = web_chat("someone")
    await world.ask(page, chat, "someone", "a question")
    assert page.visible_text(chat) == ["plain answer"]  # the answer arrived regardless
    [placeholder] = [o.message_id for o in page.ops if o.kind == "send"]
    assert [t for t, _ in page.seen][-1] == "done" and "text_delta" in [t for t, _ in page.seen]
    assert {ref for _, ref in page.seen} == {placeholder}  # each event names its placeholder


async def test_linking_accounts_keeps_one_web_identity(world: World) -> None:
    """Ann signed in from Telegram, then links Telegram onto her Discord account: her old
    sessions end with the user they belonged to, and the next sign-in is the linked person,
    with the same web identity and every conversation."""
    ann_tg = await world.person("telegram", "100")
    session = await world.directory.redeem_login(
        await world.directory.issue_login(UUID(ann_tg.user_id)))
    assert session is not None
    await world.ask(world.telegram, ANN_CHAT, "100", "asked on telegram")
    discord = await world.store.accounts.user_for("discord", "D1", "Ann")
    code = await world.store.accounts.issue_link_code(discord)
    assert (await world.store.accounts.redeem_link_code(code, UUID(ann_tg.user_id))).ok
    assert await world.directory.session(session.token) is None
    ann = await world.person("discord", "D1")
    assert ann.user_id == str(discord) and ann.platform_uid == ann_tg.platform_uid
    assert ann.is_admin  # telegram:100 is hers now
    assert [c.platform for c in await world.directory.conversations(ann)] == ["telegram"]
    await world.ask(world.web, web_chat(ann.user_id), ann.platform_uid, "asked on the page")
    convs = await world.directory.conversations(ann)
    assert {(c.platform, c.writable) for c in convs} == {("telegram", False), ("web", True)}


class LabelledAnswers:
    """Answers carrying a note, as the offline analyst's and unverified ones do."""

    name = "normal"

    async def run(self, turn):  # type: ignore[no-untyped-def]
        answer = "NVDA closed at 123.45."
        await turn.recorder.message(ChatMessage(role="assistant", content=answer))
        yield Done(text=answer, label="figures not found in the tools' results are unverified")


async def test_an_answer_keeps_its_label_on_the_page_and_the_share_page(world: World) -> None:
    world.gateway = Gateway(store=world.store, runner=AgentRunner(
        store=world.store, modes={"normal": LabelledAnswers()}))
    ann = await world.person("telegram", "100")
    await world.ask(world.telegram, ANN_CHAT, "100", "NVDA?")
    conv = await world.store.conversations.active(ANN_CHAT, UUID(ann.user_id))
    labelled = ("NVDA closed at 123.45.\n\n"
                "_figures not found in the tools' results are unverified_")
    got = await world.directory.transcript(ann, str(conv.id))
    assert got is not None and [e.text for e in got.entries] == ["NVDA?", labelled]
    token = await world.directory.share(ann, str(conv.id))
    assert token is not None
    shared = await world.directory.shared(token)
    assert shared is not None and [e.text for e in shared.entries] == ["NVDA?", labelled]
