"""What the web adapter holds per chat while pages watch it: the chat's recent items (what the
person posted, the bot's messages as they stand now, the files), the answers in progress with
their progress lines, a numbered log of what was published (so `Last-Event-ID` replays what a
reconnecting page missed) and the open pages' queues.

Everything is bounded: items, log, progress lines, file bytes, and the pages' queues (a page
that falls behind is dropped; its browser reconnects and gets what it missed or a snapshot).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core.types import OutgoingFile, utcnow

MAX_ITEMS = 60  # items a snapshot carries (the current answer and what came shortly before)
MAX_LOG = 2000  # published events a reconnecting page can catch up on
MAX_PROGRESS = 60  # progress lines kept per answer in progress
MAX_STREAM = 64_000  # characters of an answer's streamed text kept for a snapshot
MAX_FILE_BYTES = 40 * 1024 * 1024  # live files kept per chat (served until they leave)
QUEUE_SIZE = 2000

Sent = tuple[int, str] | None  # (sequence number, JSON), or None: the page is closed


def iso(at: datetime) -> str:
    return at.isoformat()


@dataclass
class LiveFile:
    key: str
    file: OutgoingFile
    at: datetime


@dataclass
class Hub:
    """One chat's live state."""

    epoch: str
    seq: int = 0
    items: OrderedDict[str, dict[str, Any]] = field(default_factory=OrderedDict)
    log: deque[tuple[int, str]] = field(default_factory=lambda: deque(maxlen=MAX_LOG))
    running: OrderedDict[str, list[dict[str, Any]]] = field(default_factory=OrderedDict)
    streams: dict[str, str] = field(default_factory=dict)  # the text deltas, per answer
    files: OrderedDict[str, LiveFile] = field(default_factory=OrderedDict)
    pages: set[asyncio.Queue[Sent]] = field(default_factory=set)

    # --- publishing ------------------------------------------------------------------------

    def event_id(self, seq: int) -> str:
        return f"{self.epoch}-{seq}"

    def publish(self, payload: dict[str, Any]) -> None:
        self.seq += 1
        data = json.dumps(payload, ensure_ascii=False, default=str)
        self.log.append((self.seq, data))
        for page in list(self.pages):
            try:
                page.put_nowait((self.seq, data))
            except asyncio.QueueFull:  # too slow: closed; the browser reconnects and catches up
                self.pages.discard(page)
                _close(page)

    def put_item(self, item: dict[str, Any]) -> None:
        """Add or replace an item (a message edited keeps its place)."""
        self.items[item["id"]] = item
        while len(self.items) > MAX_ITEMS:
            self.items.popitem(last=False)

    def turn_page(self) -> None:
        """The person started a new conversation (/new): what a reload draws starts here;
        the items before it belong to the old conversation (the page lists it) and answers
        still in progress keep their items."""
        for key in [k for k in self.items if k not in self.running]:
            del self.items[key]

    def progress(self, ref: str | None, line: dict[str, Any]) -> None:
        """A progress line (status, tool, thinking) of the answer in `ref`."""
        if ref is None:
            return
        lines = self.running.setdefault(ref, [])
        lines.append(line)
        del lines[:-MAX_PROGRESS]
        while len(self.running) > 8:
            gone, _ = self.running.popitem(last=False)
            self.streams.pop(gone, None)

    def streamed(self, ref: str, text: str) -> None:
        """The answer in `ref` grew by `text` (kept so a reloaded page shows it so far)."""
        self.running.setdefault(ref, [])
        self.streams[ref] = (self.streams.get(ref, "") + text)[-MAX_STREAM:]

    def finished(self, ref: str | None) -> None:
        if ref is not None:
            self.running.pop(ref, None)
            self.streams.pop(ref, None)

    def keep_file(self, file: OutgoingFile) -> LiveFile:
        live = LiveFile(key=secrets.token_urlsafe(12), file=file, at=utcnow())
        self.files[live.key] = live
        while len(self.files) > 1 and sum(len(f.file.data) for f in self.files.values()) \
                > MAX_FILE_BYTES:
            self.files.popitem(last=False)
        return live

    # --- pages -----------------------------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """What a page draws on (re)load: the items (the stored transcript before `since`
        is drawn from the database), and the answers still in progress with their lines."""
        items = list(self.items.values())
        return {"type": "snapshot", "since": items[0]["at"] if items else None,
                "items": items,
                "running": [{"ref": ref, "lines": lines, "text": self.streams.get(ref, "")}
                            for ref, lines in self.running.items()]}

    def missed(self, last_event_id: str) -> list[tuple[int, str]] | None:
        """The events after `last_event_id`, or None when they cannot all be replayed (another
        process's id, or older than the log): the page then gets a snapshot."""
        epoch, _, number = last_event_id.rpartition("-")
        if epoch != self.epoch or not number.isdigit():
            return None
        seq = int(number)
        if seq > self.seq:
            return None
        oldest = self.log[0][0] if self.log else self.seq + 1
        if seq < oldest - 1:
            return None
        return [(n, data) for n, data in self.log if n > seq]

    def open_page(self) -> asyncio.Queue[Sent]:
        page: asyncio.Queue[Sent] = asyncio.Queue(maxsize=QUEUE_SIZE)
        self.pages.add(page)
        return page

    def close_page(self, page: asyncio.Queue[Sent]) -> None:
        self.pages.discard(page)

    def close_all(self) -> None:
        for page in list(self.pages):
            _close(page)
        self.pages.clear()


def _close(page: asyncio.Queue[Sent]) -> None:
    """Tell a page's stream to end, even when its queue is full."""
    while True:
        try:
            page.put_nowait(None)
            return
        except asyncio.QueueFull:
            page.get_nowait()


class Hubs:
    """Hubs by chat id, the least recently used forgotten beyond `limit` (never one with an
    open page)."""

    def __init__(self, *, limit: int = 2000) -> None:
        self.epoch = secrets.token_hex(4)
        self._hubs: OrderedDict[str, Hub] = OrderedDict()
        self._limit = limit

    def get(self, chat_id: str) -> Hub:
        hub = self._hubs.get(chat_id)
        if hub is None:
            hub = self._hubs[chat_id] = Hub(epoch=self.epoch)
            self._trim()
        self._hubs.move_to_end(chat_id)
        return hub

    def peek(self, chat_id: str) -> Hub | None:
        return self._hubs.get(chat_id)

    def _trim(self) -> None:
        for chat_id in list(self._hubs):
            if len(self._hubs) <= self._limit:
                return
            if not self._hubs[chat_id].pages:
                del self._hubs[chat_id]

    def close_all(self) -> None:
        for hub in self._hubs.values():
            hub.close_all()
