"""The conformance suite's cases, unchanged, on the web platform (`WebHarness`: the real
`WebAdapter` and App, a browser-like client per user). Not run here: the 429 cases (the web
has no platform rate limits to wait out), voice notes (the page sends none), groups and the
scheduled pushes (covered by the HTTP tests and the browser suite as far as the page goes)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.conformance import test_conformance as suite
from tests.adapters.conformance.web_harness import WebHarness

CASES: list[Callable[[Any], Awaitable[None]]] = [
    suite.test_a_question_gets_the_core_answer_once,
    suite.test_help_as_the_platforms_own_command_lists_the_commands,
    suite.test_mode_switch_is_persisted_across_a_restart,
    suite.test_a_chart_request_sends_an_image_and_its_text,
    suite.test_a_debate_report_arrives_as_a_pdf_where_documents_are_supported,
    suite.test_a_long_answer_is_split_at_the_platforms_limit_and_complete,
    suite.test_the_same_message_delivered_again_runs_once,
    suite.test_forged_deliveries_are_refused_and_nothing_reaches_the_core,
]


@pytest.fixture
async def web_harness(pg_dsn: str, tmp_path: Path) -> AsyncIterator[WebHarness]:
    async with WebHarness(dsn=pg_dsn, data_dir=tmp_path / "data") as h:
        yield h  # type: ignore[misc]


@pytest.mark.parametrize("case", CASES, ids=[c.__name__.removeprefix("test_") for c in CASES])
async def test_the_web_platform_passes(case: Callable[[Any], Awaitable[None]],
                                       web_harness: WebHarness) -> None:
    await case(web_harness)
