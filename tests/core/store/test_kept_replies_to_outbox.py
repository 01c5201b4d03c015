"""Migration 0008: WeChat's kept replies become held deliveries of the outbox, in order, files
with their bytes, and are sent when the user next writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import asyncpg

from bot.migrations import MIGRATIONS
from bot.outbox import AdapterRegistry, PostgresOutbox
from core.store import Database, DeliveriesRepo, migrate
from core.testing import RecordingAdapter


async def test_kept_replies_move_to_the_outbox_in_order(pg_server: str, tmp_path: Path) -> None:
    name = "t_kept_migration"
    admin = await asyncpg.connect(pg_server)
    await admin.execute(f"DROP DATABASE IF EXISTS {name}")
    await admin.execute(f"CREATE DATABASE {name}")
    await admin.close()
    head, _, tail = pg_server.partition("/postgres?")
    dsn = f"{head}/{name}?{tail}" if tail else pg_server.rsplit("/", 1)[0] + f"/{name}"
    before = tmp_path / "before"
    before.mkdir()
    for f in sorted(MIGRATIONS.glob("*.sql")):
        if f.name < "0008":
            shutil.copy(f, before / f.name)
    db = await Database.open(dsn=dsn, data_dir=tmp_path)
    try:
        await migrate(db.pool, before)
        await db.pool.execute(
            "INSERT INTO kept_replies (adapter, recipient, kind, body, filename, mime_type, data)"
            " VALUES ('wechat:app1', 'openid-1', 'text', 'first kept', NULL, NULL, NULL),"
            "        ('wechat:app1', 'openid-1', 'image', '', 'chart.png', 'image/png', $1),"
            "        ('wecom:corp:7', 'user-2', 'text', 'for wecom', NULL, NULL, NULL)",
            b"\x89PNG kept bytes")
        await migrate(db.pool, MIGRATIONS)
        assert await db.pool.fetchval("SELECT count(*) FROM kept_replies") == 0
        rows = await db.pool.fetch(
            "SELECT platform, chat_id, status FROM deliveries ORDER BY id")
        assert [tuple(r) for r in rows] == [("wechat", "openid-1", "held"),
                                            ("wechat", "openid-1", "held"),
                                            ("wecom", "user-2", "held")]
        wechat = RecordingAdapter(name="wechat")
        registry = AdapterRegistry()
        registry.add(wechat)
        repo = DeliveriesRepo(db.pool)
        box = PostgresOutbox(repo, registry)
        assert await box.drain() == 0  # held: nothing goes before the user writes
        assert await repo.release_held("wechat", "openid-1") == 2
        await box.drain()
        assert [(o.kind, o.text) for o in wechat.ops] == [("send", "first kept"), ("file", "")]
        sent = wechat.ops[1].file
        assert sent is not None and sent.data == b"\x89PNG kept bytes"
        assert sent.filename == "chart.png" and sent.kind == "image"
    finally:
        await db.aclose()
