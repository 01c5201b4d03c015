"""Stored debate reports (asyncpg): reuse one for the same ticker, panel, question, language
and kind (model or offline) for five days (seed 000's PRIOR_REPORT_MAX_AGE_DAYS)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

import asyncpg

from debate.models import DebateArtifact

REUSE_DAYS = 5


def question_key(question: str) -> str:
    """The question normalised for matching: width, case, punctuation and spacing ignored."""
    text = unicodedata.normalize("NFKC", question).casefold()
    text = re.sub(r"[^\w\u4e00-\u9fff]+", " ", text)
    return " ".join(text.split())


@dataclass(frozen=True)
class StoredReport:
    id: int
    artifact: DebateArtifact
    markdown: str
    pdf: bytes | None
    created_at: datetime


class DebateReportStore:
    """The `debate_reports` table (migration 0004)."""

    def __init__(self, pool: asyncpg.Pool, *, max_age: timedelta = timedelta(days=REUSE_DAYS)
                 ) -> None:
        self._pool = pool
        self.max_age = max_age

    async def find_recent(self, *, ticker: str, panel: str, question: str, lang: str,
                          offline: bool) -> StoredReport | None:
        """The newest report younger than `max_age` for this ticker, panel and question."""
        row = await self._pool.fetchrow(
            "SELECT id, artifact::text AS artifact, markdown, pdf, created_at"
            " FROM debate_reports WHERE ticker = $1 AND panel = $2 AND question_key = $3"
            " AND lang = $4 AND offline = $5 AND created_at > now() - $6::interval"
            " ORDER BY created_at DESC LIMIT 1",
            ticker, panel, question_key(question), lang, offline, self.max_age)
        return _stored(row) if row is not None else None

    async def save(self, artifact: DebateArtifact, *, markdown: str, pdf: bytes | None,
                   user_id: UUID | None = None, conversation_id: UUID | None = None) -> int:
        m = artifact.meta
        value = await self._pool.fetchval(
            "INSERT INTO debate_reports (ticker, panel, question_key, question, lang, offline,"
            " artifact, markdown, pdf, user_id, conversation_id)"
            " VALUES ($1,$2,$3,$4,$5,$6,$7::text::jsonb,$8,$9,$10,$11) RETURNING id",
            m.ticker, m.panel, question_key(m.question), m.question, m.lang, m.offline,
            artifact.model_dump_json(), markdown, pdf, user_id, conversation_id)
        return int(value)


def _stored(row: Any) -> StoredReport:
    return StoredReport(id=int(row["id"]),
                        artifact=DebateArtifact.model_validate_json(row["artifact"]),
                        markdown=str(row["markdown"]), pdf=row["pdf"],
                        created_at=row["created_at"])
