"""`core.ports.WebDirectory` over the store: what the web platform shows beyond the live chat.

Every lookup by id is scoped to the asking person (someone else's conversation or file, or an
id that is not one, is None); transcripts show what the user asked and the agent answered and
the files it sent, never a tool call or a tool result.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from pathlib import Path
from uuid import UUID

from bot.renderer import with_label
from core.errors import ConsoleOff
from core.ports import (
    WebConversationInfo,
    WebDashboard,
    WebEntry,
    WebFailure,
    WebFileData,
    WebFileInfo,
    WebPerson,
    WebSession,
    WebTable,
    WebTranscript,
    WebUsageDay,
    WebUsagePerson,
)
from core.store import Store
from core.store.web import WEB_PLATFORM, ConversationRow, FileRow, PersonRow, SessionRow
from core.types import ChatRef
from core.words import norm, t

log = logging.getLogger(__name__)

DEFAULT_SQL_TIMEOUT_MS = 5000
DEFAULT_SQL_ROW_LIMIT = 500
DEFAULT_SQL_BYTE_LIMIT = 2 * 1024 * 1024
MAX_TITLE = 120  # characters of a conversation's name (as the automatic titles)
# files the agent keeps for itself or for another program (a podcast's script.json): stored
# and shared with the conversation, but not in the person's list of files
INTERNAL_MIME_TYPES = frozenset({"application/json"})


def both(key: str, **kwargs: object) -> str:
    """A line of the admin console, which shows English and Chinese side by side."""
    return f"{t(key, 'en', **kwargs)} · {t(key, 'zh', **kwargs)}"


def _mb(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MB" if n >= 1024 * 1024 else f"{n / 1024:.0f} KB"


def web_chat(user_id: UUID | str) -> ChatRef:
    """The person's chat on the web platform (the adapter puts their messages there)."""
    return ChatRef(platform=WEB_PLATFORM, chat_id=f"web:{user_id}")


def admin_accounts(setting: str) -> frozenset[str]:
    """BULLPEN_ADMINS ("telegram:123,web:abc") as a set of "platform:uid"."""
    return frozenset(a.strip() for a in setting.split(",") if a.strip())


def _uuid(text: str) -> UUID | None:
    try:
        return UUID(text)
    except (ValueError, TypeError, AttributeError):
        return None


def _file_id(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else None


def _file_info(row: FileRow) -> WebFileInfo:
    return WebFileInfo(id=str(row.id), filename=row.filename, kind=row.kind,
                       mime_type=row.mime_type, size_bytes=row.size_bytes,
                       created_at=row.created_at,
                       conversation_id=str(row.conversation_id) if row.conversation_id else None)


def listed(rows: list[FileRow]) -> list[FileRow]:
    """The person's list: internal files out, and of the same file sent again (the same name
    and size in the same conversation) only the newest copy; `rows` come newest first."""
    seen: set[tuple[str, int, UUID | None]] = set()
    out = []
    for row in rows:
        key = (row.filename, row.size_bytes, row.conversation_id)
        if row.mime_type in INTERNAL_MIME_TYPES or key in seen:
            continue
        seen.add(key)
        out.append(row)
    return out


async def _read(row: FileRow) -> WebFileData | None:
    try:
        data = await asyncio.to_thread(Path(row.path).read_bytes)
    except OSError as exc:
        log.warning("file %s (%s) is gone from disk: %s", row.id, row.filename, exc)
        return None
    return WebFileData(info=_file_info(row), data=data)


class StoreWebDirectory:
    """The web platform's view of Bullpen, over the store. `admins` are "platform:uid"
    accounts (BULLPEN_ADMINS): a person is an admin when any of their linked accounts is."""

    def __init__(self, store: Store, *, admins: frozenset[str] = frozenset(),
                 sql_timeout_ms: int = DEFAULT_SQL_TIMEOUT_MS,
                 sql_row_limit: int = DEFAULT_SQL_ROW_LIMIT,
                 sql_byte_limit: int = DEFAULT_SQL_BYTE_LIMIT,
                 platforms: tuple[str, ...] = (), model: str = "",
                 model_problem: str | None = None) -> None:
        self._store = store
        self._platforms = platforms  # what this process serves, for the admin's status
        self._model = model
        self._model_problem = model_problem
        self._web = store.web
        self._admins = admins
        self._sql_timeout_ms = sql_timeout_ms
        self._sql_row_limit = sql_row_limit
        self._sql_byte_limit = sql_byte_limit

    # --- sign-in and sessions --------------------------------------------------------------

    async def issue_login(self, user_id: UUID) -> str:
        """A one-time sign-in token (the link is WEB_BASE_URL/login/<token>)."""
        return await self._web.issue_login(user_id)

    async def redeem_login(self, token: str) -> WebSession | None:
        user_id = await self._web.redeem_login(token)
        if user_id is None:
            return None
        row = await self._web.person(user_id)
        if row is None:  # the person was deleted meanwhile
            return None
        await self._web.web_account(user_id, row.display_name)
        cookie, session = await self._web.open_session(user_id)
        return await self._session(cookie, session)

    async def session(self, token: str) -> WebSession | None:
        if not token:
            return None
        row = await self._web.session(token)
        return await self._session(token, row) if row is not None else None

    async def _session(self, token: str, row: SessionRow) -> WebSession | None:
        person = await self.person(row.user_id)
        if person is None:
            return None
        return WebSession(token=token, csrf=row.csrf, person=person,
                          expires_at=row.expires_at)

    async def end_session(self, token: str) -> None:
        await self._web.end_session(token)

    async def end_sessions(self, user_id: UUID) -> int:
        return await self._web.end_sessions(user_id)

    async def person(self, user_id: UUID) -> WebPerson | None:
        row = await self._web.person(user_id)
        if row is None:
            return None
        uid = next((u for p, u in row.accounts if p == WEB_PLATFORM), None)
        if uid is None:
            uid = await self._web.web_account(user_id, row.display_name)
            row = PersonRow(row.user_id, row.display_name, row.lang,
                            (*row.accounts, (WEB_PLATFORM, uid)))
        name = row.display_name or next(
            (u for p, u in row.accounts if p != WEB_PLATFORM), "")
        return WebPerson(user_id=str(user_id), platform_uid=uid, display_name=name,
                         lang=norm(row.lang),
                         is_admin=self._is_admin(row))

    def _is_admin(self, row: PersonRow) -> bool:
        return any(f"{p}:{u}" in self._admins for p, u in row.accounts)

    # --- conversations ---------------------------------------------------------------------

    def _info(self, person: WebPerson, row: ConversationRow) -> WebConversationInfo:
        own_web = row.platform == WEB_PLATFORM and row.chat_id == web_chat(person.user_id).chat_id
        return WebConversationInfo(
            id=str(row.id), platform=row.platform, chat_id=row.chat_id, title=row.title,
            mode=row.mode, is_active=row.is_active, updated_at=row.updated_at,
            writable=own_web and row.is_active)

    async def _own(self, person: WebPerson, conversation_id: str) -> ConversationRow | None:
        conv_id, user_id = _uuid(conversation_id), _uuid(person.user_id)
        if conv_id is None or user_id is None:
            return None
        row = await self._web.conversation(conv_id)
        return row if row is not None and row.user_id == user_id else None

    async def conversations(self, person: WebPerson) -> list[WebConversationInfo]:
        user_id = _uuid(person.user_id)
        if user_id is None:
            return []
        return [self._info(person, r) for r in await self._web.conversations(user_id)]

    async def _transcript(self, info: WebConversationInfo, conv_id: UUID) -> WebTranscript:
        """Messages in order; each answer's files after it (where the chat showed them)."""
        messages = await self._web.shown_messages(conv_id)
        files = await self._web.files_of_conversation(conv_id)
        entries: list[WebEntry] = []

        def files_before(at: datetime | None) -> None:
            while files and (at is None or files[0].created_at < at):
                f = files.pop(0)
                entries.append(WebEntry(role="file", text=f.filename, at=f.created_at,
                                        file=_file_info(f)))

        for n, m in enumerate(messages):
            if m.role == "user" and n > 0:
                files_before(m.created_at)
            entries.append(WebEntry(role="user" if m.role == "user" else "assistant",
                                    text=with_label(m.content, m.label), at=m.created_at))
        files_before(None)
        return WebTranscript(conversation=info, entries=tuple(entries))

    async def transcript(self, person: WebPerson,
                         conversation_id: str) -> WebTranscript | None:
        row = await self._own(person, conversation_id)
        if row is None:
            return None
        return await self._transcript(self._info(person, row), row.id)

    async def web_transcript(self, person: WebPerson) -> WebTranscript | None:
        user_id = _uuid(person.user_id)
        if user_id is None:
            return None
        conv = await self._store.conversations.active(web_chat(user_id), user_id)
        row = await self._web.conversation(conv.id)
        if row is None:
            return None
        return await self._transcript(self._info(person, row), row.id)

    async def search(self, person: WebPerson, text: str) -> list[WebConversationInfo]:
        user_id = _uuid(person.user_id)
        if user_id is None or not text.strip():
            return []
        return [self._info(person, r) for r in await self._web.search(user_id, text.strip())]

    async def rename(self, person: WebPerson, conversation_id: str,
                     title: str) -> WebConversationInfo | None:
        row = await self._own(person, conversation_id)
        if row is None or row.user_id is None:
            return None
        if not await self._web.rename(row.id, row.user_id, title.strip()[:MAX_TITLE]):
            return None
        renamed = await self._web.conversation(row.id)
        return self._info(person, renamed) if renamed is not None else None

    async def delete(self, person: WebPerson,
                     conversation_id: str) -> WebConversationInfo | None:
        row = await self._own(person, conversation_id)
        if row is None or row.user_id is None:
            return None
        paths = await self._web.delete(row.id, row.user_id)
        if paths is None:
            return None

        def unlink() -> None:
            for path in paths:
                Path(path).unlink(missing_ok=True)

        await asyncio.to_thread(unlink)
        return self._info(person, row)

    async def coverage(self, lang: str) -> str:
        from analyst.offline import coverage_table

        return await asyncio.to_thread(coverage_table, norm(lang))

    # --- files -----------------------------------------------------------------------------

    async def files(self, person: WebPerson) -> list[WebFileInfo]:
        user_id = _uuid(person.user_id)
        if user_id is None:
            return []
        return [_file_info(r) for r in listed(await self._web.files_of_user(user_id))]

    async def file(self, person: WebPerson, file_id: str) -> WebFileData | None:
        fid, user_id = _file_id(file_id), _uuid(person.user_id)
        if fid is None or user_id is None:
            return None
        row = await self._web.file(fid)
        if row is None or row.user_id != user_id:
            return None
        return await _read(row)

    # --- share links -----------------------------------------------------------------------

    async def share(self, person: WebPerson, conversation_id: str) -> str | None:
        row = await self._own(person, conversation_id)
        if row is None:
            return None
        return await self._web.share(row.id, created_by=row.user_id)

    async def unshare(self, person: WebPerson, conversation_id: str) -> bool:
        row = await self._own(person, conversation_id)
        if row is None:
            return False
        return await self._web.unshare([row.id]) > 0

    async def shared(self, share_token: str) -> WebTranscript | None:
        if not share_token:
            return None
        conv_id = await self._web.shared(share_token)
        row = await self._web.conversation(conv_id) if conv_id is not None else None
        if row is None:
            return None
        info = WebConversationInfo(
            id=str(row.id), platform=row.platform, chat_id="", title=row.title, mode=row.mode,
            is_active=row.is_active, updated_at=row.updated_at, writable=False)
        return await self._transcript(info, row.id)

    async def shared_file(self, share_token: str, file_id: str) -> WebFileData | None:
        fid = _file_id(file_id)
        if fid is None or not share_token:
            return None
        conv_id = await self._web.shared(share_token)
        if conv_id is None:
            return None
        row = await self._web.file(fid)
        if row is None or row.conversation_id != conv_id:
            return None
        return await _read(row)

    # --- the admin console (the adapter checks `person.is_admin` first) ------------------

    async def admin_status(self) -> str | None:
        reason = await self._web.admin_status()
        return both("chat.admin_off", reason=reason) if reason is not None else None

    async def admin_dashboard(self, days: int) -> WebDashboard:
        by_day = await self._web.usage_by_day(days)
        people = await self._web.usage_by_person(days)
        last = await self._web.last_call()
        failures = await self._web.recent_failures()
        return WebDashboard(
            days=tuple(WebUsageDay(d.day.isoformat(), d.questions, d.calls, d.tokens)
                       for d in by_day),
            people=tuple(WebUsagePerson(p.name or str(p.user_id)[:8], p.questions, p.calls,
                                        p.tokens, p.cost_usd) for p in people),
            platforms=self._platforms, model=self._model, model_problem=self._model_problem,
            last_call_at=last.at if last is not None else None,
            failures=tuple(WebFailure(f.at, f.what, f.detail) for f in failures))

    async def admin_tables(self) -> list[tuple[str, int]]:
        try:
            return await self._web.admin_tables(timeout_ms=self._sql_timeout_ms)
        except ConsoleOff as exc:
            raise ConsoleOff(both("chat.admin_off", reason=str(exc))) from exc

    async def admin_rows(self, table: str, *, page: int, page_size: int) -> WebTable | None:
        try:
            got = await self._web.admin_rows(table, page=page, page_size=page_size,
                                             timeout_ms=self._sql_timeout_ms)
        except ConsoleOff as exc:
            raise ConsoleOff(both("chat.admin_off", reason=str(exc))) from exc
        if got is None:
            return None
        return WebTable(columns=got.columns, rows=got.rows, total=got.total)

    async def admin_query(self, sql: str) -> WebTable:
        try:
            got = await self._web.admin_query(sql, timeout_ms=self._sql_timeout_ms,
                                              row_limit=self._sql_row_limit,
                                              byte_limit=self._sql_byte_limit)
        except ConsoleOff as exc:
            raise ConsoleOff(both("chat.admin_off", reason=str(exc))) from exc
        note = ""
        if got.cut_by == "rows":
            note = both("chat.admin_cut_rows", limit=self._sql_row_limit)
        elif got.cut_by == "bytes":
            note = both("chat.admin_cut_bytes", size=_mb(self._sql_byte_limit),
                        limit=self._sql_byte_limit)
        return WebTable(columns=got.columns, rows=got.rows, truncated=got.truncated,
                        note=note)
