"""The web platform, translated: a chat page served by aiohttp. What the person types becomes an
`IncomingMessage` (platform "web", chat ``web:<user id>``); the renderer's sends, edits and
files, and the run's typed events (`EventObserver`), go to the person's open pages as
server-sent events. Everything beyond the live chat (sign-in, the person's conversations and
files, share links, the admin console) is asked of a `WebDirectory`.

Security: sessions are HttpOnly cookies (SameSite=Lax, Secure on https); every POST needs the
session's CSRF token in ``X-CSRF-Token`` (403 otherwise, nothing done); every response carries a
Content-Security-Policy without inline script, ``nosniff`` and ``Referrer-Policy: no-referrer``;
text reaches the page as HTML only through `render` (raw HTML escaped); someone else's
conversation or file, an unknown share token, and the admin routes for anyone but an admin are
all the same 404.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import logging
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from datetime import datetime
from importlib import resources
from typing import Any, NoReturn
from urllib.parse import quote, urlsplit

from aiohttp import web

from adapters.http_listen import listen
from adapters.lanes import Lanes, drain
from adapters.web import pages
from adapters.web.live import Hub, Hubs, iso
from adapters.web.page_words import words_js
from adapters.web.render import (
    INLINE_IMAGES,
    content_disposition,
    markdown_html,
    plain_html,
    reply_html,
)
from core.errors import ConsoleOff, MessageNotModified, PlatformError, QueryRefused
from core.events import Event, TextDelta, Thinking
from core.ports import (
    MessageHandler,
    WebConversationInfo,
    WebDashboard,
    WebDirectory,
    WebFileData,
    WebFileInfo,
    WebPerson,
    WebSession,
    WebTable,
    WebTranscript,
)
from core.types import (
    Capabilities,
    ChatRef,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    Reply,
    Sender,
    utcnow,
)
from core.words import norm

log = logging.getLogger(__name__)

PLATFORM = "web"
COOKIE = "bullpen_session"
MAX_TEXT = 8000  # characters in one message typed on the page
MAX_SQL = 20_000
MAX_SEARCH = 200  # characters of a conversation search
MAX_TITLE = 120  # characters of a conversation's name
DASHBOARD_DAYS = 14
ADMIN_PAGE_SIZE = 50
KEEPALIVE_S = 15.0
_TOKEN = re.compile(r"^[A-Za-z0-9_\-]{8,200}$")
_ID = re.compile(r"^[A-Za-z0-9_\-.:]{1,200}$")
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
       "form-action 'self'")
FILE_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"
STATIC = {"app.js": "text/javascript", "style.css": "text/css", "admin.js": "text/javascript",
          "index.html": "text/html", "admin.html": "text/html"}
WORDS_JS = "words.js"  # built from the catalogue (`page_words`), not a file
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def chat_id_of(person: WebPerson) -> str:
    return f"web:{person.user_id}"


_HTTP: dict[int, type[web.HTTPException]] = {
    400: web.HTTPBadRequest, 401: web.HTTPUnauthorized, 403: web.HTTPForbidden,
    404: web.HTTPNotFound, 409: web.HTTPConflict, 503: web.HTTPServiceUnavailable,
}


def _fail(status: int, message: str) -> NoReturn:
    """An error answer with a JSON body saying what was wrong."""
    if status == 413:
        raise web.HTTPRequestEntityTooLarge(0, 0, text=json.dumps({"error": message}),
                                            content_type="application/json")
    raise _HTTP[status](text=json.dumps({"error": message}, ensure_ascii=False),
                        content_type="application/json")


def _when(at: datetime | None) -> str | None:
    return iso(at) if at is not None else None


def _conversation(c: WebConversationInfo) -> dict[str, Any]:
    out = asdict(c)
    out["updated_at"] = _when(c.updated_at)
    return out


def _file(f: WebFileInfo, url: str) -> dict[str, Any]:
    out = asdict(f)
    out["created_at"] = _when(f.created_at)
    out["url"] = url
    return out


def _dashboard(d: WebDashboard) -> dict[str, Any]:
    out = asdict(d)
    out["last_call_at"] = _when(d.last_call_at)
    out["failures"] = [{**asdict(f), "at": _when(f.at)} for f in d.failures]
    return out


def _table(t: WebTable) -> dict[str, Any]:
    return {"columns": list(t.columns), "rows": [list(r) for r in t.rows], "total": t.total,
            "truncated": t.truncated, "note": t.note}


def _console_off(exc: ConsoleOff) -> web.Response:
    """503: the console cannot log in as its own role, and has no other (the reason shown)."""
    return web.json_response({"error": str(exc), "console_off": True}, status=503)


def _event_json(event: Event) -> dict[str, Any]:
    """A typed event for the page: never a file's bytes or its path on the server."""
    if event.type == "file":
        return {"type": "file", "file": event.file.model_dump(mode="json", exclude={"data"})}
    return event.model_dump(mode="json")


class WebAdapter:
    """The chat page, share pages and admin console behind `core.ports.Adapter`."""

    name = PLATFORM

    def __init__(self, *, directory: WebDirectory, listen: str = "127.0.0.1", port: int = 8080,
                 base_url: str = "", min_edit_interval_s: float = 0.2,
                 max_body_bytes: int = 256 * 1024) -> None:
        self._directory = directory
        self._listen = listen
        self._port = port
        self.base_url = base_url.rstrip("/")
        self._secure = urlsplit(self.base_url).scheme == "https"
        self._max_body = max_body_bytes
        self.capabilities = Capabilities(
            max_message_length=16_000, can_edit=True, min_edit_interval_s=min_edit_interval_s,
            supports_images=True, supports_documents=True, supports_voice=False,
            supports_buttons=False, markup="rich")  # "rich": Markdown as it is
        self._hubs = Hubs()
        self._ids = itertools.count(1)
        self._static = {name: (resources.files("adapters.web") / "static" / name).read_bytes()
                        for name in STATIC}
        self._static[WORDS_JS] = words_js().encode()
        self._etags = {name: f'"{hashlib.sha256(data).hexdigest()[:16]}"'
                       for name, data in self._static.items()}
        self._on_message: MessageHandler | None = None
        self._runner: web.AppRunner | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._chat_locks = Lanes()
        self._closing = False
        self.port: int | None = None  # the bound port once started

    # --- lifecycle -------------------------------------------------------------------------

    async def start(self, on_message: MessageHandler) -> None:
        self._on_message = on_message
        self._closing = False
        server = web.Application(client_max_size=self._max_body,
                                 middlewares=[self._errors])
        server.on_response_prepare.append(self._headers)
        self._routes(server.router)
        self._runner, self.port = await listen(server, host=self._listen, port=self._port,
                                               what="web", shutdown_timeout=2.0)
        parts = urlsplit(self.base_url)
        if not self.base_url:  # links to this machine: any-address listens are reached locally
            host = "127.0.0.1" if self._listen in ("", "0.0.0.0", "::") else self._listen
            self.base_url = f"http://{host}:{self.port}"
        elif parts.port == 0:  # "any free port" in the links too: the one bound
            self.base_url = parts._replace(
                netloc=f"{parts.hostname}:{self.port}").geturl().rstrip("/")
        log.info("web platform on %s", self.base_url)

    async def aclose(self) -> None:
        """End the open event streams, stop serving, let the messages in hand reach the
        gateway (5 s at most)."""
        self._closing = True
        self._hubs.close_all()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        await drain(self._tasks, timeout_s=5.0)

    def _routes(self, r: web.UrlDispatcher) -> None:
        r.add_get("/", self._index)
        r.add_get("/favicon.ico", self._no_icon)
        r.add_get("/static/{name}", self._static_file)
        r.add_get("/login/{token}", self._login_page)
        r.add_post("/login/{token}", self._login)
        r.add_post("/logout", self._logout)
        r.add_get("/api/me", self._me)
        r.add_get("/api/chat", self._chat)
        r.add_get("/api/conversations", self._conversations)
        r.add_get("/api/conversations/{id}", self._transcript)
        r.add_post("/api/conversations/{id}/rename", self._rename)
        r.add_post("/api/conversations/{id}/delete", self._delete)
        r.add_post("/api/new", self._new_chat)
        r.add_get("/api/welcome", self._welcome)
        r.add_get("/api/files", self._files)
        r.add_get("/files/{id}", self._download)
        r.add_get("/live/{key}", self._live_file)
        r.add_post("/api/messages", self._message)
        r.add_post("/api/stop", self._stop)
        r.add_get("/api/events", self._events)
        r.add_post("/api/share", self._share)
        r.add_post("/api/unshare", self._unshare)
        r.add_get("/s/{token}", self._shared)
        r.add_get("/s/{token}/files/{id}", self._shared_file)
        r.add_get("/admin", self._admin_page)
        r.add_get("/api/admin/status", self._admin_status)
        r.add_get("/api/admin/dashboard", self._admin_dashboard)
        r.add_get("/api/admin/tables", self._admin_tables)
        r.add_get("/api/admin/tables/{name}", self._admin_rows)
        r.add_post("/api/admin/query", self._admin_query)

    # --- every response --------------------------------------------------------------------

    @web.middleware
    async def _errors(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except web.HTTPException:
            raise
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception:  # the directory failed (the database is away): said, not hidden
            log.exception("web: %s %s failed", request.method, request.path)
            _fail(503, "Bullpen could not answer this just now; try again in a moment.")

    async def _headers(self, request: web.Request, response: web.StreamResponse) -> None:
        h = response.headers
        h.setdefault("Content-Security-Policy", CSP)
        h["X-Content-Type-Options"] = "nosniff"
        h["Referrer-Policy"] = "no-referrer"
        h["X-Frame-Options"] = "DENY"
        h.setdefault("Cache-Control", "no-store")
        if request.path.startswith("/s/"):
            h["X-Robots-Tag"] = "noindex, nofollow"

    # --- sessions --------------------------------------------------------------------------

    async def _session(self, request: web.Request) -> WebSession | None:
        token = request.cookies.get(COOKIE, "")
        if not _TOKEN.match(token):
            return None
        return await self._directory.session(token)

    async def _reader(self, request: web.Request) -> WebSession:
        session = await self._session(request)
        if session is None:
            _fail(401, "Sign in first: send /web to the bot for a sign-in link.")
        return session

    async def _writer(self, request: web.Request) -> WebSession:
        """The session of a POST, which must carry its CSRF token (403 otherwise)."""
        return await self._csrf(request, await self._reader(request))

    @staticmethod
    async def _csrf(request: web.Request, session: WebSession) -> WebSession:
        sent = request.headers.get("X-CSRF-Token", "")
        if not sent and request.content_type == "application/x-www-form-urlencoded":
            form = await request.post()
            field = form.get("csrf")
            sent = field if isinstance(field, str) else ""
        if not sent or not hmac.compare_digest(sent.encode(), session.csrf.encode()):
            _fail(403, "Missing or wrong CSRF token: reload the page and try again.")
        return session

    async def _admin(self, request: web.Request) -> WebSession:
        """An admin's session; anyone else gets the same 404 as a path that does not exist."""
        session = await self._session(request)
        if session is None or not session.person.is_admin:
            raise web.HTTPNotFound()
        return session

    async def _json(self, request: web.Request) -> dict[str, Any]:
        if request.content_type != "application/json":
            _fail(400, "Send a JSON object with Content-Type: application/json.")
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            _fail(413, f"The request is too large (limit {self._max_body} bytes).")
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError) as exc:
            _fail(400, f"The body is not valid JSON: {exc}.")
        except RecursionError:  # the parser's own limit: the client's mistake, not an outage
            _fail(400, "The body is not valid JSON here: it is nested too deeply.")
        if not isinstance(data, dict):
            _fail(400, "The body must be a JSON object.")
        return data

    # --- pages -----------------------------------------------------------------------------

    def _static_response(self, request: web.Request, name: str) -> web.Response:
        etag = self._etags[name]
        headers = {"Cache-Control": "no-cache", "ETag": etag}
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers=headers)
        return web.Response(body=self._static[name], headers=headers,
                            content_type=STATIC.get(name, "text/javascript"), charset="utf-8")

    async def _index(self, request: web.Request) -> web.StreamResponse:
        if await self._session(request) is None:
            return web.Response(text=pages.signin_hint(), content_type="text/html")
        return self._static_response(request, "index.html")

    async def _no_icon(self, request: web.Request) -> web.StreamResponse:
        return web.Response(status=204)

    async def _static_file(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in self._static or name.endswith(".html"):
            raise web.HTTPNotFound()
        return self._static_response(request, name)

    async def _login_page(self, request: web.Request) -> web.StreamResponse:
        token = request.match_info["token"]
        if not _TOKEN.match(token):
            return web.Response(status=404, text=pages.login_failed(), content_type="text/html")
        return web.Response(text=pages.login_confirm(token), content_type="text/html")

    async def _login(self, request: web.Request) -> web.StreamResponse:
        """Redeem a one-time link (from its confirmation page: an Origin from elsewhere is
        refused, so another site cannot sign a visitor in as someone else)."""
        site = request.headers.get("Sec-Fetch-Site")
        origin = request.headers.get("Origin")
        # with `Referrer-Policy: no-referrer` a browser's form sends `Origin: null`: its
        # Sec-Fetch-Site says where the form was
        if site is not None:
            refused = site not in ("same-origin", "none")
        else:
            refused = origin not in (None, "null") and urlsplit(origin).netloc != request.host
        if refused:
            _fail(403, "Sign in from the link's own page.")
        token = request.match_info["token"]
        session = await self._directory.redeem_login(token) if _TOKEN.match(token) else None
        if session is None:
            return web.Response(status=404, text=pages.login_failed(), content_type="text/html")
        response = web.Response(status=303, headers={"Location": "/"})
        max_age = max(60, int((session.expires_at - utcnow()).total_seconds()))
        response.set_cookie(COOKIE, session.token, max_age=max_age, path="/", httponly=True,
                            samesite="Lax", secure=self._secure)
        return response

    async def _logout(self, request: web.Request) -> web.StreamResponse:
        session = await self._writer(request)
        await self._directory.end_session(session.token)
        response: web.StreamResponse
        if request.content_type == "application/x-www-form-urlencoded":
            response = web.Response(status=303, headers={"Location": "/"})
        else:
            response = web.json_response({"ok": True})
        response.del_cookie(COOKIE, path="/")
        return response

    # --- the person's data -----------------------------------------------------------------

    async def _me(self, request: web.Request) -> web.StreamResponse:
        session = await self._reader(request)
        p = session.person
        return web.json_response({"user_id": p.user_id, "display_name": p.display_name,
                                  "lang": p.lang, "is_admin": p.is_admin, "csrf": session.csrf,
                                  "base_url": self.base_url})

    def _entries(self, transcript: WebTranscript,
                 file_url: Callable[[str], str]) -> dict[str, Any]:
        entries = []
        for e in transcript.entries:
            entry: dict[str, Any] = {"role": e.role, "text": e.text, "at": _when(e.at)}
            if e.role == "assistant":
                entry["html"] = markdown_html(e.text)
            elif e.role == "user":
                entry["html"] = f"<p class=plain>{plain_html(e.text)}</p>"
            if e.file is not None:
                entry["file"] = _file(e.file, file_url(e.file.id))
            entries.append(entry)
        return {"conversation": _conversation(transcript.conversation), "entries": entries}

    @staticmethod
    def _own_file_url(file_id: str) -> str:
        return f"/files/{quote(file_id, safe='')}"

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        """The person's active web conversation, to draw the page with."""
        session = await self._reader(request)
        transcript = await self._directory.web_transcript(session.person)
        if transcript is None:
            return web.json_response({"conversation": None, "entries": []})
        return web.json_response(self._entries(transcript, self._own_file_url))

    async def _conversations(self, request: web.Request) -> web.StreamResponse:
        """The person's conversations, or with `q` those whose title or messages have it."""
        session = await self._reader(request)
        text = request.query.get("q", "").strip()
        if len(text) > MAX_SEARCH:
            _fail(400, f"The search is too long (limit {MAX_SEARCH} characters).")
        found = (await self._directory.search(session.person, text) if text
                 else await self._directory.conversations(session.person))
        return web.json_response({"conversations": [_conversation(c) for c in found]})

    def _conversation_path_id(self, request: web.Request) -> str:
        conv_id = request.match_info["id"]
        if not _ID.match(conv_id):
            _fail(404, "No such conversation.")
        return conv_id

    async def _rename(self, request: web.Request) -> web.StreamResponse:
        session = await self._writer(request)
        conv_id = self._conversation_path_id(request)
        title = (await self._json(request)).get("title")
        if not isinstance(title, str) or not title.strip():
            _fail(400, "Write the new name in \"title\".")
        if len(title.strip()) > MAX_TITLE:
            _fail(400, f"The name is too long (limit {MAX_TITLE} characters).")
        renamed = await self._directory.rename(session.person, conv_id, title)
        if renamed is None:
            _fail(404, "No such conversation.")
        return web.json_response({"conversation": _conversation(renamed)})

    async def _delete(self, request: web.Request) -> web.StreamResponse:
        """Delete one of the person's conversations; their live web chat's only while no answer
        is being written into it (409: stop it first), and then the page starts afresh."""
        session = await self._writer(request)
        conv_id = self._conversation_path_id(request)
        hub = self._hubs.get(chat_id_of(session.person))
        if hub.running:
            live = await self._directory.web_transcript(session.person)
            if live is not None and live.conversation.id == conv_id:
                _fail(409, "An answer is still being written here: stop it first.")
        deleted = await self._directory.delete(session.person, conv_id)
        if deleted is None:
            _fail(404, "No such conversation.")
        if deleted.writable:
            hub.turn_page()
            hub.publish({"type": "cleared", "conversation_id": deleted.id})
        return web.json_response({"deleted": deleted.id})

    async def _new_chat(self, request: web.Request) -> web.StreamResponse:
        """The New-chat button: /new in the person's web chat, as if typed; the person's open
        pages start afresh."""
        session = await self._writer(request)
        response = self._hand_on(session.person, "/new", None, shown=False)
        self._hubs.get(chat_id_of(session.person)).publish({"type": "cleared"})
        return response

    async def _welcome(self, request: web.Request) -> web.StreamResponse:
        """What the empty chat shows besides its suggested questions: the data's coverage."""
        await self._reader(request)
        lang = request.query.get("lang", "en")
        return web.json_response({"coverage_html": markdown_html(
            await self._directory.coverage(norm(lang)))})

    async def _transcript(self, request: web.Request) -> web.StreamResponse:
        session = await self._reader(request)
        conv_id = request.match_info["id"]
        transcript = (await self._directory.transcript(session.person, conv_id)
                      if _ID.match(conv_id) else None)
        if transcript is None:
            _fail(404, "No such conversation.")
        return web.json_response(self._entries(transcript, self._own_file_url))

    async def _files(self, request: web.Request) -> web.StreamResponse:
        session = await self._reader(request)
        found = await self._directory.files(session.person)
        return web.json_response({"files": [_file(f, self._own_file_url(f.id)) for f in found]})

    @staticmethod
    def _file_response(filename: str, kind: str, mime: str, data: bytes) -> web.Response:
        """Images the page shows inline; everything else a download with a safe name."""
        inline = kind == "image" and mime in INLINE_IMAGES
        content_type = mime if inline or mime == "application/pdf" else "application/octet-stream"
        return web.Response(body=data, content_type=content_type, headers={
            "Content-Disposition": content_disposition(filename, inline=inline),
            "Content-Security-Policy": FILE_CSP, "Cache-Control": "private, max-age=300"})

    def _data_response(self, found: WebFileData | None) -> web.Response:
        if found is None:
            _fail(404, "No such file.")
        return self._file_response(found.info.filename, found.info.kind, found.info.mime_type,
                                   found.data)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        session = await self._reader(request)
        file_id = request.match_info["id"]
        found = (await self._directory.file(session.person, file_id)
                 if _ID.match(file_id) else None)
        return self._data_response(found)

    async def _live_file(self, request: web.Request) -> web.StreamResponse:
        """A file sent to the person's page in this process (before the page reloads from the
        stored files)."""
        session = await self._reader(request)
        hub = self._hubs.peek(chat_id_of(session.person))
        live = hub.files.get(request.match_info["key"]) if hub is not None else None
        if live is None:
            _fail(404, "No such file.")
        f = live.file
        return self._file_response(f.filename, f.kind, f.mime_type, f.data)

    # --- writing ---------------------------------------------------------------------------

    async def _message(self, request: web.Request) -> web.StreamResponse:
        session = await self._writer(request)
        body = await self._json(request)
        text = body.get("text")
        if not isinstance(text, str) or not text.strip():
            _fail(400, "Nothing to send: write a question or a /command in \"text\".")
        if len(text) > MAX_TEXT:
            _fail(400, f"The message is too long ({len(text)} characters; the limit is "
                       f"{MAX_TEXT}).")
        client_id = body.get("client_id")
        if client_id is not None and not (isinstance(client_id, str) and _ID.match(client_id)):
            _fail(400, "\"client_id\" must be up to 200 letters, digits, '-', '_', '.' or ':'.")
        return self._hand_on(session.person, text.strip(), client_id)

    async def _stop(self, request: web.Request) -> web.StreamResponse:
        session = await self._writer(request)
        return self._hand_on(session.person, "/stop", None)

    def _hand_on(self, person: WebPerson, text: str, client_id: str | None, *,
                 shown: bool = True) -> web.Response:
        """Hand `text` to the gateway as the person's message in their web chat; with `shown`
        False (a button's command, not something they typed) the page does not show it."""
        if self._closing or self._on_message is None:
            _fail(503, "Bullpen is shutting down; try again in a moment.")
        chat = ChatRef(platform=PLATFORM, chat_id=chat_id_of(person))
        message_id = client_id or secrets.token_hex(8)
        msg = IncomingMessage(platform=PLATFORM, chat=chat, message_id=message_id, text=text,
                              sender=Sender(platform_uid=person.platform_uid,
                                            display_name=person.display_name))
        item = {"id": f"u-{message_id}", "role": "user", "text": text,
                "html": f"<p class=plain>{plain_html(text)}</p>", "at": iso(msg.received_at)}
        hub = self._hubs.get(chat.chat_id)
        if text.split(maxsplit=1)[0].lower() == "/new":
            hub.turn_page()
        if shown:
            hub.put_item(item)
            hub.publish({"type": "user_message", "item": item})
        task = asyncio.create_task(self._deliver(msg), name=f"web:{chat.chat_id}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return web.json_response({"message_id": message_id}, status=202)

    async def _deliver(self, msg: IncomingMessage) -> None:
        """Hands one message to the gateway, after the earlier ones of its chat."""
        key = msg.chat.chat_id
        try:
            async with self._chat_locks.hold(key):
                assert self._on_message is not None
                await self._on_message(msg)
        except Exception:
            log.exception("web message %s in %s failed", msg.message_id, msg.chat.chat_id)
            hub = self._hubs.get(msg.chat.chat_id)
            hub.publish({"type": "error", "text": "That message could not be handled; "
                                                  "try again."})

    # --- the live stream -------------------------------------------------------------------

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Server-sent events: a snapshot (or, with `Last-Event-ID`, what was missed), then
        everything published to the person's chat as it happens."""
        session = await self._reader(request)
        hub = self._hubs.get(chat_id_of(session.person))
        last = request.headers.get("Last-Event-ID") or request.query.get("last") or ""
        missed = hub.missed(last) if last else None
        first = missed if missed is not None else [
            (hub.seq, json.dumps(hub.snapshot(), ensure_ascii=False, default=str))]
        page = hub.open_page()  # nothing awaited since the snapshot: no event falls between
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-store",
                                               "X-Accel-Buffering": "no"})
        try:
            await response.prepare(request)
            await response.write(b"retry: 1000\n\n")
            for seq, data in first:
                await response.write(self._sse(hub, seq, data))
            while True:
                try:
                    sent = await asyncio.wait_for(page.get(), timeout=KEEPALIVE_S)
                except TimeoutError:
                    if await self._directory.session(session.token) is None:
                        break  # signed out elsewhere
                    await response.write(b": keep-alive\n\n")
                    continue
                if sent is None:
                    break
                await response.write(self._sse(hub, *sent))
        except ConnectionResetError:
            pass
        finally:
            hub.close_page(page)
        return response

    @staticmethod
    def _sse(hub: Hub, seq: int, data: str) -> bytes:
        return f"id: {hub.event_id(seq)}\ndata: {data}\n\n".encode()

    # --- share links -----------------------------------------------------------------------

    async def _conversation_id(self, person: WebPerson, body: dict[str, Any]) -> str:
        conv_id = body.get("conversation_id")
        if conv_id is None:
            transcript = await self._directory.web_transcript(person)
            if transcript is None:
                _fail(404, "There is no conversation on this page to share yet.")
            return transcript.conversation.id
        if not isinstance(conv_id, str) or not _ID.match(conv_id):
            _fail(400, "\"conversation_id\" must be a conversation's id.")
        return conv_id

    def share_url(self, token: str) -> str:
        return f"{self.base_url}/s/{token}"

    async def _share(self, request: web.Request) -> web.StreamResponse:
        session = await self._writer(request)
        conv_id = await self._conversation_id(session.person, await self._json(request))
        token = await self._directory.share(session.person, conv_id)
        if token is None:
            _fail(404, "No such conversation.")
        return web.json_response({"conversation_id": conv_id, "token": token,
                                  "url": self.share_url(token)})

    async def _unshare(self, request: web.Request) -> web.StreamResponse:
        session = await self._writer(request)
        conv_id = await self._conversation_id(session.person, await self._json(request))
        revoked = await self._directory.unshare(session.person, conv_id)
        return web.json_response({"conversation_id": conv_id, "revoked": revoked})

    async def _shared(self, request: web.Request) -> web.StreamResponse:
        token = request.match_info["token"]
        transcript = await self._directory.shared(token) if _TOKEN.match(token) else None
        if transcript is None:
            return web.Response(status=404, text=pages.not_found(noindex=True),
                                content_type="text/html")

        def file_url(file_id: str) -> str:
            return f"/s/{quote(token, safe='')}/files/{quote(file_id, safe='')}"

        return web.Response(text=pages.shared_page(transcript, file_url),
                            content_type="text/html")

    async def _shared_file(self, request: web.Request) -> web.StreamResponse:
        token, file_id = request.match_info["token"], request.match_info["id"]
        found = (await self._directory.shared_file(token, file_id)
                 if _TOKEN.match(token) and _ID.match(file_id) else None)
        response = self._data_response(found)
        response.headers["Cache-Control"] = "no-store"  # gone from browsers once revoked
        return response

    # --- the admin console -----------------------------------------------------------------

    async def _admin_page(self, request: web.Request) -> web.StreamResponse:
        await self._admin(request)
        return self._static_response(request, "admin.html")

    async def _admin_status(self, request: web.Request) -> web.StreamResponse:
        """Whether the console runs, and why not (the page shows it in place of the tables)."""
        await self._admin(request)
        reason = await self._directory.admin_status()
        return web.json_response({"on": reason is None, "reason": reason})

    async def _admin_dashboard(self, request: web.Request) -> web.StreamResponse:
        """Usage per day and per person, platform and model status, recent failures."""
        await self._admin(request)
        return web.json_response(_dashboard(
            await self._directory.admin_dashboard(DASHBOARD_DAYS)))

    async def _admin_tables(self, request: web.Request) -> web.StreamResponse:
        await self._admin(request)
        try:
            tables = await self._directory.admin_tables()
        except ConsoleOff as exc:
            return _console_off(exc)
        return web.json_response({"tables": [{"name": n, "rows": c} for n, c in tables]})

    async def _admin_rows(self, request: web.Request) -> web.StreamResponse:
        await self._admin(request)
        raw_page = request.query.get("page", "1")
        if not raw_page.isdigit() or int(raw_page) < 1:
            _fail(400, "\"page\" must be a whole number from 1.")
        name = request.match_info["name"]
        try:
            found = await self._directory.admin_rows(name, page=int(raw_page),
                                                     page_size=ADMIN_PAGE_SIZE)
        except ConsoleOff as exc:
            return _console_off(exc)
        if found is None:
            _fail(404, f"No table named {name!r}.")
        return web.json_response({"table": name, "page": int(raw_page),
                                  "page_size": ADMIN_PAGE_SIZE, **_table(found)})

    async def _admin_query(self, request: web.Request) -> web.StreamResponse:
        await self._csrf(request, await self._admin(request))  # a non-admin: 404 first
        sql = (await self._json(request)).get("sql")
        if not isinstance(sql, str) or not sql.strip():
            _fail(400, "Write a SQL statement in \"sql\".")
        if len(sql) > MAX_SQL:
            _fail(400, f"The statement is too long (limit {MAX_SQL} characters).")
        try:
            result = await self._directory.admin_query(sql)
        except QueryRefused as exc:
            return web.json_response({"error": str(exc), "refused": True}, status=400)
        except ConsoleOff as exc:
            return _console_off(exc)
        return web.json_response(_table(result))

    # --- Adapter: what the renderer and the outbox call ------------------------------------

    def _new_id(self) -> str:
        """Unique across restarts too (a page open across one never mixes two messages)."""
        return f"m{self._hubs.epoch}.{next(self._ids)}"

    def _hub_for(self, chat: ChatRef) -> Hub:
        if chat.platform != PLATFORM:
            raise PlatformError(f"web: not a web chat: {chat.key}")
        return self._hubs.get(chat.chat_id)

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        hub = self._hub_for(chat)
        message_id = self._new_id()
        item = {"id": message_id, "role": "assistant", "text": reply.text,
                "markup": reply.markup, "html": reply_html(reply.text, reply.markup),
                "at": iso(utcnow())}
        hub.put_item(item)
        hub.publish({"type": "message_sent", "item": item})
        return MessageRef(chat=chat, message_id=message_id)

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        hub = self._hub_for(ref.chat)
        item = hub.items.get(ref.message_id)
        if item is not None and item["text"] == reply.text and item["markup"] == reply.markup:
            raise MessageNotModified("web: the message already shows this text")
        item = {"id": ref.message_id, "role": "assistant", "text": reply.text,
                "markup": reply.markup, "html": reply_html(reply.text, reply.markup),
                "at": item["at"] if item is not None else iso(utcnow())}
        hub.put_item(item)
        hub.publish({"type": "message_edited", "item": item})

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        hub = self._hub_for(chat)
        live = hub.keep_file(file)
        message_id = self._new_id()
        item = {"id": message_id, "role": "file", "text": file.caption, "at": iso(live.at),
                "html": f"<p class=plain>{plain_html(file.caption)}</p>" if file.caption else "",
                "file": {"filename": file.filename, "kind": file.kind,
                         "mime_type": file.mime_type, "size_bytes": len(file.data),
                         "url": f"/live/{live.key}"}}
        hub.put_item(item)
        hub.publish({"type": "file_sent", "item": item})
        return MessageRef(chat=chat, message_id=message_id)

    async def typing(self, chat: ChatRef) -> None:
        return None

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        raise PlatformError("web: the page sends no attachments")

    # --- EventObserver ---------------------------------------------------------------------

    async def observe(self, chat: ChatRef, ref: MessageRef | None, event: Event) -> None:
        """A run's typed event, to the person's pages (never raises)."""
        try:
            if chat.platform != PLATFORM:
                return
            hub = self._hubs.get(chat.chat_id)
            rid = ref.message_id if ref is not None else None
            payload = {**_event_json(event), "ref": rid}
            if rid is not None and event.type in ("done", "failed"):
                hub.finished(rid)
            elif rid is not None and isinstance(event, TextDelta):
                hub.streamed(rid, event.text)
            elif rid is not None:
                lines = hub.running.setdefault(rid, [])
                if isinstance(event, Thinking) and lines and lines[-1]["type"] == "thinking":
                    lines[-1]["text"] = (lines[-1]["text"] + event.text)[-4000:]
                else:
                    hub.progress(rid, payload)
            hub.publish(payload)
        except Exception:
            log.exception("web: event not shown")
