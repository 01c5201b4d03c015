"""Per-person rate limits kept in Postgres, so that they hold across every `serve` process on
the database (migration 0018: table `rate_hits`, function `rate_take`).

A take is one round trip: the person's row per kind is locked, pruned to its window and, when
every kind has room, given the hit (all or none, so a message refused for one limit does not
use up another). The clock is the database's: every process agrees on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from uuid import UUID

import asyncpg


class RateLimitsRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def take(self, user_id: UUID, limits: Sequence[tuple[str, int, float]],
                   ) -> tuple[str, float] | None:
        """Count one hit of each (kind, count, per_s) for the person; None when all had room
        (all counted), else the first full kind and the seconds until it has room (nothing
        counted). Give the kinds in one fixed order everywhere (their rows are locked in it)."""
        if not limits:
            return None
        row = await self._pool.fetchrow(
            "SELECT kind, wait_s FROM rate_take($1, $2::text[], $3::int[], $4::float8[])",
            user_id, [k for k, _, _ in limits], [c for _, c, _ in limits],
            [p for _, _, p in limits])
        if row is None:
            return None
        return str(row["kind"]), float(row["wait_s"])
