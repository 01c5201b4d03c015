"""Start-up errors are one line each, never a traceback (issue 33 item 3): a real
`bullpen serve` process (forked after its imports: `tests/warm_bullpen.py`) with one bad
setting.

- a port in use (WEB_PORT, a platform's listener) or two platforms on one port: exit 2 before
  the database or the symbols directory start;
- a credential of the wrong shape (Telegram, Discord, Slack, WeChat, WeCom): exit 2, the line
  names the setting and never repeats the value;
- a model endpoint that is not there: serve starts, says so in one line, and the offline
  analyst answers with a one-line note in the asker's language; once the endpoint answers,
  the model answers again.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from aiohttp import web

from bot.model_check import FallbackMode, ModelHealth, probe
from core.events import Done
from core.llm.profiles import ModelProfile
from tests import warm_bullpen
from tests.fakes.openai_server import FakeOpenAI, Turn

BULLPEN = [sys.executable, "-m", "bot.cli"]
_ENV_DROP = ("BULLPEN_", "DATABASE_URL", "TELEGRAM_", "DISCORD_", "SLACK_", "WECHAT_", "WECOM_",
             "WEB_")
TELEGRAM = "777000111:TEST-fake-token-Xyz_0123456789"
WECHAT = {"WECHAT_TOKEN": "bullpencallback", "WECHAT_APP_ID": "wx5f1a2b3c4d5e6f70",
          "WECHAT_APP_SECRET": "0123456789abcdef0123456789abcdef"}


def serve(tmp_path: Path, env: dict[str, str], *, stdin: str | None = None,
          args: tuple[str, ...] = ("serve",),
          timeout: float = 300) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
    base.update({"BULLPEN_DATA_DIR": str(tmp_path / "data"), **env})
    return warm_bullpen.run(args, cwd=tmp_path, env=base, input=stdin or "", timeout=timeout)


def one_line(out: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in out.stderr, out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, out.stderr
    return lines[0]


@contextlib.contextmanager
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- ports -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "extra"), [
    ("WEB_PORT", {}),
    ("WECHAT_PORT", WECHAT),
    ("SLACK_EVENTS_PORT", {"SLACK_BOT_TOKEN": "xoxb-1111-2222-TESTfakeBotToken0123",
                           "SLACK_SIGNING_SECRET": "8f742231b10e8888abcd99yyyzzz85a5"}),
])
def test_a_port_in_use_is_one_line_naming_its_setting(tmp_path: Path, setting: str,
                                                       extra: dict[str, str]) -> None:
    with taken_port() as port:
        out = serve(tmp_path, {**extra, setting: str(port)})
    assert out.returncode == 2
    line = one_line(out)
    assert line.startswith(f"bullpen: {setting}={port}:") and "already in use" in line
    assert not (tmp_path / "data" / "pgdata").exists()  # said before the database started


def test_two_platforms_on_one_port_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    out = serve(tmp_path, {**WECHAT, "WECHAT_PORT": str(port), "WEB_PORT": str(port)})
    assert out.returncode == 2
    line = one_line(out)
    assert "WECHAT_PORT and WEB_PORT are both" in line


# --- credentials -------------------------------------------------------------------------------


@pytest.mark.parametrize(("setting", "value", "extra"), [
    ("TELEGRAM_BOT_TOKEN", "bot777000111:AAHsecretPart_xyz", {}),
    ("TELEGRAM_BOT_TOKEN", "777000111", {}),
    ("TELEGRAM_BOT_TOKEN", "777000111:AAH secret", {}),
    ("TELEGRAM_BOT_TOKEN", "777000111:AAHcutShort-abc", {}),  # copied only in part
    ("DISCORD_BOT_TOKEN", "1234567890123456789", {}),
    ("DISCORD_BOT_TOKEN", "Bot MTIzNDU2.Gq1x2y.secretPartOfTheToken", {}),
    ("SLACK_BOT_TOKEN", "xapp-1-A0BULL-3333-secretAppToken", {}),
    ("SLACK_APP_TOKEN", "xoxb-1111-2222-secretBotToken",
     {"SLACK_BOT_TOKEN": "xoxb-1111-2222-TESTfakeBotToken0123"}),
    ("WECHAT_APP_ID", "gh_secretish0123", {k: v for k, v in WECHAT.items()
                                          if k != "WECHAT_APP_ID"}),
    ("WECHAT_APP_SECRET", "wx5f1a2b3c4d5e6f70", {k: v for k, v in WECHAT.items()
                                                if k != "WECHAT_APP_SECRET"}),
    ("WECOM_CORP_ID", "corp-secretish", {}),
    ("WECOM_SECRET", "too-short-secret", {}),
])
def test_a_malformed_credential_is_one_line_naming_the_setting_not_the_value(
        tmp_path: Path, setting: str, value: str, extra: dict[str, str]) -> None:
    out = serve(tmp_path, {**extra, setting: value})
    assert out.returncode == 2
    line = one_line(out)
    assert line.startswith(f"bullpen: {setting} is not a"), line
    assert value not in out.stderr


async def test_a_well_formed_token_the_platform_rejects_is_one_line(
        tmp_path: Path, pg_dsn: str) -> None:
    """The shape is right, Telegram (its loopback fake) says no: one line, exit 2."""

    from tests.fakes.telegram_server import FakeTelegram

    wrong = "777000111:not-the-right-token-at-all-000"
    async with FakeTelegram() as tg:
        base = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
        base.update({"BULLPEN_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": pg_dsn,
                     "TELEGRAM_BOT_TOKEN": wrong, "TELEGRAM_API_BASE_URL": tg.base_url,
                     "TELEGRAM_FILE_BASE_URL": tg.base_file_url})
        done = await asyncio.to_thread(warm_bullpen.run, ["serve"], cwd=tmp_path, env=base,
                                       timeout=300)
    assert done.returncode == 2, done.stderr
    line = one_line(done)
    assert "TELEGRAM_BOT_TOKEN" in line and "not-the-right-token" not in done.stderr


# --- the model endpoint ------------------------------------------------------------------------


def _llm_env(pg_dsn: str, base_url: str) -> dict[str, str]:
    return {"DATABASE_URL": pg_dsn, "BULLPEN_LLM_BASE_URL": base_url,
            "BULLPEN_LLM_MODEL": "fake-model", "BULLPEN_LLM_PLANNING": "false"}


def test_an_unreachable_model_is_one_line_and_the_offline_analyst_answers(
        tmp_path: Path, pg_dsn: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    out = serve(tmp_path, _llm_env(pg_dsn, url), stdin="What is NVDA's latest close?\n")
    assert out.returncode == 0, out.stderr
    line = one_line(out)
    assert line.startswith(f"bullpen: BULLPEN_LLM_BASE_URL={url}: cannot reach")
    assert "offline analyst answers" in line
    assert "NVDA" in out.stdout and "the model is not answering" in out.stdout


def test_the_note_speaks_the_askers_language(tmp_path: Path, pg_dsn: str) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    out = serve(tmp_path, _llm_env(pg_dsn, url), args=("ask", "英伟达最新收盘价是多少？"))
    assert out.returncode == 0, out.stderr
    assert one_line(out).startswith("bullpen: BULLPEN_LLM_BASE_URL=")
    assert "大模型暂时无法连接" in out.stdout


async def test_a_model_that_comes_back_answers_again() -> None:
    """Down at start: the offline mode answers with the note; the background re-check finds
    the endpoint once it answers, and the model's mode answers again (no question waits on a
    probe)."""

    class Said:
        def __init__(self, name: str) -> None:
            self.name = name

        async def run(self, turn: object):  # type: ignore[no-untyped-def]
            yield Done(text=self.name, label="")

    port = free_port()
    profile = ModelProfile(base_url=f"http://127.0.0.1:{port}/v1", model="fake-model")
    health = ModelHealth(profile, recheck_s=0.05, timeout_s=2.0)
    assert "cannot reach" in (await health.check() or "")
    mode = FallbackMode(Said("model"), Said("offline"), health)

    class Turn_:
        lang = "zh"

    health.watch()
    try:
        got = [e async for e in mode.run(Turn_())]
        assert isinstance(got[-1], Done) and got[-1].text == "offline"
        assert "大模型" in got[-1].label
        async with _models_on(port, ["fake-model"]):  # the endpoint the settings name comes up
            await asyncio.wait_for(health.answering.wait(), timeout=30)
            got = [e async for e in mode.run(Turn_())]
            assert isinstance(got[-1], Done) and got[-1].text == "model"
            assert got[-1].label == ""
    finally:
        await health.aclose()


@contextlib.asynccontextmanager
async def _models_on(port: int, models: list[str]) -> AsyncIterator[None]:
    """An endpoint on `port` that lists `models` (all the check needs to see)."""

    async def listing(request: web.Request) -> web.Response:
        return web.json_response({"object": "list",
                                  "data": [{"id": m, "object": "model"} for m in models]})

    app = web.Application()
    app.router.add_get("/v1/models", listing)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield
    finally:
        await runner.cleanup()


async def test_probe_names_a_model_the_endpoint_refuses() -> None:
    async with FakeOpenAI(default=Turn(fault="400", error="model 'gpt-x' not found")) as fake:
        bad = ModelProfile(base_url=fake.base_url, model="gpt-x")
        problem = await probe(bad, timeout_s=5)
        assert problem is not None and "BULLPEN_LLM_BASE_URL" in problem and "400" in problem
        assert "gpt-x" in problem
        assert [r["model"] for r in fake.requests] == ["gpt-x"]  # unlisted: one test call
        good = ModelProfile(base_url=fake.base_url, model="fake-model")
        assert await probe(good, timeout_s=5) is None
        assert len(fake.requests) == 1  # listed: no completion was spent on the check


# --- settings that do not exist ----------------------------------------------------------------


def test_an_unknown_bullpen_key_stops_serve_in_one_line(tmp_path: Path) -> None:
    """A misspelt switch is never ignored: serve refuses before anything starts."""
    out = serve(tmp_path, {"BULLPEN_SANDBOX_ISOLATON": "0"})
    assert out.returncode == 2
    assert one_line(out) == ("bullpen: BULLPEN_SANDBOX_ISOLATON is not a Bullpen setting "
                             "(did you mean BULLPEN_SANDBOX_ISOLATION?)")
    assert not (tmp_path / "data" / "pgdata").exists()


def test_a_bad_role_value_stops_serve_in_one_line(tmp_path: Path) -> None:
    out = serve(tmp_path, {"BULLPEN_LLM_JUDGE_CONTEXT_TOKENS": "lots"})
    assert out.returncode == 2
    assert one_line(out) == ("bullpen: BULLPEN_LLM_JUDGE_CONTEXT_TOKENS='lots': a whole "
                             "number of tokens, at least 512")


def test_a_bad_log_level_stops_serve_in_one_line(tmp_path: Path) -> None:
    out = serve(tmp_path, {"BULLPEN_LOG_LEVEL": "LOUD"})
    assert out.returncode == 2
    assert one_line(out) == ("bullpen: BULLPEN_LOG_LEVEL is not a log level: one of DEBUG, "
                             "INFO, WARNING, ERROR, CRITICAL")
