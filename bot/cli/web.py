"""`bullpen web login [--user PLATFORM:UID]`: a one-time sign-in link to the web page for the
console's person (or any account's), valid for 10 minutes, once."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from bot.cli.runtime import CLIError


def register(sub: Any) -> None:
    p = sub.add_parser("web", help="the web platform: sign-in links")
    web = p.add_subparsers(dest="web_command", required=True)
    login = web.add_parser("login", help="print a one-time sign-in link (10 minutes, once)")
    login.add_argument("--user", default="console:local",
                       help="whose link, as PLATFORM:UID (default: the console's person, "
                            "console:local)")
    p.set_defaults(func=lambda a: asyncio.run(handle(a)))


def _account(text: str) -> tuple[str, str]:
    platform, sep, uid = text.partition(":")
    if not sep or not platform.strip() or not uid.strip():
        raise CLIError(f"--user {text!r} is not PLATFORM:UID (e.g. telegram:12345)")
    return platform.strip(), uid.strip()


async def handle(args: argparse.Namespace) -> int:
    from bot.cli.runtime import _db
    from bot.migrations import MIGRATIONS
    from bot.web_links import login_link
    from core.store import Store, migrate

    platform, uid = _account(args.user)
    db, settings = await _db()
    try:
        base_url = settings.web_links_base()
        if base_url is None:
            raise CLIError("the web platform is not configured: set WEB_PORT (a fixed port, "
                           "not 0) or WEB_BASE_URL (where the page is reached)")
        await migrate(db.pool, MIGRATIONS)
        store = Store(db, files_dir=settings.files_dir)
        user_id = await store.accounts.user_for(platform, uid, uid)
        print(await login_link(store, base_url, user_id))
    finally:
        await db.aclose()
    return 0
