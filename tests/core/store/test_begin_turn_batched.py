"""The start of a run (`begin_turn`: the conversation, its history window, the user's message)
is group committed across conversations: runs starting together share one statement, and each
still reads its own conversation's window, before its own message, as if it had been alone."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from core.store import Database, Store
from core.types import ChatMessage, ChatRef

CHATS = 24


async def test_runs_starting_together_share_statements_and_each_reads_its_own_window(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    convs = [await store.conversations.active(ChatRef(platform="test", chat_id=f"c{i}"), None)
             for i in range(CHATS)]
    for i, conv in enumerate(convs):  # i earlier turns each: windows of different lengths
        for k in range(i % 4):
            await store.conversations.begin_turn(conv.id, f"q{i}.{k}", title=f"q{i}")
            await store.conversations.add_run_records(conv.id, user_id=None, messages=[
                ChatMessage(role="assistant", content=f"a{i}.{k}")])
    before = store.conversations.turns.stats.statements
    starts = await asyncio.gather(*(
        store.conversations.begin_turn(conv.id, f"now{i}", title=f"now{i}", history_limit=4,
                                       platform_message_id=f"m{i}")
        for i, conv in enumerate(convs)))
    statements = store.conversations.turns.stats.statements - before
    assert statements < CHATS / 2, statements  # shared, not one per run
    for i, (conv, start) in enumerate(zip(convs, starts, strict=True)):
        assert start.conversation.id == conv.id
        earlier = [m for k in range(i % 4) for m in (f"q{i}.{k}", f"a{i}.{k}")][-4:]
        assert [m.content for m in start.history] == earlier  # its own, without the new one
        assert len(start.history_ids) == len(earlier)
        assert start.message_id is not None and start.message_id not in start.history_ids
        assert start.conversation.title in (f"q{i}", "")  # set by its first turn, if any
    rows = await pg_db.pool.fetch(
        "SELECT conversation_id, content, platform_message_id FROM messages"
        " WHERE content LIKE 'now%' ORDER BY id")
    assert sorted((r["content"], r["platform_message_id"]) for r in rows) == sorted(
        (f"now{i}", f"m{i}") for i in range(CHATS))
    assert {r["conversation_id"] for r in rows} == {c.id for c in convs}
    fresh = await store.conversations.get(convs[0].id)  # no earlier turn: titled now
    assert fresh.title == "now0"


async def test_a_known_window_is_not_sent_again_and_a_threshold_holds_the_message_back(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    conv = await store.conversations.active(ChatRef(platform="test", chat_id="k"), None)
    first = await store.conversations.begin_turn(conv.id, "one", title="one")
    second = await store.conversations.begin_turn(conv.id, "two", title="two",
                                                  known_window=())
    assert [m.content for m in second.history] == ["one"] and not second.history_known
    third = await store.conversations.begin_turn(
        conv.id, "three", title="three", known_window=(first.message_id, second.message_id))
    assert third.history == [] and third.history_known
    assert third.history_ids == (first.message_id, second.message_id)
    due = await store.conversations.begin_turn(conv.id, "four", title="four",
                                               summarize_threshold=2)
    assert due.message_id is None and due.unsummarised == 3  # a summary first: nothing written


async def test_a_missing_conversation_fails_only_its_own_run(pg_db: Database,
                                                             tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    convs = [await store.conversations.active(ChatRef(platform="test", chat_id=f"x{i}"), None)
             for i in range(4)]
    results = await asyncio.gather(
        *(store.conversations.begin_turn(c.id, "hi", title="hi") for c in convs),
        store.conversations.begin_turn(uuid.uuid4(), "lost", title="lost"),
        return_exceptions=True)
    assert all(not isinstance(r, BaseException) for r in results[:4]), results
    assert isinstance(results[4], AssertionError) and "no conversation" in str(results[4])
    assert await pg_db.pool.fetchval("SELECT count(*) FROM messages WHERE content = 'hi'") == 4
