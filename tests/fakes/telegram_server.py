"""A local Telegram Bot API server (aiohttp) for the real python-telegram-bot client.

It answers the methods the adapter uses the way the real API does (`{"ok": true, "result": ...}`
or `{"ok": false, "error_code": ..., "description": ..., "parameters": ...}`), keeps every chat's
messages with their current text and edit history, validates Telegram HTML, and injects faults:
429 with `retry_after`, 400 "can't parse entities", 403 "bot was blocked", slow responses.

Tests push updates (`push`, or the `message`/`edited`/`callback` builders) into the queue that
getUpdates long-polls. Run as a script (`python telegram_server.py`) it serves on loopback in
its own process, prints its port, and takes updates and reports timings on `/_fake/...` (the
gateway bench uses this so the server does not share the bot's event loop).
"""

from __future__ import annotations

import itertools
import json
import re
import time
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

from aiohttp import web

try:
    from tests.fakes._common import Call, FakePlatform, Fault, Load, serve_script
except ImportError:  # run as a script (the bench): this folder is on the path
    from _common import Call, FakePlatform, Fault, Load, serve_script  # type: ignore[no-redef]

BOT_ID = 777000111
DEFAULT_TOKEN = "777000111:TEST-fake-token-Xyz_0123456789"
MAX_TEXT = 4096
MAX_CAPTION = 1024
LEAN_KEEP = 8  # messages a chat keeps in lean mode
_INT_FIELDS = {"chat_id", "user_id", "message_id", "offset", "limit", "timeout",
               "message_thread_id",
               "reply_to_message_id", "cache_time", "max_connections"}
_JSON_FIELDS = {"reply_markup", "commands", "allowed_updates", "entities", "scope",
                "link_preview_options", "reply_parameters", "caption_entities"}
_HTML_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler",
              "a", "tg-emoji", "code", "pre", "blockquote"}


class ApiError(Exception):
    """An error answer of the Bot API."""

    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code = code
        self.description = description
        self.retry_after = retry_after

    def body(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": False, "error_code": self.code,
                               "description": self.description}
        if self.retry_after is not None:
            out["parameters"] = {"retry_after": self.retry_after}
        return out


def rate_limited(retry_after: int = 1) -> ApiError:
    return ApiError(429, f"Too Many Requests: retry after {retry_after}", retry_after)


def cant_parse(detail: str = "Unsupported start tag \"x\" at byte offset 0") -> ApiError:
    return ApiError(400, f"Bad Request: can't parse entities: {detail}")


def not_modified() -> ApiError:
    return ApiError(400, "Bad Request: message is not modified: specified new message content "
                         "and reply markup are exactly the same as a current content and reply "
                         "markup of the message")


def blocked() -> ApiError:
    return ApiError(403, "Forbidden: bot was blocked by the user")


class _TelegramHTML(HTMLParser):
    """Telegram's HTML subset: known tags, properly nested; collects text and entities."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, str, int]] = []
        self.text: list[str] = []
        self.entities: list[tuple[str, str, int, int]] = []
        self.size = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _HTML_TAGS:
            raise cant_parse(f'Unsupported start tag "{tag}"')
        href = dict(attrs).get("href") or ""
        if tag == "a" and not href:
            raise cant_parse("Can't find href attribute")
        self.stack.append((tag, href, self.size))

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1][0] != tag:
            raise cant_parse(f'Unexpected end tag "{tag}"')
        name, href, start = self.stack.pop()
        self.entities.append((name, href, start, self.size))

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        self.size += len(data)


def parse_text(text: str, parse_mode: str | None) -> tuple[str, list[tuple[str, str, int, int]]]:
    """What the user sees, and its entities (raises ApiError for HTML Telegram would refuse)."""
    if (parse_mode or "").upper() != "HTML":
        return text, []
    if re.search(r"<(?![a-zA-Z/])", text):
        raise cant_parse("Unexpected character after '<'")
    parser = _TelegramHTML()
    parser.feed(text)
    parser.close()
    if parser.stack:
        raise cant_parse(
            f'Can\'t find end tag corresponding to start tag "{parser.stack[-1][0]}"')
    return "".join(parser.text), sorted(parser.entities, key=lambda e: (e[2], -e[3]))


@dataclass
class FakeMessage:
    """A message the bot sent, as it stands now (`history` holds every version of its text)."""

    message_id: int
    chat_id: int
    kind: str  # text | photo | document
    text: str = ""
    raw: str = ""
    parse_mode: str | None = None
    entities: list[tuple[str, str, int, int]] = field(default_factory=list)
    reply_markup: dict[str, Any] | None = None
    history: list[str] = field(default_factory=list)
    data: bytes = b""
    filename: str = ""
    caption: str = ""
    sent_at: float = 0.0

    @property
    def edits(self) -> int:
        return len(self.history) - 1


class FakeTelegram(FakePlatform):
    """The server. `async with FakeTelegram() as tg:` then point the SDK at `tg.base_url`."""

    def __init__(self, *, token: str = DEFAULT_TOKEN, more_tokens: tuple[str, ...] = (),
                 username: str = "bullpen_test_bot", host: str = "127.0.0.1", port: int = 0,
                 control: bool = False, lean: bool = False) -> None:
        super().__init__(host=host, port=port, control=control)
        # lean (the soak: hours of messages): no call is recorded and a chat keeps only its
        # last LEAN_KEEP messages, so the fake's own memory stays flat
        self.lean = lean
        self.token = token
        self.tokens = {token, *more_tokens}  # bots on this server: one update queue each
        self.username = username
        self.calls: list[Call] = []  # not getUpdates
        # getUpdates calls heard: a bot process that polls has started (a test's event for
        # "up", where a bound on its first answer would also have to cover its start-up)
        self.polls = 0
        self.chats: dict[int, dict[int, FakeMessage]] = {}
        self.faults: list[Fault] = []
        self.blocked: set[int] = set()
        self.files: dict[str, tuple[str, bytes]] = {}
        self.lost: set[str] = set()  # file paths whose download 404s
        self.commands: list[dict[str, str]] = []  # the default menu
        self.localized_commands: dict[str, list[dict[str, str]]] = {}  # by language_code
        self.answered: list[dict[str, Any]] = []
        self.webhook: dict[str, Any] = {}
        self.admins: dict[int, dict[int, str]] = {}  # chat -> user -> creator|administrator
        self._queues: dict[str, list[dict[str, Any]]] = {t: [] for t in self.tokens}
        self._offset = 0
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._file_ids = itertools.count(1)
        self._closing = False

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        return f"http://{self.host}:{self.port}/file/bot"

    async def __aenter__(self) -> FakeTelegram:
        app = web.Application(client_max_size=60 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._api)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        await self._listen(app)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closing = True  # release long polls so shutdown is quick
        self._notify()
        await self._stop_listening()

    # --- test controls ---------------------------------------------------------------------

    # fail(method, ApiError, times=, when=), delay(method, seconds, when=): as on every fake

    def block(self, chat_id: int) -> None:
        """The user blocked the bot: every send to the chat gets 403."""
        self.blocked.add(chat_id)

    def make_admin(self, chat_id: int, user_id: int, status: str = "administrator") -> None:
        """getChatMember answers `status` (creator or administrator) for the user in the chat;
        everyone else is a plain member."""
        assert status in ("creator", "administrator")
        self.admins.setdefault(chat_id, {})[user_id] = status

    def add_file(self, data: bytes, path: str) -> str:
        file_id = f"FILE{next(self._file_ids)}"
        self.files[file_id] = (path, data)
        return file_id

    def lose(self, file_id: str) -> None:
        """The file expired on the server: getFile still answers, the download 404s."""
        self.lost.add(self.files[file_id][0])

    def push(self, update: dict[str, Any], *, token: str | None = None) -> dict[str, Any]:
        """Queue an update for getUpdates (an `update_id` is assigned when missing)."""
        update.setdefault("update_id", next(self._update_ids))
        self._queues[token or self.token].append(update)
        self._notify()
        return update

    def message(self, chat_id: int, text: str = "", *, user_id: int | None = None,
                chat_type: str = "private", reply_to: int | None = None,
                entities: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
        """A user's message update; a leading /command gets its `bot_command` entity."""
        uid = user_id if user_id is not None else chat_id
        chat: dict[str, Any] = {"id": chat_id, "type": chat_type}
        if chat_type == "private":
            chat["first_name"] = f"User{uid}"
        else:
            chat["title"] = f"Group {chat_id}"
        msg: dict[str, Any] = {
            "message_id": next(self._message_ids), "date": int(time.time()), "chat": chat,
            "from": {"id": uid, "is_bot": False, "first_name": f"User{uid}",
                     "username": f"user{uid}", "language_code": "en"},
            **extra,
        }
        if text:
            msg["text"] = text
            ents = list(entities or [])
            m = re.match(r"/\w+(@\w+)?", text)
            if m and not any(e["type"] == "bot_command" for e in ents):
                ents.insert(0, {"type": "bot_command", "offset": 0, "length": m.end()})
            if ents:
                msg["entities"] = ents
        if reply_to is not None:
            original = self.find(chat_id, reply_to)
            msg["reply_to_message"] = {
                "message_id": reply_to, "date": int(time.time()), "chat": chat,
                "from": self._me() if original is not None else msg["from"],
                "text": original.text if original is not None else "",
            }
        return {"message": msg}

    def edited(self, update: dict[str, Any], text: str) -> dict[str, Any]:
        msg = dict(update["message"], text=text, edit_date=int(time.time()) + 1)
        return {"edited_message": msg}

    def callback(self, chat_id: int, message_id: int, data: str,
                 *, user_id: int | None = None) -> dict[str, Any]:
        uid = user_id if user_id is not None else chat_id
        original = self.find(chat_id, message_id)
        return {"callback_query": {
            "id": f"cbq{next(self._file_ids)}", "chat_instance": f"ci{chat_id}", "data": data,
            "from": {"id": uid, "is_bot": False, "first_name": f"User{uid}"},
            "message": {"message_id": message_id, "date": int(time.time()),
                        "chat": {"id": chat_id, "type": "private", "first_name": f"User{uid}"},
                        "from": self._me(), "text": original.text if original else ""},
        }}

    # --- state -----------------------------------------------------------------------------

    def bot_messages(self, chat_id: int) -> list[FakeMessage]:
        return sorted(self.chats.get(chat_id, {}).values(), key=lambda m: m.message_id)

    def texts(self, chat_id: int) -> list[str]:
        """The current visible text of every text message the bot sent to `chat_id`."""
        return [m.text for m in self.bot_messages(chat_id) if m.kind == "text"]

    def find(self, chat_id: int, message_id: int) -> FakeMessage | None:
        return self.chats.get(chat_id, {}).get(message_id)

    def calls_of(self, method: str, chat_id: int | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method
                and (chat_id is None or c.params.get("chat_id") == chat_id)]

    # wait_for(predicate), settle(quiet_s) (getUpdates is not recorded): as on every fake

    def _me(self) -> dict[str, Any]:
        return {"id": BOT_ID, "is_bot": True, "first_name": "Bullpen", "username": self.username}

    # --- HTTP ------------------------------------------------------------------------------

    async def _params(self, request: web.Request) -> tuple[dict[str, Any], dict[str, Any]]:
        params: dict[str, Any] = dict(request.query)
        files: dict[str, Any] = {}
        ctype = request.content_type
        if ctype == "application/json":
            params.update(await request.json())
        elif ctype == "multipart/form-data":
            reader = await request.multipart()
            async for part in reader:
                name = part.name or ""  # type: ignore[union-attr]
                if part.filename:  # type: ignore[union-attr]
                    files[name] = (part.filename, await part.read())  # type: ignore[union-attr]
                else:
                    params[name] = await part.text()  # type: ignore[union-attr]
        elif request.can_read_body:
            params.update(await request.post())
        for key, value in list(params.items()):
            if not isinstance(value, str):
                continue
            if key in _INT_FIELDS:
                try:
                    params[key] = int(value)
                except ValueError:
                    pass
            elif key in _JSON_FIELDS:
                params[key] = json.loads(value)
            elif value.startswith("attach://"):
                files[key] = files.get(value[len("attach://"):])
        return params, files

    async def _api(self, request: web.Request) -> web.Response:
        if request.match_info["token"] not in self.tokens:
            return web.json_response({"ok": False, "error_code": 401,
                                      "description": "Unauthorized"}, status=401)
        method = request.match_info["method"]
        handler = getattr(self, f"_m_{method}", None)
        if handler is None:
            return web.json_response({"ok": False, "error_code": 404,
                                      "description": "Not Found"}, status=404)
        params, files = await self._params(request)
        params["__token__"] = request.match_info["token"]
        call = Call(method, params, time.monotonic())
        if method != "getUpdates" and not self.lean:
            self.calls.append(call)
        await self._delay(method, params)
        try:
            self._inject(method, params)
            result = await handler(params, files)
        except ApiError as exc:
            return web.json_response(exc.body(), status=exc.code)
        finally:
            if method != "getUpdates":
                call.t = time.monotonic()
                self._notify()
        return web.json_response({"ok": True, "result": result})

    def _inject(self, method: str, params: dict[str, Any]) -> None:
        self._raise_fault(method, params)
        chat_id = params.get("chat_id")
        if chat_id in self.blocked and method not in ("getChat", "answerCallbackQuery"):
            raise blocked()

    async def _download(self, request: web.Request) -> web.Response:
        if request.match_info["token"] not in self.tokens:
            return web.Response(status=401, text="Unauthorized")
        path = request.match_info["path"]
        for stored_path, data in self.files.values():
            if stored_path == path and path not in self.lost:
                return web.Response(body=data, content_type="application/octet-stream")
        return web.json_response({"ok": False, "error_code": 404, "description": "Not Found"},
                                 status=404)

    # --- methods ---------------------------------------------------------------------------

    async def _m_getMe(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        return {**self._me(), "can_join_groups": True, "can_read_all_group_messages": False,
                "supports_inline_queries": False}

    def pending_updates(self, token: str | None = None) -> int:
        """Updates not confirmed yet (getUpdates confirms those before its `offset`)."""
        return len(self._queues[token or self.token])

    def confirmed_offset(self) -> int:
        """The highest `offset` getUpdates was called with."""
        return self._offset

    async def _m_getUpdates(self, p: dict[str, Any], f: dict[str, Any]) -> list[dict[str, Any]]:
        self.polls += 1
        queue = self._queues[p["__token__"]]
        offset = int(p.get("offset") or 0)
        self._offset = max(self._offset, offset)
        if offset:
            queue[:] = [u for u in queue if u["update_id"] >= offset]
        limit = int(p.get("limit") or 100)
        timeout = float(p.get("timeout") or 0)
        if not queue and timeout > 0:
            try:
                await self.wait_for(lambda: bool(queue) or self._closing, timeout)
            except TimeoutError:
                pass
        return queue[:limit]

    async def _m_setWebhook(self, p: dict[str, Any], f: dict[str, Any]) -> bool:
        self.webhook = {"url": p.get("url", ""), "secret_token": p.get("secret_token"),
                        "allowed_updates": p.get("allowed_updates")}
        return True

    async def _m_deleteWebhook(self, p: dict[str, Any], f: dict[str, Any]) -> bool:
        self.webhook = {}
        if str(p.get("drop_pending_updates", "")).lower() == "true":
            self._queues[p["__token__"]].clear()
        return True

    async def _m_getWebhookInfo(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        return {"url": self.webhook.get("url", ""), "has_custom_certificate": False,
                "pending_update_count": len(self._queues[p["__token__"]])}

    async def _m_setMyCommands(self, p: dict[str, Any], f: dict[str, Any]) -> bool:
        commands = p.get("commands") or []
        for c in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", c.get("command", "")) or not (
                    1 <= len(c.get("description", "")) <= 256):
                raise ApiError(400, "Bad Request: BOT_COMMAND_INVALID")
        if p.get("language_code"):
            self.localized_commands[str(p["language_code"])] = commands
        else:
            self.commands = commands
        return True

    async def _m_sendChatAction(self, p: dict[str, Any], f: dict[str, Any]) -> bool:
        self._chat_id(p)
        return True

    async def _m_answerCallbackQuery(self, p: dict[str, Any], f: dict[str, Any]) -> bool:
        self.answered.append(p)
        return True

    def _chat_id(self, p: dict[str, Any]) -> int:
        chat_id = p.get("chat_id")
        if not isinstance(chat_id, int):
            raise ApiError(400, "Bad Request: chat not found")
        return chat_id

    def _result(self, m: FakeMessage) -> dict[str, Any]:
        chat_type = "private" if m.chat_id > 0 else "supergroup"
        out: dict[str, Any] = {"message_id": m.message_id, "date": int(time.time()),
                               "chat": {"id": m.chat_id, "type": chat_type},
                               "from": self._me()}
        if m.kind == "text":
            out["text"] = m.text
        elif m.kind == "photo":
            out["photo"] = [{"file_id": f"PHOTO{m.message_id}",
                             "file_unique_id": f"u{m.message_id}", "width": 1000, "height": 600,
                             "file_size": len(m.data)}]
        else:
            out["document"] = {"file_id": f"DOC{m.message_id}",
                               "file_unique_id": f"d{m.message_id}", "file_name": m.filename,
                               "file_size": len(m.data)}
        if m.caption:
            out["caption"] = m.caption
        if m.reply_markup:
            out["reply_markup"] = m.reply_markup
        return out

    def _store(self, m: FakeMessage) -> dict[str, Any]:
        chat = self.chats.setdefault(m.chat_id, {})
        chat[m.message_id] = m
        if self.lean and len(chat) > LEAN_KEEP:
            del chat[next(iter(chat))]  # the oldest (ids only grow)
        return self._result(m)

    def _text(self, p: dict[str, Any]) -> tuple[str, list[tuple[str, str, int, int]]]:
        shown, entities = parse_text(str(p.get("text", "")), p.get("parse_mode"))
        if not shown.strip():
            raise ApiError(400, "Bad Request: message text is empty")
        if len(shown) > MAX_TEXT:
            raise ApiError(400, "Bad Request: message is too long")
        return shown, entities

    async def _m_sendMessage(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        chat_id = self._chat_id(p)
        shown, entities = self._text(p)
        m = FakeMessage(next(self._message_ids), chat_id, "text", text=shown,
                        raw=str(p["text"]), parse_mode=p.get("parse_mode"), entities=entities,
                        reply_markup=p.get("reply_markup"), history=[shown],
                        sent_at=time.monotonic())
        self._shown(chat_id, shown, edit=False)
        return self._store(m)

    async def _m_editMessageText(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        chat_id = self._chat_id(p)
        m = self.find(chat_id, int(p.get("message_id", 0)))
        if m is None or m.kind != "text":
            raise ApiError(400, "Bad Request: message to edit not found")
        shown, entities = self._text(p)
        markup = p.get("reply_markup")
        if (shown, entities, markup) == (m.text, m.entities, m.reply_markup):
            raise not_modified()
        m.text, m.raw, m.parse_mode = shown, str(p["text"]), p.get("parse_mode")
        m.entities, m.reply_markup = entities, markup
        m.history.append(shown)
        self._shown(chat_id, shown, edit=True)
        return self._result(m)

    async def _send_file(self, p: dict[str, Any], f: dict[str, Any], kind: str) -> dict[str, Any]:
        chat_id = self._chat_id(p)
        upload = f.get(kind)
        if upload is None:
            raise ApiError(400, f"Bad Request: there is no {kind} in the request")
        caption, _ = parse_text(str(p.get("caption", "")), p.get("parse_mode"))
        if len(caption) > MAX_CAPTION:
            raise ApiError(400, "Bad Request: message caption is too long")
        filename, data = upload
        m = FakeMessage(next(self._message_ids), chat_id, "photo" if kind == "photo" else
                        "document", data=data, filename=filename, caption=caption,
                        sent_at=time.monotonic())
        return self._store(m)

    async def _m_sendPhoto(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        return await self._send_file(p, f, "photo")

    async def _m_sendDocument(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        return await self._send_file(p, f, "document")

    async def _m_getChatMember(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        chat_id = self._chat_id(p)
        user_id = p.get("user_id")
        if not isinstance(user_id, int):
            raise ApiError(400, "Bad Request: invalid user_id specified")
        user = {"id": user_id, "is_bot": False, "first_name": f"User{user_id}"}
        status = self.admins.get(chat_id, {}).get(user_id, "member")
        if status == "creator":
            return {"status": "creator", "user": user, "is_anonymous": False}
        if status == "administrator":
            rights = dict.fromkeys((
                "can_manage_chat", "can_delete_messages", "can_manage_video_chats",
                "can_restrict_members", "can_change_info", "can_invite_users",
                "can_post_stories", "can_edit_stories", "can_delete_stories",
                "can_pin_messages"), True)
            return {"status": "administrator", "user": user, "can_be_edited": False,
                    "is_anonymous": False, "can_promote_members": False, **rights}
        return {"status": "member", "user": user}

    async def _m_getFile(self, p: dict[str, Any], f: dict[str, Any]) -> dict[str, Any]:
        file_id = str(p.get("file_id", ""))
        if file_id not in self.files:
            raise ApiError(400, "Bad Request: invalid file_id")
        path, data = self.files[file_id]
        if len(data) > 20 * 1024 * 1024:
            raise ApiError(400, "Bad Request: file is too big")
        return {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_size": len(data),
                "file_path": path}

    # --- load for the gateway bench (script mode) -------------------------------------------

    def _question(self, load: Load, chat: int, row: dict[str, Any]) -> None:
        """Queue the user's message for getUpdates of the bot whose token is `load.to`."""
        self.push(self.message(chat, self.question_text(load)), token=load.to)


def main() -> None:
    """Serve until stdin closes: `python telegram_server.py [--port N] [--token T ...]
    [--lean 1]` (lean: the soak's fake, see `FakeTelegram`)."""
    serve_script(lambda args: FakeTelegram(
        port=args.port, token=(args.token or [DEFAULT_TOKEN])[0],
        more_tokens=tuple(args.token[1:]), control=True, lean=args.lean == "1"), lean="0")


if __name__ == "__main__":
    main()
