"""Daily stock and index series hold trading days only, whatever their file fills in."""

from __future__ import annotations

import pytest

from tools import snapshot


@pytest.mark.parametrize("symbol", ["^GSPC", "NVDA", "000300", "AAPL"])
def test_daily_exchange_series_have_no_weekend_or_repeated_fill_rows(symbol: str) -> None:
    bars = snapshot.load(symbol, "1d")
    assert not (bars.index.day_of_week >= 5).any()
    assert not (bars == bars.shift()).all(axis=1).any()


def test_the_sp500_file_keeps_its_trading_days() -> None:
    bars = snapshot.load("^GSPC", "1d")
    assert len(bars.loc["2020-11-13":"2020-11-16"]) == 2  # Friday, then Monday
    assert 245 <= len(bars.loc["2019"]) <= 253  # a year of NYSE sessions


def test_crypto_keeps_its_weekends() -> None:
    assert (snapshot.load("BTC-USD", "1d").index.day_of_week >= 5).any()
