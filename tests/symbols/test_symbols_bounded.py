"""Symbol extraction does bounded work per message (issue 34, item 4): a 20,000-character
message, ordinary or hostile, costs what its first `EXTRACT_MAX_CHARS` characters cost, and
the work per character read is capped. The bound is held on counted work (probes: exact-key
lookups and instrument forms scanned), not on a clock; one CPU-time check compares two inputs
timed in the same test."""

from __future__ import annotations

import time

import pytest

from tools.symbols import EXTRACT_MAX_CHARS, ExtractWork, SymbolDirectory
from tools.symbols.index import extract_windows

# hostile shapes: near-names, capitals and tickers (each a context check), spelled-out
# tickers, long runs of digits and of CJK, repeated Chinese names and near-names
ADVERSARIAL = {
    "near_names": "Nvidea Microsfot Appel Teslla Amazn ",
    "tickers": "AAPL NVDA MSFT TSLA BTC ETH SPX ",
    "spelled": "N V D A ",
    "digits": "6",
    "cjk_run": "茅",
    "cjk_names": "贵州茅台宁德时代比亚迪中国平安招商银行",
    "cjk_near": "贵州茅苔宁得时代比亚迪迪中国平按",
    "cashtags": "$AAPL ",
}
LONG = 20_000


def _hostile(unit: str) -> str:
    return (unit * (LONG // len(unit) + 1))[:LONG]


def _probes(directory: SymbolDirectory, text: str) -> ExtractWork:
    work = ExtractWork()
    directory.extract(text, work=work)
    return work


def _cpu(directory: SymbolDirectory, text: str, repeat: int) -> float:
    """The least CPU seconds of `repeat` calls (the least is what load inflates least)."""
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        directory.extract(text)
        best = min(best, time.process_time() - c0)
    return best


@pytest.mark.parametrize("shape", sorted(ADVERSARIAL))
def test_a_hostile_20k_message_reads_only_the_window(directory: SymbolDirectory,
                                                     shape: str) -> None:
    text = _hostile(ADVERSARIAL[shape])
    work = _probes(directory, text)
    assert work.truncated
    assert EXTRACT_MAX_CHARS - 2 * 64 <= work.chars <= EXTRACT_MAX_CHARS
    # the whole text costs exactly what its head and tail alone cost
    head, tail = (piece for _, piece in extract_windows(text))
    alone = [_probes(directory, head), _probes(directory, tail)]
    assert not any(w.truncated for w in alone)
    assert sum(w.probes for w in alone) == work.probes
    # at most one probe per candidate length at each character read (CJK names come in
    # few lengths; Latin names are one to five words), plus the instrument forms found
    per_char = len(directory._index._cjk_lengths) + 5
    assert work.probes <= per_char * work.chars


def test_work_grows_with_the_text_up_to_the_limit_then_stops(
        directory: SymbolDirectory) -> None:
    unit = "Compare AAPL and 贵州茅台, also NVDA vs 宁德时代 today. "
    text = unit * (LONG // len(unit) + 1)
    small = _probes(directory, text[:100])
    at_limit = _probes(directory, text[:EXTRACT_MAX_CHARS])
    beyond = _probes(directory, text[:LONG])
    assert not small.truncated and not at_limit.truncated and beyond.truncated
    assert small.probes < at_limit.probes
    assert beyond.probes <= at_limit.probes
    # linear below the limit: the window costs about its share of characters, not more
    assert at_limit.probes <= 2 * small.probes * EXTRACT_MAX_CHARS / 100


def test_hostile_20k_cpu_is_bounded_relative_to_a_100_char_message(
        directory: SymbolDirectory) -> None:
    """Generous, since CPU time of other xdist workers' shapes varies: the worst hostile
    20,000 characters within 10x the CPU of the window's share of a 100-character message
    (4x failed once at 1.04x the bound on a loaded run). The work-count tests above are the
    exact bound; this one catches a return of the quadratic case (561 ms at 10,000
    characters then, about 9x this bound at 20,000)."""
    question = "Compare AAPL and 贵州茅台 earnings; is NVDA or 宁德时代 the better buy now? "[:100]
    directory.extract(question)
    base = _cpu(directory, question, repeat=20)
    worst = max(_cpu(directory, _hostile(unit), repeat=2) for unit in ADVERSARIAL.values())
    assert worst <= 10 * base * EXTRACT_MAX_CHARS / len(question)


def test_head_and_tail_are_read_the_middle_is_not_and_spans_stay_in_the_text(
        directory: SymbolDirectory) -> None:
    filler = "Lorem ipsum dolor sit amet. " * (EXTRACT_MAX_CHARS // 28)
    text = "Is 贵州茅台 a buy? " + filler + "Also TSLA. " + filler + "And NVDA?"
    found = directory.extract(text)
    assert [m.code for m in found] == ["600519", "NVDA"]
    for m in found:
        s, e = m.span or (0, 0)
        assert text[s:e] in ("贵州茅台", "NVDA")


def test_the_windows_never_cut_inside_a_word() -> None:
    text = "x " * 3000 + "NVIDIA rocks"
    (_, head), (offset, tail) = extract_windows(text)
    assert head.endswith(" ") or not head[-1].isalnum()
    assert offset + len(tail) == len(text) and not text[offset - 1].isalnum()
    # no boundary anywhere: cut at the limits
    assert [len(p) for _, p in extract_windows("a" * 10_000)] == [
        EXTRACT_MAX_CHARS - 1024, 1024]
    assert extract_windows("short") == [(0, "short")]
