"""The offline analyst answers the period that was asked (issue 29): a month, a range, a
date window, through the real tools on the data packs; where the data ends inside the asked
window it says so, in the question's language."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from analyst.ict_answer import ict_answer
from analyst.offline import OfflineAnalyst
from bot.commands import parse
from bot.commands.questions import as_question
from bot.symbols_bridge import find_symbols
from core.agent.turn import Turn, TurnOptions
from core.events import Done, Event, File, ToolStarted
from core.testing import MemoryRecorder
from tests.tools.test_offline_packs import _need
from tools import build_registry
from tools.data import DataConfig, configure


@pytest.fixture(autouse=True)
def _offline_data() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


async def _ask(text: str, lang: str = "en", options: TurnOptions | None = None,
               ) -> tuple[list[Event], Done]:
    analyst = OfflineAnalyst(registry=build_registry(), find_symbols=find_symbols,
                             ict_answer=ict_answer)
    events = [e async for e in analyst.run(Turn(text=text, history=[], lang=lang,
                                                 recorder=MemoryRecorder(),
                                                 options=options or TurnOptions()))]
    done = events[-1]
    assert isinstance(done, Done), events
    return events, done


def _calls(events: list[Event]) -> list[tuple[str, dict[str, object]]]:
    return [(e.name, dict(e.arguments or {})) for e in events if isinstance(e, ToolStarted)]


async def test_spdb_september_2024_is_answered_and_the_early_end_said() -> None:
    _need("hqchart")
    events, done = await _ask("浦发银行2024年9月的走势", lang="zh")
    assert _calls(events) == [("get_ohlcv", {"symbol": "600000", "period": "2024-09",
                                             "limit": 10})]
    assert "2024-09-02 至 2024-09-19" in done.text
    assert "所问区间为 2024-09-01 至 2024-09-30" in done.text  # the data ends on the 19th
    assert "⚠️ unknown" not in done.text and "2025" not in done.text


@pytest.mark.parametrize(("question", "lang"), [
    ("沪深300 2020年5月走势", "zh"), ("How did the CSI 300 do in May 2020?", "en")])
async def test_csi_300_may_2020_is_may_2020(question: str, lang: str) -> None:
    events, done = await _ask(question, lang=lang)
    assert _calls(events) == [("get_ohlcv", {"symbol": "000300", "period": "2020-05",
                                             "limit": 10})]
    assert "2020-05-06" in done.text and "2020-05-29" in done.text
    assert "2025" not in done.text.split("\n数据来源")[0].split("\nSource")[0]
    assert "⚠️" not in done.text  # the data covers May 2020 entirely


async def test_chart_command_with_a_date_range_draws_that_range() -> None:
    q = as_question(parse("/chart 000300 2019-06-01 2020-06-16"))  # type: ignore[arg-type]
    assert q is not None
    events, done = await _ask(q.text, options=q.options)
    assert _calls(events) == [("generate_chart", {"symbols": ["000300"],
                                                  "period": "2019-06-01..2020-06-16"})]
    files = [e.file for e in events if isinstance(e, File)]
    assert len(files) == 1 and "2019-06-03..2020-06-16" in files[0].caption
    assert "2019-06-03 to 2020-06-16" in done.text


async def test_chart_command_with_an_unreadable_range_says_what_it_accepts() -> None:
    q = as_question(parse("/chart 000300 whenever"))  # type: ignore[arg-type]
    assert q is not None
    _, done = await _ask(q.text, options=q.options)
    assert "unknown period 'whenever'" in done.text and "2019-06-01 2020-06-16" in done.text


async def test_a_single_date_is_still_the_price_on_that_date() -> None:
    _need("hqchart")
    events, done = await _ask("浦发银行 2024-09-10 收盘价", lang="zh")
    assert _calls(events)[0] == ("get_ohlcv", {"symbol": "600000", "start": "2024-09-10",
                                               "end": "2024-09-10", "limit": 5})
    assert "2024-09-10 收盘 **8.5" in done.text
