"""`bullpen serve` on Slack while its database is away, then killed: the message Slack was
told it had (HTTP 200) is on the local spool by then, and the next serve process answers it
once when the database is back (issue 28: nothing acknowledged that is not durable).

A real serve subprocess with the Slack fake and the OpenAI-compatible fake in this process;
the database is reached through a proxy the test cuts (`tests.fakes.pg_proxy`).
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

from tests import warm_bullpen
from tests.bot.test_serve_crash import ANSWER, LAST_WORDS, WORKING, _llm_env
from tests.bot.test_serve_faults import _ENV_DROP, Serve, until
from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.fakes.pg_proxy import PgProxy
from tests.fakes.slack_server import FakeSlack

DM = "D0ALICE"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def _serve(name: str, tmp_path: Path, env: dict[str, str]) -> Serve:
    log = tmp_path / f"{name}.log"
    proc = await warm_bullpen.start(["serve"], cwd=tmp_path, env=env, log=log)
    return Serve(name, proc, log)


def _spooled(data_dir: Path) -> list[str]:
    """The message ids on the spool, read as a new process would."""
    out = []
    for path in sorted((data_dir / "spool").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            out.append(json.loads(line)["message"]["message_id"])
    return out


async def test_a_slack_message_acknowledged_in_an_outage_survives_kill_9_and_is_answered_once(
        pg_dsn: str, tmp_path: Path) -> None:
    llm = FakeOpenAI(default=Turn(text=ANSWER))
    async with llm, FakeSlack() as slack, PgProxy(pg_dsn) as proxy:
        port = _free_port()
        data_dir = tmp_path / "data"
        env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
        env.update(_llm_env(llm))
        env.update({
            "DATABASE_URL": proxy.dsn, "BULLPEN_DATA_DIR": str(data_dir),
            "BULLPEN_LOG_LEVEL": "INFO", "SLACK_BOT_TOKEN": slack.token,
            "SLACK_SIGNING_SECRET": slack.signing_secret, "SLACK_API_BASE_URL": slack.base_url,
            "SLACK_EVENTS_PORT": str(port)})
        url = f"http://127.0.0.1:{port}/slack/events"
        procs: list[Serve] = []

        def logs() -> str:
            return "\n".join(p.tail() for p in procs)

        try:
            first = await _serve("first", tmp_path, env)
            procs.append(first)

            async def answered(n: int) -> bool:
                done = [t for t in slack.texts(DM) if LAST_WORDS in t and WORKING not in t]
                return len(done) >= n

            async def up() -> bool:  # the events endpoint listens
                try:
                    status, _ = await slack.post(url, slack.envelope(
                        slack.message(DM, "Are you there?", ts="1700000000.000100")))
                except OSError:
                    return False
                return status == 200

            await until(up, within_s=180, what="serve's Slack endpoint", alive=[first])
            try:
                await until(lambda: answered(1), within_s=120, what="the first answer",
                            alive=[first])
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{logs()}") from None

            await proxy.down()  # the database is away ...
            status, _ = await slack.post(url, slack.envelope(
                slack.message(DM, "And chip makers?", ts="1700000000.000200")))
            assert status == 200  # ... and Slack is told the message was taken:
            assert _spooled(data_dir) == ["1700000000.000200"], logs()  # it is on disk
            await first.kill()  # the outage and a crash together

            await proxy.up()
            second = await _serve("second", tmp_path, env)
            procs.append(second)
            try:
                await until(lambda: answered(2), within_s=180,
                            what="the spooled message's answer", alive=[second])
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{slack.texts(DM)}\n{logs()}") from None
            await asyncio.sleep(2.0)  # a second answer would come within a sweep or two

            async def spool_empty() -> bool:
                return _spooled(data_dir) == []

            await until(spool_empty, within_s=30, what="the spool replayed and deleted",
                        alive=[second])
            done = [t for t in slack.texts(DM) if LAST_WORDS in t and WORKING not in t]
            assert len(done) == 2, slack.texts(DM)  # each question answered once
            asked = [r for r in llm.requests
                     if "And chip makers?" in json.dumps(r.get("messages", []))]
            assert asked, "the spooled question reached the model"
        finally:
            for p in procs:
                await p.kill()
