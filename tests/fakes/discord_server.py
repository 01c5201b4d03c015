"""A local Discord REST API + gateway (aiohttp) for the real discord.py client.

REST under `/api/v10` answers what the adapter uses the way Discord does (users/@me, the
application, gateway/bot, channel messages as JSON or multipart with files, edits, typing,
bulk-overwrite of application commands, interaction callbacks and webhook follow-ups, PATCH
@original), always with `Content-Type: application/json` exactly (discord.py compares it
to the letter). Errors carry Discord's `{"code", "message"}`; faults can be injected: 429 with
`retry_after` and a `Via` header (without it discord.py takes the 429 for a Cloudflare ban),
403, 404, 5xx, and slow answers. Every channel's messages are kept with their current content
and edit history.

The gateway (`/gateway`, websocket, JSON text frames) says HELLO, answers heartbeats with
HEARTBEAT_ACK, IDENTIFY with READY then GUILD_CREATE, RESUME with RESUMED. Tests build events
(`message`, `interaction`) and `push` them to the connected bot; `deliver_interaction` posts one
as a signed HTTP interaction (Ed25519, the application's key, or a forged one) the way Discord
does, and applies the answer. Several bots (tokens) can share one server.

Run as a script (`python discord_server.py --token A --token B`) it serves on loopback in its
own process, prints its port, and drives `/_fake/load` for the gateway bench.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import aiohttp
from aiohttp import web
from nacl.signing import SigningKey

try:
    from tests.fakes._common import Call, FakePlatform, Fault, Load, serve_script
except ImportError:  # run as a script (the bench): this folder is on the path
    from _common import Call, FakePlatform, Fault, Load, serve_script  # type: ignore[no-redef]

DISCORD_EPOCH_MS = 1_420_070_400_000
DEFAULT_TOKEN = "ODAwMDAwMDAwMDAwMDAwMDAx.FAKE-discord.test-token_0123456789abcdef"
FIRST_BOT_ID = 800_000_000_000_000_001
GUILD_ID = 900_000_000_000_000_001
GUILD_CHANNEL_ID = 900_000_000_000_000_002
# the guild's roles besides @everyone (whose permissions grant neither): Administrator, and
# Manage Channels
ADMIN_ROLE_ID = 900_000_000_000_000_011
MANAGER_ROLE_ID = 900_000_000_000_000_012
EVERYONE_PERMISSIONS = 2248473465835073  # view, send, read history ...: no admin bit
ROLE_PERMISSIONS = {ADMIN_ROLE_ID: 1 << 3, MANAGER_ROLE_ID: 1 << 4}
MAX_CONTENT = 2000
MAX_UPLOAD = 10 * 1024 * 1024
LOADING = 1 << 7  # message flag: a deferred response, "is thinking..."
VOICE_MESSAGE = 1 << 13
API = "/api/v10"
Params = dict[str, Any]


def snowflake(counter: itertools.count[int]) -> int:
    """A Discord id: milliseconds since the Discord epoch, then a counter."""
    return ((int(time.time() * 1000) - DISCORD_EPOCH_MS) << 22) | (next(counter) & 0x3FFFFF)


def _iso() -> str:
    return datetime.now(UTC).isoformat()


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    """JSON with the content type discord.py insists on, to the letter."""
    return web.Response(body=json.dumps(data).encode(), status=status,
                        headers={"Content-Type": "application/json", **(headers or {})})


class ApiError(Exception):
    """An error answer of the API: HTTP status, Discord's JSON error code and message."""

    def __init__(self, status: int, code: int, message: str, *,
                 retry_after: float | None = None, via: bool = True) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.via = via

    def response(self) -> web.Response:
        if self.status == 429 and not self.via:  # what Cloudflare answers: no Via, HTML
            return web.Response(status=429, text="<html>Error 1015: You are being rate limited"
                                "</html>", content_type="text/html",
                                headers={"Retry-After": str(int(self.retry_after or 1))})
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        headers: dict[str, str] = {}
        if self.status == 429:
            body.update(retry_after=self.retry_after or 1.0, **{"global": False})
            headers = {"Via": "1.1 google", "Retry-After": str(int(self.retry_after or 1)),
                       "X-RateLimit-Scope": "user"}
        return _json(body, self.status, headers)


def rate_limited(retry_after: float = 1.0, *, via: bool = True) -> ApiError:
    return ApiError(429, 0, "You are being rate limited.", retry_after=retry_after, via=via)


def forbidden(code: int = 50007, message: str = "Cannot send messages to this user") -> ApiError:
    return ApiError(403, code, message)


def unknown_message() -> ApiError:
    return ApiError(404, 10008, "Unknown Message")


def server_error() -> ApiError:
    return ApiError(500, 0, "500: Internal Server Error")


def _too_long() -> ApiError:
    return ApiError(400, 50035, "Invalid Form Body\nIn content: Must be 2000 or fewer in length.")


@dataclass
class FakeFile:
    filename: str
    data: bytes = field(repr=False)
    content_type: str = "application/octet-stream"


@dataclass
class FakeMessage:
    """A message a bot sent, as it stands now (`history`: every content it has shown)."""

    id: int
    channel_id: int
    author_id: int
    content: str = ""
    history: list[str] = field(default_factory=list)
    files: list[FakeFile] = field(default_factory=list)
    via: str = "channel"  # channel | interaction | followup
    interaction_id: int | None = None
    loading: bool = False
    sent_at: float = 0.0

    @property
    def edits(self) -> int:
        return max(0, len(self.history) - 1)


@dataclass
class GatewayEvent:
    """A dispatch (`op` 0) the gateway sends: its type and data."""

    type: str
    data: dict[str, Any]


@dataclass
class _Session:
    ws: web.WebSocketResponse
    intents: int
    seq: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


@dataclass
class Bot:
    """A bot user and its application (same id, as on Discord) with its signing key."""

    token: str
    user_id: int
    username: str
    key: SigningKey = field(default_factory=SigningKey.generate, repr=False)
    sessions: list[_Session] = field(default_factory=list)
    commands: list[dict[str, Any]] = field(default_factory=list)
    identified: int = 0

    @property
    def app_id(self) -> int:
        return self.user_id

    @property
    def public_key(self) -> str:
        return self.key.verify_key.encode().hex()

    def user(self) -> dict[str, Any]:
        return {"id": str(self.user_id), "username": self.username, "discriminator": "0",
                "global_name": "Bullpen", "avatar": None, "bot": True, "flags": 0}


@dataclass
class _Interaction:
    id: int
    token: str
    bot: Bot
    channel_id: int
    response: int | None = None
    original: int | None = None
    answered: asyncio.Event = field(default_factory=asyncio.Event)


class FakeDiscord(FakePlatform):
    """The server. `async with FakeDiscord() as dc:` then hand the adapter `dc.api_base_url`
    and `dc.gateway_url`."""

    def __init__(self, *, token: str = DEFAULT_TOKEN, more_tokens: tuple[str, ...] = (),
                 host: str = "127.0.0.1", port: int = 0, control: bool = False,
                 heartbeat_interval_ms: int = 41_250) -> None:
        super().__init__(host=host, port=port, control=control)
        self.bots = {t: Bot(t, FIRST_BOT_ID + i, "bullpen" if i == 0 else f"bot{i}")
                     for i, t in enumerate((token, *more_tokens))}
        self.token = token
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.calls: list[Call] = []
        self.channels: dict[int, dict[int, FakeMessage]] = {}
        self.faults: list[Fault] = []
        self.blocked: set[int] = set()
        self.files: dict[str, FakeFile] = {}  # CDN path -> file
        self.interactions: dict[str, _Interaction] = {}  # by token
        self.heartbeats = 0
        self.member_roles: dict[int, list[int]] = {}  # guild member -> roles besides @everyone
        self._ids = itertools.count(1)

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def bot(self) -> Bot:
        return self.bots[self.token]

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_base_url(self) -> str:
        return f"{self.origin}{API}"

    @property
    def gateway_url(self) -> str:
        return f"ws://{self.host}:{self.port}/gateway"

    @property
    def public_key(self) -> str:
        return self.bot.public_key

    async def __aenter__(self) -> FakeDiscord:
        app = web.Application(client_max_size=2 * MAX_UPLOAD)
        r = app.router
        r.add_get("/gateway", self._gateway)
        r.add_get(f"{API}/users/@me", self._serve("get_me", self._get_me))
        r.add_get(f"{API}/oauth2/applications/@me", self._serve("app_info", self._app_info))
        r.add_get(f"{API}/gateway/bot", self._serve("gateway_bot", self._gateway_bot))
        r.add_get(f"{API}/gateway", self._serve("gateway", self._gateway_bot, auth=False))
        r.add_post(f"{API}/channels/{{channel_id}}/messages", self._serve("send", self._send))
        r.add_patch(f"{API}/channels/{{channel_id}}/messages/{{message_id}}",
                    self._serve("edit", self._edit))
        r.add_post(f"{API}/channels/{{channel_id}}/typing", self._serve("typing", self._typing))
        r.add_put(f"{API}/applications/{{app_id}}/commands",
                  self._serve("commands", self._put_commands))
        r.add_post(f"{API}/interactions/{{interaction_id}}/{{itoken}}/callback",
                   self._serve("callback", self._callback, auth=False))
        r.add_post(f"{API}/webhooks/{{app_id}}/{{itoken}}",
                   self._serve("followup", self._followup, auth=False))
        r.add_patch(f"{API}/webhooks/{{app_id}}/{{itoken}}/messages/{{message_id}}",
                    self._serve("webhook_edit", self._webhook_edit, auth=False))
        r.add_get(f"{API}/guilds/{{guild_id}}", self._serve("guild", self._get_guild))
        r.add_get(f"{API}/guilds/{{guild_id}}/members/{{user_id}}",
                  self._serve("member", self._get_member))
        r.add_get("/attachments/{path:.+}", self._download)
        if self.control:
            r.add_post("/_fake/forge", self._control_forge)
        await self._listen(app)
        return self

    async def __aexit__(self, *exc: object) -> None:
        for bot in self.bots.values():
            for session in list(bot.sessions):
                await session.ws.close(code=1001)
        await self._stop_listening()

    # --- test controls ---------------------------------------------------------------------

    # fail(op, ApiError, times=, when=), delay(op, seconds, when=): as on every fake; the ops
    # are send, edit, typing, commands, callback, followup, webhook_edit, get_me, ...

    def block(self, channel_id: int) -> None:
        """The user blocked the bot (or left): sends to the channel get 403 50007."""
        self.blocked.add(channel_id)

    def make_admin(self, user_id: int, role: int = ADMIN_ROLE_ID) -> None:
        """The guild member gets `role` (`ADMIN_ROLE_ID`: Administrator; `MANAGER_ROLE_ID`:
        Manage Channels): in the member's REST object and in the permissions their slash
        commands carry. Everyone else has @everyone's permissions only."""
        self.member_roles.setdefault(user_id, []).append(role)

    def member_permissions(self, user_id: int) -> int:
        """The member's permissions (as an interaction carries them)."""
        perms = EVERYONE_PERMISSIONS
        for role in self.member_roles.get(user_id, ()):
            perms |= ROLE_PERMISSIONS[role]
        return perms

    def _member(self, user_id: int) -> dict[str, Any]:
        return {"user": self.user(user_id), "roles": [str(r) for r in
                                                      self.member_roles.get(user_id, ())],
                "joined_at": _iso(), "deaf": False, "mute": False, "flags": 0}

    def add_file(self, channel_id: int, filename: str, data: bytes,
                 content_type: str) -> dict[str, Any]:
        """Put a file on the CDN; returns its attachment object."""
        att_id = snowflake(self._ids)
        path = f"{channel_id}/{att_id}/{filename}"
        self.files[path] = FakeFile(filename, data, content_type)
        return {"id": str(att_id), "filename": filename, "size": len(data),
                "url": f"{self.origin}/attachments/{path}",
                "proxy_url": f"{self.origin}/attachments/{path}", "content_type": content_type}

    def user(self, user_id: int) -> dict[str, Any]:
        return {"id": str(user_id), "username": f"user{user_id}", "discriminator": "0",
                "global_name": f"User {user_id}", "avatar": None}

    def message(self, channel_id: int, content: str = "", *, user_id: int | None = None,
                guild: bool = False, mention: bool = False, reply_to: int | None = None,
                attachments: list[dict[str, Any]] | None = None, voice: bool = False,
                author_bot: bool = False, token: str | None = None) -> GatewayEvent:
        """A user's MESSAGE_CREATE. In a guild `mention` puts `<@bot>` before the content;
        `reply_to` references one of the bot's messages; `voice` flags a voice message."""
        bot = self.bots[token or self.token]
        uid = user_id if user_id is not None else channel_id + 1
        author = self.user(uid) | ({"bot": True} if author_bot else {})
        mentions: list[dict[str, Any]] = []
        if mention:
            content = f"<@{bot.user_id}> {content}".strip()
            mentions.append(bot.user())
        data: dict[str, Any] = {
            "id": str(snowflake(self._ids)), "channel_id": str(channel_id), "author": author,
            "content": content, "timestamp": _iso(), "edited_timestamp": None, "tts": False,
            "mention_everyone": False, "mentions": mentions, "mention_roles": [],
            "attachments": attachments or [], "embeds": [], "pinned": False, "type": 0,
            "flags": VOICE_MESSAGE if voice else 0,
        }
        if guild:
            data["guild_id"] = str(GUILD_ID)
            data["member"] = {k: v for k, v in self._member(uid).items() if k != "user"}
        if reply_to is not None:
            original = self.find(channel_id, reply_to)
            data["type"] = 19
            data["message_reference"] = {"type": 0, "message_id": str(reply_to),
                                         "channel_id": str(channel_id)}
            if original is not None:
                data["referenced_message"] = self._payload(original, bot)
                if not any(m["id"] == str(bot.user_id) for m in mentions):
                    mentions.append(bot.user())  # a reply pings its author by default
        return GatewayEvent("MESSAGE_CREATE", data)

    def voice_message(self, channel_id: int, data: bytes, *, duration_s: float = 3.0,
                      **kwargs: Any) -> GatewayEvent:
        """A voice message: one OGG/Opus attachment with duration and waveform."""
        att = self.add_file(channel_id, "voice-message.ogg", data, "audio/ogg")
        att.update(duration_secs=duration_s, waveform="AAAAAAAAAAAA", flags=0)
        return self.message(channel_id, "", attachments=[att], voice=True, **kwargs)

    def interaction(self, channel_id: int, name: str, text: str | None = None, *,
                    user_id: int | None = None, guild: bool = False,
                    token: str | None = None) -> GatewayEvent:
        """An application (slash) command, `/name text`, as INTERACTION_CREATE."""
        bot = self.bots[token or self.token]
        uid = user_id if user_id is not None else channel_id + 1
        record = _Interaction(snowflake(self._ids), "itok_" + secrets.token_urlsafe(24), bot,
                              channel_id)
        self.interactions[record.token] = record
        options = [{"name": "text", "type": 3, "value": text}] if text else []
        data: dict[str, Any] = {
            "id": str(record.id), "application_id": str(bot.app_id), "type": 2,
            "token": record.token, "version": 1, "locale": "en-US",
            "data": {"id": str(snowflake(self._ids)), "name": name, "type": 1,
                     "options": options},
            "channel_id": str(channel_id), "app_permissions": "0", "entitlements": [],
            "attachment_size_limit": MAX_UPLOAD,
        }
        if guild:
            data.update(guild_id=str(GUILD_ID), guild_locale="en-US", context=0,
                        authorizing_integration_owners={"0": str(GUILD_ID)},
                        channel={"id": str(channel_id), "type": 0, "guild_id": str(GUILD_ID),
                                 "name": "research", "position": 0,
                                 "permission_overwrites": []},
                        member={**self._member(uid),
                                "permissions": str(self.member_permissions(uid))})
        else:
            data.update(context=1, user=self.user(uid),
                        authorizing_integration_owners={"0": str(GUILD_ID)},
                        channel={"id": str(channel_id), "type": 1, "flags": 0,
                                 "recipients": [self.user(uid)]})
        return GatewayEvent("INTERACTION_CREATE", data)

    async def push(self, event: GatewayEvent, *, token: str | None = None) -> GatewayEvent:
        """Dispatch `event` on the bot's gateway connection (waits for one to be up)."""
        bot = self.bots[token or self.token]
        await self.wait_for(lambda: bool(bot.sessions))
        for session in list(bot.sessions):
            await self._send_ws(session, {"op": 0, "t": event.type, "d": event.data})
        return event

    def sign(self, body: bytes, *, timestamp: str | None = None, forge: bool = False,
             token: str | None = None) -> dict[str, str]:
        """The signature headers Discord puts on an HTTP interaction (forged: another key)."""
        stamp = timestamp or str(int(time.time()))
        key = SigningKey.generate() if forge else self.bots[token or self.token].key
        signature = key.sign(stamp.encode() + body).signature.hex()
        return {"X-Signature-Ed25519": signature, "X-Signature-Timestamp": stamp,
                "Content-Type": "application/json"}

    async def deliver_interaction(self, url: str, event: GatewayEvent, *, forge: bool = False,
                                  headers: dict[str, str] | None = None,
                                  body: bytes | None = None) -> tuple[int, Any]:
        """POST an interaction to an endpoint as Discord does; an answer that defers or
        replies is applied like a callback. Returns (status, JSON answer or text)."""
        raw = body if body is not None else json.dumps(event.data).encode()
        sent = headers if headers is not None else self.sign(raw, forge=forge)
        async with aiohttp.ClientSession() as http, http.post(url, data=raw,
                                                              headers=sent) as resp:
            status = resp.status
            answer: Any = await resp.text()
        with contextlib.suppress(ValueError):
            answer = json.loads(answer)
        record = self.interactions.get(str(event.data.get("token")))
        if status == 200 and record is not None and isinstance(answer, dict) \
                and answer.get("type") in (4, 5):
            self._respond(record, answer)
        return status, answer

    # --- state -----------------------------------------------------------------------------

    def bot_messages(self, channel_id: int) -> list[FakeMessage]:
        return sorted(self.channels.get(channel_id, {}).values(), key=lambda m: m.id)

    def texts(self, channel_id: int) -> list[str]:
        """The current content of every message without files the bots have in the channel
        (a deferred response still thinking has none, and is left out)."""
        return [m.content for m in self.bot_messages(channel_id) if not m.files and m.history]

    def find(self, channel_id: int, message_id: int) -> FakeMessage | None:
        return self.channels.get(channel_id, {}).get(message_id)

    def calls_of(self, op: str, channel_id: int | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == op
                and (channel_id is None or c.params.get("channel_id") == channel_id)]

    # wait_for(predicate), settle(quiet_s): as on every fake

    # --- gateway ---------------------------------------------------------------------------

    async def _send_ws(self, session: _Session, frame: dict[str, Any]) -> None:
        async with session.lock:
            if frame.get("op") == 0:
                session.seq += 1
                frame["s"] = session.seq
            if not session.ws.closed:
                await session.ws.send_str(json.dumps(frame))

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        await ws.send_str(json.dumps({"op": 10, "s": None, "t": None,
                                      "d": {"heartbeat_interval": self.heartbeat_interval_ms}}))
        bot: Bot | None = None
        session: _Session | None = None
        try:
            async for frame in ws:
                if frame.type != aiohttp.WSMsgType.TEXT:
                    continue
                msg = json.loads(frame.data)
                op, d = msg.get("op"), msg.get("d")
                if op == 1:
                    self.heartbeats += 1
                    await ws.send_str(json.dumps({"op": 11}))
                elif op in (2, 6):
                    bot = self.bots.get(str((d or {}).get("token", "")))
                    if bot is None:
                        await ws.close(code=4004, message=b"Authentication failed.")
                        break
                    session = _Session(ws, int((d or {}).get("intents") or 0))
                    if op == 2:
                        bot.identified += 1
                        await self._send_ws(session, {"op": 0, "t": "READY",
                                                      "d": self._ready(bot)})
                        await self._send_ws(session, {"op": 0, "t": "GUILD_CREATE",
                                                      "d": self._guild(bot)})
                    else:
                        await self._send_ws(session, {"op": 0, "t": "RESUMED", "d": {}})
                    bot.sessions.append(session)
                    self._notify()
        finally:
            if bot is not None and session in bot.sessions:
                bot.sessions.remove(session)
        return ws

    def _ready(self, bot: Bot) -> dict[str, Any]:
        return {"v": 10, "user": bot.user(), "guilds": [{"id": str(GUILD_ID),
                                                         "unavailable": True}],
                "session_id": secrets.token_hex(16), "resume_gateway_url": self.gateway_url,
                "shard": [0, 1], "application": {"id": str(bot.app_id), "flags": 0},
                "private_channels": [], "relationships": [], "presences": []}

    def _guild(self, bot: Bot) -> dict[str, Any]:
        everyone = {"id": str(GUILD_ID), "name": "@everyone",
                    "permissions": str(EVERYONE_PERMISSIONS),
                    "position": 0, "color": 0, "hoist": False, "managed": False,
                    "mentionable": False, "flags": 0}
        roles = [everyone, *({**everyone, "id": str(role), "name": name,
                              "permissions": str(ROLE_PERMISSIONS[role]), "position": i + 1}
                             for i, (role, name) in enumerate(((ADMIN_ROLE_ID, "Admins"), (
                                 MANAGER_ROLE_ID, "Channel managers"))))]
        channel = {"id": str(GUILD_CHANNEL_ID), "type": 0, "guild_id": str(GUILD_ID),
                   "name": "research", "position": 0, "permission_overwrites": [],
                   "nsfw": False, "topic": None, "last_message_id": None}
        me = {"user": bot.user(), "roles": [], "joined_at": _iso(), "deaf": False,
              "mute": False, "flags": 0}
        return {"id": str(GUILD_ID), "name": "Research desk", "icon": None, "splash": None,
                "owner_id": str(FIRST_BOT_ID - 1), "afk_channel_id": None, "afk_timeout": 300,
                "verification_level": 0, "default_message_notifications": 0,
                "explicit_content_filter": 0, "roles": roles, "emojis": [],
                "stickers": [], "features": [], "mfa_level": 0, "system_channel_id": None,
                "system_channel_flags": 0, "rules_channel_id": None, "vanity_url_code": None,
                "description": None, "banner": None, "premium_tier": 0,
                "preferred_locale": "en-US", "public_updates_channel_id": None,
                "nsfw_level": 0, "premium_progress_bar_enabled": False,
                "joined_at": _iso(), "large": False, "unavailable": False,
                "member_count": 2, "voice_states": [], "members": [me],
                "channels": [channel], "threads": [], "presences": [],
                "stage_instances": [], "guild_scheduled_events": [],
                "soundboard_sounds": []}

    # --- REST ------------------------------------------------------------------------------

    def _serve(self, op: str, handler: Callable[[Bot | None, Params, list[FakeFile]],
                                                Awaitable[Any]], *,
               auth: bool = True) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """One REST route: auth, recorded call, delays, faults, the handler, JSON out."""

        async def serve(request: web.Request) -> web.StreamResponse:
            bot: Bot | None = None
            if auth:
                given = request.headers.get("Authorization", "")
                bot = self.bots.get(given.removeprefix("Bot "))
                if bot is None or not given.startswith("Bot "):
                    return ApiError(401, 0, "401: Unauthorized").response()
            try:
                params, files = await self._params(request)
            except ValueError:
                return ApiError(400, 50109, "The request body contains invalid JSON.").response()
            call = Call(op, params, time.monotonic())
            self.calls.append(call)
            try:
                await self._delay(op, params)
                self._inject(op, params)
                result = await handler(bot, params, files)
            except ApiError as exc:
                return exc.response()
            finally:
                call.t = time.monotonic()
                self._notify()
            if result is None:
                return web.Response(status=204)
            return _json(result)

        return serve

    async def _params(self, request: web.Request) -> tuple[Params, list[FakeFile]]:
        params: Params = dict(request.query)
        for key, value in request.match_info.items():
            params[key] = int(value) if value.isdigit() else value
        files: list[FakeFile] = []
        if request.content_type == "application/json":
            body = json.loads(await request.read() or b"{}")
            params.update(body if isinstance(body, dict) else {"__body__": body})
        elif request.content_type == "multipart/form-data":
            reader = await request.multipart()
            async for part in reader:
                if not isinstance(part, aiohttp.BodyPartReader):
                    continue
                if part.name == "payload_json":
                    params.update(json.loads(await part.read()))
                elif part.filename:
                    files.append(FakeFile(part.filename, bytes(await part.read()),
                                          part.headers.get("Content-Type",
                                                           "application/octet-stream")))
        return params, files

    def _inject(self, op: str, params: Params) -> None:
        self._raise_fault(op, params)
        if params.get("channel_id") in self.blocked:
            raise forbidden()

    async def _get_guild(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        assert bot is not None
        if p.get("guild_id") != GUILD_ID:
            raise ApiError(404, 10004, "Unknown Guild")
        return {k: v for k, v in self._guild(bot).items() if k not in (
            "joined_at", "large", "unavailable", "member_count", "voice_states", "members",
            "channels", "threads", "presences", "stage_instances", "guild_scheduled_events",
            "soundboard_sounds")}

    async def _get_member(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        if p.get("guild_id") != GUILD_ID:
            raise ApiError(404, 10004, "Unknown Guild")
        return self._member(int(p["user_id"]))

    async def _get_me(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        assert bot is not None
        return bot.user() | {"verified": True, "mfa_enabled": False}

    async def _app_info(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        assert bot is not None
        return {"id": str(bot.app_id), "name": bot.username, "description": "", "icon": None,
                "bot_public": True, "bot_require_code_grant": False,
                "owner": self.user(FIRST_BOT_ID - 1), "verify_key": bot.public_key,
                "flags": 0, "team": None, "interactions_endpoint_url": None}

    async def _gateway_bot(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        return {"url": self.gateway_url, "shards": 1,
                "session_start_limit": {"total": 1000, "remaining": 1000, "reset_after": 0,
                                        "max_concurrency": 1}}

    async def _typing(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        return None

    async def _put_commands(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        assert bot is not None
        if p["app_id"] != bot.app_id:
            raise ApiError(403, 50001, "Missing Access")
        commands = p.get("__body__", [])
        for c in commands:
            if not re.fullmatch(r"[-_a-z0-9]{1,32}", c.get("name", "")) or not (
                    1 <= len(c.get("description", "")) <= 100) or not all(
                    1 <= len(d) <= 100 for d in (c.get("description_localizations") or {})
                    .values()):
                raise ApiError(400, 50035, "Invalid Form Body")
        bot.commands = [{**c, "id": str(snowflake(self._ids)),
                         "application_id": str(bot.app_id), "version": "1"} for c in commands]
        return bot.commands

    def _content(self, p: Params, files: list[FakeFile], *, required: bool) -> str | None:
        content = p.get("content")
        if content is not None and len(str(content)) > MAX_CONTENT:
            raise _too_long()
        if sum(len(x.data) for x in files) > MAX_UPLOAD:
            raise ApiError(413, 40005, "Request entity too large")
        if required and not content and not files:
            raise ApiError(400, 50006, "Cannot send an empty message")
        return None if content is None else str(content)

    def _store(self, m: FakeMessage) -> FakeMessage:
        self.channels.setdefault(m.channel_id, {})[m.id] = m
        return m

    async def _send(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        assert bot is not None
        content = self._content(p, f, required=True) or ""
        m = self._store(FakeMessage(snowflake(self._ids), p["channel_id"], bot.user_id,
                                    content, [content], f, sent_at=time.monotonic()))
        self._shown(m.channel_id, m.content, edit=False)
        return self._payload(m, bot)

    def _update(self, m: FakeMessage, p: Params, f: list[FakeFile]) -> None:
        content = self._content(p, f, required=False)
        if content is not None:
            m.content = content
            m.history.append(content)
            m.loading = False
        if f:
            m.files = f
        self._shown(m.channel_id, m.content, edit=True)

    async def _edit(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        assert bot is not None
        m = self.find(p["channel_id"], p["message_id"])
        if m is None:
            raise unknown_message()
        if m.author_id != bot.user_id:
            raise ApiError(403, 50005, "Cannot edit a message authored by another user")
        self._update(m, p, f)
        return self._payload(m, bot)

    def _interaction(self, p: Params) -> _Interaction:
        record = self.interactions.get(str(p.get("itoken")))
        if record is None or (p.get("interaction_id") not in (None, record.id)) or (
                p.get("app_id") not in (None, record.bot.app_id)):
            raise ApiError(404, 10062 if "interaction_id" in p else 10015,
                           "Unknown interaction" if "interaction_id" in p else "Unknown Webhook")
        return record

    def _respond(self, record: _Interaction, answer: Params,
                 files: list[FakeFile] | None = None) -> FakeMessage | None:
        if record.response is not None:
            raise ApiError(400, 40060, "Interaction has already been acknowledged.")
        record.response = int(answer.get("type", 0))
        message: FakeMessage | None = None
        if record.response in (4, 5):
            data = answer.get("data") or {}
            content = str(data.get("content") or "")
            message = self._store(FakeMessage(
                snowflake(self._ids), record.channel_id, record.bot.user_id, content,
                [content] if record.response == 4 else [], files or [], via="interaction",
                interaction_id=record.id, loading=record.response == 5,
                sent_at=time.monotonic()))
            record.original = message.id
        record.answered.set()
        self._notify()
        return message

    async def _callback(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        record = self._interaction(p)
        message = self._respond(record, p, f)
        resource: dict[str, Any] = {"type": record.response}
        if message is not None and record.response == 4:
            resource["message"] = self._payload(message, record.bot)
        return {"interaction": {"id": str(record.id), "type": 2,
                                "response_message_id": str(message.id) if message else None,
                                "response_message_loading": record.response == 5,
                                "response_message_ephemeral": False},
                "resource": resource}

    async def _webhook_edit(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        record = self._interaction(p)
        if p["message_id"] == "@original":
            if record.response is None:  # the HTTP answer may still be on its way
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(record.answered.wait(), 2.0)
            m = self.find(record.channel_id, record.original or 0)
        else:
            m = self.find(record.channel_id, int(p["message_id"]))
        if m is None or m.interaction_id != record.id:
            raise unknown_message()
        self._update(m, p, f)
        return self._payload(m, record.bot)

    async def _followup(self, bot: Bot | None, p: Params, f: list[FakeFile]) -> Any:
        record = self._interaction(p)
        if record.response is None:
            raise ApiError(400, 40060, "Interaction has not been acknowledged.")
        content = self._content(p, f, required=True) or ""
        m = self._store(FakeMessage(snowflake(self._ids), record.channel_id,
                                    record.bot.user_id, content, [content], f, via="followup",
                                    interaction_id=record.id, sent_at=time.monotonic()))
        self._shown(m.channel_id, m.content, edit=False)
        return self._payload(m, record.bot)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        found = self.files.get(request.match_info["path"])
        self.calls.append(Call("download", {"path": request.match_info["path"]},
                               time.monotonic()))
        if found is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=found.data, headers={"Content-Type": found.content_type})

    def _payload(self, m: FakeMessage, bot: Bot) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": str(m.id), "channel_id": str(m.channel_id), "author": bot.user(),
            "content": m.content, "timestamp": _iso(),
            "edited_timestamp": _iso() if m.edits else None, "tts": False,
            "mention_everyone": False, "mentions": [], "mention_roles": [],
            "attachments": [{"id": str(m.id + i), "filename": x.filename, "size": len(x.data),
                             "url": f"{self.origin}/attachments/{m.channel_id}/{m.id}/"
                                    f"{x.filename}",
                             "proxy_url": f"{self.origin}/attachments/{m.channel_id}/{m.id}/"
                                          f"{x.filename}",
                             "content_type": x.content_type} for i, x in enumerate(m.files)],
            "embeds": [], "pinned": False, "type": 0 if m.via == "channel" else 20,
            "flags": LOADING if m.loading else 0,
        }
        if m.via != "channel":
            out["webhook_id"] = str(bot.app_id)
            out["application_id"] = str(bot.app_id)
        return out

    # --- load for the gateway bench (script mode) -------------------------------------------

    def _question(self, load: Load, chat: int, row: dict[str, Any]) -> None:
        """The chat is a DM channel of the bot whose token is `load.to`: push the user's
        message on that bot's gateway connection."""
        load.spawn(self.push(self.message(chat, load.text, token=load.to), token=load.to))

    async def _control_forge(self, request: web.Request) -> web.Response:
        """Body: {url, count, token}. Sends the endpoint `count` each of: a signature by another
        key, a rightly signed 10-minute-old timestamp, a body changed after signing, and a
        replay of a signed interaction delivered just before. Answers the statuses, the ids
        of the forged interactions and of the replayed ones (each delivered once for real)."""
        body = await request.json()
        url, token = body["url"], body.get("token")
        statuses: list[int] = []
        forged: list[str] = []
        replayed: list[str] = []
        channels = itertools.count(3_000_000)
        for _ in range(int(body.get("count", 10))):
            for kind in ("key", "stale", "tampered", "replay"):
                event = self.interaction(next(channels), "help", token=token)
                raw = json.dumps(event.data).encode()
                stamp = str(int(time.time()) - 600) if kind == "stale" else None
                headers = self.sign(raw, timestamp=stamp, forge=kind == "key", token=token)
                if kind == "tampered":
                    raw = raw.replace(b'"help"', b'"usage"')
                elif kind == "replay":
                    await self.deliver_interaction(url, event, headers=headers, body=raw)
                status, _ = await self.deliver_interaction(url, event, headers=headers, body=raw)
                statuses.append(status)
                (replayed if kind == "replay" else forged).append(f"i:{event.data['id']}")
        return _json({"statuses": statuses, "message_ids": forged, "replayed_ids": replayed})


def main() -> None:
    """Serve until stdin closes: `python discord_server.py [--port N] [--token T ...]`."""
    serve_script(lambda args: FakeDiscord(
        port=args.port, token=(args.token or [DEFAULT_TOKEN])[0],
        more_tokens=tuple(args.token[1:]), control=True))


if __name__ == "__main__":
    main()
