"""`bullpen podcast NVDA TSLA AAPL`: the daily ticker podcast script, printed or written out.

With no model configured, the debates are scored offline and a deterministic writer builds
the script (labelled as such). Today's debate reports are reused, and new ones stored, only
when `DATABASE_URL` names a database. Progress and notes go to stderr; the Markdown script (or
with `--json` the result: script, notes, budget, tickers) to stdout; `--out DIR` writes
`script.json` and `script.md` there.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.events import Event


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def register(sub: Any) -> None:
    """Add the ``podcast`` subcommand to the ``bullpen`` parser's subparsers."""
    p = sub.add_parser("podcast", help="the daily ticker podcast script for some tickers")
    p.add_argument("tickers", nargs="*", help="codes or tickers in the order to discuss them, "
                                              "e.g. NVDA TSLA AAPL (at most 10)")
    p.add_argument("--date", type=_date, default=None,
                   help="YYYY-MM-DD (default today: the latest data)")
    p.add_argument("--lang", choices=["en", "zh"], default="en")
    p.add_argument("--json", action="store_true",
                   help="print the result as JSON (script, notes, budget, tickers)")
    p.add_argument("--out", type=Path, default=None,
                   help="directory to write script.json and script.md into")
    p.add_argument("--budget", type=int, default=None,
                   help="token budget for the whole podcast (default: none; each debate "
                        "keeps BULLPEN_DEBATE_TOKEN_BUDGET)")
    p.add_argument("--concurrency", type=int, default=3, help="tickers in flight at once")
    p.set_defaults(func=handler)


def _progress(event: Event) -> None:
    from core.events import Status

    if isinstance(event, Status):
        print(f"... {event.text}", file=sys.stderr, flush=True)


def handler(args: argparse.Namespace) -> int:
    """Exit 0 with a script, 2 for unusable input, 1 when no ticker could be debated."""
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from bot.app import build_llm
    from bot.cli.runtime import reuse_database
    from bot.cli.runtime import settings as load
    from core.store import Database
    from debate.mode import DEFAULT_BUDGET_TOKENS
    from podcast import PodcastError, produce_podcast

    settings = load()
    llm = build_llm(settings)
    db: Database | None = None
    try:
        db, registry = await reuse_database(settings)
        try:
            result = await produce_podcast(
                args.tickers, date=args.date, lang=args.lang, budget=args.budget, llm=llm,
                pool=db.pool if db is not None else None, concurrency=args.concurrency,
                registry=registry,
                debate_budget=getattr(settings, "debate_token_budget", DEFAULT_BUDGET_TOKENS),
                emit=_progress)
        except PodcastError as exc:
            print(f"bullpen: {exc.message(args.lang)}", file=sys.stderr)
            return 2
    finally:
        if llm is not None:
            await llm.aclose()
        if db is not None:
            await db.aclose()
    return _print(result, args)


def _print(result: Any, args: argparse.Namespace) -> int:
    from podcast import render_markdown, script_json

    for note in result.notes:
        print(f"note {note}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.summary(), ensure_ascii=False, indent=2))
    else:
        print(render_markdown(result.script, args.lang))
    if args.out is not None:
        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
        (out / "script.json").write_text(script_json(result.script), encoding="utf-8")
        (out / "script.md").write_text(render_markdown(result.script, args.lang),
                                       encoding="utf-8")
        print(f"[written: {out / 'script.json'}, {out / 'script.md'}]", file=sys.stderr)
    debated = [t for t in result.tickers if t.state in ("debated", "reused")]
    if not debated:
        print("bullpen: no ticker could be debated; the script says why", file=sys.stderr)
        return 1
    return 0
