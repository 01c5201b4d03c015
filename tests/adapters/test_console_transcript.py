"""The console's pieces (issue 33 item 5): the renderer sends each answer once (the console
cannot edit), progress lives on one status line that is erased, the prompt comes back when the
output is quiet, Markdown keeps its lines and its tables end before the source line."""

from __future__ import annotations

import asyncio
import io
import re
from pathlib import Path

from rich.console import Console

from adapters.console import PROMPT, ConsoleAdapter, _LineMarkdown, console_markdown, status_of
from bot.commands import help_text
from bot.renderer import Renderer
from core.events import Done, Status, TextDelta, ToolFinished, ToolStarted
from core.types import ChatRef, Reply

CHAT = ChatRef(platform="console", chat_id="local")
_SGR = re.compile(r"\x1b\[[0-9;]*m|\x1b\]8;[^\x1b]*\x1b\\")


def screen(raw: str) -> list[str]:
    """What a terminal shows for `raw`: colours dropped, `\\r ESC[2K` erasing the cursor's line
    (the only control the console writes besides newlines)."""
    lines = [""]
    for part in re.split(r"(\r\x1b\[2K|\n)", _SGR.sub("", raw)):
        if part == "\n":
            lines.append("")
        elif part == "\r\x1b[2K":
            lines[-1] = ""
        else:
            lines[-1] += part
    return [ln.rstrip() for ln in lines]


def _adapter(tmp_path: Path, *, tty: bool) -> tuple[ConsoleAdapter, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=tty, color_system=None if not tty
                      else "standard")
    return ConsoleAdapter(files_dir=tmp_path, console=console, stdin=io.StringIO("")), out


def test_single_newlines_stay_line_breaks_so_help_keeps_its_lines() -> None:
    out = io.StringIO()
    Console(file=out, width=80).print(_LineMarkdown(help_text("en")))
    lines = [ln.rstrip() for ln in out.getvalue().splitlines()]
    assert "/fast QUESTION - One quick answer" in lines
    assert "/new - Start a new conversation" in lines
    assert any(ln.startswith("/mode [normal|debate|fast]") for ln in lines)


def test_a_table_ends_before_the_line_under_it() -> None:
    md = "Head\n| a | b |\n|---|---|\n| 1 | 2 |\nSource: snapshot\n\n```\n| x |\nplain\n```"
    assert console_markdown(md) == ("Head\n| a | b |\n|---|---|\n| 1 | 2 |\n\nSource: snapshot"
                                    "\n\n```\n| x |\nplain\n```")
    out = io.StringIO()
    Console(file=out, width=80).print(_LineMarkdown(console_markdown(md)))
    assert any(ln.strip() == "Source: snapshot" for ln in out.getvalue().splitlines())


def test_status_of_each_event() -> None:
    assert status_of(Status(text="Reading the question..."), "") == "Reading the question..."
    assert status_of(ToolStarted(call_id="1", name="get_ohlcv", label="NVDA prices"), "") \
        == "NVDA prices"
    assert status_of(TextDelta(text="x"), "first line\nsecond li") == "✍ second li"
    assert status_of(Done(text="a"), "") is None
    assert status_of(ToolFinished(call_id="1", name="get_ohlcv", ok=True), "") == ""


async def test_an_answer_is_printed_once_after_its_progress_and_the_prompt_returns(
        tmp_path: Path) -> None:
    console, out = _adapter(tmp_path, tty=True)
    assert not console.capabilities.can_edit  # the renderer sends the final text, once
    renderer = Renderer(console, CHAT, lang="en")
    await renderer.start()
    answer = "**NVIDIA** rose 5%.\nSecond line.\n\n| d | c |\n|---|---|\n| 1 | 2 |\nSource: x"
    for event in (Status(text="Reading the question..."),
                  ToolStarted(call_id="1", name="get_ohlcv", label="NVDA prices"),
                  TextDelta(text="NVIDIA rose"), TextDelta(text=" 5%.\nSecond"),
                  Done(text=answer, label="offline analyst")):
        await renderer.on_event(event)
    assert renderer.result.delivered
    raw = out.getvalue()
    assert "Reading the question..." in raw and "NVDA prices" in raw  # the status line ran
    shown = [ln for ln in screen(raw) if ln]
    # the answer once, its lines kept, the source line out of the table, no progress left
    assert shown == ["NVIDIA rose 5%.", "Second line.", " d  c", " ────", " 1  2",
                     "Source: x", "offline analyst"], shown
    await asyncio.sleep(0.4)  # quiet: the prompt comes back
    assert screen(out.getvalue())[-1] == PROMPT.rstrip()
    await console.send(CHAT, Reply(text="Queued.", markup="plain"))  # the prompt makes way
    after = screen(out.getvalue())
    assert after.count(PROMPT.rstrip()) == 0 and after[-2:] == ["Queued.", ""]
    await console.aclose()


async def test_piped_input_echoes_the_question_and_writes_no_controls(tmp_path: Path) -> None:
    out = io.StringIO()
    got: list[str] = []
    done = asyncio.Event()
    console = ConsoleAdapter(files_dir=tmp_path, stdin=io.StringIO("NVDA latest close\n"),
                             console=Console(file=out, width=80, force_terminal=False),
                             on_eof=done.set)

    async def on_message(msg) -> None:  # type: ignore[no-untyped-def]
        got.append(msg.text)
        await console.typing(CHAT)
        await console.observe(CHAT, None, Status(text="Reading the question..."))
        await console.observe(CHAT, None, Done(text="x"))
        await console.send(CHAT, Reply(text="NVIDIA closed at $138.85."))

    await console.start(on_message)
    await asyncio.wait_for(done.wait(), 10)
    await console.aclose()
    assert got == ["NVDA latest close"]
    text = out.getvalue()
    assert f"{PROMPT}NVDA latest close\n" in text
    assert text.count("NVIDIA closed at $138.85.") == 1
    assert "\x1b" not in text and "Reading the question" not in text


async def test_an_unchanged_edit_prints_nothing_a_changed_one_prints_anew(
        tmp_path: Path) -> None:
    console, out = _adapter(tmp_path, tty=False)
    ref = await console.send(CHAT, Reply(text="report", markup="plain"))
    await console.edit(ref, Reply(text="report", markup="plain"))
    await console.edit(ref, Reply(text="report, delivered later", markup="plain"))
    assert out.getvalue() == "report\nreport, delivered later\n"
