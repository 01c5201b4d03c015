"""The kernel's own modes, declared for the mode registry (`core.agent.modes`): normal (the
tool loop) and fast (one call). Both need a model; without one the offline analyst stands in
(declared by `analyst.modes`)."""

from __future__ import annotations

from core.agent.fast import FastMode
from core.agent.modes import ModeDecl, ModeNeeds
from core.agent.normal import NormalMode
from core.ports import Mode


def normal(needs: ModeNeeds) -> Mode | None:
    return NormalMode(llm=needs.model(), registry=needs.registry, plan=needs.llm_plan,
                      small=needs.small_model, find_symbols=needs.find_symbols,
                      find_period=needs.find_period)


def fast(needs: ModeNeeds) -> Mode | None:
    return FastMode(llm=needs.model())


MODES = (ModeDecl("normal", normal), ModeDecl("fast", fast))
