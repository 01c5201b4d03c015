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
SIGNING_SECRET = "bench-signing-secret-0123456789abcdef"
FORGED_PER_KIND = 10
PEER = ("bare slack-bolt 1.30 AsyncApp echo app on the same fake (aiohttp server, signature "
        "checks on, one shared aiohttp session): post a placeholder, then chat.update it to the "
        "echo")


def run(*, chats: int = 100, repeat: int = 3, database_url: str | None = None,
        platform: str = "slack") -> dict[str, Any]:
    """Both apps side by side on one fake process; their loads alternate, `repeat` rounds of
    (closed loop, paced), after one warm-up message per chat; then the forged requests.
    Without `database_url`, an embedded Postgres runs in a temp dir."""
    if platform != "slack":
        raise ValueError(f"gateway_slack bench: platform {platform!r} is not slack")
    return common.run_bench(FAKE, _run, chats=chats, repeat=repeat, database_url=database_url)


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    # the fake posts a side's questions to the events URL registered under its name
    peer = common.Side("peer", range(1_000_000, 1_000_000 + chats), common.QUESTION)
    ours = common.Side("ours", range(2_000_000, 2_000_000 + chats), common.ANSWER)
    seen: set[str] = set()  # message ids that reached our gateway
    async with common.fake_process(FAKE, "--token", OUR_TOKEN, "--token", PEER_TOKEN,
                            "--signing-secret", SIGNING_SECRET) as base, \
            aiohttp.ClientSession(base) as control, _echo_app(base) as peer_url, \
            _our_app(base, database_url, seen) as (app, our_url):
        for name, url in (("peer", peer_url), ("ours", our_url)):
            async with control.post("/_fake/target", json={"name": name, "url": url}):
                pass
        await common.drive(control, (peer, ours), rounds)
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
        peer=PEER, peer_result=theirs, targets=common.FIRST_EDIT_TARGETS,
        forged_statuses=forged["statuses"], forged_reached_core=reached,
        within_target=common.meets_first_edit_targets(mine, theirs) and reached == 0)


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

        async with common.listen(app.web_app(path="/slack/events", port=0)) as root:
            yield f"{root}/slack/events"


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
