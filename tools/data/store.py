"""Postgres persistence of the data layer (asyncpg): the answer cache and provider recordings."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel


def query_key(query: BaseModel) -> tuple[str, str]:
    """Canonical JSON of a query and its sha256 key."""
    text = json.dumps(query.model_dump(mode="json"), sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return text, hashlib.sha256(text.encode()).hexdigest()


async def cache_get(pool: Any, dataset: str, key: str) -> tuple[str, str] | None:
    """(provider, value JSON) of a fresh cached answer, or None."""
    row = await pool.fetchrow(
        "SELECT provider, value FROM market_data_cache"
        " WHERE dataset = $1 AND key = $2 AND expires_at > now()",
        dataset, key,
    )
    return (row["provider"], row["value"]) if row else None


async def cache_put(pool: Any, dataset: str, key: str, query_json: str, provider: str,
                    value: str, default_ttl_s: int) -> None:
    """Store a successful answer; its lifetime is the dataset's TTL from market_data_ttl."""
    await pool.execute(
        """
        INSERT INTO market_data_cache (dataset, key, query, provider, value, fetched_at,
                                       expires_at)
        VALUES ($1, $2, $3::jsonb, $4, $5, now(), now() + make_interval(secs => coalesce(
            (SELECT ttl_seconds FROM market_data_ttl WHERE dataset = $1), $6)))
        ON CONFLICT (dataset, key) DO UPDATE SET provider = EXCLUDED.provider,
            value = EXCLUDED.value, query = EXCLUDED.query, fetched_at = EXCLUDED.fetched_at,
            expires_at = EXCLUDED.expires_at
        """,
        dataset, key, query_json, provider, value, default_ttl_s,
    )


async def recording_get(pool: Any, provider: str, dataset: str, key: str) -> str | None:
    row = await pool.fetchrow(
        "SELECT response FROM provider_recordings"
        " WHERE provider = $1 AND dataset = $2 AND key = $3",
        provider, dataset, key,
    )
    return str(row["response"]) if row else None


async def recording_put(pool: Any, provider: str, dataset: str, key: str, query_json: str,
                        response: str) -> None:
    await pool.execute(
        """
        INSERT INTO provider_recordings (provider, dataset, key, query, response)
        VALUES ($1, $2, $3, $4::jsonb, $5)
        ON CONFLICT (provider, dataset, key) DO UPDATE SET response = EXCLUDED.response,
            query = EXCLUDED.query, recorded_at = now()
        """,
        provider, dataset, key, query_json, response,
    )
