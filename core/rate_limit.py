"""Per-person rate limits: sliding windows kept in this process's memory (a burst is refused
before it is queued, so it never reaches the model)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from uuid import UUID


@dataclass(frozen=True)
class Rate:
    count: int  # at most this many …
    per_s: float  # … within this many seconds (count <= 0: unlimited)


class RateLimiter:
    def __init__(self, rates: dict[str, Rate],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._rates = rates
        self._clock = clock
        self._hits: dict[tuple[UUID, str], deque[float]] = {}

    def hit(self, user_id: UUID, kind: str) -> float | None:
        """Count one `kind` for the person; None when allowed, else seconds until it would be."""
        rate = self._rates.get(kind)
        if rate is None or rate.count <= 0:
            return None
        now = self._clock()
        hits = self._hits.setdefault((user_id, kind), deque())
        while hits and hits[0] <= now - rate.per_s:
            hits.popleft()
        if len(hits) >= rate.count:
            return max(0.0, hits[0] + rate.per_s - now)
        hits.append(now)
        if len(self._hits) > 100_000:  # forget the idle
            for key in [k for k, v in self._hits.items() if not v or v[-1] <= now - 86_400]:
                del self._hits[key]
        return None
