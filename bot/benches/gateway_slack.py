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
`chat.update`s it to the echo (the least a progressively edited reply takes); same run. The
durable peer: the same app persisting each question and each reply with asyncpg on the same
Postgres (`gateway_common.peer_store`). The ceiling: the fake's own maximum rate, driven by the
least client that answers (raw aiohttp: an events endpoint acking 200 with no signature check,
then chat.postMessage and chat.update). Between them, `adapter_only`: our Slack adapter without the
App (its signature check on), doing what the echo peer does; with it, `cpu_split` says what our
core costs per message beyond the platform.

Then the fake sends ours 10 each of: a wrong signing secret, a rightly signed 10-minute-old
timestamp (a replay), and a body changed after signing. `forged_reached_core` counts those that
reached the core (the gateway's handler): it must be 0.
Targets: at least 0.7 of the peer's throughput, p99 to first edit under 300 ms, no forgery in.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from bot.benches import gateway_common as common

FAKE = common.FAKES / "slack_server.py"
OUR_TOKEN = "xoxb-1-BENCH-ours-token-0123456789"
PEER_TOKEN = "xoxb-2-BENCH-peer-token-0123456789"
DURABLE_TOKEN = "xoxb-3-BENCH-durable-token-0123456789"
CEILING_TOKEN = "xoxb-4-BENCH-ceiling-token-0123456789"
BARE_TOKEN = "xoxb-5-BENCH-bare-token-0123456789"
SIGNING_SECRET = "bench-signing-secret-0123456789abcdef"
FORGED_PER_KIND = 10
PEER = ("bare slack-bolt 1.30 AsyncApp echo app on the same fake (aiohttp server, signature "
        "checks on, one shared aiohttp session): post a placeholder, then chat.update it to the "
        "echo")
DURABLE_PEER = ("the same slack-bolt echo app persisting each question and each reply with "
                "asyncpg (gateway_common.peer_store: one row each, synchronous commit, the "
                "same Postgres as ours)")
CEILING = ("the fake's own maximum rate: raw aiohttp, no SDK, an events endpoint answering 200 "
           "at once (signature check skipped), then chat.postMessage and chat.update per "
           "message")


def run(*, chats: int = 100, repeat: int = 3, database_url: str | None = None,
        platform: str = "slack") -> dict[str, Any]:
    """The apps side by side on one fake process; their loads alternate, `repeat` rounds of
    (closed loop, paced), after one warm-up message per chat; then the forged requests.
    Without `database_url`, an embedded Postgres runs in a temp dir."""
    if platform != "slack":
        raise ValueError(f"gateway_slack bench: platform {platform!r} is not slack")
    return common.run_bench(FAKE, _run, chats=chats, repeat=repeat, database_url=database_url)


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    # the fake posts a side's questions to the events URL registered under its name
    peer = common.Side("peer", range(1_000_000, 1_000_000 + chats), common.QUESTION)
    ours = common.Side("ours", range(2_000_000, 2_000_000 + chats), common.ANSWER)
    durable = common.Side("durable", range(4_000_000, 4_000_000 + chats), common.QUESTION)
    ceiling = common.Side("ceiling", range(5_000_000, 5_000_000 + chats), common.QUESTION)
    bare = common.Side("bare", range(3_000_000, 3_000_000 + chats), common.QUESTION)
    seen: set[str] = set()  # message ids that reached our gateway
    async with common.fake_process(FAKE, "--token", OUR_TOKEN, "--token", PEER_TOKEN,
                                   "--token", DURABLE_TOKEN, "--token", CEILING_TOKEN,
                                   "--token", BARE_TOKEN,
                                   "--signing-secret", SIGNING_SECRET) as base, \
            aiohttp.ClientSession(base) as control, _echo_app(base, PEER_TOKEN) as peer_url, \
            _our_app(base, database_url, seen) as (app, our_url), \
            common.peer_store(app.db.dsn, platform="slack") as store, \
            _echo_app(base, DURABLE_TOKEN, store=store) as durable_url, \
            _ceiling(base) as ceiling_url, _echo_adapter(base) as bare_url:
        for name, url in (("peer", peer_url), ("ours", our_url), ("durable", durable_url),
                          ("ceiling", ceiling_url), ("bare", bare_url)):
            async with control.post("/_fake/target", json={"name": name, "url": url}):
                pass
        await common.drive(control, (peer, durable, bare, ceiling, ours), rounds,
                           postgres=await common.postgres_cpu(app.db.pool))
        async with control.post("/_fake/forge",
                                json={"name": "ours", "count": FORGED_PER_KIND}) as resp:
            forged = await resp.json()
        await asyncio.sleep(0.2)
        counts = await common.persisted(app)
        in_store = await common.stored(app.db.pool, forged["message_ids"])
    reached = max(in_store, len(seen & set(forged["message_ids"])))
    mine, theirs = common.summary(ours), common.summary(peer)
    return common.report(
        platform="slack", chats=chats, rounds=rounds, ours=mine, persisted=counts,
        peer=PEER, peer_result=theirs, durable_peer=DURABLE_PEER,
        durable_result=common.summary(durable), ceiling=CEILING,
        ceiling_result=common.summary(ceiling), adapter_only=common.summary(bare),
        targets=common.FIRST_EDIT_TARGETS, forged_statuses=forged["statuses"],
        forged_reached_core=reached,
        within_target=common.meets_first_edit_targets(mine, theirs) and reached == 0)


# --- the peers -------------------------------------------------------------------------------


@asynccontextmanager
async def _echo_app(base: str, token: str, *,
                    store: common.Store | None = None) -> AsyncIterator[str]:
    """A slack-bolt echo app; with `store`, it stores the question before answering and the
    reply after. Yields its events URL."""
    from slack_bolt.async_app import AsyncApp
    from slack_sdk.web.async_client import AsyncWebClient

    async with aiohttp.ClientSession() as session:
        client = AsyncWebClient(token=token, base_url=f"{base}/api/", session=session)
        app = AsyncApp(client=client, signing_secret=SIGNING_SECRET, name="echo")

        @app.event("message")
        async def echo(event: dict[str, Any], client: AsyncWebClient) -> None:
            if store is not None:
                await store(event["channel"], event["ts"], "user", event["text"])
            placeholder = await client.chat_postMessage(channel=event["channel"], text="…")
            await client.chat_update(channel=event["channel"], ts=placeholder["ts"],
                                     text=event["text"])
            if store is not None:
                await store(event["channel"], event["ts"], "assistant", event["text"])

        async with common.listen(app.web_app(path="/slack/events", port=0)) as root:
            yield f"{root}/slack/events"


@asynccontextmanager
async def _ceiling(base: str) -> AsyncIterator[str]:
    """The least client that answers: an aiohttp events endpoint that acknowledges with 200
    at once (no signature check: skipped, the one thing this side leaves out that a real app
    must do) and per `message` event a task that calls chat.postMessage and chat.update with
    raw JSON on one aiohttp session. No SDK. Yields its events URL."""
    from aiohttp import web

    tasks = common.Owned()
    headers = {"Authorization": f"Bearer {CEILING_TOKEN}"}

    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as http:

        async def answer(event: dict[str, Any]) -> None:
            async with http.post(f"{base}/api/chat.postMessage", headers=headers,
                                 json={"channel": event["channel"], "text": "…"}) as resp:
                ts = (await resp.json())["ts"]
            async with http.post(f"{base}/api/chat.update", headers=headers,
                                 json={"channel": event["channel"], "ts": ts,
                                       "text": event["text"]}) as resp:
                await resp.read()

        async def events(request: web.Request) -> web.Response:
            event = (await request.json()).get("event") or {}
            if event.get("type") == "message" and "subtype" not in event:
                tasks.spawn(answer(event))
            return web.Response()

        server = web.Application()
        server.router.add_post("/slack/events", events)
        try:
            async with common.listen(server) as root:
                yield f"{root}/slack/events"
        finally:
            await tasks.aclose()


@asynccontextmanager
async def _echo_adapter(base: str) -> AsyncIterator[str]:
    """Our adapter alone (no App, its signature check on), doing what the peer does: a
    placeholder, updated to the echo. Yields its events URL."""
    from adapters.slack import SlackAdapter

    adapter = SlackAdapter(bot_token=BARE_TOKEN, signing_secret=SIGNING_SECRET,
                           api_base_url=f"{base}/api/", events_port=0)
    async with common.echoing(adapter):
        yield f"http://127.0.0.1:{adapter.events_port}/slack/events"


# --- ours ------------------------------------------------------------------------------------


@asynccontextmanager
async def _our_app(base: str, database_url: str | None,
                   seen: set[str]) -> AsyncIterator[tuple[Any, str]]:
    """The real App with the real Slack adapter in HTTP events mode at the production edit
    interval; `seen` collects the message ids that reach the gateway."""
    from adapters.slack import SlackAdapter
    from bot.commands import COMMANDS

    async with common.our_app(database_url) as app:
        adapter = SlackAdapter(bot_token=OUR_TOKEN, signing_secret=SIGNING_SECRET,
                               api_base_url=f"{base}/api/", events_port=0, commands=COMMANDS)
        await common.serve(app, adapter, seen.add)
        yield app, f"http://127.0.0.1:{adapter.events_port}/slack/events"
