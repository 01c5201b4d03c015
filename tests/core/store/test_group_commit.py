"""Group commit (core.store.group_commit): the rows of callers arriving together are written by
one statement, each caller gets its own result only once its row is committed, a chat's
updates never share a batch, and a bad row fails only its own caller."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from uuid import UUID, uuid4

import asyncpg
import pytest

from core.store import Database, Inbound, Store
from core.store.group_commit import GroupCommit
from core.store.inbound import merge_marks
from core.types import ChatMessage, ChatRef, Usage


async def until(check: Callable[[], Awaitable[bool]], within_s: float = 60.0) -> None:
    """Poll `check` until it holds (an event in another session: a lock waited on)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while True:
        if await check():
            return
        assert loop.time() < end, "not within the time allowed"
        await asyncio.sleep(0.02)


def _record(store: Store, chat: str, mid: str, uid: str = "") -> Awaitable[Inbound]:
    return store.inbound.record_for_sender(
        platform="test", chat_id=chat, message_id=mid, sender_uid=uid or f"u{chat}",
        payload={"text": f"q{mid}"}, message={"text": f"q{mid}"}, owner="proc-a")


async def test_records_of_many_chats_share_one_statement_and_each_gets_its_own(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    user, _ = await store.accounts.user_and_lang("test", "u3", "Three")
    conv = await store.conversations.active(ChatRef(platform="test", chat_id="3"), user)
    before = store.inbound.records.stats.statements
    got = await asyncio.gather(*(_record(store, str(n), "m1") for n in range(20)))
    assert store.inbound.records.stats.statements - before == 1  # all arrived together
    assert all(g.new for g in got)
    assert len({g.id for g in got}) == 20
    # each caller got its own chat's reads: only chat 3 has a user and a conversation
    assert [n for n, g in enumerate(got) if g.user_id is not None] == [3]
    assert got[3].user_id == user and got[3].conversation is not None
    assert got[3].conversation.id == conv.id
    assert all(g.conversation is None for n, g in enumerate(got) if n != 3)
    # committed when returned: another connection sees every row
    other = await asyncpg.connect(pg_db.dsn)
    try:
        seen = await other.fetch("SELECT chat_id, message::text, owner FROM inbound_events"
                                 " WHERE platform = 'test' ORDER BY id")
    finally:
        await other.close()
    assert sorted(r["chat_id"] for r in seen) == sorted(str(n) for n in range(20))
    assert {r["owner"] for r in seen} == {"proc-a"}
    assert json.loads(seen[0]["message"]) == {"text": "qm1"}


async def test_a_duplicate_in_a_batch_is_told_what_it_duplicates(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    first = await _record(store, "1", "m1")
    again, other = await asyncio.gather(_record(store, "1", "m1"), _record(store, "2", "m1"))
    assert first.new and not again.new and other.new
    assert again.id is None and again.previous is not None
    assert again.previous[:2] == ("received", "proc-a")


async def test_one_chats_updates_never_share_a_batch(pg_db: Database, tmp_path: Path) -> None:
    """Two updates of one chat arriving together go in two statements, in arrival order."""
    store = Store(pg_db, files_dir=tmp_path)
    stats = store.inbound.records.stats
    before = stats.statements
    one, two, elsewhere = await asyncio.gather(
        _record(store, "1", "m1"), _record(store, "1", "m2"), _record(store, "2", "m1"))
    assert stats.statements - before == 2
    assert stats.sizes[-2:] == [2, 1]
    assert one.new and two.new and elsewhere.new
    assert one.id is not None and two.id is not None and one.id < two.id


async def test_a_bad_row_fails_only_its_own_caller(pg_db: Database, tmp_path: Path) -> None:
    """A run's records for a conversation that does not exist break the batch's statement;
    the others are written again on their own and stored, the bad one's caller hears why."""
    store = Store(pg_db, files_dir=tmp_path)
    good = [await store.conversations.active(ChatRef(platform="test", chat_id=str(n)), None)
            for n in range(3)]
    usage = Usage(provider="p", model="m", role="agent", prompt_tokens=10,
                  completion_tokens=5)
    runs = [store.conversations.add_run_records(
        c.id, user_id=None, messages=[ChatMessage(role="assistant", content=f"a{n}")],
        usages=[usage]) for n, c in enumerate(good)]
    bad = store.conversations.add_run_records(
        uuid4(), user_id=None, messages=[ChatMessage(role="assistant", content="lost")])
    results = await asyncio.gather(runs[0], bad, runs[1], runs[2], return_exceptions=True)
    assert isinstance(results[1], asyncpg.ForeignKeyViolationError)
    ids = [r for n, r in enumerate(results) if n != 1]
    assert store.conversations.run_records.stats.fallbacks == 1
    for n, c in enumerate(good):
        said = await store.conversations.messages(c.id)
        assert [m.message.content for m in said] == [f"a{n}"]
        assert ids[n] == [said[0].id]  # each caller got the id of its own row
        assert (await store.conversations.get(c.id)).token_used == 15


async def test_runs_of_many_conversations_share_a_batch_in_each_ones_order(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    a = await store.conversations.active(ChatRef(platform="test", chat_id="a"), None)
    b = await store.conversations.active(ChatRef(platform="test", chat_id="b"), None)
    before = store.conversations.run_records.stats.statements

    def said(conv_id: UUID, *texts: str) -> Awaitable[list[int]]:
        return store.conversations.add_run_records(
            conv_id, user_id=None, inbound_id=None,
            messages=[ChatMessage(role="assistant", content=t) for t in texts])

    ids = await asyncio.gather(said(a.id, "a1", "a2"), said(b.id, "b1"), said(a.id, "a3"))
    # one conversation's runs never share a batch: a's second waits for the first
    assert store.conversations.run_records.stats.statements - before == 2
    assert store.conversations.run_records.stats.sizes[-2:] == [2, 1]
    stored = {m.message.content: m.id for c in (a, b)
              for m in await store.conversations.messages(c.id)}
    assert list(ids) == [[stored["a1"], stored["a2"]], [stored["b1"]], [stored["a3"]]]
    assert [m.message.content for m in await store.conversations.messages(a.id)] == \
        ["a1", "a2", "a3"]
    assert [m.message.content for m in await store.conversations.messages(b.id)] == ["b1"]


async def test_marks_together_leave_what_one_after_the_other_would(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    for n in range(3):
        await _record(store, str(n), "m1")
    user, _ = await store.accounts.user_and_lang("test", "u0", "Zero")
    inbound = store.inbound
    before = inbound.marks.stats.statements
    await asyncio.gather(
        inbound.mark(platform="test", chat_id="0", message_id="m1", status="running",
                     user_id=user, lang="zh", placeholder="p0"),
        inbound.mark_many({("test", "0", "m1"): {"status": "answered"},
                           ("test", "1", "m1"): {"status": "ignored"}}),
        inbound.mark(platform="test", chat_id="2", message_id="m1", status="failed",
                     error="boom"))
    # one message's marks never share a batch (in order, as given): two statements for three
    assert inbound.marks.stats.statements - before == 2
    rows = {r["chat_id"]: r for r in await pg_db.pool.fetch(
        "SELECT chat_id, status, user_id, lang, placeholder, error FROM inbound_events")}
    assert (rows["0"]["status"], rows["0"]["user_id"], rows["0"]["lang"],
            rows["0"]["placeholder"]) == ("answered", user, "zh", "p0")
    assert rows["1"]["status"] == "ignored"
    assert (rows["2"]["status"], rows["2"]["error"]) == ("failed", "boom")


def test_merged_marks_keep_the_last_status_and_every_field_given() -> None:
    key = ("p", "c", "m")
    merged = merge_marks([{key: {"status": "running", "placeholder": "7", "lang": "en"}},
                          {key: {"status": "answered", "lang": "zh", "error": None}}])
    assert merged == {key: {"status": "answered", "placeholder": "7", "lang": "zh"}}


async def test_the_store_away_fails_the_whole_batch_at_once(
        pg_db: Database, tmp_path: Path) -> None:
    """A batch whose database is unreachable is not written row by row (that would wait out
    the budget once per row): every caller gets the same StoreUnavailable."""
    from core.errors import StoreUnavailable
    from core.store.group_commit import GroupCommit

    calls: list[int] = []

    async def away(items: list[int]) -> list[int]:
        calls.append(len(items))
        raise StoreUnavailable("away")

    commit: GroupCommit[int, int] = GroupCommit(away, name="away")
    got = await asyncio.gather(*(commit.submit(n) for n in range(5)), return_exceptions=True)
    assert all(isinstance(g, StoreUnavailable) for g in got)
    assert calls == [5]
    with pytest.raises(StoreUnavailable):
        await commit.submit(9)


async def test_a_batch_held_up_by_a_locked_row_does_not_hold_up_the_others(
        pg_db: Database, tmp_path: Path) -> None:
    """One message's row locked by a long transaction: its mark waits, another message's mark
    is written meanwhile; a later mark of the locked message waits for the first (in order)."""
    store = Store(pg_db, files_dir=tmp_path)
    for n in range(2):
        await _record(store, str(n), "m1")
    inbound = store.inbound
    locker = await pg_db.pool.acquire()
    tx = locker.transaction()
    await tx.start()
    try:
        await locker.execute("SELECT 1 FROM inbound_events WHERE chat_id = '0' FOR UPDATE")
        held = asyncio.create_task(inbound.mark(platform="test", chat_id="0", message_id="m1",
                                                status="running", placeholder="p"))
        await until(lambda: pg_db.pool.fetchval(  # its batch is sent and waits on the lock
            "SELECT count(*) > 0 FROM pg_locks WHERE NOT granted"))
        after = asyncio.create_task(inbound.mark(platform="test", chat_id="0",
                                                 message_id="m1", status="answered"))
        await inbound.mark(platform="test", chat_id="1", message_id="m1", status="ignored")
        assert not held.done() and not after.done()
    finally:
        await tx.rollback()
        await pg_db.pool.release(locker)
    await held
    await after
    row = await pg_db.pool.fetchrow(
        "SELECT status, placeholder FROM inbound_events WHERE chat_id = '0'")
    assert (row["status"], row["placeholder"]) == ("answered", "p")


async def test_a_writer_with_nothing_it_may_take_ends_instead_of_spinning() -> None:
    """Everything waiting is behind a batch still being written (same key): the writer
    started for it finds nothing to take and ends; the held batch's end starts the next. It
    used to start itself again at once, a new task on every turn of the loop (100% of a core)
    for as long as the held batch took, a locked row's whole wait."""
    release = asyncio.Event()
    written: list[list[str]] = []

    async def write(items: list[str]) -> list[None]:
        if not written:
            await release.wait()  # the first batch is held up
        written.append(items)
        return [None] * len(items)

    committer: GroupCommit[str, None] = GroupCommit(write, name="test", keys=lambda i: ("k",))
    first = asyncio.ensure_future(committer.submit("a"))
    await asyncio.sleep(0)
    await asyncio.sleep(0)  # "a" is being written, held up
    second = asyncio.ensure_future(committer.submit("b"))  # behind it: same key
    held = set(committer._writers)
    for _ in range(50):
        await asyncio.sleep(0)
    assert len(held) == 1 and committer._writers == held  # no writer comes and goes meanwhile
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second), 10)
    assert written == [["a"], ["b"]]


async def test_a_cancelled_caller_leaves_its_row_and_the_others_their_results() -> None:
    """A caller cancelled while its batch is being written: its row is written all the same
    (as a statement already sent would be), the others get their own results, and a failure
    of a batch reaches only the callers still waiting."""
    release = asyncio.Event()
    written: list[list[str]] = []

    async def write(items: list[str]) -> list[str]:
        await release.wait()
        written.append(items)
        if "bad" in items:
            raise RuntimeError("boom")
        return [f"ok {i}" for i in items]

    committer: GroupCommit[str, str] = GroupCommit(write, name="test", max_in_flight=1)
    a = asyncio.ensure_future(committer.submit("a"))
    await asyncio.sleep(0)
    b = asyncio.ensure_future(committer.submit("b"))
    c = asyncio.ensure_future(committer.submit("c"))
    await asyncio.sleep(0)
    b.cancel()
    release.set()
    assert await asyncio.wait_for(a, 10) == "ok a"
    assert await asyncio.wait_for(c, 10) == "ok c"
    with pytest.raises(asyncio.CancelledError):
        await b
    assert written == [["a"], ["b", "c"]]

    release.clear()
    bad = asyncio.ensure_future(committer.submit("bad"))
    await asyncio.sleep(0)
    bad.cancel()  # its writer fails alone (a batch of one): nobody waits for the error
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await bad
    await committer.drain()
    assert written[-1] == ["bad"]
