"""`bullpen bench gateway_slack` (for `bench gateway --platform slack`): messages per second and
latency through the real Slack adapter and App, against a bare slack-bolt echo app on the same
fake Slack, plus the forged requests that reached the core (must be 0).

The fake Slack (`tests/fakes/slack_server.py`, so the bench runs from a source checkout) runs
in its own process and drives the same load as the Telegram bench: each of `chats` DM channels
POSTs a signed `message` event to the bot's events URL and asks again when its answer shows,
`MESSAGES_PER_CHAT * repeat` times, then a paced round for latency. It timestamps, on its own
clock, the POST, the chat's first `chat.update` and the call that shows the final text.

Ours: `App.create` on an embedded Postgres in a temp dir (every message persisted), the agent
on the scripted LLM at zero latency, the production edit interval (1 s), HTTP events mode with
the signature checks on. The peer: a slack-bolt `AsyncApp` served by its own aiohttp server
(`app.web_app()`, signature checks on, its default acknowledge-then-run listener), with one
shared aiohttp session for its Web API client, whose `message` listener posts a placeholder and
`chat.update`s it to the echo (the least a progressively edited reply takes); same run.

Then the fake sends ours 10 each of: a wrong signing secret, a rightly signed 10-minute-old
timestamp (a replay), and a body changed after signing. `rejected_forged` counts those that
reached the core (the gateway's handler): it must be 0.
Targets: at least 0.7 of the peer's throughput, p99 to first edit under 300 ms, no forgery in.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp

from bot.benches.gateway import (
    ANSWER,
    MESSAGES_PER_CHAT,
    PACED_PER_CHAT,
    PACED_RATE,
    QUESTION,
    TARGET_P99_FIRST_EDIT_MS,
    TARGET_RATIO,
    _load,
    _Side,
    _summary,
)

ROOT = Path(__file__).resolve().parents[2]
FAKE = ROOT / "tests" / "fakes" / "slack_server.py"
OUR_TOKEN = "xoxb-1-BENCH-ours-token-0123456789"
PEER_TOKEN = "xoxb-2-BENCH-peer-token-0123456789"
SIGNING_SECRET = "bench-signing-secret-0123456789abcdef"
FORGED_PER_KIND = 10
PEER = ("bare slack-bolt 1.30 AsyncApp echo app on the same fake (aiohttp server, signature "
        "checks on, one shared aiohttp session): post a placeholder, then chat.update it to the "
        "echo")


def run(*, chats: int = 100, repeat: int = 1, database_url: str | None = None,
        platform: str = "slack") -> dict[str, Any]:
    """Both apps side by side on one fake process; their loads alternate, `repeat` rounds of
    (closed loop, paced), after one warm-up message per chat; then the forged requests.
    Without `database_url`, an embedded Postgres runs in a temp dir."""
    if platform != "slack":
        raise ValueError(f"gateway_slack bench: platform {platform!r} is not slack")
    if not FAKE.exists():
        raise FileNotFoundError(f"gateway bench needs the source checkout's {FAKE}")
    return asyncio.run(_run(chats=chats, rounds=max(1, repeat), database_url=database_url))


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    peer = _Side("peer", list(range(1_000_000, 1_000_000 + chats)), QUESTION)
    ours = _Side("ours", list(range(2_000_000, 2_000_000 + chats)), ANSWER)
    seen: set[str] = set()  # message ids that reached our gateway
    async with _fake_server() as base, aiohttp.ClientSession(base) as control, \
            _echo_app(base) as peer_url, _our_app(base, database_url, seen) as (app, our_url):
        for name, url in (("peer", peer_url), ("ours", our_url)):
            async with control.post("/_fake/target", json={"name": name, "url": url}):
                pass
        for side in (peer, ours):
            await _load(control, side, 1)  # warm-up: users, conversations, connections
        for _ in range(rounds):
            for side in (peer, ours):
                side.closed.append(await _load(control, side, MESSAGES_PER_CHAT))
            for side in (peer, ours):
                side.paced += await _load(control, side, PACED_PER_CHAT, rate=PACED_RATE)
        async with control.post("/_fake/forge",
                                json={"name": "ours", "count": FORGED_PER_KIND}) as resp:
            forged = await resp.json()
        await asyncio.sleep(0.2)
        await app.gateway.idle()
        pool = app.db.pool
        persisted = {
            "inbound_events": int(await pool.fetchval("SELECT count(*) FROM inbound_events")),
            "messages": int(await pool.fetchval("SELECT count(*) FROM messages")),
        }
        stored = int(await pool.fetchval(
            "SELECT count(*) FROM inbound_events WHERE message_id = ANY($1::text[])",
            forged["message_ids"]))
    reached = max(stored, len(seen & set(forged["message_ids"])))
    mine, theirs = _summary(ours), _summary(peer)
    ratio = mine["messages_per_s"] / theirs["messages_per_s"] if theirs["messages_per_s"] else 0.0
    p99 = mine["paced"]["first_edit_ms"]["p99"]
    return {
        "bench": "gateway",
        "platform": "slack",
        "chats": chats,
        "rounds": rounds,
        "ours": mine,
        "persisted": persisted,
        "peer": PEER,
        "peer_result": theirs,
        "throughput_ratio": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
        "target_p99_first_edit_ms": TARGET_P99_FIRST_EDIT_MS,
        "forged_sent": len(forged["statuses"]),
        "forged_statuses": dict(Counter(str(s) for s in forged["statuses"])),
        "rejected_forged": reached,
        "within_target": ratio >= TARGET_RATIO and p99 < TARGET_P99_FIRST_EDIT_MS
        and reached == 0,
        "cpus": os.cpu_count(),
    }


@asynccontextmanager
async def _fake_server() -> AsyncIterator[str]:
    """The fake Slack in a child process; yields its root URL. Stops when stdin closes."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(FAKE), "--token", OUR_TOKEN, "--token", PEER_TOKEN,
        "--signing-secret", SIGNING_SECRET,
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
async def _serve(server: Any) -> AsyncIterator[str]:
    """An aiohttp application on a free loopback port; yields its events URL."""
    from aiohttp import web

    runner = web.AppRunner(server, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}/slack/events"
    finally:
        await runner.cleanup()


# --- the peer --------------------------------------------------------------------------------


@asynccontextmanager
async def _echo_app(base: str) -> AsyncIterator[str]:
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=PEER_TOKEN, base_url=f"{base}/api/", session=session)
        app = AsyncApp(client=client, signing_secret=SIGNING_SECRET, name="echo")

        @app.event("message")
        async def echo(event: dict[str, Any], client: AsyncWebClient) -> None:
            placeholder = await client.chat_postMessage(channel=event["channel"], text="…")
            await client.chat_update(channel=event["channel"], ts=placeholder["ts"],
                                     text=event["text"])

        async with _serve(app.web_app(path="/slack/events", port=0)) as url:
            yield url


# --- ours ------------------------------------------------------------------------------------


@asynccontextmanager
async def _our_app(base: str, database_url: str | None,
                   seen: set[str]) -> AsyncIterator[tuple[Any, str]]:
    """The real App with the agent on the scripted LLM at zero latency and the real Slack
    adapter in HTTP events mode at the production edit interval; `seen` collects the message
    ids that reach the gateway."""
    from adapters.slack import SlackAdapter
    from bot.app import App, build_modes
    from bot.commands import COMMANDS
    from bot.gateway import Gateway
    from bot.settings import load_settings
    from core.agent.runner import AgentRunner, RunLimits
    from core.testing import ScriptedLLM, text
    from core.types import IncomingMessage

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
            adapter = SlackAdapter(bot_token=OUR_TOKEN, signing_secret=SIGNING_SECRET,
                                   api_base_url=f"{base}/api/", events_port=0,
                                   commands=COMMANDS)
            handle = app.gateway.handler_for(adapter)

            async def counted(message: IncomingMessage) -> None:
                seen.add(message.message_id)
                await handle(message)

            await adapter.start(counted)
            app.adapters.append(adapter)
            yield app, f"http://127.0.0.1:{adapter.events_port}/slack/events"
        finally:
            await app.aclose()
