"""English notes once the whisper-base pack is there: heard by the model serve uses (issue 32).

tiny.en hears "A M D" as "Mv" and "Qualcomm" as "welcome" (``heard.json`` keeps those and
leaves them alone on purpose: no sound-alike step can take a name from them without taking
names from ordinary speech). Whisper base hears both names, on every instruction set tried
(GENERIC, AVX, AVX2). The bench once measured tiny.en because a pipeline built in code without
saying heard English with it, while serve's settings say base: a pipeline built in code now
hears English with serve's default, so what is measured is what runs.
"""

from __future__ import annotations

import pytest

from bot.settings import Settings
from bot.voice.backends import FasterWhisperBackend
from bot.voice.decode import decode
from bot.voice.language import LanguageContext
from bot.voice.pipeline import VoicePipeline, surely_english
from tests.voice.conftest import audio
from tools.symbols import SymbolDirectory


def test_a_pipeline_built_in_code_hears_english_with_serves_default(
        backend: FasterWhisperBackend, base: FasterWhisperBackend,
        directory: SymbolDirectory) -> None:
    built = VoicePipeline(backend=backend, multilingual=base, directory=directory)
    assert built.english_model == Settings.model_fields["whisper_english_model"].default
    assert built.english_model == "base"


# notes whose names tiny.en mishears as ordinary words or letters nothing is listed under
@pytest.mark.parametrize(("file", "symbols"), [("googl_amd.ogg", {"GOOGL", "AMD"}),
                                               ("intc_qcom.amr", {"INTC", "QCOM"})])
@pytest.mark.parametrize("context", [LanguageContext(chosen="en"), LanguageContext()],
                         ids=["chat_in_english", "language_detected"])
async def test_names_tiny_en_mishears_are_found_when_base_hears_english(
        zh_pipeline: VoicePipeline, file: str, symbols: set[str],
        context: LanguageContext) -> None:
    t = await zh_pipeline.transcribe(audio(file), context=context)
    assert t.language == "en"
    assert {m.symbol for m in t.symbols} == symbols, (t.text, t.symbols)
    for m in t.symbols:
        assert f"({m.symbol})" in t.query or m.symbol in t.query


# --- one short encoder pass for English (the short window, as Mandarin has) -----------------


def test_the_short_window_decides_english_only_when_english_is_likeliest_of_all() -> None:
    """Detection on the short window called 5 of 22 English notes Finnish, Latin or Thai:
    those (and a note likelier Mandarin) go to the full window instead of being refused."""
    unknown = LanguageContext()
    assert surely_english(unknown, {"en": 0.83, "nn": 0.04, "zh": 0.01})
    assert not surely_english(unknown, {"fi": 0.27, "en": 0.25, "zh": 0.01})
    assert not surely_english(unknown, {"th": 0.35, "en": 0.17})
    assert not surely_english(unknown, {"en": 0.45, "zh": 0.40})  # unsure against Mandarin
    assert not surely_english(unknown, {})


def test_a_short_window_reading_is_doubtful_without_a_name_or_opening_with_a_prompt_name(
        zh_pipeline: VoicePipeline) -> None:
    doubtful = zh_pipeline._doubtful("NVIDIA, Tesla, Xiaomi, Palantir")
    assert doubtful("Xiaomi did ICT analysis on Tesla on the 4-hour chart.")  # a leak's place
    assert doubtful("And a new month, apparently this morning.")  # no security at all
    assert not doubtful("Give me an outlook for Boeing.")
    assert not doubtful("Compare Tesla with NVIDIA.")  # a name said mid-sentence stands


@pytest.mark.parametrize("context", [LanguageContext(chosen="en"), LanguageContext(),
                                     LanguageContext(recent="en")],
                         ids=["chat_in_english", "language_detected", "recent_english"])
async def test_a_clear_english_note_is_heard_from_the_short_window(
        zh_pipeline: VoicePipeline, context: LanguageContext) -> None:
    t = await zh_pipeline.transcribe(audio("msft_amzn.amr"), context=context)
    assert t.language == "en" and t.source == "faster-whisper:base:short", t.source
    assert {m.symbol for m in t.symbols} == {"MSFT", "AMZN"}, t.text


async def test_a_name_the_short_window_loses_is_found(zh_pipeline: VoicePipeline) -> None:
    """"Palantir" was "apparently" on the short window (on the bench's CPU): a reading that
    names nothing is heard again on the full window, whose reading stands."""
    t = await zh_pipeline.transcribe(audio("pltr.ogg"), context=LanguageContext(chosen="en"))
    assert [m.symbol for m in t.symbols] == ["PLTR"], (t.source, t.text)


def test_a_doubtful_reading_is_decoded_again_on_the_full_window(
        base: FasterWhisperBackend) -> None:
    note = decode(audio("pltr.ogg"))
    seen: list[str] = []

    def doubtful(text: str) -> bool:
        seen.append(text)
        return True

    again = base.english_sync(note, prompt="Palantir", again=doubtful)
    kept = base.english_sync(note, prompt="Palantir", again=lambda text: False)
    assert again is not None and kept is not None
    assert again.backend.endswith(":full") and kept.backend.endswith(":short")
    assert seen and seen[0] == kept.text  # the short window's reading was the one judged
