"""The analyst's modes, declared for the mode registry (`core.agent.modes`): plan mode (the ICT
analysis, a model-filled trade plan, validated in code) and, with no model configured, the
offline analyst answering normal, fast and plan alike (one instance)."""

from __future__ import annotations

from analyst.ict_answer import ict_answer
from analyst.offline import OfflineAnalyst
from analyst.plan_mode import TOOL, PlanMode
from core.agent.modes import ModeDecl, ModeNeeds
from core.ports import Mode


def plan(needs: ModeNeeds) -> Mode | None:
    """Plan mode stands on the ICT tool; without it the name is absent and normal mode
    answers a plan question."""
    if TOOL not in needs.registry:
        return None
    return PlanMode(llm=needs.model(), registry=needs.registry, find_symbols=needs.find_symbols)


def offline_analyst(needs: ModeNeeds) -> Mode | None:
    return OfflineAnalyst(registry=needs.registry, find_symbols=needs.find_symbols,
                          ict_answer=ict_answer, help_text=needs.help_text)


MODES = (
    ModeDecl("plan", plan),
    *(ModeDecl(name, offline_analyst, when="no_model") for name in ("normal", "fast", "plan")),
)
