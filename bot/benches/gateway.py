"""`bullpen bench gateway --platform telegram`: messages per second and latency through the real
Telegram adapter and App, against two python-telegram-bot echo bots on the same fake server.

The fake Bot API (`tests/fakes/telegram_server.py`, so the bench runs from a source checkout)
runs in its own process and drives a closed loop: each of `chats` chats sends a question, and
sends the next one when its answer is shown, `MESSAGES_PER_CHAT` times a round. It timestamps,
on its own clock, the update's availability to getUpdates, the first editMessageText of the
chat, and the call that shows the final text.

Ours: `App.create` on an embedded Postgres in a temp dir (every message persisted), the agent
on the scripted LLM at zero latency, the production edit interval (1 s), polling. The peers, in
the same run and the same rounds, are what a competent PTB user would run: an `Application`
with concurrent updates on PTB's documented transport seam with aiohttp (`ptb_aiohttp`: PTB's
default httpx transport collapses with 100 requests in flight, so it measured httpx, not the
bot) whose handler replies with a placeholder and edits it to the echo (the least a
progressively edited reply takes); and the same bot persisting each question and each reply
with asyncpg on the same Postgres (`gateway_common.peer_store`: synchronous commit, one row
each), as a durable bot must. The ceiling: the fake's own maximum rate, driven by the least
client that answers (raw aiohttp: long-poll getUpdates, sendMessage, editMessageText).
Between them, `adapter_only`: our Telegram adapter without the App, doing what the echo peer does;
with it, `cpu_split` says what our core costs per message beyond the platform.
Throughput is over each round's steady window (see `gateway_common.steady_rate`); the ratios
read ours / peer (ours / ceiling), higher is better for Bullpen.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from bot.benches import gateway_common as common

OUR_TOKEN = "777000111:BENCH-ours-token-Xyz_0123456789"
PEER_TOKEN = "777000222:BENCH-peer-token-Xyz_0123456789"
DURABLE_TOKEN = "777000333:BENCH-durable-token-Xyz_012345678"
CEILING_TOKEN = "777000444:BENCH-ceiling-token-Xyz_012345678"
BARE_TOKEN = "777000555:BENCH-bare-token-Xyz_0123456789ab"
FAKE = common.FAKES / "telegram_server.py"
PEER = ("python-telegram-bot 22 echo bot on aiohttp (bot.benches.ptb_aiohttp; concurrent "
        "updates, polling): reply with a placeholder, then edit it to the echo")
DURABLE_PEER = ("the same PTB echo bot persisting each question and each reply with asyncpg "
                "(gateway_common.peer_store: one row each, synchronous commit, the same "
                "Postgres as ours)")
CEILING = ("the fake's own maximum rate: raw aiohttp, no SDK, long-polling getUpdates (raw "
           "JSON), then sendMessage and editMessageText per message")


def run(*, platform: str = "telegram", chats: int = 100, repeat: int = 3,
        database_url: str | None = None) -> dict[str, Any]:
    """The bots run side by side on one fake server process; their loads alternate, `repeat`
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
    return common.run_bench(FAKE, _run, chats=chats, repeat=repeat, database_url=database_url)


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    peer = common.Side(PEER_TOKEN, range(1_000_000, 1_000_000 + chats), common.QUESTION)
    durable = common.Side(DURABLE_TOKEN, range(3_000_000, 3_000_000 + chats), common.QUESTION)
    ceiling = common.Side(CEILING_TOKEN, range(4_000_000, 4_000_000 + chats), common.QUESTION)
    ours = common.Side(OUR_TOKEN, range(2_000_000, 2_000_000 + chats), common.ANSWER)
    bare = common.Side(BARE_TOKEN, range(5_000_000, 5_000_000 + chats), common.QUESTION)
    async with common.fake_process(FAKE, "--token", OUR_TOKEN, "--token", PEER_TOKEN,
                                   "--token", DURABLE_TOKEN, "--token", CEILING_TOKEN,
                                   "--token", BARE_TOKEN) as base, \
            aiohttp.ClientSession(base) as control, _our_app(base, database_url) as app, \
            common.peer_store(app.db.dsn, platform="telegram") as store, \
            _echo_bot(base, PEER_TOKEN), _echo_bot(base, DURABLE_TOKEN, store=store), \
            _ceiling(base), _echo_adapter(base):
        await common.drive(control, (peer, durable, bare, ceiling, ours), rounds,
                           postgres=await common.postgres_cpu(app.db.pool))
        counts = await common.persisted(app)
    mine, theirs = common.summary(ours), common.summary(peer)
    return common.report(
        platform="telegram", chats=chats, rounds=rounds, ours=mine, persisted=counts,
        peer=PEER, peer_result=theirs, durable_peer=DURABLE_PEER,
        durable_result=common.summary(durable), ceiling=CEILING,
        ceiling_result=common.summary(ceiling), adapter_only=common.summary(bare),
        targets=common.FIRST_EDIT_TARGETS,
        within_target=common.meets_first_edit_targets(mine, theirs))


# --- the peers -------------------------------------------------------------------------------


@asynccontextmanager
async def _echo_bot(base: str, token: str, *,
                    store: common.Store | None = None) -> AsyncIterator[None]:
    """A PTB echo bot on aiohttp; with `store`, it stores the question before answering and
    the reply after."""
    from telegram import Update
    from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

    from bot.benches.ptb_aiohttp import AiohttpRequest

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        assert message is not None and message.text is not None
        if store is not None:
            await store(message.chat_id, message.message_id, "user", message.text)
        placeholder = await message.reply_text("…")
        await placeholder.edit_text(message.text)
        if store is not None:
            await store(message.chat_id, message.message_id, "assistant", message.text)

    app = (ApplicationBuilder().token(token).base_url(f"{base}/bot")
           .base_file_url(f"{base}/file/bot").concurrent_updates(True).job_queue(None)
           .request(AiohttpRequest(connection_pool_size=256))
           .get_updates_request(AiohttpRequest(connection_pool_size=2, read_timeout=10.0))
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


@asynccontextmanager
async def _ceiling(base: str) -> AsyncIterator[None]:
    """The least client that answers: one aiohttp session long-polling getUpdates (raw JSON,
    the next offset at once), and per message a task that sends the placeholder and edits it
    to the echo. No SDK, no objects, no persistence."""
    api = f"{base}/bot{CEILING_TOKEN}"
    tasks = common.Owned()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as http:

        async def call(method: str, params: dict[str, Any]) -> Any:
            async with http.post(f"{api}/{method}", json=params) as resp:
                return (await resp.json())["result"]

        async def answer(message: dict[str, Any]) -> None:
            chat = message["chat"]["id"]
            sent = await call("sendMessage", {"chat_id": chat, "text": "…"})
            await call("editMessageText", {"chat_id": chat, "message_id": sent["message_id"],
                                           "text": message["text"]})

        async def poll() -> None:
            offset = 0
            while True:
                for update in await call("getUpdates", {"offset": offset, "timeout": 10}):
                    offset = update["update_id"] + 1
                    if "text" in update.get("message", {}):
                        tasks.spawn(answer(update["message"]))

        tasks.spawn(poll())
        try:
            yield
        finally:
            await tasks.aclose()


@asynccontextmanager
async def _echo_adapter(base: str) -> AsyncIterator[None]:
    """Our adapter alone (no App), doing what the peer does: a placeholder, edited to the echo."""
    from adapters.telegram import TelegramAdapter

    async with common.echoing(TelegramAdapter(token=BARE_TOKEN, base_url=f"{base}/bot",
                                              base_file_url=f"{base}/file/bot")):
        yield


# --- ours ------------------------------------------------------------------------------------


@asynccontextmanager
async def _our_app(base: str, database_url: str | None) -> AsyncIterator[Any]:
    """The real App with the real Telegram adapter polling the fake at the production edit
    interval."""
    from adapters.telegram import TelegramAdapter
    from bot.commands import COMMANDS

    async with common.our_app(database_url) as app:
        await common.serve(app, TelegramAdapter(
            token=OUR_TOKEN, base_url=f"{base}/bot", base_file_url=f"{base}/file/bot",
            commands=COMMANDS))
        yield app
