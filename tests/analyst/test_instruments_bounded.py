"""The instrument reader does bounded work per message (issue 34, item 4), like the directory's
`extract` (tests/symbols/test_symbols_bounded.py): a 20,000-character message, ordinary or
hostile, is read only in the head and tail `extract` reads, with at most a fixed number of
probes per character read and at most `MAX_NAME_LOOKUPS` directory searches. Held on counted
work (`ReadWork`), never on a clock."""

from __future__ import annotations

from typing import Any

import pytest

from analyst.instruments import MAX_NAME_LOOKUPS, ReadWork, find_instruments
from tools.symbols import EXTRACT_MAX_CHARS, ExtractWork

# hostile shapes for each pass: near-names and distinct capitalised words (fuzzy searches),
# Chinese names before question cues and one long CJK run (the cue probes), index words
# (pass 1), everyday lower-case words (skipped before any search)
ADVERSARIAL = {
    "near_names": "Nvidea Microsfot Amazn Teslla Appel ",
    "cjk_cues": "茅台怎么样 平安走势 宁德股价 ",
    "cjk_run": "贵州茅台宁德时代比亚迪中国平安招商银行",
    "index_words": "上证指数和沪深300 ",
    "lower": "the quick brown fox jumps over the lazy dog ",
    "distinct_words": "",
}


def _hostile(shape: str, length: int) -> str:
    if shape == "distinct_words":
        body = " ".join(f"Zorbl{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}x"
                        for i in range(length // 6))
    else:
        unit = ADVERSARIAL[shape]
        body = unit * (length // len(unit) + 1)
    return body[:length]


@pytest.fixture(scope="module")
def directory() -> Any:
    from tools.symbols import default_directory

    return default_directory()


def _work(directory: Any, text: str) -> ReadWork:
    work = ReadWork()
    work.extract = ExtractWork()
    find_instruments(text, directory, work=work)
    return work


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_a_hostile_20k_message_costs_what_a_hostile_window_costs(directory: Any,
                                                                 shape: str) -> None:
    work = _work(directory, _hostile(shape, 20_000))
    assert EXTRACT_MAX_CHARS - 2 * 64 <= work.chars <= EXTRACT_MAX_CHARS
    assert work.extract.truncated and work.extract.chars == work.chars
    assert work.searches <= MAX_NAME_LOOKUPS + 1  # + the one-word check
    # a Latin word or index word is one probe; a CJK character at most five cue probes
    assert work.probes <= 5 * work.chars
    # twice the text: the same work, up to the few words where the windows are cut
    double = _work(directory, _hostile(shape, 40_000))
    assert abs(double.chars - work.chars) <= 2 * 64
    assert abs(double.probes - work.probes) <= work.probes // 50 + 5
    assert double.searches <= MAX_NAME_LOOKUPS + 1


def test_work_grows_with_the_text_up_to_the_limit_then_stops(directory: Any) -> None:
    unit = "茅台怎么样? Compare Nvidea and 上证指数 today. "
    text = unit * (20_000 // len(unit) + 1)
    small = _work(directory, text[:100])
    at_limit = _work(directory, text[:EXTRACT_MAX_CHARS])
    beyond = _work(directory, text[:20_000])
    assert small.chars == 100 and at_limit.chars == EXTRACT_MAX_CHARS
    assert small.probes < at_limit.probes
    assert beyond.probes <= at_limit.probes
    assert beyond.searches <= at_limit.searches + 2  # a word the tail window cuts differently


def test_a_question_after_a_long_paste_is_read_and_the_middle_is_not(directory: Any) -> None:
    filler = "Lorem ipsum dolor sit amet. " * (EXTRACT_MAX_CHARS // 28)
    text = "茅台怎么样? " + filler + "Also Teslla. " + filler + "And what about Nvidea?"
    assert [i.code for i in find_instruments(text, directory)] == ["600519", "NVDA"]
