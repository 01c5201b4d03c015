"""`bullpen debate SYMBOL`: run one debate and print its artifact (JSON) or report (Markdown).

With no model configured the offline experts score the data (labelled as such). Reports are
reused for five days when `DATABASE_URL` names a database; `--fresh` forces a new debate.
Progress goes to stderr, the artifact or report to stdout, the PDF under the data dir.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # debate (and the tools under it) load when the command runs
    from core.events import Event
    from debate.mode import DebateOutcome


def register(sub: Any) -> None:
    """Add the ``debate`` subcommand to the ``bullpen`` parser's subparsers."""
    p = sub.add_parser("debate", help="debate one security; print the artifact or report")
    p.add_argument("symbol", help="code, ticker or name, e.g. 600519, NVDA, 茅台")
    p.add_argument("--panel", choices=["experts", "bull_bear"], default="experts")
    p.add_argument("--question", default="", help="what to debate (default: is it a buy?)")
    p.add_argument("--max-rounds", type=int, default=None, dest="max_rounds",
                   help="rounds at most (at least 2 always run)")
    p.add_argument("--fresh", action="store_true", help="ignore a stored report")
    p.add_argument("--json", action="store_true", help="print the artifact as JSON")
    p.set_defaults(func=handler)


def _progress(event: Event) -> None:
    from core.events import Status, TextDelta

    if isinstance(event, Status):
        print(f"... {event.text}", file=sys.stderr, flush=True)
    elif isinstance(event, TextDelta) and event.text.strip():
        print(event.text.rstrip(), file=sys.stderr, flush=True)


def handler(args: argparse.Namespace) -> int:
    """Run the debate; exit 0 with output, 2 for unusable input, 1 when there is no data."""
    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    from bot.app import build_llm
    from bot.cli.runtime import reuse_database
    from bot.cli.runtime import settings as load
    from core.errors import DataUnavailable, InputError, UnknownSymbol
    from core.store import Database
    from core.words import detect_lang
    from debate.mode import DEFAULT_BUDGET_TOKENS, DebateMode, DebateRequest

    settings = load()
    llm = build_llm(settings)
    db: Database | None = None
    try:
        db, registry = await reuse_database(settings)
        mode = DebateMode(llm=llm, registry=registry, panel=args.panel,
                          budget_tokens=int(getattr(settings, "debate_token_budget",
                                                    DEFAULT_BUDGET_TOKENS)),
                          pool=db.pool if db is not None else None)
        request = DebateRequest(symbol=args.symbol, question=args.question, panel=args.panel,
                                fresh=args.fresh, max_rounds=args.max_rounds)
        try:
            outcome = await mode.produce(request, lang=detect_lang(
                f"{args.symbol} {args.question}"), emit=_progress)
        except UnknownSymbol as exc:
            hint = f" Did you mean: {', '.join(exc.suggestions)}?" if exc.suggestions else ""
            print(f"bullpen: unknown security {exc.query!r}.{hint}", file=sys.stderr)
            return 2
        except InputError as exc:
            print(f"bullpen: {exc}", file=sys.stderr)
            return 2
        except DataUnavailable as exc:
            print(f"bullpen: {exc}", file=sys.stderr)  # one sentence, in the asker's language
            for cause in exc.causes:  # what an operator fixes (a pack not installed, where)
                print(f"bullpen:   {cause}", file=sys.stderr)
            return 1
    finally:
        if llm is not None:
            await llm.aclose()
        if db is not None:
            await db.aclose()
    _print(outcome, args, settings.files_dir)
    return 0


def _print(outcome: DebateOutcome, args: argparse.Namespace, files_dir: Any) -> None:
    art = outcome.artifact
    if args.json:
        print(art.model_dump_json(indent=2))
    else:
        print(outcome.markdown)
    if outcome.pdf:
        out = files_dir / "debate"
        out.mkdir(parents=True, exist_ok=True)
        path = out / (f"debate-{art.meta.ticker.replace('^', '')}-{art.meta.panel}-"
                      f"{art.meta.generated_at:%Y%m%d-%H%M%S}.pdf")
        path.write_bytes(outcome.pdf)
        print(f"[pdf: {path}]", file=sys.stderr)
    if outcome.reused_from is not None:
        print(f"[reused the report of {outcome.reused_from:%Y-%m-%d %H:%M} UTC; --fresh for a "
              "new debate]", file=sys.stderr)
