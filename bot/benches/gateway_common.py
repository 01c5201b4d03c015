"""What the `bullpen bench gateway --platform ...` benches share: the fake platform in a child
process, the load it drives (`/_fake/load`: a closed loop for throughput, then a paced round for
latency, both bots alternating), the summaries of its timings, the App they run ours in, and the
JSON they print; the durable peers' store (`peer_store`: every platform's echo peer persisting
each question and reply the same way) and the report of the ceiling (the fake's own maximum
rate, driven by the least client that answers: raw aiohttp, no SDK). Each platform's bench
(`gateway.py` for Telegram, `gateway_<platform>.py`) keeps its fake's arguments, its peers, its
ceiling client, its adapter and its targets.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

TARGET_RATIO = 0.7
TARGET_P99_FIRST_EDIT_MS = 300.0
MESSAGES_PER_CHAT = 3  # per round, closed loop (throughput)
PACED_RATE = 20.0  # questions per second over all chats (latency)
PACED_PER_CHAT = 2
# not a data question, and no figures in the answer: the agent's grounding check (a data
# question answered without a tool is sent back once) stays out of what is measured
QUESTION = "Good morning, desk: anything to flag before the bell?"
ANSWER = ("Good morning. Nothing unusual overnight: the snapshot is quiet, breadth looks "
          "normal and the desk has no alerts before the bell.")
FAKES = Path(__file__).resolve().parents[2] / "tests" / "fakes"


@dataclass
class Side:
    """One bot under load: `to` tells the fake where its questions go (a bot's token, the name
    a bot's events URL was given, or a callback URL), `expect` is the text that completes an
    answer; the rows of the first message of each chat, of the closed-loop rounds and of the
    paced ones."""

    to: str
    chats: Sequence[int | str]
    expect: str
    closed: list[list[dict[str, Any]]] = field(default_factory=list)
    paced: list[dict[str, Any]] = field(default_factory=list)
    first: list[dict[str, Any]] = field(default_factory=list)
    # CPU milliseconds per answered message over each closed-loop round: this process (the
    # bot whose load it is runs; the others idle) and the Postgres server (when measured)
    cpu_ms: list[float] = field(default_factory=list)
    postgres_cpu_ms: list[float] = field(default_factory=list)
    first_cpu_ms: float | None = None  # the same over the first messages (new chats)


def run_bench(fake: Path, bench: Callable[..., Coroutine[Any, Any, dict[str, Any]]], *, chats: int,
              repeat: int, database_url: str | None) -> dict[str, Any]:
    """Run a platform's `bench(chats=, rounds=, database_url=)`; its fake must be at hand."""
    if not fake.exists():
        raise FileNotFoundError(f"gateway bench needs the source checkout's {fake}")
    return asyncio.run(bench(chats=chats, rounds=max(1, repeat), database_url=database_url))


@asynccontextmanager
async def fake_process(fake: Path, *args: str) -> AsyncIterator[str]:
    """The fake platform in a child process; yields its root URL. It stops when stdin closes."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(fake), *args,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        port = int((await asyncio.wait_for(proc.stdout.readline(), 30)).decode().strip())
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


@asynccontextmanager
async def listen(server: aiohttp.web.Application) -> AsyncIterator[str]:
    """An aiohttp application (a peer's) on a free loopback port; yields its root URL."""
    from aiohttp import web

    runner = web.AppRunner(server, handle_signals=False, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


async def load(control: aiohttp.ClientSession, side: Side, per_chat: int,
               rate: float | None = None) -> list[dict[str, Any]]:
    """One load of `per_chat` questions per chat (closed loop, or paced at `rate`): its rows."""
    body = {"to": side.to, "chats": list(side.chats), "per_chat": per_chat, "text": QUESTION,
            "expect": side.expect, "rate": rate, "within_s": 300}
    async with control.post("/_fake/load", json=body,
                            timeout=aiohttp.ClientTimeout(total=330)) as resp:
        result = json.loads(await resp.text())
    if not result["complete"]:
        refused = f" ({result['failures']} refused)" if result.get("failures") else ""
        raise RuntimeError(f"gateway bench: only {len(result['rows'])} of "
                           f"{len(side.chats) * per_chat} answers arrived{refused}")
    rows: list[dict[str, Any]] = result["rows"]
    return rows


async def drive(control: aiohttp.ClientSession, sides: Sequence[Side], rounds: int, *,
                postgres: Callable[[], float] | None = None) -> None:
    """One first message per chat, all at once (new users, new conversations, new
    connections: measured, as `first_message`, not only warming up), then `rounds` rounds of
    (closed loop, paced), the sides' loads alternating. Each closed-loop round's CPU per
    message is kept (`Side.cpu_ms`; with `postgres`, the server's cumulative CPU seconds,
    `Side.postgres_cpu_ms`): CPU, unlike rates, reads the same on a busy machine."""
    for side in sides:
        cpu = time.process_time()
        side.first = await load(control, side, 1)
        side.first_cpu_ms = (time.process_time() - cpu) * 1000 / len(side.first)
    for _ in range(rounds):
        for side in sides:
            # the server's CPU read outside the process's window (psutil reads /proc)
            pg = postgres() if postgres is not None else 0.0
            cpu = time.process_time()
            rows = await load(control, side, MESSAGES_PER_CHAT)
            side.cpu_ms.append((time.process_time() - cpu) * 1000 / len(rows))
            side.closed.append(rows)
            if postgres is not None:
                side.postgres_cpu_ms.append((postgres() - pg) * 1000 / len(rows))
        for side in sides:
            side.paced += await load(control, side, PACED_PER_CHAT, rate=PACED_RATE)


# --- the durable peers' store ----------------------------------------------------------------

PEER_TABLE = "bench_durable_peer_messages"
PEER_TABLE_DDL = f"""CREATE TABLE IF NOT EXISTS {PEER_TABLE} (
    id bigserial PRIMARY KEY, platform text NOT NULL, chat text NOT NULL,
    message text NOT NULL, role text NOT NULL, content text NOT NULL,
    at timestamptz NOT NULL DEFAULT now(), UNIQUE (platform, chat, message, role))"""
PEER_INSERT = (f"INSERT INTO {PEER_TABLE} (platform, chat, message, role, content) "
               "VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING")
Store = Callable[[object, object, str, str], Awaitable[None]]


@asynccontextmanager
async def peer_store(dsn: str, *, platform: str) -> AsyncIterator[Store]:
    """What a durable echo peer persists with: `store(chat, message, role, text)` writes one
    row (one statement, its own transaction, synchronous commit: the server's default) on an
    asyncpg pool of the same Postgres as ours; a redelivered message is stored once (the
    unique key). Every platform's durable peer stores the question before answering and the
    reply after, with this one helper."""
    import asyncpg

    pool = await asyncpg.create_pool(dsn, min_size=2, max_size=10)
    try:
        await pool.execute(PEER_TABLE_DDL)

        async def store(chat: object, message: object, role: str, text: str) -> None:
            await pool.execute(PEER_INSERT, platform, str(chat), str(message), role, text)

        yield store
    finally:
        await pool.close()


async def peer_rows(dsn: str, *, platform: str) -> int:
    """The rows the durable peer of `platform` stored (the bench tests count them)."""
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval(
            f"SELECT count(*) FROM {PEER_TABLE} WHERE platform = $1", platform))
    finally:
        await conn.close()


class Owned:
    """The tasks a ceiling client spawns, one per answer: cancelled and awaited on exit."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def aclose(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def postgres_cpu(pool: Any) -> Callable[[], float] | None:
    """The CPU seconds so far of the Postgres server behind `pool` (its postmaster and the
    backends alive now; a backend that exited takes its share with it, so read it over
    windows in which the pools keep their connections), or None when the server is not a
    process of this machine that may be read."""
    import psutil

    try:
        postmaster = psutil.Process(int(await pool.fetchval("SELECT pg_backend_pid()"))).parent()
        if postmaster is None:
            return None
        postmaster.cpu_times()
    except (psutil.Error, ValueError):
        return None

    def seconds() -> float:
        total = 0.0
        for proc in (postmaster, *postmaster.children()):
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system
        return total

    return seconds


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], 1)


def latency(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    first = [(r["first_edit"] - r["pushed"]) * 1000 for r in rows if r["first_edit"]]
    final = [(r["final"] - r["pushed"]) * 1000 for r in rows]
    return {"first_edit_ms": {"p50": pct(first, 0.5), "p99": pct(first, 0.99)},
            "final_ms": {"p50": pct(final, 0.5), "p99": pct(final, 0.99)}}


def acks(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The callback's HTTP answer, from the push (rows that have an `ack`)."""
    times = [(r["ack"] - r["pushed"]) * 1000 for r in rows if r["ack"]]
    return {"p50": pct(times, 0.5), "p99": pct(times, 0.99)}


STEADY_TRIM = 0.1  # the first and last tenth of a round's answers: ramp-up and the slowest tail


def steady_rate(rows: list[dict[str, Any]]) -> float:
    """Answers per second in a closed-loop round's steady window: between its 10th and 90th
    percentile answer. Dividing by the time to the last answer let the slowest chat's tail
    decide (four runs of one machine read 0.69 to 2.22)."""
    finals = sorted(r["final"] for r in rows)
    lo, hi = int(len(finals) * STEADY_TRIM), int(len(finals) * (1 - STEADY_TRIM)) - 1
    if hi <= lo or finals[hi] <= finals[lo]:
        span = max(finals) - min(r["pushed"] for r in rows)
        return len(rows) / span if span > 0 else 0.0
    return float((hi - lo) / (finals[hi] - finals[lo]))


def summary(side: Side, *, with_acks: bool = False) -> dict[str, Any]:
    """Throughput over the closed-loop rounds (the median of the rounds' steady rates, with
    every round's); latency both paced and at saturation (with the callbacks' answers,
    `ack_ms`, first when `with_acks`)."""
    spans = [max(r["final"] for r in rows) - min(r["pushed"] for r in rows)
             for rows in side.closed]
    rates = sorted(steady_rate(rows) for rows in side.closed)
    messages = sum(len(rows) for rows in side.closed)
    saturated = [r for rows in side.closed for r in rows]
    return {
        "messages": messages,
        "seconds": round(sum(spans), 3),
        "messages_per_s": round(statistics.median(rates), 1),
        "messages_per_s_rounds": [round(r, 1) for r in rates],
        "messages_per_s_to_last_answer": round(messages / sum(spans), 1),
        **({"cpu_ms_per_message": {
            "process": round(statistics.median(side.cpu_ms), 2),
            "process_rounds": [round(c, 2) for c in side.cpu_ms],
            **({"postgres": round(statistics.median(side.postgres_cpu_ms), 2)}
               if side.postgres_cpu_ms else {})}} if side.cpu_ms else {}),
        "paced": {"questions_per_s": PACED_RATE, "messages": len(side.paced),
                  **({"ack_ms": acks(side.paced)} if with_acks else {}),
                  **latency(side.paced)},
        "saturated": {**({"ack_ms": acks(saturated)} if with_acks else {}),
                      **latency(saturated)},
        # every chat's first message at once: what a burst of new chats costs
        **({"first_message": {"messages": len(side.first),
                              "messages_per_s": round(steady_rate(side.first), 1),
                              **({"cpu_ms_per_message": round(side.first_cpu_ms, 2)}
                                 if side.first_cpu_ms is not None else {}),
                              **latency(side.first)}} if side.first else {}),
    }


def cpu_ratio(mine: dict[str, Any], theirs: dict[str, Any], *,
              postgres: bool = False) -> dict[str, Any]:
    """Our process's CPU per message over the peer's, measured in the same rounds (lower is
    better for Bullpen): the machine's load inflates both alike, so this reads the same on a
    busy machine where the throughput ratio swings; with `postgres` (a peer that writes to the
    same server), the Postgres server's too. Empty when either was not measured."""
    a, b = mine.get("cpu_ms_per_message"), theirs.get("cpu_ms_per_message")
    if not a or not b or not b["process"]:
        return {}
    out = {"process": round(a["process"] / b["process"], 3)}
    if postgres and a.get("postgres") is not None and b.get("postgres"):
        out["postgres"] = round(a["postgres"] / b["postgres"], 3)
    return {**out, "reads": "ours / peer, CPU ms per message: lower is better for Bullpen"}


def cpu_split(ours: dict[str, Any], adapter_only: dict[str, Any], echo: dict[str, Any],
              durable: dict[str, Any]) -> dict[str, Any]:
    """Where a message's CPU goes, from sides measured in the same rounds: our core (ours less
    our adapter alone doing the echo peer's work: the store, the agent, the pipeline) beside
    what persisting costs the durable peer (it less the echo peer). Empty unless every side's
    CPU was measured."""
    a, b, e, d = (side.get("cpu_ms_per_message") for side in (ours, adapter_only, echo, durable))
    if not (a and b and e and d):
        return {}
    return {
        "ours": a["process"], "our_adapter_alone": b["process"],
        "our_core": round(a["process"] - b["process"], 2),
        "echo_peer": e["process"], "durable_peer": d["process"],
        "durable_peer_persistence": round(d["process"] - e["process"], 2),
        "postgres": {"ours": a.get("postgres"), "durable_peer": d.get("postgres")},
        "reads": ("process CPU ms per message, median of the closed-loop rounds (the Postgres "
                  "server's apart): our_core = ours - our_adapter_alone, "
                  "durable_peer_persistence = durable_peer - echo_peer; lower is cheaper"),
    }


def ratio(mine: dict[str, Any], theirs: dict[str, Any]) -> float:
    """Our throughput over the peer's (0 when the peer's is 0)."""
    return float(mine["messages_per_s"] / theirs["messages_per_s"]) \
        if theirs["messages_per_s"] else 0.0


FIRST_EDIT_TARGETS = {"target_ratio": TARGET_RATIO,
                      "target_p99_first_edit_ms": TARGET_P99_FIRST_EDIT_MS}


def meets_first_edit_targets(mine: dict[str, Any], theirs: dict[str, Any]) -> bool:
    """At least TARGET_RATIO of the peer's throughput, p99 to first edit (paced) under
    TARGET_P99_FIRST_EDIT_MS: the targets of the platforms whose answers are edited."""
    return ratio(mine, theirs) >= TARGET_RATIO \
        and mine["paced"]["first_edit_ms"]["p99"] < TARGET_P99_FIRST_EDIT_MS


async def persisted(app: Any) -> dict[str, int]:
    """Once the App's gateway is idle: the inbound events and messages it has stored."""
    await app.gateway.idle()
    pool = app.db.pool
    return {
        "inbound_events": int(await pool.fetchval("SELECT count(*) FROM inbound_events")),
        "messages": int(await pool.fetchval("SELECT count(*) FROM messages")),
    }


async def stored(pool: Any, message_ids: list[str]) -> int:
    """How many of these message ids the inbound table holds."""
    return int(await pool.fetchval(
        "SELECT count(*) FROM inbound_events WHERE message_id = ANY($1::text[])", message_ids))


def report(*, platform: str, chats: int, rounds: int, ours: dict[str, Any],
           persisted: dict[str, int], peer: str, peer_result: dict[str, Any],
           durable_peer: str, durable_result: dict[str, Any], ceiling: str,
           ceiling_result: dict[str, Any], adapter_only: dict[str, Any] | None = None,
           targets: dict[str, float], forged_statuses: list[int] | None = None,
           forged_reached_core: int = 0, within_target: bool) -> dict[str, Any]:
    """The JSON a gateway bench prints: ours against the echo peer, the durable peer (the same
    bot persisting each question and reply) and the ceiling (the fake's own maximum rate with
    the least client), and our adapter alone when measured; the targets; the forged requests
    when sent."""
    out: dict[str, Any] = {
        "bench": "gateway",
        "platform": platform,
        "chats": chats,
        "rounds": rounds,
        "ours": ours,
        "persisted": persisted,
        "peer": peer,
        "peer_result": peer_result,
        "throughput_ratio": round(ratio(ours, peer_result), 3),
        "ratio_reads": "ours / peer: higher is better for Bullpen",
        **({"cpu_per_message_ratio": cpu_ratio(ours, peer_result)}
           if cpu_ratio(ours, peer_result) else {}),
        "durable_peer": durable_peer,
        "durable_peer_result": durable_result,
        "durable_throughput_ratio": round(ratio(ours, durable_result), 3),
        "durable_ratio_reads": "ours / durable peer: higher is better for Bullpen",
        **({"durable_cpu_per_message_ratio": cpu_ratio(ours, durable_result, postgres=True)}
           if cpu_ratio(ours, durable_result) else {}),
        "ceiling": ceiling_result,
        "ceiling_about": ceiling,
        "ceiling_ratio": round(ratio(ours, ceiling_result), 3),
        "peer_ceiling_ratio": round(ratio(peer_result, ceiling_result), 3),
        "ceiling_reads": ("ceiling_ratio: ours / ceiling, peer_ceiling_ratio: echo peer / "
                          "ceiling; the ceiling is the fake's own maximum rate with the least "
                          "client, so 1 is the most a bot can read: higher is better"),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }
    if adapter_only is not None:
        out["adapter_only"] = adapter_only
        out["adapter_only_ratio"] = round(ratio(adapter_only, peer_result), 3)
        split = cpu_split(ours, adapter_only, peer_result, durable_result)
        if split:
            out["cpu_split"] = split
    out.update(targets)
    if forged_statuses is not None:
        out["forged_sent"] = len(forged_statuses)
        out["forged_statuses"] = dict(Counter(str(s) for s in forged_statuses))
        out["forged_reached_core"] = forged_reached_core  # forged requests that reached the core
    out["within_target"] = within_target
    out["cpus"] = os.cpu_count()
    return out


@asynccontextmanager
async def echoing(adapter: Any) -> AsyncIterator[None]:
    """Our `adapter` alone (no App), started doing what the echo peers do: a placeholder,
    edited to the echo (`adapter_only`); closed on exit."""
    from core.types import IncomingMessage, Reply

    async def echo(message: IncomingMessage) -> None:
        placeholder = await adapter.send(message.chat, Reply(text="…"))
        await adapter.edit(placeholder, Reply(text=message.text))

    await adapter.start(echo)
    try:
        yield
    finally:
        await adapter.aclose()


# --- ours ------------------------------------------------------------------------------------


@asynccontextmanager
async def our_app(database_url: str | None) -> AsyncIterator[Any]:
    """The real App (embedded Postgres in a temp dir unless `database_url`: every message
    persisted) with the agent on the scripted LLM at zero latency; no adapter yet (`serve`)."""
    from bot.app import App, build_modes
    from bot.gateway import Gateway
    from bot.settings import load_settings
    from core.agent.runner import AgentRunner, RunLimits
    from core.testing import ScriptedLLM, text

    with tempfile.TemporaryDirectory(prefix="bullpen-bench-") as tmp:
        # each chat is one person sending far more than a person may per minute: the rate
        # limit (a product rule, not the gateway's cost) is off here
        settings = load_settings(data_dir=Path(tmp), database_url=database_url, llm_plan=False,
                                 telegram_bot_token=None, rate_messages_per_minute=0)
        app = await App.create(settings)
        try:
            llm = ScriptedLLM(default=text(ANSWER))
            modes = build_modes(settings, app.registry, llm)  # type: ignore[arg-type]
            app.runner = AgentRunner(store=app.store, modes=modes, summarizer=llm,
                                     limits=RunLimits(max_input_chars=settings.max_input_chars))
            app.gateway = Gateway(store=app.store, runner=app.runner,
                                  preprocess=app.voice.preprocess)
            yield app
        finally:
            await app.aclose()
            # the embedded server outlives the pool (its last holder stops it at exit):
            # stopped here, or removing the temp dir races its writes and the bench dies at
            # the end with "Directory not empty: 'pgdata'"
            await app.db.stop_embedded()


async def serve(app: Any, adapter: Any, seen: Callable[[str], object] | None = None) -> None:
    """Start `adapter` on the App's gateway (the App closes it); `seen` is told the id of every
    message the adapter hands to the gateway."""
    if seen is None:
        await app.start_adapters([adapter])
        return
    from core.types import IncomingMessage

    handle = app.gateway.handler_for(adapter)

    async def counted(message: IncomingMessage) -> None:
        seen(message.message_id)
        await handle(message)

    await adapter.start(counted)
    app.adapters.append(adapter)
