"""The chat page as a person uses it, in headless chromium against the real App: sign in with a
one-time link, ask and watch the answer grow, reload mid-answer and see it continue, stop an
answer, share the conversation and open the link in a fresh browser context, revoke it, run
SELECT in the admin console and be refused on DELETE; then (the offline analyst) open a chart
and download a PDF. Script typed into the chat stays text."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.web_browser.conftest import free_port

LAST_ANSWER = "#log .msg.assistant >> nth=-1"
WORKING = "Working on it"


def answer(words: int, tag: str) -> str:
    """Plain prose (not a data question's answer) that ends with `tag`."""
    body = " ".join(f"word{i}" for i in range(words))
    return f"Here is a long explanation. {body} {tag}"


async def sign_in(context: Any, link: str) -> Any:
    page = await context.new_page()
    await page.goto(link)
    await page.click("#signin")  # the link's page asks first: a link preview cannot use it
    await page.wait_for_selector("#composer")
    await page.wait_for_selector("body[data-ready]")  # the chat is drawn
    return page


async def ask(page: Any, text: str) -> None:
    await page.fill("#text", text)
    await page.press("#text", "Enter")


async def answer_text(page: Any) -> str:
    found = page.locator(LAST_ANSWER)
    if await found.count() == 0:
        return ""
    text = str(await found.inner_text())
    return "" if WORKING in text else text


async def lengths_until(page: Any, done: Callable[[str], bool], *,
                        within_s: float = 30.0) -> list[int]:
    """The answer's visible length, sampled every 50 ms until `done(text)`."""
    seen: list[int] = []
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        text = await answer_text(page)
        if not seen or len(text) != seen[-1]:
            seen.append(len(text))
        if done(text):
            return seen
        await asyncio.sleep(0.05)
    raise AssertionError(f"the answer did not finish; lengths seen: {seen[-10:]}")


async def test_ask_watch_reload_stop_share_and_admin(chromium: Any, serving: Any,
                                                     shot: Any) -> None:
    port = free_port()
    grow = answer(120, "ENDONE")
    resume = answer(160, "ENDTWO")
    endless = answer(600, "ENDTHREE")
    script = [Turn(text=grow, chunk=8, chunk_delay_s=0.05),
              Turn(text=resume, chunk=8, chunk_delay_s=0.06),
              Turn(text=endless, chunk=8, chunk_delay_s=0.08)]
    async with FakeOpenAI(script, default=Turn(text="Answered.")) as llm, \
            serving(port, llm=llm) as (_, link):
        context = await chromium.new_context()
        page = await sign_in(context, link)
        await shot(page, "01-signed-in")

        # ask, and watch the answer grow
        await ask(page, "Walk me through how you think about a long explanation")
        await page.wait_for_selector("#log .msg.user")
        lengths = await lengths_until(page, lambda t: "ENDONE" in t)
        growing = [n for n in lengths if n > 0]
        assert len(growing) >= 3, lengths  # shown in steps, not all at once
        assert growing == sorted(growing)
        await shot(page, "02-answered")

        # reload mid-answer: the page reattaches and the answer continues
        await ask(page, "And a second, longer one please")
        await page.locator("#log .msg.assistant", has_text="word20").last.wait_for()
        await page.reload()
        await page.wait_for_selector("#composer")
        await page.locator("#log .msg.assistant", has_text="word").last.wait_for()
        after_reload = await answer_text(page)
        await shot(page, "03-reloaded-mid-answer")
        assert "ENDTWO" not in after_reload
        lengths = await lengths_until(page, lambda t: "ENDTWO" in t)
        assert lengths[-1] > len(after_reload)
        # the earlier question and answer are still there, once each
        log = await page.inner_text("#log")
        assert log.count("ENDONE") == 1 and log.count("ENDTWO") == 1

        # stop an answer
        await ask(page, "Now a very long one")
        await page.locator("#log .msg.assistant", has_text="word10").last.wait_for()
        await page.click("#stop")
        await page.locator("#log .msg", has_text="Stopped").last.wait_for(timeout=15_000)
        await shot(page, "04-stopped")
        await asyncio.sleep(1.0)
        assert "ENDTHREE" not in await page.inner_text("#log")

        # share, open the link in a fresh browser context, revoke
        await page.click("#share")
        await page.wait_for_selector("#share-link:visible")
        url = await page.inner_text("#share-link")
        assert f"127.0.0.1:{port}/s/" in url
        stranger = await chromium.new_context()
        public = await stranger.new_page()
        response = await public.goto(url)
        assert response.status == 200
        assert (response.headers.get("x-robots-tag") or "").startswith("noindex")
        shared_text = await public.inner_text("body")
        assert "ENDONE" in shared_text and "ENDTWO" in shared_text
        await shot(public, "05-shared-page")
        await page.click("#unshare")
        await page.wait_for_selector("#shared", state="hidden")
        response = await public.reload()
        assert response.status == 404
        await shot(public, "06-share-revoked")
        await stranger.close()

        # the admin console: SELECT answers, DELETE gets Postgres's refusal
        admin = await context.new_page()
        await admin.goto(f"http://127.0.0.1:{port}/admin")
        await admin.wait_for_selector("#tables li")
        await admin.fill("#sql", "SELECT count(*) AS people FROM users")
        await admin.click("#run")
        await admin.wait_for_selector("#result th")
        assert await admin.inner_text("#result th") == "people"
        await shot(admin, "07-admin-select")
        await admin.fill("#sql", "DELETE FROM users")
        await admin.click("#run")
        await admin.wait_for_selector("#error:visible")
        assert "cannot execute DELETE in a read-only transaction" in await admin.inner_text(
            "#error")
        await shot(admin, "08-admin-delete-refused")
        await context.close()


async def test_a_chart_opens_a_pdf_downloads_and_script_stays_text(
        chromium: Any, serving: Any, shot: Any) -> None:
    port = free_port()
    async with serving(port) as (_, link):  # the offline analyst: charts and a debate PDF
        context = await chromium.new_context(accept_downloads=True)
        page = await sign_in(context, link)

        # script typed into the chat is shown as text and never runs
        await ask(page, "<img src=x onerror=\"window.__xss=1\"> <script>window.__xss=2</script>")
        await page.locator("#log .msg.user", has_text="onerror").wait_for()
        assert await page.evaluate("window.__xss === undefined")
        assert await page.locator("#log .msg.user img").count() == 0
        # ... and through a symbol: the bot's answer about it shows it as text too
        answers = await page.locator("#log .msg.assistant").count()
        await ask(page, "/chart <img src=x onerror=\"window.__xss=3\">")
        await page.locator("#log .msg.assistant").nth(answers).wait_for()
        await page.locator("#log .msg.assistant", has_text=WORKING).wait_for(state="detached")
        assert await page.evaluate("window.__xss === undefined")
        assert await page.locator("#log .msg img").count() == 0
        await shot(page, "00-script-stays-text")

        await ask(page, "/chart NVDA 6mo")
        chart = page.locator("#log img.chart").last
        await chart.wait_for(timeout=60_000)
        for _ in range(100):  # the image loaded (from /live/... or /files/...)
            if await chart.evaluate("i => i.complete && i.naturalWidth") > 100:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the chart did not load")
        await chart.click()
        await page.wait_for_selector("#lightbox[open] img")
        await shot(page, "01-chart-open")
        await page.click("#lightbox button")

        await ask(page, "/debate NVDA")
        link_to_pdf = page.locator("#log a.download", has_text=".pdf").last
        await link_to_pdf.wait_for(timeout=120_000)
        async with page.expect_download() as info:
            await link_to_pdf.click()
        download = await info.value
        path = await download.path()
        assert (await asyncio.to_thread(path.read_bytes)).startswith(b"%PDF-")
        assert download.suggested_filename.endswith(".pdf")
        await shot(page, "02-pdf-downloaded")

        # the files list has both, and a reload draws them from the store
        await page.reload()
        await page.wait_for_selector("body[data-ready]")
        await page.locator("#files li", has_text=".pdf").first.wait_for()
        await page.locator("#log img.chart").first.wait_for()
        await page.locator("#log a.download", has_text=".pdf").first.wait_for()
        assert await page.evaluate("window.__xss === undefined")
        await context.close()
