"""`bullpen bench gateway --platform wechat`: messages per second and latency through the real
WeChat adapter and App, against a bare wechatpy echo server on the same fake, plus the forged
callbacks that reached the core (must be 0).

The fake WeChat (`tests/fakes/wechat_server.py`, so the bench runs from a source checkout)
runs in its own process and drives a closed loop: each of `chats` users sends a question as a
signed callback, and sends the next one when the answer has arrived, `MESSAGES_PER_CHAT *
repeat` times. On its own clock it times the callback's HTTP answer (`ack_ms`: WeChat gives up
after 5 s), the first message the user sees (`first_edit_ms`: WeChat cannot edit, so this is the
first delivered message) and the one that completes the answer (`final_ms`).

Ours: `App.create` on an embedded Postgres in a temp dir (every message persisted), the agent
on the scripted LLM at zero latency, the adapter in plain mode acknowledging at once and
answering through the customer-service API (one more HTTP call per answer, made by wechatpy in
a thread). The peer: wechatpy's `check_signature` + `parse_message` + `create_reply` on aiohttp,
echoing in the callback's own answer (a passive reply: no API call at all), measured in the same
run. Between the two, `adapter_only`: our adapter without the App, echoing each text through
the customer-service API, so the adapter's own cost is seen apart from the core's. Then, per
user of a sample, a forged, a stale and a replayed callback go to ours; `forged_reached_core`
counts those that reached the core.

Targets: `adapter_only` at least 0.2 of the peer's throughput (see TARGET_ADAPTER_RATIO), the
callback's answer (`ack_ms`, saturated) under 1 s at p99, and no forged callback in the core.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
from aiohttp import web

from bot.benches import gateway_common as common

# A floor against regressions, not parity: per message the peer serves one HTTP exchange (the
# callback, answered in place); the adapter serves the callback and makes one customer-service
# call through wechatpy's synchronous `requests` in a thread, about twice the CPU of the first.
# Measured on 2 cores: 0.22-0.26 (the peer's closed loop lasts ~0.1 s: use --repeat to steady).
TARGET_ADAPTER_RATIO = 0.2
TARGET_P99_ACK_MS = 1000.0  # well inside WeChat's 5 s
FORGED_USERS = 10
TOKEN = "bullpen-callback-token"  # the fake's defaults (tests/fakes/wechat_server.py)
APP_ID = "wx5f1a2b3c4d5e6f70"
APP_SECRET = "fake-app-secret-0123456789abcdef"
FAKE = common.FAKES / "wechat_server.py"
PEER = ("bare wechatpy 1.8 echo server on aiohttp against the same fake: check_signature, "
        "parse_message, create_reply as the callback's passive reply")


def run(*, chats: int = 100, repeat: int = 3, platform: str = "wechat",
        database_url: str | None = None) -> dict[str, Any]:
    """Both servers on one fake process, their loads alternating, `repeat` rounds of (closed
    loop, paced) after one warm-up message per chat. Returns the JSON dict. Without
    `database_url`, an embedded Postgres runs in a temp dir."""
    if platform != "wechat":
        raise ValueError(f"wechat gateway bench: not for platform {platform!r}")
    return common.run_bench(FAKE, _run, chats=chats, repeat=repeat, database_url=database_url)


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    seen: set[str] = set()  # message ids our adapter handed to the gateway
    async with common.fake_process(FAKE) as base, aiohttp.ClientSession(base) as control, \
            _echo_server() as peer_url, _echo_adapter(base) as bare_url, \
            _our_app(base, database_url, seen) as (app, ours_url):
        # the fake posts a side's questions to its callback URL
        question, answer = common.QUESTION, common.ANSWER
        peer = common.Side(peer_url, [_openid(1_000_000 + i) for i in range(chats)], question)
        ours = common.Side(ours_url, [_openid(2_000_000 + i) for i in range(chats)], answer)
        bare = common.Side(bare_url, [_openid(3_000_000 + i) for i in range(chats)], question)
        await common.drive(control, (peer, bare, ours), rounds)
        users = list(ours.chats[:FORGED_USERS])
        async with control.post("/_fake/forge", json={"url": ours_url, "users": users}) as resp:
            forged = await resp.json()
        counts = await common.persisted(app)
        in_store = await common.stored(app.db.pool, forged["message_ids"])
    reached = max(in_store, len(seen & set(forged["message_ids"])))
    mine, theirs = common.summary(ours, with_acks=True), common.summary(peer, with_acks=True)
    adapter_only = common.summary(bare, with_acks=True)
    p99_ack = mine["saturated"]["ack_ms"]["p99"]
    return common.report(
        platform="wechat", chats=chats, rounds=rounds, ours=mine, persisted=counts,
        peer=PEER, peer_result=theirs, adapter_only=adapter_only,
        targets={"target_adapter_only_ratio": TARGET_ADAPTER_RATIO,
                 "target_p99_ack_ms": TARGET_P99_ACK_MS},
        forged_statuses=forged["statuses"], forged_reached_core=reached,
        within_target=common.ratio(adapter_only, theirs) >= TARGET_ADAPTER_RATIO
        and p99_ack < TARGET_P99_ACK_MS and reached == 0)


def _openid(n: int) -> str:
    return f"oBullpen{n:020d}"


# --- the peer --------------------------------------------------------------------------------


@asynccontextmanager
async def _echo_server() -> AsyncIterator[str]:
    """A bare wechatpy echo server (plain mode, passive replies); yields its callback URL."""
    from wechatpy import create_reply, parse_message
    from wechatpy.exceptions import InvalidSignatureException
    from wechatpy.utils import check_signature

    async def callback(request: web.Request) -> web.Response:
        q = request.query
        try:
            check_signature(TOKEN, q.get("signature", ""), q.get("timestamp", ""),
                            q.get("nonce", ""))
        except InvalidSignatureException:
            return web.Response(status=403)
        message = parse_message(await request.read())
        if message.type != "text":
            return web.Response(text="success")
        return web.Response(text=create_reply(message.content, message).render(),
                            content_type="application/xml")

    server = web.Application()
    server.router.add_post("/wechat", callback)
    async with common.listen(server) as root:
        yield f"{root}/wechat"


@asynccontextmanager
async def _echo_adapter(base: str) -> AsyncIterator[str]:
    """Our adapter alone (no App): it echoes each text through the customer-service API."""
    from adapters.wechat import WeChatAdapter
    from core.types import IncomingMessage, Reply

    adapter = WeChatAdapter(token=TOKEN, app_id=APP_ID, app_secret=APP_SECRET,
                            api_base_url=f"{base}/cgi-bin/", port=0)

    async def echo(message: IncomingMessage) -> None:
        await adapter.send(message.chat, Reply(text=message.text, markup="plain"))

    await adapter.start(echo)
    try:
        yield f"http://127.0.0.1:{adapter.port}/wechat"
    finally:
        await adapter.aclose()


# --- ours ------------------------------------------------------------------------------------


@asynccontextmanager
async def _our_app(base: str, database_url: str | None,
                   seen: set[str]) -> AsyncIterator[tuple[Any, str]]:
    """The real App with the real WeChat adapter taking the fake's callbacks; yields it and its
    URL. `seen` collects the message ids that reach the gateway."""
    from adapters.wechat import WeChatAdapter

    async with common.our_app(database_url) as app:
        adapter = WeChatAdapter(token=TOKEN, app_id=APP_ID, app_secret=APP_SECRET,
                                api_base_url=f"{base}/cgi-bin/", port=0)
        await common.serve(app, adapter, seen.add)
        yield app, f"http://127.0.0.1:{adapter.port}/wechat"
