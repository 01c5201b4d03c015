"""What the CLI commands run: app start-up, the console, one-shot questions, shutdown."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib
import json
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.cli.errors import CLIError

if TYPE_CHECKING:  # the app, the store and the settings load only when a command runs
    from pydantic import ValidationError

    from bot.app import App
    from bot.settings import Settings
    from core.events import Event
    from core.store import Database

__all__ = ["CLIError", "ask", "bench", "chat", "db_migrate", "db_status", "reuse_database",
           "running_app", "serve", "settings", "use_data_dir"]


_reported: set[str] = set()  # unknown keys already warned about (serve reads settings twice)


def settings() -> Settings:
    """The settings of a command that starts Bullpen (serve, chat, ask, db, symbols); logging
    at BULLPEN_LOG_LEVEL, unset WARNING (`serve` turns to INFO once its platforms are up).

    A key under BULLPEN_ that names no setting stops it with one line naming the closest
    setting: a misspelt switch (`BULLPEN_SANDBOX_ISOLATON`, `BULLPEN_ACESS=allowlist`, a
    budget) would otherwise leave Bullpen running with a setting its operator believes is
    changed. An unknown key under a platform's prefix (TELEGRAM_, WEB_, ...) is a warning,
    logged once: other programs share those names."""
    import logging

    from pydantic import ValidationError

    from bot import logs
    from bot.settings import OWN_PREFIX, load_settings, unknown_keys

    unknown = unknown_keys()
    refused = [line for key, line in unknown if key.upper().startswith(OWN_PREFIX)]
    if refused:
        raise CLIError("; ".join(refused))
    try:
        s = load_settings()
    except ValidationError as exc:
        raise CLIError(bad_setting(exc)) from None
    logs.setup(s.log_level or "WARNING", s.log_format, secrets=logs.secrets_of(s))
    for key, line in unknown:
        if key not in _reported:
            _reported.add(key)
            logging.getLogger("bullpen.settings").warning("%s: ignored", line)
    return s


def bad_setting(exc: ValidationError) -> str:
    """One line for the first setting that did not validate: its name and what is wrong,
    never its value (a token is a secret). A per-role key's message names the key itself."""
    first = exc.errors()[0]
    msg = str(first["msg"]).removeprefix("Value error, ")
    if not first["loc"]:
        return msg
    name = str(first["loc"][0])
    return msg if msg.startswith(name) else f"bad setting {name}: {msg}"


def use_data_dir() -> None:
    """Every command reads the data packs from the settings' data directory
    (BULLPEN_DATA_DIR), not the repository's `data/packs` (the data layer's default, which
    `bullpen transcribe`, `debate` and `podcast` used to read: issue 29). Settings that do
    not load are left for a command that needs them to report."""
    from pydantic import ValidationError

    from bot.settings import load_settings
    from tools.data.config import configure, get_config

    try:
        s = load_settings()
    except ValidationError:
        return
    configure(dataclasses.replace(get_config(), packs_dir=s.packs_dir))


@contextlib.asynccontextmanager
async def running_app(s: Settings | None = None) -> AsyncIterator[App]:
    from bot import malloc
    from bot.app import App
    from core.errors import ConfigError, StoreError

    s = s or settings()
    malloc.limit_arenas(s.malloc_arena_max)  # before the App starts a thread (bot.malloc)
    try:
        app = await App.create(s)
    except (StoreError, ConfigError) as exc:
        raise CLIError(str(exc)) from None
    if app.model_problem is not None:  # one line; the offline analyst answers meanwhile
        print(f"bullpen: {app.model_problem}: the offline analyst answers until it does",
              file=sys.stderr, flush=True)
    try:
        yield app
    finally:
        await app.aclose()


def _event_json(event: Event) -> str:
    from core.events import File

    if isinstance(event, File):
        data = event.model_dump(mode="json", exclude={"file": {"data"}})
        data["file"]["size"] = len(event.file.data)
        return json.dumps(data, ensure_ascii=False)
    return event.model_dump_json()


async def ask(question: str, *, mode: str | None, as_json: bool) -> int:
    from core.events import Done, Failed, File
    from core.types import ChatRef
    from core.words import detect_lang

    async with running_app() as app:
        chat = ChatRef(platform="cli", chat_id="ask")
        user_id = await app.store.accounts.user_for("cli", "local", "local")
        conv = await app.store.conversations.start_new(chat, user_id)
        ok = False
        async for event in app.runner.run(conversation=conv, user_id=user_id, text=question,
                                          lang=detect_lang(question), mode=mode):
            if as_json:
                print(_event_json(event), flush=True)
            elif isinstance(event, Done):
                print(event.text)
                if event.label:
                    print(f"\n[{event.label}]")
            elif isinstance(event, Failed):
                print(event.error, file=sys.stderr)
            elif isinstance(event, File):
                print(f"[{event.file.kind}: {event.path}]")
            ok = ok or isinstance(event, Done)
        return 0 if ok else 1


def check_ports(listeners: list[tuple[str, str, int]]) -> None:
    """Every fixed port serve will listen on is free, and no two settings name the same one:
    else one line naming the setting (before the database and the symbols directory start)."""
    import errno
    import socket

    seen: dict[tuple[str, int], str] = {}
    for name, host, port in listeners:
        other = seen.setdefault((host, port), name)
        if other != name:
            raise CLIError(f"{other} and {name} are both {port} on {host}: give each platform "
                           "its own port")
        try:
            family, kind, proto, _, addr = socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        except socket.gaierror as exc:
            raise CLIError(f"{name}={port}: cannot listen on {host}: {exc.strerror}") from None
        with socket.socket(family, kind, proto) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp binds
            try:
                sock.bind(addr)
            except OSError as exc:
                if exc.errno == errno.EADDRINUSE:
                    raise CLIError(f"{name}={port}: port {port} on {host} is already in use "
                                   f"(another bullpen serve?): stop that program or set {name} "
                                   "to a free port") from None
                raise CLIError(f"{name}={port}: cannot listen on {host}:{port}: "
                               f"{exc.strerror}") from None


async def _serve(console_only: bool) -> int:
    from adapters.console import ConsoleAdapter
    from bot import logs
    from bot.cli import startup
    from core.errors import BullpenError
    from core.words import t

    s = settings()
    wanted = [] if console_only else s.platforms_configured()
    check_ports(s.listeners(wanted))
    async with running_app(s) as app:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        platforms = [] if console_only else app.settings.platforms_configured()
        adapters: list[Any] = []
        console: ConsoleAdapter | None = None
        try:
            if platforms:
                adapters = app.build_adapters(platforms)  # WeChat's kept replies in Postgres
            else:
                console = ConsoleAdapter(files_dir=app.settings.files_dir, on_eof=stop.set)
                adapters = [console]
                if app.offline:
                    hint = t("startup.console_offline", s.operator_lang)
                    console._console.print(f"[dim]{hint}[/dim]")
            await app.start_adapters(adapters)
        except BullpenError as exc:  # a token refused, a port taken since the check: one line
            raise CLIError(str(exc)) from None
        if platforms and s.log_level is None:
            # up: from here the operator reads the log (start-up lines, a line per message and
            # per delivery); a start that fails stays one line
            logs.setup("INFO", s.log_format)
        reporting = asyncio.create_task(startup.report(app, adapters, serving=bool(platforms)),
                                        name="startup-lines")
        try:
            await stop.wait()
        finally:
            reporting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporting
        if console is not None and console.closed.is_set():
            await app.gateway.idle()  # piped input: answer what was asked before leaving
        return 0


async def chat() -> int:
    return await _serve(console_only=True)


async def serve() -> int:
    return await _serve(console_only=False)


async def _db() -> tuple[Database, Settings]:
    from core.errors import StoreError
    from core.store import Database

    s = settings()
    dsn = s.database_url.get_secret_value() if s.database_url else None
    try:
        return await Database.open(dsn=dsn, data_dir=s.data_dir), s
    except StoreError as exc:
        raise CLIError(str(exc)) from None


async def db_migrate() -> int:
    from bot.migrations import MIGRATIONS
    from core.errors import StoreError
    from core.store.migrate import migrate

    db, _ = await _db()
    try:
        done = await migrate(db.pool, MIGRATIONS)
        print("applied: " + (", ".join(done) if done else "nothing (up to date)"))
    except StoreError as exc:
        raise CLIError(str(exc)) from None
    finally:
        await db.aclose()
    return 0


async def db_status() -> int:
    from bot.migrations import MIGRATIONS
    from core.store.migrate import status

    db, _ = await _db()
    try:
        for version, applied in await status(db.pool, MIGRATIONS):
            print(f"{'applied' if applied else 'pending'}  {version}")
    finally:
        await db.aclose()
    return 0


# the loopback fakes the platform benches run against: in a checkout, not in an installed wheel
CHECKOUT_FAKES = Path(__file__).resolve().parents[2] / "tests" / "fakes"


def bench(args: argparse.Namespace) -> int:
    name = f"bot.benches.{args.name}"
    try:
        return _bench(name, args)
    except (FileNotFoundError, ModuleNotFoundError) as exc:
        about_tests = (isinstance(exc, FileNotFoundError)  # a bench looking for its fake
                       or (exc.name or "").split(".")[0] == "tests")
        if CHECKOUT_FAKES.is_dir() or not about_tests:
            raise
        raise CLIError(f"`bullpen bench {args.name}` needs a checkout of the repository: it "
                       f"runs against the loopback fakes in tests/fakes/, which an installed "
                       f"bullpen does not ship") from None


def _bench(name: str, args: argparse.Namespace) -> int:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:  # the bench exists but something it imports does not: show it
            raise
        raise CLIError(f"no benchmark named {args.name!r}") from None
    kwargs: dict[str, Any] = {"repeat": args.repeat} if args.repeat else {}
    if args.platform:
        kwargs["platform"] = args.platform
    for key in ("chats", "minutes", "trace"):
        if getattr(args, key, None) is not None:
            kwargs[key] = getattr(args, key)
    result = module.run(**kwargs)
    if asyncio.iscoroutine(result):
        result = asyncio.run(result)
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    return 0


async def reuse_database(settings: Settings) -> tuple[Database | None, Any]:
    """For `bullpen debate` and `bullpen podcast`: the database when `DATABASE_URL` names one
    (stored debate reports are reused; an unreachable one is said and skipped), and the tool
    registry (on that database's cache, else plain)."""
    from bot.app import build_tools
    from bot.migrations import MIGRATIONS
    from core.errors import StoreError
    from core.store import Database
    from core.store.migrate import migrate

    db: Database | None = None
    if settings.database_url is not None:
        try:
            db = await Database.open(dsn=settings.database_url.get_secret_value(),
                                     data_dir=settings.data_dir)
            await migrate(db.pool, MIGRATIONS)
        except StoreError as exc:
            print(f"bullpen: no report reuse ({exc})", file=sys.stderr)
            db = None
    if db is not None:
        return db, build_tools(settings, db)
    import tools

    return None, tools.build_registry()
