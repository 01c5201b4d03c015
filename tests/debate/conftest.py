"""Fixtures for the debate tests (helpers live in `tests/debate/helpers.py`)."""

from __future__ import annotations

import pytest

from core.tools import ToolRegistry


@pytest.fixture(scope="session")
def registry() -> ToolRegistry:
    import tools

    return tools.build_registry()
