"""The console chat: typed lines in, the reply edited in place, files listed as paths."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from adapters.console import ConsoleAdapter


async def test_console_chat_answers_offline_and_lists_chart_path(make_app, tmp_path):
    out = io.StringIO()
    stdin = io.StringIO("NVDA latest close\nChart AAPL for the last 6 months\n/quit\n")
    async with make_app() as app:
        done = asyncio.Event()
        console = ConsoleAdapter(files_dir=tmp_path / "files", stdin=stdin,
                                 console=Console(file=out, width=120, force_terminal=False),
                                 on_eof=done.set)
        await app.start_adapters([console])
        await asyncio.wait_for(done.wait(), 30)
        await app.gateway.idle()
    text = out.getvalue()
    assert "NVIDIA" in text and "offline analyst" in text
    png = next((tmp_path / "files" / "console").glob("*.png"))
    flat = "".join(text.split())  # a long path is wrapped at the terminal's width
    assert str(png) in flat and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
