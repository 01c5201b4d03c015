"""Stock-name correction on what the real model heard on several CPUs (no model needed).

``tests/fixtures/audio/heard.json`` keeps every transcript of the committed recordings seen so
far, with the machine and setting that produced it. Each must correct to its ``expect``: the
names said where the correction can recover them, and, where a row says ``why``, a mishearing
left alone on purpose (taking it would put false names into ordinary speech).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.voice.correct import correct
from bot.voice.hints import Hints, build_hints
from tools.symbols import SymbolDirectory

HEARD = Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "heard.json"
ROWS: list[dict[str, Any]] = json.loads(HEARD.read_text("utf-8"))["transcripts"]


@pytest.fixture(scope="module")
def hints(directory: SymbolDirectory) -> Hints:
    return build_hints(directory)


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['file']}:{r['heard']}" for r in ROWS])
def test_each_recorded_transcript_corrects_as_decided(directory: SymbolDirectory, hints: Hints,
                                                      row: dict[str, Any]) -> None:
    fixed = correct(row["heard"], directory, hints)
    assert [m.code for m in fixed.symbols] == row["expect"], fixed.query
    # a name that was not said only where the model itself heard a real company ("Micron")
    assert set(row["expect"]) <= set(row["said"]) or row.get("why"), row
    for m in fixed.symbols:
        assert f"({m.symbol})" in fixed.query or m.symbol in fixed.query


def test_a_row_either_lands_on_what_was_said_or_says_why() -> None:
    for row in ROWS:
        assert row["on"], row
        assert row["expect"] == row["said"] or row.get("why"), row


@pytest.mark.parametrize("heard, left_alone", [
    ("What's the latest comment video and Apple", "comment video"),
    ("Should I buy Google for MV?", "MV"),
    ("What have our Intel and welcome", "welcome"),
])
def test_the_issue_transcripts_keep_the_misheard_words_as_said(
        directory: SymbolDirectory, hints: Hints, heard: str, left_alone: str) -> None:
    fixed = correct(heard, directory, hints)
    assert left_alone in fixed.query and f"{left_alone} (" not in fixed.query


def test_sound_alike_correction_is_what_recovers_names_from_these_transcripts(
        directory: SymbolDirectory, hints: Hints) -> None:
    """Without the hints' sound-alike step only names spelled right are found."""
    recovered = [r["heard"] for r in ROWS
                 if len(correct(r["heard"], directory, hints).symbols)
                 > len(correct(r["heard"], directory).symbols)]
    assert "What's the latest on end video, and Apple?" in recovered
    assert "Run a debate on KP Morgan case." in recovered
