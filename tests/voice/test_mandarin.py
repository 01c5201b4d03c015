"""Mandarin correction on transcripts: simplified output, names fixed by pinyin and characters,
US companies by their Chinese names, codes read as digits, ordinary sentences left alone, and a
prompt that names no stock and whose echo is removed. No model: these are text in, text out
(some inputs are what Whisper base really wrote for the synthetic notes)."""

from __future__ import annotations

import pytest

from bot.voice.hints import build_hints
from bot.voice.mandarin import (
    ZH_PROMPT,
    cantonese_share,
    correct_mandarin,
    simplified,
    spoken_codes,
    strip_prompt_echo,
)
from tools.symbols import SymbolDirectory


@pytest.mark.parametrize(("heard", "codes"), [
    # the issue's own transcript (traditional, 茅台 misheard as 毛台)
    ("請問貴州毛台和寧德時代最近怎麼樣", ["600519", "300750"]),
    ("林德时代怎么样", ["300750"]),  # l/n: one character off, same pinyin but the initial
    ("毛台最近怎么样", ["600519"]),  # a short name: a most-traded hint, same sound
    ("帮我看一下英伟达的走势", ["NVDA"]),
    ("特斯拉和苹果哪个好", ["TSLA", "AAPL"]),
    ("六零零五一九今天涨了吗", ["600519"]),
    # what Whisper base heard for the synthetic zh_moutai_catl.amr on one machine
    ("前文对周猫台和您的时代,最近怎么样?", ["600519", "300750"]),
])
def test_names_and_codes_are_found(directory: SymbolDirectory, heard: str,
                                   codes: list[str]) -> None:
    fixed = correct_mandarin(heard, directory, build_hints(directory))
    assert [m.code for m in fixed.symbols] == codes
    assert fixed.text == simplified(heard)
    for m in fixed.symbols:
        assert f"({m.symbol})" in fixed.query


@pytest.mark.parametrize("heard", [
    "今天天气怎么样",  # 天气 sounds like 天齐 (天齐锂业): a short name outside the hints
    "我想买点东西",
    "请问市场最近怎么样",
    "因为他和他输了今天长了吗?",  # a garbled note: nothing to find, nothing invented
])
def test_ordinary_sentences_are_left_alone(directory: SymbolDirectory, heard: str) -> None:
    fixed = correct_mandarin(heard, directory, build_hints(directory))
    assert fixed.symbols == [] and fixed.query == simplified(heard)


def test_short_sound_alikes_need_the_hint_vocabulary(directory: SymbolDirectory) -> None:
    assert correct_mandarin("毛台最近怎么样", directory, None).symbols == []
    fixed = correct_mandarin("毛台最近怎么样", directory, build_hints(directory))
    assert [m.code for m in fixed.symbols] == ["600519"]


def test_output_is_simplified(directory: SymbolDirectory) -> None:
    fixed = correct_mandarin("騰訊控股今天怎麼樣", directory)
    assert fixed.text == "腾讯控股今天怎么样" and [m.code for m in fixed.symbols] == ["0700"]


def test_spoken_digits_only_become_codes_the_directory_lists(
        directory: SymbolDirectory) -> None:
    assert spoken_codes("六零零五一九", directory) == "600519"
    assert spoken_codes("三零零七五零和", directory) == "300750和"
    assert spoken_codes("九九九九九九", directory) == "九九九九九九"  # no such code
    assert spoken_codes("三个人", directory) == "三个人"


def test_the_prompt_names_no_stock(directory: SymbolDirectory) -> None:
    assert directory.extract(ZH_PROMPT) == []


def test_an_echoed_prompt_is_removed() -> None:
    assert strip_prompt_echo(ZH_PROMPT + "贵州茅台怎么样") == "贵州茅台怎么样"
    assert strip_prompt_echo("猫腿肯定是普通话的。") == "猫腿肯定。"  # a real partial echo
    assert strip_prompt_echo("今天大盘怎么样") == "今天大盘怎么样"


def test_written_cantonese_is_recognised() -> None:
    assert cantonese_share("腾讯今日股价点样，係唔係跌咗") > 0.2
    assert cantonese_share("腾讯今天股价怎么样，是不是跌了") == 0.0
    assert cantonese_share("NVDA") == 0.0


@pytest.mark.parametrize(("text", "logprob", "refusal"), [
    ("", -0.3, "SpeechUnclear"),
    ("谢谢观看。", -0.3, "SpeechUnclear"),  # what Whisper says to silence
    ("腾讯今日股价点样，係唔係跌咗", -0.4, "LanguageUnsupported"),  # written Cantonese
    ("猫腿肯定。", -1.44, "SpeechUnclear"),  # the synthetic Cantonese note, heard by base
    ("请问贵州茅台最近怎么样", -0.7, ""),
])
def test_mandarin_transcripts_nobody_should_act_on_are_refused(
        directory: SymbolDirectory, text: str, logprob: float, refusal: str) -> None:
    from bot.voice.backends import RawTranscript
    from bot.voice.decode import AudioError
    from bot.voice.pipeline import VoicePipeline

    p = VoicePipeline(directory=directory)
    raw = RawTranscript(text=text, language="zh", avg_logprob=logprob)
    if not refusal:
        p.check_mandarin(raw)
        return
    with pytest.raises(AudioError) as err:
        p.check_mandarin(raw)
    assert type(err.value).__name__ == refusal
    assert "输入" in err.value.message("zh")
