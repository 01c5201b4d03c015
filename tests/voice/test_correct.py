"""Stock-name correction: speech errors, spelled tickers, and no names nobody said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.voice.correct import correct, normalise_spelling
from bot.voice.hints import MOST_TRADED, build_hints
from tools.symbols import SymbolDirectory

QUERIES = Path(__file__).resolve().parents[1] / "symbols" / "queries.json"

PLAIN = [
    "What is the market doing today?", "What did the Fed say about interest rates?",
    "Show me the chart for the last month", "How much does it cost to trade options?",
    "Can you send me the video of the earnings call?", "Tell me about the end of the quarter",
    "Is now a good time to buy bonds?", "Explain the difference between a put and a call",
    "Which sectors are doing well this week?", "Thank you so much for watching!",
    "Where is the bond market heading?", "What about gold and oil?",
    "Run a debate on the bank sector", "I'd like to see the video", "What's new today?",
    "Is the economy going into recession?", "What's the ten year yield?",
    "What did the central bank announce?", "I need a visa to travel to Europe",
    "an apple a day keeps the doctor away", "Let's lay this out and look at it again",
    "ALL IN ON THIS ONE, I CAN'T LOSE", "Welcome back to the show", "Show me the four hour chart",
]


@pytest.fixture(scope="module")
def hints(directory: SymbolDirectory):  # type: ignore[no-untyped-def]
    return build_hints(directory)


def test_the_issue_example(directory: SymbolDirectory, hints) -> None:  # type: ignore[no-untyped-def]
    fixed = correct("What's the latest on then video and apple?", directory, hints)
    assert fixed.query == "What's the latest on NVIDIA (NVDA) and Apple (AAPL)?"
    assert fixed.codes == ["NVDA", "AAPL"]
    nvda = fixed.symbols[0]
    assert fixed.text[nvda.span[0]:nvda.span[1]] == "then video"  # type: ignore[index]
    assert nvda.market == "us" and 0 < nvda.score < 100


@pytest.mark.parametrize("heard, code", [
    ("What's the latest on end video, and Apple?", "NVDA"),
    ("Give me a chart of N V D A for the last month.", "NVDA"),
    ("Give me a chart of n-v-d-a for the last month.", "NVDA"),
    ("How about A.M.D.?", "AMD"),
    ("What is the price on broad come to me?", "AVGO"),
    ("It's cost comor expensive and Walmart right now.", "COST"),
    ("Run a debate on KP Morgan case.", "JPM"),
    ("Compare net flicks and Disney", "NFLX"),
    ("Any news on palentier?", "PLTR"),
    ("How is in tell doing", "INTC"),
    ("what about tesler", "TSLA"),
    ("Where is the bitcoin price heading?", "BTC-USD"),  # not a stock, but in the directory
])
def test_speech_errors_and_spelled_tickers_land(directory: SymbolDirectory, hints, heard: str,  # type: ignore[no-untyped-def]
                                                 code: str) -> None:
    fixed = correct(heard, directory, hints)
    assert code in [m.code for m in fixed.symbols], fixed
    assert f"({code})" in fixed.query or fixed.query.count(code) == 1


def test_spelling_normalisation_keeps_length_and_skips_non_tickers(
        directory: SymbolDirectory) -> None:
    for text in ("chart of n-v-d-a now", "is A.M.D. up", "a b c d e f g"):
        assert len(normalise_spelling(text, directory)) == len(text)
    assert normalise_spelling("chart of n-v-d-a now", directory) == "chart of N V D A now"
    assert normalise_spelling("q x z q", directory) == "q x z q"  # not a listed ticker


def test_plain_sentences_get_no_symbols(directory: SymbolDirectory, hints) -> None:  # type: ignore[no-untyped-def]
    sentences = PLAIN + json.loads(QUERIES.read_text("utf-8"))["none"]
    wrong = {s: correct(s, directory, hints).codes for s in sentences}
    assert {s: c for s, c in wrong.items() if c} == {}
    for s in PLAIN:
        assert correct(s, directory, hints).query == s.strip()


def test_unknown_names_pass_through_as_said(directory: SymbolDirectory, hints) -> None:  # type: ignore[no-untyped-def]
    fixed = correct("Tell me about Charlie Marmer and Tencent.", directory, hints)
    assert fixed.query == "Tell me about Charlie Marmer and Tencent (0700.HK)."


def test_chinese_transcripts_keep_chinese_names(directory: SymbolDirectory, hints) -> None:  # type: ignore[no-untyped-def]
    fixed = correct("请问贵州茅台和宁德时代最近怎么样？", directory, hints)
    assert fixed.codes == ["600519.SH", "300750.SZ"]
    assert fixed.query == "请问贵州茅台 (600519.SH) 和宁德时代 (300750.SZ) 最近怎么样？"


def test_without_hints_only_the_directory_speaks(directory: SymbolDirectory) -> None:
    assert correct("What's the latest on then video and Apple?", directory).codes == ["AAPL"]


def test_hints_put_the_watchlist_first_and_drop_unknown_codes(
        directory: SymbolDirectory) -> None:
    hints = build_hints(directory, watchlist=["IBM", "NOTATICKER1"], recent=["600519.SH"])
    assert hints.codes[:3] == ("IBM", "600519", "NVDA")
    assert "NOTATICKER1" not in hints.codes
    assert hints.prompt.startswith("IBM, Kweichow Moutai, NVIDIA, Tesla")
    assert all(directory.get(c) is not None for c in hints.codes)
    assert len(hints.codes) >= len(MOST_TRADED) - 2  # every curated name is in the directory
    # a watchlist name is matched by sound too
    fixed = correct("How is eye bee em doing?", directory, hints)
    assert fixed.codes in ([], ["IBM"])  # letters said as words: allowed either way, never wrong


def test_empty_transcript(directory: SymbolDirectory, hints) -> None:  # type: ignore[no-untyped-def]
    fixed = correct("   ", directory, hints)
    assert fixed.query == "" and fixed.symbols == []


def test_an_index_sharing_a_stocks_code_keeps_its_own_name(directory: SymbolDirectory) -> None:
    fixed = correct("平安银行和上证指数", directory)
    assert fixed.query == "平安银行 (000001.SZ) 和上证指数 (000001.SH)"
