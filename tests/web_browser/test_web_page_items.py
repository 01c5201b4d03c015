"""Issue 33's page, item by item, in headless chromium against the real App, each at 390 px
(a phone) and 1280 px, in the light and the dark colour scheme: the empty chat's suggested
questions and coverage note in the page's language, the drawer on a phone, no horizontal
overflow; New chat, rename (still renamed after a reload), delete (gone after a reload) and
search; friendly progress in the page's language, Stop only while an answer runs, tables that
scroll with figures on one line and the source line after them, copy buttons; the file list
(each file once, thumbnails, dates, no script.json); the admin console's chart, status and
value-sorted SQL results. Screenshots go to tests/web_browser/artifacts/."""

from __future__ import annotations

import asyncio
import io
import json
import re
from typing import Any

from tests.fakes.openai_server import FakeOpenAI, Turn
from tests.web_browser.conftest import free_port
from tests.web_browser.test_web_page import ask, sign_in

COMBOS = [(390, "light"), (390, "dark"), (1280, "light"), (1280, "dark")]
BACKGROUND = {"light": "rgb(246, 247, 249)", "dark": "rgb(18, 21, 27)"}
# navigator.clipboard, recorded: what a copy button put there
CLIPBOARD = """
window.__copied = [];
Object.defineProperty(navigator, "clipboard", { configurable: true, value: {
  writeText: (text) => { window.__copied.push(text); return Promise.resolve(); } } });
"""
# elements that stick out of the viewport on the right (inside a scrolling box is fine)
OVERFLOW = """() => {
  const w = window.innerWidth;
  const out = [...document.querySelectorAll("header *, main *")].filter((n) => {
    if (n.closest(".table-wrap, .scroll, .card, #view, pre")) return false;
    const r = n.getBoundingClientRect();
    return r.width > 0 && r.right > w + 1;
  }).map((n) => n.tagName + "#" + n.id + "." + n.className);
  return { out, scroll: document.documentElement.scrollWidth, w };
}"""
# figures that wrap: a numeric cell whose text takes more than one line box
WRAPPED = """() => [...document.querySelectorAll(".msg.assistant td.num")].filter((td) => {
  const range = document.createRange();
  range.selectNodeContents(td);
  const tops = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
  return tops.size !== 1;
}).map((td) => td.textContent)"""
# the header's visible children, and whether they share one row (every box overlaps every other
# vertically: the lowest top is above the highest bottom)
HEADER_ROW = """() => {
  const kids = [...document.querySelector("header.bar").children]
    .map((n) => [n.id || n.className, n.getBoundingClientRect()])
    .filter(([, r]) => r.width > 0 && r.height > 0);
  const one = Math.max(...kids.map(([, r]) => r.top)) < Math.min(...kids.map(([, r]) => r.bottom));
  return { one, kids: kids.map(([id, r]) => [id, Math.round(r.top), Math.round(r.bottom)]) };
}"""
NEW_STARTED = re.compile("new conversation|新的对话")


async def table_answer(app: Any) -> tuple[str, str]:
    """The scripted model's answer: NVDA's last five sessions as a table, every figure taken
    from what the real `get_ohlcv` returns (the agent sends an answer with figures no tool
    returned back to the model, which would take the next combination's turns), then the
    source line and a code block; and the widest figure in it (a volume, mid-row)."""
    outcome = await app.registry.call("get_ohlcv", {"symbol": "NVDA", "period": "1mo"})
    assert outcome.ok, outcome.content
    data = json.loads(outcome.content)
    col = {name: i for i, name in enumerate(data["columns"])}
    rows = data["rows"][-5:]

    def price(row: list[Any], name: str) -> str:
        return f"{row[col[name]]:,.2f}"

    lines = [f"| {r[col['date']]} | {price(r, 'open')} | {price(r, 'high')} | {price(r, 'low')}"
             f" | {price(r, 'close')} | {int(r[col['volume']]):,} | {price(r, 'ma5')} |"
             for r in rows]
    wide = f"{int(rows[0][col['volume']]):,}"
    return ("NVDA, last five sessions:\n\n"
            "| Date | Open | High | Low | Close | Volume | MA5 |\n"
            "|---|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n"
            f"Source: offline snapshot, {rows[-1][col['date']]}\n\n"
            "```python\nprint('hello')\n```\n"), wide


async def page_for(chromium: Any, app: Any, width: int, scheme: str) -> tuple[Any, Any]:
    """A fresh browser context at `width` in `scheme`, signed in with a new one-time link."""
    from bot.web_links import login_link

    context = await chromium.new_context(
        viewport={"width": width, "height": 844 if width < 500 else 800}, color_scheme=scheme)
    await context.add_init_script(CLIPBOARD)
    user = await app.store.accounts.user_for("console", "local", "local")
    base = app.settings.web_links_base()
    page = await sign_in(context, await login_link(app.store, base, user))
    return context, page


async def check_frame(page: Any, width: int, scheme: str) -> None:
    """The colour scheme is followed, nothing sticks out sideways, and the header is one row
    (at 390 px it wrapped to two: the account's buttons now sit at the drawer's foot)."""
    assert await page.evaluate(
        "getComputedStyle(document.documentElement).backgroundColor") == BACKGROUND[scheme]
    found = await page.evaluate(OVERFLOW)
    assert found["out"] == [] and found["scroll"] <= found["w"], (width, found)
    header = await page.evaluate(HEADER_ROW)
    assert header["one"], (width, header["kids"])


async def switch_lang(page: Any, width: int) -> None:
    """The language button: in the header on a wide screen, at the drawer's foot on a phone."""
    await drawer(page, width)
    await page.click("#lang")
    await close_drawer(page, width)


async def drawer(page: Any, width: int) -> None:
    """The list of conversations and files in view (on a phone: the drawer opened)."""
    if width < 720:
        await page.click("#menu")
    await page.wait_for_function(
        "() => { const r = document.getElementById('drawer').getBoundingClientRect();"
        " return r.left >= -1 && r.right <= window.innerWidth + 1 && r.width > 100; }")


async def close_drawer(page: Any, width: int) -> None:
    if width < 720:
        await page.click("#scrim", position={"x": 370, "y": 400})
        await page.wait_for_function(
            "() => document.getElementById('drawer').getBoundingClientRect().right <= 0")


def tag(width: int, scheme: str) -> str:
    return f"{width}-{scheme}"


async def test_the_empty_chat_suggests_questions_and_says_what_the_data_covers(
        chromium: Any, serving: Any, shot: Any) -> None:
    async with serving(free_port()) as (app, _):
        for width, scheme in COMBOS:
            context, page = await page_for(chromium, app, width, scheme)
            await page.wait_for_selector("#empty:visible")
            assert await page.locator("#suggestions button").count() == 4
            await page.locator("#coverage-body table").wait_for()
            assert "US" in await page.inner_text("#coverage-body")
            # nothing runs (the previous run's question may still be finishing): no Stop
            await page.locator("#stop").wait_for(state="hidden", timeout=60_000)
            await check_frame(page, width, scheme)
            await shot(page, f"{tag(width, scheme)}-empty-en")
            await switch_lang(page, width)  # the page in Chinese: its suggestions and note too
            await page.locator("#suggestions button", has_text="浦发银行").wait_for()
            await page.locator("#coverage-body", has_text="美股").wait_for()
            assert "Ping An" not in await page.inner_text("#empty")
            await check_frame(page, width, scheme)
            await shot(page, f"{tag(width, scheme)}-empty-zh")
            # on a phone the lists are in a drawer, off the screen until opened
            if width < 720:
                assert await page.evaluate(
                    "document.getElementById('drawer').getBoundingClientRect().right") <= 0
            else:
                assert await page.locator("#menu").is_hidden()
            await drawer(page, width)
            await page.locator("#new-chat:visible").wait_for()
            await shot(page, f"{tag(width, scheme)}-drawer")
            await close_drawer(page, width)
            # a suggestion asks it
            await page.locator("#suggestions button").first.click()
            await page.locator("#log .msg.user", has_text="浦发银行").wait_for()
            await page.wait_for_selector("#empty", state="hidden")
            # New chat: empty again (and so for the next run)
            await drawer(page, width)
            await page.click("#new-chat")
            await page.wait_for_selector("#empty:visible")
            await page.locator("#log .msg.assistant", has_text=NEW_STARTED).wait_for(
                state="attached")  # the gateway has started it
            await context.close()


async def answered(page: Any, question: str) -> None:
    """Wait for the scripted answer to `question` (an "Answered." after it: the page opens on
    the chat's earlier messages, whose "Answered." says nothing about this question)."""
    await page.locator(f'#log .msg.user:has-text("{question}") ~ .msg.assistant'
                       ':has-text("Answered.")').first.wait_for()


async def search(page: Any, text: str) -> None:
    """Type into the search box and wait until the list shows that search's results (until
    then it shows the list from before, which may hold any number of rows)."""
    await page.fill("#search", text)
    await page.wait_for_function(
        "(q) => document.getElementById('convs').dataset.query === q", arg=text)


async def test_new_chat_rename_delete_and_search_persist_across_reloads(
        chromium: Any, serving: Any, shot: Any) -> None:
    async with FakeOpenAI(default=Turn(text="Answered.")) as llm, \
            serving(free_port(), llm=llm) as (app, _):
        for width, scheme in COMBOS:
            name = tag(width, scheme)
            context, page = await page_for(chromium, app, width, scheme)
            page.on("dialog", lambda d: asyncio.ensure_future(d.accept()))
            await ask(page, f"first question topic{name}")
            await answered(page, f"first question topic{name}")
            # New chat: an empty conversation; the first is in the list
            await drawer(page, width)
            await page.click("#new-chat")
            await page.wait_for_selector("#empty:visible")
            await ask(page, f"second question other{name}")
            await page.locator("#log .msg.user", has_text=f"other{name}").wait_for()
            assert "topic" not in await page.inner_text("#log")

            # search finds the first by its text, and only it
            await drawer(page, width)
            await search(page, f"topic{name}")
            assert await page.locator("#convs li[data-id]").count() == 1
            conv_id = await page.locator("#convs li[data-id]").get_attribute("data-id")
            assert conv_id
            first = page.locator(f'#convs li[data-id="{conv_id}"]')
            await check_frame(page, width, scheme)
            await shot(page, f"{name}-search")

            # rename: shown at once, and after a reload
            await first.locator("button.rename").click()
            await first.locator("input.rename").fill(f"Renamed {name}")
            await first.locator("input.rename").press("Enter")
            await page.locator(f'#convs li[data-id="{conv_id}"]',
                               has_text=f"Renamed {name}").wait_for()
            await page.reload()
            await page.wait_for_selector("body[data-ready]")
            await drawer(page, width)
            await page.locator(f'#convs li[data-id="{conv_id}"]',
                               has_text=f"Renamed {name}").wait_for()
            await search(page, f"Renamed {name}")
            assert await page.locator("#convs li[data-id]").count() == 1
            await shot(page, f"{name}-renamed")

            # delete: gone at once, after a reload, and from the search
            await page.locator(f'#convs li[data-id="{conv_id}"] button.delete').click()
            await page.locator(f'#convs li[data-id="{conv_id}"]').wait_for(state="detached")
            await page.reload()
            await page.wait_for_selector("body[data-ready]")
            await drawer(page, width)
            await page.locator("#convs li[data-id]").first.wait_for()
            assert await page.locator(f'#convs li[data-id="{conv_id}"]').count() == 0
            await search(page, f"topic{name}")
            await page.locator("#convs li.note").wait_for()
            assert await page.locator("#convs li[data-id]").count() == 0
            await check_frame(page, width, scheme)
            await shot(page, f"{name}-deleted")
            await context.close()


async def test_progress_in_words_stop_while_running_tables_that_fit_and_copy(
        chromium: Any, serving: Any, shot: Any) -> None:
    async with FakeOpenAI(default=Turn(text="Answered.")) as llm, \
            serving(free_port(), llm=llm) as (app, _):
        answer_text, wide = await table_answer(app)
        for _ in COMBOS:
            llm.script += [Turn(tool_calls=[("get_ohlcv", {"symbol": "NVDA", "period": "1mo"})]),
                           Turn(text=answer_text, chunk=6, chunk_delay_s=0.04)]
        for width, scheme in COMBOS:
            name = tag(width, scheme)
            zh = scheme == "dark"  # the dark runs read the page in Chinese
            context, page = await page_for(chromium, app, width, scheme)
            if zh:
                await switch_lang(page, width)
            assert await page.locator("#stop").is_hidden()
            await ask(page, "NVDA last week, as a table")
            await page.locator("#stop:visible").wait_for()  # running: Stop is there
            label = "获取 NVDA 的历史行情" if zh else "Fetching price history of NVDA"
            await page.locator("#log .progress .tool", has_text=label).wait_for()
            assert "Fetching NVDA bars" not in await page.inner_text("#log")  # the bot's label
            await shot(page, f"{name}-running")
            answer = page.locator("#log .msg.assistant", has_text="Source: offline").last
            await answer.locator("table").wait_for(timeout=30_000)
            await page.locator("#stop").wait_for(state="hidden")  # idle again
            text = await page.inner_text("#log")
            assert "get_ohlcv" not in text and "Fetching NVDA bars" not in text

            # the table: figures on one line, the source line after it, not a row
            table = answer.locator("table")
            assert "Source:" not in await table.inner_text()
            assert await answer.locator("p", has_text="Source: offline snapshot").count() == 1
            assert await answer.locator("td.num").count() == 35  # 7 a row: the date too
            assert await page.evaluate(WRAPPED) == []
            wrap = answer.locator(".table-wrap")
            sizes = await wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
            if width < 500:
                assert sizes[0] > sizes[1]  # too wide for a phone: it scrolls, sideways
            await check_frame(page, width, scheme)
            await shot(page, f"{name}-table")

            # copy: the answer, the table (tab-separated), the code
            await answer.locator(".actions button.copy").click()
            copied = await page.evaluate("window.__copied")
            assert "| Date | Open |" in copied[-1] and "Source: offline snapshot" in copied[-1]
            await answer.locator("button.copy[data-label=copy_table]").click()
            copied = await page.evaluate("window.__copied")
            assert copied[-1].splitlines()[0].split("\t")[:2] == ["Date", "Open"]
            assert f"\t{wide}\t" in copied[-1]
            await answer.locator("button.copy[data-label=copy_code]").click()
            assert (await page.evaluate("window.__copied"))[-1].strip() == "print('hello')"
            copied_word = "已复制" if zh else "Copied"
            await answer.locator("button.copy", has_text=copied_word).first.wait_for()
            await context.close()


async def first_column(page: Any) -> list[str]:
    return list(await page.locator("#result tr td:nth-child(1)").all_inner_texts())


def _png(color: tuple[int, int, int]) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (120, 80), color).save(out, format="PNG")
    return out.getvalue()


async def test_files_once_each_with_thumbnails_and_dates_and_no_internal_files(
        chromium: Any, serving: Any, shot: Any) -> None:
    from core.types import ChatRef, OutgoingFile

    async with serving(free_port()) as (app, _):
        user = await app.store.accounts.user_for("console", "local", "local")
        await app.store.web.web_account(user)
        conv = await app.store.conversations.active(
            ChatRef(platform="web", chat_id=f"web:{user}"), user)
        chart = OutgoingFile(kind="image", filename="nvda-6mo.png", data=_png((31, 111, 235)),
                             mime_type="image/png")
        for _ in range(3):
            await app.store.files.save(chart, user_id=user, conversation_id=conv.id)
        await app.store.files.save(OutgoingFile(
            kind="document", filename="script.json", data=b'{"chapter": 1}',
            mime_type="application/json"), user_id=user, conversation_id=conv.id)
        await app.store.files.save(OutgoingFile(
            kind="document", filename="report.pdf", data=b"%PDF-1.4\n",
            mime_type="application/pdf"), user_id=user, conversation_id=conv.id)
        for width, scheme in COMBOS:
            context, page = await page_for(chromium, app, width, scheme)
            await drawer(page, width)
            await page.locator("#files li", has_text="report.pdf").wait_for()
            names = await page.locator("#files li .name").all_inner_texts()
            assert sorted(names) == ["nvda-6mo.png", "report.pdf"]
            thumb = page.locator("#files li img.thumb")
            assert await thumb.count() == 1
            await page.wait_for_function(
                "() => { const i = document.querySelector('#files img.thumb');"
                " return i && i.complete && i.naturalWidth === 120; }")
            dates = await page.locator("#files li .sub").all_inner_texts()
            assert all(len(d) == 16 and d[4] == "-" and d[10] == " " for d in dates), dates
            await check_frame(page, width, scheme)
            await shot(page, f"{tag(width, scheme)}-files")
            await context.close()


async def test_the_admin_console_shows_usage_status_and_sorts_by_value(
        chromium: Any, serving: Any, shot: Any) -> None:
    async with FakeOpenAI(default=Turn(text="Answered.")) as llm, \
            serving(free_port(), llm=llm) as (app, _):
        for width, scheme in COMBOS:
            context, page = await page_for(chromium, app, width, scheme)
            await ask(page, f"usage {width} {scheme}")
            await answered(page, f"usage {width} {scheme}")
            admin = await context.new_page()
            await admin.goto(page.url.rstrip("/") + "/admin")
            await admin.wait_for_selector("body[data-ready]")
            assert await admin.locator("#usage-chart svg rect").count() == 28  # 14 days x 2
            heights = await admin.locator("#usage-chart rect.q").evaluate_all(
                "rs => rs.map((r) => Number(r.getAttribute('height')))")
            assert heights[-1] > 0 and heights[:-1] == [0] * 13  # today's questions
            people = await admin.inner_text("#people")
            assert "local" in people
            assert "web" in await admin.inner_text("#platforms")
            assert "fake-model" in await admin.inner_text("#model")
            await admin.wait_for_selector("#tables li")
            await admin.fill("#sql", "SELECT n, n::text AS t FROM (VALUES (10), (2), (100),"
                                     " (1)) v(n)")
            await admin.click("#run")
            await admin.wait_for_selector("#result td")

            await admin.click("#result th >> nth=0")
            assert await first_column(admin) == ["1", "2", "10", "100"]  # numbers as numbers
            await admin.click("#result th >> nth=0")
            assert await first_column(admin) == ["100", "10", "2", "1"]
            assert await admin.get_attribute("#result th >> nth=0", "aria-sort") == "descending"
            await check_frame(admin, width, scheme)
            await shot(admin, f"{tag(width, scheme)}-admin")
            await context.close()
