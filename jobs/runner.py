"""Firing subscriptions: one fire is recorded once, builds (or shares) the report, and hands it
to the outbox under a key made of the subscription and the fire time, so a fire repeated by a
restart, a second process or `bullpen jobs due` twice delivers nothing twice."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any, TypeVar

from core.errors import ConfigError
from core.llm.speech import SpeechClient
from core.ports import DeliveryRequest, LLMProvider, Outbox, OutItem
from core.store.subscriptions import FireOutcome, Group, Subscription, SubscriptionsRepo
from core.store.usage import UsageRepo
from core.types import Reply
from core.usage_gate import UsageGate
from core.words import t
from jobs.kinds import KINDS, Fire, JobKind
from jobs.report import Report, build_report
from jobs.schedule import Schedule
from jobs.usage import MeteredLLM, skipped_text
from podcast import PodcastResult, produce_podcast

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_GRACE_S = 3600.0  # a fire missed by less than this (downtime) still runs, once
FIRE_CONCURRENCY = 16  # fires being built at once (each builds or shares a report)
FIRE_BATCH = 500  # fires whose deliveries and outcomes are stored together, a statement each


def schedule_of(sub: Subscription) -> Schedule:
    return schedule_of_group((sub.at_time, sub.recurrence, sub.tz, sub.calendar or ""))


def schedule_of_group(key: tuple[str, str, str, str]) -> Schedule:
    """The schedule of (time, recurrence, time zone, calendar or "")."""
    at_time, recurrence, tz, calendar = key
    hh, mm = (int(x) for x in at_time.split(":"))
    return Schedule(at=time(hh, mm), recurrence=recurrence, tz=tz, calendar=calendar or None)


def delivery_key(sub: Subscription, fire_at: datetime) -> str:
    """The outbox key of a fire: the chat, what the push says and the fire time, not the
    subscription's id. Identical subscriptions of one chat (stored before /subscribe refused
    duplicates, or made by two processes at once) fire into one key, so the chat gets the
    report once per fire time whichever of them fires first, in any process. What the push
    says: the kind, the symbols in any order (a watchlist one: its owner's list), the language
    and the options."""
    options = json.dumps(sub.options, sort_keys=True, default=str) if sub.options else "{}"
    digest = _what_digest(sub.kind, tuple(sorted(sub.symbols)) or f"watchlist:{sub.owner_id}",
                          sub.lang, options)
    return (f"push:{sub.chat.key}:{digest}:"
            f"{fire_at.astimezone(UTC).strftime('%Y-%m-%dT%H:%MZ')}")


@functools.lru_cache(maxsize=4096)
def _what_digest(kind: str, symbols: tuple[str, ...] | str, lang: str, options: str) -> str:
    """The digest of what a push says (10,000 subscribers of a fire share a few hundred)."""
    what = json.dumps([kind, list(symbols) if isinstance(symbols, tuple) else symbols, lang,
                       json.loads(options)], sort_keys=True, default=str)
    return hashlib.sha256(what.encode()).hexdigest()[:16]


ReportBuilder = Callable[..., Awaitable[Report]]


@dataclass
class FireResult:
    subscription_id: int
    fire_at: datetime
    status: str  # done, failed, missed, skipped (fired before), over_budget (notice sent)
    delivery_key: str | None = None
    detail: str = ""
    db_detail: str = field(default="", repr=False, compare=False)  # job_fires.detail if not detail


@dataclass(frozen=True)
class _Ready:
    """A fire built and not yet stored."""

    sub: Subscription
    fire_at: datetime
    items: list[OutItem]
    status: str  # done, over_budget
    detail: str


def _failed(sub: Subscription, fire_at: datetime, exc: Exception) -> FireResult:
    return FireResult(sub.id, fire_at, "failed", detail=str(exc),
                      db_detail=f"{type(exc).__name__}: {exc}"[:500])


class JobRunner:
    def __init__(self, *, subscriptions: SubscriptionsRepo, outbox: Outbox,
                 llm: LLMProvider | None = None, grace_s: float = DEFAULT_GRACE_S,
                 build: ReportBuilder = build_report, pool: Any = None,
                 speech: SpeechClient | None = None,
                 voices: dict[str, str] | None = None, gate: UsageGate | None = None,
                 usage: UsageRepo | None = None,
                 kinds: Mapping[str, JobKind] = KINDS) -> None:
        self._subs = subscriptions
        self._kinds = kinds  # kind -> how its fire is built (jobs.kinds)
        self._outbox = outbox
        self._llm = llm
        self.grace_s = grace_s
        self._build = build
        self._pool = pool  # the day's debate reports are reused by the podcast
        self.speech = speech  # a podcast's audio, when configured
        self.voices = voices or {}
        # who may spend what (core.usage_gate), checked for the subscriber before a model run;
        # with `usage`, what a run spends is recorded against the subscriber
        self._gate = gate
        self._usage = usage
        # one report per (symbols, language, pdf, day) and one podcast per (tickers in order,
        # language, token allowance, day), shared by every subscriber of the fire (what it
        # spent is counted for the subscriber whose fire built it)
        self._reports: dict[tuple[Any, ...], asyncio.Future[Any]] = {}
        self.reports_built = 0

    async def shared(self, key: tuple[Any, ...], make: Callable[[], Awaitable[T]]) -> T:
        """`make()` once per `key` for every fire that asks while it is kept (a job kind's
        build shared by its subscribers); the key ends with the fire's day, which
        `forget_reports_before` drops by."""
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

        return await self.shared(("report", tuple(sorted(symbols)), lang, pdf, day), make)

    async def podcast(self, tickers: Sequence[str], *, lang: str, day: str,
                      llm: LLMProvider | None = None,
                      budget: int | None = None) -> PodcastResult:
        """`budget`: the subscriber's tokens left (a podcast capped by it is not shared with
        one that is not)."""
        async def make() -> PodcastResult:
            made = await produce_podcast(list(tickers), lang=lang, llm=llm or self._llm,
                                         pool=self._pool, budget=budget)
            return made

        return await self.shared(("podcast", tuple(tickers), lang, budget, day), make)

    def forget_reports_before(self, day: str) -> None:
        for key in [k for k in self._reports if k[-1] < day]:
            del self._reports[key]

    async def fire(self, sub: Subscription, fire_at: datetime) -> FireResult:
        """Record the fire once; then build and hand over. A fire recorded before (another
        process, a repeated `jobs due`) does nothing."""
        return (await self.fire_all([(sub, fire_at)]))[0]

    async def complete(self, sub: Subscription, fire_at: datetime) -> FireResult:
        """Build and hand over a fire recorded already (`resume`)."""
        return (await self._complete_batch([(sub, fire_at)]))[0]

    async def fire_all(self, fires: Sequence[tuple[Subscription, datetime]]) -> list[FireResult]:
        """Many fires at once, set-based: recorded in one statement, built with at most
        FIRE_CONCURRENCY in flight (one report per symbols, language and day, shared), their
        deliveries and outcomes stored FIRE_BATCH at a time in a statement each. Results in the
        given order; a fire listed twice, or recorded before, is `skipped`."""
        if not fires:
            return []
        fresh = await self._subs.record_fires([(s.id, f) for s, f in fires])
        results: list[FireResult | None] = [None] * len(fires)
        todo: list[int] = []
        for i, (sub, fire_at) in enumerate(fires):
            if (sub.id, fire_at) in fresh:
                fresh.discard((sub.id, fire_at))
                todo.append(i)
            else:
                results[i] = FireResult(sub.id, fire_at, "skipped")
        for start in range(0, len(todo), FIRE_BATCH):
            chunk = todo[start:start + FIRE_BATCH]
            for i, got in zip(chunk, await self._complete_batch([fires[i] for i in chunk]),
                              strict=True):
                results[i] = got
        return [r for r in results if r is not None]

    async def _complete_batch(self, fires: Sequence[tuple[Subscription, datetime]], *,
                              made: dict[tuple[Any, ...], _Ready | FireResult] | None = None
                              ) -> list[FireResult]:
        """Build and store fires recorded already. `made`: what each key's fire said, kept
        across the pages of one schedule's fire (without a budget gate, a fire's items depend
        only on its key)."""
        made = {} if made is None else made
        owners = list({s.owner_id for s, _ in fires if not s.symbols})
        watchlists = await self._subs.watchlists(owners) if owners else {}
        sem = asyncio.Semaphore(FIRE_CONCURRENCY)

        async def prepare(sub: Subscription, fire_at: datetime) -> _Ready | FireResult:
            async with sem:
                try:
                    return await self._prepare(sub, fire_at,
                                               sub.symbols or watchlists.get(sub.owner_id, []))
                except Exception as exc:
                    log.exception("subscription %s fire %s failed", sub.id, fire_at)
                    return _failed(sub, fire_at, exc)

        prepared: list[_Ready | FireResult]
        if self._llm is not None and (self._gate is not None or self._usage is not None):
            # each subscriber's allowance and spending: prepared one by one
            prepared = list(await asyncio.gather(*(prepare(s, f) for s, f in fires)))
        else:
            # what a fire says depends only on this key: prepared once per key, not per
            # subscriber (10,000 fires of one schedule are a handful of reports)
            by_key: dict[tuple[Any, ...], list[int]] = {}
            for i, (sub, fire_at) in enumerate(fires):
                symbols = tuple(sub.symbols or watchlists.get(sub.owner_id, []))
                by_key.setdefault((sub.kind, symbols, sub.lang, bool(sub.options.get("pdf")),
                                   fire_at.astimezone(UTC).date()), []).append(i)
            todo = [k for k in by_key if k not in made]
            for k, got in zip(todo, await asyncio.gather(
                    *(prepare(*fires[by_key[k][0]]) for k in todo)), strict=True):
                made[k] = got
            each: dict[int, _Ready | FireResult] = {}
            for key, ids in by_key.items():
                got = made[key]
                for i in ids:
                    sub, fire_at = fires[i]
                    each[i] = (_Ready(sub, fire_at, got.items, got.status, got.detail)
                                   if isinstance(got, _Ready) else
                                   FireResult(sub.id, fire_at, "failed", detail=got.detail,
                                              db_detail=got.db_detail))
            prepared = [each[i] for i in range(len(fires))]
        ready = [p for p in prepared if isinstance(p, _Ready)]
        stored: dict[int, FireResult] = {}
        if ready:
            try:
                receipts = await self._outbox.deliver_many([
                    DeliveryRequest(r.sub.chat, r.items, key=delivery_key(r.sub, r.fire_at),
                                    source=f"job:{r.sub.id}", subscription_id=r.sub.id)
                    for r in ready])
            except Exception as exc:
                log.exception("%d fires: storing their deliveries failed", len(ready))
                stored = {id(r): _failed(r.sub, r.fire_at, exc) for r in ready}
            else:
                for rid in await self._subs.removed_among([r.sub.id for r in ready]):
                    await self._subs.cancel_deliveries(rid)  # unsubscribed while it was built
                for r, receipt in zip(ready, receipts, strict=True):
                    detail = r.detail
                    if r.status == "done" and not receipt.created:
                        detail = "sent once for the chat's identical subscriptions"
                    stored[id(r)] = FireResult(r.sub.id, r.fire_at, r.status,
                                               delivery_key=receipt.key, detail=detail)
        results = [stored[id(p)] if isinstance(p, _Ready) else p for p in prepared]
        await self._subs.finish_fires([
            FireOutcome(r.subscription_id, r.fire_at,
                        "failed" if r.status == "failed" else "done",
                        delivery_key=r.delivery_key, detail=r.db_detail or r.detail)
            for r in results])
        return results

    async def _prepare(self, sub: Subscription, fire_at: datetime,
                       symbols: Sequence[str]) -> _Ready:
        """What one fire says: the shared report or podcast, or the over-budget notice."""
        kind = self._kinds.get(sub.kind)
        if kind is None:  # stored by a version that had it, or by hand: said in the fire
            raise ConfigError(f"no job kind {sub.kind!r} (known: {', '.join(self._kinds)})")
        day = fire_at.astimezone(UTC).date().isoformat()
        llm, allowance = self._llm, None
        if symbols and self._llm is not None and self._gate is not None:
            decision = await self._gate.check(sub.owner_id)
            if decision.action == "refuse":  # no model run: said, and when it resets
                detail = f"over budget ({decision.reason}): skipped"
                log.info("subscription %s fire %s: %s (%s)", sub.id, fire_at, detail,
                         ",".join(symbols))
                notice = skipped_text(kind.skipped, symbols, decision, sub.lang)
                return _Ready(sub, fire_at, [Reply(text=notice)], "over_budget", detail)
            allowance = decision.token_allowance
        if self._llm is not None and self._usage is not None:
            llm = MeteredLLM(self._llm, self._usage, sub.owner_id)
        if not symbols:
            items: list[OutItem] = [Reply(text=t("subs.empty_watchlist_report", sub.lang))]
        else:
            items = await kind.prepare(self, Fire(sub, tuple(symbols), day, llm, allowance))
        return _Ready(sub, fire_at, items, "done", "")

    async def due(self, at: datetime, *, since: datetime | None = None,
                  only: int | None = None, from_marks: bool = False) -> list[FireResult]:
        """Fire every active subscription's fires in (since, at]; `since` defaults to the grace
        period before `at`. Fires older than the grace period are recorded as missed. Work is
        per schedule, set-based: a schedule's missed fires are one statement, its fires a
        page of subscriptions per statement (`fire_schedule`), so no subscription is read
        into the process unless it fires now. `from_marks` (a new leader's catch-up): each
        schedule from where it was last fired through (`job_schedule_marks`), not from
        `since`, so a restart re-reads nothing already done."""
        start = since or at - timedelta(seconds=self.grace_s)
        if only is not None:
            sub = await self._subs.get(only)
            groups = [_group(sub)] if sub is not None and sub.status == "active" else []
        else:
            groups = await self._subs.groups()
        marks = await self._subs.schedule_marks() if from_marks else {}
        # the fire instants of each schedule: pure computation (a trading calendar loads on
        # first use), in a thread so that the serving loop keeps running meanwhile
        windows = await asyncio.to_thread(_windows, groups, start, at, marks)
        missed: list[FireResult] = []  # per schedule, by subscription and fire time
        fired: list[FireResult] = []
        for group, fires in windows:
            late = [f for f in fires if (at - f).total_seconds() > self.grace_s]
            recent = fires[len(late):]
            missed += [FireResult(s, f, "missed") for s, f in
                       await self._subs.record_schedule_missed(group, late, only=only)]
            if late and not recent and only is None:
                await self._subs.mark_fired(group, late[-1])
            for fire_at in recent:
                fired += await self.fire_schedule(group, fire_at, only=only)
        return missed + fired

    async def fire_schedule(self, group: Group, fire_at: datetime, *,
                            only: int | None = None) -> list[FireResult]:
        """Fire one schedule's active subscriptions at `fire_at` (the scheduler's cron job),
        FIRE_BATCH at a time: a page read and its fires recorded in one statement, then built
        (once per report) and stored in a few set-based statements (`_complete_batch`). Fires
        recorded before are `skipped`. The whole schedule done (not `only`), it is marked
        fired through `fire_at`."""
        results: list[FireResult] = []
        made: dict[tuple[Any, ...], _Ready | FireResult] = {}  # what a fire says, per key

        def page_after(after: int) -> asyncio.Task[list[tuple[Subscription, bool]]]:
            return asyncio.create_task(self._subs.record_schedule_fire(
                group, fire_at, after_id=after, limit=FIRE_BATCH, only=only))

        # the next page is read (and recorded) by Postgres while this one is built and stored
        # here: a fire recorded and not stored (this process dying) is `resume`d
        following: asyncio.Task[list[tuple[Subscription, bool]]] | None = page_after(0)
        try:
            while following is not None:
                page = await following
                following = (page_after(page[-1][0].id) if len(page) == FIRE_BATCH
                             else None)
                results += [FireResult(s.id, fire_at, "skipped") for s, new in page if not new]
                fresh = [(s, fire_at) for s, new in page if new]
                if fresh:
                    results += await self._complete_batch(fresh, made=made)
        finally:
            if following is not None:
                following.cancel()
                with contextlib.suppress(BaseException):
                    await following
        if only is None:
            await self._subs.mark_fired(group, fire_at)
        return results

    async def fire_now(self, sub: Subscription, *, at: datetime | None = None) -> FireResult:
        """`bullpen jobs run ID`: a fire at this instant, outside the schedule."""
        when = (at or datetime.now(UTC)).replace(second=0, microsecond=0)
        return await self.fire(sub, when)

    async def resume(self) -> list[FireResult]:
        """Fires recorded but never handed to the outbox (a crash in between): finish them."""
        out: list[FireResult] = []
        late: list[FireOutcome] = []
        now_due: list[tuple[Subscription, datetime]] = []
        now = datetime.now(UTC)
        for sub, fire_at in await self._subs.unfinished():
            if (now - fire_at).total_seconds() > self.grace_s:  # too late to be news
                late.append(FireOutcome(sub.id, fire_at, "missed",
                                        detail="not delivered before a restart"))
                out.append(FireResult(sub.id, fire_at, "missed"))
            else:
                now_due.append((sub, fire_at))
        await self._subs.finish_fires(late)
        for start in range(0, len(now_due), FIRE_BATCH):
            out += await self._complete_batch(now_due[start:start + FIRE_BATCH])
        return out


def _group(sub: Subscription) -> Group:
    return (sub.at_time, sub.recurrence, sub.tz, sub.calendar or "")


def _windows(groups: Sequence[Group], start: datetime, end: datetime,
             marks: Mapping[Group, datetime]) -> list[tuple[Group, list[datetime]]]:
    """Each schedule's fire instants in (start or its mark if later, end], oldest first."""
    out = []
    for group in groups:
        mark = marks.get(group)
        fires = schedule_of_group(group).fires_between(
            max(start, mark) if mark is not None else start, end)
        if fires:
            out.append((group, fires))
    return out

