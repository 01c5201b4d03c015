"""Numbered SQL migrations, applied in order under an advisory lock, recorded once each; then
the database roles are made or repaired where the migrating user may (`core.store.roles`): an
administrator's migration run hands Bullpen's objects over to the application's role."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import asyncpg

from core.errors import StoreError
from core.store.roles import provision

_LOCK_KEY = 0x6275_6C6C_7065_6E  # "bullpen"


@dataclass(frozen=True)
class Migration:
    version: str
    path: Path


def discover(directory: Path) -> list[Migration]:
    files = sorted(p for p in directory.glob("*.sql") if p.name[:4].isdigit())
    seen: set[str] = set()
    out = []
    for p in files:
        version = p.stem
        if version[:4] in seen:
            raise StoreError(f"two migrations share the number {version[:4]}")
        seen.add(version[:4])
        out.append(Migration(version, p))
    return out


async def _ensure_table(conn: asyncpg.Connection) -> None:
    await conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )


async def applied(pool: asyncpg.Pool) -> set[str]:
    async with pool.acquire() as conn:
        await _ensure_table(conn)
        rows = await conn.fetch("SELECT version FROM schema_migrations")
    return {r["version"] for r in rows}


async def migrate(pool: asyncpg.Pool, directory: Path) -> list[str]:
    """Apply pending migrations; returns the versions applied now. Safe to run concurrently."""
    done: list[str] = []
    async with pool.acquire() as conn:
        await conn.execute("SELECT pg_advisory_lock($1)", _LOCK_KEY)
        try:
            await _ensure_table(conn)
            have = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
            for m in discover(directory):
                if m.version in have:
                    continue
                try:
                    async with conn.transaction():
                        await conn.execute(m.path.read_text(encoding="utf-8"))
                        await conn.execute(
                            "INSERT INTO schema_migrations (version) VALUES ($1)", m.version)
                except asyncpg.PostgresError as exc:
                    raise StoreError(f"migration {m.version} failed: {exc}") from exc
                done.append(m.version)
            await provision(conn)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", _LOCK_KEY)
    return done


async def status(pool: asyncpg.Pool, directory: Path) -> list[tuple[str, bool]]:
    have = await applied(pool)
    return [(m.version, m.version in have) for m in discover(directory)]
