"""/ta and /tools through the gateway on real Postgres and the real sandbox: what a script
gives, what each bad input is told, and the generated tools listed."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.commands.ta import parse_ta
from bot.gateway import Gateway
from bot.outbox import AdapterRegistry, PostgresOutbox
from core.agent import AgentRunner
from core.errors import Held, PlatformError
from core.rate_limit import Rate, RateLimiter
from core.store import Database, Store
from core.testing import RecordingAdapter
from core.types import ChatRef, IncomingMessage, Sender
from tools.sandbox import Sandbox, SandboxLimits, SandboxRun, use_sandbox

CHAT = ChatRef(platform="test", chat_id="ta")
_ids = itertools.count(1)

RSI = "import pandas_ta as ta\nresult = {'rsi': round(float(ta.rsi(df['close']).iloc[-1]), 2)}"
CHART = ("from matplotlib.figure import Figure\nfig = Figure()\n"
         "fig.add_subplot().plot(df['close'].to_numpy())\nfig.savefig('close.png')\n"
         "result = len(df)")


class Chat:
    def __init__(self, pg_db: Database, tmp_path: Path) -> None:
        self.store = Store(pg_db, files_dir=tmp_path)
        self.adapter = RecordingAdapter()
        registry = AdapterRegistry()
        registry.add(self.adapter)
        self.outbox = PostgresOutbox(self.store.deliveries, registry)
        self.gateway = Gateway(store=self.store, runner=AgentRunner(store=self.store, modes={}),
                               outbox=self.outbox)

    async def say(self, text: str) -> str:
        before = len(self.adapter.ops)
        await self.gateway.handle(self.adapter, IncomingMessage(
            platform=CHAT.platform, chat=CHAT, sender=Sender(platform_uid="u1"),
            message_id=f"m{next(_ids)}", text=text))
        await self.gateway.idle()
        return "\n".join(self.adapter.texts[o.message_id] for o in self.adapter.ops[before:]
                         if o.kind == "send")


@pytest.fixture
async def chat(pg_db: Database, tmp_path: Path) -> AsyncIterator[Chat]:
    use_sandbox(Sandbox(limits=SandboxLimits(cpu_s=2)))  # the endless loop ends sooner
    yield Chat(pg_db, tmp_path)
    use_sandbox(None)


def test_parse_ta() -> None:
    assert parse_ta(f"NVDA 1w 300\n```python\n{RSI}\n```") == ("NVDA", "1w", 300, RSI + "\n")
    assert parse_ta(f"AAPL ```python\n{RSI}\n```") == ("AAPL", "1d", 500, RSI + "\n")
    assert parse_ta(f"AAPL\n{RSI}") == ("AAPL", "1d", 500, RSI + "\n")
    assert parse_ta("NVDA ```result = 1```") == ("NVDA", "1d", 500, "result = 1\n")
    assert parse_ta("NVDA") is None and parse_ta("") is None
    assert parse_ta("NVDA ```python") is None  # the console sends lines one by one


async def test_ta_runs_the_script_and_answers_with_its_numbers(chat: Chat) -> None:
    said = await chat.say(f"/ta NVDA 1d 200\n```python\n{RSI}\n```")
    assert "NVDA 1d · 200 bars" in said and "2025-02-14" in said and '"rsi":' in said
    assert "snapshot" in said


async def test_ta_sends_its_chart(chat: Chat) -> None:
    said = await chat.say(f"/ta AAPL\n```python\n{CHART}\n```")
    assert "500" in said
    files = [o for o in chat.adapter.ops if o.kind == "file"]
    assert len(files) == 1


@pytest.mark.parametrize("refusal", [PlatformError("connection reset"), Held("window closed")])
async def test_a_refused_chart_goes_to_the_outbox_like_any_file(
        chat: Chat, refusal: PlatformError) -> None:
    """The platform refuses the chart: the outbox keeps it and sends it when it may (a blip:
    at once on the next pass; a closed window: when the chat writes again)."""
    # a closed window refuses the outbox's first attempt too
    chat.adapter.faults["file"] = [refusal] * (2 if isinstance(refusal, Held) else 1)
    said = await chat.say(f"/ta AAPL\n```python\n{CHART}\n```")
    assert "500" in said
    assert [o for o in chat.adapter.ops if o.kind == "file"] == []
    [row] = await chat.store.db.pool.fetch(
        "SELECT key, status FROM deliveries WHERE source = 'say' AND key LIKE '%close.png'")
    await chat.outbox.drain()
    if isinstance(refusal, Held):
        assert (await chat.outbox.receipt(row["key"])).status == "held"  # type: ignore[union-attr]
        assert [o for o in chat.adapter.ops if o.kind == "file"] == []
        await chat.say("/tools")  # the chat writes: what was held for it goes first
        await chat.outbox.drain()
    [sent] = [o for o in chat.adapter.ops if o.kind == "file"]
    assert sent.file is not None and sent.file.filename == "AAPL_close.png"
    assert (await chat.outbox.receipt(row["key"])).status == "delivered"  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "told"), [
    ("/ta", "Usage: /ta SYMBOL"),
    ("/ta NVDA", "Usage: /ta SYMBOL"),
    ("/ta NVDA\n```python\nimport os\nresult = os.getcwd()\n```", "import of 'os' is not allowed"),
    ("/ta NVDA\n```python\nx = 1\n```", "must assign its output to a variable named"),
    ("/ta NVDA\n```python\nwhile True:\n    pass\n```", "refused by the os limits"),
    ("/ta ZZZZQQ\n```python\nresult = 1\n```", "ZZZZQQ"),
])
async def test_bad_ta_input_is_told(chat: Chat, text: str, told: str) -> None:
    assert told in await chat.say(text)


async def test_tools_lists_verified_generated_tools(chat: Chat) -> None:
    assert "No generated tools yet" in await chat.say("/tools")
    repo = chat.store.tool_artifacts
    await repo.register(name="atr_percent", version="0.1.0", code="a = 1\n",
                        description="ATR as a percent of the close", status="verified")
    await repo.register(name="atr_percent", version="0.1.1", code="a = 2\n", status="failed")
    said = await chat.say("/tools")
    assert "atr_percent v0.1.0: ATR as a percent of the close" in said
    assert "1 failed" in said


class CountingSandbox(Sandbox):
    """The real sandbox, counting how many runs are in flight at once."""

    in_flight = 0
    most = 0
    runs = 0

    async def run(self, code: str, **kwargs: Any) -> SandboxRun:
        CountingSandbox.in_flight += 1
        CountingSandbox.most = max(CountingSandbox.most, CountingSandbox.in_flight)
        try:
            return await super().run(code, **kwargs)
        finally:
            CountingSandbox.in_flight -= 1
            CountingSandbox.runs += 1


async def test_one_person_gets_one_sandbox_at_a_time_across_chats(chat: Chat) -> None:
    """One person sends /ta in three group chats at the same instant: the scripts run one
    after the other (counted with the person's questions), the person told they are queued."""
    use_sandbox(CountingSandbox(limits=SandboxLimits(cpu_s=5)))
    chats = [ChatRef(platform="test", chat_id=f"group{i}") for i in range(3)]
    before = len(chat.adapter.ops)
    await asyncio.gather(*(chat.gateway.handle(chat.adapter, IncomingMessage(
        platform="test", chat=c, sender=Sender(platform_uid="u1"), message_id=f"m{next(_ids)}",
        text=f"/ta NVDA\n```python\n{RSI}\n```")) for c in chats))
    await chat.gateway.idle()
    said = [chat.adapter.texts[o.message_id] for o in chat.adapter.ops[before:]
            if o.kind == "send"]
    assert CountingSandbox.runs == 3 and CountingSandbox.most == 1
    assert sum('"rsi":' in s for s in said) == 3
    assert any("queued" in s.lower() for s in said), said


async def test_ta_goes_through_the_persons_rate_limit(chat: Chat) -> None:
    chat.gateway.limits.rates = RateLimiter({"message": Rate(count=2, per_s=60)})
    told = [await chat.say(f"/ta NVDA\n```python\nresult = {i}\n```") for i in range(3)]
    assert "NVDA 1d" in told[0] and "NVDA 1d" in told[1]
    assert "NVDA 1d" not in told[2] and "try again" in told[2].lower(), told[2]
