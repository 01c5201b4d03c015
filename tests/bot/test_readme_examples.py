"""The README's example questions are answered as it says: each through the offline analyst on
the data packs, about the instruments the table names, in the language it was asked in, with a
dated figure and no warning that the question could not be answered."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyst.ict_answer import ict_answer
from analyst.offline import OfflineAnalyst
from bot.eval.score import english_words
from bot.symbols_bridge import find_symbols
from core.agent.turn import Turn
from core.events import Done, ToolStarted
from core.testing import MemoryRecorder
from tests.tools.test_offline_packs import _need
from tools import build_registry
from tools.data import DataConfig, configure

README = Path(__file__).resolve().parents[2] / "README.md"


def _examples() -> list[tuple[str, list[str]]]:
    text = README.read_text("utf-8")
    m = re.search(r"<!-- examples:start -->(.*?)<!-- examples:end -->", text, re.S)
    assert m is not None, "README.md lost its examples table"
    rows = [line for line in m.group(1).splitlines() if line.startswith("| `")]
    out = []
    for row in rows:
        ask, about = (cell.strip() for cell in row.strip("|").split("|")[:2])
        out.append((ask.strip("`"), [s.strip() for s in about.split(",")]))
    return out


EXAMPLES = _examples()


@pytest.fixture(autouse=True)
def _offline_data() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


def test_the_readme_shows_at_least_five_examples_in_both_languages() -> None:
    langs = {"zh" if re.search(r"[\u4e00-\u9fff]", q) else "en" for q, _ in EXAMPLES}
    assert len(EXAMPLES) >= 5 and langs == {"en", "zh"}


@pytest.mark.parametrize(("question", "about"), EXAMPLES, ids=[q for q, _ in EXAMPLES])
async def test_each_example_is_answered_as_the_readme_says(question: str,
                                                           about: list[str]) -> None:
    _need("hqchart")
    lang = "zh" if re.search(r"[\u4e00-\u9fff]", question) else "en"
    analyst = OfflineAnalyst(registry=build_registry(), find_symbols=find_symbols,
                             ict_answer=ict_answer)
    events = [e async for e in analyst.run(Turn(text=question, history=[], lang=lang,
                                                 recorder=MemoryRecorder()))]
    done = events[-1]
    assert isinstance(done, Done), events
    asked = {str(v) for e in events if isinstance(e, ToolStarted)
             for v in (e.arguments or {}).values()}
    asked |= {str(s) for e in events if isinstance(e, ToolStarted)
              for v in (e.arguments or {}).values() if isinstance(v, list) for s in v}
    for symbol in about:
        assert symbol in asked, (symbol, asked)
    assert re.search(r"\d{4}-\d{2}-\d{2}|\d{4}年\d{1,2}月", done.text), done.text
    assert "⚠️" not in done.text.split("\n")[0], done.text
    if lang == "zh":
        assert not english_words(done.text), english_words(done.text)
