"""The local console chat: stdin lines in, a transcript out (rich).

The console is a transcript, not a screen: what it prints stays printed and is never redrawn.
A redrawn region (rich's Live, as it used to be) fights the terminal's own echo of what the user
types: the next redraw overwrote the typed question and printed the answer's first lines twice,
and an answer taller than the terminal ended in `…`. So the console declares that it cannot edit
(`can_edit=False`): the renderer then sends each answer once, when it is final, and the run's
progress (status, tool, the text being written) reaches the console as events (`observe`),
shown on ONE transient status line that is erased before the answer is printed. Long answers
scroll like any terminal output; `› ` marks where to type.

One person at one terminal: there are no group chats, so no `core.ports.ChatAdmins` (group
admin checks never arise)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.markdown import Markdown
from rich.text import Text

from core.cjk_markdown import cjk_bold
from core.events import Done, Event, Failed, Status, TextDelta, Thinking, ToolStarted
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
PROMPT = "› "
# the prompt comes back once output has been quiet this long (an answer's text and its files
# arrive as separate sends; the prompt goes under the last of them)
PROMPT_AFTER_S = 0.25
SPIN_EVERY_S = 0.5
KEEP_TEXTS = 200
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
# ANSI: to column 0 and erase the line (the status line and an unused prompt are rewritten)
_CLEAR_LINE = "\r\x1b[2K"

log = logging.getLogger(__name__)


class _LineMarkdown(Markdown):
    """Markdown whose single newlines stay line breaks: the bot writes line by line (/help,
    the intro, lists of figures), and CommonMark would run such lines into one paragraph."""

    def __init__(self, markup: str) -> None:
        super().__init__(markup)
        for token in self.parsed:
            for child in token.children or ():
                if child.type == "softbreak":
                    child.type = "hardbreak"


def console_markdown(md: str) -> str:
    """`md` as the console renders it: CJK bold made renderable, and each table closed by a
    blank line before the first line that is not a row (GFM reads a line right under a table,
    such as the source line, as one more row, squeezed into the first column)."""
    out: list[str] = []
    in_table = in_code = False
    for line in cjk_bold(md).split("\n"):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
        row = not in_code and stripped.startswith("|")
        if in_table and not row and stripped:
            out.append("")
        in_table = row
        out.append(line)
    return "\n".join(out)


def status_of(event: Event, written: str) -> str | None:
    """The one status line an event of a run shows, or None when the event ends the run."""
    if isinstance(event, Status):
        return event.text
    if isinstance(event, ToolStarted):
        return event.label or event.name
    if isinstance(event, Thinking):
        return "…"
    if isinstance(event, TextDelta):
        lines = [ln.strip() for ln in written.splitlines() if ln.strip()]
        return f"✍ {lines[-1]}" if lines else "✍"
    if isinstance(event, Done | Failed):
        return None
    return ""  # another event (a tool finished, a file): the status line stays as it is


class ConsoleAdapter:
    name = "console"
    capabilities = Capabilities(
        max_message_length=100_000, can_edit=False, min_edit_interval_s=0.0,
        supports_images=True, supports_documents=True, supports_voice=False,
        supports_buttons=False, markup="rich",
    )

    def __init__(self, *, files_dir: Path, user: str = "local", console: Console | None = None,
                 stdin: TextIO | None = None, on_eof: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._files_dir = files_dir
        self._console = console or Console()
        self._stdin = stdin or sys.stdin
        self._clock = clock
        self._chat = ChatRef(platform="console", chat_id=user)
        self._sender = Sender(platform_uid=user, display_name=user)
        self._ids = itertools.count(1)
        self._texts: dict[str, str] = {}
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._pump: asyncio.Task[None] | None = None
        self._on_eof = on_eof
        # the status line (a terminal only): what it says while a run goes on, since when
        self._status: str | None = None
        self._status_since = 0.0
        self._written = ""  # the text a run has streamed so far (its last line is shown)
        self._status_shown = False
        self._prompt_shown = False
        # one timer at a time, owned here and cancelled by aclose: the prompt's or the spinner's
        self._timer: asyncio.TimerHandle | None = None
        self.closed = asyncio.Event()

    # --- the terminal ----------------------------------------------------------------------

    @property
    def _tty(self) -> bool:
        """A live terminal: the status line, the prompt and its erasing make sense only there."""
        return self._console.is_terminal and not self._console.is_dumb_terminal

    def _echoes(self) -> bool:
        """Whether the terminal already shows what was typed (else the console prints it)."""
        try:
            return bool(self._stdin.isatty())
        except (AttributeError, ValueError):
            return False

    def _write(self, raw: str) -> None:
        self._console.file.write(raw)
        self._console.file.flush()

    def _clear_line(self) -> None:
        """Erase what the console left on the cursor's line (status or unused prompt)."""
        if self._status_shown or self._prompt_shown:
            self._write(_CLEAR_LINE)
        self._status_shown = self._prompt_shown = False

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _arm(self, delay: float, callback: Callable[[], None]) -> None:
        self._cancel_timer()
        if self._tty and not self.closed.is_set():
            self._timer = asyncio.get_running_loop().call_later(delay, callback)

    def _draw_status(self) -> None:
        self._timer = None
        if self._status is None or not self._tty:
            return
        spin = SPINNER[int((self._clock() - self._status_since) / SPIN_EVERY_S) % len(SPINNER)]
        seconds = int(self._clock() - self._status_since)
        line = Text(f"{spin} {self._status}".rstrip() + f"  {seconds}s")
        line.truncate(max(self._console.width - 1, 10), overflow="ellipsis")
        self._clear_line()
        self._console.print(line, end="", soft_wrap=True, highlight=False)
        self._console.file.flush()
        self._status_shown = True
        self._arm(SPIN_EVERY_S, self._draw_status)

    def _show_prompt(self) -> None:
        self._timer = None
        if self._status is not None or self._prompt_shown or not self._tty:
            return
        self._clear_line()
        self._write(PROMPT)
        self._prompt_shown = True

    def _emit(self, renderable: Markdown | Text | str) -> None:
        """Print something for good: the status line and an unused prompt make way for it,
        then come back under it (the status while a run goes on, else the prompt)."""
        self._clear_line()
        self._console.print(renderable)
        if self._status is not None:
            self._draw_status()
        else:
            self._arm(PROMPT_AFTER_S, self._show_prompt)

    # --- input -----------------------------------------------------------------------------

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
        self._emit(Text.from_markup("[bold]Bullpen[/bold] console. Ask about a stock; /help for "
                                    "commands, /quit or Ctrl-D to leave."))
        self._pump = asyncio.create_task(self._run(on_message), name="console-pump")

    async def _run(self, on_message: MessageHandler) -> None:
        echoes = self._echoes()
        while True:
            line = await self._queue.get()
            if line is not None and echoes:
                # the Enter the user typed ended the prompt's line: the question stays on it
                self._prompt_shown = False
            if line is None or line.strip() in QUIT:
                break
            if not line.strip():
                if self._prompt_shown or echoes:
                    self._prompt_shown = False
                    self._arm(0, self._show_prompt)
                continue
            if not echoes:  # piped input: the transcript shows the question all the same
                self._emit(Text(PROMPT + line))
                self._cancel_timer()
            try:
                await on_message(IncomingMessage(
                    platform="console", chat=self._chat, sender=self._sender,
                    message_id=f"{id(self)}-{next(self._ids)}", text=line))
            except Exception as exc:  # one message failed: say so and keep reading
                log.exception("console message failed")
                self._emit(Text(f"That message could not be handled ({type(exc).__name__}); "
                                "try again.", style="red"))
        self._finish()
        self.closed.set()
        if self._on_eof is not None:
            self._on_eof()

    def _finish(self) -> None:
        """Input ended: the shell's prompt starts on a line of its own."""
        self._cancel_timer()
        if self._prompt_shown:
            self._write("\n")
            self._prompt_shown = False

    # --- output ----------------------------------------------------------------------------

    def _render(self, reply: Reply) -> Markdown | Text:
        if reply.markup == "markdown":
            return _LineMarkdown(console_markdown(reply.text))
        return Text(reply.text)

    async def observe(self, chat: ChatRef, ref: MessageRef | None, event: Event) -> None:
        """A run's progress, on the status line (never in the transcript)."""
        if isinstance(event, TextDelta):
            self._written += event.text
        status = status_of(event, self._written)
        if status is None:  # the run is over: its answer comes next, by `send`
            self._status = None
            self._written = ""
            self._cancel_timer()
            if self._status_shown:
                self._clear_line()
            return
        if status:
            if self._status is None:
                self._status_since = self._clock()
            self._status = status
            self._draw_status()

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        mid = str(next(self._ids))
        self._texts[mid] = reply.text
        if len(self._texts) > KEEP_TEXTS:  # only for `edit`'s "unchanged": the recent ones
            del self._texts[next(iter(self._texts))]
        self._emit(self._render(reply))
        return MessageRef(chat=chat, message_id=mid)

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        """The console does not edit (`can_edit=False`); a text changed anyway (a push that
        takes a message's place) is printed anew, an unchanged one not again."""
        if self._texts.get(ref.message_id) == reply.text:
            return
        self._texts[ref.message_id] = reply.text
        self._emit(self._render(reply))

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef:
        path = self._files_dir / "console" / file.filename

        def write() -> None:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(file.data)

        await asyncio.to_thread(write)
        self._emit(Text(f"📎 {file.kind}: {path}" + (f" — {file.caption}" if file.caption
                                                     else "")))
        return MessageRef(chat=chat, message_id=str(next(self._ids)))

    async def typing(self, chat: ChatRef) -> None:
        """A question is being answered: the status line says so until its first event."""
        if self._status is None:
            self._status_since = self._clock()
            self._status = ""
            self._written = ""
            self._draw_status()

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        return b""

    async def aclose(self) -> None:
        self._cancel_timer()
        self._status = None
        self._clear_line()
        if self._pump is not None:
            self._pump.cancel()
            try:
                await self._pump
            except asyncio.CancelledError:
                pass
            self._pump = None
