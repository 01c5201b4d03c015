"""What `bullpen serve` tells its operator as it starts (issue 33): one line per platform with
what it listens on (the web page's URL and how to sign in), the model in use or the offline
analyst, the symbols directory while it loads (a line every `every_s` until it is ready), the
data coverage in one line, then `ready`.

The lines are INFO records of the `bullpen.startup` logger, in the operator's language
(`BULLPEN_OPERATOR_LANG`, else the locale): shown by default under `serve` with platforms,
collected like any other line under `BULLPEN_LOG_FORMAT=json`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from bot import malloc
from core.words import t

if TYPE_CHECKING:
    from bot.app import App
    from bot.settings import Settings
    from core.ports import Adapter

log = logging.getLogger("bullpen.startup")

EVERY_S = 10.0  # how often a step that is still running says so
MARKETS = ("cn", "us", "crypto", "fx")


def platform_line(adapter: Adapter, settings: Settings, lang: str) -> str:
    """What `adapter` listens on, from the settings it was built from (with WEB_PORT=0 the
    web page's URL from the adapter: only the bound socket knows its port)."""
    s = settings
    name = adapter.name
    if name == "web":
        url = s.web_links_base() or getattr(adapter, "base_url", "") or "?"
        return t("startup.web", lang, url=url)
    if name == "telegram":
        if s.telegram_webhook_url:
            return t("startup.telegram_webhook", lang, url=s.telegram_webhook_url,
                     host=s.telegram_webhook_listen, port=s.telegram_webhook_port)
        return t("startup.telegram_polling", lang)
    if name == "discord":
        parts = []
        if s.discord_gateway:
            parts.append(t("startup.discord_gateway", lang))
        if s.discord_interactions_port:
            parts.append(t("startup.discord_interactions", lang,
                           host=s.discord_interactions_listen,
                           port=s.discord_interactions_port,
                           path=s.discord_interactions_path))
        return "; ".join(parts) or t("startup.started", lang, platform=name)
    if name == "slack":
        if s.slack_app_token:
            return t("startup.slack_socket", lang)
        return t("startup.slack_events", lang, host=s.slack_events_listen,
                 port=s.slack_events_port, path=s.slack_events_path)
    if name in ("wechat", "wecom"):
        listen, port, path = ((s.wechat_listen, s.wechat_port, s.wechat_path)
                              if name == "wechat" else
                              (s.wecom_listen, s.wecom_port, s.wecom_path))
        return t("startup.callbacks", lang, platform=name, host=listen, port=port, path=path)
    if name == "console":
        return t("startup.console", lang)
    return t("startup.started", lang, platform=name)


def model_line(app: App, lang: str) -> str:
    """The model that answers, or why the offline analyst does."""
    from bot.app import answering_profile
    from bot.model_check import RECHECK_S

    profile = answering_profile(app.settings, app.llm)
    if profile is None:
        return t("startup.model_none", lang)
    if app.model_problem is not None:
        return t("startup.model_down", lang, model=profile.model, url=profile.base_url,
                 seconds=f"{RECHECK_S:g}")
    return t("startup.model", lang, model=profile.model, url=profile.base_url)


def data_line(settings: Settings, lang: str) -> str:
    """The data packs installed and, per market, the span of the offline history they give
    (read from the snapshot itself, as the offline analyst's coverage table is)."""
    from analyst.offline import snapshot_coverage
    from tools import snapshot
    from tools.data import packs

    manifest = packs.manifest()
    missing = [p.name for p in manifest if packs.state_of(p, settings.packs_dir)[0]
               != "installed"]
    spans: dict[str, list[tuple[str, str]]] = {}
    for symbol, _name, series in snapshot_coverage():
        daily = [(a, b) for i, a, b in series if i == "1d"] or [(a, b) for _, a, b in series]
        spans.setdefault(snapshot.info(symbol).market, []).append(
            (min(a for a, _ in daily), max(b for _, b in daily)))
    text = "; ".join(
        t("startup.data_span", lang, market=t(f"startup.market_{m}", lang),
          first=min(a for a, _ in spans[m]), last=max(b for _, b in spans[m]),
          n=len(spans[m]))
        for m in MARKETS if m in spans) or t("startup.data_none", lang)
    line = t("startup.data", lang, installed=len(manifest) - len(missing), total=len(manifest),
             dir=settings.packs_dir, spans=text)
    if missing:
        line += t("startup.data_missing", lang, names=", ".join(missing))
    return line


async def while_saying(work: Callable[[], Any], still: Callable[[float], None], *,
                       every_s: float = EVERY_S) -> Any:
    """Run the blocking `work` on a daemon thread; every `every_s` until it ends,
    `still(seconds)`. A daemon thread, not the loop's executor: a serve stopped while the
    directory builds exits at once instead of waiting out the build."""
    loop = asyncio.get_running_loop()
    result: asyncio.Future[Any] = loop.create_future()

    def settle(value: Any, error: BaseException | None) -> None:
        if not result.done():
            if error is not None:
                result.set_exception(error)
            else:
                result.set_result(value)

    def run() -> None:
        try:
            value, error = work(), None
        except Exception as exc:
            value, error = None, exc
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=run, name="startup-work", daemon=True).start()
    start = time.monotonic()
    while True:
        done, _ = await asyncio.wait({result}, timeout=every_s)
        if done:
            return result.result()
        still(time.monotonic() - start)


async def load_symbols(lang: str, *, every_s: float = EVERY_S) -> None:
    """Load the process-wide symbols directory now, saying so while it loads, rather than in
    the first question that needs it (the first start builds it from the packages: ~25 s)."""
    from tools.symbols import default_directory

    start = time.monotonic()
    log.info(t("startup.symbols_loading", lang))
    try:
        directory = await while_saying(
            default_directory,
            lambda s: log.info(t("startup.symbols_waiting", lang, seconds=f"{s:.0f}")),
            every_s=every_s)
    except Exception as exc:  # the bridge falls back to code shapes; said, not hidden
        log.warning(t("startup.symbols_failed", lang, error=f"{type(exc).__name__}: {exc}"))
        return
    log.info(t("startup.symbols_ready", lang, n=f"{len(directory):,}",
               seconds=f"{time.monotonic() - start:.1f}"))


async def report(app: App, adapters: Sequence[Adapter], *, serving: bool,
                 every_s: float = EVERY_S) -> None:
    """The start-up lines, once the adapters have started (see the module). `serving`
    platforms, the symbols directory is loaded now whether or not INFO is shown; the console
    (a terminal, a piped question) loads it only when its lines are asked for. A line that
    cannot be made is a warning: start-up goes on."""
    telling = log.isEnabledFor(logging.INFO)
    if not (telling or serving):
        return
    lang = app.settings.operator_lang
    try:
        for adapter in adapters:
            log.info(platform_line(adapter, app.settings, lang))
        log.info(model_line(app, lang))
        await load_symbols(lang, every_s=every_s)
        if not telling:
            malloc.trim()
            return
        try:
            line = await asyncio.to_thread(data_line, app.settings, lang)
        except Exception as exc:  # a broken pack is the data layer's to report; start anyway
            line = t("startup.data_failed", lang, error=f"{type(exc).__name__}: {exc}")
        gc.collect()
        malloc.trim()  # what the start-up's threads freed goes back (bot.malloc.trim)
        log.info(line)
        log.info(t("startup.ready", lang, platforms=", ".join(a.name for a in adapters)))
    except Exception as exc:
        log.warning("start-up lines cut short: %s: %s", type(exc).__name__, exc)
