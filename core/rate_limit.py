"""Per-person rate limits: a burst is refused before it is queued, so it never reaches the model.

`SharedRateLimiter` is the one `serve` uses: the windows live in Postgres
(`core.store.rate_limits`), so one person gets one allowance however many processes share the
database. `RateLimiter` keeps them in this process's memory: the scripted twin for unit tests
and one-process tools, never for what must hold across processes.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from uuid import UUID

from core.errors import StoreUnavailable
from core.store.retry import DATABASE_TROUBLE, retry_budget

if TYPE_CHECKING:
    from core.store.rate_limits import RateLimitsRepo

log = logging.getLogger(__name__)

# the database away: messages go through unchecked until it answers
_NOT_CHECKED: tuple[type[BaseException], ...] = (*DATABASE_TROUBLE, StoreUnavailable)

RETRY_S = 2.0  # a database restarting is waited for this long before a message goes unrated


@dataclass(frozen=True)
class Rate:
    count: int  # at most this many …
    per_s: float  # … within this many seconds (count <= 0: unlimited)


class RateLimits(Protocol):
    rates: dict[str, Rate]

    async def take(self, user_id: UUID, kinds: Sequence[str]) -> tuple[str, float] | None:
        """Count one of each kind for the person, all or none: None when allowed (counted),
        else the first kind over its limit and the seconds until it would be allowed."""


class RateLimiter:
    """In this process's memory (tests, one-process tools)."""

    def __init__(self, rates: dict[str, Rate],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rates = rates
        self._clock = clock
        self._hits: dict[tuple[UUID, str], deque[float]] = {}

    async def take(self, user_id: UUID, kinds: Sequence[str]) -> tuple[str, float] | None:
        for kind in kinds:  # all or none, like the shared one
            wait = self._wait(user_id, kind)
            if wait is not None:
                return kind, wait
        for kind in kinds:
            self.hit(user_id, kind)
        return None

    def _wait(self, user_id: UUID, kind: str) -> float | None:
        rate = self.rates.get(kind)
        if rate is None or rate.count <= 0:
            return None
        now = self._clock()
        hits = self._hits.setdefault((user_id, kind), deque())
        while hits and hits[0] <= now - rate.per_s:
            hits.popleft()
        if len(hits) >= rate.count:
            return max(0.0, hits[0] + rate.per_s - now)
        return None

    def hit(self, user_id: UUID, kind: str) -> float | None:
        """Count one `kind` for the person; None when allowed, else seconds until it would be."""
        wait = self._wait(user_id, kind)
        rate = self.rates.get(kind)
        if wait is not None or rate is None or rate.count <= 0:
            return wait
        now = self._clock()
        self._hits[(user_id, kind)].append(now)
        if len(self._hits) > 100_000:  # forget the idle
            for key in [k for k, v in self._hits.items() if not v or v[-1] <= now - 86_400]:
                del self._hits[key]
        return None


class SharedRateLimiter:
    """The windows in Postgres, shared by every process on the database: one statement per
    take. When the database cannot answer, the message is let through (logged once until it
    answers again): the message is already stored, and answering matters more than the rate."""

    def __init__(self, repo: RateLimitsRepo, rates: dict[str, Rate]) -> None:
        self._repo = repo
        self.rates = rates
        self._warned = False

    async def take(self, user_id: UUID, kinds: Sequence[str]) -> tuple[str, float] | None:
        limits = [(k, r.count, r.per_s) for k in kinds
                  if (r := self.rates.get(k)) is not None and r.count > 0]
        if not limits:
            return None
        try:
            with retry_budget(RETRY_S):
                got = await self._repo.take(user_id, limits)
        except _NOT_CHECKED as exc:
            if not self._warned:
                self._warned = True
                log.warning("rate limits not checked (%s: %s): letting messages through until"
                            " the database answers", type(exc).__name__, exc)
            return None
        self._warned = False
        return got
