"""`bullpen bench gateway_discord` (for `bench gateway --platform discord`): messages per second
and latency through the real Discord adapter and App, against a bare discord.py echo bot on the
same fake Discord, plus the forged interactions that reached the core (must be 0).

The fake Discord (`tests/fakes/discord_server.py`, so the bench runs from a source checkout)
runs in its own process with two bots and drives the same load as the Telegram bench: each of
`chats` DM channels gets a MESSAGE_CREATE on the bot's gateway connection and asks again when
its answer shows, `MESSAGES_PER_CHAT * repeat` times, then a paced round for latency. It
timestamps, on its own clock, the push, the channel's first message edit and the call that
shows the final text.

Ours: `App.create` on an embedded Postgres in a temp dir (every message persisted), the agent
on the scripted LLM at zero latency, the production edit interval (1 s), the gateway plus the
HTTP interactions endpoint with its signature check on. The peer: a `discord.Client` with the
same intents whose `on_message` sends a placeholder and edits it to the echo (the least a
progressively edited reply takes), in the same process and run. Between the two,
`adapter_only`: our adapter without the App doing what the peer does, so the adapter's own
cost is seen apart from the core's (a push gateway leaves the peer nothing to wait for: the
full path's ratio is bound by the core persisting every message, about ten queries each).

Then the fake sends our interactions endpoint 10 each of: a signature by another key, a rightly
signed 10-minute-old timestamp, a body changed after signing, and a replay of an interaction it
has just delivered for real. `rejected_forged` counts those that reached the core (the
gateway's handler or the inbound table): it must be 0.
Targets: at least 0.7 of the peer's throughput (the full path; `adapter_only` is held to the
same), p99 to first edit under 300 ms, no forgery in.
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

FAKE = Path(__file__).resolve().parents[2] / "tests" / "fakes" / "discord_server.py"
OUR_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDAx.BENCH-ours.token_0123456789abcdefghij"
PEER_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDAy.BENCH-peer.token_0123456789abcdefghij"
BARE_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDAz.BENCH-bare.token_0123456789abcdefghij"
FORGED_PER_KIND = 10
PEER = ("bare discord.py 2.7 echo bot on the same fake (gateway, the same intents, its own "
        "event task per message): send a placeholder, then edit it to the echo")


def run(*, chats: int = 100, repeat: int = 1, database_url: str | None = None,
        platform: str = "discord") -> dict[str, Any]:
    """Both bots side by side on one fake process; their loads alternate, `repeat` rounds of
    (closed loop, paced), after one warm-up message per chat; then the forged interactions.
    Without `database_url`, an embedded Postgres runs in a temp dir."""
    if platform != "discord":
        raise ValueError(f"gateway_discord bench: platform {platform!r} is not discord")
    if not FAKE.exists():
        raise FileNotFoundError(f"gateway bench needs the source checkout's {FAKE}")
    return asyncio.run(_run(chats=chats, rounds=max(1, repeat), database_url=database_url))


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    peer = _Side(PEER_TOKEN, list(range(1_000_000, 1_000_000 + chats)), QUESTION)
    ours = _Side(OUR_TOKEN, list(range(2_000_000, 2_000_000 + chats)), ANSWER)
    bare = _Side(BARE_TOKEN, list(range(3_000_000, 3_000_000 + chats)), QUESTION)
    sides = (peer, bare, ours)
    seen: Counter[str] = Counter()  # message ids handed to our gateway
    async with _fake_process() as base, aiohttp.ClientSession(base) as control, \
            _our_app(base, database_url, seen) as (app, our_url), _echo_adapter(base), \
            _echo_bot(base):
        for side in sides:
            await _load(control, side, 1)  # warm-up: users, conversations, connections
        for _ in range(rounds):
            for side in sides:
                side.closed.append(await _load(control, side, MESSAGES_PER_CHAT))
            for side in sides:
                side.paced += await _load(control, side, PACED_PER_CHAT, rate=PACED_RATE)
        async with control.post("/_fake/forge", json={"url": our_url, "token": OUR_TOKEN,
                                                      "count": FORGED_PER_KIND}) as resp:
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
    handed = sum(seen[i] for i in forged["message_ids"]) + sum(
        max(0, seen[i] - 1) for i in forged["replayed_ids"])  # each once for real
    reached = max(stored, handed)
    mine, theirs, adapter_only = _summary(ours), _summary(peer), _summary(bare)
    ratio = mine["messages_per_s"] / theirs["messages_per_s"] if theirs["messages_per_s"] else 0.0
    adapter_ratio = adapter_only["messages_per_s"] / theirs["messages_per_s"] \
        if theirs["messages_per_s"] else 0.0
    p99 = mine["paced"]["first_edit_ms"]["p99"]
    return {
        "bench": "gateway",
        "platform": "discord",
        "chats": chats,
        "rounds": rounds,
        "ours": mine,
        "persisted": persisted,
        "peer": PEER,
        "peer_result": theirs,
        "throughput_ratio": round(ratio, 3),
        "adapter_only": adapter_only,
        "adapter_only_ratio": round(adapter_ratio, 3),
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
async def _fake_process() -> AsyncIterator[str]:
    """The fake Discord in a child process with both bots; yields its root URL."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(FAKE), "--token", OUR_TOKEN, "--token", PEER_TOKEN, "--token",
        BARE_TOKEN,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        yield f"http://127.0.0.1:{int(line)}"
    finally:
        proc.stdin.close()  # the fake stops when its stdin closes
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()


# --- the peer --------------------------------------------------------------------------------


@asynccontextmanager
async def _echo_bot(base: str) -> AsyncIterator[None]:
    import discord

    from adapters.discord import pointed_at

    class Echo(discord.Client):
        connected = asyncio.Event()

        async def on_connect(self) -> None:
            self.connected.set()

        async def on_message(self, message: discord.Message) -> None:
            if message.author.bot:
                return
            placeholder = await message.channel.send("…")
            await placeholder.edit(content=message.content)

    intents = discord.Intents.none()
    intents.guilds = intents.guild_messages = intents.dm_messages = True
    with pointed_at(f"{base}/api/v10", base.replace("http", "ws", 1) + "/gateway"):
        bot = Echo(intents=intents, max_messages=None, chunk_guilds_at_startup=False)
        await bot.login(PEER_TOKEN)
        gateway = asyncio.create_task(bot.connect(), name="bench-echo-gateway")
        try:
            await asyncio.wait_for(bot.connected.wait(), 30)
            yield
        finally:
            await bot.close()
            gateway.cancel()
            await asyncio.gather(gateway, return_exceptions=True)


@asynccontextmanager
async def _echo_adapter(base: str) -> AsyncIterator[None]:
    """Our adapter alone (no App), doing what the peer does: a placeholder, edited to the echo."""
    from adapters.discord import DiscordAdapter
    from core.types import IncomingMessage, Reply

    adapter = DiscordAdapter(token=BARE_TOKEN, api_base_url=f"{base}/api/v10",
                             gateway_url=base.replace("http", "ws", 1) + "/gateway")

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
async def _our_app(base: str, database_url: str | None,
                   seen: Counter[str]) -> AsyncIterator[tuple[Any, str]]:
    """The real App with the agent on the scripted LLM at zero latency and the real Discord
    adapter (gateway, and HTTP interactions with the application's public key) at the
    production edit interval; `seen` counts the message ids that reach the gateway."""
    from adapters.discord import DiscordAdapter
    from bot.app import App, build_modes
    from bot.commands import COMMANDS
    from bot.gateway import Gateway
    from bot.settings import load_settings
    from core.agent.runner import AgentRunner, RunLimits
    from core.testing import ScriptedLLM, text
    from core.types import IncomingMessage

    async with aiohttp.ClientSession() as http, http.get(
            f"{base}/api/v10/oauth2/applications/@me",
            headers={"Authorization": f"Bot {OUR_TOKEN}"}) as resp:
        public_key = (await resp.json())["verify_key"]
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
            adapter = DiscordAdapter(
                token=OUR_TOKEN, api_base_url=f"{base}/api/v10",
                gateway_url=base.replace("http", "ws", 1) + "/gateway", public_key=public_key,
                interactions_port=0, commands=COMMANDS)
            handle = app.gateway.handler_for(adapter)

            async def counted(message: IncomingMessage) -> None:
                seen[message.message_id] += 1
                await handle(message)

            await adapter.start(counted)
            app.adapters.append(adapter)
            yield app, f"http://127.0.0.1:{adapter.interactions_port}/interactions"
        finally:
            await app.aclose()
