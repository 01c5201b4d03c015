"""One decision for the colours of a rise and a fall, from the instrument's market: A-shares red
up and green down, US and crypto green up. The K-line chart and the ICT chart both follow it."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest
from PIL import Image

import ict
from tools.chart_draw import DOWN_RED, UP_GREEN, render_candles, up_down_colors
from tools.ict_chart import render_ict_chart
from tools.symbol_lookup import resolve_symbol

RED, GREEN = DOWN_RED, UP_GREEN


def _pixels_near(png: bytes, hex_color: str, tol: int = 30) -> int:
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    rgb = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(img - rgb).sum(axis=2) < tol).sum())


def rising(n: int = 80, freq: str = "D") -> pd.DataFrame:
    """Bars that all close above their open, on a rising line."""
    idx = pd.date_range("2025-01-02", periods=n, freq=freq, tz="Asia/Shanghai")
    base = np.linspace(10.0, 20.0, n)
    return pd.DataFrame({"open": base, "close": base * 1.01, "high": base * 1.015,
                         "low": base * 0.995, "volume": np.full(n, 1e6)}, index=idx)


@pytest.mark.parametrize(("query", "up", "down"), [
    ("600519", RED, GREEN), ("000858", RED, GREEN), ("AAPL", GREEN, RED),
    ("BTC-USD", GREEN, RED),
])
def test_the_instruments_market_decides(query: str, up: str, down: str) -> None:
    assert up_down_colors(resolve_symbol(query).market) == (up, down)


def test_a_rising_a_share_is_red_and_a_rising_us_stock_green_in_the_k_line_chart() -> None:
    bars = rising()
    cn = render_candles(bars, title="600519", market="cn", mas=())
    us = render_candles(bars, title="AAPL", market="us", mas=())
    assert _pixels_near(cn, RED) > 2_000 and _pixels_near(cn, GREEN) < 50
    assert _pixels_near(us, GREEN) > 2_000 and _pixels_near(us, RED) < 50


def test_the_ict_chart_uses_the_same_colours_as_the_k_line_chart() -> None:
    bars = rising(300)
    analysis = ict.analyze(bars, interval="1d")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing" on tofu
        cn = render_ict_chart(bars, analysis, title="贵州茅台 (600519)", market="cn", lang="zh")
    us = render_ict_chart(bars, analysis, title="AAPL", market="us")
    # every candle rises: the rise colour dominates, the fall colour hardly shows
    assert _pixels_near(cn, RED) > 5 * max(1, _pixels_near(cn, GREEN))
    assert _pixels_near(us, GREEN) > 5 * max(1, _pixels_near(us, RED))
