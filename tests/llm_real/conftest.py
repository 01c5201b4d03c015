"""The real-model suite runs only under `make test-llm` (BULLPEN_TEST_LLM=1), which installs
the `llm` extra first: it is slow on 2 cores and needs a 130 MB model, so `make test` skips
it even where the extra happens to be installed. Each test gets a fresh server (it loads in
about 2 s)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from bot.eval.local_model import LocalModel, available

ENABLED = os.environ.get("BULLPEN_TEST_LLM") == "1"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    skip = pytest.mark.skip(reason="the real-model suite runs with `make test-llm`")
    for item in items:
        if str(item.fspath).startswith(here) and not ENABLED:
            item.add_marker(skip)


@pytest.fixture
async def local_model() -> AsyncIterator[LocalModel]:
    if not available():
        pytest.fail("BULLPEN_TEST_LLM=1 but the `llm` extra is not installed: "
                    "run `make test-llm`")
    async with LocalModel() as model:
        yield model
