"""One contract per dataset (OpenBB's `Fetcher` shape) and the runner that applies data modes.

A `Fetcher` names its provider and dataset, takes a typed query, `fetch`es a raw, JSON-able
response (what record/replay stores) and `transform`s it into the standard pydantic result.
`transform` is pure: it raises `DataUnavailable` naming the provider when the response is empty
or its shape changed, which the contract tests run over fixtures shaped on real responses.

`run(dataset, query)` walks the dataset's fetchers in priority order:

- offline: no provider is asked (DataUnavailable; bars then fall back to the snapshot);
- live: a fresh cached answer if any, else each fetcher in turn; the first success is cached
  for the dataset's TTL; failures are never cached;
- record: like live without reading the cache, and every raw response is stored;
- replay: raw responses come only from the recordings, so a session replays byte for byte.

A `local` fetcher reads an installed data pack (no network). It answers in offline mode only
(never cached or recorded); the other modes keep to the live providers, so a live failure is
said as such rather than answered with years-old pack data.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any, ClassVar

from pydantic import BaseModel

from core.errors import BullpenError, DataUnavailable, InputError
from tools.data import store
from tools.data.config import get_config


class Fetcher[Q: BaseModel, R: BaseModel]:
    """Provider x dataset adapter: `fetch` raw JSON-able data, `transform` it to the model."""

    provider: ClassVar[str]
    dataset: ClassVar[str]
    result_model: ClassVar[type[BaseModel]]
    ttl_s: ClassVar[int] = 3600
    priority: ClassVar[int] = 50  # lower runs first within a dataset
    local: ClassVar[bool] = False  # reads an installed data pack, never the network

    def supports(self, query: Q) -> bool:
        """Whether this provider can answer the query at all (e.g. its market)."""
        return True

    async def fetch(self, query: Q) -> Any:
        raise NotImplementedError

    def transform(self, query: Q, raw: Any) -> R:
        raise NotImplementedError


_REGISTRY: dict[str, list[Fetcher[Any, Any]]] = {}


def register(fetcher: Fetcher[Any, Any]) -> Fetcher[Any, Any]:
    chain = _REGISTRY.setdefault(fetcher.dataset, [])
    chain[:] = [f for f in chain if type(f) is not type(fetcher)]
    chain.append(fetcher)
    chain.sort(key=lambda f: f.priority)
    return fetcher


def fetchers(dataset: str) -> list[Fetcher[Any, Any]]:
    return list(_REGISTRY.get(dataset, []))


def all_fetchers() -> list[Fetcher[Any, Any]]:
    return [f for chain in _REGISTRY.values() for f in chain]


def dump_raw(raw: Any) -> str:
    """Canonical text of a raw response (what the recordings hold)."""
    return json.dumps(raw, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


async def run(dataset: str, query: BaseModel) -> Any:
    """Answer `query` from the dataset's providers under the configured data mode."""
    cfg = get_config()
    chain = [f for f in fetchers(dataset) if f.supports(query)]
    if not chain:
        raise DataUnavailable(f"no provider serves {dataset} for this query", provider="none")
    local = [f for f in chain if f.local]
    chain = [f for f in chain if not f.local]
    if cfg.mode == "offline" or not chain:
        if not local:
            raise DataUnavailable(
                f"{dataset} needs a live provider "
                f"({', '.join(dict.fromkeys(f.provider for f in chain))}); "
                "the offline data does not cover this query", provider="offline")
        return await _run_local(local, query)
    return await _run_remote(dataset, chain, query)


async def _run_local(chain: list[Fetcher[Any, Any]], query: BaseModel) -> Any:
    failures: list[DataUnavailable] = []
    for fetcher in chain:
        try:
            raw = await fetcher.fetch(query)
            return _transform(fetcher, query, json.loads(dump_raw(raw)))
        except DataUnavailable as exc:
            failures.append(exc)
    if len(failures) == 1:
        raise failures[0]
    raise DataUnavailable("; ".join(str(f) for f in failures), provider=failures[0].provider)


async def _run_remote(dataset: str, chain: list[Fetcher[Any, Any]], query: BaseModel) -> Any:
    cfg = get_config()
    query_json, key = store.query_key(query)
    pool = cfg.pool
    if cfg.mode == "live" and pool is not None:
        hit = await store.cache_get(pool, dataset, key)
        if hit is not None:
            result = chain[0].result_model.model_validate_json(hit[1])
            _mark_cached(result)
            return result
    failures: list[DataUnavailable] = []
    for fetcher in chain:
        try:
            result = await _one(fetcher, query, query_json, key)
        except DataUnavailable as exc:
            failures.append(exc)
            continue
        if cfg.mode == "live" and pool is not None:
            await store.cache_put(pool, dataset, key, query_json, fetcher.provider,
                                  result.model_dump_json(), fetcher.ttl_s)
        return result
    if len(failures) == 1:
        raise failures[0]
    raise DataUnavailable("; ".join(str(f) for f in failures), provider=failures[0].provider)


async def _one(fetcher: Fetcher[Any, Any], query: BaseModel, query_json: str, key: str) -> Any:
    cfg = get_config()
    name = fetcher.provider
    if cfg.mode == "replay":
        if cfg.pool is None:
            raise DataUnavailable("replay mode needs the database", provider=name)
        text = await store.recording_get(cfg.pool, name, fetcher.dataset, key)
        if text is None:
            raise DataUnavailable(f"no recording of {fetcher.dataset} for this query",
                                  provider=name)
        return _transform(fetcher, query, json.loads(text))
    try:
        raw = await asyncio.wait_for(fetcher.fetch(query), timeout=cfg.timeout_s + 1.0)
    except TimeoutError as exc:
        raise DataUnavailable(f"timed out after {cfg.timeout_s:g}s", provider=name) from exc
    except (DataUnavailable, InputError):
        raise
    except BullpenError as exc:
        raise DataUnavailable(str(exc), provider=name) from exc
    except Exception as exc:  # provider libraries raise anything: name it, fall back
        raise DataUnavailable(f"{type(exc).__name__}: {str(exc)[:200]}", provider=name) from exc
    text = dump_raw(raw)
    if cfg.mode == "record" and cfg.pool is not None:
        await store.recording_put(cfg.pool, name, fetcher.dataset, key, query_json, text)
    # transform what a replay would see, so record and replay give identical results
    return _transform(fetcher, query, json.loads(text))


def _transform(fetcher: Fetcher[Any, Any], query: BaseModel, raw: Any) -> Any:
    try:
        return fetcher.transform(query, raw)
    except (DataUnavailable, InputError):
        raise
    except Exception as exc:  # a response we cannot read is the provider's changed shape
        raise DataUnavailable(f"could not read the {fetcher.dataset} response "
                              f"({type(exc).__name__}: {str(exc)[:160]})",
                              provider=fetcher.provider) from exc


def _mark_cached(result: BaseModel) -> None:
    source = getattr(result, "source", None)
    if source is not None and hasattr(source, "note"):
        source.note = (source.note + "; " if source.note else "") + "from cache"


# --- raw tables (DataFrames as JSON) ---------------------------------------------------------


def _json_value(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, bool | int | str):
        return v
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, datetime | date):
        return v.isoformat()
    if hasattr(v, "isoformat"):  # pandas Timestamp
        return str(v.isoformat())
    if hasattr(v, "item"):  # numpy scalar
        return _json_value(v.item())
    try:
        import pandas as pd

        if pd.isna(v):
            return None
    except (TypeError, ValueError):
        pass
    return str(v)


def table(df: Any) -> dict[str, Any]:
    """A DataFrame as a JSON-able table {"columns": [...], "rows": [[...]]}."""
    columns = [str(c) for c in df.columns]
    rows = [[_json_value(v) for v in row] for row in df.itertuples(index=False, name=None)]
    return {"columns": columns, "rows": rows}


def rows_of(raw: Any, required: Sequence[str], *, provider: str, what: str,
            allow_empty: bool = False) -> list[dict[str, Any]]:
    """Rows of a raw table as dicts after checking its shape.

    Raises DataUnavailable naming the provider when the table is empty or lacks a column.
    """
    if not isinstance(raw, dict) or "columns" not in raw or "rows" not in raw:
        raise DataUnavailable(f"{what}: unexpected response shape", provider=provider)
    columns = [str(c) for c in raw["columns"]]
    missing = [c for c in required if c not in columns]
    if missing:
        raise DataUnavailable(
            f"{what}: response shape changed, missing columns {', '.join(missing)} "
            f"(got {', '.join(columns[:12])})", provider=provider)
    rows = raw["rows"]
    if not rows and not allow_empty:
        raise DataUnavailable(f"{what}: empty response", provider=provider)
    return [dict(zip(columns, r, strict=False)) for r in rows]
