"""Store tests against a real embedded PostgreSQL."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

import pytest

from core.errors import StoreError
from core.store import Database, Store, migrate
from core.store.migrate import status
from core.types import ChatMessage, ChatRef, OutgoingFile, ToolCall, Usage

MIGRATIONS = Path(__file__).resolve().parents[2] / "migrations"


async def test_migrations_are_idempotent(pg_pool):
    assert await migrate(pg_pool, MIGRATIONS) == []  # template already has them all
    rows = await status(pg_pool, MIGRATIONS)
    assert rows and all(done for _, done in rows)
    assert await migrate(pg_pool, MIGRATIONS) == []


async def test_concurrent_migrations_on_empty_database(pg_server, tmp_path):
    import asyncpg

    conn = await asyncpg.connect(pg_server)
    await conn.execute("CREATE DATABASE empty_for_migrate")
    await conn.close()
    dsn = pg_server.replace("/postgres?", "/empty_for_migrate?")
    db = await Database.open(dsn=dsn, data_dir=tmp_path)
    try:
        results = await asyncio.gather(*(migrate(db.pool, MIGRATIONS) for _ in range(4)))
        applied = [v for r in results for v in r]
        assert sorted(applied) == sorted({p.stem for p in MIGRATIONS.glob("*.sql")})
        assert await db.pool.fetchval("SELECT count(*) FROM schema_migrations") == len(applied)
    finally:
        await db.aclose()


async def test_concurrent_duplicate_inbound_event_leaves_one_row(pg_db):
    store = Store(pg_db, files_dir=Path("/tmp"))
    results = await asyncio.gather(*(
        store.inbound.record(platform="telegram", chat_id="42", message_id="7")
        for _ in range(20)))
    assert results.count(True) == 1
    assert await store.inbound.count(platform="telegram", chat_id="42", message_id="7") == 1


async def test_unreachable_database_is_one_clear_error(tmp_path):
    with pytest.raises(StoreError) as info:
        await Database.open(dsn="postgresql://bob:s3cret@127.0.0.1:1/nope", data_dir=tmp_path,
                            connect_timeout_s=3)
    text = str(info.value)
    assert "cannot reach the database" in text and "s3cret" not in text
    assert "\n" not in text


async def test_conversation_messages_usage_and_files(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path / "files")
    chat = ChatRef(platform="console", chat_id="local")
    uid = await store.accounts.user_for("console", "me", "Me")
    assert await store.accounts.user_for("console", "me") == uid
    conv = await store.conversations.active(chat, uid)
    assert (await store.conversations.active(chat, uid)).id == conv.id
    await store.conversations.set_mode(conv.id, "debate")
    await store.conversations.add_message(conv.id, ChatMessage(role="user", content="hi"))
    await store.conversations.add_message(conv.id, ChatMessage(
        role="assistant", tool_calls=[ToolCall(id="c1", name="get_quote", arguments="{}")]))
    msgs = await store.conversations.messages(conv.id)
    assert [m.message.role for m in msgs] == ["user", "assistant"]
    assert msgs[1].message.tool_calls[0].name == "get_quote"
    assert [m.message.role for m in await store.conversations.messages(conv.id, limit=1)] == [
        "assistant"]
    new = await store.conversations.start_new(chat, uid)
    assert new.id != conv.id and new.mode == "debate"
    await store.usage.record(Usage(model="m", role="agent", prompt_tokens=10,
                                   completion_tokens=5, cost_usd=0.01),
                             user_id=uid, conversation_id=new.id)
    totals = await store.usage.for_user_this_month(uid)
    assert totals.tokens == 15 and totals.calls == 1
    path = await store.files.save(OutgoingFile(kind="image", filename="../x y.png", data=b"png"),
                                  user_id=uid, conversation_id=new.id)
    assert path.read_bytes() == b"png" and path.parent.parent == tmp_path / "files"


async def test_link_codes(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path)
    a = await store.accounts.user_for("console", "me")
    b = await store.accounts.user_for("telegram", "123")
    code = await store.accounts.issue_link_code(a)
    stored = await pg_db.pool.fetch("SELECT * FROM link_codes")
    assert len(stored) == 1 and "code" not in stored[0].keys()  # shown once, kept hashed
    assert stored[0]["code_hash"] == hashlib.sha256(code.encode()).digest()
    assert code not in str(dict(stored[0]))
    assert (await store.accounts.redeem_link_code(code, a)).reason == "self"
    res = await store.accounts.redeem_link_code(code, b)
    assert res.ok and res.user_id == a
    assert await store.accounts.user_for("telegram", "123") == a
    assert {x.platform for x in await store.accounts.accounts_of(a)} == {"console", "telegram"}
    c = await store.accounts.user_for("slack", "U1")
    assert (await store.accounts.redeem_link_code(code, c)).reason == "used"
    for _ in range(4):  # with the "used" try above, five wrong tries
        assert (await store.accounts.redeem_link_code("00000000", c)).reason == "unknown"
    code2 = await store.accounts.issue_link_code(a)
    assert (await store.accounts.redeem_link_code(code2, c)).reason == "locked"
    assert await store.accounts.unlink("telegram", "123") not in (None, a)


async def test_a_files_path_reads_from_any_working_directory(pg_db, tmp_path, monkeypatch):
    """A data dir given relative to where serve started is stored absolute: the web page, the
    CLI or another process started elsewhere reads the same file."""
    monkeypatch.chdir(tmp_path)
    store = Store(pg_db, files_dir=Path("data") / "files")
    path = await store.files.save(OutgoingFile(kind="image", filename="c.png", data=b"png"),
                                  user_id=None, conversation_id=None)
    stored = await pg_db.pool.fetchval("SELECT path FROM files ORDER BY id DESC LIMIT 1")
    assert Path(stored).is_absolute() and stored == str(path)
    monkeypatch.chdir("/")
    assert Path(stored).read_bytes() == b"png"  # noqa: ASYNC240 (a test, one small file)
