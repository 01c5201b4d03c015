"""Grounding: every source a model cites must be one the debate gave it.

The context and each tool call register their sources in a `SourceCatalog` under short ids
(`S1`, `S2`, ...) that the prompts show. A turn may cite by id or by the full source object;
`recheck` keeps the citations that match (by canonical key) a source that turn was given and
drops the rest, saying why, so the artifact shows what a model invented.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from debate.models import (
    ArticleSource,
    ChartSource,
    DataRef,
    DroppedSource,
    EventSource,
    SecFilingSource,
    Source,
)

_SOURCE: TypeAdapter[Source] = TypeAdapter(Source)
_ID = re.compile(r"^\[?\s*(S\d+)\s*\]?$", re.IGNORECASE)


def canonical_key(source: Source) -> tuple[str, ...]:
    """What makes two citations the same source, whatever the model did to case and dashes."""
    if isinstance(source, ArticleSource):
        return ("article", source.pk.strip())
    if isinstance(source, ChartSource):
        return ("chart", source.ticker.strip().upper(), source.start_date[:10],
                source.end_date[:10])
    if isinstance(source, EventSource):
        return ("event", source.id.strip())
    if isinstance(source, SecFilingSource):
        return ("sec_filing", source.accession_number.replace("-", "").strip())
    assert isinstance(source, DataRef)
    return ("data", source.tool, source.ref)


def canonical_args(args: dict[str, Any]) -> str:
    """Arguments as compact, key-sorted JSON: the identity of a tool call."""
    return json.dumps(args, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=str)


def describe(source: Source) -> str:
    """One line naming a source, for prompts and reports."""
    if isinstance(source, ChartSource):
        return f"chart {source.ticker} {source.start_date} to {source.end_date}"
    if isinstance(source, DataRef):
        return source.title or f"{source.tool} {source.ref}"
    if isinstance(source, ArticleSource):
        return f"article {source.title or source.pk}"
    if isinstance(source, EventSource):
        return f"event {source.title or source.id} {source.date}".strip()
    return f"{source.form} {source.ticker} filed {source.filed_date}"


class SourceCatalog:
    """Every source the debate handed to a model, under stable ids."""

    def __init__(self) -> None:
        self._by_id: dict[str, Source] = {}
        self._by_key: dict[tuple[str, ...], str] = {}

    def add(self, source: Source) -> str:
        """Register a source (idempotent) and return its id."""
        key = canonical_key(source)
        if key in self._by_key:
            return self._by_key[key]
        sid = f"S{len(self._by_id) + 1}"
        self._by_id[sid] = source
        self._by_key[key] = sid
        return sid

    def get(self, sid: str) -> Source:
        return self._by_id[sid]

    def id_for(self, source: Source) -> str | None:
        """The id a source is registered under, if it is."""
        return self._by_key.get(canonical_key(source))

    def ids(self) -> list[str]:
        return list(self._by_id)

    def listing(self, ids: Iterable[str]) -> str:
        """`[S1] chart NVDA 2024-02-14 to 2025-02-14` lines for a prompt."""
        return "\n".join(f"[{sid}] {describe(self._by_id[sid])}" for sid in ids
                         if sid in self._by_id)

    def _resolve(self, raw: object) -> tuple[str | None, str]:
        """The id a citation points at, or None and why not."""
        if isinstance(raw, str):
            m = _ID.match(raw.strip())
            if m:
                sid = m.group(1).upper()
                return (sid, "") if sid in self._by_id else (None, "no source has this id")
            return None, "not a source id"
        if isinstance(raw, dict):
            if "type" not in raw and isinstance(raw.get("id"), str):
                return self._resolve(raw["id"])
            if isinstance(raw.get("id"), str) and _ID.match(raw["id"]) and raw.get("type") in (
                    None, "data"):
                return self._resolve(raw["id"])
            try:
                source = _SOURCE.validate_python(raw)
            except ValidationError:
                return None, "not a valid source object"
            sid = self._by_key.get(canonical_key(source))
            return (sid, "") if sid else (None, "matches no source the debate provided")
        return None, "not a source"

    def recheck(self, cited: Iterable[object], allowed: set[str]) -> tuple[
            list[Source], list[DroppedSource]]:
        """Keep the citations that name a source this turn was given; drop and explain others."""
        kept: list[Source] = []
        seen: set[str] = set()
        dropped: list[DroppedSource] = []
        for raw in cited:
            sid, why = self._resolve(raw)
            if sid is not None and sid not in allowed:
                sid, why = None, "not among the sources given to this turn"
            if sid is None:
                dropped.append(DroppedSource(raw=_short(raw), reason=why))
            elif sid not in seen:
                seen.add(sid)
                kept.append(self._by_id[sid])
        return kept, dropped


def _short(raw: object, limit: int = 200) -> str:
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def source_for_tool(name: str, args: dict[str, Any], result: BaseModel | None) -> Source:
    """The source a successful tool call provides: bars are a chart, the rest computed data."""
    summary = getattr(result, "summary", None)
    symbol = str(getattr(result, "symbol", "") or args.get("symbol", ""))
    if name == "get_ohlcv" and summary is not None and symbol:
        return ChartSource(ticker=symbol, start_date=str(summary.first)[:10],
                           end_date=str(summary.last)[:10])
    provenance = getattr(result, "source", None)
    label = str(provenance.label()) if provenance is not None and hasattr(
        provenance, "label") else ""
    subject = symbol or ", ".join(str(v) for v in args.values())[:60]
    title = f"{name} {subject}".strip() + (f" ({label})" if label else "")
    return DataRef(tool=name, ref=canonical_args(args), title=title)
