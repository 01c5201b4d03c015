"""WeChat official accounts and WeCom apps, translated (wechatpy 1.8).

Callbacks arrive on a small aiohttp server: authenticated first (403 for a forged, stale or
replayed signature, 400 for malformed XML, nothing processed either way), handed to the core
from a task the adapter owns, one chat's messages in order, and acknowledged with "success"
once the core has taken the message (its handler returned: the gateway returns once it is
stored or spooled to disk) or after `ACK_WAIT_S`, whichever is first (WeChat waits 5 s, then
retries the same MsgId three times): nothing acknowledged is only in memory. A MsgId already
taken is acknowledged and dropped, so retries that arrive while the first delivery is still
being answered never reach the core twice.

WeChat cannot edit, so replies go out as they are final: through the customer-service message
API (official accounts) or the app message API (WeCom), text split at WeChat's byte limit,
images uploaded as temporary media. When WeChat refuses because the user's 48-hour window has
closed or its message quota is used up (45015, 45047), the reply is kept in order and delivered
before anything else when that user next writes. Kept replies live in a `core.ports.KeptReplies`
(bounded per user): the bot gives the adapter the Postgres one, so they survive a restart; alone,
the adapter keeps them in memory. A kept reply leaves the store only once WeChat took it or
refused it for good; a network failure or a closed window leaves it for the next message.

wechatpy is synchronous: its calls run in a thread pool the adapter owns.

There are no group chats: an official account talks with each follower alone and a WeCom app
with each member alone (every chat is the user's openid / userid, `is_group` False), so the
adapter has no `core.ports.ChatAdmins` (group admin checks never arise).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web
from wechatpy.messages import UnknownMessage

from adapters.http_listen import listen
from adapters.lanes import Lanes
from adapters.wechat.callbacks import CallbackVerifier, Kind, Rejected, parse_xml
from adapters.wechat.clients import (
    OFFICIAL_API,
    WECOM_API,
    OfficialClient,
    Unreachable,
    WeComAppClient,
    WindowClosed,
    is_bad_credentials,
    map_error,
)
from core.errors import (
    ConfigError,
    Forbidden,
    Held,
    InputError,
    PlatformError,
    RateLimited,
    StoreError,
)
from core.ports import KeptReplies, KeptReply, MemoryKeptReplies, MessageHandler
from core.types import (
    Attachment,
    Capabilities,
    ChatRef,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    Reply,
    Sender,
    utcnow,
)

log = logging.getLogger(__name__)

MAX_TEXT_BYTES = 2048  # a customer-service / app text message, UTF-8
MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_FILE_BYTES = 20 * 1024 * 1024  # WeCom files
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024  # media read from WeChat (a voice note is at most 2 MB)
MAX_BODY_BYTES = 256 * 1024
SEEN_MESSAGES = 20_000
# WeChat retries a callback not answered within 5 s: "success" waits this long at most for the
# core to take the message (the handler to return)
ACK_WAIT_S = 3.0
_AUDIO_MIME = {"amr": "audio/amr", "speex": "audio/speex", "mp3": "audio/mpeg"}
_SEPARATORS = ("\n\n", "\n", "。", ". ", "！", "？", "! ", "? ", "；", "; ", "，", ", ", " ")


@dataclass
class CallbackStats:
    """What the callback endpoint did with the requests it got."""

    accepted: int = 0  # authentic messages handed to the core
    duplicates: int = 0  # authentic retries of a MsgId already taken
    rejected: int = 0  # forged, stale or replayed: 403
    malformed: int = 0  # 400
    ignored: int = 0  # authentic events and other things that are not for the core
    passive: int = 0  # replies given as the callback's own answer


class WeChatAdapter:
    """An official account (`kind="official"`) or a WeCom app (`kind="wecom"`, `app_id` is the
    corp id, `agent_id` the app) behind the `core.ports.Adapter` protocol.

    Safe mode when `encoding_aes_key` is set (WeCom always). `api_base_url` points wechatpy at
    another host (tests: the loopback fake). `port=0` binds any free port (see `port` after
    `start`). `max_clock_skew_s` bounds callback timestamps; `max_pending` bounds the replies
    kept per user while WeChat refuses them, in `kept_replies` (default: in memory, lost on
    restart); this adapter must be the only one delivering for its app from that store. A kept
    reply older than `keep_for_s` (a week) is dropped rather than delivered out of context.
    `proxy_url` is the only proxy used (environment proxy variables are not read).
    `max_download_bytes` bounds what `fetch_attachment` reads (`TooLarge` past it).
    `hold_in_outbox` (the bot's setting): a reply refused while the window is closed raises
    `core.errors.Held` instead of being kept here; the bot's outbox holds it until the user
    writes, as it does every delivery. `passive_reply_s` (plain mode; 0 is off,
    4 s the most that stays inside WeChat's 5 s): the first text reply ready within that many
    seconds of its callback is the callback's own answer (a passive reply) instead of a
    customer-service message; what follows it goes through the API, after it.
    """

    def __init__(self, *, kind: Kind = "official", token: str, app_id: str, app_secret: str,
                 encoding_aes_key: str | None = None, agent_id: int | None = None,
                 api_base_url: str | None = None, listen: str = "127.0.0.1", port: int = 8080,
                 path: str = "/wechat", max_message_length: int = 2048,
                 max_message_bytes: int = MAX_TEXT_BYTES, max_clock_skew_s: float = 300.0,
                 max_pending: int = 50, http_workers: int = 8, timeout_s: float = 10.0,
                 proxy_url: str | None = None, kept_replies: KeptReplies | None = None,
                 keep_for_s: float = 7 * 86400.0,
                 max_download_bytes: int = MAX_DOWNLOAD_BYTES,
                 hold_in_outbox: bool = False, passive_reply_s: float = 0.0) -> None:
        if kind not in ("official", "wecom"):
            raise ConfigError(f"WeChat adapter kind must be official or wecom, not {kind!r}")
        if not app_id or not app_secret:
            raise ConfigError("WeChat needs the app id (WeCom: corp id) and its secret")
        if kind == "wecom" and agent_id is None:
            raise ConfigError("WeCom needs the app's agent id")
        self.kind: Kind = kind
        self.name = "wecom" if kind == "wecom" else "wechat"
        self.capabilities = Capabilities(
            max_message_length=max_message_length, can_edit=False, min_edit_interval_s=0.0,
            supports_images=True, supports_documents=kind == "wecom", supports_voice=True,
            supports_buttons=False, markup="plain")
        self._verifier = CallbackVerifier(kind=kind, token=token, receiver_id=app_id,
                                          encoding_aes_key=encoding_aes_key,
                                          max_skew_s=max_clock_skew_s)
        self._agent_id = agent_id
        self._max_bytes = max_message_bytes
        self._max_download = max_download_bytes
        if max_pending < 1:
            raise ConfigError("WeChat's max_pending (replies kept per user) must be at least 1")
        self._max_pending = max_pending
        self._keep_for = timedelta(seconds=keep_for_s)
        # with the bot: a refused reply raises `Held` and the outbox holds it (one mechanism
        # for everything that must arrive); alone, the adapter keeps it itself
        self._hold_in_outbox = hold_in_outbox
        self._kept: KeptReplies = kept_replies if kept_replies is not None \
            else MemoryKeptReplies()
        # the store's name for this app's replies: one database may serve several apps
        self._kept_key = f"wecom:{app_id}:{agent_id}" if kind == "wecom" \
            else f"wechat:{app_id}"
        self._listen = listen
        self._path = path
        self.port = port  # the bound port once started
        self.stats = CallbackStats()
        client = WeComAppClient if kind == "wecom" else OfficialClient
        self._client: OfficialClient | WeComAppClient = client(
            app_id, app_secret, base_url=api_base_url or (
                WECOM_API if kind == "wecom" else OFFICIAL_API),
            timeout_s=timeout_s, pool=http_workers, proxy_url=proxy_url)
        self._pool = ThreadPoolExecutor(max_workers=http_workers,
                                        thread_name_prefix=f"{self.name}-http")
        self._on_message: MessageHandler | None = None
        self._runner: web.AppRunner | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.ack_wait_s = ACK_WAIT_S
        # plain mode only: a passive reply in safe mode must be encrypted and signed again
        self.passive_wait_s = passive_reply_s if not self._verifier.safe_mode else 0.0
        # users whose callback is open for a passive reply, and those whose passive reply is
        # on its way (what is sent after it waits until it is written)
        self._passive: dict[str, asyncio.Future[str]] = {}
        self._passive_out: dict[str, asyncio.Event] = {}
        self._seen: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._inbound = Lanes()
        self._outbound = Lanes()
        # users with kept replies (read from the store at start, then kept up to date here:
        # the hot path asks the store nothing for everyone else), and those whose last flush
        # stopped on a failure that may pass (network, rate limit): the next send flushes first
        self._kept_users: set[str] = set()
        self._flush_on_send: set[str] = set()
        self._ids = itertools.count(1)
        self._closed = False
        if kind == "wecom":
            from wechatpy.enterprise import parse_message
            from wechatpy.enterprise.messages import MESSAGE_TYPES
        else:
            from wechatpy import parse_message
            from wechatpy.messages import MESSAGE_TYPES
        self._parse_message = parse_message
        self._message_types: dict[str, Any] = MESSAGE_TYPES

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self, on_message: MessageHandler) -> None:
        """Check the credentials (fetch an access token), then serve the callback URL.
        On failure everything started so far is stopped again."""
        self._on_message = on_message
        try:
            self._kept_users = await self._kept.recipients(self._kept_key)
            if self._kept_users:
                log.info("%s: %d users have kept replies, delivered at their next message",
                         self.name, len(self._kept_users))
            try:
                await self._run(self._client.fetch_access_token)
            except Exception as exc:
                if is_bad_credentials(exc):
                    raise ConfigError(f"{self.name}: WeChat refused the app credentials "
                                      f"({map_error('token', exc)})") from None
                raise map_error(f"{self.name} token", exc) from None
            await self._serve()
        except BaseException:
            await self.aclose()
            raise

    async def _serve(self) -> None:
        server = web.Application(client_max_size=MAX_BODY_BYTES)
        server.router.add_get(self._path, self._verify_url)
        server.router.add_post(self._path, self._callback)
        self._runner, self.port = await listen(server, host=self._listen, port=self.port,
                                               what=self.name)
        mode = "safe" if self._verifier.safe_mode else "plain"
        log.info("%s callbacks on %s:%s%s (%s mode)", self.name, self._listen, self.port,
                 self._path, mode)

    async def aclose(self) -> None:
        """Stop taking callbacks, cancel the deliveries in hand, release the HTTP threads."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if not self._closed:
            self._closed = True
            await asyncio.to_thread(self._pool.shutdown, wait=True, cancel_futures=True)
            self._client.close()
        if self._kept_users:
            if self._kept.durable:
                log.warning("%s: %d users have kept replies not delivered yet; they are stored "
                            "and will be delivered at each user's next message", self.name,
                            len(self._kept_users))
            else:
                log.warning("%s: %d users have kept replies not delivered before shutdown; "
                            "they were kept in memory only and are lost", self.name,
                            len(self._kept_users))

    # --- callbacks in ----------------------------------------------------------------------

    async def _verify_url(self, request: web.Request) -> web.Response:
        try:
            echo = self._verifier.verify_url(request.query)
        except Rejected as exc:
            self._count_refusal(exc, request)
            return web.Response(status=exc.status)
        return web.Response(text=echo)

    async def _callback(self, request: web.Request) -> web.StreamResponse:
        """One callback: authenticate, parse, take it, answer "success" once the core has it;
        or, when the answer is ready within `passive_wait_s`, the answer itself."""
        arrived = asyncio.get_running_loop().time()
        try:
            body = await request.read()
            message = self._parse(self._verifier.open(request.query, body))
            try:
                incoming = self.translate(message)
            except (TypeError, ValueError):  # e.g. a MsgId or CreateTime that is no number
                raise Rejected(400, "malformed message fields") from None
        except Rejected as exc:
            self._count_refusal(exc, request)
            return web.Response(status=exc.status)
        user = str(message.source)
        taking = self._take(user, incoming)
        if taking is None or incoming is None:
            return web.Response(text="success")
        slot = self._open_passive(user)
        try:
            await asyncio.wait({taking}, timeout=self.ack_wait_s)
            left = arrived + self.passive_wait_s - asyncio.get_running_loop().time()
            if slot is not None and left > 0 and not taking.cancelled() \
                    and taking.done() and taking.exception() is None:
                await asyncio.wait({slot}, timeout=left)
        finally:
            if slot is not None and self._passive.get(user) is slot:
                del self._passive[user]
        if slot is None or not slot.done() or slot.cancelled():
            return web.Response(text="success")
        return await self._passive_reply(request, user, message, slot.result())

    def _open_passive(self, user: str) -> asyncio.Future[str] | None:
        """A slot for the user's first reply while this callback waits; None when passive
        replies are off, another callback of the user holds one, or replies are kept for the
        user (they go first, through the API)."""
        if self.passive_wait_s <= 0 or user in self._passive or user in self._kept_users \
                or user in self._flush_on_send:
            return None
        slot: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._passive[user] = slot
        return slot

    async def _passive_reply(self, request: web.Request, user: str, message: Any,
                             text: str) -> web.StreamResponse:
        """The reply as the callback's answer; what is sent to the user after it waits until
        it is written."""
        from wechatpy.replies import TextReply

        written = self._passive_out[user]
        response = web.Response(
            text=TextReply(message=message, content=text).render(),
            content_type="application/xml")
        try:
            await response.prepare(request)
            await response.write_eof()
            self.stats.passive += 1
        except Exception as exc:  # WeChat went away: the reply goes through the API instead
            log.info("%s: passive reply not written (%s); sending it", self.name, exc)
            try:
                await self._push(user, KeptReply(text=text))
            except PlatformError as again:
                log.warning("%s: a reply to %s could not be sent: %s", self.name, user, again)
                await self._keep(user, KeptReply(text=text))
        finally:
            written.set()
            if self._passive_out.get(user) is written:
                del self._passive_out[user]
        return response

    def _count_refusal(self, exc: Rejected, request: web.Request) -> None:
        if exc.status == 400:
            self.stats.malformed += 1
        else:
            self.stats.rejected += 1
        log.info("%s callback refused (%d): %s, from %s", self.name, exc.status, exc,
                 request.remote)

    def _parse(self, xml: bytes) -> Any:
        """The wechatpy message for the XML (events through wechatpy's own parser)."""
        root = parse_xml(xml)  # refuses DTDs and anything that is not an <xml> element
        msg_type = str(root.get("MsgType") or "").lower()
        try:
            if msg_type == "event":
                message = self._parse_message(xml)
            else:  # what parse_message does for messages, without parsing the XML again
                message = self._message_types.get(msg_type, UnknownMessage)(root)
        except Exception:
            raise Rejected(400, "unparseable message") from None
        if message is None or not message.source:
            raise Rejected(400, "message without a sender")
        return message

    def _take(self, user: str, incoming: IncomingMessage | None) -> asyncio.Task[None] | None:
        """Hand an authentic message to the core once per MsgId; flush kept replies first.
        The task that does, if any."""
        if incoming is not None:
            key = (user, incoming.message_id)
            if key in self._seen:
                self.stats.duplicates += 1
                return None
            self._seen[key] = None
            if len(self._seen) > SEEN_MESSAGES:
                self._seen.popitem(last=False)
            self.stats.accepted += 1
        else:
            self.stats.ignored += 1
            if user not in self._kept_users:
                return None  # an event with nothing to deliver
        task = asyncio.create_task(self._dispatch(user, incoming), name=f"{self.name}:{user}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _dispatch(self, user: str, incoming: IncomingMessage | None) -> None:
        try:
            async with self._inbound.hold(user):
                await self._flush_pending(user)
                if incoming is not None and self._on_message is not None:
                    await self._on_message(incoming)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s message %s failed", self.name,
                          incoming.message_id if incoming else "-")

    def translate(self, message: Any) -> IncomingMessage | None:
        """A wechatpy message as an `IncomingMessage`; None for events and foreign agents."""
        kind = getattr(message, "type", "unknown")
        if kind == "event" or getattr(message, "event", None):
            return None
        agent = getattr(message, "agent", None)
        if self.kind == "wecom" and agent and self._agent_id and int(agent) != self._agent_id:
            log.info("wecom message for agent %s ignored (this app is %s)", agent,
                     self._agent_id)
            return None
        msg_id = str(message.id or "")
        if not msg_id:
            return None
        text, attachments = "", []
        if kind == "text":
            text = str(message.content or "")
        elif kind == "voice":
            fmt = str(message.format or "amr").lower()
            attachments.append(Attachment(
                kind="voice", file_id=str(message.media_id or ""),
                filename=f"{message.media_id}.{fmt}", mime_type=_AUDIO_MIME.get(fmt, "audio/amr"),
                recognition=(str(message.recognition).strip() or None)
                if message.recognition else None))
        elif kind == "image":
            attachments.append(Attachment(kind="image", file_id=str(message.media_id or ""),
                                          mime_type="image/jpeg"))
        elif kind in ("video", "shortvideo"):
            attachments.append(Attachment(kind="video", file_id=str(message.media_id or "")))
        else:  # location, link, file, unknown: the gateway says what it can read
            attachments.append(Attachment(kind="other"))
        if not text.strip() and not attachments:
            return None
        user = str(message.source)
        created = int(message.time or 0)
        return IncomingMessage(
            platform=self.name, chat=ChatRef(platform=self.name, chat_id=user),
            sender=Sender(platform_uid=user), message_id=msg_id, text=text,
            attachments=attachments,
            received_at=datetime.fromtimestamp(created, UTC) if created else datetime.now(UTC))

    # --- operations out --------------------------------------------------------------------

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        """Text, in pieces of at most `max_message_bytes`; kept when WeChat can't deliver now."""
        ref: MessageRef | None = None
        for piece in split_bytes(reply.text, self._max_bytes):
            ref = await self._deliver(chat, KeptReply(text=piece))
        assert ref is not None
        return ref

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        raise PlatformError(f"{self.name}: messages cannot be edited")

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        """Images (and WeCom documents) uploaded as temporary media, then sent; the caption
        follows as text."""
        if file.kind == "document" and self.kind != "wecom":
            raise PlatformError(f"{self.name}: official accounts cannot send documents")
        limit = MAX_IMAGE_BYTES if file.kind == "image" else MAX_FILE_BYTES
        if len(file.data) > limit:
            raise PlatformError(f"{self.name}: {file.filename} is larger than WeChat's "
                                f"{limit >> 20} MB")
        ref = await self._deliver(chat, KeptReply(file=file))
        if file.caption:
            ref = await self.send(chat, Reply(text=file.caption, markup="plain"))
        return ref

    async def typing(self, chat: ChatRef) -> None:
        """Nothing: the typing indicator is a separate call per answer that WeChat clears after
        15 s, and the answer follows within seconds."""
        return None

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        """The temporary media (a voice note's AMR, an image) by its media id; `TooLarge` past
        `max_download_bytes`, after reading at most that plus one chunk."""
        try:
            attachment = message.attachments[index]
        except IndexError:
            raise InputError(f"message has no attachment #{index}") from None
        if not attachment.file_id:
            raise InputError("attachment has no media id")
        # streamed and refused past the limit (TooLarge): a voice callback declares no size,
        # and wechatpy's own download would read all of a 50 MB file before anyone could say no
        content: bytes | None = await self._call(
            "media/get", self._client.download_media, attachment.file_id,
            max_bytes=self._max_download)
        if content is None:
            raise PlatformError(f"{self.name} media/get: no media in the answer")
        return content

    # --- delivery --------------------------------------------------------------------------

    async def _deliver(self, chat: ChatRef, out: KeptReply) -> MessageRef:
        user = chat.chat_id
        async with self._outbound.hold(user):
            slot = self._passive.pop(user, None)
            if slot is not None and not slot.done() and out.file is None \
                    and user not in self._kept_users and user not in self._flush_on_send:
                # the callback is still open: the reply is its answer
                self._passive_out[user] = asyncio.Event()
                slot.set_result(out.text)
                return MessageRef(chat=chat, message_id=f"passive-{next(self._ids)}")
            if (written := self._passive_out.get(user)) is not None:
                await written.wait()  # after the passive reply, never before it
            if user in self._flush_on_send:
                await self._flush_locked(user)
            if user not in self._kept_users:
                try:
                    return MessageRef(chat=chat, message_id=await self._push(user, out))
                except WindowClosed as exc:
                    if self._hold_in_outbox:  # the bot's outbox holds it for the next message
                        raise Held(f"{self.name}: {exc}") from None
                    log.info("%s: reply kept for the user's next message: %s", self.name, exc)
            await self._keep(user, out)
            return MessageRef(chat=chat, message_id=f"kept-{next(self._ids)}")

    async def _keep(self, user: str, out: KeptReply) -> None:
        """Store `out` for the user's next message; PlatformError when even that fails, so the
        bot layer treats it as a reply that could not be sent (it catches platform errors)."""
        try:
            dropped = await self._kept.keep(self._kept_key, user, out, limit=self._max_pending)
        except StoreError as exc:
            raise PlatformError(f"{self.name}: the reply could not be sent nor kept: "
                                f"{exc}") from None
        self._kept_users.add(user)
        if dropped:
            log.warning("%s: too many kept replies for one user; the oldest %d dropped",
                        self.name, dropped)

    async def _flush_pending(self, user: str) -> None:
        """Deliver the kept replies in order, now that the user wrote again."""
        async with self._outbound.hold(user):
            await self._flush_locked(user)

    async def _flush_locked(self, user: str) -> None:
        """Deliver `user`'s kept replies, oldest first, each removed from the store only once
        WeChat took it or refused it for good. Stops, keeping the rest, when WeChat can't take
        them yet; the caller holds the user's outbound lane."""
        self._flush_on_send.discard(user)
        if user not in self._kept_users:
            return
        key = self._kept_key
        try:
            while (kept := await self._kept.peek(key, user)) is not None:
                if kept.kept_at is not None and utcnow() - kept.kept_at > self._keep_for:
                    log.info("%s: a kept reply from %s is too old and was dropped", self.name,
                             kept.kept_at.isoformat(timespec="minutes"))
                    await self._kept.remove(key, user, kept.id)
                    continue
                try:
                    await self._push(user, kept)
                except WindowClosed as exc:
                    log.info("%s: kept replies wait for the next message: %s", self.name, exc)
                    return
                except (Unreachable, RateLimited) as exc:
                    log.info("%s: kept replies wait longer: %s", self.name, exc)
                    self._flush_on_send.add(user)
                    return
                except Forbidden as exc:
                    log.info("%s: kept replies dropped, user gone: %s", self.name, exc)
                    await self._kept.clear(key, user)
                    break
                except PlatformError as exc:
                    log.warning("%s: a kept reply was refused and dropped: %s", self.name, exc)
                await self._kept.remove(key, user, kept.id)
        except StoreError as exc:  # the replies stay where they are; new ones queue behind
            log.warning("%s: kept replies could not be delivered now: %s", self.name, exc)
            self._flush_on_send.add(user)  # the next send tries again before its own reply
            return
        self._kept_users.discard(user)

    async def _push(self, user: str, out: KeptReply) -> str:
        """One message to WeChat; the platform's message id when it gives one."""
        client = self._client
        wecom = isinstance(client, WeComAppClient)
        api = "message/send" if wecom else "message/custom/send"
        if out.file is None:
            if wecom:
                got = await self._call(api, client.message.send_text, self._agent_id, user,
                                       out.text)
            else:
                got = await self._call(api, client.message.send_text, user, out.text)
        else:
            media_type = "image" if out.file.kind == "image" else "file"
            upload = await self._call("media/upload", client.media.upload, media_type,
                                      (out.file.filename, out.file.data, out.file.mime_type))
            media_id = upload.get("media_id") if isinstance(upload, dict) else None
            if not media_id:
                raise PlatformError(f"{self.name} media/upload: no media id in the answer")
            if wecom:
                send = client.message.send_image if media_type == "image" \
                    else client.message.send_file
                got = await self._call(api, send, self._agent_id, user, media_id)
            else:
                got = await self._call(api, client.message.send_image, user, media_id)
        if wecom and isinstance(got, dict) and got.get("invaliduser"):
            raise Forbidden(f"{self.name} {api}: the user is not in the app's visible range")
        msg_id = got.get("msgid") if isinstance(got, dict) else None
        return str(msg_id or f"sent-{next(self._ids)}")

    async def _call(self, api: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """A wechatpy call in the adapter's threads, its failures as `core.errors` types."""
        if self._closed:
            raise Unreachable(f"{self.name} {api}: the adapter is closed")
        try:
            return await self._run(fn, *args, **kwargs)
        except InputError:  # ours (TooLarge): already a `core.errors` type, free of secrets
            raise
        except Exception as exc:
            raise map_error(f"{self.name} {api}", exc) from None

    async def _run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(fn, *args, **kwargs))


def split_bytes(text: str, limit: int) -> list[str]:
    """Pieces of at most `limit` UTF-8 bytes, cut at paragraph, line, sentence, then word
    boundaries when one lies in the last two thirds; whitespace at the cuts is dropped."""
    parts: list[str] = []
    rest = text
    while len(rest.encode("utf-8")) > limit:
        fit = len(rest.encode("utf-8")[:limit].decode("utf-8", "ignore"))
        window = rest[:fit]
        cut = fit
        for sep in _SEPARATORS:
            idx = window.rfind(sep)
            if idx >= fit // 3:
                cut = idx + len(sep)
                break
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest.strip() or not parts:
        parts.append(rest)
    return [p for p in parts if p] or [text]
