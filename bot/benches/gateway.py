"""`bullpen bench gateway --platform telegram`: messages per second and latency through the real
Telegram adapter and App, against a bare python-telegram-bot echo bot on the same fake server.

The fake Bot API (`tests/fakes/telegram_server.py`, so the bench runs from a source checkout)
runs in its own process and drives a closed loop: each of `chats` chats sends a question, and
sends the next one when its answer is shown, `MESSAGES_PER_CHAT * repeat` times. It timestamps,
on its own clock, the update's availability to getUpdates, the first editMessageText of the
chat, and the call that shows the final text.

Ours: `App.create` on an embedded Postgres in a temp dir (every message persisted), the agent
on the scripted LLM at zero latency, the production edit interval (1 s), polling. The peer: a
PTB `Application` with concurrent updates whose handler replies with a placeholder and edits it
to the echoed text (the least a progressively edited reply takes), measured in the same run.
Targets: at least 0.7 of the peer's throughput, p99 to first edit under 300 ms.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator
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
OUR_TOKEN = "777000111:BENCH-ours-token-Xyz_0123456789"
PEER_TOKEN = "777000222:BENCH-peer-token-Xyz_0123456789"
QUESTION = "What is NVDA's latest close?"
ANSWER = ("NVDA closed at 181.02 in the last session of the snapshot; the 20-day average is "
          "176.40 and volume was in line with the month.")
FAKE = Path(__file__).resolve().parents[2] / "tests" / "fakes" / "telegram_server.py"
PEER = ("bare python-telegram-bot 22 echo bot on the same fake (its default httpx transport, "
        "concurrent updates): reply with a placeholder, then edit it to the echo")


@dataclass
class _Side:
    token: str
    chats: list[int]
    expect: str
    closed: list[list[dict[str, Any]]] = field(default_factory=list)
    paced: list[dict[str, Any]] = field(default_factory=list)


def run(*, platform: str = "telegram", chats: int = 100, repeat: int = 1,
        database_url: str | None = None) -> dict[str, Any]:
    """Both bots run side by side on one fake server process; their loads alternate, `repeat`
    rounds of (closed loop, paced), after one warm-up message per chat. Returns the JSON dict.
    Without `database_url`, an embedded Postgres runs in a temp dir."""
    if platform in ("discord", "slack", "wechat"):
        import importlib

        module = importlib.import_module(f"bot.benches.gateway_{platform}")
        result: dict[str, Any] = module.run(chats=chats, repeat=repeat,
                                            database_url=database_url)
        return result
    if platform != "telegram":
        raise ValueError(f"gateway bench: no platform {platform!r} "
                         "(telegram, discord, slack, wechat)")
    if not FAKE.exists():
        raise FileNotFoundError(f"gateway bench needs the source checkout's {FAKE}")
    return asyncio.run(_run(chats=chats, rounds=max(1, repeat), database_url=database_url))


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    peer = _Side(PEER_TOKEN, list(range(1_000_000, 1_000_000 + chats)), QUESTION)
    ours = _Side(OUR_TOKEN, list(range(2_000_000, 2_000_000 + chats)), ANSWER)
    async with _fake_server() as base, aiohttp.ClientSession(base) as control, \
            _echo_bot(base), _our_app(base, database_url) as app:
        for side in (peer, ours):
            await _load(control, side, 1)  # warm-up: users, conversations, connections
        for _ in range(rounds):
            for side in (peer, ours):
                side.closed.append(await _load(control, side, MESSAGES_PER_CHAT))
            for side in (peer, ours):
                side.paced += await _load(control, side, PACED_PER_CHAT, rate=PACED_RATE)
        await app.gateway.idle()
        pool = app.db.pool
        persisted = {
            "inbound_events": int(await pool.fetchval("SELECT count(*) FROM inbound_events")),
            "messages": int(await pool.fetchval("SELECT count(*) FROM messages")),
        }
    mine, theirs = _summary(ours), _summary(peer)
    ratio = mine["messages_per_s"] / theirs["messages_per_s"] if theirs["messages_per_s"] else 0.0
    p99 = mine["paced"]["first_edit_ms"]["p99"]
    return {
        "bench": "gateway",
        "platform": "telegram",
        "chats": chats,
        "rounds": rounds,
        "ours": mine,
        "persisted": persisted,
        "peer": PEER,
        "peer_result": theirs,
        "throughput_ratio": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
        "target_p99_first_edit_ms": TARGET_P99_FIRST_EDIT_MS,
        "within_target": ratio >= TARGET_RATIO and p99 < TARGET_P99_FIRST_EDIT_MS,
        "cpus": os.cpu_count(),
    }


@asynccontextmanager
async def _fake_server() -> AsyncIterator[str]:
    """The fake Bot API in a child process; yields its base URL. Stops when stdin closes."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(FAKE), "--token", OUR_TOKEN, "--token", PEER_TOKEN,
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


async def _load(control: aiohttp.ClientSession, side: _Side, per_chat: int,
                rate: float | None = None) -> list[dict[str, Any]]:
    body = {"chats": side.chats, "per_chat": per_chat, "text": QUESTION, "expect": side.expect,
            "token": side.token, "rate": rate, "within_s": 300}
    async with control.post("/_fake/load", json=body,
                            timeout=aiohttp.ClientTimeout(total=330)) as resp:
        result = json.loads(await resp.text())
    if not result["complete"]:
        raise RuntimeError(f"gateway bench: only {len(result['rows'])} of "
                           f"{len(side.chats) * per_chat} answers arrived")
    rows: list[dict[str, Any]] = result["rows"]
    return rows


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))], 1)


def _latency(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    first = [(r["first_edit"] - r["pushed"]) * 1000 for r in rows if r["first_edit"]]
    final = [(r["final"] - r["pushed"]) * 1000 for r in rows]
    return {"first_edit_ms": {"p50": _pct(first, 0.5), "p99": _pct(first, 0.99)},
            "final_ms": {"p50": _pct(final, 0.5), "p99": _pct(final, 0.99)}}


def _summary(side: _Side) -> dict[str, Any]:
    """Throughput over the closed-loop rounds; latency both paced and at saturation."""
    spans = [max(r["final"] for r in rows) - min(r["pushed"] for r in rows)
             for rows in side.closed]
    messages = sum(len(rows) for rows in side.closed)
    return {
        "messages": messages,
        "seconds": round(sum(spans), 3),
        "messages_per_s": round(messages / sum(spans), 1),
        "paced": {"questions_per_s": PACED_RATE, "messages": len(side.paced),
                  **_latency(side.paced)},
        "saturated": _latency([r for rows in side.closed for r in rows]),
    }


# --- the peer --------------------------------------------------------------------------------


@asynccontextmanager
async def _echo_bot(base: str) -> AsyncIterator[None]:
    from telegram import Update
    from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        assert message is not None and message.text is not None
        placeholder = await message.reply_text("…")
        await placeholder.edit_text(message.text)

    app = (ApplicationBuilder().token(PEER_TOKEN).base_url(f"{base}/bot")
           .base_file_url(f"{base}/file/bot").concurrent_updates(True).job_queue(None)
           .get_updates_connection_pool_size(2)  # else its last getUpdates on stop times out
           .build())
    app.add_handler(MessageHandler(filters.TEXT, echo))
    await app.initialize()
    await app.start()
    assert app.updater is not None
    await app.updater.start_polling(poll_interval=0.0)
    try:
        yield
    finally:
        await app.updater.stop()
        await app.stop()
        await app.shutdown()


# --- ours ------------------------------------------------------------------------------------


@asynccontextmanager
async def _our_app(base: str, database_url: str | None) -> AsyncIterator[Any]:
    """The real App (embedded Postgres in a temp dir) with the agent on the scripted LLM at zero
    latency, and the real Telegram adapter polling the fake at the production edit interval."""
    from adapters.telegram import TelegramAdapter
    from bot.app import App, build_modes
    from bot.commands import COMMANDS
    from bot.gateway import Gateway
    from bot.settings import load_settings
    from core.agent.runner import AgentRunner, RunLimits
    from core.testing import ScriptedLLM, text

    with tempfile.TemporaryDirectory(prefix="bullpen-bench-") as tmp:
        settings = load_settings(data_dir=Path(tmp), database_url=database_url, llm_plan=False,
                                 telegram_bot_token=None)
        app = await App.create(settings)
        try:
            llm = ScriptedLLM(default=text(ANSWER))
            modes = build_modes(settings, app.registry, llm)  # type: ignore[arg-type]
            app.runner = AgentRunner(store=app.store, modes=modes, summarizer=llm,
                                     limits=RunLimits(max_input_chars=settings.max_input_chars))
            app.gateway = Gateway(store=app.store, runner=app.runner,
                                  preprocess=app.voice.preprocess)
            await app.start_adapters([TelegramAdapter(
                token=OUR_TOKEN, base_url=f"{base}/bot", base_file_url=f"{base}/file/bot",
                commands=COMMANDS)])
            yield app
        finally:
            await app.aclose()
