"""The README's picture of a chat (docs/screenshot-chat.png), taken from the real page: the
offline analyst answers a Chinese question with a chart in headless chromium. It rewrites a
tracked file, so it runs only when asked: `BULLPEN_TEST_WEB=1 BULLPEN_README_SHOT=1
.venv/bin/python -m pytest -q tests/web_browser/test_readme_screenshot.py` (`make test` skips
the browser suite, `make test-web` this file)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import pytest

from tests.web_browser.conftest import free_port
from tests.web_browser.test_web_page import ask
from tests.web_browser.test_web_page_items import page_for
from tools.data.config import DEFAULT_PACKS_DIR

SHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot-chat.png"
QUESTION = "画出浦发银行最近三个月的K线图"
MAX_BYTES = 200_000

pytestmark = pytest.mark.skipif(os.environ.get("BULLPEN_README_SHOT") != "1",
                                reason="rewrites docs/screenshot-chat.png: BULLPEN_README_SHOT=1")


def small_png(png: bytes) -> bytes:
    """The screenshot in 128 colours: the README's picture stays small."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=128, dither=0)
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()


async def test_the_readme_screenshot_is_a_real_chinese_answer_with_a_chart(
        chromium: Any, serving: Any, tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()  # the App's data directory, with the installed packs
    (tmp_path / "data" / "packs").symlink_to(DEFAULT_PACKS_DIR)
    async with serving(free_port()) as (app, _):
        context, page = await page_for(chromium, app, 1100, "light")
        await page.click("#lang")
        await ask(page, QUESTION)
        answer = page.locator("#log .msg.assistant", has_text="浦发银行").last
        await answer.locator(".actions button.copy").wait_for(timeout=120_000)  # final
        chart = page.locator("#log .msg.file img.chart").last
        await chart.wait_for(timeout=120_000)
        await page.locator("#stop").wait_for(state="hidden")
        await page.set_viewport_size({"width": 1100, "height": 920})  # the whole answer
        await page.locator("#files img.thumb").wait_for()
        await page.wait_for_function(
            "() => [...document.querySelectorAll('#log img.chart, #files img.thumb')]"
            ".every((i) => i.complete && i.naturalWidth > 0)")
        await page.evaluate("() => { const log = document.getElementById('log');"
                            " log.scrollTop = log.scrollHeight; }")
        png = small_png(await page.screenshot())
        assert len(png) < MAX_BYTES, len(png)
        SHOT.write_bytes(png)
        print(f"screenshot: {SHOT} ({len(png)} bytes)")
        await context.close()
