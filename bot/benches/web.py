"""`bullpen bench web`: time from send to first visible text on the web page, through a real
browser (Debian's chromium driven by Playwright: the `web-test` extra, `make test-web` installs
it), next to the same question on the Telegram fake; and the page's first-load bytes.

One App (embedded Postgres in a temp dir) runs both adapters at their production settings
(their own edit intervals, reported) on the real `openai` client against
the local OpenAI-compatible fake, which streams the same answer for every question. The
questions alternate between the two, `repeat` rounds.

- web: from the Enter key's event in the page to the DOM mutation that shows the answer's
  first words (a MutationObserver, both on the page's clock). The page draws the model's text
  as it streams (the run's text deltas), not only at the renderer's throttled edits.
- telegram (the peer): from the update being queued at the fake Bot API to the fake answering
  the first sendMessage / editMessageText that carries the answer's first words (the fake's
  clock; no client drawing is counted).
- first load: the bytes a fresh browser context receives for the page (HTML, CSS, JS: headers
  and bodies), and with its first API calls.
"""

from __future__ import annotations

import asyncio
import importlib
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
FAKES = Path(__file__).resolve().parents[2] / "tests" / "fakes"
QUESTION = "Good morning, desk: anything to flag before the bell?"
ANSWER = ("Good morning. Nothing unusual overnight: the snapshot is quiet, breadth looks "
          "normal and the desk has no alerts before the bell.")
NEEDLE = "Nothing unusual overnight"
TG_CHAT = 4242
PEER = ("the same question on the Telegram fake (python-telegram-bot polling the fake Bot API), "
        "same App, same model stream, Telegram's production edit interval")

# resolves with the time from the Enter key to the answer's first words on the page
_WATCH = """(needle) => new Promise((resolve) => {
  const before = new Set(document.querySelectorAll('#log .msg.assistant'));
  let sent = null;
  document.querySelector('#text').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && sent === null) sent = performance.now();
  }, { once: true });
  const seen = () => [...document.querySelectorAll('#log .msg.assistant')]
    .some((m) => !before.has(m) && m.textContent.includes(needle));
  const obs = new MutationObserver(() => {
    if (sent !== null && seen()) { obs.disconnect(); resolve(performance.now() - sent); }
  });
  obs.observe(document.querySelector('#log'), { childList: true, subtree: true,
                                                characterData: true });
})"""


async def launch_chromium(playwright: Any) -> Any:
    """Debian's chromium (never a browser build of Playwright's own)."""
    return await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


def _fakes() -> tuple[Any, Any]:
    """The loopback fakes from the source checkout's tests/fakes."""
    if not FAKES.exists():
        raise FileNotFoundError(f"the web bench needs the source checkout's {FAKES}")
    if str(FAKES) not in sys.path:
        sys.path.insert(0, str(FAKES))
    return importlib.import_module("openai_server"), importlib.import_module("telegram_server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _summary(values_ms: list[float]) -> dict[str, float]:
    ordered = sorted(values_ms)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"n": len(ordered), "median_ms": round(statistics.median(ordered), 1),
            "p99_ms": round(p99, 1), "min_ms": round(ordered[0], 1),
            "max_ms": round(ordered[-1], 1)}


def run(*, repeat: int = 15) -> Any:
    try:
        importlib.import_module("playwright.async_api")
    except ImportError:
        raise RuntimeError("the web bench drives a browser: install the `web-test` extra "
                           "(`make test-web` does) and Debian's chromium") from None
    if not Path(CHROMIUM).exists():
        raise RuntimeError(f"{CHROMIUM} is missing: apt-get install chromium")
    return _run(rounds=max(1, repeat))


async def _run(*, rounds: int) -> dict[str, Any]:
    from playwright.async_api import async_playwright

    from adapters.telegram import TelegramAdapter
    from bot.app import App
    from bot.commands import COMMANDS
    from bot.settings import load_settings
    from bot.web_links import login_link

    openai_fake, telegram_fake = _fakes()
    stream = openai_fake.Turn(text=ANSWER, chunk=8, chunk_delay_s=0.02)
    web_ms: list[float] = []
    tg_ms: list[float] = []
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="bullpen-bench-web-") as tmp:
        async with openai_fake.FakeOpenAI(default=stream) as llm, \
                telegram_fake.FakeTelegram() as tg:
            settings = load_settings(data_dir=Path(tmp), llm_base_url=llm.base_url,
                                     llm_model="fake-model", llm_plan=False, web_port=port,
                                     rate_messages_per_minute=0)
            app = await App.create(settings)
            try:
                telegram = TelegramAdapter(token=tg.token, base_url=tg.base_url,
                                           base_file_url=tg.base_file_url,
                                           commands=list(COMMANDS))
                [web_adapter] = app.build_adapters(["web"])
                await app.start_adapters([web_adapter, telegram], jobs=False)
                intervals = {"web": web_adapter.capabilities.min_edit_interval_s,
                             "telegram": telegram.capabilities.min_edit_interval_s}
                user = await app.store.accounts.user_for("console", "bench", "bench")
                base = f"http://127.0.0.1:{port}"
                async with async_playwright() as pw:
                    browser = await launch_chromium(pw)
                    try:
                        first_load = await _first_load(
                            browser, base, await login_link(app.store, base, user))
                        page = await _signed_in(browser, await login_link(app.store, base, user))
                        for _ in range(rounds):
                            web_ms.append(await _ask_web(page))
                            await app.gateway.idle()
                            tg_ms.append(await _ask_telegram(tg, telegram_fake))
                            await app.gateway.idle()
                    finally:
                        await browser.close()
            finally:
                await app.aclose()
    web, peer = _summary(web_ms), _summary(tg_ms)
    return {
        "bench": "web", "rounds": rounds,
        "web_first_visible_text": web,
        "peer": PEER, "telegram_first_visible_text": peer,
        "ratio_median_web_over_telegram": round(web["median_ms"] / peer["median_ms"], 3),
        "first_load": first_load,
        "first_load_under_100kb": first_load["page_bytes"] < 100_000,
        "edit_interval_s": intervals,
        "model_stream": {"answer_chars": len(ANSWER), "chunk_chars": 8, "chunk_delay_s": 0.02},
    }


async def _first_load(browser: Any, base: str, link: str) -> dict[str, Any]:
    """What a fresh browser (empty cache) receives: signed out (the sign-in hint), and signed
    in (the chat page's HTML, CSS and JS; and everything up to the drawn chat, its first API
    calls included). Headers and bodies, as Playwright reports their sizes."""

    async def load(storage: Any) -> list[tuple[str, int]]:
        context = await browser.new_context(storage_state=storage)
        sizes: list[tuple[str, int]] = []

        async def finished(request: Any) -> None:
            got = await request.sizes()
            sizes.append((request.resource_type,
                          int(got["responseBodySize"]) + int(got["responseHeadersSize"])))

        context.on("requestfinished", finished)
        page = await context.new_page()
        await page.goto(base + "/", wait_until="networkidle")
        await context.close()
        return sizes

    signed_out = await load(None)
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(link)
    await page.click("#signin")
    await page.wait_for_selector("body[data-ready]")
    storage = await context.storage_state()
    await context.close()
    signed_in = await load(storage)
    return {"signed_out_bytes": sum(n for _, n in signed_out),
            "page_bytes": sum(n for kind, n in signed_in
                              if kind in ("document", "stylesheet", "script")),
            "with_api_calls_bytes": sum(n for _, n in signed_in)}


async def _signed_in(browser: Any, link: str) -> Any:
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(link)
    await page.click("#signin")
    await page.wait_for_selector("body[data-ready]")
    return page


async def _ask_web(page: Any) -> float:
    watch = asyncio.ensure_future(page.evaluate(_WATCH, NEEDLE))
    await asyncio.sleep(0.05)  # the observer is in place
    await page.fill("#text", QUESTION)
    await page.press("#text", "Enter")
    return float(await asyncio.wait_for(watch, 30))


async def _ask_telegram(tg: Any, telegram_fake: Any) -> float:
    before = len(tg.calls)
    sent = time.monotonic()
    tg.push(tg.message(TG_CHAT, QUESTION))
    end = sent + 30
    while time.monotonic() < end:
        for call in tg.calls[before:]:
            if call.method in ("sendMessage", "editMessageText") and NEEDLE in str(
                    call.params.get("text", "")) and call.t > sent:
                return float(call.t - sent) * 1000
        await asyncio.sleep(0.005)
    raise TimeoutError("the Telegram answer did not show")
