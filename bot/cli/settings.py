"""`bullpen settings doc [--check] [--root DIR]`: write docs/settings.md and .env.example from
the Settings model (bot.settings_doc), or say which one is out of date."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("settings", help="the settings: generated docs")
    settings = p.add_subparsers(dest="settings_command", required=True)
    doc = settings.add_parser("doc", help="write docs/settings.md and .env.example")
    doc.add_argument("--root", type=Path, default=Path("."),
                     help="the checkout to write them in (default: here)")
    doc.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 naming each file that is out of date")
    p.set_defaults(func=handle)


def handle(args: argparse.Namespace) -> int:
    from bot.settings_doc import run

    return run(root=args.root, check=args.check)
