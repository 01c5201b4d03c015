"""Firing subscriptions: one fire is recorded once, builds (or shares) the report, and hands it
to the outbox under a key made of the subscription and the fire time, so a fire repeated by a
restart, a second process or `bullpen jobs due` twice delivers nothing twice."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any, TypeVar

from core.llm.speech import SpeechClient
from core.ports import LLMProvider, Outbox, OutItem
from core.store.subscriptions import Subscription, SubscriptionsRepo
from core.store.usage import UsageRepo
from core.types import Reply
from core.usage_gate import UsageGate
from core.words import t
from jobs.podcast_items import podcast_items
from jobs.report import Report, build_report
from jobs.schedule import Schedule
from jobs.usage import MeteredLLM, skipped_text
from podcast import PodcastError, PodcastResult, produce_podcast

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_GRACE_S = 3600.0  # a fire missed by less than this (downtime) still runs, once
FIRE_CONCURRENCY = 16  # fires in flight at once (each builds or shares a report, then stores)


def schedule_of(sub: Subscription) -> Schedule:
    hh, mm = (int(x) for x in sub.at_time.split(":"))
    return Schedule(at=time(hh, mm), recurrence=sub.recurrence, tz=sub.tz,
                    calendar=sub.calendar)


def delivery_key(sub: Subscription, fire_at: datetime) -> str:
    """The outbox key of a fire: the chat, what the push says and the fire time, not the
    subscription's id. Identical subscriptions of one chat (stored before /subscribe refused
    duplicates, or made by two processes at once) fire into one key, so the chat gets the
    report once per fire time whichever of them fires first, in any process. What the push
    says: the kind, the symbols in any order (a watchlist one: its owner's list), the language
    and the options."""
    what = json.dumps([sub.kind, sorted(sub.symbols) or f"watchlist:{sub.owner_id}", sub.lang,
                       sub.options], sort_keys=True, default=str)
    digest = hashlib.sha256(what.encode()).hexdigest()[:16]
    return (f"push:{sub.chat.key}:{digest}:"
            f"{fire_at.astimezone(UTC).strftime('%Y-%m-%dT%H:%MZ')}")


ReportBuilder = Callable[..., Awaitable[Report]]


@dataclass
class FireResult:
    subscription_id: int
    fire_at: datetime
    status: str  # done, failed, missed, skipped (fired before), over_budget (notice sent)
    delivery_key: str | None = None
    detail: str = ""


class JobRunner:
    def __init__(self, *, subscriptions: SubscriptionsRepo, outbox: Outbox,
                 llm: LLMProvider | None = None, grace_s: float = DEFAULT_GRACE_S,
                 build: ReportBuilder = build_report, pool: Any = None,
                 speech: SpeechClient | None = None,
                 voices: dict[str, str] | None = None, gate: UsageGate | None = None,
                 usage: UsageRepo | None = None) -> None:
        self._subs = subscriptions
        self._outbox = outbox
        self._llm = llm
        self.grace_s = grace_s
        self._build = build
        self._pool = pool  # the day's debate reports are reused by the podcast
        self._speech = speech
        self._voices = voices or {}
        # who may spend what (core.usage_gate), checked for the subscriber before a model run;
        # with `usage`, what a run spends is recorded against the subscriber
        self._gate = gate
        self._usage = usage
        # one report per (symbols, language, pdf, day) and one podcast per (tickers in order,
        # language, token allowance, day), shared by every subscriber of the fire (what it
        # spent is counted for the subscriber whose fire built it)
        self._reports: dict[tuple[Any, ...], asyncio.Future[Any]] = {}
        self.reports_built = 0

    async def _shared(self, key: tuple[Any, ...], make: Callable[[], Awaitable[T]]) -> T:
        fut = self._reports.get(key)
        if fut is None:
            fut = asyncio.get_running_loop().create_future()
            self._reports[key] = fut
            try:
                fut.set_result(await make())
            except BaseException as exc:
                del self._reports[key]
                fut.set_exception(exc)
                fut.exception()  # retrieved: the caller re-raises below
                raise
        got: T = await asyncio.shield(fut)
        return got

    async def report(self, symbols: Sequence[str], *, lang: str, pdf: bool,
                     day: str, llm: LLMProvider | None = None) -> Report:
        async def make() -> Report:
            built = await self._build(list(symbols), lang=lang, llm=llm or self._llm, pdf=pdf)
            self.reports_built += 1
            return built

        return await self._shared(("report", tuple(sorted(symbols)), lang, pdf, day), make)

    async def podcast(self, tickers: Sequence[str], *, lang: str, day: str,
                      llm: LLMProvider | None = None,
                      budget: int | None = None) -> PodcastResult:
        """`budget`: the subscriber's tokens left (a podcast capped by it is not shared with
        one that is not)."""
        async def make() -> PodcastResult:
            made = await produce_podcast(list(tickers), lang=lang, llm=llm or self._llm,
                                         pool=self._pool, budget=budget)
            return made

        return await self._shared(("podcast", tuple(tickers), lang, budget, day), make)

    def forget_reports_before(self, day: str) -> None:
        for key in [k for k in self._reports if k[-1] < day]:
            del self._reports[key]

    async def fire(self, sub: Subscription, fire_at: datetime) -> FireResult:
        """Record the fire once; then build and hand over. A fire recorded before (another
        process, a repeated `jobs due`) does nothing."""
        if not await self._subs.record_fire(sub.id, fire_at):
            return FireResult(sub.id, fire_at, "skipped")
        return await self.complete(sub, fire_at)

    async def complete(self, sub: Subscription, fire_at: datetime) -> FireResult:
        key = delivery_key(sub, fire_at)
        detail = ""
        try:
            symbols = sub.symbols or await self._subs.watchlist(sub.owner_id)
            day = fire_at.astimezone(UTC).date().isoformat()
            pdf = bool(sub.options.get("pdf"))
            llm, allowance = self._llm, None
            if symbols and self._llm is not None and self._gate is not None:
                decision = await self._gate.check(sub.owner_id)
                if decision.action == "refuse":  # no model run: said, and when it resets
                    return await self._over_budget(sub, fire_at, symbols, decision.reason,
                                                   skipped_text(sub.kind, symbols, decision,
                                                                sub.lang))
                allowance = decision.token_allowance
            if self._llm is not None and self._usage is not None:
                llm = MeteredLLM(self._llm, self._usage, sub.owner_id)
            if not symbols:
                items: list[OutItem] = [Reply(text=t("subs.empty_watchlist_report", sub.lang))]
            elif sub.kind == "podcast":
                try:
                    episode = await self.podcast(symbols, lang=sub.lang, day=day, llm=llm,
                                                 budget=allowance)
                    items = await podcast_items(episode, lang=sub.lang, pdf=pdf,
                                                speech=self._speech, voices=self._voices)
                except PodcastError as exc:
                    items = [Reply(text=exc.message(sub.lang))]
            else:
                # one summarizer call of at most 400 tokens: the allowance cannot cut it
                report = await self.report(symbols, lang=sub.lang, pdf=pdf, day=day, llm=llm)
                items = report_items(report)
            receipt = await self._outbox.deliver(sub.chat, items, key=key,
                                                 source=f"job:{sub.id}", subscription_id=sub.id)
            if not receipt.created:  # an identical subscription of the chat fired it already
                detail = "sent once for the chat's identical subscriptions"
            now = await self._subs.get(sub.id)
            if now is None or now.status == "removed":  # unsubscribed while it was built
                await self._subs.cancel_deliveries(sub.id)
        except Exception as exc:
            log.exception("subscription %s fire %s failed", sub.id, fire_at)
            await self._subs.finish_fire(sub.id, fire_at, status="failed",
                                         detail=f"{type(exc).__name__}: {exc}"[:500])
            return FireResult(sub.id, fire_at, "failed", detail=str(exc))
        await self._subs.finish_fire(sub.id, fire_at, status="done", delivery_key=key,
                                     detail=detail)
        return FireResult(sub.id, fire_at, "done", delivery_key=key, detail=detail)

    async def _over_budget(self, sub: Subscription, fire_at: datetime, symbols: Sequence[str],
                           reason: str, notice: str) -> FireResult:
        """The subscriber's budget is spent: the notice goes out like any push (once per
        fire, under the fire's delivery key) and the fire is recorded as done with why."""
        key = delivery_key(sub, fire_at)
        detail = f"over budget ({reason}): skipped"
        try:
            await self._outbox.deliver(sub.chat, [Reply(text=notice)], key=key,
                                       source=f"job:{sub.id}", subscription_id=sub.id)
        except Exception as exc:
            log.exception("subscription %s fire %s: the over-budget notice failed", sub.id,
                          fire_at)
            await self._subs.finish_fire(sub.id, fire_at, status="failed",
                                         detail=f"{detail}; {type(exc).__name__}: {exc}"[:500])
            return FireResult(sub.id, fire_at, "failed", detail=str(exc))
        log.info("subscription %s fire %s: %s (%s)", sub.id, fire_at, detail, ",".join(symbols))
        await self._subs.finish_fire(sub.id, fire_at, status="done", delivery_key=key,
                                     detail=detail)
        return FireResult(sub.id, fire_at, "over_budget", delivery_key=key, detail=detail)

    async def fire_all(self, fires: Sequence[tuple[Subscription, datetime]]) -> list[FireResult]:
        """Many fires at once, at most FIRE_CONCURRENCY in flight; results in the given order."""
        sem = asyncio.Semaphore(FIRE_CONCURRENCY)

        async def one(sub: Subscription, fire_at: datetime) -> FireResult:
            async with sem:
                return await self.fire(sub, fire_at)

        return list(await asyncio.gather(*(one(s, f) for s, f in fires)))

    async def due(self, at: datetime, *, since: datetime | None = None,
                  only: int | None = None) -> list[FireResult]:
        """Fire every active subscription's fires in (since, at]; `since` defaults to the grace
        period before `at`. Fires older than the grace period are recorded as missed."""
        start = since or at - timedelta(seconds=self.grace_s)
        results: list[FireResult] = []
        to_fire: list[tuple[Subscription, datetime]] = []
        for sub in await self._subs.active():
            if only is not None and sub.id != only:
                continue
            for fire_at in schedule_of(sub).fires_between(start, at):
                if sub.created_at is not None and fire_at < sub.created_at - timedelta(
                        minutes=1):
                    continue  # before the subscription existed
                if (at - fire_at).total_seconds() > self.grace_s:
                    if await self._subs.record_fire(sub.id, fire_at, status="missed"):
                        results.append(FireResult(sub.id, fire_at, "missed"))
                    continue
                to_fire.append((sub, fire_at))
        return results + await self.fire_all(to_fire)

    async def fire_now(self, sub: Subscription, *, at: datetime | None = None) -> FireResult:
        """`bullpen jobs run ID`: a fire at this instant, outside the schedule."""
        when = (at or datetime.now(UTC)).replace(second=0, microsecond=0)
        return await self.fire(sub, when)

    async def resume(self) -> list[FireResult]:
        """Fires recorded but never handed to the outbox (a crash in between): finish them."""
        out = []
        now = datetime.now(UTC)
        for sub_id, fire_at in await self._subs.unfinished_fires():
            sub = await self._subs.get(sub_id)
            if sub is None:
                continue
            if (now - fire_at).total_seconds() > self.grace_s:  # too late to be news
                await self._subs.finish_fire(sub.id, fire_at, status="missed",
                                             detail="not delivered before a restart")
                out.append(FireResult(sub.id, fire_at, "missed"))
                continue
            out.append(await self.complete(sub, fire_at))
        return out




def report_items(report: Report) -> list[OutItem]:
    items: list[OutItem] = [Reply(text=report.text)]
    if report.chart is not None:
        items.append(report.chart)
    if report.pdf_file is not None:
        items.append(report.pdf_file)
    return items
