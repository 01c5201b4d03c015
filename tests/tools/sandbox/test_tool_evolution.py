"""Tool evolution with the scripted LLM on real Postgres and the real sandbox: a task becomes a
verified tool the agent then calls; a failing first version is refined; three failures mark the
tool failed with its traces; the same code twice is stored once."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pandas as pd
import pytest

from core.agent import AgentRunner, NormalMode
from core.errors import ConfigError
from core.events import Done, ToolFinished
from core.store import Database, Store
from core.store.tool_artifacts import ToolArtifactsRepo, content_hash
from core.testing import ScriptedLLM, calls, text
from core.tools import ToolRegistry
from core.types import ChatRef
from tools import snapshot
from tools.evolve import Synthesizer, offer_verified, read_shape, run_generated
from tools.sandbox import ScriptFailed

GOOD = '''
import pandas as pd


def atr_percent(bars: pd.DataFrame, length: int = 14) -> float:
    """Average true range of the last `length` bars as a percent of the last close.

    Args:
        length: bars in the average.
    """
    high, low, close = bars["high"], bars["low"], bars["close"]
    prev = close.shift(1)
    tr = pd.concat([high - low, (high - prev).abs(), (low - prev).abs()], axis=1).max(axis=1)
    return round(float(tr.tail(length).mean() / close.iloc[-1] * 100), 4)


def test_positive_and_plausible():
    value = atr_percent(bars, 14)
    assert 0 < value < 50


def test_window_changes_the_answer():
    assert atr_percent(bars, 3) != atr_percent(bars, 30)
'''

WRONG_COLUMN = GOOD.replace('bars["close"]', 'bars["Close"]')
WRONG_RANGE = GOOD.replace("assert 0 < value < 50", "assert value > 50")
USES_OS = "import os\n" + GOOD


def reply(code: str) -> object:
    return text(f"Here is the tool:\n```python\n{code}```\nIt computes ATR.")


def expected_atr_percent(df: pd.DataFrame, length: int) -> float:
    high, low, close = df["high"], df["low"], df["close"]
    prev = close.shift(1)
    tr = pd.concat([high - low, (high - prev).abs(), (low - prev).abs()], axis=1).max(axis=1)
    return round(float(tr.tail(length).mean() / close.iloc[-1] * 100), 4)


@pytest.fixture
def repo(pg_pool: asyncpg.Pool) -> ToolArtifactsRepo:
    return ToolArtifactsRepo(pg_pool)


async def test_a_task_becomes_a_verified_tool_the_agent_calls(
        repo: ToolArtifactsRepo, pg_db: Database, tmp_path: Path) -> None:
    llm = ScriptedLLM([reply(GOOD)])
    outcome = await Synthesizer(llm=llm, repo=repo).synthesise("ATR as a percent of price")
    assert outcome.status == "verified", outcome.message
    tool = outcome.artifact
    assert tool is not None and tool.name == "atr_percent" and tool.version == "0.1.0"
    assert tool.status == "verified" and tool.permissions == ["calc_only"]
    assert tool.content_hash == content_hash(GOOD)
    assert tool.parameters["properties"]["length"]["default"] == 14
    [trace] = await repo.traces(tool.id)
    assert trace.kind == "test" and trace.ok and len(trace.output) == 2

    registry = ToolRegistry()
    assert await offer_verified(registry, repo) == ["atr_percent"]
    schema = registry.get("atr_percent").schema()["function"]
    assert set(schema["parameters"]["properties"]) == {"symbol", "interval", "length"}
    assert "generated tool v0.1.0" in schema["description"]

    agent_llm = ScriptedLLM([calls(("atr_percent", {"symbol": "NVDA", "length": 14})),
                             text("NVDA's ATR is about that percent of its price.")])
    store = Store(pg_db, files_dir=tmp_path)
    runner = AgentRunner(store=store, modes={"normal": NormalMode(
        llm=agent_llm, registry=registry, plan=False)})
    conv = await store.conversations.active(ChatRef(platform="test", chat_id="evolve"), None)
    events = [e async for e in runner.run(conversation=conv, user_id=None,
                                          text="What is NVDA's ATR in percent?")]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [f.ok for f in finished] == [True]
    assert isinstance(events[-1], Done)
    tool_msg = next(m for m in agent_llm.requests[1]["messages"] if m.role == "tool")
    expected = expected_atr_percent(snapshot.load("NVDA").iloc[-2000:], 14)
    assert f'"result":{expected}' in tool_msg.content.replace(" ", "")
    traces = await repo.traces(tool.id)
    assert [t.kind for t in traces] == ["test", "call"] and traces[1].ok


async def test_a_failing_first_version_is_refined_and_passes_the_second_time(
        repo: ToolArtifactsRepo) -> None:
    llm = ScriptedLLM([reply(WRONG_COLUMN), reply(GOOD)])
    outcome = await Synthesizer(llm=llm, repo=repo).synthesise("ATR percent")
    assert outcome.status == "verified"
    assert [(a.version, a.ok, a.category) for a in outcome.attempts] == [
        ("0.1.0", False, "key"), ("0.1.1", True, "")]
    assert "KeyError" in outcome.attempts[0].error and "Close" in outcome.attempts[0].error
    # the refiner told the model what broke and showed it its code
    refine = llm.requests[1]["messages"][-1].content
    assert "The tool failed (key)" in refine and "KeyError" in refine
    first, second = outcome.attempts[0].artifact_id, outcome.attempts[1].artifact_id
    assert first is not None and second is not None
    assert (await repo.get(first)).status == "failed"  # type: ignore[union-attr]
    fixed = await repo.get(second)
    assert fixed is not None and fixed.status == "verified" and fixed.parent_id == first
    [report] = await repo.error_reports(first)
    assert report["category"] == "key"
    [patch] = await repo.patches(second)
    assert patch == {"from_tool_id": first, "to_tool_id": second,
                     "report_id": report["id"], "attempt": 2}
    assert [a.name for a in await repo.verified()] == ["atr_percent"]


async def test_three_failures_mark_the_tool_failed_with_its_traces(
        repo: ToolArtifactsRepo) -> None:
    llm = ScriptedLLM([reply(WRONG_COLUMN), reply(WRONG_RANGE), reply(USES_OS)])
    outcome = await Synthesizer(llm=llm, repo=repo).synthesise("ATR percent")
    assert outcome.status == "failed" and outcome.artifact is not None
    assert outcome.artifact.status == "failed"
    assert [(a.version, a.category) for a in outcome.attempts] == [
        ("0.1.0", "key"), ("0.1.1", "test_failed"), ("0.1.2", "security")]
    assert "import of 'os'" in outcome.message
    for attempt in outcome.attempts:
        assert attempt.artifact_id is not None
        traces = await repo.traces(attempt.artifact_id)
        assert traces and not any(t.ok for t in traces)
        assert (await repo.error_reports(attempt.artifact_id))[0]["category"] == attempt.category
    # the security failure never reached the sandbox: its trace is the AST check
    last = await repo.traces(outcome.attempts[-1].artifact_id)  # type: ignore[arg-type]
    assert [t.kind for t in last] == ["check"]
    assert await repo.verified() == []
    assert len(llm.requests) == 3  # no fourth attempt


async def test_the_same_code_twice_is_stored_once(repo: ToolArtifactsRepo) -> None:
    synth = Synthesizer(llm=ScriptedLLM([reply(GOOD), reply(GOOD + "\n\n")]), repo=repo)
    first = await synth.synthesise("ATR percent")
    second = await synth.synthesise("ATR as percent, again")
    assert first.status == "verified" and second.status == "deduplicated"
    assert first.artifact is not None and second.artifact is not None
    assert second.artifact.id == first.artifact.id
    assert len(await repo.listing()) == 1
    assert [t.kind for t in await repo.traces(first.artifact.id)] == ["test"]  # tested once


async def test_offline_synthesis_says_it_needs_a_model(repo: ToolArtifactsRepo) -> None:
    with pytest.raises(ConfigError, match="needs a language model"):
        await Synthesizer(llm=None, repo=repo).synthesise("anything")


async def test_generated_tools_write_no_files_even_in_their_work_dir(
        repo: ToolArtifactsRepo) -> None:
    code = GOOD.replace("    return round(", "    open('x.txt', 'w').write('x')\n    return round(")
    artifact, _ = await repo.register(name="atr_percent", version="0.1.0", code=code,
                                      status="verified")
    assert read_shape(code).takes_bars
    with pytest.raises(ScriptFailed, match=r"writing 'x\.txt' is not allowed"):
        await run_generated(artifact, {"symbol": "NVDA", "interval": "1d", "length": 14},
                            repo=repo)
    [trace] = await repo.traces(artifact.id)
    assert trace.kind == "call" and not trace.ok


HIDES_A_REFUSAL = GOOD.replace(
    "    high, low, close = bars[\"high\"], bars[\"low\"], bars[\"close\"]",
    "    try:\n        pd.read_csv(chr(47) + 'etc' + chr(47) + 'hostname')\n"
    "    except Exception:\n        pass\n"
    "    high, low, close = bars[\"high\"], bars[\"low\"], bars[\"close\"]")


async def test_a_tool_that_reaches_outside_its_inputs_is_not_verified_even_if_it_hides_it(
        repo: ToolArtifactsRepo) -> None:
    """Its own tests pass (it catches the refusal), but the guard saw it reach for a file: the
    tool fails verification and is never offered."""
    assert "'hostname'" in HIDES_A_REFUSAL
    llm = ScriptedLLM([reply(HIDES_A_REFUSAL)])
    outcome = await Synthesizer(llm=llm, repo=repo, max_attempts=1).synthesise("ATR percent")
    assert outcome.status == "failed"
    assert outcome.attempts[-1].category == "security"
    assert "reached outside its inputs" in outcome.attempts[-1].error
    assert await offer_verified(ToolRegistry(), repo) == []


async def test_a_tool_is_not_verified_without_the_os_jail(repo: ToolArtifactsRepo) -> None:
    """Passing tests outside the jail (a host that cannot build it, weaker isolation accepted)
    verify nothing."""
    from tools.sandbox import Sandbox, SandboxPolicy

    weak = Sandbox(policy=SandboxPolicy(os_jail=False))
    llm = ScriptedLLM([reply(GOOD)])
    outcome = await Synthesizer(llm=llm, repo=repo, sandbox=weak,
                                max_attempts=1).synthesise("ATR percent")
    assert outcome.status == "failed"
    assert "did not run inside the full OS sandbox" in outcome.attempts[-1].error


async def test_a_revoked_tool_leaves_the_agent_and_is_not_run_again(
        repo: ToolArtifactsRepo) -> None:
    outcome = await Synthesizer(llm=ScriptedLLM([reply(GOOD)]), repo=repo).synthesise("ATR")
    assert outcome.status == "verified" and outcome.artifact is not None
    registry = ToolRegistry()
    assert await offer_verified(registry, repo) == ["atr_percent"]
    assert await repo.revoke("atr_percent") == 1
    # the registry of a running process still holds it: the call is refused, not run
    result = await registry.call("atr_percent", {"symbol": "NVDA", "length": 14})
    assert not result.ok and "revoked" in result.content
    assert [t.kind for t in await repo.traces(outcome.artifact.id)] == ["test"]
    assert await offer_verified(ToolRegistry(), repo) == []
    assert await repo.revoke("atr_percent") == 0


ESCAPING_TOOLS = {
    "reads_a_host_file": "pd.read_csv(chr(47) + 'etc' + chr(47) + 'passwd')",
    "lists_the_root": "pd.io.common.os.listdir(chr(47))",
    "runs_a_command": "pd.io.common.os.system('id')",
    "unpickles": "np.load('p.npy', allow_pickle=True)",
    "walks_frames": "dataclasses.inspect.currentframe()",
}


@pytest.mark.parametrize("reach", list(ESCAPING_TOOLS.values()), ids=list(ESCAPING_TOOLS))
async def test_a_model_that_writes_an_escaping_tool_gets_no_verified_tool(
        repo: ToolArtifactsRepo, reach: str) -> None:
    """What a hostile or confused model writes, with every layer on: refused by the check or
    by the sandbox (caught or not), never verified, never offered."""
    code = ("import dataclasses\nimport numpy as np\n" + GOOD).replace(
        "    high, low, close = bars[\"high\"], bars[\"low\"], bars[\"close\"]",
        f"    try:\n        {reach}\n    except Exception:\n        pass\n"
        "    high, low, close = bars[\"high\"], bars[\"low\"], bars[\"close\"]")
    assert reach in code
    outcome = await Synthesizer(llm=ScriptedLLM([reply(code)]), repo=repo,
                                max_attempts=1).synthesise("ATR percent")
    assert outcome.status == "failed" and outcome.attempts[-1].category == "security"
    assert await offer_verified(ToolRegistry(), repo) == []
