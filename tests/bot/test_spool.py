"""Nothing acknowledged that is not durable (issue 28): a message of a platform that does not
redeliver (Slack, WeChat, Discord), which the database cannot take in time, is on the local
spool (fsync) before the gateway lets go of it, and a later process replays it into the
database and answers it once. Real PostgreSQL behind a proxy that can be cut
(`tests.fakes.pg_proxy`)."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from bot.gateway import Gateway
from bot.spool import Spool, read_records
from core.agent import AgentRunner, NormalMode
from core.store import Database, Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from tests.bot.test_gateway import CHAT, msg
from tests.fakes.pg_proxy import PgProxy

UNAVAILABLE = "My database is briefly unavailable"


@pytest.fixture
async def cut(pg_dsn: str, tmp_path: Path) -> AsyncIterator[tuple[PgProxy, Database]]:
    """A database reached through a proxy that the test can cut."""
    async with PgProxy(pg_dsn) as proxy:
        db = await Database.open(dsn=proxy.dsn, data_dir=tmp_path, retry_budget_s=1.0)
        db.pool.budget_s = 30.0
        try:
            yield proxy, db
        finally:
            await proxy.up()
            await db.aclose()


def spooling_gateway(db: Database, tmp_path: Path, llm: ScriptedLLM) -> Gateway:
    """A gateway as `serve` builds it: its spool under the data directory."""
    store = Store(db, files_dir=tmp_path)
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
    instance = secrets.token_hex(8)  # each gateway is another process
    gw = Gateway(store=store, runner=runner, instance=instance,
                 spool=Spool(tmp_path / "spool", instance=instance))
    gw.stages.record.record_budget_s = 0.5
    return gw


def crash(gw: Gateway) -> None:
    """The process dies: nothing in its memory goes on, the kernel lets go of its file lock."""
    gw.stages.record.closing = True
    for task in list(gw.stages.record._retrying):
        task.cancel()
    assert gw.stages.record.spool is not None
    gw.stages.record.spool.close()


async def until(check: Callable[[], bool], within_s: float = 30.0) -> None:
    for _ in range(int(within_s * 20)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("not within the time")


def spool_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "spool").glob("*.jsonl"))


async def status(db: Database, mid: str) -> str | None:
    got: str | None = await db.pool.fetchval(
        "SELECT status FROM inbound_events WHERE message_id = $1", mid)
    return got


def record_line(record_id: str, message_id: str, body: str, platform: str = "test") -> str:
    return json.dumps({"id": record_id, "platform": platform,
                       "spooled_at": "2026-11-26T00:00:00+00:00",
                       "message": msg(body, message_id).model_dump(mode="json")
                       | {"platform": platform}}) + "\n"


async def test_a_message_spooled_in_an_outage_survives_a_crash_and_is_answered_once(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    proxy, db = cut
    first = spooling_gateway(db, tmp_path, ScriptedLLM([text("never asked")]))
    adapter = RecordingAdapter()
    await adapter.start(first.handler_for(adapter))
    await proxy.down()
    await adapter.deliver(msg("NVDA during the outage?", "31"))  # the platform may ack now
    # on disk before handle returned
    records = [r for f in spool_files(tmp_path) for r in read_records(f)]
    assert [r.message.message_id for r in records] == ["31"]
    assert records[0].platform == "test" and records[0].message.text == "NVDA during the outage?"
    await until(lambda: any(UNAVAILABLE in t for t in adapter.visible_text(CHAT)))  # told
    crash(first)  # the outage and a crash together

    await proxy.up()
    llm = ScriptedLLM([text("Answered after the crash.")])
    second = spooling_gateway(db, tmp_path, llm)
    assert await second.stages.record.replay_spool(lambda p: adapter if p == "test" else None) == 1
    await second.idle()
    shown = adapter.visible_text(CHAT)
    assert shown[-1] == "Answered after the crash." and len(llm.requests) == 1
    assert await status(db, "31") == "answered"
    assert spool_files(tmp_path) == []  # every record stored: the file is gone
    assert await second.stages.record.replay_spool(lambda p: adapter) == 0  # nothing twice
    await second.aclose()


async def test_a_live_process_spool_is_not_replayed_by_another(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    proxy, db = cut
    live = spooling_gateway(db, tmp_path, ScriptedLLM([text("Answered by its own process.")]))
    live.keep_trying_s = 0.0  # its own retry is not what this test is about
    adapter = RecordingAdapter()
    await adapter.start(live.handler_for(adapter))
    await proxy.down()
    await adapter.deliver(msg("AAPL?", "32"))
    await proxy.up()
    other = spooling_gateway(db, tmp_path, ScriptedLLM([text("not mine")]))
    assert await other.stages.record.replay_spool(lambda p: adapter) == 0  # flock: its owner lives
    assert len(spool_files(tmp_path)) == 1
    # its owner's sweep: its file renamed, let go of, replayed, deleted
    assert await live.stages.record.replay_spool(lambda p: adapter) == 1
    await live.idle()
    assert adapter.visible_text(CHAT)[-1] == "Answered by its own process."
    assert spool_files(tmp_path) == []
    await other.aclose()
    await live.aclose()


async def test_idle_waits_for_a_spooled_message_whose_first_record_still_goes_through(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    """A record slower than `spool_after_s` is spooled and goes on in the background; when the
    database comes back within its budget that attempt stores and answers it. `idle()` (a
    piped one-shot run leaves after it) waits for that answer, not only for what is queued."""
    proxy, db = cut
    gw = spooling_gateway(db, tmp_path, ScriptedLLM([text("Answered once it was stored.")]))
    gw.stages.record.record_budget_s = 60.0  # the first attempt outlives the outage
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    await proxy.down()
    await adapter.deliver(msg("TSLA?", "34"))  # returns once spooled; the record goes on
    assert len(spool_files(tmp_path)) == 1
    await proxy.up()
    await gw.idle()
    shown = adapter.visible_text(CHAT)
    assert shown and shown[-1] == "Answered once it was stored."
    assert not any(UNAVAILABLE in t for t in shown)  # stored within its budget: nothing to tell
    assert await status(db, "34") == "answered"
    await gw.aclose()


async def test_a_torn_last_line_is_skipped_and_the_rest_answered(
        pg_db: Database, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "spool").mkdir()
    whole = record_line("dead-1", "41", "MSFT outlook?")
    (tmp_path / "spool" / "inbound-dead.jsonl").write_text(
        whole + record_line("dead-2", "42", "cut short")[:37])  # the crash hit mid-write
    llm = ScriptedLLM([text("MSFT answered.")])
    gw = spooling_gateway(pg_db, tmp_path, llm)
    adapter = RecordingAdapter()
    with caplog.at_level(logging.WARNING, logger="bot.spool"):
        assert await gw.stages.record.replay_spool(lambda p: adapter) == 1
    await gw.idle()
    assert adapter.visible_text(CHAT) == ["MSFT answered."] and len(llm.requests) == 1
    assert "line 2 skipped" in caplog.text
    assert await status(pg_db, "42") is None
    assert spool_files(tmp_path) == []
    await gw.aclose()


async def test_replay_of_a_message_stored_already_does_not_answer_it_again(
        pg_db: Database, tmp_path: Path) -> None:
    llm = ScriptedLLM([text("GOOG answered once."), text("a second answer")])
    gw = spooling_gateway(pg_db, tmp_path, llm)
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    await adapter.deliver(msg("GOOG?", "51"))
    await gw.idle()
    # a dead process had spooled it too (its record was slow, then stored)
    (tmp_path / "spool").mkdir(exist_ok=True)
    (tmp_path / "spool" / "inbound-dead.jsonl").write_text(record_line("dead-1", "51", "GOOG?"))
    assert await gw.stages.record.replay_spool(lambda p: adapter) == 1  # settled
    await gw.idle()
    assert adapter.visible_text(CHAT) == ["GOOG answered once."] and len(llm.requests) == 1
    assert spool_files(tmp_path) == []
    await gw.aclose()


async def test_a_record_for_a_platform_not_served_here_is_kept_and_the_rest_go_on(
        pg_db: Database, tmp_path: Path) -> None:
    (tmp_path / "spool").mkdir()
    (tmp_path / "spool" / "inbound-dead.jsonl").write_text(
        record_line("dead-1", "61", "for slack", platform="slack")
        + record_line("dead-2", "62", "TSLA?"))
    llm = ScriptedLLM([text("TSLA answered.")])
    gw = spooling_gateway(pg_db, tmp_path, llm)
    adapter = RecordingAdapter()
    assert await gw.stages.record.replay_spool(lambda p: adapter if p == "test" else None) == 1
    await gw.idle()
    assert adapter.visible_text(CHAT) == ["TSLA answered."]
    assert [r.message.message_id for f in spool_files(tmp_path) for r in read_records(f)] == [
        "61", "62"]  # kept whole for a process that serves slack (62 replays as a duplicate)
    await gw.aclose()


async def test_a_message_stored_at_once_costs_no_fsync(pg_db: Database, tmp_path: Path) -> None:
    gw = spooling_gateway(pg_db, tmp_path, ScriptedLLM([text("fast")]))
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    await adapter.deliver(msg("fast path?", "71"))
    await gw.idle()
    assert gw.stages.record.spool is not None and gw.stages.record.spool.appended == 0
    assert spool_files(tmp_path) == []
    await gw.aclose()


async def test_a_slow_record_is_spooled_before_it_is_stored_then_answered_once(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    proxy, db = cut
    llm = ScriptedLLM([text("Answered after a slow record."), text("twice")])
    gw = spooling_gateway(db, tmp_path, llm)
    gw.stages.record.record_budget_s, gw.stages.record.spool_after_s = 30.0, 0.3
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    await proxy.down()
    await asyncio.wait_for(adapter.deliver(msg("slow store?", "81")), 5)  # returns durable:
    record = gw.stages.record
    assert record.spool is not None and record.spool.appended == 1  # on disk, while the record
    assert record._retrying  # ... goes on in a task the stage owns
    await proxy.up()
    await until(lambda: adapter.visible_text(CHAT) == ["Answered after a slow record."])
    await gw.idle()
    # the sweep settles the record
    assert await gw.stages.record.replay_spool(lambda p: adapter) == 1
    await gw.idle()
    assert adapter.visible_text(CHAT) == ["Answered after a slow record."]
    assert len(llm.requests) == 1 and spool_files(tmp_path) == []
    await gw.aclose()


async def test_while_the_store_is_away_each_message_is_spooled_and_answered_once_when_back(
        cut: tuple[PgProxy, Database], tmp_path: Path) -> None:
    """The store away at the last try: the next message is on disk before its record is
    tried; when the database is back the in-memory retries and the spool's replay race, and
    each message is still answered once."""
    proxy, db = cut
    llm = ScriptedLLM([text("Answer one."), text("Answer two."), text("a third answer")])
    gw = spooling_gateway(db, tmp_path, llm)
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    await proxy.down()
    await adapter.deliver(msg("first?", "91"))
    await until(lambda: any(UNAVAILABLE in t for t in adapter.visible_text(CHAT)))
    assert gw.stages.record._store_away
    await adapter.deliver(msg("second?", "92"))
    assert gw.stages.record.spool is not None and gw.stages.record.spool.appended == 2
    await proxy.up()
    await gw.stages.record.replay_spool(lambda p: adapter)  # racing the in-memory retries
    await until(lambda: {"Answer one.", "Answer two."} <= set(adapter.visible_text(CHAT)))
    await asyncio.sleep(1.0)  # the retries' next attempts: duplicates by now
    await gw.stages.record.replay_spool(lambda p: adapter)
    await gw.idle()
    shown = adapter.visible_text(CHAT)
    assert sorted(t for t in shown if t.startswith("Answer")) == ["Answer one.", "Answer two."]
    assert len(llm.requests) == 2 and spool_files(tmp_path) == []
    assert await status(db, "91") == "answered" and await status(db, "92") == "answered"
    await gw.aclose()
