"""Fixtures for the tools tests: provider response fixtures, parametrised contract cases."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tools.data import DataConfig, configure


def provider_fixtures() -> Any:
    """tests/tools/provider_fixtures.py as a module (pytest runs with --import-mode=importlib,
    and a `tests` package in site-packages hides ours)."""
    name = "bullpen_tools_provider_fixtures"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("provider_fixtures.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def pf() -> Any:
    return provider_fixtures()


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "contract_case" in metafunc.fixturenames:
        cases = list(provider_fixtures().cases())
        metafunc.parametrize("contract_case", cases, ids=["/".join(c) for c in cases])


@pytest.fixture
def data_config() -> Iterator[None]:
    """Restore the default (offline) data configuration after the test."""
    yield
    configure(DataConfig())
