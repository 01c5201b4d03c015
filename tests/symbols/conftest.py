"""Shared fixtures for the symbols tests: one directory built from the packages per session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tools.symbols import SymbolDirectory

QUERIES = Path(__file__).with_name("queries.json")


@pytest.fixture(scope="session")
def directory() -> SymbolDirectory:
    return SymbolDirectory.from_packages()


@pytest.fixture(scope="session")
def query_set() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(QUERIES.read_text("utf-8"))
    return data
