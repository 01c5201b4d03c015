"""Modes registered like tools: each domain declares its modes once, by name, with a factory;
the composition root builds the one table the runner looks a conversation's mode up in.

A declaration says when its factory answers: with a model (`"model"`), with none configured
(`"no_model"`: the offline stand-ins), or either way (`"always"`). For one name and one state
there is exactly one declaration; a factory may decline (return None) when what it stands on is
missing (plan mode without the ICT tool), and the name is then absent. A factory shared by
several names (the offline analyst answers normal, fast and plan) is built once per table.

Adding a mode: write the class (the `core.ports.Mode` port) in its domain package, declare a
`ModeDecl` in that package's `MODES`, and make sure the composition root's list of domains
(`bot.app.MODE_DOMAINS`) names the package; `/mode <name>` and the runner find it from there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from core.errors import ConfigError
from core.llm.speech import SpeechClient
from core.ports import LLMProvider, Mode
from core.tools import ToolRegistry

When = Literal["model", "no_model", "always"]


@dataclass(frozen=True)
class ModeNeeds:
    """Everything a mode factory may take: the shared collaborators and the settings' knobs
    (the composition root fills it from `Settings`; no factory reads the environment)."""

    registry: ToolRegistry
    llm: LLMProvider | None
    find_symbols: Callable[[str], list[str]]  # the symbols a message names (the directory)
    debate_token_budget: int | None  # None: no budget
    pool: Any = None  # asyncpg pool (debate reuse, podcast inputs); None in unit tests
    speech: SpeechClient | None = None
    help_text: Callable[[str], str] | None = None  # the commands' help, in a language
    llm_plan: bool = False  # normal mode writes a plan before its tool calls
    small_model: bool = False  # the agent's model is small: normal mode spells instruments out
    speech_voices: dict[str, str] = field(default_factory=dict)
    # the period a message asks about, as the tools' `period` takes it (3mo, 1y, 2024-09)
    find_period: Callable[[str], str | None] = lambda _: None

    def model(self) -> LLMProvider:
        """The model, for a factory declared `"model"` (the registry builds it only then)."""
        if self.llm is None:
            raise ConfigError("this mode needs a model and none is configured")
        return self.llm


ModeFactory = Callable[[ModeNeeds], Mode | None]


@dataclass(frozen=True)
class ModeDecl:
    """One mode name, the factory that builds it, and when that factory answers."""

    name: str
    build: ModeFactory
    when: When = "model"


class ModeRegistry:
    """The declarations of every domain, checked once: one factory per name and state."""

    def __init__(self, decls: Iterable[ModeDecl]) -> None:
        self._decls: dict[tuple[str, bool], ModeDecl] = {}
        for decl in decls:
            for has_model in _states(decl.when):
                if (decl.name, has_model) in self._decls:
                    raise ConfigError(f"mode {decl.name!r} is declared twice "
                                      f"({'with' if has_model else 'without'} a model)")
                self._decls[(decl.name, has_model)] = decl

    def names(self) -> list[str]:
        """Every declared name, in declaration order, once."""
        return list(dict.fromkeys(name for name, _ in self._decls))

    def build(self, needs: ModeNeeds) -> dict[str, Mode]:
        """The table the runner looks modes up in: each name's factory for the state `needs`
        is in (a model or none), built once however many names share it."""
        has_model = needs.llm is not None
        built: dict[int, Mode | None] = {}
        modes: dict[str, Mode] = {}
        for (name, state), decl in self._decls.items():
            if state is not has_model:
                continue
            key = id(decl.build)
            if key not in built:
                built[key] = decl.build(needs)
            mode = built[key]
            if mode is not None:
                modes[name] = mode
        return modes


def _states(when: When) -> Sequence[bool]:
    return {"model": (True,), "no_model": (False,), "always": (True, False)}[when]


__all__ = ["ModeDecl", "ModeFactory", "ModeNeeds", "ModeRegistry", "When"]
