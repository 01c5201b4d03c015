"""Discord, translated (discord.py 2.7): gateway events and interactions -> `IncomingMessage`,
replies -> the REST API.

The gateway brings DMs and guild messages (answered when they mention the bot or reply to it;
`addressed` says which) and slash commands. Slash commands are synced from `commands` at start
(one optional `text` option each) and deferred at once ("is thinking..."). The first reply or
file answering that command (`in_reply_to` is the command's message id, `i:<interaction id>`)
fills the deferred response, and later edits of it go through the interaction's webhook
(15-minute token), so a long run is one progressively edited message. Everything else, such as
the continuation pieces and charts of an earlier question in the same channel, or the command's
own later pieces, goes to the channel. A deferred response that no reply has taken shortly
after the command was handed on is settled with the command's echo.

With `interactions_port`, an aiohttp endpoint takes HTTP interactions: the Ed25519 signature
(PyNaCl, `public_key`) and a 5-minute timestamp window are checked before anything else, and a
signature seen before is refused (401); PING gets PONG. Only `interactions_insecure=True` turns
the check off.

Group admins (`core.ports.ChatAdmins`): a member whose permissions in the channel grant
Administrator, Manage Server or Manage Channels; a slash command carries them, a mention is
answered by fetching the member.

discord.py reads its REST base and gateway URL from class attributes (process-global):
`api_base_url`/`gateway_url` are set while the adapter runs and restored by `aclose`.
Events of one chat are handed on in arrival order, other chats go ahead. Refusals become
`core.errors` types with messages free of tokens and URLs.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import re
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Awaitable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import discord
import yarl
from aiohttp import web
from discord.gateway import DiscordWebSocket
from discord.http import Route
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey

from adapters.http_listen import listen
from core.errors import (
    ConfigError,
    Forbidden,
    InputError,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
    TooLarge,
)
from core.ports import MessageHandler
from core.types import (
    Attachment,
    Capabilities,
    ChatRef,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    Reply,
    Sender,
)

log = logging.getLogger(__name__)

PLATFORM = "discord"
MAX_MESSAGE = 2000
MAX_UPLOAD_BYTES = 10 * 1024 * 1024  # a bot's default upload limit
MAX_DOWNLOAD_BYTES = 25 * 1024 * 1024
INTERACTION_TTL_S = 14 * 60.0  # interaction tokens last 15 minutes
ACK_GRACE_S = 2.0  # a deferred response no reply took by then gets the command's echo
SIGNATURE_WINDOW_S = 300.0
MEMBER_PERMISSIONS_S = 60.0  # a slash command's resolved permissions answer for this long
_KNOWN_CHANNELS = 4096
# a language of the command menu -> the Discord locales it is shown in
_LOCALES: dict[str, tuple[str, ...]] = {"zh": ("zh-CN", "zh-TW")}
COMMAND_OPTION = {"type": 3, "name": "text", "required": False,
                  "description": "What to ask, or the command's arguments"}
# the chat is gone or closed to us: cannot message the user, missing access or permissions,
# unknown channel or user
_GONE = {50007, 50001, 50013, 10003, 10013}
_TOKEN_GONE = {10015, 50027, 10062}  # unknown webhook, invalid webhook token, unknown interaction
_NO_MENTIONS = discord.AllowedMentions.none()
_DEFAULT_ENDPOINTS = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)


class _Endpoints:
    """Holds discord.py's process-global REST base and gateway URL for the adapters that run:
    set by the first, restored by the last; adapters that disagree are a configuration error."""

    def __init__(self) -> None:
        self._held: tuple[str, yarl.URL] | None = None
        self._holders = 0

    def hold(self, api_base_url: str | None, gateway_url: str | None) -> None:
        wanted = (api_base_url.rstrip("/") if api_base_url else _DEFAULT_ENDPOINTS[0],
                  yarl.URL(gateway_url) if gateway_url else _DEFAULT_ENDPOINTS[1])
        if self._held is not None and self._held != wanted:
            raise ConfigError("two Discord adapters in one process want different API base or "
                              "gateway URLs (discord.py keeps them process-global)")
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = wanted
        self._held = wanted
        self._holders += 1

    def release(self) -> None:
        self._holders -= 1
        if self._holders <= 0:
            Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = _DEFAULT_ENDPOINTS
            self._held, self._holders = None, 0


_ENDPOINTS = _Endpoints()


@contextlib.contextmanager
def pointed_at(api_base_url: str | None, gateway_url: str | None) -> Iterator[None]:
    """discord.py pointed at another REST base and gateway (a local fake) inside the block,
    for any client in the process (the adapter does this itself while it runs)."""
    _ENDPOINTS.hold(api_base_url, gateway_url)
    try:
        yield
    finally:
        _ENDPOINTS.release()


@dataclass(eq=False)
class _Pending:
    """A deferred slash command waiting for the first reply that answers it."""

    interaction: discord.Interaction[discord.Client]
    text: str
    expires: float
    ack_at: float | None = None

    @property
    def message_id(self) -> str:
        """The id its `IncomingMessage` has: replies answering it carry it in `in_reply_to`."""
        return _interaction_message_id(self.interaction)


def _interaction_message_id(interaction: discord.Interaction[discord.Client]) -> str:
    return f"i:{interaction.id}"


class _Turns:
    """Per-chat FIFO: one chat's events are handed on in arrival order, other chats go ahead
    (discord.py runs every event handler in a task of its own)."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: Counter[str] = Counter()

    @contextlib.asynccontextmanager
    async def of(self, key: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault(key, asyncio.Lock())
        self._users[key] += 1
        try:
            async with lock:
                yield
        finally:
            self._users[key] -= 1
            if not self._users[key]:
                del self._users[key], self._locks[key]


class _Client(discord.Client):
    def __init__(self, adapter: DiscordAdapter, **options: Any) -> None:
        super().__init__(**options)
        self._adapter = adapter

    async def on_connect(self) -> None:
        self._adapter._connected.set()

    async def on_message(self, message: discord.Message) -> None:
        await self._adapter._on_gateway_message(message)

    async def on_interaction(self, interaction: discord.Interaction[discord.Client]) -> None:
        await self._adapter._on_gateway_interaction(interaction)


class DiscordAdapter:
    """The Discord gateway, REST API and HTTP interactions behind `core.ports.Adapter`."""

    name = PLATFORM

    def __init__(self, *, token: str, application_id: int | None = None,
                 api_base_url: str | None = None, gateway_url: str | None = None,
                 public_key: str | None = None, interactions_listen: str = "127.0.0.1",
                 interactions_port: int | None = None, interactions_path: str = "/interactions",
                 interactions_insecure: bool = False,
                 commands: Sequence[tuple[str, str]] | None = None,
                 localized_commands: Mapping[str, Sequence[tuple[str, str]]] | None = None,
                 min_edit_interval_s: float = 1.0, gateway: bool = True,
                 message_content_intent: bool = False, max_ratelimit_wait_s: float = 30.0,
                 start_timeout_s: float = 30.0) -> None:
        if not token:
            raise ConfigError("DISCORD_BOT_TOKEN is empty")
        self._verify_key: VerifyKey | None = None
        if public_key:
            try:
                self._verify_key = VerifyKey(bytes.fromhex(public_key))
            except ValueError:
                raise ConfigError("DISCORD_PUBLIC_KEY is not a hex Ed25519 public key") from None
        elif interactions_port is not None and not interactions_insecure:
            raise ConfigError("Discord HTTP interactions need DISCORD_PUBLIC_KEY (or "
                              "DISCORD_INTERACTIONS_INSECURE=true to run without the check)")
        if interactions_insecure:
            self._verify_key = None
        self._token = token
        self._api_base_url = api_base_url
        self._gateway_url = gateway_url
        self._interactions_listen = interactions_listen
        self._interactions_port = interactions_port
        self._interactions_path = interactions_path
        self._commands = list(commands or [])
        # name -> {Discord locale: description}: the menu in other languages ("zh": zh-CN, zh-TW)
        self._localizations: dict[str, dict[str, str]] = {}
        for lang, localized in (localized_commands or {}).items():
            for name, description in localized:
                for locale in _LOCALES.get(lang, (lang,)):
                    self._localizations.setdefault(name, {})[locale] = description[:100]
        self._use_gateway = gateway
        self._start_timeout_s = start_timeout_s
        self.capabilities = Capabilities(
            max_message_length=MAX_MESSAGE, can_edit=True,
            min_edit_interval_s=min_edit_interval_s, supports_images=True,
            supports_documents=True, supports_voice=True, supports_buttons=False,
            markup="discord_md")
        intents = discord.Intents.none()
        intents.guilds = intents.guild_messages = intents.dm_messages = True
        intents.message_content = message_content_intent  # privileged; DMs and mentions need not
        self._client = _Client(self, intents=intents, application_id=application_id,
                               max_messages=None, chunk_guilds_at_startup=False,
                               max_ratelimit_timeout=max_ratelimit_wait_s)
        self._on_message: MessageHandler | None = None
        self._connected = asyncio.Event()
        self._turns = _Turns()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._gateway_task: asyncio.Task[None] | None = None
        self._janitor: asyncio.Task[None] | None = None
        self._pending: dict[str, list[_Pending]] = {}
        self._originals: dict[str, _Pending] = {}  # message id -> its interaction
        self._seen: OrderedDict[str, float] = OrderedDict()  # signatures in the window
        # group admins (is_chat_admin): the guild of each guild channel seen, and the
        # permissions slash commands carried (the member's, resolved in the channel)
        self._guild_of: OrderedDict[str, int] = OrderedDict()
        self._permissions: OrderedDict[tuple[str, str], tuple[float, discord.Permissions]] = (
            OrderedDict())
        self._site_runner: web.AppRunner | None = None
        self._holding = False
        self._closed = False
        self.interactions_port: int | None = None  # the bound port once the endpoint runs

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self, on_message: MessageHandler) -> None:
        """Log in, sync the slash commands, serve HTTP interactions, connect the gateway.
        On failure everything started so far is stopped again."""
        self._on_message = on_message
        try:
            await self._start()
        except BaseException:
            await self.aclose()
            raise

    async def _start(self) -> None:
        _ENDPOINTS.hold(self._api_base_url, self._gateway_url)
        self._holding = True
        try:
            await self._client.login(self._token)
        except discord.LoginFailure:
            raise ConfigError("Discord rejected the bot token (DISCORD_BOT_TOKEN)") from None
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _error("login", exc) from None
        await self._sync_commands()
        if self._interactions_port is not None:
            await self._start_interactions(self._interactions_port)
        if not self._use_gateway:
            return
        self._gateway_task = asyncio.create_task(self._client.connect(), name="discord-gateway")
        ready = asyncio.create_task(self._connected.wait(), name="discord-ready")
        try:
            await asyncio.wait({ready, self._gateway_task}, timeout=self._start_timeout_s,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if self._connected.is_set():
            self._gateway_task.add_done_callback(_gateway_ended)
            return
        if not self._gateway_task.done():
            raise PlatformError("discord gateway: no READY in time")
        failure = self._gateway_task.exception()
        if isinstance(failure, discord.ConnectionClosed) and failure.code == 4004:
            raise ConfigError("Discord rejected the bot token (DISCORD_BOT_TOKEN)")
        raise _error("gateway", failure) if failure is not None else PlatformError(
            "discord gateway: closed before READY")

    async def aclose(self) -> None:
        """Stop taking events, cancel the ones in hand, close the connections, restore the
        process-global URLs."""
        self._closed = True
        if self._site_runner is not None:
            await self._site_runner.cleanup()
            self._site_runner = None
        current = asyncio.current_task()
        tasks = [t for t in (*self._tasks, self._janitor) if t is not None and t is not current]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        self._janitor = None
        await self._client.close()
        # discord.py leaves its "ready" countdown running after close: it is stopped here
        ready_task = getattr(self._client._connection, "_ready_task", None)
        if isinstance(ready_task, asyncio.Task) and not ready_task.done():
            ready_task.cancel()
        if self._gateway_task is not None:
            if not self._gateway_task.done():
                self._gateway_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._gateway_task
            self._gateway_task = None
        if self._holding:
            _ENDPOINTS.release()
            self._holding = False

    async def _sync_commands(self) -> None:
        app_id = self._client.application_id
        if not self._commands or app_id is None:
            return
        payload = [{"name": name, "description": (description or name)[:100], "type": 1,
                    "options": [COMMAND_OPTION],
                    **({"description_localizations": self._localizations[name]}
                       if name in self._localizations else {})}
                   for name, description in self._commands]
        try:
            await self._client.http.bulk_upsert_global_commands(app_id, payload)
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            log.warning("discord slash commands not synced: %s", _error("commands", exc))

    def _spawn(self, coro: Coroutine[Any, Any, None], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @contextlib.contextmanager
    def _owned(self) -> Iterator[None]:
        """The running task (one discord.py started for an event) is ours until it ends."""
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._tasks.discard(task)

    # --- events in -------------------------------------------------------------------------

    async def _on_gateway_message(self, message: discord.Message) -> None:
        incoming = self.translate(message)
        if incoming is not None:
            with self._owned():
                await self._hand_on(incoming)

    async def _hand_on(self, incoming: IncomingMessage,
                       pending: _Pending | None = None) -> None:
        if self._on_message is None or self._closed:
            return
        key = incoming.chat.key
        async with self._turns.of(key):
            if pending is not None:
                self._pending.setdefault(key, []).append(pending)
            try:
                await self._on_message(incoming)
            except Exception:
                log.exception("discord message %s failed", incoming.message_id)
            finally:
                if pending is not None and pending in self._pending.get(key, ()):
                    self._settle_later(pending)

    def translate(self, message: discord.Message) -> IncomingMessage | None:
        """The message as an `IncomingMessage`, or None when there is nothing for the bot."""
        me = self._client.user
        if message.author.bot or message.webhook_id is not None or (
                me is not None and message.author.id == me.id):
            return None
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return None  # joins, pins, thread starts ...
        is_group = not isinstance(message.channel, discord.DMChannel | discord.GroupChannel)
        text = message.content
        if me is not None:
            text = re.sub(rf"<@!?{me.id}>", "", text).strip()
        attachments = [_attachment(a, message.flags.voice) for a in message.attachments]
        if not text and not attachments:
            return None
        if message.guild is not None:
            self._remember_guild(str(message.channel.id), message.guild.id)
        ref = message.reference
        return IncomingMessage(
            platform=PLATFORM,
            chat=ChatRef(platform=PLATFORM, chat_id=str(message.channel.id), is_group=is_group),
            sender=_sender(message.author), message_id=str(message.id), text=text,
            attachments=attachments,
            reply_to=str(ref.message_id) if ref is not None and ref.message_id else None,
            received_at=message.created_at,
            addressed=not is_group or self._addressed(message))

    def _addressed(self, message: discord.Message) -> bool:
        """In a guild: a mention of the bot (or its role), or a reply to one of its messages."""
        me = self._client.user
        if me is None:
            return False
        if any(user.id == me.id for user in message.mentions):
            return True
        role = message.guild.self_role if message.guild is not None else None
        if role is not None and role.id in message.raw_role_mentions:
            return True
        resolved = message.reference.resolved if message.reference is not None else None
        return isinstance(resolved, discord.Message) and resolved.author.id == me.id

    async def _on_gateway_interaction(
            self, interaction: discord.Interaction[discord.Client]) -> None:
        if interaction.type is not discord.InteractionType.application_command:
            return
        with self._owned():
            try:
                await interaction.response.defer(thinking=True)
            except discord.HTTPException as exc:
                if exc.code == 40060:  # already acknowledged: a redelivery, handled before
                    return
                log.warning("discord interaction not deferred: %s", _error("defer", exc))
                await self._command(interaction, deferred=False)
                return
            await self._command(interaction, deferred=True)

    async def _command(self, interaction: discord.Interaction[discord.Client], *,
                       deferred: bool) -> None:
        incoming = self.translate_command(interaction)
        if incoming is None:
            return
        pending = (_Pending(interaction, incoming.text, time.monotonic() + INTERACTION_TTL_S)
                   if deferred else None)
        await self._hand_on(incoming, pending)

    def translate_command(
            self, interaction: discord.Interaction[discord.Client]) -> IncomingMessage | None:
        """A slash command as the text command it stands for (`/mode debate`)."""
        data: Any = interaction.data or {}
        name = str(data.get("name") or "")
        if not name or interaction.channel_id is None or interaction.user is None:
            return None
        values = [str(o["value"]) for o in data.get("options") or () if "value" in o]
        is_group = interaction.guild_id is not None
        if interaction.guild_id is not None:
            channel = str(interaction.channel_id)
            self._remember_guild(channel, interaction.guild_id)
            if isinstance(interaction.user, discord.Member):  # Discord resolved its permissions
                _put(self._permissions, (channel, str(interaction.user.id)),
                     (time.monotonic() + MEMBER_PERMISSIONS_S, interaction.permissions))
        return IncomingMessage(
            platform=PLATFORM,
            chat=ChatRef(platform=PLATFORM, chat_id=str(interaction.channel_id),
                         is_group=is_group),
            sender=_sender(interaction.user), message_id=_interaction_message_id(interaction),
            text=" ".join([f"/{name}", *values]).strip(), received_at=interaction.created_at,
            addressed=True)

    def _remember_guild(self, channel_id: str, guild_id: int) -> None:
        _put(self._guild_of, channel_id, guild_id)

    # --- group admins ----------------------------------------------------------------------

    async def is_chat_admin(self, chat: ChatRef, sender: Sender) -> bool | None:
        """`core.ports.ChatAdmins`: the member's permissions in the channel grant Administrator,
        Manage Server or Manage Channels. A slash command carries them (Discord resolves them
        with the channel's overwrites); otherwise the member is fetched (REST) and their roles'
        permissions resolved in the channel. None outside guilds (DMs, group DMs)."""
        if not chat.is_group:
            return None
        now = time.monotonic()
        carried = self._permissions.get((chat.chat_id, sender.platform_uid))
        if carried is not None and carried[0] > now:
            return _manages(carried[1])
        try:
            user_id, channel_id = int(sender.platform_uid), int(chat.thread_id or chat.chat_id)
        except ValueError:
            raise PlatformError(f"discord: {sender.platform_uid!r} is not a user id") from None
        guild_id = self._guild_of.get(chat.chat_id)
        if guild_id is None:  # e.g. a command resumed after a restart: the gateway's cache
            cached = self._client.get_channel(channel_id)
            guild_id = getattr(getattr(cached, "guild", None), "id", None)
        if guild_id is None:
            return None  # a channel neither seen nor cached: cannot tell
        self._check_open()
        guild = self._client.get_guild(guild_id)
        if guild is None:  # not on the gateway (HTTP interactions only): asked of REST
            guild = await self._call("guild",
                                     self._client.fetch_guild(guild_id, with_counts=False))
        member = await self._call("member", guild.fetch_member(user_id))
        channel = guild.get_channel_or_thread(channel_id)
        permissions = (channel.permissions_for(member) if channel is not None
                       else member.guild_permissions)
        return _manages(permissions)

    # --- deferred responses ----------------------------------------------------------------

    def _take_pending(self, chat: ChatRef, in_reply_to: str | None) -> _Pending | None:
        """The chat's deferred response for the command `in_reply_to` answers, taken out of
        the chat's list (None when there is none, or its token has run out); a reply to
        anything else never takes one."""
        if in_reply_to is None:
            return None
        queue = self._pending.get(chat.key)
        if not queue:
            return None
        found = next((p for p in queue if p.message_id == in_reply_to), None)
        if found is None:
            return None
        queue.remove(found)
        if not queue:
            del self._pending[chat.key]
        return found if found.expires > time.monotonic() else None

    def _give_back(self, chat: ChatRef, pending: _Pending) -> None:
        """Put a pending taken for a reply that was rate-limited back first in line; settled
        with the echo as usual if the retry does not come in time."""
        self._pending.setdefault(chat.key, []).insert(0, pending)
        self._settle_later(pending)

    def _settle_later(self, pending: _Pending) -> None:
        pending.ack_at = time.monotonic() + ACK_GRACE_S
        if (self._janitor is None or self._janitor.done()) and not self._closed:
            self._janitor = asyncio.create_task(self._settle_due(), name="discord-settle")

    async def _settle_due(self) -> None:
        """Deferred responses no reply took in time get the command's echo."""
        while True:
            waiting = [p for queue in self._pending.values() for p in queue
                       if p.ack_at is not None]
            if not waiting:
                return
            now = time.monotonic()
            due = [p for p in waiting if p.ack_at is not None and p.ack_at <= now]
            if not due:
                await asyncio.sleep(min(p.ack_at or now for p in waiting) - now)
                continue
            for pending in due:
                for key, queue in list(self._pending.items()):
                    if pending in queue:
                        queue.remove(pending)
                        if not queue:
                            del self._pending[key]
                try:
                    await pending.interaction.edit_original_response(
                        content=f"`{pending.text}`", allowed_mentions=_NO_MENTIONS)
                except (discord.DiscordException, aiohttp.ClientError, OSError) as exc:
                    log.info("deferred response not settled: %s", _error("settle", exc))

    def _remember(self, message_id: int, pending: _Pending) -> None:
        now = time.monotonic()
        for key in [k for k, p in self._originals.items() if p.expires <= now]:
            del self._originals[key]
        self._originals[str(message_id)] = pending

    async def _via_interaction(self, pending: _Pending, op: str, **fields: Any) -> int | None:
        """Fill or edit the interaction's response; None when its token is no longer good."""
        try:
            message = await pending.interaction.edit_original_response(
                allowed_mentions=_NO_MENTIONS, **fields)
        except discord.HTTPException as exc:
            if exc.status in (401, 404) or exc.code in _TOKEN_GONE:
                return None
            raise _error(op, exc) from None
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _error(op, exc) from None
        return message.id

    # --- operations out --------------------------------------------------------------------

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        content = _content(reply)
        pending = self._take_pending(chat, reply.in_reply_to)
        if pending is not None:
            try:
                message_id = await self._via_interaction(pending, "send", content=content)
            except RateLimited:  # the retry takes it again
                self._give_back(chat, pending)
                raise
            if message_id is not None:
                self._remember(message_id, pending)
                return MessageRef(chat=chat, message_id=str(message_id))
        channel_id = self._channel_id(chat)
        sent = await self._call("send", self._client.http.request(
            Route("POST", "/channels/{channel_id}/messages", channel_id=channel_id),
            json=_text_payload(content)))
        return MessageRef(chat=chat, message_id=str(sent["id"]))

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        content = _content(reply)
        pending = self._originals.get(ref.message_id)
        if pending is not None and pending.expires > time.monotonic():
            if await self._via_interaction(pending, "edit", content=content) is not None:
                return
            del self._originals[ref.message_id]
        channel_id = self._channel_id(ref.chat)
        try:
            message_id = int(ref.message_id)
        except ValueError:
            raise PlatformError(f"discord: {ref.message_id!r} is not a message id") from None
        await self._call("edit", self._client.http.request(
            Route("PATCH", "/channels/{channel_id}/messages/{message_id}",
                  channel_id=channel_id, message_id=message_id),
            json=_text_payload(content)))

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        """Images and documents alike as attachments (Discord shows images inline)."""
        if len(file.data) > MAX_UPLOAD_BYTES:
            raise PlatformError(f"discord upload: {file.filename} is larger than 10 MB")
        caption = file.caption[:MAX_MESSAGE] or None
        pending = self._take_pending(chat, file.in_reply_to)
        if pending is not None:
            upload = discord.File(io.BytesIO(file.data), filename=file.filename)
            try:
                message_id = await self._via_interaction(pending, "upload", content=caption,
                                                         attachments=[upload])
            except RateLimited:  # the retry takes it again
                self._give_back(chat, pending)
                raise
            if message_id is not None:
                return MessageRef(chat=chat, message_id=str(message_id))
        upload = discord.File(io.BytesIO(file.data), filename=file.filename)
        sent = await self._call("upload", self._channel(chat).send(
            content=caption, file=upload, allowed_mentions=_NO_MENTIONS))
        return MessageRef(chat=chat, message_id=str(sent.id))

    async def typing(self, chat: ChatRef) -> None:
        if chat.key in self._pending:
            return  # the deferred response already shows "is thinking..."
        await self._call("typing", self._channel(chat).typing())

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        """The attachment's bytes from Discord's CDN."""
        try:
            attachment = message.attachments[index]
        except IndexError:
            raise InputError(f"message has no attachment #{index}") from None
        if not attachment.file_id.startswith(("https://", "http://")):
            raise InputError("attachment has no download URL")
        if attachment.size is not None and attachment.size > MAX_DOWNLOAD_BYTES:
            raise TooLarge("file is larger than the 25 MB the bot downloads",
                           size=attachment.size, limit=MAX_DOWNLOAD_BYTES)
        self._check_open()
        return await self._call("download", self._client.http.get_from_cdn(attachment.file_id))

    def _check_open(self) -> None:
        if self._closed:
            raise PlatformError("discord: the adapter is closed")

    def _channel_id(self, chat: ChatRef) -> int:
        self._check_open()
        try:
            return int(chat.thread_id or chat.chat_id)
        except ValueError:
            raise PlatformError(f"discord: {chat.chat_id!r} is not a channel id") from None

    def _channel(self, chat: ChatRef) -> discord.PartialMessageable:
        return self._client.get_partial_messageable(self._channel_id(chat))

    async def _call[T](self, op: str, operation: Awaitable[T]) -> T:
        try:
            return await operation
        except (discord.DiscordException, aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise _error(op, exc) from None

    # --- HTTP interactions -----------------------------------------------------------------

    async def _start_interactions(self, port: int) -> None:
        if self._verify_key is None:
            log.warning("discord interactions: the signature check is OFF "
                        "(interactions_insecure)")
        server = web.Application(client_max_size=1024 * 1024)
        server.router.add_post(self._interactions_path, self._interaction_request)
        self._site_runner, self.interactions_port = await listen(
            server, host=self._interactions_listen, port=port, what="discord interactions")

    async def _interaction_request(self, request: web.Request) -> web.Response:
        """One HTTP interaction: the signature first, then PING -> PONG, or a slash command
        deferred in the answer and handed on after it."""
        body = await request.read()
        if not self._signed(request.headers, body):
            return web.Response(status=401, text="invalid request signature")
        try:
            payload = json.loads(body)
            kind = int(payload["type"])
        except (ValueError, KeyError, TypeError):
            return web.Response(status=400, text="not an interaction")
        if kind == 1:
            return _json_response({"type": 1})
        if kind != 2 or self._closed:
            return web.Response(status=400, text="unsupported interaction type")
        try:
            # discord.py has no HTTP interactions: the object is built as its gateway does
            interaction = discord.Interaction(data=payload, state=self._client._connection)
        except (KeyError, TypeError, ValueError):
            return web.Response(status=400, text="not an interaction")
        self._spawn(self._command(interaction, deferred=True), f"discord-interaction:{kind}")
        return _json_response({"type": 5})  # deferred: "is thinking..."

    def _signed(self, headers: Any, body: bytes) -> bool:
        """Ed25519 over timestamp + body, a timestamp within the window, never seen before."""
        if self._verify_key is None:
            return True
        signature = headers.get("X-Signature-Ed25519", "")
        stamp = headers.get("X-Signature-Timestamp", "")
        try:
            sent_at = int(stamp)
            self._verify_key.verify(stamp.encode() + body, bytes.fromhex(signature))
        except (ValueError, BadSignatureError):
            return False
        now = time.time()
        if abs(now - sent_at) > SIGNATURE_WINDOW_S:
            return False
        while self._seen and next(iter(self._seen.values())) < now - SIGNATURE_WINDOW_S:
            self._seen.popitem(last=False)
        if signature in self._seen:
            return False  # a replay
        self._seen[signature] = now
        return True


# --- translation helpers ---------------------------------------------------------------------


def _put[K, V](known: OrderedDict[K, V], key: K, value: V) -> None:
    """`known[key] = value`, forgetting the oldest entries beyond `_KNOWN_CHANNELS`."""
    known[key] = value
    known.move_to_end(key)
    while len(known) > _KNOWN_CHANNELS:
        known.popitem(last=False)


def _manages(permissions: discord.Permissions) -> bool:
    return bool(permissions.administrator or permissions.manage_guild
                or permissions.manage_channels)


def _sender(user: discord.User | discord.Member | discord.abc.User) -> Sender:
    return Sender(platform_uid=str(user.id), display_name=user.display_name or user.name)


def _attachment(a: discord.Attachment, voice_message: bool) -> Attachment:
    mime = (a.content_type or "").split(";")[0].strip()
    kind: Any
    if a.is_voice_message() or (voice_message and mime.startswith("audio/")):
        kind = "voice"
    else:
        kind = {"audio": "audio", "image": "image", "video": "video"}.get(
            mime.partition("/")[0], "document")
    return Attachment(kind=kind, file_id=a.url, filename=a.filename,
                      mime_type=mime or "application/octet-stream", size=a.size,
                      duration_s=a.duration)


def _text_payload(content: str) -> dict[str, Any]:
    """A text message's JSON as `Messageable.send` and `Message.edit` would write it: the same
    route through the SDK's `HTTPClient` (its rate-limit buckets and retries), without the
    `Message` it would build from the answer, which only the id is read of."""
    return {"content": content, "allowed_mentions": _NO_MENTIONS.to_dict()}


def _content(reply: Reply) -> str:
    """Markdown goes as it is (Discord's own dialect); plain text is escaped to stay plain,
    unless escaping would pass the length limit."""
    if reply.markup == "markdown":
        return reply.text
    escaped = discord.utils.escape_markdown(reply.text)
    return escaped if len(escaped) <= MAX_MESSAGE else reply.text


def _json_response(data: dict[str, Any]) -> web.Response:
    return web.Response(body=json.dumps(data).encode(),
                        headers={"Content-Type": "application/json"})


def _retry_after(exc: discord.HTTPException) -> float:
    header = exc.response.headers.get("Retry-After") if exc.response is not None else None
    try:
        return max(1.0, float(header)) if header else 1.0
    except ValueError:
        return 1.0


def _error(op: str, exc: BaseException) -> PlatformError:
    """The `core.errors` type for a refusal; the message names no token and no URL."""
    where = f"discord {op}"
    if isinstance(exc, discord.RateLimited):
        return RateLimited(f"{where}: rate limited", retry_after=exc.retry_after)
    if isinstance(exc, discord.HTTPException):
        text = exc.text[:200] if isinstance(exc.text, str) else ""
        if exc.status == 429:  # no Via header: discord.py takes it for a Cloudflare ban
            return RateLimited(f"{where}: rate limited", retry_after=_retry_after(exc))
        if exc.status == 403 or exc.code in _GONE:
            return Forbidden(f"{where}: {text or 'forbidden'} ({exc.code})")
        if exc.code == 10008:
            return PlatformError(f"{where}: unknown message")
        failed = f"{where}: HTTP {exc.status} ({exc.code}) {text}".rstrip()
        return PlatformUnavailable(failed) if exc.status >= 500 else PlatformError(failed)
    if isinstance(exc, aiohttp.ClientError | OSError | TimeoutError):
        return PlatformUnavailable(f"{where}: network error ({type(exc).__name__})")
    return PlatformError(f"{where}: {type(exc).__name__}")


def _gateway_ended(task: asyncio.Task[None]) -> None:
    failure = None if task.cancelled() else task.exception()
    if failure is not None:
        log.error("discord gateway stopped: %s", _error("gateway", failure))
