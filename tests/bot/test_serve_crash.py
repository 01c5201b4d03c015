"""`bullpen serve` killed with -9 in the middle of an answer, then started again: real serve
processes against the Telegram fake and a streaming OpenAI-compatible fake in this process, one
fresh database per test.

Parametrised over Telegram (polling, redelivers what was not confirmed) and Discord (the
gateway, which does not redeliver: the next process finds the message in the database). The
fake kills the process at the exact request that marks each point of the run:
- `stored`: the message is stored, its placeholder is on its way (the kill comes before
  Telegram takes it);
- `placeholder`: the placeholder is shown, the first progress edit is on its way;
- `mid_stream`: part of the answer is shown in the placeholder;
- `final`: the whole answer is shown, the process dies before it hears back (so before the
  message's state is recorded).

After the restart every question is answered exactly once, in one message, and no placeholder
is left saying it is working.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NoReturn
from weakref import WeakKeyDictionary

import asyncpg
import psutil
import pytest
from aiohttp import web

from tests.bot.test_serve_faults import STARTUP_S, Processes, RefusingTelegram, Serve, until
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI, Turn

# no digits: the answer is not a data answer that a checker would send back for a tool
ANSWER = " ".join([
    "Markets climb a wall of worry and slide down a slope of hope.",
    "Earnings season tends to move chip makers more than the index.",
    "Guidance matters more than the quarter just reported.",
    "Watch the spread between the leaders and the laggards.",
    "Breadth that narrows while prices rise is a warning, not a verdict.",
    "That is all for now: check the levels again after the close.",
])
LAST_WORDS = "check the levels again after the close."
WORKING = "⏳"


# the connection the request being handled came on (set by `KillingTelegram._api`)
_CONNECTION: ContextVar[asyncio.BaseTransport | None] = ContextVar("_CONNECTION", default=None)
# a kill put off this long in a row fails the test, saying what it waited for (never a hang)
HOLD_LIMIT_S = 90.0


class _Killer:
    """Arms a fake to SIGKILL a serve process at one send or edit: before the platform applies
    it (`after=False`) or after (`after=True`, the reply never reaches the process)."""

    def _init_killer(self) -> None:
        self.victim: int | None = None
        self.when: Callable[[str, str], bool] | None = None
        self.after = False
        self.unless: Callable[[], Awaitable[str | None]] | None = None
        self.held = 0  # kills put off by `unless`
        self.holding: str | None = None  # why the kill is put off now (`unless` said)
        self._holding_since: float | None = None  # put off in a row since (monotonic)
        self.killed_at: tuple[str, str] | None = None
        self._serve_victim = True
        # The connections of killed processes: each connection (transport) is given the
        # number of serve kills made before it was first seen; one from before the last kill
        # is the dead's. A connection first seen after a kill is looked up until one is held
        # by a living process (one the dead opened just before it died reaches the fake later).
        self._kills = 0
        self._epochs: WeakKeyDictionary[asyncio.BaseTransport, int] = WeakKeyDictionary()
        self._killed: set[int] = set()
        self._looking_up = False
        self.from_the_dead: list[str] = []  # the requests of killed processes not applied

    def arm(self, pid: int, when: Callable[[str, str], bool], *, after: bool,
            unless: Callable[[], Awaitable[str | None]] | None = None,
            serve: bool = True) -> None:
        """Kill `pid` at the first send or edit `when` picks, put off to a later one while
        `unless` says why now is not a moment to kill (None: it is); `serve`: the victim is
        the process that talks to the fake (what it sent is not applied after its death)."""
        self.victim, self.when, self.after, self.unless = pid, when, after, unless
        self._serve_victim = serve
        self.holding = self._holding_since = None

    def held_for(self) -> float:
        """How long the armed kill has been put off in a row (0: it is not)."""
        since = self._holding_since
        return 0.0 if since is None or self.victim is None else time.monotonic() - since

    def _from_the_dead(self, what: str) -> bool:
        """The request being handled came on a connection of a killed process: not applied,
        like the one it was killed at, whenever it reaches the fake (what Telegram applied
        after the kill could never be found again by anyone: see
        `tests/bot/test_serve_kill_load.py`). Asked again after every await of a handler,
        before it changes anything: a kill may have come meanwhile."""
        transport = _CONNECTION.get()
        if transport is None:
            return False
        epoch = self._epochs.get(transport)
        if epoch is None:
            epoch = self._kills
            if self._looking_up:
                if self._held_by_the_living(transport):
                    self._looking_up = False  # the next process is here
                else:
                    epoch = -1
            self._epochs[transport] = epoch
        if epoch < self._kills:
            self.from_the_dead.append(what)
            return True
        return False

    def _held_by_the_living(self, transport: asyncio.BaseTransport) -> bool:
        """The client end of this loopback connection is held by this process or a child of
        it that is not a killed one (a killed process's sockets are closed or ownerless)."""
        peer, mine = transport.get_extra_info("peername"), transport.get_extra_info("sockname")
        if not peer or not mine:
            return False
        me = psutil.Process()
        for proc in [me, *me.children(recursive=True)]:
            if proc.pid in self._killed:
                continue
            try:
                conns = proc.net_connections(kind="tcp")
            except psutil.Error:
                continue
            if any(c.laddr and c.raddr and c.laddr.port == peer[1] and c.raddr.port == mine[1]
                   for c in conns):
                return True
        return False

    async def _fire_unless(self, kind: str, text: str) -> bool:
        if self.victim is None:
            return False
        if self.unless is not None:
            why = await self.unless()
            if self.victim is None:  # killed meanwhile, at another request
                return False
            if why is not None:
                self.held += 1
                self.holding = why
                if self._holding_since is None:
                    self._holding_since = time.monotonic()
                return False
            self.holding = self._holding_since = None
        return self._fire(kind, text)

    def _fire(self, kind: str, text: str) -> bool:
        if self.victim is None or self.when is None or not self.when(kind, text):
            return False
        os.kill(self.victim, signal.SIGKILL)
        if self._serve_victim:
            self._kills += 1
            self._killed.add(self.victim)
            self._looking_up = True
        self.killed_at = (kind, text[:60])
        self.victim = self.when = None
        self.holding = self._holding_since = None
        return True


class KillingTelegram(RefusingTelegram, _Killer):
    """The Telegram fake with a kill switch (`_Killer`): a request on a connection of the
    killed process is not applied (the connection is closed without an answer)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._init_killer()

    async def _api(self, request: web.Request) -> web.Response:
        _CONNECTION.set(request.transport)  # this request's task: its handler sees it
        if self._from_the_dead(request.match_info.get("method", "")):
            _drop(request)
        return await super()._api(request)

    async def _m_sendMessage(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        text = str(p.get("text", ""))
        if self._from_the_dead("sendMessage") or (
                not self.after and await self._fire_unless("send", text)):
            raise ConnectionResetError  # the dead process hears nothing anyway
        if self._from_the_dead("sendMessage"):  # killed while `unless` looked
            raise ConnectionResetError
        got = await super()._m_sendMessage(p, f)
        if self.after:
            await self._fire_unless("send", text)
        return got

    async def _m_editMessageText(self, p: dict[str, Any], f: dict[str, Any]) -> Any:
        text = str(p.get("text", ""))
        if self._from_the_dead("editMessageText") or (
                not self.after and await self._fire_unless("edit", text)):
            raise ConnectionResetError
        if self._from_the_dead("editMessageText"):
            raise ConnectionResetError
        got = await super()._m_editMessageText(p, f)
        if self.after:
            await self._fire_unless("edit", text)
        return got


def _drop(request: web.Request) -> NoReturn:
    """Close the request's connection without an answer."""
    if request.transport is not None:
        request.transport.close()
    raise ConnectionResetError


class KillingDiscord(FakeDiscord, _Killer):
    """The Discord fake (gateway and REST) with a kill switch (`_Killer`)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._init_killer()

    async def _send(self, bot: Any, p: dict[str, Any], f: list[Any]) -> Any:
        text = str(p.get("content") or "")
        if not self.after and await self._fire_unless("send", text):
            raise ConnectionResetError
        got = await super()._send(bot, p, f)
        if self.after:
            await self._fire_unless("send", text)
        return got

    async def _edit(self, bot: Any, p: dict[str, Any], f: list[Any]) -> Any:
        text = str(p.get("content") or "")
        if not self.after and await self._fire_unless("edit", text):
            raise ConnectionResetError
        got = await super()._edit(bot, p, f)
        if self.after:
            await self._fire_unless("edit", text)
        return got


# the four points, as (which send or edit, kill after the platform applied it)
POINTS: dict[str, tuple[Callable[[str, str], bool], bool]] = {
    "stored": (lambda kind, text: kind == "send" and text.startswith(WORKING), False),
    "placeholder": (lambda kind, text: kind == "edit", False),
    "mid_stream": (lambda kind, text: kind == "edit" and "wall of worry" in text
                   and LAST_WORDS not in text, True),
    "final": (lambda kind, text: kind == "edit" and LAST_WORDS in text
              and WORKING not in text, True),
}


class Side:
    """Where the user writes in these tests: a Telegram private chat or a Discord DM, through
    the platform's fake (serve always polls the Telegram fake too)."""

    def __init__(self, platform: str) -> None:
        self.platform = platform
        self.tg = KillingTelegram()
        self.discord = KillingDiscord() if platform == "discord" else None

    @property
    def killer(self) -> _Killer:
        return self.discord if self.discord is not None else self.tg

    async def __aenter__(self) -> Side:
        await self.tg.__aenter__()
        if self.discord is not None:
            await self.discord.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.discord is not None:
            await self.discord.__aexit__(*exc)
        await self.tg.__aexit__(*exc)

    def env(self) -> dict[str, str]:
        if self.discord is None:
            return {}
        return {"DISCORD_BOT_TOKEN": self.discord.token,
                "DISCORD_API_BASE_URL": self.discord.api_base_url,
                "DISCORD_GATEWAY_URL": self.discord.gateway_url}

    def chat(self, n: int) -> int:
        return 5000 + 10 * n if self.discord is not None else 4000 + n  # a DM / private chat

    async def say(self, chat: int, text: str, *, procs: Processes) -> None:
        if self.discord is not None:
            bot = self.discord.bot  # serve connects to the gateway once it has started

            async def connected() -> bool:
                return bool(bot.sessions)

            await until(connected, within_s=STARTUP_S,
                        what="serve connected to the Discord gateway",
                        procs=procs)
            await self.discord.push(self.discord.message(chat, text))
        else:
            self.tg.push(self.tg.message(chat, text))

    def texts(self, chat: int) -> list[str]:
        if self.discord is not None:
            return self.discord.texts(chat)
        return self.tg.texts(chat)


def _llm_env(llm: FakeOpenAI) -> dict[str, str]:
    return {
        "BULLPEN_LLM_BASE_URL": llm.base_url, "BULLPEN_LLM_MODEL": "fake-model",
        "BULLPEN_LLM_API_KEY": "sk-test", "BULLPEN_LLM_PLANNING": "0",
        # a stopped process's messages are taken over 3 s after its last beat
        "BULLPEN_INBOUND_SWEEP_S": "0.5", "BULLPEN_INBOUND_STALE_S": "3",
    }


def _answers(texts: list[str]) -> list[str]:
    return [t for t in texts if LAST_WORDS in t and WORKING not in t]


@pytest.mark.parametrize("platform", ["telegram", "discord"])
@pytest.mark.parametrize("point", list(POINTS))
async def test_kill_9_mid_answer_then_restart_answers_each_question_once(
        point: str, platform: str, pg_dsn: str, tmp_path: Path) -> None:
    when, after = POINTS[point]
    # a slow stream: about 4 s for the whole answer, so there are edits to kill at
    llm = FakeOpenAI(default=Turn(text=ANSWER, chunk=12, chunk_delay_s=0.12))
    async with llm, Side(platform) as side:
        procs = Processes(pg_dsn, tmp_path, side.tg, extra_env=_llm_env(llm) | side.env())
        try:
            first = await procs.serve("first")
            await procs.started(first)
            chat = side.chat(1)
            await side.say(chat, "/help", procs=procs)  # up and answering before the question

            async def helped() -> bool:
                return bool(side.texts(chat))

            await until(helped, within_s=90, what="an answer to /help", procs=procs,
                        alive=[first])
            side.killer.arm(first.proc.pid, when, after=after)
            await side.say(chat, "How do markets feel this week?", procs=procs)
            await until(_exited(first), within_s=60, what=f"the kill at {point}", procs=procs)
            assert side.killer.killed_at is not None, point
            if point == "final":  # the user saw the whole answer before the process died
                assert len(_answers(side.texts(chat))) == 1
            # the final edit, or a progress edit that already showed the whole text (its
            # status line empty) just before the run stored the answer: only a stored answer
            # can be shown again without asking the model
            # what the dead process had sent Postgres is done once its connections are gone
            # (a COMMIT already on the wire still commits): read before that, a loaded
            # machine showed the answer unstored that the next process then found stored
            await until(_disconnected(pg_dsn, first.name), within_s=60,
                        what="the killed process's connections closed", procs=procs)
            stored = await _answer_stored(pg_dsn)
            second = await procs.serve("second")
            await procs.started(second)

            async def answered() -> list[str]:
                texts = side.texts(chat)
                working = [t for t in texts if WORKING in t]
                return _answers(texts) if _answers(texts) and not working else []

            await until(answered, within_s=90, what="the answer after the restart",
                        procs=procs, alive=[second])
            texts = side.texts(chat)
            assert len(_answers(texts)) == 1, texts  # exactly once
            assert not [t for t in texts if WORKING in t], texts  # nothing left frozen
            assert len(texts) == 2, texts  # /help's answer and the one answer
            question_requests = [r for r in llm.requests
                                 if "markets feel" in str(r.get("messages", [])[-1:])]
            if point == "final":  # shown from what was stored: the model is not asked again
                assert len(question_requests) == (1 if stored else 2), stored
        finally:
            await procs.aclose()


async def _answer_stored(dsn: str) -> bool:
    """The killed process stored the whole answer (the run's final message)."""
    conn = await asyncpg.connect(dsn)
    try:
        return bool(await conn.fetchval(
            "SELECT count(*) FROM messages WHERE role = 'assistant' AND content LIKE $1",
            f"%{LAST_WORDS}%"))
    finally:
        await conn.close()


def _disconnected(dsn: str, name: str) -> Callable[[], Awaitable[bool]]:
    """No connection named `name` (its `application_name`) is left on the server."""

    async def check() -> bool:
        conn = await asyncpg.connect(dsn)
        try:
            return not await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", name)
        finally:
            await conn.close()

    return check


def _exited(serve: Serve) -> Callable[[], Any]:
    async def check() -> bool:
        return not serve.alive

    return check


async def test_a_429_on_every_send_and_edit_for_60_s_still_ends_in_the_answer(
        pg_dsn: str, tmp_path: Path) -> None:
    """The placeholder is out, then Telegram refuses every send and edit for 60 s (retry_after
    1 to 5 s): the answer arrives after the window, once, in the placeholder (not beside it,
    which left the placeholder saying it was working: issue #36)."""
    llm = FakeOpenAI(default=Turn(text=ANSWER, chunk=12, chunk_delay_s=0.12))
    tg = KillingTelegram()
    async with llm, tg:
        procs = Processes(pg_dsn, tmp_path, tg, extra_env=_llm_env(llm))
        try:
            serve = await procs.serve("serve")
            await procs.started(serve)
            chat = 4343
            tg.push(tg.message(chat, "/help"))

            async def helped() -> bool:
                return bool(tg.texts(chat))

            await until(helped, within_s=90, what="an answer to /help", procs=procs,
                        alive=[serve])
            tg.push(tg.message(chat, "How do markets feel this week?"))

            async def placeholder() -> bool:
                return any(t.startswith(WORKING) for t in tg.texts(chat))

            await until(placeholder, within_s=60, what="the placeholder", procs=procs,
                        alive=[serve], every_s=0.02)
            window_end = tg.refuse(for_s=60, retry_after=(1, 2, 3, 5))

            async def answered() -> list[str]:
                got = _answers(tg.texts(chat))
                working = [t for t in tg.texts(chat) if WORKING in t]
                return got if got and not working else []

            await until(answered, within_s=200, what="the answer after the 429 window",
                        procs=procs, alive=[serve])
            texts = tg.texts(chat)
            assert len(_answers(texts)) == 1, texts
            assert not [t for t in texts if WORKING in t], texts
            assert len(texts) == 2, texts  # /help's answer, and the placeholder now the answer
            assert tg.refused and max(t for _, t, _ in tg.refused) <= window_end
            assert {m for m, _, _ in tg.refused} >= {"editMessageText"}
        finally:
            await procs.aclose()
