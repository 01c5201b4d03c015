"""Financial tools: market data, indicators, valuation, charts and research.

`build_registry()` imports every tool module (each registers its `@tool`s on import) and
returns the registry; importing `tools` alone stays cheap.
"""

from __future__ import annotations

import importlib

from core.tools import DEFAULT_REGISTRY, ToolRegistry

TOOL_MODULES: tuple[str, ...] = (
    "tools.market",
    "tools.indicators",
    "tools.charts",
    "tools.valuation",
    "tools.fundamentals",
    "tools.flows",
    "tools.screener",
    "tools.funds",
    "tools.research",
    "tools.ict_tool",
)


def build_registry() -> ToolRegistry:
    """Import every tool module and return the registry holding their tools."""
    for module in TOOL_MODULES:
        importlib.import_module(module)
    return DEFAULT_REGISTRY
