"""Telegram, translated (python-telegram-bot 22): updates -> `IncomingMessage`, replies -> Bot API.

Polling is our own getUpdates loop feeding PTB's `Application` (its `Updater` confirms every
update it fetched with the next poll, stored or not): an update is confirmed only once the
gateway has stored it, so one that could not be (the database down) is fetched again, and one
in hand when the process dies is redelivered to the next. Webhook mode serves its own small
aiohttp endpoint so the `X-Telegram-Bot-Api-Secret-Token` check is a constant-time compare
answering 401, and answers 503 for an update that could not be stored (Telegram retries it).
The check is on by default: with no secret given, one is generated and registered with
setWebhook; only `webhook_insecure=True` turns it off.

Updates stay the Bot API's JSON from the poll (or the webhook) to `translate`, which reads
what it needs of them: PTB's `Update` object tree was built for each (170 us, a tenth of the
gateway's CPU per message) for the few fields the bot reads.

Updates of different chats are processed concurrently, those of one chat in order. Platform
refusals become `core.errors` types (`RetryAfter` -> `RateLimited`, rejected HTML ->
`FormattingRejected`, ...) with messages that never carry the bot token or a file URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import re
import secrets
import warnings
from collections.abc import Awaitable, Mapping, Sequence
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from telegram import (
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InputFile,
    MessageEntity,
    User,
)
from telegram import error as tg
from telegram.constants import ChatAction, ChatMemberStatus, ChatType, ParseMode
from telegram.ext import Application, ApplicationBuilder, BaseUpdateProcessor, TypeHandler
from telegram.request import BaseRequest, RequestData
from telegram.warnings import PTBDeprecationWarning

from adapters.http_listen import listen
from adapters.lanes import Lanes
from core.errors import (
    ConfigError,
    Forbidden,
    FormattingRejected,
    InputError,
    MessageNotModified,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
    StoreUnavailable,
    TooLarge,
)
from core.ports import MessageHandler
from core.types import (
    Attachment,
    Button,
    Capabilities,
    ChatRef,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    Reply,
    Sender,
)

# PTB 22.2+ reports periods (RetryAfter.retry_after and others) as timedelta when opted in, the
# type of its next major version; without it every read warns. _seconds reads either type.
os.environ.setdefault("PTB_TIMEDELTA", "true")

log = logging.getLogger(__name__)

PLATFORM = "telegram"
ALLOWED_UPDATES = ["message", "edited_message", "callback_query"]
MAX_PHOTO_BYTES = 10 * 1024 * 1024  # larger images go as documents
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # the Bot API's getFile limit
MAX_CAPTION = 1024
PROGRESS_WAIT_S = 0.25  # polling: the longest wait for an update in hand before asking again
NO_PREVIEW = {"is_disabled": True}  # link_preview_options of every text sent or edited
WEBHOOK_ANSWER_S = 20.0  # a webhook POST waits this long to hear whether its update was stored
_FORMATTING = ("can't parse entities", "can't find end", "unsupported start tag",
               "unexpected end tag")
_GONE = ("chat not found", "have no rights to send", "not enough rights to send",
         "group chat was deactivated", "user is deactivated")


def _seconds(obj: object, attribute: str) -> float:
    """A PTB time period in seconds: an int today, a timedelta under PTB_TIMEDELTA."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = getattr(obj, attribute, None)
    if isinstance(value, timedelta):
        return value.total_seconds()
    return float(value or 0)


class _PerChatOrder(BaseUpdateProcessor):
    """Concurrent across chats, in arrival order within a chat.

    PTB starts one task per update in arrival order; a FIFO lock per chat keeps each chat's
    updates in that order while other chats go ahead.
    """

    def __init__(self, max_concurrent_updates: int) -> None:
        super().__init__(max_concurrent_updates)
        self._chats = Lanes()

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        chat = _chat_id(update) if isinstance(update, dict) else None
        if chat is None:
            await coroutine
            return
        async with self._chats.hold(chat):
            await coroutine

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None


class _Confirmations:
    """The `offset` of the next getUpdates, which confirms every update before it: updates
    are confirmed up to the first one still in hand or not stored (refused), so Telegram keeps
    those. Updates Telegram sends again while in hand, or handled behind that first one, are
    not handed on twice; a refused one is, when it comes again."""

    def __init__(self) -> None:
        self._outcomes: dict[int, asyncio.Future[bool]] = {}  # update_id -> stored?
        self._next = 0  # one past the highest update_id handed on

    def take(self, update_id: int) -> asyncio.Future[bool] | None:
        """A future to resolve with the update's outcome, or None when it is not to be handed
        on (in hand or handled)."""
        if update_id in self._outcomes:
            return None
        outcome: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._outcomes[update_id] = outcome
        self._next = max(self._next, update_id + 1)
        return outcome

    def offset(self) -> tuple[int, bool]:
        """The offset to poll with, and whether the first update there was refused (the
        caller waits a little before asking for it again)."""
        while self._outcomes:
            first = min(self._outcomes)
            outcome = self._outcomes[first]
            if not outcome.done():
                return first, False
            del self._outcomes[first]
            if not outcome.result():
                return first, True
        return self._next, False

    def front(self) -> asyncio.Future[bool] | None:
        """The outcome of the first update not confirmed yet, while it is in hand."""
        if not self._outcomes:
            return None
        outcome = self._outcomes[min(self._outcomes)]
        return None if outcome.done() else outcome


def _given(value: Any, default: float) -> float | None:
    return default if value is BaseRequest.DEFAULT_NONE else value


class _AiohttpRequest(BaseRequest):
    """PTB's networking over aiohttp: the same requests as its httpx default for about half the
    CPU per call (the adapter's largest cost in `bullpen bench gateway`)."""

    def __init__(self, *, pool_size: int, proxy_url: str | None = None,
                 read_timeout_s: float = 5.0, connect_timeout_s: float = 5.0,
                 pool_timeout_s: float = 1.0) -> None:
        self._pool_size = pool_size
        self._proxy_url = proxy_url
        self._read_s = read_timeout_s
        self._connect_s = connect_timeout_s
        self._pool_s = pool_timeout_s
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_s

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            # trust_env would read ~/.netrc in a thread on every request: the proxy is explicit
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size), proxy=self._proxy_url,
                headers={"User-Agent": self.USER_AGENT})

    async def shutdown(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         read_timeout: Any = BaseRequest.DEFAULT_NONE,
                         write_timeout: Any = BaseRequest.DEFAULT_NONE,
                         connect_timeout: Any = BaseRequest.DEFAULT_NONE,
                         pool_timeout: Any = BaseRequest.DEFAULT_NONE) -> tuple[int, bytes]:
        await self.initialize()
        assert self._session is not None
        read = _given(read_timeout, self._read_s)
        connect = _given(connect_timeout, self._connect_s)
        pool = _given(pool_timeout, self._pool_s)
        timeout = aiohttp.ClientTimeout(
            connect=None if connect is None or pool is None else connect + pool,
            sock_connect=connect, sock_read=read)
        data: Any = None
        if request_data is not None:
            data = request_data.json_parameters
            files = request_data.multipart_data
            if files:
                form = aiohttp.FormData()
                for name, value in data.items():
                    form.add_field(name, value)
                for name, (filename, content, mime) in files.items():
                    form.add_field(name, content, filename=filename, content_type=mime)
                data = form
        try:
            async with self._session.request(method, url, data=data, timeout=timeout) as resp:
                return resp.status, await resp.read()
        except TimeoutError:
            raise tg.TimedOut() from None
        except aiohttp.ClientError as exc:  # its text may hold the URL, hence the token
            raise tg.NetworkError(f"aiohttp.{type(exc).__name__}") from None


class TelegramAdapter:
    """The Telegram Bot API behind the `core.ports.Adapter` protocol."""

    name = PLATFORM

    def __init__(self, *, token: str, base_url: str | None = None,
                 base_file_url: str | None = None, webhook_url: str | None = None,
                 webhook_secret: str | None = None, webhook_insecure: bool = False,
                 webhook_listen: str = "127.0.0.1", webhook_port: int = 8443,
                 commands: Sequence[tuple[str, str]] | None = None,
                 localized_commands: Mapping[str, Sequence[tuple[str, str]]] | None = None,
                 proxy_url: str | None = None, min_edit_interval_s: float = 1.0,
                 poll_timeout_s: float = 10.0, max_concurrent_updates: int = 256) -> None:
        if not token:
            raise ConfigError("TELEGRAM_BOT_TOKEN is empty")
        self._token = token
        self._webhook_url = webhook_url
        if webhook_url and not webhook_secret and not webhook_insecure:
            webhook_secret = secrets.token_urlsafe(32)  # check on by default (house rule 9)
        self._webhook_secret = None if webhook_insecure else webhook_secret
        self._webhook_listen = webhook_listen
        self._webhook_port = webhook_port
        self._commands = list(commands or [])
        # the menu in other languages, by IETF language code ("zh"): Telegram shows it to
        # people whose app is set to that language
        self._localized_commands = {lang: list(c)
                                    for lang, c in (localized_commands or {}).items()}
        self._poll_timeout_s = poll_timeout_s
        self.capabilities = Capabilities(
            max_message_length=4096, can_edit=True, min_edit_interval_s=min_edit_interval_s,
            supports_images=True, supports_documents=True, supports_voice=True,
            supports_buttons=True, markup="telegram_html", redelivers=True)
        # our own HTTP clients, so they are closed even when start() fails half-way
        self._requests = (_AiohttpRequest(pool_size=256, proxy_url=proxy_url),
                          _AiohttpRequest(pool_size=1, proxy_url=proxy_url))
        builder = (ApplicationBuilder().token(token)
                   .request(self._requests[0]).get_updates_request(self._requests[1])
                   .concurrent_updates(_PerChatOrder(max_concurrent_updates))
                   .job_queue(None))
        if base_url:
            builder = builder.base_url(base_url)
        if base_file_url:
            builder = builder.base_file_url(base_file_url)
        builder = builder.updater(None)  # updates come from _poll or the webhook
        self._app: Application[Any, Any, Any, Any, Any, Any] = builder.build()
        # updates travel as the Bot API's JSON (see `translate`)
        self._app.add_handler(TypeHandler(dict, self._on_update))
        self._app.add_error_handler(self._on_error)
        self._on_message: MessageHandler | None = None
        self._me: User | None = None
        self._username = ""  # the bot's, lower case, once known (mentions and commands)
        self._initialized = False
        self._site_runner: web.AppRunner | None = None
        self._confirmations = _Confirmations()
        self._outcomes: dict[int, asyncio.Future[bool]] = {}  # in hand, by update_id
        self._poller: asyncio.Task[None] | None = None
        self.webhook_port: int | None = None  # the bound port once the webhook server runs
        self.updates_parsed = 0  # updates handed on (each translated once; tests)

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self, on_message: MessageHandler) -> None:
        """Check the token (getMe), register the command menu, then poll or serve the webhook.
        On failure everything started so far is stopped again."""
        self._on_message = on_message
        try:
            await self._start()
        except BaseException:
            await self.aclose()
            raise

    async def _start(self) -> None:
        try:
            await self._app.initialize()
        except tg.InvalidToken:
            raise ConfigError("Telegram rejected the bot token (TELEGRAM_BOT_TOKEN)") from None
        except tg.TelegramError as exc:
            raise self._error("getMe", exc) from None
        self._initialized = True
        self._me = self._app.bot.bot
        self._username = (self._me.username or "").lower()
        await self._register_commands()
        await self._app.start()
        if self._webhook_url:
            await self._start_webhook(self._webhook_url)
            return
        try:
            await self._app.bot.delete_webhook()
        except tg.TelegramError as exc:
            raise self._error("deleteWebhook", exc) from None
        self._poller = asyncio.create_task(self._poll(), name="telegram-poll")

    async def aclose(self) -> None:
        """Stop taking updates, finish the ones in hand, close the HTTP clients."""
        if self._site_runner is not None:
            await self._site_runner.cleanup()
            self._site_runner = None
        if self._poller is not None:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poller
            self._poller = None
        if self._app.running:
            await self._app.stop()
        if self._initialized:
            await self._app.shutdown()
            self._initialized = False
        for request in self._requests:
            await request.shutdown()

    async def _register_commands(self) -> None:
        if not self._commands:
            return
        try:
            await self._app.bot.set_my_commands(
                [BotCommand(name, description) for name, description in self._commands])
            for lang, localized in self._localized_commands.items():
                await self._app.bot.set_my_commands(
                    [BotCommand(name, description) for name, description in localized],
                    language_code=lang)
        except tg.TelegramError as exc:  # the menu is a convenience: never fatal
            log.warning("telegram command menu not registered: %s", self._error("", exc))

    def _on_poll_error(self, exc: tg.TelegramError) -> None:
        log.warning("telegram polling: %s", self._error("getUpdates", exc))

    async def _poll(self) -> None:
        """getUpdates in a loop; each update goes to PTB's queue once, and is confirmed (by
        the next poll's offset) only when it was stored (see `_Confirmations`)."""
        wait = 1.0
        while True:
            offset, refused = self._confirmations.offset()
            if refused:  # not stored (the database is down): ask for it again in a while
                await asyncio.sleep(wait)
                wait = min(wait * 2, 30.0)
            try:
                updates = await self._get_updates(offset)
            except asyncio.CancelledError:
                raise
            except tg.TelegramError as exc:
                self._on_poll_error(exc)
                await asyncio.sleep(wait)
                wait = min(wait * 2, 30.0)
                continue
            if not refused:
                wait = 1.0
            for data in updates:
                outcome = self._confirmations.take(data["update_id"])
                if outcome is None:  # in hand, or handled behind the first one in hand
                    continue
                self.updates_parsed += 1
                self._outcomes[data["update_id"]] = outcome
                await self._app.update_queue.put(data)
            front = self._confirmations.front()
            if front is not None:
                # an update in hand holds the offset back, so the next poll would bring it
                # (and every one after it) again at once: give it a moment to be stored
                await asyncio.wait([front], timeout=PROGRESS_WAIT_S)

    async def _get_updates(self, offset: int) -> list[dict[str, Any]]:
        """getUpdates as JSON, as `Bot.get_updates` asks it (its read timeout is the long
        poll's plus the request's own). Not `get_updates` itself: it builds a PTB `Update`
        tree for every update in the answer, and while one update is in hand every poll brings
        it and all after it again (the offset confirms only what was stored): a burst of 100
        new chats parsed 822 updates, a quarter of the process's time (cProfile); `_poll`
        hands on each update once, as JSON, and `translate` reads it."""
        read_s = (self._requests[1].read_timeout or 0.0) + self._poll_timeout_s
        result = await self._app.bot._post(
            "getUpdates", {"offset": offset or None,
                           "timeout": timedelta(seconds=self._poll_timeout_s),
                           "allowed_updates": ALLOWED_UPDATES}, read_timeout=read_s)
        return list(result or ())

    async def _on_error(self, update: object, context: Any) -> None:
        err = context.error
        uid = update.get("update_id", "?") if isinstance(update, dict) else "?"
        text = self._error("", err) if isinstance(err, tg.TelegramError) else err
        log.error("telegram update %s failed: %s: %s", uid, type(err).__name__, text,
                  exc_info=None if isinstance(err, tg.TelegramError) else err)

    # --- webhook ---------------------------------------------------------------------------

    async def _start_webhook(self, url: str) -> None:
        path = urlsplit(url).path or "/"
        if self._webhook_secret is None:
            log.warning("telegram webhook: the secret token check is OFF (webhook_insecure)")
        server = web.Application(client_max_size=1024 * 1024)
        server.router.add_post(path, self._webhook)
        runner, self.webhook_port = await listen(
            server, host=self._webhook_listen, port=self._webhook_port, what="telegram webhook")
        try:
            await self._app.bot.set_webhook(url=url, secret_token=self._webhook_secret,
                                            allowed_updates=ALLOWED_UPDATES)
        except tg.TelegramError as exc:
            await runner.cleanup()
            raise self._error("setWebhook", exc) from None
        self._site_runner = runner

    async def _webhook(self, request: web.Request) -> web.Response:
        """One webhook POST: the secret first, then the update into PTB's queue."""
        if self._webhook_secret is not None:
            got = request.headers.get("X-Telegram-Bot-Api-Secret-Token", "")
            if not hmac.compare_digest(got.encode(), self._webhook_secret.encode()):
                return web.Response(status=401)
        try:
            data = json.loads(await request.read())
            update_id = data["update_id"]
            if not isinstance(update_id, int) or isinstance(update_id, bool):
                raise ValueError(update_id)
        except Exception:  # not an update: nothing reaches the bot
            return web.Response(status=400)
        self.updates_parsed += 1
        outcome = self._confirmations.take(update_id)
        if outcome is None:  # Telegram's retry of one in hand
            return web.Response(status=200)
        self._outcomes[update_id] = outcome
        await self._app.update_queue.put(data)
        try:  # stored (or not) within seconds; a long command goes on after the answer
            stored = await asyncio.wait_for(asyncio.shield(outcome), WEBHOOK_ANSWER_S)
        except TimeoutError:
            stored = True
        self._confirmations.offset()  # forgets what was handled
        if not stored:  # Telegram delivers it again later
            return web.Response(status=503, text="temporarily unavailable")
        return web.Response(status=200)

    # --- updates in ------------------------------------------------------------------------

    async def _on_update(self, update: dict[str, Any], context: Any) -> None:
        stored = True
        try:
            query = update.get("callback_query")
            if isinstance(query, dict) and query.get("id"):
                await self._answer_callback(str(query["id"]))
            incoming = self.translate(update)
            if incoming is not None and self._on_message is not None:
                await self._on_message(incoming)
        except StoreUnavailable:
            stored = False  # not confirmed: Telegram keeps it and sends it again
        finally:
            outcome = self._outcomes.pop(update.get("update_id", -1), None)
            if outcome is not None and not outcome.done():
                outcome.set_result(stored)

    async def _answer_callback(self, query_id: str) -> None:
        try:
            await self._app.bot.answer_callback_query(query_id)
        except tg.TelegramError as exc:  # e.g. "query is too old": the press still counts
            log.info("callback query not answered: %s", self._error("", exc))

    def translate(self, update: dict[str, Any]) -> IncomingMessage | None:
        """The update (the Bot API's JSON) as an `IncomingMessage`, or None when there is
        nothing for the bot. Read from the JSON, not from PTB's `Update.de_json`: its object
        tree cost 170 us per update, a tenth of the gateway's CPU per message."""
        query = update.get("callback_query")
        if isinstance(query, dict):
            return self._from_callback(query)
        edited = update.get("edited_message")
        msg = update.get("message") or edited
        if not isinstance(msg, dict) or not isinstance(msg.get("from"), dict) \
                or msg.get("chat", {}).get("type") == ChatType.CHANNEL:
            return None
        text = msg.get("text") or msg.get("caption") or ""
        attachments = _attachments(msg)
        if not text.strip() and not attachments:
            return None  # service messages: joins, pins, title changes ...
        chat = _chat_ref(msg)
        if chat.is_group and self._username:
            text = re.sub(rf"@{re.escape(self._username)}\b", "", text, flags=re.I).strip()
        is_edit = edited is not None
        replied = msg.get("reply_to_message")
        return IncomingMessage(
            platform=PLATFORM, chat=chat, sender=_sender(msg["from"]),
            # an edit keeps the message id; the update id tells versions apart (and stays the
            # same when Telegram delivers the same update again)
            message_id=f"{msg['message_id']}:edit:{update['update_id']}" if is_edit
            else str(msg["message_id"]),
            text=text, attachments=attachments,
            reply_to=str(replied["message_id"]) if isinstance(replied, dict) else None,
            is_edit=is_edit, addressed=not chat.is_group or self._addressed(msg))

    def _from_callback(self, query: dict[str, Any]) -> IncomingMessage | None:
        origin = query.get("message")
        if not isinstance(origin, dict) or query.get("data") is None \
                or not isinstance(query.get("from"), dict):
            return None
        # an inaccessible message (too old) has date 0 and no topic fields
        thread = (str(origin["message_thread_id"]) if origin.get("date")
                  and origin.get("is_topic_message") and origin.get("message_thread_id")
                  else None)
        chat = ChatRef(platform=PLATFORM, chat_id=str(origin["chat"]["id"]), thread_id=thread,
                       is_group=origin["chat"].get("type") in _GROUPS)
        return IncomingMessage(
            platform=PLATFORM, chat=chat, sender=_sender(query["from"]),
            message_id=f"cb:{query['id']}", reply_to=str(origin["message_id"]),
            callback_data=str(query["data"]), addressed=True)

    def _addressed(self, msg: dict[str, Any]) -> bool:
        """In a group: a command (for us), a mention of us, or a reply to one of our messages."""
        me = self._me
        if me is None:
            return False
        text = msg.get("text")
        entities = msg.get("entities") if text else msg.get("caption_entities")
        body = text or msg.get("caption") or ""
        for entity in entities or ():
            kind, offset = entity.get("type"), entity.get("offset", 0)
            if kind == MessageEntity.BOT_COMMAND and offset == 0:
                target = _entity_text(body, entity).partition("@")[2].lower()
                if not target or target == self._username:
                    return True
            elif kind == MessageEntity.MENTION \
                    and _entity_text(body, entity).lower() == f"@{self._username}":
                return True
            elif kind == MessageEntity.TEXT_MENTION \
                    and (entity.get("user") or {}).get("id") == me.id:
                return True
        replied = msg.get("reply_to_message")
        return isinstance(replied, dict) and (replied.get("from") or {}).get("id") == me.id

    # --- operations out --------------------------------------------------------------------

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        sent = await self._call("sendMessage", self._raw("sendMessage", {
            "chat_id": int(chat.chat_id), "text": reply.text, "parse_mode": _parse_mode(reply),
            "reply_markup": _keyboard(reply.buttons), "link_preview_options": NO_PREVIEW,
            **_thread(chat)}))
        return MessageRef(chat=chat, message_id=str(sent["message_id"]))

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        await self._call("editMessageText", self._raw("editMessageText", {
            "chat_id": int(ref.chat.chat_id), "message_id": int(ref.message_id),
            "text": reply.text, "parse_mode": _parse_mode(reply),
            "reply_markup": _keyboard(reply.buttons), "link_preview_options": NO_PREVIEW}))

    async def _raw(self, method: str, data: dict[str, Any]) -> Any:
        """A Bot API call on PTB's own path (its defaults, request, rate limiter and error
        types; a None value left out) answering the JSON as it came. `send_message` and
        `edit_message_text` build a `Message` object tree from every answer, of which the
        adapter reads one id: that parse was ~10 % of the gateway's CPU per answer (a
        placeholder and an edit each). PTB has no public call for a known method without it
        (`do_api_request` warns for those), hence its `_post`, which those methods call."""
        return await self._app.bot._post(method, data)

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        """Images as photos (as documents when too large or refused), the rest as documents."""
        bot = self._app.bot
        caption = file.caption[:MAX_CAPTION] or None
        if file.kind == "image" and len(file.data) <= MAX_PHOTO_BYTES:
            try:
                sent = await self._call("sendPhoto", bot.send_photo(
                    chat_id=int(chat.chat_id), photo=InputFile(file.data, filename=file.filename),
                    caption=caption, **_thread(chat)))
                return MessageRef(chat=chat, message_id=str(sent.message_id))
            except (RateLimited, Forbidden):
                raise
            except PlatformError as exc:  # e.g. PHOTO_INVALID_DIMENSIONS: send the file as is
                log.info("photo refused, sending %s as a document: %s", file.filename, exc)
        sent = await self._call("sendDocument", bot.send_document(
            chat_id=int(chat.chat_id), document=InputFile(file.data, filename=file.filename),
            filename=file.filename, caption=caption, **_thread(chat)))
        return MessageRef(chat=chat, message_id=str(sent.message_id))

    async def is_chat_admin(self, chat: ChatRef, sender: Sender) -> bool | None:
        """`core.ports.ChatAdmins`: getChatMember; the group's creator and its administrators
        are its admins (None outside groups, where Telegram has none)."""
        if not chat.is_group:
            return None
        try:
            chat_id, user_id = int(chat.chat_id), int(sender.platform_uid)
        except ValueError:
            raise PlatformError(f"telegram: {chat.chat_id!r}/{sender.platform_uid!r} are not "
                                "Telegram ids") from None
        member = await self._call("getChatMember",
                                  self._app.bot.get_chat_member(chat_id, user_id))
        return member.status in (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)

    async def typing(self, chat: ChatRef) -> None:
        await self._call("sendChatAction", self._app.bot.send_chat_action(
            chat_id=int(chat.chat_id), action=ChatAction.TYPING, **_thread(chat)))

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        """getFile, then the download. The file URL holds the token: it is never shown."""
        try:
            attachment = message.attachments[index]
        except IndexError:
            raise InputError(f"message has no attachment #{index}") from None
        if not attachment.file_id:
            raise InputError("attachment has no file id")
        if attachment.size is not None and attachment.size > MAX_DOWNLOAD_BYTES:
            raise TooLarge("file is larger than the 20 MB bots may download",
                           size=attachment.size, limit=MAX_DOWNLOAD_BYTES)
        remote = await self._call("getFile", self._app.bot.get_file(attachment.file_id))
        data = await self._call("download", remote.download_as_bytearray())
        return bytes(data)

    async def _call[T](self, method: str, operation: Awaitable[T]) -> T:
        try:
            return await operation
        except tg.TelegramError as exc:
            raise self._error(method, exc) from None

    def _error(self, method: str, exc: tg.TelegramError) -> PlatformError:
        """The `core.errors` type for a Bot API refusal, its message free of secrets."""
        text = exc.message.replace(self._token, "***")
        where = f"telegram {method}: " if method else "telegram: "
        low = text.lower()
        if isinstance(exc, tg.RetryAfter):
            return RateLimited(f"{where}flood control",
                               retry_after=max(1.0, _seconds(exc, "retry_after")))
        if isinstance(exc, tg.Forbidden):
            return Forbidden(where + text)
        if isinstance(exc, tg.BadRequest):
            if "message is not modified" in low:
                return MessageNotModified(where + "message is not modified")
            if any(s in low for s in _FORMATTING):
                return FormattingRejected(where + text)
            if any(s in low for s in _GONE):
                return Forbidden(where + text)
        if isinstance(exc, tg.ChatMigrated):
            return PlatformError(f"{where}group moved to supergroup {exc.new_chat_id}")
        if isinstance(exc, tg.InvalidToken) and method == "download":
            return PlatformError(where + "file not found")
        if isinstance(exc, tg.NetworkError) and not isinstance(exc, tg.BadRequest):
            return PlatformUnavailable(where + text)  # 5xx, a timeout, the network
        return PlatformError(where + text)


# --- translation helpers ---------------------------------------------------------------------


_GROUPS = (ChatType.GROUP, ChatType.SUPERGROUP)


def _chat_id(update: dict[str, Any]) -> int | None:
    """The chat an update belongs to (its updates are handled in order), if any."""
    msg = update.get("message") or update.get("edited_message") \
        or (update.get("callback_query") or {}).get("message")
    chat = msg.get("chat") if isinstance(msg, dict) else None
    return chat.get("id") if isinstance(chat, dict) else None


def _entity_text(text: str, entity: dict[str, Any]) -> str:
    """An entity's text: its offset and length count UTF-16 code units, as the Bot API's do."""
    units = text.encode("utf-16-le")
    start = int(entity.get("offset", 0)) * 2
    return units[start:start + int(entity.get("length", 0)) * 2].decode("utf-16-le", "replace")


def _chat_ref(msg: dict[str, Any]) -> ChatRef:
    thread = (str(msg["message_thread_id"])
              if msg.get("is_topic_message") and msg.get("message_thread_id") else None)
    return ChatRef(platform=PLATFORM, chat_id=str(msg["chat"]["id"]), thread_id=thread,
                   is_group=msg["chat"].get("type") in _GROUPS)


def _sender(user: dict[str, Any]) -> Sender:
    full_name = " ".join(p for p in (user.get("first_name"), user.get("last_name")) if p)
    return Sender(platform_uid=str(user["id"]),
                  display_name=full_name or user.get("username") or "")


def _attachments(msg: dict[str, Any]) -> list[Attachment]:
    out: list[Attachment] = []
    if v := msg.get("voice"):
        out.append(Attachment(kind="voice", file_id=v["file_id"],
                              mime_type=v.get("mime_type") or "audio/ogg",
                              size=v.get("file_size"), duration_s=float(v.get("duration") or 0)))
    if a := msg.get("audio"):
        out.append(Attachment(kind="audio", file_id=a["file_id"], filename=a.get("file_name") or "",
                              mime_type=a.get("mime_type") or "", size=a.get("file_size"),
                              duration_s=float(a.get("duration") or 0)))
    if d := msg.get("document"):
        out.append(Attachment(kind="document", file_id=d["file_id"],
                              filename=d.get("file_name") or "",
                              mime_type=d.get("mime_type") or "", size=d.get("file_size")))
    if photo := msg.get("photo"):
        p = max(photo, key=lambda size: size.get("width", 0) * size.get("height", 0))
        out.append(Attachment(kind="image", file_id=p["file_id"], mime_type="image/jpeg",
                              size=p.get("file_size")))
    if st := msg.get("sticker"):
        mime = ("video/webm" if st.get("is_video") else "application/x-tgsticker"
                if st.get("is_animated") else "image/webp")
        out.append(Attachment(kind="sticker", file_id=st["file_id"], mime_type=mime,
                              size=st.get("file_size")))
    for key in ("video", "video_note", "animation"):
        if video := msg.get(key):
            out.append(Attachment(kind="video", file_id=video["file_id"],
                                  size=video.get("file_size"),
                                  mime_type=video.get("mime_type") or "video/mp4",
                                  duration_s=float(video.get("duration") or 0)))
    if not out and any(msg.get(k) for k in ("location", "contact", "poll", "dice", "venue",
                                             "game", "story")):
        out.append(Attachment(kind="other"))
    return out


def _thread(chat: ChatRef) -> dict[str, int]:
    return {"message_thread_id": int(chat.thread_id)} if chat.thread_id else {}


def _parse_mode(reply: Reply) -> str | None:
    return ParseMode.HTML if reply.markup == "markdown" else None


def _keyboard(rows: list[list[Button]]) -> InlineKeyboardMarkup | None:
    if not rows:
        return None
    return InlineKeyboardMarkup([[InlineKeyboardButton(b.label, callback_data=b.data)
                                  for b in row] for row in rows])
