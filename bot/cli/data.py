"""`bullpen data install|status`: the pinned data packs the offline snapshot reads."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add the ``data`` subcommand to the ``bullpen`` parser's subparsers."""
    p = sub.add_parser("data", help="offline data packs: install or check them")
    ds = p.add_subparsers(dest="data_command", required=True)

    i = ds.add_parser("install", help="fetch, verify and unpack the pinned packs (no-op when "
                                      "present)")
    i.add_argument("--dir", type=Path, default=None,
                   help="packs directory (default: <BULLPEN_DATA_DIR>/packs)")
    i.add_argument("--only", action="append", default=[], metavar="NAME",
                   help="install only this pack (repeatable)")
    i.set_defaults(func=install_cmd)

    s = ds.add_parser("status", help="which packs are installed, with what they hold")
    s.add_argument("--dir", type=Path, default=None)
    s.add_argument("--verify", action="store_true", help="re-hash every file (slower)")
    s.set_defaults(func=status_cmd)


def packs_dir(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    from bot.settings import Settings

    return Settings().packs_dir


def install_cmd(args: argparse.Namespace) -> int:
    """Exit 1 only when a pack failed (a skipped one, whose client is missing, is fine)."""
    from tools.data import packs

    dest = packs_dir(args.dir).resolve()
    known = {p.name for p in packs.manifest()}
    unknown = sorted(set(args.only) - known)
    if unknown:
        print(f"unknown pack(s): {', '.join(unknown)}; the manifest has {', '.join(sorted(known))}")
        return 2
    started = time.perf_counter()
    results = packs.install(dest, only=args.only)
    changed = [r for r in results if r.state != "present"]
    if changed:
        print(f"data packs in {dest} ({time.perf_counter() - started:.1f} s)")
    return 1 if any(r.state == "failed" for r in results) else 0


def status_cmd(args: argparse.Namespace) -> int:
    from tools.data import packs

    dest = packs_dir(args.dir).resolve()
    print(f"data packs in {dest}")
    results = packs.status(dest, rehash=args.verify)
    for r in results:
        print(r.line())
    return 0 if all(r.state == "installed" for r in results) else 1
