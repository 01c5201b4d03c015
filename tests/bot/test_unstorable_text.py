"""Text Postgres cannot store (NUL, lone surrogates, undecodable bytes) never loses a message."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from rich.console import Console

from adapters.console import ConsoleAdapter
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.types import ChatRef, IncomingMessage, Sender, storable, storable_message
from tests.bot.test_gateway import gateway


def test_storable_removes_nul_and_replaces_lone_surrogates() -> None:
    assert storable("NVDA\x00 price") == "NVDA price"
    assert storable("half \ud83d emoji") == "half \ufffd emoji"
    assert storable("fine 茅台 📈") == "fine 茅台 📈"
    msg = IncomingMessage(platform="t", chat=ChatRef(platform="t", chat_id="c\x00"),
                          sender=Sender(platform_uid="u", display_name="Bob\udc00"),
                          message_id="m\x001", text="ok")
    clean = storable_message(msg)
    assert (clean.chat.chat_id, clean.sender.display_name, clean.message_id) == (
        "c", "Bob\ufffd", "m1")
    plain = IncomingMessage(platform="t", chat=ChatRef(platform="t", chat_id="c"),
                            sender=Sender(platform_uid="u"), message_id="m", text="ok")
    assert storable_message(plain) is plain


async def test_a_message_with_nul_or_a_lone_surrogate_is_stored_and_answered(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    llm = ScriptedLLM([text("first answer"), text("second answer")])
    gw, _store = gateway(pg_db, tmp_path, llm)
    adapter = RecordingAdapter()
    chat = ChatRef(platform="test", chat_id="c1")
    for mid, body in (("1", "NVDA\x00 price?"), ("2", "and \ud83d this")):
        await gw.handle(adapter, IncomingMessage(
            platform="test", chat=chat, sender=Sender(platform_uid="u\x00", display_name="\udc80"),
            message_id=mid, text=body))
    await gw.idle()
    assert adapter.visible_text(chat)[-2:] == ["first answer", "second answer"]
    assert await pg_db.pool.fetchval("SELECT count(*) FROM inbound_events") == 2
    asked = [m["messages"][-1].content for m in llm.requests]
    assert asked == ["NVDA price?", "and \ufffd this"]


async def test_the_console_reads_on_past_undecodable_input_and_a_failing_message(
        tmp_path: Path) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"bad \xff\xfe bytes\nboom\nlast line\n"),
                             encoding="utf-8")
    got: list[str] = []
    ended = asyncio.Event()
    adapter = ConsoleAdapter(files_dir=tmp_path, stdin=stdin, on_eof=ended.set,
                             console=Console(file=io.StringIO()))

    async def on_message(msg: IncomingMessage) -> None:
        got.append(msg.text)
        if msg.text == "boom":
            raise RuntimeError("database went away")

    await adapter.start(on_message)
    await asyncio.wait_for(ended.wait(), timeout=10)
    assert got == ["bad \ufffd\ufffd bytes", "boom", "last line"]
    await adapter.aclose()
