"""The local console chat: stdin lines in, replies edited in place in the terminal (rich).

One person at one terminal: there are no group chats, so no `core.ports.ChatAdmins` (group
admin checks never arise)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

from core.cjk_markdown import cjk_bold
from core.ports import MessageHandler
from core.types import (
    Capabilities,
    ChatRef,
    IncomingMessage,
    MessageRef,
    OutgoingFile,
    Reply,
    Sender,
)

QUIT = {"/quit", "/exit", ":q"}


log = logging.getLogger(__name__)


class ConsoleAdapter:
    name = "console"
    capabilities = Capabilities(
        max_message_length=100_000, can_edit=True, min_edit_interval_s=0.1,
        supports_images=True, supports_documents=True, supports_voice=False,
        supports_buttons=False, markup="rich",
    )

    def __init__(self, *, files_dir: Path, user: str = "local", console: Console | None = None,
                 stdin: TextIO | None = None, on_eof: Callable[[], None] | None = None) -> None:
        self._files_dir = files_dir
        self._console = console or Console()
        self._stdin = stdin or sys.stdin
        self._chat = ChatRef(platform="console", chat_id=user)
        self._sender = Sender(platform_uid=user, display_name=user)
        self._ids = itertools.count(1)
        self._live: Live | None = None
        self._live_id = ""
        self._texts: dict[str, str] = {}
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._on_eof = on_eof
        self.closed = asyncio.Event()

    async def start(self, on_message: MessageHandler) -> None:
        loop = asyncio.get_running_loop()

        def read() -> None:  # a daemon thread: a blocked readline never holds up exit
            raw = getattr(self._stdin, "buffer", None)
            try:
                if raw is not None:  # bytes: undecodable input becomes U+FFFD, not an end
                    for data in raw:
                        line = data.decode("utf-8", errors="replace").rstrip("\r\n")
                        loop.call_soon_threadsafe(self._queue.put_nowait, line)
                else:
                    for text in self._stdin:
                        loop.call_soon_threadsafe(self._queue.put_nowait, text.rstrip("\n"))
            except (OSError, ValueError) as exc:
                log.warning("console input ended: %s", exc)
            finally:
                loop.call_soon_threadsafe(self._queue.put_nowait, None)

        threading.Thread(target=read, name="console-stdin", daemon=True).start()
        self._console.print("[bold]Bullpen[/bold] console. Ask about a stock; /help for "
                            "commands, /quit or Ctrl-D to leave.")
        self._pump = asyncio.create_task(self._run(on_message), name="console-pump")

    async def _run(self, on_message: MessageHandler) -> None:
        while True:
            line = await self._queue.get()
            if line is None or line.strip() in QUIT:
                break
            if not line.strip():
                continue
            self._stop_live()
            try:
                await on_message(IncomingMessage(
                    platform="console", chat=self._chat, sender=self._sender,
                    message_id=f"{id(self)}-{next(self._ids)}", text=line))
            except Exception as exc:  # one message failed: say so and keep reading
                log.exception("console message failed")
                self._console.print(f"[red]That message could not be handled "
                                    f"({type(exc).__name__}); try again.[/red]")
        self.closed.set()
        if self._on_eof is not None:
            self._on_eof()

    def _render(self, reply: Reply) -> Markdown | Text:
        if reply.markup == "markdown":
            return Markdown(cjk_bold(reply.text))
        return Text(reply.text)

    def _stop_live(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        self._stop_live()
        mid = str(next(self._ids))
        self._texts[mid] = reply.text
        self._live = Live(self._render(reply), console=self._console, auto_refresh=False,
                          transient=False)
        self._live.start(refresh=True)
        self._live_id = mid
        return MessageRef(chat=chat, message_id=mid)

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        self._texts[ref.message_id] = reply.text
        if self._live is not None and ref.message_id == self._live_id:
            self._live.update(self._render(reply), refresh=True)
        else:
            self._console.print(self._render(reply))

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        self._stop_live()
        path = self._files_dir / "console" / file.filename

        def write() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(file.data)

        await asyncio.to_thread(write)
        self._console.print(f"📎 {file.kind}: {path}" + (f" — {file.caption}"
                                                         if file.caption else ""))
        return MessageRef(chat=chat, message_id=str(next(self._ids)))

    async def typing(self, chat: ChatRef) -> None:
        return None

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        return b""

    async def aclose(self) -> None:
        self._stop_live()
        if self._pump is not None:
            self._pump.cancel()
            try:
                await self._pump
            except asyncio.CancelledError:
                pass
            self._pump = None
