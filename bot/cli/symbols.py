"""`bullpen symbols resolve|extract|refresh`: the symbols directory from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the symbols directory loads when a symbols command runs
    from tools.symbols import Match, SymbolEntry


def register(sub: Any) -> None:
    """Add the ``symbols`` subcommand to the ``bullpen`` parser's subparsers."""
    p = sub.add_parser("symbols", help="resolve names and codes; extract symbols from text")
    ss = p.add_subparsers(dest="symbols_command", required=True)

    r = ss.add_parser("resolve", help="best matches for a name, code, pinyin or misspelling")
    r.add_argument("query")
    r.add_argument("--market", choices=["cn", "us", "hk", "crypto", "fx"], default=None)
    r.add_argument("--limit", type=int, default=5)
    r.add_argument("--json", action="store_true", help="print a JSON list")
    r.set_defaults(func=resolve_cmd)

    e = ss.add_parser("extract", help="every symbol mentioned in a sentence")
    e.add_argument("sentence")
    e.add_argument("--json", action="store_true", help="print a JSON list")
    e.set_defaults(func=extract_cmd)

    f = ss.add_parser("refresh", help="rebuild the directory from the installed packages")
    f.add_argument("--live", action="store_true", help="also merge live akshare/SEC lists")
    f.add_argument("--json", action="store_true", help="print counts as JSON")
    f.add_argument("--no-db", action="store_true",
                   help="only rebuild in memory; leave the stocknames table alone")
    f.set_defaults(func=refresh_cmd)


def _as_json(matches: list[Match]) -> str:
    rows = [m.model_dump(mode="json", exclude_none=True) for m in matches]
    return json.dumps(rows, ensure_ascii=False, indent=2)


def _print_table(matches: list[Match]) -> None:
    if not matches:
        print("no match")
        return
    for m in matches:
        flag = " (ambiguous)" if m.ambiguous else ""
        span = f" @{m.span[0]}:{m.span[1]}" if m.span else ""
        print(f"{m.symbol:<11} {m.name:<28} {m.market:<6} {m.score:6.2f}  {m.why}{flag}{span}")


def resolve_cmd(args: argparse.Namespace) -> int:
    """Print the matches for ``args.query``; exit 1 when nothing matches."""
    from tools.symbols import default_directory

    matches = default_directory().resolve(args.query, market=args.market, limit=args.limit)
    if args.json:
        print(_as_json(matches))
    else:
        _print_table(matches)
    return 0 if matches else 1


def extract_cmd(args: argparse.Namespace) -> int:
    """Print the symbols found in ``args.sentence`` (exit 0 even when there are none)."""
    from tools.symbols import default_directory

    matches = default_directory().extract(args.sentence)
    if args.json:
        print(_as_json(matches))
    else:
        _print_table(matches)
    return 0


def refresh_entries(*, live: bool = False) -> tuple[list[SymbolEntry], float]:
    """Rebuild every entry from the packages (and live lists); returns entries and seconds.

    The caller saves them (``tools.symbols.store.save_current``) when a database is wired.
    """
    from tools.symbols import SymbolDirectory

    start = time.perf_counter()
    directory = SymbolDirectory.from_packages(live=live)
    return directory.entries, time.perf_counter() - start


async def _save_to_db(entries: list[SymbolEntry]) -> int:
    """Replace the `stocknames` table (embedded Postgres unless DATABASE_URL is set)."""
    from bot.cli.runtime import CLIError, settings
    from bot.migrations import MIGRATIONS
    from core.errors import StoreError
    from core.store import Database, migrate
    from tools.symbols import content_key
    from tools.symbols.store import save_current

    s = settings()
    dsn = s.database_url.get_secret_value() if s.database_url else None
    try:
        db = await Database.open(dsn=dsn, data_dir=s.data_dir)
    except StoreError as exc:
        raise CLIError(str(exc)) from None
    try:
        await migrate(db.pool, MIGRATIONS)
        async with db.pool.acquire() as conn:  # marked current: serve loads it from here
            return await save_current(conn, content_key(), entries)
    finally:
        await db.aclose()


def refresh_cmd(args: argparse.Namespace) -> int:
    """Rebuild from the packages and report the counts."""
    entries, seconds = refresh_entries(live=args.live)
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.market] = counts.get(e.market, 0) + 1
    report: dict[str, Any] = {"entries": len(entries), "by_market": counts,
                              "seconds": round(seconds, 3)}
    if not args.no_db:
        report["saved_rows"] = asyncio.run(_save_to_db(entries))
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(f"rebuilt {len(entries)} entries {counts} in {seconds:.2f}s", file=sys.stdout)
    return 0
