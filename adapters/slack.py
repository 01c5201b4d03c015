"""Slack, translated (slack-bolt async): events, slash commands and buttons -> `IncomingMessage`,
replies -> Web API calls (`chat.postMessage`, `chat.update`, the files upload-v2 flow).

Two ways in. HTTP events mode serves a small aiohttp endpoint: the v0 request signature (and its
timestamp, stale after 5 minutes) is checked before the body is even parsed, then Bolt checks it
again in its own middleware; there is no switch to turn the check off. Socket Mode (when an app
token is given) connects to whatever `apps.connections.open` returns. Either way the message is
handed on in a task the adapter owns (messages of different chats go ahead concurrently, those
of one chat in arrival order), and the request is acknowledged when the core has taken it (the
handler returned: the gateway returns once the message is stored or spooled to disk) or after
`ACK_WAIT_S`, whichever is first, inside Slack's 3 s: nothing acknowledged is only in memory.
Slack's redeliveries (`X-Slack-Retry-Num`, or a Socket Mode `retry_attempt`) carry the same
event: its `ts` is the message id, so the gateway runs it once.

Chats: a DM is one conversation (a thread in it is its own); in channels the answer goes into
the thread of the message (a top-level mention starts one). A channel message is addressed to
the bot when it mentions it or sits in a thread the bot already talks in.

Rate limits: `chat.postMessage` / `chat.update` 429s become `RateLimited(retry_after)` at once
(the renderer drops progress edits and waits out final ones); every other call gets the SDK's
`AsyncRateLimitErrorRetryHandler`. Errors never carry the tokens or a file URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Sequence
from typing import Any, cast
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from adapters.http_listen import listen
from adapters.lanes import Lanes, drain
from core.errors import (
    ConfigError,
    Forbidden,
    FormattingRejected,
    InputError,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
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

log = logging.getLogger(__name__)

PLATFORM = "slack"
# Slack truncates `text` at 40,000 characters but documents 4,000 as the most a message should
# hold; 3,600 leaves room for the `&<>` escapes added here and keeps every chat.update (which
# resends the whole text) small.
MAX_MESSAGE = 3600
MAX_SECTION = 3000  # a section block's text, used only for messages with buttons
MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024
MAX_BODY = 1024 * 1024
# Slack delivers again what is not acknowledged within 3 s: the ack waits this long at most for
# the core to take the message (the handler to return)
ACK_WAIT_S = 2.0
_RENDERER_METHODS = ("chat.postMessage", "chat.update")  # their 429s go up as RateLimited
_GONE = {"not_in_channel", "channel_not_found", "is_archived", "restricted_action",
         "restricted_action_read_only_channel", "restricted_action_thread_only_channel",
         "restricted_action_non_threadable_channel", "cannot_dm_bot", "ekm_access_denied",
         "team_access_not_granted", "user_not_found", "user_disabled"}
_BAD_AUTH = {"invalid_auth", "not_authed", "token_revoked", "token_expired", "account_inactive",
             "not_allowed_token_type"}
_FORMATTING = {"invalid_blocks", "invalid_blocks_format", "invalid_attachments"}
_IGNORED_SUBTYPES = {"message_deleted", "message_replied", "channel_join", "channel_leave",
                     "channel_topic", "channel_purpose", "channel_name", "channel_archive",
                     "channel_unarchive", "group_join", "group_leave", "pinned_item",
                     "unpinned_item", "bot_message", "ekm_access_denied", "tombstone",
                     "assistant_app_thread"}
_ANGLE = re.compile(r"<([^<>|]+)(?:\|([^<>]*))?>")
_KNOWN_THREADS = 4096
_KNOWN_FILES = 4096


class _ClientLog(logging.LoggerAdapter[logging.Logger]):
    """The Web API client's logger. slack_sdk compares its logger's own `level` with DEBUG
    before every request and response, and a logger that inherits its level has NOTSET (0)
    there: it formatted both (headers, parameters, the response body) for a debug line that
    nobody logs, 4% of the Slack gateway's CPU per message. Here `level` is the effective one,
    so the lines are made when debug logging is on, as `bot.logs` sets it."""

    @property
    def level(self) -> int:
        return self.logger.getEffectiveLevel()


class _QuietRateLimitRetry(AsyncRateLimitErrorRetryHandler):
    """The SDK's 429 retry, except for the calls whose caller decides (the renderer)."""

    async def _can_retry_async(self, *, state: RetryState, request: HttpRequest,
                               response: HttpResponse | None = None,
                               error: Exception | None = None) -> bool:
        if request.url.endswith(_RENDERER_METHODS):
            return False
        return await super()._can_retry_async(state=state, request=request, response=response,
                                              error=error)


class _Bounded[K, V](OrderedDict[K, V]):
    """A dict that forgets its oldest entries beyond `limit`."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def put(self, key: K, value: V) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)


class SlackAdapter:
    """The Slack Web API and Events API (HTTP or Socket Mode) behind `core.ports.Adapter`."""

    name = PLATFORM

    def __init__(self, *, bot_token: str, signing_secret: str | None = None,
                 app_token: str | None = None, api_base_url: str | None = None,
                 events_listen: str = "127.0.0.1", events_port: int = 3000,
                 events_path: str = "/slack/events", commands_name: str = "/bullpen",
                 commands: Sequence[tuple[str, str]] | None = None,
                 min_edit_interval_s: float = 1.0, timeout_s: float = 30.0) -> None:
        if not bot_token:
            raise ConfigError("SLACK_BOT_TOKEN is empty")
        if not app_token and not signing_secret:
            raise ConfigError("Slack HTTP events mode needs SLACK_SIGNING_SECRET "
                              "(or SLACK_APP_TOKEN for Socket Mode)")
        if not commands_name.startswith("/"):
            raise ConfigError(f"Slack slash command {commands_name!r} must start with '/'")
        self._token = bot_token
        self._app_token = app_token or None
        self._verifier = SignatureVerifier(signing_secret) if signing_secret else None
        self._events_listen = events_listen
        self._events_port = events_port
        self._events_path = events_path
        self._commands_name = commands_name
        self._command_names = {n for n, _ in commands} if commands is not None else None
        self._timeout_s = timeout_s
        self.capabilities = Capabilities(
            max_message_length=MAX_MESSAGE, can_edit=True, min_edit_interval_s=min_edit_interval_s,
            supports_images=True, supports_documents=True, supports_voice=True,
            supports_buttons=True, markup="slack_mrkdwn")
        handlers: list[AsyncRetryHandler] = [AsyncConnectionErrorRetryHandler(),
                                              _QuietRateLimitRetry(max_retry_count=2)]
        self._client = AsyncWebClient(
            token=bot_token, base_url=api_base_url or AsyncWebClient.BASE_URL,
            timeout=int(timeout_s), retry_handlers=handlers,
            logger=cast(logging.Logger, _ClientLog(logging.getLogger("slack_sdk.web"))))
        self._allowed_file_hosts = {"files.slack.com"}
        if api_base_url:
            self._allowed_file_hosts.add(urlsplit(api_base_url).netloc)
        # every argument explicit: Bolt would otherwise read SLACK_* from the environment
        self._app = AsyncApp(
            name="bullpen", client=self._client, signing_secret=signing_secret or "",
            process_before_response=True,  # the ack goes when the listener returns
            request_verification_enabled=True, url_verification_enabled=True,
            ssl_check_enabled=True, attaching_conversation_kwargs_enabled=False)
        self._app.event("message")(self._on_event)
        self._app.event("app_mention")(self._on_event)
        self._app.event(re.compile(".*"))(self._ignore)
        self._app.command(commands_name)(self._on_command)
        self._app.action(re.compile(".*"))(self._on_action)
        self._on_message: MessageHandler | None = None
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self._socket: AsyncSocketModeHandler | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.ack_wait_s = ACK_WAIT_S
        self._chats = Lanes()
        self._threads: _Bounded[tuple[str, str], bool] = _Bounded(_KNOWN_THREADS)
        self._file_urls: _Bounded[str, str] = _Bounded(_KNOWN_FILES)
        self._closing = False
        self.bot_user_id = ""
        self.events_port: int | None = None  # the bound port once the events server runs

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self, on_message: MessageHandler) -> None:
        """Check the token (auth.test), then serve events over HTTP or connect Socket Mode.
        On failure everything started so far is stopped again."""
        self._on_message = on_message
        self._closing = False
        try:
            await self._start()
        except BaseException:
            await self.aclose()
            raise

    async def _start(self) -> None:
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self._timeout_s))
        self._client.session = self._session
        me = await self._checked("auth.test", "SLACK_BOT_TOKEN", self._client.auth_test())
        self.bot_user_id = str(me.get("user_id") or "")
        if self._app_token:
            await self._start_socket(self._app_token)
        else:
            await self._start_http()

    async def _checked(self, method: str, setting: str, operation: Awaitable[Any]) -> Any:
        """A start-up call: a rejected token is a `ConfigError` naming the setting."""
        try:
            return await operation
        except SlackApiError as exc:
            if _code(exc) in _BAD_AUTH:
                raise ConfigError(f"Slack rejected the token in {setting}") from None
            raise self._error(method, exc) from None
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            raise self._error(method, exc) from None

    async def aclose(self) -> None:
        """Stop taking events, let the ones in hand reach the gateway, close the connections."""
        self._closing = True
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._socket is not None:
            await self._close_socket(self._socket)
            self._socket = None
        await drain(self._tasks, timeout_s=5.0)
        if self._session is not None:
            await self._session.close()
            self._session = None
            self._client.session = None

    # --- HTTP events mode ------------------------------------------------------------------

    async def _start_http(self) -> None:
        server = web.Application(client_max_size=MAX_BODY)
        server.router.add_post(self._events_path, self._http_event)
        self._runner, self.events_port = await listen(
            server, host=self._events_listen, port=self._events_port, what="slack events")

    async def _http_event(self, request: web.Request) -> web.Response:
        """One POST from Slack: the signature first (401), then Bolt (which checks it again)."""
        body = await request.read()
        assert self._verifier is not None
        try:
            valid = self._verifier.is_valid(
                body, request.headers.get("X-Slack-Request-Timestamp"),
                request.headers.get("X-Slack-Signature"))
        except (ValueError, UnicodeDecodeError):  # a timestamp that is not a number ...
            valid = False
        if not valid:
            return web.Response(status=401, text="invalid request")
        retry = request.headers.get("X-Slack-Retry-Num")
        if retry:
            log.debug("slack redelivery #%s (%s)", retry,
                      request.headers.get("X-Slack-Retry-Reason", "?"))
        try:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            bolt_request = AsyncBoltRequest(body=body.decode(), query=request.query_string,
                                            headers=dict(request.headers))
        except ValueError:  # signed but not JSON / form data
            return web.Response(status=400, text="malformed body")
        return await to_aiohttp_response(await self._app.async_dispatch(bolt_request))

    # --- Socket Mode -----------------------------------------------------------------------

    async def _start_socket(self, app_token: str) -> None:
        handler = AsyncSocketModeHandler(self._app, app_token=app_token,
                                         web_client=self._client)
        self._socket = handler
        # the SDK's connect() retries forever: ask for the URL here so a bad token fails
        handler.client.wss_uri = await self._checked(
            "apps.connections.open", "SLACK_APP_TOKEN", handler.client.issue_new_wss_url())
        await handler.connect_async()  # type: ignore[no-untyped-call]

    @staticmethod
    async def _close_socket(handler: AsyncSocketModeHandler) -> None:
        client = handler.client
        await handler.close_async()  # type: ignore[no-untyped-call]
        futures = [f for f in (client.message_processor, client.current_session_monitor,
                               client.message_receiver) if f is not None]
        await asyncio.gather(*futures, return_exceptions=True)  # cancelled by close()

    # --- events in -------------------------------------------------------------------------

    async def _on_event(self, body: dict[str, Any]) -> None:
        incoming = self.translate_event(body.get("event") or {})
        if incoming is not None:
            await self._taken(self._hand_on(incoming))

    async def _ignore(self, body: dict[str, Any]) -> None:
        return None

    async def _on_command(self, body: dict[str, Any], ack: Any) -> None:
        await ack()  # sent when the listener returns (process_before_response)
        incoming = self.translate_command(body)
        if incoming is not None:
            await self._taken(self._hand_on(incoming))

    async def _on_action(self, body: dict[str, Any], ack: Any) -> None:
        await ack()  # sent when the listener returns (process_before_response)
        incoming = self.translate_action(body)
        if incoming is not None:
            await self._taken(self._hand_on(incoming))

    def _hand_on(self, incoming: IncomingMessage) -> asyncio.Task[None] | None:
        if self._closing or self._on_message is None:
            return None
        task = asyncio.create_task(self._deliver(incoming), name=f"slack:{incoming.chat.key}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _taken(self, task: asyncio.Task[None] | None) -> None:
        """Until the core has taken the message (its handler returned), at most `ack_wait_s`:
        the listener returns, and Bolt acknowledges (process_before_response), after it."""
        if task is not None:
            await asyncio.wait({task}, timeout=self.ack_wait_s)

    async def _deliver(self, incoming: IncomingMessage) -> None:
        """Hands one message to the gateway, after the earlier messages of its chat."""
        key = incoming.chat.key
        try:
            async with self._chats.hold(key):
                assert self._on_message is not None
                await self._on_message(incoming)
        except Exception:
            log.exception("slack message %s in %s failed", incoming.message_id, key)

    def translate_event(self, event: dict[str, Any]) -> IncomingMessage | None:
        """A `message` or `app_mention` event as an `IncomingMessage`, or None."""
        kind = event.get("type")
        if kind not in ("message", "app_mention"):
            return None
        subtype = event.get("subtype")
        channel = str(event.get("channel") or "")
        if subtype == "message_changed":
            return self._from_edit(event, channel)
        if subtype in _IGNORED_SUBTYPES or event.get("bot_id") or event.get("hidden"):
            return None  # service messages, other bots (no loops), our own messages
        user = str(event.get("user") or "")
        ts = str(event.get("ts") or "")
        if not user or not ts or not channel or user == self.bot_user_id:
            return None
        attachments = self._attachments(event.get("files") or [])
        raw = str(event.get("text") or "")
        text = self._plain(raw)
        if not text and not attachments:
            return None
        direct = event.get("channel_type") == "im" or (
            "channel_type" not in event and channel.startswith("D"))
        thread = event.get("thread_ts")
        thread_id = str(thread) if thread and thread != ts else None
        chat = ChatRef(platform=PLATFORM, chat_id=channel, is_group=not direct,
                       thread_id=thread_id if direct else thread_id or ts)
        addressed = direct or kind == "app_mention" or self._mentions_me(raw) or (
            thread_id is not None and ((channel, thread_id) in self._threads
                                       or event.get("parent_user_id") == self.bot_user_id))
        return IncomingMessage(
            platform=PLATFORM, chat=chat, sender=Sender(platform_uid=user),
            message_id=ts, text=text, attachments=attachments, reply_to=thread_id,
            addressed=addressed)

    def _from_edit(self, event: dict[str, Any], channel: str) -> IncomingMessage | None:
        """An edit is recorded (the gateway does not answer it again); unfurls are not edits."""
        inner = event.get("message") or {}
        edited = inner.get("edited") or {}
        user = str(inner.get("user") or "")
        if not edited or inner.get("bot_id") or not user or user == self.bot_user_id:
            return None
        ts = str(inner.get("ts") or "")
        direct = event.get("channel_type") == "im" or channel.startswith("D")
        thread = inner.get("thread_ts")
        thread_id = str(thread) if thread and thread != ts else None
        chat = ChatRef(platform=PLATFORM, chat_id=channel, is_group=not direct,
                       thread_id=thread_id if direct else thread_id or ts)
        return IncomingMessage(
            platform=PLATFORM, chat=chat, sender=Sender(platform_uid=user),
            message_id=f"{ts}:edit:{edited.get('ts', '')}", text=self._plain(
                str(inner.get("text") or "")), is_edit=True, reply_to=thread_id)

    def translate_command(self, body: dict[str, Any]) -> IncomingMessage | None:
        """`/bullpen mode debate` -> "/mode debate"; `/bullpen` alone -> "/help"; with the
        router's command list given, `/bullpen <question>` is the question itself."""
        channel = str(body.get("channel_id") or "")
        user = str(body.get("user_id") or "")
        trigger = str(body.get("trigger_id") or "")
        if not channel or not user or not trigger:
            return None
        words = self._plain(str(body.get("text") or "")).lstrip("/").strip()
        name = words.split(maxsplit=1)[0].lower() if words else ""
        if not words:
            text = "/help"
        elif self._command_names is None or name in self._command_names:
            text = "/" + words
        else:
            text = words
        chat = ChatRef(platform=PLATFORM, chat_id=channel, is_group=not channel.startswith("D"))
        return IncomingMessage(
            platform=PLATFORM, chat=chat,
            sender=Sender(platform_uid=user, display_name=str(body.get("user_name") or "")),
            message_id=f"cmd:{trigger}", text=text, addressed=True)

    def translate_action(self, body: dict[str, Any]) -> IncomingMessage | None:
        """A pressed button of ours (block_actions) as a callback."""
        if body.get("type") != "block_actions":
            return None
        actions = body.get("actions") or []
        user = str((body.get("user") or {}).get("id") or "")
        container = body.get("container") or {}
        message = body.get("message") or {}
        channel = str((body.get("channel") or {}).get("id") or container.get("channel_id") or "")
        if not actions or not user or not channel:
            return None
        action = actions[0]
        value = action.get("value")
        if not str(action.get("action_id", "")).startswith("bp_") or not value:
            return None
        ts = str(message.get("ts") or container.get("message_ts") or "")
        thread = message.get("thread_ts") or container.get("thread_ts")
        thread_id = str(thread) if thread and thread != ts else None
        chat = ChatRef(platform=PLATFORM, chat_id=channel, thread_id=thread_id,
                       is_group=not channel.startswith("D"))
        return IncomingMessage(
            platform=PLATFORM, chat=chat, sender=Sender(platform_uid=user, display_name=str(
                (body.get("user") or {}).get("username") or "")),
            message_id=f"act:{action.get('action_ts') or body.get('trigger_id', '')}",
            reply_to=ts or None, callback_data=str(value), addressed=True)

    def _mentions_me(self, raw: str) -> bool:
        return bool(self.bot_user_id) and f"<@{self.bot_user_id}" in raw

    def _plain(self, raw: str) -> str:
        """Slack's message markup as the text a person typed; our own mention removed."""

        def angle(m: re.Match[str]) -> str:
            target, label = m.group(1), m.group(2)
            if target.startswith("@"):
                return "" if target[1:] == self.bot_user_id else "@" + (label or target[1:])
            if target.startswith("#"):
                return "#" + (label or target[1:])
            if target.startswith("!"):
                return "@" + (label or target[1:].split("^")[0])
            return label or target.removeprefix("mailto:")

        text = _ANGLE.sub(angle, raw)
        text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        return re.sub(r"[ \t]{2,}", " ", text).strip()

    def _attachments(self, files: list[dict[str, Any]]) -> list[Attachment]:
        out: list[Attachment] = []
        for f in files:
            file_id = str(f.get("id") or "")
            mime = str(f.get("mimetype") or "")
            sub = str(f.get("subtype") or "")
            if f.get("mode") == "tombstone" or not file_id:
                continue
            if sub == "slack_audio":
                kind = "voice"
            elif mime.startswith("audio/"):
                kind = "audio"
            elif sub == "slack_video" or mime.startswith("video/"):
                kind = "video"
            elif mime.startswith("image/"):
                kind = "image"
            else:
                kind = "document"
            url = f.get("url_private_download") or f.get("url_private")
            if url:
                self._file_urls.put(file_id, str(url))
            duration = f.get("duration_ms")
            out.append(Attachment(
                kind=kind, file_id=file_id, filename=str(f.get("name") or ""), mime_type=mime,
                size=f.get("size"), duration_s=duration / 1000 if duration else None))
        return out

    # --- operations out --------------------------------------------------------------------

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        text = _outgoing(reply)
        kwargs: dict[str, Any] = {"channel": chat.chat_id, "text": text,
                                  "unfurl_links": False, "unfurl_media": False}
        if chat.thread_id:
            kwargs["thread_ts"] = chat.thread_id
        if reply.buttons:
            kwargs["blocks"] = _blocks(text, reply.buttons)
        sent = await self._call("chat.postMessage", self._client.chat_postMessage(**kwargs))
        if chat.thread_id:
            self._threads.put((chat.chat_id, chat.thread_id), True)
        return MessageRef(chat=chat, message_id=str(sent.get("ts")))

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        text = _outgoing(reply)
        kwargs: dict[str, Any] = {"channel": ref.chat.chat_id, "ts": ref.message_id,
                                  "text": text}
        if reply.buttons:
            kwargs["blocks"] = _blocks(text, reply.buttons)
        await self._call("chat.update", self._client.chat_update(**kwargs))

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        """getUploadURLExternal, the upload POST, completeUploadExternal (into the thread)."""
        caption = _escape(file.caption)
        done = await self._call("files.upload", self._client.files_upload_v2(
            channel=chat.chat_id, thread_ts=chat.thread_id, file=file.data,
            filename=file.filename, title=file.filename,
            alt_txt=file.caption[:1000] or None if file.kind == "image" else None,
            initial_comment=caption or None))
        uploaded = done.get("file") or {}
        if chat.thread_id:
            self._threads.put((chat.chat_id, chat.thread_id), True)
        return MessageRef(chat=chat, message_id=str(uploaded.get("id") or ""))

    async def is_chat_admin(self, chat: ChatRef, sender: Sender) -> bool | None:
        """`core.ports.ChatAdmins`. Slack channels have no admins of their own that a bot may
        read, so a channel's admins are the workspace's admins and owners (users.info
        `is_admin`, `is_owner`, `is_primary_owner`) and the person who created the channel
        (conversations.info `creator`). None outside channels (DMs), and when the app lacks
        the scopes to ask (`users:read`, `channels:read`): it cannot tell."""
        if not chat.is_group:
            return None
        info = await self._ask("users.info", self._client.users_info(user=sender.platform_uid))
        if info is None:
            return None
        user = info.get("user") or {}
        if any(user.get(flag) for flag in ("is_admin", "is_owner", "is_primary_owner")):
            return True
        channel = await self._ask("conversations.info",
                                  self._client.conversations_info(channel=chat.chat_id))
        if channel is None:
            return None
        return bool((channel.get("channel") or {}).get("creator") == sender.platform_uid)

    async def _ask(self, method: str, operation: Awaitable[Any]) -> Any:
        """A read the app may lack the scope for: None then (logged), else as `_call`."""
        try:
            return await operation
        except SlackApiError as exc:
            if _code(exc) != "missing_scope":
                raise self._error(method, exc) from None
            data = exc.response.data if isinstance(exc.response.data, dict) else {}
            log.warning("slack %s: the app lacks the scope (%s)", method,
                        data.get("needed", "?"))
            return None
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            raise self._error(method, exc) from None

    async def typing(self, chat: ChatRef) -> None:
        """Bots have no typing indicator outside assistant threads: the placeholder shows it."""
        return None

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        """The file's private URL (from the event, else files.info), downloaded with the bot
        token as a header, and only from Slack's file host. The URL is never shown."""
        try:
            attachment = message.attachments[index]
        except IndexError:
            raise InputError(f"message has no attachment #{index}") from None
        if not attachment.file_id:
            raise InputError("attachment has no file id")
        if attachment.size is not None and attachment.size > MAX_DOWNLOAD_BYTES:
            raise TooLarge("file is larger than the 50 MB the bot downloads",
                           size=attachment.size, limit=MAX_DOWNLOAD_BYTES)
        url = self._file_urls.get(attachment.file_id)
        if url is None:
            info = await self._call("files.info", self._client.files_info(
                file=attachment.file_id))
            meta = info.get("file") or {}
            url = meta.get("url_private_download") or meta.get("url_private")
            if not url:
                raise PlatformError("slack files.info: the file has no download URL")
        if urlsplit(url).netloc not in self._allowed_file_hosts:
            raise PlatformError("slack download: the file is not on Slack's file host")
        return await self._download(url)

    async def _download(self, url: str) -> bytes:
        if self._session is None:
            raise PlatformError("slack download: the adapter is not started")
        try:
            async with self._session.get(
                    url, headers={"Authorization": f"Bearer {self._token}"}) as resp:
                if resp.status != 200:
                    raise PlatformError(f"slack download: HTTP {resp.status}")
                if resp.content_type == "text/html":  # Slack's sign-in page: not authorized
                    raise PlatformError("slack download: the bot may not read this file")
                data = bytearray()
                async for chunk in resp.content.iter_chunked(64 * 1024):
                    data += chunk
                    if len(data) > MAX_DOWNLOAD_BYTES:
                        raise TooLarge("file is larger than the 50 MB the bot downloads",
                                       size=resp.content_length, limit=MAX_DOWNLOAD_BYTES,
                                       read=len(data))
                return bytes(data)
        except (aiohttp.ClientError, TimeoutError) as exc:  # its text may hold the URL
            raise PlatformError(f"slack download: {type(exc).__name__}") from None

    async def _call(self, method: str, operation: Awaitable[Any]) -> Any:
        try:
            return await operation
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            raise self._error(method, exc) from None

    def _error(self, method: str, exc: BaseException) -> PlatformError:
        """The `core.errors` type for a Web API refusal, its message free of secrets."""
        where = f"slack {method}: "
        if not isinstance(exc, SlackApiError):
            if isinstance(exc, SlackClientError):  # e.g. the upload POST failed
                return PlatformError(where + type(exc).__name__)
            # aiohttp's errors and timeouts: not reached
            return PlatformUnavailable(where + (type(exc).__name__
                                                if not isinstance(exc, TimeoutError)
                                                else "timed out"))
        code = _code(exc)
        if exc.response.status_code == 429 or code == "ratelimited":
            return RateLimited(where + "rate limited", retry_after=_retry_after(exc))
        if code in _GONE:
            return Forbidden(where + code)
        if code in _FORMATTING:
            return FormattingRejected(where + code)
        failed = where + (code or f"HTTP {exc.response.status_code}")
        return (PlatformUnavailable(failed) if exc.response.status_code >= 500
                else PlatformError(failed))


# --- helpers -----------------------------------------------------------------------------------


def _code(exc: SlackApiError) -> str:
    data = exc.response.data if exc.response is not None else None
    return str(data.get("error") or "") if isinstance(data, dict) else ""


def _retry_after(exc: SlackApiError) -> float:
    headers = exc.response.headers or {}
    for key, value in headers.items():
        if key.lower() == "retry-after":
            raw = value[0] if isinstance(value, list) else value
            with contextlib.suppress(TypeError, ValueError):
                return max(1.0, float(raw))
    return 1.0


def _escape(text: str) -> str:
    """Slack's three control characters; everything else is shown as written."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _outgoing(reply: Reply) -> str:
    """`markdown` replies are already mrkdwn (`bot.markup`); plain text gets escaped."""
    return reply.text if reply.markup == "markdown" else _escape(reply.text)


def _blocks(text: str, rows: list[list[Button]]) -> list[dict[str, Any]]:
    """The text as a section and each row of buttons as an actions block."""
    blocks: list[dict[str, Any]] = [
        {"type": "section", "text": {"type": "mrkdwn", "text": text[:MAX_SECTION]}}]
    for r, row in enumerate(rows):
        blocks.append({"type": "actions", "block_id": f"bp_row_{r}", "elements": [
            {"type": "button", "action_id": f"bp_{r}_{i}", "value": b.data[:2000],
             "text": {"type": "plain_text", "text": b.label[:75]}}
            for i, b in enumerate(row[:25])]})
    return blocks
