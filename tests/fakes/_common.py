"""What the platform fakes (Telegram, Discord, Slack, WeChat) share: listening on loopback, the
recorded calls and waiting on them, injected faults and delays, and in script mode the gateway
bench's load and serving until stdin closes.

Each fake subclasses `FakePlatform`, keeps its own API, and for the bench says how a question
reaches its bot (`_question`) and reports what the bot shows (`_shown`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

Predicate = Callable[[dict[str, Any]], bool]

WAIT_S = 60.0  # how long `wait_for` waits by default: only a failing test waits it out


@dataclass
class Call:
    method: str
    params: dict[str, Any]
    t: float


@dataclass
class Fault:
    method: str
    error: Exception
    times: int = 1
    when: Predicate | None = None


@dataclass
class Load:
    """A bench load under way: `to` says where the questions go (a bot's token, the name of a
    bot's events URL, a callback URL); rows of answered questions, timed on the fake's clock.

    A timed load (`until`, the soak) asks in a closed loop until that monotonic time, then
    asks no more and waits for the answers under way; `texts` are asked in turn (else `text`),
    and with `contains` an answer is complete when the shown text contains `expect`."""

    to: str
    text: str
    expect: str
    total: int
    closed: bool
    remaining: dict[Any, int]
    waiting: dict[Any, int]
    until: float | None = None
    texts: list[str] = field(default_factory=list)
    contains: bool = False
    asked: int = 0
    current: dict[Any, dict[str, Any]] = field(default_factory=dict)
    rows: list[dict[str, Any]] = field(default_factory=list)
    done: asyncio.Event = field(default_factory=asyncio.Event)
    tasks: set[asyncio.Task[Any]] = field(default_factory=set)
    failures: int = 0

    def spawn(self, question: Coroutine[Any, Any, Any]) -> None:
        """Send a question in its own task (cancelled when the load ends)."""
        task = asyncio.create_task(question)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)


class FakePlatform:
    """The base of a fake: `calls` (each with its monotonic time `t`, set when answered),
    `faults`, `delays`, the server's `port` once listening, and the bench `load` in script
    mode (`control`: the `/_fake/...` routes)."""

    def __init__(self, *, host: str, port: int, control: bool) -> None:
        self.host = host
        self.port = port
        self.control = control
        self.calls: list[Any] = []
        self.faults: list[Any] = []
        self.delays: list[tuple[str, float, Predicate | None]] = []
        self.load: Load | None = None
        self.last_load: Load | None = None  # the one that ended last (its progress stays)
        self._changed = asyncio.Event()  # replaced (after being set) on every change
        self._runner: web.AppRunner | None = None

    # --- lifecycle -------------------------------------------------------------------------

    async def _listen(self, app: web.Application) -> None:
        """Serve `app` on `host`:`port` (0: a free one, then `port` says which)."""
        if self.control:
            app.router.add_post("/_fake/load", self._control_load)
            app.router.add_get("/_fake/load", self._control_progress)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        self.port = int(self._runner.addresses[0][1])

    async def _stop_listening(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    # --- test controls ---------------------------------------------------------------------

    def fail(self, method: str, error: Exception, *, times: int = 1,
             when: Predicate | None = None) -> None:
        """The next `times` calls of `method` (matching `when`) get `error`."""
        self.faults.append(Fault(method, error, times, when))

    def delay(self, method: str, seconds: float, *, when: Predicate | None = None) -> None:
        """Calls of `method` (matching `when`) answer after `seconds`."""
        self.delays.append((method, seconds, when))

    async def _delay(self, method: str, params: dict[str, Any]) -> None:
        for name, seconds, when in self.delays:
            if name == method and (when is None or when(params)):
                await asyncio.sleep(seconds)

    def _raise_fault(self, method: str, params: dict[str, Any]) -> None:
        """Raise the error of the first fault left for this call, if any."""
        for fault in self.faults:
            if fault.method == method and fault.times > 0 and (
                    fault.when is None or fault.when(params)):
                fault.times -= 1
                if fault.times == 0:
                    self.faults.remove(fault)
                raise fault.error

    async def wait_for(self, predicate: Callable[[], bool], within_s: float = WAIT_S) -> None:
        """Wait until `predicate()` holds (checked after every API call, and every 50 ms). The
        bound is reached only by a failure, so it is generous (a cold first answer on a loaded
        2-core machine took over 10 s); the TimeoutError names the fake's last calls."""
        try:
            async with asyncio.timeout(within_s):
                while not predicate():
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._changed.wait(), 0.05)
        except TimeoutError:
            last = ", ".join(str(getattr(c, "method", None) or getattr(c, "api", c))
                             for c in self.calls[-8:]) or "none"
            raise TimeoutError(f"not seen within {within_s:g} s; the fake's last calls: "
                               f"{last}") from None

    async def settle(self, quiet_s: float = 0.3, within_s: float = 10.0) -> None:
        """Wait until no API call has come for `quiet_s` seconds."""
        async with asyncio.timeout(within_s):
            while True:
                last = max((c.t for c in self.calls), default=0.0)
                wait = last + quiet_s - time.monotonic()
                if wait <= 0:
                    return
                await asyncio.sleep(wait)

    def _notify(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    # --- load for the gateway bench (script mode) -------------------------------------------

    async def run_load(self, *, to: str, chats: list[Any], per_chat: int, text: str,
                       expect: str, rate: float | None = None, within_s: float = 120.0,
                       for_s: float | None = None, texts: list[str] | None = None,
                       contains: bool = False) -> Load:
        """Each chat asks `text` `per_chat` times; an answer is complete when its chat shows
        `expect`. Closed loop (rate None): a chat asks again when answered. Paced: questions go
        out round-robin at `rate` per second (a chat still waiting asks when answered).
        Timed (`for_s`, closed loop; `per_chat` ignored): chats ask again when answered for
        `for_s` seconds, then the answers under way have until `within_s` to arrive (what is
        still unanswered then is `current`). Timings are taken on this server's clock as the
        calls arrive."""
        timed = for_s is not None
        load = Load(to=to, text=text, expect=expect,
                    total=0 if timed else len(chats) * per_chat,
                    closed=rate is None or timed,
                    remaining=dict.fromkeys(chats, 1 if timed else per_chat),
                    waiting=dict.fromkeys(chats, 0),
                    until=time.monotonic() + for_s if for_s is not None else None,
                    texts=list(texts or []), contains=contains)
        self.load = load
        try:
            async with asyncio.timeout(within_s):
                if timed:
                    for chat in chats:
                        self._ask(chat)
                elif rate is None:
                    for chat in chats:
                        self._ask(chat)
                else:
                    start = time.monotonic()
                    for k in range(load.total):
                        await asyncio.sleep(max(0.0, start + k / rate - time.monotonic()))
                        chat = chats[k % len(chats)]
                        if chat in load.current:
                            load.waiting[chat] += 1
                        else:
                            self._ask(chat)
                await load.done.wait()
        except TimeoutError:
            pass
        finally:
            self.load, self.last_load = None, load
            for task in load.tasks:
                task.cancel()
            await asyncio.gather(*load.tasks, return_exceptions=True)
        return load

    def _ask(self, chat: Any) -> None:
        load = self.load
        assert load is not None
        if load.until is None:
            load.remaining[chat] -= 1
        row = {"chat": chat, "pushed": time.monotonic(), "first": None, "first_edit": None,
               "final": None}
        load.current[chat] = row
        load.asked += 1
        self._question(load, chat, row)

    def question_text(self, load: Load) -> str:
        """The text of the load's next question (`texts` in turn, else `text`)."""
        return load.texts[(load.asked - 1) % len(load.texts)] if load.texts else load.text

    def _question(self, load: Load, chat: Any, row: dict[str, Any]) -> None:
        """Send `chat`'s question (`load.text`) to the bot `load.to` names."""
        raise NotImplementedError

    def _shown(self, chat: Any, shown: str, *, edit: bool, at: float | None = None) -> None:
        """The bot showed `shown` in `chat` (`edit`: by changing a message it had sent), at
        `at` (default: now): times the first edit, and the answer once it shows `expect`."""
        load = self.load
        row = load.current.get(chat) if load is not None else None
        if load is None or row is None:
            return
        now = time.monotonic() if at is None else at
        if row["first"] is None:
            row["first"] = now
        if edit and row["first_edit"] is None:
            row["first_edit"] = now
        if (load.expect not in shown) if load.contains else (shown != load.expect):
            return
        row["final"] = now
        load.rows.append(row)
        del load.current[chat]
        if load.until is not None:
            if now < load.until:
                self._ask(chat)
            elif not load.current:
                load.done.set()
            return
        if load.closed and load.remaining[chat] > 0:
            self._ask(chat)
        elif not load.closed and load.waiting[chat] > 0:
            load.waiting[chat] -= 1
            self._ask(chat)
        if len(load.rows) == load.total:
            load.done.set()

    async def _control_load(self, request: web.Request) -> web.Response:
        """Body: the keyword arguments of `run_load`; answers the timings."""
        load = await self.run_load(**await request.json())
        return web.json_response({"complete": load.done.is_set(), "rows": load.rows,
                                  "failures": load.failures,
                                  "unanswered": list(load.current.values())})

    async def _control_progress(self, request: web.Request) -> web.Response:
        """The load under way (else the last one): questions asked, answers complete, waiting
        now (all 0: none yet)."""
        load = self.load or self.last_load
        if load is None:
            return web.json_response({"asked": 0, "answered": 0, "waiting": 0})
        return web.json_response({"asked": load.asked, "answered": len(load.rows),
                                  "waiting": len(load.current)})


def serve_script(make: Callable[[argparse.Namespace], Any], *, tokens: bool = True,
                 **options: str) -> None:
    """A fake run as a script: parse `--port N` (0: a free one), `--token T ...` (its bots)
    when `tokens`, and `--<option> V` for each of `options` (its value the default); serve the
    fake `make(args)` builds, print its port, and stop when stdin closes (as the bench does)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    if tokens:
        parser.add_argument("--token", action="append", default=[])
    for name, default in options.items():
        parser.add_argument("--" + name.replace("_", "-"), default=default)
    args = parser.parse_args()

    async def serve() -> None:
        async with make(args) as fake:
            print(fake.port, flush=True)
            await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)

    asyncio.run(serve())
