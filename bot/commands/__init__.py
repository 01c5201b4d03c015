"""Slash commands, each declared once with `@command` in a module of this package.

A declaration carries every fact of a command: its name, its one-line summary and its usage
(catalogue keys, so both languages), and how the message path treats it (gated by the
person's budget, counted against the message rate, kept in order behind a question's
placeholder, starting a new conversation epoch). Everything else is derived from the
declarations: the commands Bullpen knows, both help texts, every platform's native menu
(`menu`) and the usage line a handler answers with. Adding a command is one module here (found
by `declared()`, which imports every module of the package) plus its test.

Everything that is not a command goes to the conversation's mode; some commands (/fast,
/debate, /ict, /chart, /plan) are questions with a mode or an intent attached
(`bot.commands.questions`).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from core.agent.turn import TurnOptions
from core.words import LANGS, t

# a handler takes a `bot.commands.context.CommandContext` (typed where it is written; Any here
# so that the declarations do not import the context, which imports them)
Handler = Callable[[Any], Awaitable[None]]


@dataclass(frozen=True)
class CommandSpec:
    """One command's facts. `summary` and `usage` are catalogue keys (`usage` None: the
    command takes no arguments, its usage is its name)."""

    name: str
    handler: Handler
    summary: str
    usage: str | None = None
    gated: bool = False  # refused when the person is over budget or not admitted
    rated: bool = True  # counted against the person's message rate
    in_order: bool = True  # answered after the placeholder of a question sent before it
    new_epoch: bool = False  # conversations read before it are stale (it changes the mode)


_DECLARED: dict[str, CommandSpec] = {}
_LOADED = False


def command(name: str, *, summary: str, usage: str | None = None, gated: bool = False,
            rated: bool = True, in_order: bool = True,
            new_epoch: bool = False) -> Callable[[Handler], Handler]:
    """Declares the decorated handler as `/name`. Stack several for aliases (/start, /help)."""

    def register(fn: Handler) -> Handler:
        if name in _DECLARED and _DECLARED[name].handler is not fn:
            raise ValueError(f"/{name} is declared twice")
        declaration = CommandSpec(name=name, handler=fn, summary=summary, usage=usage,
                                  gated=gated, rated=rated, in_order=in_order,
                                  new_epoch=new_epoch)
        # stacked decorators run bottom-up: a name stacked above others of the same handler
        # goes before them, so the help lists a stack as it reads
        items = list(_DECLARED.items())
        at = next((i for i, (_, s) in enumerate(items) if s.handler is fn), len(items))
        items.insert(at, (name, declaration))
        _DECLARED.clear()
        _DECLARED.update(items)
        return fn

    return register


def forget(name: str) -> None:
    """Removes a declaration (a test's example command, once the test is over)."""
    _DECLARED.pop(name, None)


def declared() -> dict[str, CommandSpec]:
    """Every declared command by name, in the order the help and the menus list them. The
    package's modules are imported on the first call (each declares its commands)."""
    global _LOADED
    if not _LOADED:
        for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: _ORDER.get(m.name, 99)):
            importlib.import_module(f"{__name__}.{mod.name}")
        _LOADED = True
    return _DECLARED


# the help and the menus list the chat's own commands first, then the questions, accounts, ...
_ORDER = {"chat": 0, "questions": 1, "accounts": 2, "admin": 3, "subscriptions": 4, "ta": 5,
          "web": 6}


def spec(name: str) -> CommandSpec | None:
    return declared().get(name)


def usage_line(name: str, lang: str) -> str:
    """`/name ARGS` in `lang` (the declaration's usage key), or `/name`."""
    got = spec(name)
    return t(got.usage, lang) if got is not None and got.usage else f"/{name}"


def menu(lang: str) -> list[tuple[str, str]]:
    """(name, summary) of every command, for a platform's native menu."""
    return [(s.name, t(s.summary, lang)) for s in declared().values()]


def other_menus() -> dict[str, list[tuple[str, str]]]:
    """The menu in every catalogue language but the first (English, the platforms' default
    menu): their localized menus."""
    return {lang: menu(lang) for lang in LANGS[1:]}


def help_text(lang: str) -> str:
    """The help: its head, then each command's usage and summary."""
    lines = [f"{usage_line(s.name, lang)} - {t(s.summary, lang)}" for s in declared().values()]
    return t("chat.help_head", lang) + "\n\n" + "\n".join(lines)


def __getattr__(name: str) -> tuple[tuple[str, str], ...]:
    """`COMMANDS`: the English menu, for callers that start adapters without settings (the
    benches)."""
    if name == "COMMANDS":
        return tuple(menu("en"))
    raise AttributeError(name)


_COMMAND = re.compile(r"^/([A-Za-z_]+)(?:@\w+)?(?:\s+(.*))?$", re.S)


@dataclass(frozen=True)
class Command:
    name: str
    args: str = ""

    @property
    def known(self) -> bool:
        return self.name in declared()


def parse(text: str) -> Command | None:
    m = _COMMAND.match(text.strip())
    if not m:
        return None
    return Command(m.group(1).lower(), (m.group(2) or "").strip())


@dataclass(frozen=True)
class Question:
    """A message or a command that becomes a question for the agent. /ict and /chart name a
    tool's job, so they run in normal mode (the tool loop, or the offline analyst) whatever
    the chat's mode."""

    text: str
    mode: str | None = None
    options: TurnOptions = field(default_factory=TurnOptions)
