"""Tools the LLM wrote for itself: artifacts (semantic version, content hash, status,
permissions), execution traces, error reports and patches (`tool_*` tables)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import asyncpg

ArtifactStatus = Literal["provisional", "verified", "deprecated", "failed", "revoked"]
STATUSES: tuple[str, ...] = ("provisional", "verified", "deprecated", "failed")


def content_hash(code: str) -> str:
    """sha256 of the code with line endings and trailing blanks normalised."""
    norm = "\n".join(line.rstrip() for line in code.replace("\r\n", "\n").strip().split("\n"))
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


def bump(version: str, part: Literal["major", "minor", "patch"]) -> str:
    major, minor, patch = (int(x) for x in version.split("."))
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


@dataclass(frozen=True)
class ToolArtifact:
    id: int
    name: str
    version: str
    content_hash: str
    code: str
    task: str = ""
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)
    status: str = "provisional"
    permissions: list[str] = field(default_factory=lambda: ["calc_only"])
    attempts: int = 1
    parent_id: int | None = None
    created_at: datetime | None = None


@dataclass(frozen=True)
class ToolTrace:
    id: int
    tool_id: int | None
    kind: str
    ok: bool
    status: str
    input: dict[str, Any]
    output: Any
    error: str
    elapsed_ms: float
    created_at: datetime | None = None


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _artifact(row: asyncpg.Record) -> ToolArtifact:
    return ToolArtifact(
        id=row["id"], name=row["name"], version=row["version"],
        content_hash=row["content_hash"], code=row["code"], task=row["task"],
        description=row["description"], parameters=_json(row["parameters"]) or {},
        status=row["status"], permissions=list(row["permissions"]), attempts=row["attempts"],
        parent_id=row["parent_id"], created_at=row["created_at"])


def _trace(row: asyncpg.Record) -> ToolTrace:
    return ToolTrace(id=row["id"], tool_id=row["tool_id"], kind=row["kind"], ok=row["ok"],
                     status=row["status"], input=_json(row["input"]) or {},
                     output=_json(row["output"]), error=row["error"],
                     elapsed_ms=row["elapsed_ms"], created_at=row["created_at"])


class ToolArtifactsRepo:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self._pool = pool

    async def by_hash(self, digest: str) -> ToolArtifact | None:
        row = await self._pool.fetchrow("SELECT * FROM tool_artifacts WHERE content_hash = $1",
                                        digest)
        return _artifact(row) if row else None

    async def get(self, tool_id: int) -> ToolArtifact | None:
        row = await self._pool.fetchrow("SELECT * FROM tool_artifacts WHERE id = $1", tool_id)
        return _artifact(row) if row else None

    async def latest(self, name: str, *, status: str | None = None) -> ToolArtifact | None:
        """The newest version of `name` (with that status when given)."""
        row = await self._pool.fetchrow(
            "SELECT * FROM tool_artifacts WHERE name = $1 AND ($2::text IS NULL OR status = $2) "
            "ORDER BY string_to_array(version, '.')::int[] DESC LIMIT 1", name, status)
        return _artifact(row) if row else None

    async def next_version(self, name: str, part: Literal["major", "minor", "patch"]) -> str:
        last = await self.latest(name)
        return "0.1.0" if last is None else bump(last.version, part)

    async def register(self, *, name: str, version: str, code: str, task: str = "",
                       description: str = "", parameters: dict[str, Any] | None = None,
                       status: ArtifactStatus = "provisional", attempts: int = 1,
                       parent_id: int | None = None) -> tuple[ToolArtifact, bool]:
        """Store a version; the same code (by hash) is stored once. Returns the artifact and
        whether it was new. Generated tools are calculation-only: no network, no file writes."""
        digest = content_hash(code)
        row = await self._pool.fetchrow(
            "INSERT INTO tool_artifacts (name, version, content_hash, code, task, description, "
            "parameters, status, permissions, attempts, parent_id) "
            "VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, '{calc_only}', $9, $10) "
            "ON CONFLICT (content_hash) DO NOTHING RETURNING *",
            name, version, digest, code, task, description, json.dumps(parameters or {}),
            status, attempts, parent_id)
        if row is not None:
            return _artifact(row), True
        existing = await self.by_hash(digest)
        assert existing is not None
        return existing, False

    async def set_status(self, tool_id: int, status: ArtifactStatus) -> None:
        await self._pool.execute(
            "UPDATE tool_artifacts SET status = $2, updated_at = now() WHERE id = $1",
            tool_id, status)

    async def revoke(self, name: str) -> int:
        """Revoke every version of `name` (a human's decision); how many versions changed."""
        rows = await self._pool.fetch(
            "UPDATE tool_artifacts SET status = 'revoked', updated_at = now() "
            "WHERE name = $1 AND status <> 'revoked' RETURNING id", name)
        return len(rows)

    async def listing(self, *, status: str | None = None) -> list[ToolArtifact]:
        """Every stored version, newest first per name (or only those with `status`)."""
        rows = await self._pool.fetch(
            "SELECT * FROM tool_artifacts WHERE ($1::text IS NULL OR status = $1) "
            "ORDER BY name, string_to_array(version, '.')::int[] DESC", status)
        return [_artifact(r) for r in rows]

    async def verified(self) -> list[ToolArtifact]:
        """The newest verified version of each tool: the ones offered to the agent."""
        rows = await self._pool.fetch(
            "SELECT DISTINCT ON (name) * FROM tool_artifacts WHERE status = 'verified' "
            "ORDER BY name, string_to_array(version, '.')::int[] DESC")
        return [_artifact(r) for r in rows]

    async def trace(self, *, tool_id: int | None, kind: str, ok: bool, status: str,
                    input: dict[str, Any], output: Any = None, error: str = "",
                    elapsed_ms: float = 0.0) -> int:
        trace_id: int = await self._pool.fetchval(
            "INSERT INTO tool_traces (tool_id, kind, ok, status, input, output, error, "
            "elapsed_ms) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8) RETURNING id",
            tool_id, kind, ok, status, json.dumps(input, default=str),
            json.dumps(output, default=str) if output is not None else None, error[:8000],
            elapsed_ms)
        return trace_id

    async def traces(self, tool_id: int) -> list[ToolTrace]:
        rows = await self._pool.fetch(
            "SELECT * FROM tool_traces WHERE tool_id = $1 ORDER BY id", tool_id)
        return [_trace(r) for r in rows]

    async def report_error(self, *, tool_id: int, trace_id: int | None, category: str,
                           message: str) -> int:
        report_id: int = await self._pool.fetchval(
            "INSERT INTO tool_error_reports (tool_id, trace_id, category, message) "
            "VALUES ($1, $2, $3, $4) RETURNING id", tool_id, trace_id, category, message[:8000])
        return report_id

    async def error_reports(self, tool_id: int) -> list[dict[str, Any]]:
        rows = await self._pool.fetch(
            "SELECT id, trace_id, category, message FROM tool_error_reports WHERE tool_id = $1 "
            "ORDER BY id", tool_id)
        return [dict(r) for r in rows]

    async def record_patch(self, *, from_id: int, to_id: int, report_id: int | None,
                           attempt: int) -> None:
        await self._pool.execute(
            "INSERT INTO tool_patches (from_tool_id, to_tool_id, report_id, attempt) "
            "VALUES ($1, $2, $3, $4)", from_id, to_id, report_id, attempt)

    async def patches(self, tool_id: int) -> list[dict[str, Any]]:
        """Patches that started from or led to `tool_id`."""
        rows = await self._pool.fetch(
            "SELECT from_tool_id, to_tool_id, report_id, attempt FROM tool_patches "
            "WHERE from_tool_id = $1 OR to_tool_id = $1 ORDER BY id", tool_id)
        return [dict(r) for r in rows]
