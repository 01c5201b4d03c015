"""A unix-socket proxy in front of PostgreSQL that can be cut: `down()` drops every
connection through it and refuses new ones (the server "dies"), `up()` lets them through
again. The pool under test connects to `dsn`, the same database reached through the proxy."""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

SOCKET = ".s.PGSQL.5432"


class PgProxy:
    def __init__(self, dsn: str) -> None:
        parts = urlsplit(dsn)
        query = parse_qs(parts.query)
        self._target = Path(query["host"][0]) / SOCKET
        self.dir = Path(tempfile.mkdtemp(prefix="pgproxy-"))
        query["host"] = [str(self.dir)]
        self.dsn = urlunsplit(parts._replace(query=urlencode(query, doseq=True)))
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.cuts = 0

    async def __aenter__(self) -> PgProxy:
        await self.up()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.down()

    async def up(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_unix_server(self._accept,
                                                           path=str(self.dir / SOCKET))

    async def down(self) -> None:
        """Refuse new connections (the socket file is gone) and reset the open ones."""
        if self._server is not None:
            self._server.close()
            self._server = None
            with contextlib.suppress(OSError):
                (self.dir / SOCKET).unlink()
            self.cuts += 1
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._pipes):
            task.cancel()
        self._writers.clear()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(str(self._target))
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))
        for src, dst in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(src, dst))
            self._pipes.add(task)
            task.add_done_callback(self._pipes.discard)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        try:
            while data := await src.read(65536):
                dst.write(data)
                await dst.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            dst.transport.abort()
            self._writers.discard(dst)
