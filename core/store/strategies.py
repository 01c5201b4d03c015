"""The technical-analysis strategies knowledge base (`ta_strategies`): search in Chinese and
English over names and aliases, save and update.

Full-text search uses Postgres' `simple` configuration (no stemming, any script). Chinese has no
spaces for it to split on, so names and aliases are also matched as substrings both ways: "海龟"
finds the strategy whose alias is "海龟交易法", and "海龟策略" finds the one whose alias is "海龟".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from core.errors import InvalidArguments

_WORD = re.compile(r"\w+", re.UNICODE)
EDITABLE = ("aliases", "description", "indicators", "parameters", "rules", "source_url")


@dataclass(frozen=True)
class Strategy:
    name: str
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    indicators: list[str] = field(default_factory=list)
    parameters: dict[str, Any] = field(default_factory=dict)
    rules: str = ""
    source_url: str = ""
    origin: str = "builtin"
    id: int | None = None
    score: float = 0.0
    updated_at: datetime | None = None


def search_text(name: str, aliases: list[str]) -> str:
    return " | ".join(t.strip().lower() for t in [name, *aliases] if t.strip())


def _tsquery(query: str) -> str:
    """Any of the words (OR), so "turtle breakout rules" still finds Turtle."""
    return " | ".join(dict.fromkeys(w.lower() for w in _WORD.findall(query)))


def _strategy(row: asyncpg.Record) -> Strategy:
    params = row["parameters"]
    return Strategy(
        id=row["id"], name=row["name"], aliases=list(row["aliases"]),
        description=row["description"], indicators=list(row["indicators"]),
        parameters=json.loads(params) if isinstance(params, str) else dict(params),
        rules=row["rules"], source_url=row["source_url"], origin=row["origin"],
        score=float(row["score"]) if "score" in row else 0.0, updated_at=row["updated_at"])


_COLUMNS = ("id, name, aliases, description, indicators, parameters, rules, source_url, origin, "
            "updated_at")


class StrategiesRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def seed(self, strategies: list[Strategy]) -> int:
        """Insert the strategies whose names are not there yet; returns how many were added.
        A strategy someone edited keeps their edits."""
        added = 0
        async with self._pool.acquire() as conn:
            for s in strategies:
                status = await conn.execute(
                    "INSERT INTO ta_strategies (name, aliases, description, indicators, "
                    "parameters, rules, source_url, origin, search_text) "
                    "VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9) "
                    "ON CONFLICT (lower(name)) DO NOTHING",
                    s.name, s.aliases, s.description, s.indicators, json.dumps(s.parameters),
                    s.rules, s.source_url, s.origin, search_text(s.name, s.aliases))
                added += status.endswith(" 1")
        return added

    async def search(self, query: str, *, limit: int = 5) -> list[Strategy]:
        """Best matches first: exact name or alias, then a name/alias containing the query
        (more when it starts with it), then one contained in the query, then full-text rank
        over names, aliases and descriptions."""
        text = query.strip().lower()
        if not text:
            return []
        rows = await self._pool.fetch(
            f"""
            SELECT {_COLUMNS}, score FROM (
              SELECT s.*,
                (CASE WHEN lower(s.name) = $1 OR $1 = ANY (SELECT lower(a) FROM unnest(s.aliases) a)
                      THEN 4 ELSE 0 END)
                + (CASE WHEN strpos(s.search_text, $1) > 0 THEN 2 ELSE 0 END)
                + (CASE WHEN EXISTS (SELECT 1 FROM unnest(s.aliases || s.name) a
                                     WHERE starts_with(lower(a), $1)) THEN 1 ELSE 0 END)
                + (CASE WHEN EXISTS (SELECT 1 FROM unnest(s.aliases || s.name) a
                                     WHERE char_length(a) >= 2 AND strpos($1, lower(a)) > 0)
                        THEN 1.5 ELSE 0 END)
                + (CASE WHEN $2 <> '' THEN ts_rank(s.search, to_tsquery('simple', $2)) ELSE 0 END)
                AS score
              FROM ta_strategies s
            ) ranked
            WHERE score > 0
            ORDER BY score DESC, name
            LIMIT $3
            """, text, _tsquery(query), limit)
        return [_strategy(r) for r in rows]

    async def get(self, name: str) -> Strategy | None:
        row = await self._pool.fetchrow(
            f"SELECT {_COLUMNS} FROM ta_strategies WHERE lower(name) = lower($1)", name.strip())
        return _strategy(row) if row else None

    async def save(self, s: Strategy) -> Strategy:
        """Add a new strategy; an existing name is refused (update it instead)."""
        if not s.name.strip():
            raise InvalidArguments("a strategy needs a name")
        try:
            row = await self._pool.fetchrow(
                "INSERT INTO ta_strategies (name, aliases, description, indicators, parameters, "
                "rules, source_url, origin, search_text) "
                f"VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9) RETURNING {_COLUMNS}",
                s.name.strip(), s.aliases, s.description, s.indicators,
                json.dumps(s.parameters), s.rules, s.source_url, s.origin,
                search_text(s.name, s.aliases))
        except asyncpg.UniqueViolationError:
            raise InvalidArguments(f"a strategy named {s.name!r} exists; update it "
                                   "instead") from None
        assert row is not None
        return _strategy(row)

    async def update(self, name: str, changes: dict[str, Any]) -> Strategy:
        """Change some fields of a strategy; `parameters` are merged into the old ones."""
        unknown = set(changes) - set(EDITABLE)
        if unknown:
            raise InvalidArguments(f"cannot change {', '.join(sorted(unknown))}; editable: "
                                   f"{', '.join(EDITABLE)}")
        async with self._pool.acquire() as conn, conn.transaction():
            row = await conn.fetchrow(
                f"SELECT {_COLUMNS} FROM ta_strategies WHERE lower(name) = lower($1) "
                "FOR UPDATE", name.strip())
            if row is None:
                raise InvalidArguments(f"no strategy named {name!r}")
            old = _strategy(row)
            params = {**old.parameters, **changes.get("parameters", {})}
            aliases = list(changes.get("aliases", old.aliases))
            new = await conn.fetchrow(
                "UPDATE ta_strategies SET aliases = $2, description = $3, indicators = $4, "
                "parameters = $5::jsonb, rules = $6, source_url = $7, search_text = $8, "
                f"updated_at = now() WHERE id = $1 RETURNING {_COLUMNS}",
                old.id, aliases, changes.get("description", old.description),
                list(changes.get("indicators", old.indicators)), json.dumps(params),
                changes.get("rules", old.rules), changes.get("source_url", old.source_url),
                search_text(old.name, aliases))
        assert new is not None
        return _strategy(new)
