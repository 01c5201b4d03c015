"""Database outages below the gateway, with a real PostgreSQL behind a proxy that can be cut
(`tests.fakes.pg_proxy`): statements outlast a short outage, a long one is a clear
`StoreUnavailable`, and a message that could not be stored is neither lost nor answered
twice: the user is told once, and it is answered when the database is back (kept by the
gateway for platforms that do not redeliver, left to the redelivery for those that do)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from bot.gateway import Gateway
from core.agent import AgentRunner, NormalMode
from core.errors import StoreUnavailable
from core.store import Database, Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import Capabilities
from tests.bot.test_gateway import CHAT, msg
from tests.fakes.pg_proxy import PgProxy

UNAVAILABLE = "My database is briefly unavailable"


@pytest.fixture
async def cut(pg_dsn: str, tmp_path: Path) -> AsyncIterator[tuple[PgProxy, Database]]:
    """A database reached through a proxy that the test can cut."""
    async with PgProxy(pg_dsn) as proxy:
        db = await Database.open(dsn=proxy.dsn, data_dir=tmp_path, retry_budget_s=1.0)
        try:
            yield proxy, db
        finally:
            await proxy.up()
            await db.aclose()


async def test_a_statement_outlasts_a_short_outage(cut: tuple[PgProxy, Database]) -> None:
    proxy, db = cut
    db.pool.budget_s = 20.0
    assert await db.pool.fetchval("SELECT 1") == 1
    await proxy.down()  # open connections reset, new ones refused
    pending = asyncio.create_task(db.pool.fetchval("SELECT 2"))
    await asyncio.sleep(1.0)
    assert not pending.done()  # retrying
    await proxy.up()
    assert await asyncio.wait_for(pending, 20) == 2


async def test_a_long_outage_is_a_clear_store_unavailable_and_other_errors_are_not_retried(
        cut: tuple[PgProxy, Database]) -> None:
    proxy, db = cut
    with pytest.raises(asyncpg.PostgresSyntaxError):  # not a connection problem: at once
        await db.pool.fetchval("SELEC 1")
    await proxy.down()
    with pytest.raises(StoreUnavailable, match="the database is unreachable"):
        await db.pool.execute("SELECT 1")


def _gateway(db: Database, tmp_path: Path, llm: ScriptedLLM) -> Gateway:
    store = Store(db, files_dir=tmp_path)
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
    gw = Gateway(store=store, runner=runner)
    gw.stages.record.record_budget_s = 0.5
    return gw


async def test_a_message_during_an_outage_is_kept_and_answered_when_the_database_is_back(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    """A platform that does not redeliver (Discord, the console): the gateway keeps it."""
    proxy, db = cut
    db.pool.budget_s = 30.0
    llm = ScriptedLLM([text("Answered after the outage.")])
    gw = _gateway(db, tmp_path, llm)
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    await proxy.down()
    await adapter.deliver(msg("NVDA during the outage?", "21"))  # returns: nothing raised
    assert [t for t in adapter.visible_text(CHAT) if UNAVAILABLE in t] != []
    await asyncio.sleep(1.5)
    await proxy.up()
    for _ in range(200):
        if "Answered after the outage." in adapter.visible_text(CHAT):
            break
        await asyncio.sleep(0.1)
    await gw.idle()
    shown = adapter.visible_text(CHAT)
    assert shown[-1] == "Answered after the outage."
    assert len([t for t in shown if UNAVAILABLE in t]) == 1  # told once
    assert await db.pool.fetchval(
        "SELECT status FROM inbound_events WHERE message_id = '21'") == "answered"
    await gw.aclose()


async def test_a_redelivering_platform_gets_the_error_and_its_redelivery_is_answered(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    """Telegram, WeChat: not acknowledged (the adapter sees StoreUnavailable), told once,
    answered once when the platform delivers it again after the outage."""
    proxy, db = cut
    db.pool.budget_s = 30.0
    llm = ScriptedLLM([text("Answered on redelivery.")])
    gw = _gateway(db, tmp_path, llm)
    adapter = RecordingAdapter(capabilities=Capabilities(
        max_message_length=4096, can_edit=True, min_edit_interval_s=0.0, markup="plain",
        redelivers=True))
    await adapter.start(gw.handler_for(adapter))
    await proxy.down()
    for _ in range(2):  # delivered, and delivered again while still down
        with pytest.raises(StoreUnavailable):
            await adapter.deliver(msg("AAPL during the outage?", "22"))
    await proxy.up()
    await adapter.deliver(msg("AAPL during the outage?", "22"))
    await adapter.deliver(msg("AAPL during the outage?", "22"))  # a late duplicate
    await gw.idle()
    shown = adapter.visible_text(CHAT)
    assert len([t for t in shown if UNAVAILABLE in t]) == 1
    assert shown[-1] == "Answered on redelivery." and len(llm.requests) == 1
    await gw.aclose()


class GatedLLM(ScriptedLLM):
    """Answers once `gate` is set; `asked` is set when the first question reaches it."""

    def __init__(self, answer: str) -> None:
        super().__init__(default=text(answer))
        self.asked, self.gate = asyncio.Event(), asyncio.Event()

    async def complete(self, *args: Any, **kwargs: Any) -> Any:
        self.asked.set()
        await self.gate.wait()
        return await super().complete(*args, **kwargs)


async def test_an_outage_in_the_middle_of_an_answer_is_answered_in_its_placeholder_after(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    """The database goes away while the model answers (the message stored, its placeholder
    shown, the platform's update acknowledged): nothing else would ever take the message
    (this process's heartbeat keeps it its own), so the gateway takes it again itself once
    the database is back, and answers it once, in the placeholder the chat shows."""
    proxy, db = cut
    answer = "Answered once the database was back."
    llm = GatedLLM(answer)
    gw = _gateway(db, tmp_path, llm)
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    await adapter.deliver(msg("TSLA, while the database goes?", "23"))
    await asyncio.wait_for(llm.asked.wait(), 20)
    await proxy.down()
    llm.gate.set()
    await asyncio.sleep(2.0)  # the run's next statements give up (the pool's budget is 1 s)
    await proxy.up()

    async def status() -> str | None:
        return await db.pool.fetchval(
            "SELECT status FROM inbound_events WHERE message_id = '23'")

    for _ in range(300):
        if await status() == "answered":
            break
        await asyncio.sleep(0.1)
    await gw.idle()
    assert await status() == "answered"
    assert adapter.visible_text(CHAT) == [answer]  # one message: the placeholder, answered
    assert await db.pool.fetchval(
        "SELECT count(*) FROM messages WHERE role = 'assistant' AND content = $1", answer) == 1
    await gw.aclose()
