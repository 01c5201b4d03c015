"""The inbound spool: messages a platform had acknowledged, on local disk until Postgres has them.

Slack (3 s), WeChat (5 s) and Discord's gateway do not deliver an update again once it was
acknowledged, and their adapters acknowledge at once. When the database cannot take such a
message quickly, the gateway appends it here (write, flush, fsync) and `serve` replays it into
the database through the gateway's normal path when it can. As a table:

| situation                                            | what happens                             |
|------------------------------------------------------|------------------------------------------|
| platform redelivers (Telegram polling)               | never spooled: the error goes back, the  |
|                                                      | update stays unacknowledged              |
| record done within `spool_after_s` (the usual case)  | never spooled: no fsync on the hot path  |
| record slower than `spool_after_s`, or the store was | appended + fsync'd now, while the record |
| unavailable at the last try                          | goes on (and is kept trying in memory)   |
| sweep (start, then every `inbound_sweep_s`)          | every spool file not locked by a live    |
|                                                      | process is replayed through `handle`     |
| replayed record already stored                       | the store's dedupe: answered once        |
| record's platform not served here                    | file kept, the next records go on        |
| the store away during replay                         | the replay stops until the next sweep    |
| every record of a file stored (or settled)           | the file is deleted                      |
| torn last line (crash mid-write), unreadable record  | skipped with a warning, never fatal      |

Files: `<dir>/inbound-<instance>.jsonl`, one per process, held under `fcntl.flock` while the
process lives, so a live process's file is never replayed by another; a dead process's file
is taken (flock, non-blocking) and replayed by whichever live process gets it first. Before a
process replays its own file it renames it (`inbound-<instance>-<n>.jsonl`) and lets go of it,
so new messages go to a fresh file and the old one is replayed like any other. A record is one
JSON line: `{"id", "platform", "spooled_at", "message"}` (the `IncomingMessage` as JSON).

The fsync (about 4 ms on this project's disks, median) runs in a worker thread; appends are
serialised by an asyncio lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import itertools
import json
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.types import IncomingMessage, utcnow

log = logging.getLogger(__name__)

PREFIX = "inbound-"
SUFFIX = ".jsonl"


@dataclass(frozen=True)
class Spooled:
    """One record read back from a spool file."""

    id: str
    platform: str
    message: IncomingMessage


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_records(path: Path) -> list[Spooled]:
    """The records of a spool file, in order; a torn or unreadable line is skipped with a
    warning (only the last line can be torn by a crash, but no line stops the rest)."""
    out: list[Spooled] = []
    with path.open("rb") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                out.append(Spooled(id=str(raw["id"]), platform=str(raw["platform"]),
                                   message=IncomingMessage.model_validate(raw["message"])))
            except (ValueError, KeyError, TypeError, ValidationError) as exc:
                log.warning("spool %s line %d skipped (torn or unreadable): %s", path.name, n,
                            type(exc).__name__)
    return out


# replay's verdict on one record: True stored (or settled for good); None not here (its
# platform is served by another process: the file is kept, the next records go on); False
# not now (the database is away: the replay stops until the next sweep)
Replayer = Callable[[Spooled], Awaitable[bool | None]]


class Spool:
    """This process's append-only spool file in `directory`, and the replay of every file
    there that no live process holds."""

    def __init__(self, directory: Path, *, instance: str) -> None:
        self.directory = directory
        self.instance = instance
        self._fd: int | None = None
        self._lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._rotations = itertools.count(1)
        self.appended = 0  # records written by this process (tests, logs)

    @property
    def path(self) -> Path:
        return self.directory / f"{PREFIX}{self.instance}{SUFFIX}"

    async def append(self, platform: str, message: IncomingMessage) -> str:
        """Write `message` durably (write, flush, fsync) before returning its record id."""
        record_id = f"{self.instance}-{next(self._ids)}"
        line = json.dumps({"id": record_id, "platform": platform,
                           "spooled_at": utcnow().isoformat(),
                           "message": message.model_dump(mode="json")},
                          ensure_ascii=False).encode() + b"\n"
        async with self._lock:
            await asyncio.to_thread(self._write, line)
        self.appended += 1
        return record_id

    def _write(self, line: bytes) -> None:
        if self._fd is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # ours while we live
            except OSError:
                os.close(fd)
                raise
            _fsync_dir(self.directory)  # the file's name is durable too
            self._fd = fd
        view = memoryview(line)
        while view:  # O_APPEND: one write lands whole, but a short write is continued
            view = view[os.write(self._fd, view):]
        os.fsync(self._fd)

    def close(self) -> None:
        """Let go of this process's file (left on disk: the next sweep replays what it holds)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    async def _rotate(self) -> Path | None:
        """Our file, when it holds anything, renamed and let go of (its new name): replayed
        like the others; the next append starts a fresh one."""
        async with self._lock:
            if self._fd is None or os.fstat(self._fd).st_size == 0:
                return None
            target = self.directory / (f"{PREFIX}{self.instance}-{next(self._rotations)}"
                                       f"{SUFFIX}")
            os.rename(self.path, target)
            with contextlib.suppress(OSError):
                _fsync_dir(self.directory)
            self.close()
            return target

    async def replay(self, replayer: Replayer) -> int:
        """Every file no live process holds (ours last, renamed first), record by record
        through `replayer`; a file is deleted once all its records are stored. Stops at the
        first record that cannot be stored now (the database is away). How many records were
        stored."""
        if not self.directory.is_dir():
            return 0
        stored, ok = await self._replay_files(replayer)
        if ok:
            ours = await self._rotate()
            if ours is not None:
                stored += (await self._replay_file(ours, replayer))[0]
        return stored

    async def _replay_files(self, replayer: Replayer) -> tuple[int, bool]:
        stored = 0
        for path in sorted(self.directory.glob(f"{PREFIX}*{SUFFIX}"),
                           key=lambda p: (p.stat().st_mtime if p.exists() else 0, p.name)):
            if path == self.path and self._fd is not None:
                continue  # ours, being written
            done, complete = await self._replay_file(path, replayer)
            stored += done
            if not complete:
                return stored, False
        return stored, True

    async def _replay_file(self, path: Path, replayer: Replayer) -> tuple[int, bool]:
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            return 0, True  # replayed and deleted by another process just now
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return 0, True  # a live process holds it (its own, or its replay)
            try:
                if os.fstat(fd).st_ino != os.stat(path).st_ino:
                    return 0, True  # deleted (and perhaps made again) while we waited
            except FileNotFoundError:
                return 0, True
            records = await asyncio.to_thread(read_records, path)
            stored, kept = 0, 0
            for record in records:
                verdict = await replayer(record)
                if verdict is False:
                    log.info("spool %s: %d of %d records stored, the rest kept", path.name,
                             stored, len(records))
                    return stored, False
                if verdict is None:
                    kept += 1
                else:
                    stored += 1
            if kept:
                log.info("spool %s kept: %d records for platforms not served here",
                         path.name, kept)
                return stored, True
            await asyncio.to_thread(self._delete, path)
            if records:
                log.info("spool %s replayed: %d records", path.name, len(records))
            return stored, True
        finally:
            os.close(fd)

    def _delete(self, path: Path) -> None:
        path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            _fsync_dir(self.directory)

    def pending(self) -> list[dict[str, Any]]:
        """Every record on disk now, for tests and diagnostics (no locks taken)."""
        out: list[dict[str, Any]] = []
        if self.directory.is_dir():
            for path in sorted(self.directory.glob(f"{PREFIX}*{SUFFIX}")):
                out += [{"id": r.id, "platform": r.platform, "file": path.name,
                         "message_id": r.message.message_id} for r in read_records(path)]
        return out
