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
with asyncpg on the same Postgres (synchronous commit, one row each), as a durable bot must.
Throughput is over each round's steady window (see `gateway_common.steady_rate`); the ratios
read ours / peer, higher is better for Bullpen.
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
FAKE = common.FAKES / "telegram_server.py"
PEER = ("python-telegram-bot 22 echo bot on aiohttp (bot.benches.ptb_aiohttp; concurrent "
        "updates, polling): reply with a placeholder, then edit it to the echo")
DURABLE_PEER = ("the same PTB echo bot persisting each question and each reply with asyncpg "
                "(one row each, synchronous commit, the same Postgres as ours)")


def run(*, platform: str = "telegram", chats: int = 100, repeat: int = 3,
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
    return common.run_bench(FAKE, _run, chats=chats, repeat=repeat, database_url=database_url)


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    peer = common.Side(PEER_TOKEN, range(1_000_000, 1_000_000 + chats), common.QUESTION)
    durable = common.Side(DURABLE_TOKEN, range(3_000_000, 3_000_000 + chats), common.QUESTION)
    ours = common.Side(OUR_TOKEN, range(2_000_000, 2_000_000 + chats), common.ANSWER)
    async with common.fake_process(FAKE, "--token", OUR_TOKEN, "--token", PEER_TOKEN,
                                   "--token", DURABLE_TOKEN) as base, \
            aiohttp.ClientSession(base) as control, _our_app(base, database_url) as app, \
            _echo_bot(base, PEER_TOKEN), _echo_bot(base, DURABLE_TOKEN, dsn=app.db.dsn):
        await common.drive(control, (peer, durable, ours), rounds,
                           postgres=await common.postgres_cpu(app.db.pool))
        counts = await common.persisted(app)
    mine, theirs, durables = (common.summary(ours), common.summary(peer),
                              common.summary(durable))
    out = common.report(
        platform="telegram", chats=chats, rounds=rounds, ours=mine, persisted=counts,
        peer=PEER, peer_result=theirs, targets=common.FIRST_EDIT_TARGETS,
        within_target=common.meets_first_edit_targets(mine, theirs))
    out["durable_peer"] = DURABLE_PEER
    out["durable_peer_result"] = durables
    out["durable_throughput_ratio"] = round(common.ratio(mine, durables), 3)
    if common.cpu_ratio(mine, durables):
        out["durable_cpu_per_message_ratio"] = common.cpu_ratio(mine, durables)
    return out


# --- the peer --------------------------------------------------------------------------------


PEER_TABLE = """CREATE TABLE IF NOT EXISTS bench_peer_messages (
    id bigserial PRIMARY KEY, chat_id bigint NOT NULL, message_id bigint NOT NULL,
    role text NOT NULL, content text NOT NULL, at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (chat_id, message_id, role))"""


@asynccontextmanager
async def _echo_bot(base: str, token: str, *, dsn: str | None = None) -> AsyncIterator[None]:
    """A PTB echo bot on aiohttp; with `dsn`, it stores the question before answering and the
    reply after (a redelivered update is stored once: the unique key)."""
    import asyncpg
    from telegram import Update
    from telegram.ext import ApplicationBuilder, ContextTypes, MessageHandler, filters

    from bot.benches.ptb_aiohttp import AiohttpRequest

    pool = None
    if dsn is not None:
        pool = await asyncpg.create_pool(dsn, min_size=2, max_size=10)
        await pool.execute(PEER_TABLE)

    async def store(chat: int, message: int, role: str, text: str) -> None:
        if pool is not None:
            await pool.execute("INSERT INTO bench_peer_messages (chat_id, message_id, role, "
                               "content) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                               chat, message, role, text)

    async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        message = update.message
        assert message is not None and message.text is not None
        await store(message.chat_id, message.message_id, "user", message.text)
        placeholder = await message.reply_text("…")
        await placeholder.edit_text(message.text)
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
        if pool is not None:
            await pool.close()


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
