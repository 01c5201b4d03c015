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
progressively edited reply takes), in the same process and run; and the same bot persisting
each question and each reply with asyncpg on the same Postgres (`gateway_common.peer_store`).
The ceiling: the fake's own maximum rate, driven by the least client that answers (raw
aiohttp: the gateway websocket's MESSAGE_CREATE, POST the message, PATCH it). Between the two,
`adapter_only`: our adapter without the App doing what the peer does, so the adapter's own
cost is seen apart from the core's (a push gateway leaves the peer nothing to wait for: the
full path's ratio is bound by the core persisting every message, about ten queries each).

Then the fake sends our interactions endpoint 10 each of: a signature by another key, a rightly
signed 10-minute-old timestamp, a body changed after signing, and a replay of an interaction it
has just delivered for real. `forged_reached_core` counts those that reached the core (the
gateway's handler or the inbound table): it must be 0.
Targets: at least 0.7 of the peer's throughput (the full path; `adapter_only` is held to the
same), p99 to first edit under 300 ms, no forgery in.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from bot.benches import gateway_common as common

FAKE = common.FAKES / "discord_server.py"
OUR_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDAx.BENCH-ours.token_0123456789abcdefghij"
PEER_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDAy.BENCH-peer.token_0123456789abcdefghij"
BARE_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDAz.BENCH-bare.token_0123456789abcdefghij"
DURABLE_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDA0.BENCH-durable.token_0123456789abcdefg"
CEILING_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDA1.BENCH-ceiling.token_0123456789abcdefg"
INTENTS = (1 << 0) | (1 << 9) | (1 << 12)  # guilds, guild messages, DM messages: the peers'
FORGED_PER_KIND = 10
PEER = ("bare discord.py 2.7 echo bot on the same fake (gateway, the same intents, its own "
        "event task per message): send a placeholder, then edit it to the echo")
DURABLE_PEER = ("the same discord.py echo bot persisting each question and each reply with "
                "asyncpg (gateway_common.peer_store: one row each, synchronous commit, the "
                "same Postgres as ours)")
CEILING = ("the fake's own maximum rate: raw aiohttp, no SDK, the gateway websocket's "
           "MESSAGE_CREATE (raw JSON), then POST the placeholder message and PATCH it to the "
           "echo")


def run(*, chats: int = 100, repeat: int = 3, database_url: str | None = None,
        platform: str = "discord") -> dict[str, Any]:
    """The bots side by side on one fake process; their loads alternate, `repeat` rounds of
    (closed loop, paced), after one warm-up message per chat; then the forged interactions.
    Without `database_url`, an embedded Postgres runs in a temp dir."""
    if platform != "discord":
        raise ValueError(f"gateway_discord bench: platform {platform!r} is not discord")
    return common.run_bench(FAKE, _run, chats=chats, repeat=repeat, database_url=database_url)


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    peer = common.Side(PEER_TOKEN, range(1_000_000, 1_000_000 + chats), common.QUESTION)
    ours = common.Side(OUR_TOKEN, range(2_000_000, 2_000_000 + chats), common.ANSWER)
    bare = common.Side(BARE_TOKEN, range(3_000_000, 3_000_000 + chats), common.QUESTION)
    durable = common.Side(DURABLE_TOKEN, range(4_000_000, 4_000_000 + chats), common.QUESTION)
    ceiling = common.Side(CEILING_TOKEN, range(5_000_000, 5_000_000 + chats), common.QUESTION)
    seen: Counter[str] = Counter()  # message ids handed to our gateway
    async with common.fake_process(FAKE, "--token", OUR_TOKEN, "--token", PEER_TOKEN,
                                   "--token", BARE_TOKEN, "--token", DURABLE_TOKEN,
                                   "--token", CEILING_TOKEN) as base, \
            aiohttp.ClientSession(base) as control, \
            _our_app(base, database_url, seen) as (app, our_url), _echo_adapter(base), \
            common.peer_store(app.db.dsn, platform="discord") as store, \
            _echo_bot(base, PEER_TOKEN), _echo_bot(base, DURABLE_TOKEN, store=store), \
            _ceiling(base):
        await common.drive(control, (peer, durable, bare, ceiling, ours), rounds,
                           postgres=await common.postgres_cpu(app.db.pool))
        async with control.post("/_fake/forge", json={"url": our_url, "token": OUR_TOKEN,
                                                      "count": FORGED_PER_KIND}) as resp:
            forged = await resp.json()
        await asyncio.sleep(0.2)
        counts = await common.persisted(app)
        in_store = await common.stored(app.db.pool, forged["message_ids"])
    handed = sum(seen[i] for i in forged["message_ids"]) + sum(
        max(0, seen[i] - 1) for i in forged["replayed_ids"])  # each once for real
    reached = max(in_store, handed)
    mine, theirs = common.summary(ours), common.summary(peer)
    return common.report(
        platform="discord", chats=chats, rounds=rounds, ours=mine, persisted=counts,
        peer=PEER, peer_result=theirs, durable_peer=DURABLE_PEER,
        durable_result=common.summary(durable), ceiling=CEILING,
        ceiling_result=common.summary(ceiling), adapter_only=common.summary(bare),
        targets=common.FIRST_EDIT_TARGETS,
        forged_statuses=forged["statuses"], forged_reached_core=reached,
        within_target=common.meets_first_edit_targets(mine, theirs) and reached == 0)


# --- the peers -------------------------------------------------------------------------------


@asynccontextmanager
async def _echo_bot(base: str, token: str, *,
                    store: common.Store | None = None) -> AsyncIterator[None]:
    """A discord.py echo bot; with `store`, it stores the question before answering and the
    reply after."""
    import discord

    from adapters.discord import pointed_at

    class Echo(discord.Client):
        connected = asyncio.Event()

        async def on_connect(self) -> None:
            self.connected.set()

        async def on_message(self, message: discord.Message) -> None:
            if message.author.bot:
                return
            if store is not None:
                await store(message.channel.id, message.id, "user", message.content)
            placeholder = await message.channel.send("…")
            await placeholder.edit(content=message.content)
            if store is not None:
                await store(message.channel.id, message.id, "assistant", message.content)

    intents = discord.Intents.none()
    intents.guilds = intents.guild_messages = intents.dm_messages = True
    with pointed_at(f"{base}/api/v10", base.replace("http", "ws", 1) + "/gateway"):
        bot = Echo(intents=intents, max_messages=None, chunk_guilds_at_startup=False)
        await bot.login(token)
        gateway = asyncio.create_task(bot.connect(), name="bench-echo-gateway")
        try:
            await asyncio.wait_for(bot.connected.wait(), 30)
            yield
        finally:
            await bot.close()
            gateway.cancel()
            await asyncio.gather(gateway, return_exceptions=True)


@asynccontextmanager
async def _ceiling(base: str) -> AsyncIterator[None]:
    """The least client that answers: one aiohttp session, the gateway's websocket (HELLO,
    IDENTIFY, heartbeats at the interval HELLO gives), and per MESSAGE_CREATE a task that POSTs
    the placeholder and PATCHes it to the echo. No SDK, no cache, no persistence."""
    api = f"{base}/api/v10"
    headers = {"Authorization": f"Bot {CEILING_TOKEN}"}
    tasks = common.Owned()

    async def answer(http: aiohttp.ClientSession, message: dict[str, Any]) -> None:
        url = f"{api}/channels/{message['channel_id']}/messages"
        async with http.post(url, json={"content": "…"}, headers=headers) as resp:
            sent = await resp.json()
        async with http.patch(f"{url}/{sent['id']}", json={"content": message["content"]},
                              headers=headers) as resp:
            await resp.read()

    async def beat(ws: aiohttp.ClientWebSocketResponse, every_s: float) -> None:
        while True:
            await asyncio.sleep(every_s)
            await ws.send_json({"op": 1, "d": None})

    async def read(http: aiohttp.ClientSession, ws: aiohttp.ClientWebSocketResponse) -> None:
        async for frame in ws:
            if frame.type != aiohttp.WSMsgType.TEXT:
                continue
            event = json.loads(frame.data)
            if event.get("t") == "MESSAGE_CREATE" and not event["d"]["author"].get("bot"):
                tasks.spawn(answer(http, event["d"]))

    gateway = base.replace("http", "ws", 1) + "/gateway"
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as http, \
            http.ws_connect(gateway, max_msg_size=0) as ws:
        hello = await ws.receive_json()
        tasks.spawn(beat(ws, hello["d"]["heartbeat_interval"] / 1000))
        await ws.send_json({"op": 2, "d": {"token": CEILING_TOKEN, "intents": INTENTS,
                                           "properties": {}}})
        while (await ws.receive_json()).get("t") != "READY":
            pass
        tasks.spawn(read(http, ws))
        try:
            yield
        finally:
            await tasks.aclose()


@asynccontextmanager
async def _echo_adapter(base: str) -> AsyncIterator[None]:
    """Our adapter alone (no App), doing what the peer does: a placeholder, edited to the echo."""
    from adapters.discord import DiscordAdapter

    async with common.echoing(DiscordAdapter(
            token=BARE_TOKEN, api_base_url=f"{base}/api/v10",
            gateway_url=base.replace("http", "ws", 1) + "/gateway")):
        yield


# --- ours ------------------------------------------------------------------------------------


@asynccontextmanager
async def _our_app(base: str, database_url: str | None,
                   seen: Counter[str]) -> AsyncIterator[tuple[Any, str]]:
    """The real App with the real Discord adapter (gateway, and HTTP interactions with the
    application's public key) at the production edit interval; `seen` counts the message ids
    that reach the gateway."""
    from adapters.discord import DiscordAdapter
    from bot.commands import COMMANDS

    async with aiohttp.ClientSession() as http, http.get(
            f"{base}/api/v10/oauth2/applications/@me",
            headers={"Authorization": f"Bot {OUR_TOKEN}"}) as resp:
        public_key = (await resp.json())["verify_key"]
    async with common.our_app(database_url) as app:
        adapter = DiscordAdapter(
            token=OUR_TOKEN, api_base_url=f"{base}/api/v10",
            gateway_url=base.replace("http", "ws", 1) + "/gateway", public_key=public_key,
            interactions_port=0, commands=COMMANDS)
        await common.serve(app, adapter, lambda message_id: seen.update((message_id,)))
        yield app, f"http://127.0.0.1:{adapter.interactions_port}/interactions"
