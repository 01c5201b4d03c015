"""Scheduled job kinds in one table: a subscription's `kind` names the entry that says what its
fire pushes. The runner records the fire, checks the subscriber's budget, meters the model and
hands the items to the outbox the same way for every kind; a kind only builds the items.

Adding a kind: write its `prepare` (share what every subscriber of the fire gets through
`runner.shared`), add a `JobKind` to `KINDS` (or, in a test, pass `kinds={**KINDS, ...}` to
`JobRunner`), give it its over-budget notice in the catalogue, and let `/subscribe` offer it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import ConfigError
from core.ports import LLMProvider, OutItem
from core.store.subscriptions import Subscription
from core.types import Reply
from jobs.report import Report
from podcast import PodcastError
from podcast.items import podcast_items

if TYPE_CHECKING:
    from jobs.runner import JobRunner


@dataclass(frozen=True)
class Fire:
    """One fire, as its kind sees it."""

    sub: Subscription
    symbols: tuple[str, ...]  # the subscription's, or its owner's watchlist at fire time
    day: str  # the fire's UTC day: what one day's subscribers share
    llm: LLMProvider | None  # metered for the subscriber when usage is recorded
    allowance: int | None  # the subscriber's tokens left (None: no cap)

    @property
    def lang(self) -> str:
        return self.sub.lang

    @property
    def pdf(self) -> bool:
        return bool(self.sub.options.get("pdf"))


Prepare = Callable[["JobRunner", Fire], Awaitable[list[OutItem]]]


@dataclass(frozen=True)
class JobKind:
    """A kind of scheduled push: how a fire of it is built, and the notice (a catalogue key
    taking `names`, `which`, `when`) a subscriber over budget gets instead."""

    name: str
    prepare: Prepare
    skipped: str


async def _report(runner: JobRunner, fire: Fire) -> list[OutItem]:
    # one summarizer call of at most 400 tokens: the allowance cannot cut it
    report = await runner.report(fire.symbols, lang=fire.lang, pdf=fire.pdf, day=fire.day,
                                 llm=fire.llm)
    return report_items(report)


async def _podcast(runner: JobRunner, fire: Fire) -> list[OutItem]:
    try:
        episode = await runner.podcast(fire.symbols, lang=fire.lang, day=fire.day, llm=fire.llm,
                                       budget=fire.allowance)
        return await podcast_items(episode, lang=fire.lang, pdf=fire.pdf, speech=runner.speech,
                                   voices=runner.voices)
    except PodcastError as exc:
        return [Reply(text=exc.message(fire.lang))]


def report_items(report: Report) -> list[OutItem]:
    items: list[OutItem] = [Reply(text=report.text)]
    if report.chart is not None:
        items.append(report.chart)
    if report.pdf_file is not None:
        items.append(report.pdf_file)
    return items


KINDS: Mapping[str, JobKind] = {k.name: k for k in (
    JobKind("report", _report, skipped="subs.skipped_report"),
    JobKind("podcast", _podcast, skipped="subs.skipped_podcast"),
)}


def kinds_table(*kinds: JobKind, base: Mapping[str, JobKind] = KINDS) -> dict[str, JobKind]:
    """`base` with `kinds` added; a name already there is refused (one entry per kind)."""
    out = dict(base)
    for kind in kinds:
        if kind.name in out:
            raise ConfigError(f"job kind {kind.name!r} is registered twice")
        out[kind.name] = kind
    return out


__all__ = ["KINDS", "Fire", "JobKind", "Prepare", "kinds_table", "report_items"]
