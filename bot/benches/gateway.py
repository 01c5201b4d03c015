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

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp

from bot.benches import gateway_common as common

OUR_TOKEN = "777000111:BENCH-ours-token-Xyz_0123456789"
PEER_TOKEN = "777000222:BENCH-peer-token-Xyz_0123456789"
FAKE = common.FAKES / "telegram_server.py"
PEER = ("bare python-telegram-bot 22 echo bot on the same fake (its default httpx transport, "
        "concurrent updates): reply with a placeholder, then edit it to the echo")


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
    return common.run_bench(FAKE, _run, chats=chats, repeat=repeat, database_url=database_url)


async def _run(*, chats: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    peer = common.Side(PEER_TOKEN, range(1_000_000, 1_000_000 + chats), common.QUESTION)
    ours = common.Side(OUR_TOKEN, range(2_000_000, 2_000_000 + chats), common.ANSWER)
    async with common.fake_process(FAKE, "--token", OUR_TOKEN, "--token", PEER_TOKEN) as base, \
            aiohttp.ClientSession(base) as control, _echo_bot(base), \
            _our_app(base, database_url) as app:
        await common.drive(control, (peer, ours), rounds)
        counts = await common.persisted(app)
    mine, theirs = common.summary(ours), common.summary(peer)
    return common.report(
        platform="telegram", chats=chats, rounds=rounds, ours=mine, persisted=counts,
        peer=PEER, peer_result=theirs, targets=common.FIRST_EDIT_TARGETS,
        within_target=common.meets_first_edit_targets(mine, theirs))


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
    """The real App with the real Telegram adapter polling the fake at the production edit
    interval."""
    from adapters.telegram import TelegramAdapter
    from bot.commands import COMMANDS

    async with common.our_app(database_url) as app:
        await common.serve(app, TelegramAdapter(
            token=OUR_TOKEN, base_url=f"{base}/bot", base_file_url=f"{base}/file/bot",
            commands=COMMANDS))
        yield app
