"""Files the agent produced (charts, reports): bytes on disk under the data dir, rows here."""

from __future__ import annotations

import asyncio
import re
import secrets
from pathlib import Path
from uuid import UUID

import asyncpg

from core.types import OutgoingFile


def _safe_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "file"
    return cleaned[:80]


class FilesRepo:
    def __init__(self, pool: asyncpg.Pool, *, files_dir: Path) -> None:
        self._pool = pool
        # absolute, so a row's path reads the same file from any working directory (the web
        # page, the CLI, another serve process started elsewhere)
        self._dir = files_dir.resolve()

    async def save(self, file: OutgoingFile, *, user_id: UUID | None,
                   conversation_id: UUID | None) -> Path:
        sub = self._dir / (str(user_id) if user_id else "shared")
        path = sub / f"{secrets.token_hex(4)}-{_safe_name(file.filename)}"

        def write() -> None:
            sub.mkdir(parents=True, exist_ok=True)
            path.write_bytes(file.data)

        await asyncio.to_thread(write)
        await self._pool.execute(
            "INSERT INTO files (user_id, conversation_id, filename, kind, mime_type, size_bytes,"
            " path) VALUES ($1,$2,$3,$4,$5,$6,$7)", user_id, conversation_id, file.filename,
            file.kind, file.mime_type, len(file.data), str(path))
        return path
