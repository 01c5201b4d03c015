"""`bullpen bench cli`: wall and CPU time of `bullpen --help` against `python -c pass`.

Both run as fresh processes of the same interpreter, interleaved round by round in the same run
(so both see the same load on a shared machine), after one warm-up each. The peer is the floor
no Python CLI can beat: an interpreter that starts and exits. Also reported, over fewer rounds,
what `--help` paid before issue 33 made the parser light: importing `bot.app` (the whole app).
CPU time (user + system of the child) is the figure that load does not inflate. Target: the
`--help` median well under 2 s.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

TARGET_S = 2.0
# what `bullpen --help` must not import: the app, the data stack, the SDKs, the database driver
HEAVY = ("bot.app", "pandas", "numpy", "matplotlib", "exchange_calendars", "ict", "debate",
         "openai", "asyncpg", "telegram", "discord", "slack_bolt", "wechatpy", "aiohttp")
_PROBE = ("import json, sys; from bot.cli import build_parser; build_parser(); "
          "print(json.dumps(sorted(sys.modules)))")


def _bullpen() -> list[str]:
    """The installed console script next to this interpreter, else `python -m bot.cli`."""
    script = Path(sys.executable).parent / "bullpen"
    if script.exists():
        return [str(script)]
    found = shutil.which("bullpen")
    return [found] if found else [sys.executable, "-m", "bot.cli"]


def _once(argv: Sequence[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process (CPU from the children's rusage delta)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, env=os.environ.copy())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _stats(samples: Sequence[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(samples), 3),
            "min_s": round(min(samples), 3), "max_s": round(max(samples), 3),
            "spread_s": round(max(samples) - min(samples), 3)}


def _heavy_modules() -> list[str]:
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True).stdout
    loaded = json.loads(out)
    return [m for m in loaded if m.split(".")[0] in HEAVY or m in HEAVY]


def run(*, repeat: int = 7, reference_rounds: int | None = None) -> dict[str, Any]:
    """`repeat` interleaved rounds of `bullpen --help` and `python -c pass` (after a warm-up
    of each), plus `reference_rounds` (default max(2, repeat // 3)) of `import bot.app`."""
    help_argv = [*_bullpen(), "--help"]
    pass_argv = [sys.executable, "-c", "pass"]
    app_argv = [sys.executable, "-c", "import bot.app"]
    _once(help_argv)
    _once(pass_argv)
    ours_wall: list[float] = []
    ours_cpu: list[float] = []
    peer_wall: list[float] = []
    peer_cpu: list[float] = []
    for _ in range(repeat):
        w, c = _once(help_argv)
        ours_wall.append(w)
        ours_cpu.append(c)
        w, c = _once(pass_argv)
        peer_wall.append(w)
        peer_cpu.append(c)
    app_wall: list[float] = []
    app_cpu: list[float] = []
    for _ in range(reference_rounds or max(2, repeat // 3)):
        w, c = _once(app_argv)
        app_wall.append(w)
        app_cpu.append(c)
    ours = statistics.median(ours_wall)
    peer = statistics.median(peer_wall)
    ours_c = statistics.median(ours_cpu)
    peer_c = statistics.median(peer_cpu)
    app = statistics.median(app_wall)
    return {
        "bench": "cli",
        "command": " ".join(Path(a).name if i == 0 else a for i, a in enumerate(help_argv)),
        "repeat": repeat,
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "help_wall": _stats(ours_wall),
        "help_cpu": _stats(ours_cpu),
        "target_s": TARGET_S,
        "within_target": ours < TARGET_S,
        "heavy_modules_loaded_by_parser": _heavy_modules(),
        "peer": "python -c pass (the same interpreter starting and exiting)",
        "peer_wall": _stats(peer_wall),
        "peer_cpu": _stats(peer_cpu),
        "ratio_vs_peer_wall": round(ours / peer, 2) if peer else None,
        "ratio_vs_peer_cpu": round(ours_c / peer_c, 2) if peer_c else None,
        "reference": "python -c 'import bot.app' (what --help imported before issue 33)",
        "reference_wall": _stats(app_wall),
        "reference_cpu": _stats(app_cpu),
        "speedup_vs_reference_wall": round(app / ours, 1) if ours else None,
        "direction": "ratio_vs_peer = bullpen --help / python -c pass (lower is better, 1.0 is "
                     "the floor); speedup_vs_reference = import bot.app / bullpen --help "
                     "(higher is better)",
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
