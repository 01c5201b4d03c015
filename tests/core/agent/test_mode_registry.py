"""The mode registry: every domain declares its modes once; the composition root's table has
the same names and classes production wired by hand before (normal, fast, debate, plan,
podcast; the offline analyst standing in for normal, fast and plan with no model)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from analyst.offline import OfflineAnalyst
from analyst.plan_mode import PlanMode
from bot.app import MODE_DOMAINS, build_modes
from bot.settings import load_settings
from core.agent import FastMode, NormalMode, Turn
from core.agent.modes import ModeDecl, ModeNeeds, ModeRegistry
from core.errors import ConfigError
from core.events import Done, Event
from core.ports import Mode
from core.testing import MemoryRecorder, ScriptedLLM
from core.tools import ToolRegistry
from debate.mode import DebateMode
from podcast.mode import PodcastMode
from tools import build_registry


class EchoMode:
    """A mode a test declares: answers with the text it was asked."""

    name = "echo"

    async def run(self, turn: Any) -> AsyncIterator[Event]:
        yield Done(text=turn.text)


def _needs(llm: Any = None, registry: ToolRegistry | None = None) -> ModeNeeds:
    return ModeNeeds(registry=registry or ToolRegistry(), llm=llm, find_symbols=lambda _: [],
                     debate_token_budget=None)


def test_production_table_with_a_model() -> None:
    settings = load_settings(llm_base_url="http://unused", llm_model="m", llm_plan=False)
    modes = build_modes(settings, build_registry(), ScriptedLLM([]))  # type: ignore[arg-type]
    assert {name: type(mode) for name, mode in modes.items()} == {
        "normal": NormalMode, "fast": FastMode, "plan": PlanMode, "debate": DebateMode,
        "podcast": PodcastMode}


def test_production_table_with_no_model_shares_one_offline_analyst() -> None:
    settings = load_settings()
    modes = build_modes(settings, build_registry(), None)
    assert isinstance(modes["normal"], OfflineAnalyst)
    assert modes["normal"] is modes["fast"] is modes["plan"]
    assert isinstance(modes["debate"], DebateMode) and isinstance(modes["podcast"], PodcastMode)


def test_plan_mode_declines_without_the_ict_tool() -> None:
    settings = load_settings(llm_base_url="http://unused", llm_model="m")
    modes = build_modes(settings, ToolRegistry(), ScriptedLLM([]))  # type: ignore[arg-type]
    assert "plan" not in modes and "normal" in modes


def test_a_name_declared_twice_for_one_state_is_refused() -> None:
    def echo(_: ModeNeeds) -> Mode | None:
        return EchoMode()

    with pytest.raises(ConfigError, match="'normal' is declared twice"):
        ModeRegistry([*(d for domain in MODE_DOMAINS for d in domain),
                      ModeDecl("normal", echo, when="always")])


async def test_a_new_mode_is_one_declaration() -> None:
    """The recipe: a domain's declaration, and the runner's table has it in both states."""
    def echo(_: ModeNeeds) -> Mode | None:
        return EchoMode()

    registry = ModeRegistry([ModeDecl("echo", echo, when="always")])
    assert registry.names() == ["echo"]
    for llm in (None, ScriptedLLM([])):
        mode = registry.build(_needs(llm))["echo"]
        events = [e async for e in mode.run(Turn(text="hi", history=[], recorder=MemoryRecorder()))]
        assert events == [Done(text="hi")]


def test_a_model_mode_asks_for_the_model() -> None:
    with pytest.raises(ConfigError):
        _needs(None).model()
