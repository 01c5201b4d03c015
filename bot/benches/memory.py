"""`bullpen bench memory`: resident memory of an idle `bullpen serve` (console, offline), and
what the first voice note adds when it loads the Whisper model (target: idle < 250 MB)."""

from __future__ import annotations

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


def run(*, repeat: int = 1, settle_s: float = 3.0) -> dict[str, Any]:
    idle = [_idle_serve_rss(settle_s) for _ in range(max(1, repeat))]
    idle_mb = sorted(idle)[len(idle) // 2]
    model_mb, load_s = _model_load_mb()
    return {
        "bench": "memory",
        "idle_serve_rss_mb": round(idle_mb, 1),
        "target_idle_mb": TARGET_IDLE_MB,
        "within_target": idle_mb < TARGET_IDLE_MB,
        "whisper_model_adds_mb": round(model_mb, 1),
        "whisper_model_load_s": round(load_s, 2),
        "runs": [round(x, 1) for x in idle],
    }
