"""The WeChat platform side on loopback (aiohttp), for the real wechatpy client and adapter.

As the API host it serves the access-token endpoints (official `token`, WeCom `gettoken`),
customer-service sends (`message/custom/send`, with the 48-hour window and the per-message
quota: 45015 / 45047), WeCom app messages (`message/send`), and temporary media upload and
download. Every call needs a token it issued (40001, or 42001 once `expire_tokens` ran).
Faults: `fail(api, errcode)` (45009 rate limit, ...), `delay(api, seconds)`.

As WeChat's servers it signs callbacks and POSTs them to the adapter: plain mode, safe mode and
WeCom (encrypted here with its own AES code, not wechatpy's, so the two sides check each
other), forged (wrong token), stale, replayed (a captured query with another body), malformed,
and WeChat's retry storm (the same MsgId again within seconds). State: `sent`, `texts(user)`,
`media`, `calls`, `deliveries`.

Run as a script (`python wechat_server.py`) it serves in its own process, prints its port and
drives the gateway bench's load on `/_fake/load` and `/_fake/forge`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
import os
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from xml.etree import ElementTree

import aiohttp
from aiohttp import web
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

try:
    from tests.fakes._common import FakePlatform, Fault, Load, serve_script
except ImportError:  # run as a script (the bench): this folder is on the path
    from _common import FakePlatform, Fault, Load, serve_script  # type: ignore[no-redef]

TOKEN = "bullpen-callback-token"
APP_ID = "wx5f1a2b3c4d5e6f70"
APP_SECRET = "fake-app-secret-0123456789abcdef"
CORP_ID = "ww0a1b2c3d4e5f6789"
CORP_SECRET = "fake-corp-secret-0123456789abcdefghijklmnop"
AGENT_ID = 1000002
AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"  # 43 characters
ACCOUNT = "gh_0123456789ab"
WINDOW_S = 48 * 3600
QUOTA = 5  # customer-service messages per user message (the 2023 rule)
MAX_TEXT_BYTES = 2048


def openid(n: int) -> str:
    """A 28-character openid."""
    return f"oBullpen{n:020d}"


@dataclass
class Call:
    api: str
    query: dict[str, str]
    body: dict[str, Any] | None
    t: float


@dataclass
class Sent:
    """A message the bot delivered to a user."""

    user: str
    kind: str  # text | image | file
    text: str = ""
    media_id: str = ""
    data: bytes = b""
    filename: str = ""
    t: float = 0.0


@dataclass
class Delivery:
    """One callback POSTed (or GET) to the adapter, and its answer."""

    query: dict[str, str]
    body: bytes
    status: int
    text: str
    elapsed_s: float


class FakeWeChat(FakePlatform):
    """`async with FakeWeChat(kind=..., encoding_aes_key=...) as wx:`; point wechatpy at
    `wx.api_base_url`, set `wx.callback_url` to the adapter's URL once it listens."""

    def __init__(self, *, kind: str = "official", token: str = TOKEN,
                 encoding_aes_key: str | None = None, host: str = "127.0.0.1", port: int = 0,
                 quota: int = QUOTA, control: bool = False) -> None:
        super().__init__(host=host, port=port, control=control)
        self.kind = kind
        self.token = token
        self.aes_key = encoding_aes_key
        self.app_id = CORP_ID if kind == "wecom" else APP_ID
        self.app_secret = CORP_SECRET if kind == "wecom" else APP_SECRET
        self.agent_id = AGENT_ID
        self.quota = quota
        self.callback_url = ""
        self.calls: list[Call] = []
        self.sent: list[Sent] = []
        self.media: dict[str, tuple[str, str, bytes, str]] = {}  # id -> type, name, data, mime
        self.deliveries: list[Delivery] = []
        self.faults: list[Fault] = []  # holding `ApiError`s
        self.invisible: set[str] = set()  # WeCom users outside the app's visible range
        self.undeclared_media: set[str] = set()  # served chunked, with no Content-Length
        self.media_sent: dict[str, int] = {}  # media id -> bytes written to the last download
        self.tokens_issued = 0
        self._tokens: dict[str, float] = {}
        self._seen: dict[str, float] = {}  # user -> last interaction
        self._used: dict[str, int] = {}  # user -> messages sent since
        self._msg_ids = itertools.count(24_000_000_000_000_000)
        self._media_ids = itertools.count(1)
        self._wecom_ids = itertools.count(1)
        self._http: aiohttp.ClientSession | None = None

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def api_base_url(self) -> str:
        return f"http://{self.host}:{self.port}/cgi-bin/"

    async def __aenter__(self) -> FakeWeChat:
        app = web.Application(client_max_size=30 * 1024 * 1024)
        app.router.add_route("*", "/cgi-bin/{api:.+}", self._api)
        if self.control:
            app.router.add_post("/_fake/forge", self._control_forge)
        await self._listen(app)
        self._http = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=512),
            timeout=aiohttp.ClientTimeout(total=30))
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._http is not None:
            await self._http.close()
        await self._stop_listening()

    # --- test controls ---------------------------------------------------------------------

    def fail(self, api: str, errcode: int, errmsg: str = "", *,  # type: ignore[override]
             times: int = 1, when: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """The next `times` calls of `api` (matching `when` on the JSON body) get `errcode`."""
        self.faults.append(Fault(api, ApiError(errcode, errmsg or f"fault {errcode}"), times,
                                 when))

    # delay(api, seconds, when=) (`when` on the JSON body): as on every fake

    def close_window(self, user: str) -> None:
        """The user last wrote more than 48 hours ago."""
        self._seen[user] = time.time() - WINDOW_S - 60

    def expire_tokens(self) -> None:
        for token in self._tokens:
            self._tokens[token] = 0.0

    def add_media(self, data: bytes, *, media_type: str = "voice", filename: str = "v.amr",
                  mime: str = "audio/amr", declare_size: bool = True) -> str:
        """Temporary media to download; `declare_size=False` serves it chunked, without a
        Content-Length, and counts the bytes written in `media_sent` until the client leaves."""
        media_id = f"MEDIA_{next(self._media_ids)}"
        self.media[media_id] = (media_type, filename, data, mime)
        if not declare_size:
            self.undeclared_media.add(media_id)
        return media_id

    def texts(self, user: str) -> list[str]:
        return [s.text for s in self.sent if s.user == user and s.kind == "text"]

    def sent_to(self, user: str) -> list[Sent]:
        return [s for s in self.sent if s.user == user]

    def calls_of(self, api: str) -> list[Call]:
        return [c for c in self.calls if c.api == api]

    # wait_for(predicate), settle(quiet_s): as on every fake

    # --- callbacks: messages ---------------------------------------------------------------

    def text(self, user: str, content: str, *, msg_id: int | None = None) -> dict[str, Any]:
        return self._message(user, "text", msg_id, Content=content)

    def voice(self, user: str, media_id: str, *, recognition: str | None = None,
              fmt: str = "amr", msg_id: int | None = None) -> dict[str, Any]:
        fields: dict[str, Any] = {"MediaId": media_id, "Format": fmt}
        if recognition is not None:
            fields["Recognition"] = recognition
        return self._message(user, "voice", msg_id, **fields)

    def image(self, user: str, media_id: str, *, msg_id: int | None = None) -> dict[str, Any]:
        return self._message(user, "image", msg_id, PicUrl="http://mmbiz.example/p.jpg",
                             MediaId=media_id)

    def event(self, user: str, event: str = "subscribe") -> dict[str, Any]:
        return {"ToUserName": self._receiver_name(), "FromUserName": user,
                "CreateTime": int(time.time()), "MsgType": "event", "Event": event,
                **({"AgentID": self.agent_id} if self.kind == "wecom" else {})}

    def _message(self, user: str, msg_type: str, msg_id: int | None,
                 **fields: Any) -> dict[str, Any]:
        msg: dict[str, Any] = {"ToUserName": self._receiver_name(), "FromUserName": user,
                               "CreateTime": int(time.time()), "MsgType": msg_type, **fields,
                               "MsgId": msg_id if msg_id is not None else next(self._msg_ids)}
        if self.kind == "wecom":
            msg["AgentID"] = self.agent_id
        return msg

    def _receiver_name(self) -> str:
        return self.app_id if self.kind == "wecom" else ACCOUNT

    # --- callbacks: signing, encryption, posting -------------------------------------------

    def sign_query(self, body_xml: str, *, forge: bool = False, timestamp: int | None = None,
                   nonce: str | None = None, user: str = "") -> tuple[dict[str, str], bytes]:
        """The query string and body WeChat would send for `body_xml`."""
        token = "not-the-token" if forge else self.token
        ts = str(timestamp if timestamp is not None else int(time.time()))
        nonce = nonce or base64.b32encode(os.urandom(5)).decode().lower()
        query = {"timestamp": ts, "nonce": nonce}
        if self.kind == "official":
            query["signature"] = _sha1(token, ts, nonce)
            if user:
                query["openid"] = user
        if self.aes_key is None:
            return query, body_xml.encode("utf-8")
        encrypt = _encrypt(self.aes_key, body_xml, self.app_id)
        query["msg_signature"] = _sha1(token, ts, nonce, encrypt)
        if self.kind == "official":
            query["encrypt_type"] = "aes"
        agent = (f"<AgentID><![CDATA[{self.agent_id}]]></AgentID>"
                 if self.kind == "wecom" else "")
        envelope = (f"<xml><ToUserName><![CDATA[{self._receiver_name()}]]></ToUserName>"
                    f"{agent}<Encrypt><![CDATA[{encrypt}]]></Encrypt></xml>")
        return query, envelope.encode("utf-8")

    async def post(self, msg: dict[str, Any] | str, *, forge: bool = False,
                   timestamp: int | None = None, nonce: str | None = None,
                   url: str | None = None) -> Delivery:
        """Sign (and encrypt) a message and POST it to the adapter. An authentic message
        opens the user's 48-hour window and quota, as the user's action does on WeChat."""
        xml = msg if isinstance(msg, str) else render_xml(msg)
        user = msg.get("FromUserName", "") if isinstance(msg, dict) else ""
        query, body = self.sign_query(xml, forge=forge, timestamp=timestamp, nonce=nonce,
                                      user=user)
        if user and not forge and timestamp is None:
            self._seen[user] = time.time()
            self._used[user] = 0
        return await self.post_raw(query, body, url=url)

    async def post_raw(self, query: dict[str, str], body: bytes, *,
                       url: str | None = None) -> Delivery:
        """POST exactly this query and body (replays, malformed bodies)."""
        assert self._http is not None
        start = time.monotonic()
        async with self._http.post(url or self.callback_url, params=query, data=body,
                                   headers={"Content-Type": "text/xml"}) as resp:
            text = await resp.text()
            delivery = Delivery(query, body, resp.status, text, time.monotonic() - start)
        self.deliveries.append(delivery)
        return delivery

    async def storm(self, msg: dict[str, Any], *, retries: int = 3,
                    spacing_s: float = 0.3) -> list[Delivery]:
        """WeChat's retries: the same MsgId again `retries` times, re-signed, `spacing_s`
        apart, each sent without waiting for the answers before it."""

        async def one(k: int) -> Delivery:
            await asyncio.sleep(k * spacing_s)
            return await self.post(dict(msg))

        return list(await asyncio.gather(*(one(k) for k in range(retries + 1))))

    async def verify_url(self, echostr: str = "echo-1234567890", *,
                         forge: bool = False) -> Delivery:
        """WeChat's GET that checks the callback URL."""
        assert self._http is not None
        ts, nonce = str(int(time.time())), "verifynonce"
        token = "not-the-token" if forge else self.token
        query = {"timestamp": ts, "nonce": nonce}
        if self.kind == "wecom":
            echostr = _encrypt(self.aes_key or AES_KEY, echostr, self.app_id)
            query["msg_signature"] = _sha1(token, ts, nonce, echostr)
        else:
            query["signature"] = _sha1(token, ts, nonce)
        query["echostr"] = echostr
        start = time.monotonic()
        async with self._http.get(self.callback_url, params=query) as resp:
            return Delivery(query, b"", resp.status, await resp.text(),
                            time.monotonic() - start)

    # --- the API ---------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.StreamResponse:
        api = request.match_info["api"]
        query = dict(request.query)
        body: dict[str, Any] | None = None
        files: dict[str, Any] = {}
        if request.method == "POST":
            if request.content_type.startswith("multipart/"):
                form = await request.post()
                files = {k: v for k, v in form.items() if isinstance(v, web.FileField)}
            else:
                raw = await request.read()
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    return _error(47001, "data format error")
        self.calls.append(Call(api, {k: v for k, v in query.items() if k != "access_token"},
                               body, time.monotonic()))
        try:
            await self._delay(api, body or {})
            if api in ("token", "gettoken"):
                return self._issue_token(api, query)
            self._check_token(query.get("access_token", ""))
            self._raise_fault(api, body or {})
            handler = _HANDLERS.get(api)
            if handler is None:
                return _error(48001, "api unauthorized")
            if api == "media/get":  # may stream: it needs the request
                return await self._download(query, body or {}, files, request=request)
            return await handler(self, query, body or {}, files)
        except ApiError as exc:
            return _error(exc.errcode, exc.errmsg)
        finally:
            self._notify()

    def _issue_token(self, api: str, query: dict[str, str]) -> web.Response:
        if api == "token":
            if self.kind != "official" or query.get("appid") != self.app_id:
                return _error(40013, "invalid appid")
            if query.get("secret") != self.app_secret:
                return _error(40125, "invalid appsecret")
        else:
            if self.kind != "wecom" or query.get("corpid") != self.app_id:
                return _error(40013, "invalid corpid")
            if query.get("corpsecret") != self.app_secret:
                return _error(40001, "invalid credential")
        try:
            self._raise_fault(api, {})
        except ApiError as exc:
            return _error(exc.errcode, exc.errmsg)
        self.tokens_issued += 1
        token = base64.urlsafe_b64encode(os.urandom(24)).decode()
        self._tokens[token] = time.time() + 7200
        answer: dict[str, Any] = {"access_token": token, "expires_in": 7200}
        if api == "gettoken":
            answer.update(errcode=0, errmsg="ok")
        return web.json_response(answer)

    def _check_token(self, token: str) -> None:
        expires = self._tokens.get(token)
        if expires is None:
            raise ApiError(40001, "invalid credential, access_token is invalid or not latest")
        if expires < time.time():
            raise ApiError(42001, "access_token expired")

    async def _custom_send(self, query: dict[str, str], body: dict[str, Any],
                           files: dict[str, Any]) -> web.Response:
        if self.kind != "official":
            raise ApiError(48001, "api unauthorized")
        user = str(body.get("touser", ""))
        if len(user) != 28:
            raise ApiError(40003, "invalid openid")
        seen = self._seen.get(user)
        if seen is None or time.time() - seen > WINDOW_S:
            raise ApiError(45015, "response out of time limit or subscription is canceled "
                                  "hint: [fake-45015]")
        if self._used.get(user, 0) >= self.quota:
            raise ApiError(45047, "out of response count limit hint: [fake-45047]")
        sent = self._record(user, body)
        self._used[user] = self._used.get(user, 0) + 1
        self._observe(user, sent)
        return web.json_response({"errcode": 0, "errmsg": "ok"})

    async def _app_send(self, query: dict[str, str], body: dict[str, Any],
                        files: dict[str, Any]) -> web.Response:
        if self.kind != "wecom":
            raise ApiError(48001, "api unauthorized")
        if int(body.get("agentid") or 0) != self.agent_id:
            raise ApiError(40056, "invalid agentid")
        user = str(body.get("touser", ""))
        if user in self.invisible:
            return web.json_response({"errcode": 0, "errmsg": "ok", "invaliduser": user})
        sent = self._record(user, body)
        self._observe(user, sent)
        return web.json_response({"errcode": 0, "errmsg": "ok", "invaliduser": "",
                                  "msgid": f"wecom-msg-{next(self._wecom_ids)}"})

    def _record(self, user: str, body: dict[str, Any]) -> Sent:
        kind = str(body.get("msgtype", ""))
        if kind == "text":
            text = str((body.get("text") or {}).get("content", ""))
            if not text:
                raise ApiError(44004, "empty content")
            if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
                raise ApiError(45002, "content size out of limit")
            sent = Sent(user, "text", text=text, t=time.monotonic())
        elif kind in ("image", "file"):
            media_id = str((body.get(kind) or {}).get("media_id", ""))
            if media_id not in self.media:
                raise ApiError(40007, "invalid media_id")
            _, filename, data, _ = self.media[media_id]
            sent = Sent(user, kind, media_id=media_id, data=data, filename=filename,
                        t=time.monotonic())
        else:
            raise ApiError(40008, "invalid message type")
        self.sent.append(sent)
        return sent

    async def _upload(self, query: dict[str, str], body: dict[str, Any],
                      files: dict[str, Any]) -> web.Response:
        media_type = query.get("type", "")
        upload = files.get("media")
        if upload is None:
            raise ApiError(41005, "media data missing")
        data = upload.file.read()
        if media_type == "image":
            if not data.startswith((b"\x89PNG", b"\xff\xd8\xff", b"GIF8")):
                raise ApiError(40005, "invalid file type")
            if len(data) > 10 * 1024 * 1024:
                raise ApiError(40006, "invalid file size")
        elif media_type not in ("voice", "video", "thumb", "file"):
            raise ApiError(40004, "invalid media type")
        media_id = f"MEDIA_{next(self._media_ids)}"
        self.media[media_id] = (media_type, upload.filename or "", data,
                                upload.content_type or "application/octet-stream")
        return web.json_response({"type": media_type, "media_id": media_id,
                                  "created_at": int(time.time())})

    async def _download(self, query: dict[str, str], body: dict[str, Any],
                        files: dict[str, Any], *,
                        request: web.Request | None = None) -> web.StreamResponse:
        found = self.media.get(query.get("media_id", ""))
        if found is None:
            raise ApiError(40007, "invalid media_id")
        _, filename, data, mime = found
        headers = {"Content-disposition": f'attachment; filename="{filename}"'}
        media_id = query["media_id"]
        if media_id not in self.undeclared_media:
            return web.Response(body=data, content_type=mime, headers=headers)
        assert request is not None
        resp = web.StreamResponse(headers={**headers, "Content-Type": mime})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        self.media_sent[media_id] = 0
        with contextlib.suppress(ConnectionError):
            for at in range(0, len(data), 64 * 1024):
                await resp.write(data[at:at + 64 * 1024])
                self.media_sent[media_id] = at + len(data[at:at + 64 * 1024])
            await resp.write_eof()
        return resp

    # --- load for the gateway bench (script mode) -------------------------------------------

    def _question(self, load: Load, chat: str, row: dict[str, Any]) -> None:
        """The chat is a user: POST the signed callback to the URL `load.to`; its HTTP answer
        is timed (`ack`) and may be the answer itself (a passive reply). WeChat cannot edit:
        the first message the user gets counts as the first edit."""
        row["ack"] = None
        load.spawn(self._ask_and_read(load, chat, row))

    async def _ask_and_read(self, load: Load, chat: str, row: dict[str, Any]) -> None:
        delivery = await self.post(self.text(chat, load.text), url=load.to)
        row["ack"] = row["pushed"] + delivery.elapsed_s
        if delivery.status != 200:
            load.failures += 1
        elif delivery.text.startswith("<xml>"):  # a passive reply
            content = ElementTree.fromstring(delivery.text).findtext("Content") or ""
            self._shown(chat, content, edit=True)

    def _observe(self, user: str, sent: Sent) -> None:
        if self.load is not None and sent.kind == "text":
            self._shown(user, sent.text, edit=True, at=sent.t)

    async def forge(self, *, url: str, users: list[str]) -> dict[str, list[Any]]:
        """Per user: a forged signature, a stale one, and a captured query replayed with
        another body. Answers the HTTP statuses and the forged messages' MsgIds."""
        statuses: list[int] = []
        ids: list[str] = []
        for user in users:
            messages = [self.text(user, f"FORGED: {what}")
                        for what in ("transfer everything", "stale", "replayed")]
            ids += [str(m["MsgId"]) for m in messages]
            forged = await self.post(messages[0], forge=True, url=url)
            stale = await self.post(messages[1], timestamp=int(time.time()) - 3600, url=url)
            captured = await self.post(self.event(user, "VIEW"), url=url)
            _, body = self.sign_query(render_xml(messages[2]))
            replayed = await self.post_raw(captured.query, body, url=url)
            statuses += [forged.status, stale.status, replayed.status]
        return {"statuses": statuses, "message_ids": ids}

    async def _control_forge(self, request: web.Request) -> web.Response:
        return web.json_response(await self.forge(**await request.json()))


_HANDLERS = {
    "message/custom/send": FakeWeChat._custom_send,
    "message/send": FakeWeChat._app_send,
    "media/upload": FakeWeChat._upload,
    "media/get": FakeWeChat._download,
}


class ApiError(Exception):
    def __init__(self, errcode: int, errmsg: str) -> None:
        super().__init__(errmsg)
        self.errcode = errcode
        self.errmsg = errmsg


def _error(errcode: int, errmsg: str) -> web.Response:
    return web.json_response({"errcode": errcode, "errmsg": errmsg})


def render_xml(msg: dict[str, Any]) -> str:
    """A callback message as WeChat writes it: strings in CDATA, numbers bare."""
    parts = []
    for key, value in msg.items():
        inner = str(value) if isinstance(value, int) else f"<![CDATA[{value}]]>"
        parts.append(f"<{key}>{inner}</{key}>")
    return "<xml>" + "".join(parts) + "</xml>"


def _sha1(*parts: str) -> str:
    return hashlib.sha1("".join(sorted(parts)).encode("utf-8")).hexdigest()


def _encrypt(aes_key: str, text: str, receiver: str) -> str:
    """WeChat's message encryption: AES-256-CBC (IV = first 16 key bytes) over 16 random
    bytes, the big-endian length, the text and the receiver id, PKCS#7-padded to 32 bytes."""
    key = base64.b64decode(aes_key + "=")
    data = text.encode("utf-8")
    plain = os.urandom(16) + struct.pack(">I", len(data)) + data + receiver.encode()
    pad = 32 - len(plain) % 32
    plain += bytes([pad]) * pad
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(encryptor.update(plain) + encryptor.finalize()).decode()


def main() -> None:
    """Serve until stdin closes: `python wechat_server.py [--port N]` (an official account,
    plain mode, the default credentials above)."""
    serve_script(lambda args: FakeWeChat(port=args.port, control=True), tokens=False)


if __name__ == "__main__":
    main()
