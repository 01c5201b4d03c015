"""The typed request a mode gets (`TurnOptions`): what commands and the usage gate set arrives
as typed fields, and a nonsensical count is refused where it is made, not read as a default."""

from __future__ import annotations

import dataclasses

import pytest

from bot import commands
from bot.commands.questions import as_question
from core.agent.turn import TurnOptions
from core.errors import InputError
from core.usage_gate import LEVELS, degraded_options


def test_commands_make_typed_requests() -> None:
    ict = as_question(commands.parse("/ict NVDA 4h"))
    chart = as_question(commands.parse("/chart 600519"))
    assert ict is not None and ict.options == TurnOptions(intent="ict", symbol="NVDA",
                                                          interval="4h")
    assert chart is not None and chart.options == TurnOptions(intent="chart", symbol="600519",
                                                              period="6mo")


def test_the_usage_gate_degrades_by_typed_fields() -> None:
    level = next(lv for lv in LEVELS if lv.max_turns is not None and lv.cheap)
    options = dataclasses.replace(TurnOptions(intent="ict"),
                                  **degraded_options(level, cheap_role="fast"))
    assert (options.intent, options.max_turns, options.profile_role) == (
        "ict", level.max_turns, "fast")


@pytest.mark.parametrize("field", ["max_turns", "max_rounds"])
def test_a_count_below_one_is_refused(field: str) -> None:
    with pytest.raises(InputError, match=field):
        TurnOptions(**{field: 0})  # type: ignore[arg-type]


def test_options_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        TurnOptions().symbol = "NVDA"  # type: ignore[misc]
