"""Bad input: nothing to talk about, too much, unknown or repeated tickers, a past date."""

from __future__ import annotations

import datetime as dt

import pytest

from core.errors import InputError
from podcast import MAX_TICKERS, PodcastError, produce_podcast


@pytest.mark.parametrize("tickers", [[], ["", "  "], [" , ，"]])
async def test_no_tickers_is_a_clear_error_in_both_languages(tickers):
    with pytest.raises(PodcastError) as info:
        await produce_podcast(tickers)
    err = info.value
    assert isinstance(err, InputError)
    assert err.message("en").startswith("Name at least one ticker")
    assert "请至少提供一个股票代码" in err.message("zh-CN")


async def test_only_unknown_tickers_is_an_error():
    with pytest.raises(PodcastError) as info:
        await produce_podcast(["XQXQXQ", "QXZQXZ"], lang="zh")
    assert "XQXQXQ, QXZQXZ" in info.value.message("en")
    assert info.value.message("zh").startswith("无法识别这些代码")


async def test_more_than_the_cap_keeps_the_first_ten_with_a_note():
    tickers = ["NVDA", "AMZN", "MSFT", "NFLX", "TSLA", "AAPL", "IBM", "GOOG", "GOOGL", "FB",
               "BTC-USD", "EURUSD"]
    result = await produce_podcast(tickers)
    assert MAX_TICKERS == 10 and result.script.user_tickers == tickers[:10]
    assert [c.name for c in result.script.chapter if c.name.startswith("ticker:")] == [
        f"ticker:{t}" for t in tickers[:10]]
    note = next(n for n in result.notes if n.kind == "input")
    assert "12 tickers given" in note.text and "BTC-USD, EURUSD" in note.text


async def test_an_unknown_or_repeated_ticker_among_known_ones():
    result = await produce_podcast(["NVDA", "XQXQXQ", "nvda", "AAPL"])
    assert result.script.user_tickers == ["NVDA", "XQXQXQ", "AAPL"]
    section = result.script.section("ticker:XQXQXQ")
    assert len(section) == 1 and section[0].text.startswith(
        "No debate for XQXQXQ today: not a security I know (did you mean")
    by = {s.ticker: s for s in result.tickers}
    assert by["XQXQXQ"].state == "unknown" and by["AAPL"].state == "debated"
    kinds = [(n.kind, n.ticker) for n in result.notes]
    assert ("input", "XQXQXQ") in kinds and ("input", "NVDA") in kinds  # 'nvda' kept once
    assert len(result.script.section("ticker:AAPL")) > 3


async def test_a_past_date_cuts_every_series_there():
    day = dt.date(2024, 6, 28)
    result = await produce_podcast(["NVDA"], date=day)
    assert result.script.date == "20240628"
    assert result.debates["NVDA"].meta.data_as_of == "2024-06-28"
    assert result.debates["NVDA"].experts.date == "20240628"
    csi = next(m for m in result.markets if m.code == "000300")
    assert csi.as_of == "2024-06-28"
    assert all(m.as_of <= "2024-06-28" for m in result.markets)
    assert "Bullpen daily brief for 2024-06-28" in result.script.scripts[0].text
    assert "CSI 300 closed at" in result.script.scripts[1].text
