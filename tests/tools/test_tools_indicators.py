"""Indicators from the snapshot, checked against hand computations."""

from __future__ import annotations

from datetime import date

import pytest

from core.errors import DataUnavailable
from tools import snapshot
from tools.indicators import get_indicators


async def test_rsi_and_macd_of_aapl_from_snapshot_with_date() -> None:
    rep = await get_indicators(symbol="AAPL", indicators=["rsi", "macd"])
    assert rep.as_of == "2013-03-01" and rep.source.as_of == date(2013, 3, 1)
    assert [i.name for i in rep.indicators] == ["RSI(14)", "MACD(12,26,9)"]
    # RSI by hand: Wilder's smoothing (RMA) of gains and losses
    close = snapshot.load("AAPL")["close"]
    delta = close.diff()
    gain = delta.clip(lower=0).ewm(alpha=1 / 14, adjust=False).mean()
    loss = (-delta.clip(upper=0)).ewm(alpha=1 / 14, adjust=False).mean()
    rsi = 100 - 100 / (1 + gain / loss)
    assert rep.indicators[0].latest["rsi"] == pytest.approx(float(rsi.iloc[-1]), abs=0.05)
    ema = lambda n: close.ewm(span=n, adjust=False).mean()  # noqa: E731
    macd = float((ema(12) - ema(26)).iloc[-1])
    assert rep.indicators[1].latest["macd"] == pytest.approx(macd, abs=0.05)
    assert len(rep.indicators[1].recent["hist"]) == len(rep.dates) == 5


async def test_all_default_indicators() -> None:
    rep = await get_indicators(symbol="000300", history=3)
    names = [i.name for i in rep.indicators]
    assert names == ["RSI(14)", "MACD(12,26,9)", "Bollinger(20,2)", "KDJ(9,3)", "ATR(14)", "OBV"]
    boll = rep.indicators[2].latest
    assert boll["lower"] < boll["middle"] < boll["upper"]  # type: ignore[operator]
    assert 0 <= rep.indicators[3].latest["k"] <= 100  # type: ignore[operator]


async def test_as_of_date_and_too_few_bars() -> None:
    rep = await get_indicators(symbol="NVDA", indicators=["atr"], end=date(2024, 6, 28))
    assert rep.as_of == "2024-06-28"
    with pytest.raises(DataUnavailable, match="at least 35"):
        await get_indicators(symbol="NVDA", end=date(1999, 2, 10))
