"""Choosing what a Mandarin note said from the beam's readings, with no model: hypotheses in,
reading and symbols out (the hypotheses are shaped like what Whisper base wrote for the
fixtures); names misheard outright are asked about, ordinary sentences stay alone."""

from __future__ import annotations

import pytest

from bot.voice.backends import Hypothesis
from bot.voice.hints import build_hints
from bot.voice.reading import MAX_GAP, choose_reading
from bot.voice.soundalike import sound_index, suggest
from tools.symbols import SymbolDirectory


def _hyps(*readings: tuple[str, float]) -> list[Hypothesis]:
    return [Hypothesis(text=t, logprob=lp, tokens=len(t), language="zh") for t, lp in readings]


def test_a_name_in_a_close_second_reading_is_taken(directory: SymbolDirectory) -> None:
    r = choose_reading(_hyps(("我俩也最近怎么样", -0.30), ("五粮液最近怎么样", -0.42)),
                       directory, build_hints(directory))
    assert [m.symbol for m in r.correction.symbols] == ["000858.SZ"] and r.rank == 1
    assert not r.unsure and "五粮液 (000858.SZ)" in r.correction.query


def test_a_name_only_a_far_less_likely_reading_has_is_asked_about(
        directory: SymbolDirectory) -> None:
    r = choose_reading(_hyps(("我俩也最近怎么样", -0.30),
                             ("五粮液最近怎么样", -0.30 - MAX_GAP - 0.2)),
                       directory, build_hints(directory))
    assert r.correction.symbols == [] and r.unsure
    assert [m.symbol for m in r.suggestions] == ["000858.SZ"]
    assert r.text == "我俩也最近怎么样"  # what was heard is shown as heard


@pytest.mark.parametrize(("heard", "asked"), [
    ("我俩也最近怎么样", "000858.SZ"),  # 五粮液, by its initials w-l-y
    ("帮我看看我俩也的走势", "000858.SZ"),
])
def test_a_name_misheard_outright_is_asked_about_not_guessed(
        directory: SymbolDirectory, heard: str, asked: str) -> None:
    r = choose_reading(_hyps((heard, -0.4)), directory, build_hints(directory))
    assert r.correction.symbols == [] and asked in [m.symbol for m in r.suggestions]


def test_a_short_alias_inside_a_sound_alike_is_not_acted_on(
        directory: SymbolDirectory) -> None:
    # 中信证券 heard as 中行政却: 中行 is Bank of China's alias, the false symbol of issue 32
    r = choose_reading(_hyps(("中行政却今天表现怎么样", -0.4)), directory,
                       build_hints(directory))
    assert r.correction.symbols == []
    assert {m.symbol for m in r.suggestions} >= {"600030.SH"}


@pytest.mark.parametrize("heard", [
    "今天大盘怎么样", "明天会下雨吗", "帮我解释一下什么是市盈率", "最近市场的成交量怎么样",
    "对，这就是我，万人敬仰的太乙真人。", "一二三四五六七八九十。你好世界。", "今天天气怎么样",
    "美联储降息对股市有什么影响",
])
def test_ordinary_sentences_name_nothing_and_ask_nothing(directory: SymbolDirectory,
                                                         heard: str) -> None:
    r = choose_reading(_hyps((heard, -0.3), (heard + "？", -0.35)), directory,
                       build_hints(directory))
    assert r.correction.symbols == [] and r.suggestions == ()


@pytest.mark.parametrize(("heard", "symbol"), [
    ("沪深三百今天怎么样", "000300.SH"), ("上证指数今天收盘多少点", "000001.SH"),
    ("创业板指今天跌了吗", "399006.SZ"), ("零零零八五八的走势怎么样", "000858.SZ"),
    ("平安银行今天怎么样", "000001.SZ"),
])
def test_indexes_and_codes_as_they_are_said(directory: SymbolDirectory, heard: str,
                                            symbol: str) -> None:
    r = choose_reading(_hyps((heard, -0.3)), directory, build_hints(directory))
    assert [m.symbol for m in r.correction.symbols] == [symbol]


def test_the_sound_index_keeps_to_names_people_ask_about(directory: SymbolDirectory) -> None:
    index = sound_index(directory)
    assert [s.symbol for s in suggest("我俩也", index)] == ["000858.SZ"]
    # two-character names are never suggested by sound: homophones are everywhere
    assert suggest("毛台", index) == []


@pytest.mark.parametrize(("heard", "symbols"), [
    ("帮我探探武良业最近的走势", ["000858.SZ"]),  # wu-liang-ye, as 五粮液 sounds
    ("上正指数今天收盘多少点", ["000001.SH"]),  # an index, not 平安银行 (000001.SZ)
    ("护身300今天怎么样", ["000300.SH"]),  # hu-shen and the digits as written
    ("因为达的财报什么时候出", ["NVDA"]),  # a US name in Chinese, yin/ying merged
    ("您的时代和龙机率能最近怎么样", ["300750.SZ", "601012.SH"]),
    ("此今况也今天涨了多少", ["601899.SH"]),  # 紫金矿业: four syllables, one initial off
])
def test_a_name_that_sounds_the_same_is_acted_on(directory: SymbolDirectory, heard: str,
                                                 symbols: list[str]) -> None:
    r = choose_reading(_hyps((heard, -0.4)), directory, build_hints(directory))
    assert [m.symbol for m in r.correction.symbols] == symbols and not r.unsure
    assert r.text == heard  # shown as heard; the question carries the names


def test_the_reading_and_its_symbols_are_chosen_together(directory: SymbolDirectory) -> None:
    # the beam's best reading names nothing; the fourth sounds exactly like 创业板指
    r = choose_reading(_hyps(("创业大字今天跌了吗", -0.43), ("创业大字今天编了吗", -0.44),
                             ("创业大字今天爹了吗", -0.45), ("创业板子今天跌了吗", -0.50)),
                       directory, build_hints(directory))
    assert [m.symbol for m in r.correction.symbols] == ["399006.SZ"] and r.rank == 3


def test_indexes_and_us_names_in_chinese_are_in_the_sound_index(
        directory: SymbolDirectory) -> None:
    index = sound_index(directory)
    names = {(name, symbol) for found in index.by_key.values() for name, symbol, _ in found}
    for name, symbol in [("上证指数", "000001.SH"), ("沪深300", "000300.SH"),
                         ("创业板指", "399006.SZ"), ("深证成指", "399001.SZ"),
                         ("英伟达", "NVDA"), ("苹果公司", "AAPL"), ("特斯拉", "TSLA"),
                         ("台积电", "TSM")]:
        assert (name, symbol) in names, name


def test_a_near_sound_alike_sharing_characters_is_only_asked_about(
        directory: SymbolDirectory) -> None:
    # 创业胆子 shares 创业 with 创业板指 and 胆/板 differ in their initials: not enough to act
    r = choose_reading(_hyps(("创业胆子今天跌了吗", -0.4)), directory, build_hints(directory))
    assert r.correction.symbols == [] and "399006.SZ" in [m.symbol for m in r.suggestions]
