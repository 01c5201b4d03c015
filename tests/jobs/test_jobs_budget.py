"""Scheduled reports and podcasts pass the usage gate (real Postgres, the real report builder
and runner, the scripted LLM): a subscriber over budget gets no model run, only a push through
the outbox saying the push was skipped and when the budget resets, recorded once per fire;
what a report's model call spends is counted against the subscriber."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from uuid import UUID

import pytest

from bot.outbox import AdapterRegistry, PostgresOutbox
from core.store import Budget, Database, Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.types import ChatRef, Usage
from core.usage_gate import UsageGate
from jobs.runner import JobRunner

# a Monday, 30 s after the 08:00 UTC fire of a daily subscription
FIRE = datetime(2030, 1, 7, 8, 0, tzinfo=UTC)
AT = FIRE + timedelta(seconds=30)
NARRATIVE = "NVDA moved with the market this week."


async def no_sleep(_: float) -> None:
    return None


class Env:
    def __init__(self, db: Database, tmp_path: Path, budget: Budget) -> None:
        self.db = db
        self.store = Store(db, files_dir=tmp_path)
        self.adapter = RecordingAdapter()
        registry = AdapterRegistry()
        registry.add(self.adapter)
        self.outbox = PostgresOutbox(self.store.deliveries, registry, sleep=no_sleep)
        self.llm = ScriptedLLM(default=text(NARRATIVE, tokens=(300, 40)))
        self.gate = UsageGate(self.store.budgets, default=budget)
        self.runner = JobRunner(subscriptions=self.store.subscriptions, outbox=self.outbox,
                                llm=self.llm, gate=self.gate, usage=self.store.usage)

    async def user(self, uid: str, spent: int = 0) -> UUID:
        user = await self.store.accounts.user_for("test", uid, uid)
        if spent:
            await self.store.usage.record(Usage(prompt_tokens=spent), user_id=user,
                                          conversation_id=None)
        return user

    async def add(self, owner: UUID, chat: str, *, kind: str = "report", lang: str = "en",
                  symbols: tuple[str, ...] = ("NVDA",)) -> ChatRef:
        ref = ChatRef(platform="test", chat_id=chat)
        await self.store.subscriptions.add(
            owner_id=owner, chat=ref, symbols=list(symbols), at_time="08:00",
            recurrence="daily", tz="UTC", calendar=None, lang=lang, kind=kind)
        return ref

    async def fires(self) -> list[tuple[str, str]]:
        rows = await self.db.pool.fetch("SELECT status, detail FROM job_fires ORDER BY 1, 2")
        return [(r["status"], r["detail"]) for r in rows]


@pytest.fixture
def env(pg_db: Database, tmp_path: Path) -> Env:
    return Env(pg_db, tmp_path, Budget(daily_tokens=1000))


async def test_over_budget_report_and_podcast_get_no_model_run_only_the_reset_time(
        env: Env) -> None:
    spender = await env.user("spender", spent=1000)
    report_chat = await env.add(spender, "r")
    podcast_chat = await env.add(spender, "p", kind="podcast", lang="zh",
                                 symbols=("NVDA", "AAPL"))
    results = await env.runner.due(AT)
    assert sorted(r.status for r in results) == ["over_budget", "over_budget"]
    assert env.llm.requests == []  # no model run at all
    # recorded once per fire, as done with why; a second `due` fires nothing again
    assert await env.fires() == [("done", "over budget (daily_tokens): skipped")] * 2
    assert [r.status for r in await env.runner.due(AT)] == ["skipped", "skipped"]
    await env.outbox.drain()
    (report,) = env.adapter.visible_text(report_chat)
    # the budget is the person's, counted in real time: it resets at the next UTC midnight
    assert re.fullmatch(r"Your scheduled report \(NVDA\) was skipped: you have used your daily "
                        r"token budget\. It resets at \d{4}-\d\d-\d\d 00:00 UTC; the next ones "
                        r"come as usual after that\.", report)
    (podcast,) = env.adapter.visible_text(podcast_chat)
    assert re.fullmatch(r"你的定时播客（NVDA, AAPL）本次已跳过：你的每日 token 预算已用完，"
                        r"将于 \d{4}-\d\d-\d\d 00:00 UTC 重置，之后照常推送。", podcast)
    assert int(await env.db.pool.fetchval("SELECT count(*) FROM deliveries")) == 2


async def test_a_report_run_is_counted_against_the_subscriber_until_refused(env: Env) -> None:
    """Under budget the report runs (one summarizer call, recorded for its owner); the spend
    crosses the budget by at most that call, and a second fire the same day is refused."""
    owner = await env.user("owner", spent=700)
    chat = await env.add(owner, "c")
    assert [r.status for r in await env.runner.due(AT)] == ["done"]
    assert len(env.llm.requests) == 1 and env.llm.requests[0]["role"] == "summarizer"
    spend = await env.gate.spend(owner)
    assert spend.day_tokens == 700 + 340
    # a fire later the same day (run now, outside the schedule) is refused: no second call
    sub = (await env.store.subscriptions.active())[0]
    later = await env.runner.fire_now(sub, at=FIRE + timedelta(hours=2))
    assert later.status == "over_budget" and len(env.llm.requests) == 1
    await env.outbox.drain()
    first, second = env.adapter.visible_text(chat)
    assert NARRATIVE in first
    assert second.startswith("Your scheduled report (NVDA) was skipped")


async def test_one_shared_report_the_over_budget_subscriber_still_skipped(env: Env) -> None:
    rich, poor = await env.user("rich"), await env.user("poor", spent=5000)
    rich_chat, poor_chat = await env.add(rich, "rich"), await env.add(poor, "poor")
    assert sorted(r.status for r in await env.runner.due(AT)) == ["done", "over_budget"]
    assert len(env.llm.requests) == 1
    await env.outbox.drain()
    assert NARRATIVE in env.adapter.visible_text(rich_chat)[0]
    assert "was skipped" in env.adapter.visible_text(poor_chat)[0]
    assert (await env.gate.spend(rich)).day_tokens == 340


async def test_a_podcast_is_capped_at_the_tokens_left(env: Env) -> None:
    """50 tokens left: the podcast runs within them (no new debate, no model call it cannot
    afford; uncapped, the same fire runs debates on the scripted model)."""
    low = await env.user("low", spent=950)
    low_chat = await env.add(low, "low", kind="podcast")
    assert [r.status for r in await env.runner.due(AT)] == ["done"]
    assert env.llm.requests == []
    await env.outbox.drain()
    assert "Daily podcast" in env.adapter.visible_text(low_chat)[0]
    assert (await env.gate.spend(low)).day_tokens == 950


async def test_streamed_calls_are_counted_for_the_subscriber_too(env: Env) -> None:
    from core.llm.base import Final, TextChunk
    from core.types import ChatMessage
    from jobs.usage import MeteredLLM

    owner = await env.user("streamer")
    metered = MeteredLLM(env.llm, env.store.usage, owner)
    items = [i async for i in metered.stream([ChatMessage(role="user", content="hi")],
                                             role="script_writer")]
    assert isinstance(items[-1], Final) and any(isinstance(i, TextChunk) for i in items)
    await metered.complete([ChatMessage(role="user", content="hi")], role="judge")
    rows = await env.db.pool.fetch("SELECT role, prompt_tokens + completion_tokens t"
                                   " FROM usage WHERE user_id=$1 ORDER BY id", owner)
    assert [(r["role"], r["t"]) for r in rows] == [("script_writer", 340), ("judge", 340)]


async def test_without_a_budget_reports_run_whatever_was_spent(pg_db: Database,
                                                               tmp_path: Path) -> None:
    env = Env(pg_db, tmp_path, Budget())
    owner = await env.user("free", spent=10**9)
    chat = await env.add(owner, "c")
    assert [r.status for r in await env.runner.due(AT)] == ["done"]
    await env.outbox.drain()
    assert NARRATIVE in env.adapter.visible_text(chat)[0]
