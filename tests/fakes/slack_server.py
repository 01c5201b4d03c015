"""A local Slack: Web API, upload host, file host and Socket Mode server (aiohttp), for the real
slack-sdk / slack-bolt clients.

Web API methods answer the way Slack does (`{"ok": true, ...}`; refusals as HTTP 200 with
`{"ok": false, "error": ...}`; 429 with `Retry-After` and `"error": "ratelimited"`). It keeps every
channel's bot messages with their edit history, thread and uploaded files, and injects faults:
429s, `not_in_channel` (`kick`), any error code, slow answers.

Towards the bot it plays Slack's side: `post` signs an event / slash command / button press
with the app's signing secret (or a wrong one, or a stale timestamp) and POSTs it to the bot's
events URL; `push` sends an envelope over the Socket Mode websocket that `apps.connections.open`
handed out and records the bot's acknowledgement.

Run as a script (`python tests/fakes/slack_server.py`) it serves on loopback in its own process,
prints its port, and drives the gateway bench's load through `/_fake/...`.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import aiohttp
from aiohttp import web

try:
    from tests.fakes._common import Call, FakePlatform, Fault, Load, serve_script
except ImportError:  # run as a script (the bench): this folder is on the path
    from _common import Call, FakePlatform, Fault, Load, serve_script  # type: ignore[no-redef]

BOT_TOKEN = "xoxb-1111-2222-TESTfakeBotToken0123"
APP_TOKEN = "xapp-1-A0BULL-3333-TESTfakeAppToken0123"
SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
TEAM = "T0BULLPEN"
APP_ID = "A0BULLPEN"
BOT_USER = "U0BULLBOT"
MAX_TEXT = 40_000  # Slack truncates beyond; msg_too_long is its refusal


class ApiError(Exception):
    """A refusal of the Web API: HTTP 200 with `ok: false` unless it is a 429."""

    def __init__(self, error: str, *, status: int = 200, retry_after: int | None = None) -> None:
        super().__init__(error)
        self.error = error
        self.status = status
        self.retry_after = retry_after

    def response(self) -> web.Response:
        headers = {"Retry-After": str(self.retry_after)} if self.retry_after is not None else {}
        return web.json_response({"ok": False, "error": self.error}, status=self.status,
                                 headers=headers)


def rate_limited(retry_after: int = 1) -> ApiError:
    return ApiError("ratelimited", status=429, retry_after=retry_after)


def sign(secret: str, timestamp: int | str, body: str) -> str:
    """Slack's v0 request signature."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


@dataclass
class FakeFile:
    id: str
    name: str
    length: int
    data: bytes = b""
    title: str = ""
    mimetype: str = "application/octet-stream"
    subtype: str = ""
    alt_txt: str = ""
    duration_ms: int | None = None


@dataclass
class FakeMessage:
    """A message the bot posted, as it stands now (`history` holds every version)."""

    ts: str
    channel: str
    thread_ts: str | None
    text: str = ""
    blocks: list[dict[str, Any]] | None = None
    history: list[str] = field(default_factory=list)
    files: list[FakeFile] = field(default_factory=list)
    posted_at: float = 0.0

    @property
    def kind(self) -> str:
        return "file" if self.files else "text"

    @property
    def edits(self) -> int:
        return len(self.history) - 1


class FakeSlack(FakePlatform):
    """The server. `async with FakeSlack() as slack:` then point the SDK at `slack.base_url`."""

    def __init__(self, *, bot_token: str = BOT_TOKEN, more_tokens: tuple[str, ...] = (),
                 app_token: str = APP_TOKEN, signing_secret: str = SIGNING_SECRET,
                 host: str = "127.0.0.1", port: int = 0, control: bool = False) -> None:
        super().__init__(host=host, port=port, control=control)
        self.token = bot_token
        self.tokens = {bot_token, *more_tokens}
        self.app_token = app_token
        self.signing_secret = signing_secret
        self.calls: list[Call] = []
        self.channels: dict[str, dict[str, FakeMessage]] = {}
        self.files: dict[str, FakeFile] = {}
        self.faults: list[Fault] = []  # holding `ApiError`s
        self.kicked: set[str] = set()  # channels the bot is not in
        self.workspace_admins: dict[str, str] = {}  # user -> is_admin | is_owner | ...
        self.creators: dict[str, str] = {}  # channel -> the user who created it
        self.downloads: list[dict[str, str]] = []
        self.sockets: list[web.WebSocketResponse] = []
        self.acks: dict[str, dict[str, Any]] = {}  # envelope id -> the bot's acknowledgement
        self.targets: dict[str, str] = {}  # bench: bot name -> events URL
        self._ts = itertools.count(1)
        self._ids = itertools.count(1)
        self._epoch = int(time.time())
        self._http: aiohttp.ClientSession | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def root(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/api/"

    async def __aenter__(self) -> FakeSlack:
        app = web.Application(client_max_size=60 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/upload/v1/{file_id}", self._upload)
        app.router.add_get("/files-pri/{team_file}/{name}", self._download)
        app.router.add_get("/link/", self._socket)
        if self.control:
            app.router.add_post("/_fake/target", self._control_target)
            app.router.add_post("/_fake/forge", self._control_forge)
        await self._listen(app)
        self._http = aiohttp.ClientSession()
        return self

    async def __aexit__(self, *exc: object) -> None:
        for ws in list(self.sockets):
            await ws.close()
        if self._http is not None:
            await self._http.close()
        await self._stop_listening()

    # --- test controls ---------------------------------------------------------------------

    # fail(method, ApiError, times=, when=), delay(method, seconds, when=): as on every fake

    def kick(self, channel: str) -> None:
        """The bot was removed from the channel: posting there gets `not_in_channel`."""
        self.kicked.add(channel)

    def make_admin(self, user: str, flag: str = "is_admin") -> None:
        """users.info says the user is a workspace admin (`is_admin`) or owner (`is_owner`,
        `is_primary_owner`); everyone else is a plain member."""
        assert flag in ("is_admin", "is_owner", "is_primary_owner")
        self.workspace_admins[user] = flag

    def next_ts(self) -> str:
        return f"{self._epoch}.{next(self._ts):06d}"

    def add_file(self, data: bytes, name: str, *, mimetype: str, subtype: str = "",
                 duration_ms: int | None = None) -> dict[str, Any]:
        """A file a user shared: returns its entry for an event's `files`."""
        f = FakeFile(id=f"F{next(self._ids):08d}", name=name, length=len(data), data=data,
                     title=name, mimetype=mimetype, subtype=subtype, duration_ms=duration_ms)
        self.files[f.id] = f
        return self._file_json(f)

    # --- what Slack sends the bot ----------------------------------------------------------

    def message(self, channel: str, text: str = "", *, user: str = "U0ALICE",
                channel_type: str | None = None, thread_ts: str | None = None,
                ts: str | None = None, **extra: Any) -> dict[str, Any]:
        """A `message` event (DM when the channel starts with D, unless told otherwise)."""
        event: dict[str, Any] = {
            "type": "message", "channel": channel, "user": user, "text": text,
            "ts": ts or self.next_ts(), "client_msg_id": str(uuid.uuid4()), "team": TEAM,
            "channel_type": channel_type or ("im" if channel.startswith("D") else "channel"),
            "event_ts": "", **extra}
        event["event_ts"] = event["ts"]
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    def mention(self, channel: str, text: str, **kw: Any) -> dict[str, Any]:
        """An `app_mention` event: `text` gets the bot's mention in front."""
        event = self.message(channel, f"<@{BOT_USER}> {text}", **kw)
        event["type"] = "app_mention"
        del event["channel_type"]
        return event

    def edited(self, event: dict[str, Any], text: str) -> dict[str, Any]:
        inner = {k: v for k, v in event.items() if k not in ("channel", "channel_type")}
        inner.update(type="message", text=text, edited={"user": event["user"],
                                                        "ts": self.next_ts()})
        return {"type": "message", "subtype": "message_changed", "channel": event["channel"],
                "channel_type": event.get("channel_type", "channel"), "hidden": True,
                "message": inner, "previous_message": event, "ts": self.next_ts(),
                "event_ts": self.next_ts()}

    def envelope(self, event: dict[str, Any]) -> dict[str, Any]:
        """The Events API body around an event."""
        return {"token": "legacy-verification-token", "team_id": TEAM, "api_app_id": APP_ID,
                "event": event, "type": "event_callback",
                "event_id": f"Ev{next(self._ids):010d}", "event_time": int(time.time()),
                "authorizations": [{"enterprise_id": None, "team_id": TEAM,
                                    "user_id": BOT_USER, "is_bot": True,
                                    "is_enterprise_install": False}],
                "is_ext_shared_channel": False}

    def command(self, text: str, *, channel: str = "D0ALICE", user: str = "U0ALICE",
                command: str = "/bullpen") -> dict[str, str]:
        """A slash command's form fields."""
        return {"token": "legacy-verification-token", "team_id": TEAM, "team_domain": "bull",
                "channel_id": channel, "channel_name": "directmessage", "user_id": user,
                "user_name": "alice", "command": command, "text": text, "api_app_id": APP_ID,
                "is_enterprise_install": "false",
                "response_url": f"{self.root}/commands/{TEAM}/1/x",
                "trigger_id": f"{next(self._ids)}.1111.abcdef"}

    def press(self, message: FakeMessage, value: str, *, user: str = "U0ALICE") -> dict[str, Any]:
        """A block_actions payload: the user pressed the button with `value` on `message`."""
        action = next(e for b in message.blocks or [] if b["type"] == "actions"
                      for e in b["elements"] if e.get("value") == value)
        container = {"type": "message", "message_ts": message.ts, "channel_id": message.channel,
                     "is_ephemeral": False}
        bot_message: dict[str, Any] = {"type": "message", "user": BOT_USER, "ts": message.ts,
                                       "text": message.text, "blocks": message.blocks}
        if message.thread_ts:
            container["thread_ts"] = bot_message["thread_ts"] = message.thread_ts
        return {"type": "block_actions", "team": {"id": TEAM, "domain": "bull"},
                "user": {"id": user, "username": "alice", "team_id": TEAM},
                "api_app_id": APP_ID, "token": "legacy-verification-token",
                "container": container, "trigger_id": f"{next(self._ids)}.2222.abcdef",
                "channel": {"id": message.channel, "name": "directmessage"},
                "message": bot_message, "response_url": f"{self.root}/actions/x",
                "actions": [{**action, "block_id": "b", "type": "button",
                             "action_ts": f"{time.time():.6f}"}]}

    def signed(self, body: dict[str, Any], *, kind: str = "event", secret: str | None = None,
               timestamp: int | None = None, retry_num: int | None = None,
               ) -> tuple[bytes, dict[str, str]]:
        """The body as Slack would POST it (`kind`: event, command or action) and its headers,
        signed with `secret` (default: the right one) at `timestamp` (default: now)."""
        if kind == "event":
            raw, ctype = json.dumps(body), "application/json"
        elif kind == "command":
            raw, ctype = urlencode(body), "application/x-www-form-urlencoded"
        else:
            raw, ctype = urlencode({"payload": json.dumps(body)}), \
                "application/x-www-form-urlencoded"
        stamp = int(time.time()) if timestamp is None else timestamp
        headers = {"Content-Type": ctype, "X-Slack-Request-Timestamp": str(stamp),
                   "X-Slack-Signature": sign(secret or self.signing_secret, stamp, raw)}
        if retry_num:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        return raw.encode(), headers

    async def post(self, url: str, body: dict[str, Any], *, kind: str = "event",
                   secret: str | None = None, timestamp: int | None = None,
                   retry_num: int | None = None, tamper: bool = False) -> tuple[int, str]:
        """POST a signed body to the bot; `tamper` changes the body after signing."""
        raw, headers = self.signed(body, kind=kind, secret=secret, timestamp=timestamp,
                                   retry_num=retry_num)
        if tamper:
            raw = raw.replace(b"e", b"E", 1)
        assert self._http is not None
        async with self._http.post(url, data=raw, headers=headers) as resp:
            return resp.status, await resp.text()

    async def push(self, body: dict[str, Any], *, kind: str = "events_api",
                   retry_attempt: int = 0, envelope_id: str | None = None) -> str:
        """Send an envelope over Socket Mode (`kind`: events_api, slash_commands,
        interactive) to the newest connection; returns its envelope id."""
        if not self.sockets:
            raise RuntimeError("no Socket Mode connection")
        eid = envelope_id or str(uuid.uuid4())
        await self.sockets[-1].send_str(json.dumps({
            "envelope_id": eid, "payload": body, "type": kind,
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": retry_attempt,
            "retry_reason": "timeout" if retry_attempt else ""}))
        return eid

    # --- state -----------------------------------------------------------------------------

    def bot_messages(self, channel: str, *, thread: str | None = "*") -> list[FakeMessage]:
        """The bot's messages in `channel` (`thread`: "*" any, None top level, else a ts)."""
        out = sorted(self.channels.get(channel, {}).values(), key=lambda m: m.ts)
        return out if thread == "*" else [m for m in out if m.thread_ts == thread]

    def texts(self, channel: str, *, thread: str | None = "*") -> list[str]:
        return [m.text for m in self.bot_messages(channel, thread=thread) if m.kind == "text"]

    def find(self, channel: str, ts: str) -> FakeMessage | None:
        return self.channels.get(channel, {}).get(ts)

    def calls_of(self, method: str, channel: str | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method and (
            channel is None or channel in (c.params.get("channel"),
                                           c.params.get("channel_id")))]

    # wait_for(predicate), settle(quiet_s): as on every fake

    # --- Web API ---------------------------------------------------------------------------

    async def _params(self, request: web.Request) -> dict[str, Any]:
        params: dict[str, Any] = dict(request.query)
        if request.content_type == "application/json":
            params.update(await request.json())
        elif request.can_read_body:
            params.update(await request.post())
        return params

    def _token_of(self, request: web.Request, params: dict[str, Any]) -> str:
        auth = request.headers.get("Authorization", "")
        return auth.removeprefix("Bearer ").strip() if auth else str(params.get("token", ""))

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        handler = getattr(self, "_m_" + method.replace(".", "_"), None)
        if handler is None:
            return web.json_response({"ok": False, "error": "unknown_method"}, status=404)
        params = await self._params(request)
        token = self._token_of(request, params)
        call = Call(method, {k: v for k, v in params.items() if k != "token"},
                    time.monotonic())
        self.calls.append(call)
        try:
            await self._delay(method, params)
            if not token:
                raise ApiError("not_authed")
            wanted = {self.app_token} if method == "apps.connections.open" else self.tokens
            if token not in wanted:
                raise ApiError("not_allowed_token_type" if token in self.tokens | {
                    self.app_token} else "invalid_auth")
            self._inject(method, params)
            result = await handler(params)
        except ApiError as exc:
            return exc.response()
        finally:
            call.t = time.monotonic()
            self._notify()
        return web.json_response({"ok": True, **result})

    def _inject(self, method: str, params: dict[str, Any]) -> None:
        self._raise_fault(method, params)
        channel = params.get("channel") or params.get("channel_id")
        if channel in self.kicked and method != "auth.test":
            raise ApiError("not_in_channel")

    async def _m_auth_test(self, p: dict[str, Any]) -> dict[str, Any]:
        return {"url": "https://bull.slack.com/", "team": "Bull", "user": "bullpen",
                "team_id": TEAM, "user_id": BOT_USER, "bot_id": "B0BULLBOT",
                "is_enterprise_install": False}

    async def _m_apps_connections_open(self, p: dict[str, Any]) -> dict[str, Any]:
        host = self.root.replace("http://", "ws://")
        return {"url": f"{host}/link/?ticket={uuid.uuid4()}&app_id={APP_ID}"}

    async def _m_users_info(self, p: dict[str, Any]) -> dict[str, Any]:
        user = str(p.get("user") or "")
        if not user.startswith(("U", "W")):
            raise ApiError("user_not_found")
        flag = self.workspace_admins.get(user)
        owner = flag in ("is_owner", "is_primary_owner")
        return {"user": {"id": user, "team_id": TEAM, "name": user.lower(), "deleted": False,
                         "real_name": f"User {user}", "is_bot": False,
                         "is_admin": flag is not None, "is_owner": owner,
                         "is_primary_owner": flag == "is_primary_owner",
                         "is_restricted": False, "is_ultra_restricted": False}}

    async def _m_conversations_info(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = str(p.get("channel") or "")
        if not channel.startswith(("C", "G", "D")):
            raise ApiError("channel_not_found")
        im = channel.startswith("D")
        return {"channel": {"id": channel, "name": channel.lower(), "is_channel": not im,
                            "is_im": im, "is_private": channel.startswith("G"),
                            "created": self._epoch,
                            "creator": self.creators.get(channel, "U0FOUNDER"),
                            "is_archived": False, "is_member": True}}

    def _text(self, p: dict[str, Any]) -> tuple[str, list[dict[str, Any]] | None]:
        text = str(p.get("text") or "")
        blocks = p.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if not text.strip() and not blocks:
            raise ApiError("no_text")
        if len(text) > MAX_TEXT:
            raise ApiError("msg_too_long")
        for block in blocks or []:
            if block.get("type") == "section" and len(block["text"]["text"]) > 3000:
                raise ApiError("invalid_blocks")
        return text, blocks or None

    async def _m_chat_postMessage(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = str(p.get("channel") or "")
        if not channel:
            raise ApiError("channel_not_found")
        text, blocks = self._text(p)
        m = FakeMessage(self.next_ts(), channel, p.get("thread_ts") or None, text=text,
                        blocks=blocks, history=[text], posted_at=time.monotonic())
        self.channels.setdefault(channel, {})[m.ts] = m
        self._observe(channel, text, edit=False)
        return {"channel": channel, "ts": m.ts, "message": self._json(m)}

    async def _m_chat_update(self, p: dict[str, Any]) -> dict[str, Any]:
        channel = str(p.get("channel") or "")
        m = self.find(channel, str(p.get("ts") or ""))
        if m is None:
            raise ApiError("message_not_found")
        if m.files:
            raise ApiError("cant_update_message")
        text, blocks = self._text(p)
        m.text, m.blocks = text, blocks if blocks is not None else m.blocks
        m.history.append(text)
        self._observe(channel, text, edit=True)
        return {"channel": channel, "ts": m.ts, "text": text, "message": self._json(m)}

    def _json(self, m: FakeMessage) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "message", "user": BOT_USER, "bot_id": "B0BULLBOT",
                               "text": m.text, "ts": m.ts}
        if m.thread_ts:
            out["thread_ts"] = m.thread_ts
        if m.blocks:
            out["blocks"] = m.blocks
        return out

    async def _m_files_getUploadURLExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        name, length = str(p.get("filename") or ""), int(p.get("length") or 0)
        if not name or length <= 0:
            raise ApiError("invalid_arguments")
        f = FakeFile(id=f"F{next(self._ids):08d}", name=name, length=length,
                     alt_txt=str(p.get("alt_txt") or ""))
        self.files[f.id] = f
        return {"upload_url": f"{self.root}/upload/v1/{f.id}", "file_id": f.id}

    async def _upload(self, request: web.Request) -> web.Response:
        f = self.files.get(request.match_info["file_id"])
        data = await request.read()
        self.calls.append(Call("upload", {"file_id": request.match_info["file_id"],
                                          "bytes": len(data)}, time.monotonic()))
        self._notify()
        if f is None:
            return web.Response(status=404, text="not found")
        if request.headers.get("Authorization"):
            return web.Response(status=400, text="the upload URL takes no token")
        f.data = data
        return web.Response(text=f"OK - {len(data)}", content_type="text/plain")

    async def _m_files_completeUploadExternal(self, p: dict[str, Any]) -> dict[str, Any]:
        entries = json.loads(str(p.get("files") or "[]"))
        done: list[FakeFile] = []
        for entry in entries:
            f = self.files.get(entry.get("id", ""))
            if f is None or not f.data:
                raise ApiError("file_not_found" if f is None else "file_upload_not_complete")
            if len(f.data) != f.length:
                raise ApiError("file_upload_size_mismatch")
            f.title = entry.get("title") or f.name
            done.append(f)
        channel = str(p.get("channel_id") or "")
        if channel:
            m = FakeMessage(self.next_ts(), channel, p.get("thread_ts") or None,
                            text=str(p.get("initial_comment") or ""), files=done,
                            posted_at=time.monotonic())
            self.channels.setdefault(channel, {})[m.ts] = m
        return {"files": [self._file_json(f) for f in done]}

    async def _m_files_info(self, p: dict[str, Any]) -> dict[str, Any]:
        f = self.files.get(str(p.get("file") or ""))
        if f is None:
            raise ApiError("file_not_found")
        return {"file": self._file_json(f)}

    def _file_json(self, f: FakeFile) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": f.id, "name": f.name, "title": f.title, "mimetype": f.mimetype,
            "filetype": f.name.rsplit(".", 1)[-1], "size": f.length, "mode": "hosted",
            "url_private": f"{self.root}/files-pri/{TEAM}-{f.id}/{f.name}",
            "url_private_download": f"{self.root}/files-pri/{TEAM}-{f.id}/download"}
        if f.subtype:
            out["subtype"] = f.subtype
        if f.duration_ms is not None:
            out["duration_ms"] = f.duration_ms
        return out

    async def _download(self, request: web.Request) -> web.Response:
        """With the bot token the bytes; without, Slack's sign-in page (HTML, status 200)."""
        token = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        file_id = request.match_info["team_file"].removeprefix(f"{TEAM}-")
        self.downloads.append({"file": file_id, "token": token})
        if token not in self.tokens:
            return web.Response(text="<html>Sign in to Slack</html>", content_type="text/html")
        f = self.files.get(file_id)
        if f is None or not f.data:
            return web.Response(status=404, text="not found")
        return web.Response(body=f.data, content_type=f.mimetype)

    # --- Socket Mode -----------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        await ws.send_str(json.dumps({
            "type": "hello", "num_connections": len(self.sockets) + 1,
            "debug_info": {"host": "fake", "approximate_connection_time": 3600},
            "connection_info": {"app_id": APP_ID}}))
        self.sockets.append(ws)
        self._notify()
        try:
            async for msg in ws:
                if msg.type == aiohttp.WSMsgType.TEXT:
                    data = json.loads(msg.data)
                    if "envelope_id" in data:
                        self.acks[data["envelope_id"]] = data
                        self._notify()
        finally:
            self.sockets.remove(ws)
            self._notify()
        return ws

    # --- load for the gateway bench (script mode) ------------------------------------------

    def _question(self, load: Load, chat: int, row: dict[str, Any]) -> None:
        """The chat is the DM channel `D<chat>`: POST its `message` event to the events URL
        registered (`/_fake/target`) under the name `load.to`."""
        body = self.envelope(self.message(f"D{chat}", load.text, user=f"U{chat}"))
        load.spawn(self._post_question(self.targets[load.to], body))

    async def _post_question(self, url: str, body: dict[str, Any]) -> None:
        status, text = await self.post(url, body)
        if status != 200:  # stdout carries only the port
            print(f"bot answered {status}: {text[:200]}", file=sys.stderr, flush=True)

    def _observe(self, channel: str, shown: str, *, edit: bool) -> None:
        if self.load is not None and channel.startswith("D") and channel[1:].isdigit():
            self._shown(int(channel[1:]), shown, edit=edit)

    async def _control_target(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.targets[body["name"]] = body["url"]
        return web.json_response({"ok": True})

    async def _control_forge(self, request: web.Request) -> web.Response:
        """Bad requests to bot `name`: `count` each of a wrong secret, a stale timestamp
        (10 minutes old, rightly signed) and a body changed after signing. Answers the HTTP
        statuses and the message ids the events carried."""
        body = await request.json()
        url = self.targets[body["name"]]
        statuses: list[int] = []
        ids: list[str] = []
        stale = int(time.time()) - 600
        for i in range(int(body.get("count", 10))):
            for how in ({"secret": "not-the-signing-secret"}, {"timestamp": stale},
                        {"tamper": True}):
                event = self.message(f"D{9_000_000 + i}", f"forged question {i}")
                ids.append(event["ts"])
                status, _ = await self.post(url, self.envelope(event), **how)  # type: ignore[arg-type]
                statuses.append(status)
        return web.json_response({"statuses": statuses, "message_ids": ids})


def main() -> None:
    """Serve until stdin closes:
    `python slack_server.py [--port N] [--token T ...] [--signing-secret S]`."""
    serve_script(lambda args: FakeSlack(
        port=args.port, bot_token=(args.token or [BOT_TOKEN])[0],
        more_tokens=tuple(args.token[1:]), signing_secret=args.signing_secret, control=True),
        signing_secret=SIGNING_SECRET)


if __name__ == "__main__":
    main()
