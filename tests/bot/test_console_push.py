"""The console prints a scheduled report like any platform: the outbox finds it by platform."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from adapters.console import ConsoleAdapter
from bot.outbox import AdapterRegistry, PostgresOutbox
from core.store import Database, Store
from core.types import ChatRef
from jobs.runner import JobRunner, schedule_of


async def test_a_scheduled_report_is_printed_on_the_console(pg_db: Database,
                                                           tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    out = io.StringIO()
    console = ConsoleAdapter(files_dir=tmp_path, console=Console(file=out, width=120),
                             stdin=io.StringIO(""))
    registry = AdapterRegistry()
    registry.add(console)
    outbox = PostgresOutbox(store.deliveries, registry)
    owner = await store.accounts.user_for("console", "local", "local")
    chat = ChatRef(platform="console", chat_id="local")
    sub = await store.subscriptions.add(
        owner_id=owner, chat=chat, symbols=["NVDA"], at_time="08:00", recurrence="daily",
        tz="Asia/Shanghai", calendar=None, lang="en")
    fire_at = schedule_of(sub).next_fire(datetime.now(UTC))
    runner = JobRunner(subscriptions=store.subscriptions, outbox=outbox)
    [fired] = await runner.due(fire_at)
    assert fired.status == "done"
    await outbox.drain()
    printed = out.getvalue()
    assert "NVDA" in printed and "2025-02-14" in printed  # the figures with their date
    assert "📎 image:" in printed and (tmp_path / "console").is_dir()
    got = await outbox.receipt(fired.delivery_key or "")
    assert got is not None and got.status == "delivered"
