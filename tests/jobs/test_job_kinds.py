"""The job kinds table (`jobs.kinds`), and the recipe for a new kind as an example: a test-only
kind registered in the table given to the real `JobRunner`, subscribed in real Postgres, fired
by `due`, its build shared by its subscribers, and delivered through the real outbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.outbox import AdapterRegistry, PostgresOutbox
from core.errors import ConfigError
from core.ports import OutItem
from core.store import Database, Store, Subscription
from core.testing import RecordingAdapter
from core.types import ChatRef, Reply
from jobs.kinds import KINDS, Fire, JobKind, kinds_table
from jobs.runner import JobRunner
from tests.jobs.test_runner import AT, FIRE, FakeBuilder, no_sleep, statuses


class Roll:
    """A kind that pushes the roll of the subscription's symbols for the fire's day, and
    counts how often it was built."""

    def __init__(self) -> None:
        self.built: list[tuple[tuple[str, ...], str]] = []

    async def prepare(self, runner: JobRunner, fire: Fire) -> list[OutItem]:
        async def make() -> str:
            self.built.append((fire.symbols, fire.day))
            return f"roll {' '.join(fire.symbols)} for {fire.day} ({fire.lang})"

        text = await runner.shared(("roll", fire.symbols, fire.lang, fire.day), make)
        return [Reply(text=text)]


@pytest.fixture
def store(pg_db: Database, tmp_path: Path) -> Store:
    return Store(pg_db, files_dir=tmp_path)


def _runner(store: Store, adapter: RecordingAdapter, roll: Roll
            ) -> tuple[JobRunner, PostgresOutbox]:
    adapters = AdapterRegistry()
    adapters.add(adapter)
    outbox = PostgresOutbox(store.deliveries, adapters, sleep=no_sleep)
    kinds = kinds_table(JobKind("roll", roll.prepare, skipped="subs.skipped_report"))
    return JobRunner(subscriptions=store.subscriptions, outbox=outbox, build=FakeBuilder(),
                     kinds=kinds), outbox


async def _subscribe(store: Store, chat: str, kind: str, symbols: list[str]) -> Subscription:
    owner = await store.accounts.user_for("test", chat, chat)
    return await store.subscriptions.add(
        owner_id=owner, chat=ChatRef(platform="test", chat_id=chat), symbols=symbols,
        at_time="08:00", recurrence="daily", tz="UTC", calendar=None, lang="en", kind=kind)


async def test_a_new_kind_is_subscribed_fired_shared_and_delivered(store: Store) -> None:
    adapter, roll = RecordingAdapter(), Roll()
    runner, outbox = _runner(store, adapter, roll)
    ann = await _subscribe(store, "ann", "roll", ["NVDA", "AAPL"])
    bob = await _subscribe(store, "bob", "roll", ["NVDA", "AAPL"])
    report = await _subscribe(store, "cy", "report", ["NVDA"])  # the built-in kinds still fire
    results = await runner.due(AT)
    assert sorted((r.subscription_id, r.status) for r in results) == sorted(
        [(ann.id, "done"), (bob.id, "done"), (report.id, "done")])
    assert roll.built == [(("NVDA", "AAPL"), "2030-01-07")]  # one build, two subscribers
    await outbox.drain()
    for sub in (ann, bob):
        assert adapter.visible_text(sub.chat) == ["roll NVDA AAPL for 2030-01-07 (en)"]
    assert adapter.visible_text(report.chat) == ["report NVDA en"]
    assert statuses(await runner.due(AT)) == ["skipped"] * 3  # each fire recorded once


async def test_a_kind_the_table_lacks_fails_its_fire_and_says_why(store: Store) -> None:
    adapter = RecordingAdapter()
    runner, outbox = _runner(store, adapter, Roll())
    sub = await _subscribe(store, "dee", "digest", ["NVDA"])  # no such kind in this process
    result = await runner.fire(sub, FIRE)
    assert result.status == "failed" and "no job kind 'digest'" in result.detail
    await outbox.drain()
    assert adapter.visible_text(sub.chat) == []


def test_a_kind_is_registered_once() -> None:
    assert set(KINDS) == {"report", "podcast"}
    with pytest.raises(ConfigError, match="'report' is registered twice"):
        kinds_table(JobKind("report", Roll().prepare, skipped="subs.skipped_report"))
