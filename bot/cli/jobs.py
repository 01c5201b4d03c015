"""`bullpen jobs list|run ID|due --at ISO|deliveries [--status S]`: subscriptions for operators.

`run` and `due` record their fires and hand the reports to the outbox like the scheduler does
(a fire already recorded is not fired again, so `due` twice at one instant fires nothing new);
a running `bullpen serve` sends what they stored within a few seconds (NOTIFY, or its poll).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from datetime import UTC, datetime
from typing import Any

from bot.cli.runtime import CLIError, running_app


def register(sub: Any) -> None:
    p = sub.add_parser("jobs", help="subscriptions, fires and deliveries")
    jobs = p.add_subparsers(dest="jobs_command", required=True)
    jobs.add_parser("list", help="active and paused subscriptions with their next fire")
    r = jobs.add_parser("run", help="fire one subscription now")
    r.add_argument("id", type=int)
    d = jobs.add_parser("due", help="fire what is due at an instant")
    d.add_argument("--at", required=True, help="ISO-8601 instant, e.g. 2026-11-24T08:00+08:00")
    v = jobs.add_parser("deliveries", help="the outbox, newest first")
    v.add_argument("--status", choices=["pending", "delivered", "held", "failed", "cancelled"])
    v.add_argument("--limit", type=int, default=50)
    p.set_defaults(func=lambda a: asyncio.run(handle(a)))


def _instant(text: str) -> datetime:
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise CLIError(f"--at {text!r} is not an ISO-8601 instant") from None
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def _print(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        print(json.dumps(row, ensure_ascii=False, default=str))


async def handle(args: argparse.Namespace) -> int:
    from jobs.runner import schedule_of

    async with running_app() as app:
        subs = app.store.subscriptions
        if args.jobs_command == "list":
            now = datetime.now(UTC)
            _print([{"id": s.id, "chat": s.chat.key, "symbols": s.symbols or "watchlist",
                     "schedule": schedule_of(s).describe("en"), "status": s.status,
                     "next": schedule_of(s).next_fire(now).isoformat()}
                    for s in await subs.listing()])
        elif args.jobs_command == "run":
            sub = await subs.get(args.id)
            if sub is None or sub.status == "removed":
                raise CLIError(f"no subscription {args.id}")
            result = await app.jobs.fire_now(sub)
            _print([result.__dict__])
        elif args.jobs_command == "due":
            at = _instant(args.at)
            _print([r.__dict__ for r in await app.jobs.due(at)])
        else:
            _print(await app.store.deliveries.listing(status=args.status, limit=args.limit))
    return 0
