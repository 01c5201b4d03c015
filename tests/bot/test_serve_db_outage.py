"""`bullpen serve` on its embedded PostgreSQL, and the database killed with -9 in the middle
of an answer: the server is started again by serve's supervisor, the answer in flight is
finished and stored, and a message sent while the database was down is answered too.

Real serve process, real embedded server (its own data directory), the Telegram fake and a
slowly streaming OpenAI-compatible fake in this process.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import tempfile
from pathlib import Path

import asyncpg
import psutil

from tests.bot.test_serve_crash import ANSWER, LAST_WORDS, WORKING, KillingTelegram, _llm_env
from tests.bot.test_serve_faults import Processes, until
from tests.fakes.openai_server import FakeOpenAI, Turn


def _postmaster_pid(pgdata: Path) -> int | None:
    try:
        return int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return None


def _running(pid: int | None) -> bool:
    # a negative pid in postmaster.pid is a single-user backend (initdb still bootstrapping)
    if pid is None or pid <= 0:
        return False
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.Error:
        return False


async def test_postgres_killed_mid_answer_comes_back_and_both_messages_are_answered() -> None:
    # about 6 s of streaming: the database dies early in it
    llm = FakeOpenAI(default=Turn(text=ANSWER, chunk=8, chunk_delay_s=0.12))
    tg = KillingTelegram()
    async with llm, tg:
        # no DATABASE_URL: serve starts (and supervises) its embedded server
        # not under tmp_path: run as root, the server runs as another OS user that must pass
        # through every parent, and any pytest starting on the machine makes
        # /tmp/pytest-of-root 0700 again (see test_serve_kill_load)
        base = Path(tempfile.mkdtemp(prefix="bullpen-db-outage-"))
        procs = Processes("", base, tg, extra_env=_llm_env(llm))
        pgdata = base / "serve" / "pgdata"
        try:
            serve = await procs.serve("serve")
            await procs.started(serve)  # its embedded server made and started first
            chat = 5151
            tg.push(tg.message(chat, "/help"))

            async def helped() -> bool:
                return bool(tg.texts(chat))

            await until(helped, within_s=120, what="an answer to /help", procs=procs,
                        alive=[serve])
            first_pm = _postmaster_pid(pgdata)
            assert _running(first_pm), "the embedded server runs under the data directory"
            tg.push(tg.message(chat, "How do markets feel this week?"))

            async def streaming() -> bool:
                return any("wall of worry" in t and LAST_WORDS not in t for t in tg.texts(chat))

            await until(streaming, within_s=60, what="the answer streaming", procs=procs,
                        alive=[serve])
            assert first_pm is not None
            os.kill(first_pm, signal.SIGKILL)  # the database dies mid-answer
            await asyncio.sleep(0.3)
            tg.push(tg.message(chat, "And what about chip makers?"))  # sent during the outage

            async def both_answered() -> bool:
                done = [t for t in tg.texts(chat) if LAST_WORDS in t and WORKING not in t]
                return len(done) >= 2

            await until(both_answered, within_s=120, what="both answers", procs=procs,
                        alive=[serve])
            texts = tg.texts(chat)
            assert len([t for t in texts if LAST_WORDS in t]) == 2, texts  # each once
            assert not [t for t in texts if WORKING in t], texts
            second_pm = _postmaster_pid(pgdata)
            assert second_pm != first_pm and _running(second_pm)  # serve started it again
            assert "embedded PostgreSQL is up again" in serve.log.read_text(errors="replace")

            # both questions and both answers are stored, and both messages are answered: a
            # message is marked answered after its final edit is sent (the mark is group
            # committed), so the marks are waited for, not read the moment the text shows
            answered = [("/help", "answered"), ("How do markets feel this week?", "answered"),
                        ("And what about chip makers?", "answered")]
            statuses: list[tuple[str, str]] = []
            said: list[asyncpg.Record] = []

            async def stored() -> bool:
                nonlocal statuses, said
                conn = await asyncpg.connect(host=str(_socket_dir(pgdata)), user="postgres",
                                             database="postgres")
                try:
                    statuses = [(r["text"], r["status"]) for r in await conn.fetch(
                        "SELECT payload->>'text' AS text, status FROM inbound_events"
                        " WHERE chat_id = $1 ORDER BY id", str(chat))]
                    said = await conn.fetch("SELECT role, content FROM messages ORDER BY id")
                finally:
                    await conn.close()
                return statuses == answered

            await until(stored, within_s=30, what="the three messages marked answered",
                        procs=procs, alive=[serve])
            assert statuses == answered
            assert [r["role"] for r in said] == ["user", "assistant", "user", "assistant"]
            assert all(r["content"] == ANSWER for r in said if r["role"] == "assistant")
        finally:
            await procs.aclose()
            _stop_server(pgdata)
            shutil.rmtree(base, ignore_errors=True)


def _stop_server(pgdata: Path) -> None:
    """serve was killed: its embedded server is stopped here (a fast shutdown)."""
    pid = _postmaster_pid(pgdata)
    if _running(pid):
        assert pid is not None
        os.kill(pid, signal.SIGINT)
        try:
            psutil.Process(pid).wait(timeout=30)
        except psutil.Error:
            pass


def _socket_dir(pgdata: Path) -> Path:
    """The unix socket directory the server listens in (postmaster.pid, line 5)."""
    lines = (pgdata / "postmaster.pid").read_text().splitlines()
    return Path(lines[4])
