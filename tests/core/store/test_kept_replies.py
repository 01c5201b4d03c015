"""Kept replies (`core.ports.KeptReplies`): the Postgres repository against a real embedded
PostgreSQL, and the in-memory twin held to the same behaviour."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from core.errors import StoreError
from core.ports import KeptReplies, KeptReply
from core.store import Database, KeptRepliesRepo, Store
from core.testing import MemoryKeptReplies
from core.types import OutgoingFile

WX = "wechat:wx-app-1"
USER, OTHER = "oUser00000000000000000000001", "oUser00000000000000000000002"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4


@pytest.fixture(params=["postgres", "memory"])
async def kept(request: pytest.FixtureRequest, pg_db: Database,
               tmp_path: Path) -> AsyncIterator[KeptReplies]:
    """The store's repository (registered on `Store`), or the twin (its database unused)."""
    yield MemoryKeptReplies() if request.param == "memory" \
        else Store(pg_db, files_dir=tmp_path).kept_replies


async def drain(kept: KeptReplies, key: str, user: str) -> list[KeptReply]:
    """Every kept reply, oldest first, removed as it is read (what a delivery does)."""
    out = []
    while (reply := await kept.peek(key, user)) is not None:
        out.append(reply)
        await kept.remove(key, user, reply.id)
    return out


async def test_replies_come_back_in_order_and_leave_only_when_removed(kept: KeptReplies):
    for text in ("one", "two", "three"):
        assert await kept.keep(WX, USER, KeptReply(text=text), limit=50) == 0
    first = await kept.peek(WX, USER)
    assert first is not None and first.text == "one"
    again = await kept.peek(WX, USER)  # peeking is not taking
    assert again is not None and again.id == first.id
    assert [r.text for r in await drain(kept, WX, USER)] == ["one", "two", "three"]
    assert await kept.peek(WX, USER) is None and await kept.recipients(WX) == set()


async def test_each_user_and_each_app_has_its_own_replies(kept: KeptReplies):
    wecom = "wecom:corp:1000002"
    await kept.keep(WX, USER, KeptReply(text="for user"), limit=50)
    await kept.keep(WX, OTHER, KeptReply(text="for other"), limit=50)
    await kept.keep(wecom, USER, KeptReply(text="same openid, other app"), limit=50)
    assert await kept.recipients(WX) == {USER, OTHER}
    assert await kept.recipients(wecom) == {USER}
    mine = await kept.peek(WX, USER)
    assert mine is not None
    await kept.remove(wecom, USER, mine.id)  # another app's key removes nothing
    assert [r.text for r in await drain(kept, WX, USER)] == ["for user"]
    assert [r.text for r in await drain(kept, WX, OTHER)] == ["for other"]
    assert [r.text for r in await drain(kept, wecom, USER)] == ["same openid, other app"]


async def test_the_cap_drops_the_oldest_and_says_how_many(kept: KeptReplies):
    dropped = [await kept.keep(WX, USER, KeptReply(text=f"r{i}"), limit=3) for i in range(5)]
    await kept.keep(WX, OTHER, KeptReply(text="untouched"), limit=3)
    assert dropped == [0, 0, 0, 1, 1]
    assert [r.text for r in await drain(kept, WX, USER)] == ["r2", "r3", "r4"]
    assert [r.text for r in await drain(kept, WX, OTHER)] == ["untouched"]
    with pytest.raises(ValueError):
        await kept.keep(WX, USER, KeptReply(text="x"), limit=0)


async def test_files_keep_their_bytes_between_texts_and_clear_forgets_a_user(kept: KeptReplies):
    image = OutgoingFile(kind="image", filename="chart.png", data=PNG, mime_type="image/png")
    pdf = OutgoingFile(kind="document", filename="r.pdf", data=b"%PDF-1.7\x00\xff",
                       mime_type="application/pdf")
    await kept.keep(WX, USER, KeptReply(text="before"), limit=50)
    await kept.keep(WX, USER, KeptReply(file=image), limit=50)
    await kept.keep(WX, USER, KeptReply(file=pdf), limit=50)
    await kept.keep(WX, USER, KeptReply(text="caption, after"), limit=50)
    got = await drain(kept, WX, USER)
    assert [(r.text, r.file.kind if r.file else None) for r in got] == [
        ("before", None), ("", "image"), ("", "document"), ("caption, after", None)]
    assert got[1].file is not None and got[1].file.data == PNG
    assert (got[1].file.filename, got[1].file.mime_type) == ("chart.png", "image/png")
    assert got[2].file is not None and got[2].file.data == pdf.data
    await kept.keep(WX, USER, KeptReply(text="a"), limit=50)
    await kept.keep(WX, USER, KeptReply(text="b"), limit=50)
    assert await kept.clear(WX, USER) == 2
    assert await kept.peek(WX, USER) is None and await kept.clear(WX, USER) == 0


async def test_kept_replies_survive_a_new_pool_on_the_same_database(pg_dsn: str, tmp_path: Path):
    db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    try:
        repo = KeptRepliesRepo(db.pool)
        assert repo.durable
        await repo.keep(WX, USER, KeptReply(text="across a restart"), limit=50)
    finally:
        await db.aclose()
    db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    try:
        repo = KeptRepliesRepo(db.pool)
        assert await repo.recipients(WX) == {USER}
        assert [r.text for r in await drain(repo, WX, USER)] == ["across a restart"]
    finally:
        await db.aclose()
    with pytest.raises(StoreError, match="kept replies: peek failed"):
        await repo.peek(WX, USER)  # the pool is closed: a StoreError, not asyncpg's own
    assert not MemoryKeptReplies.durable
