"""Charts: PNG bytes with visible candles, CJK text without tofu, emitted to the chat."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
from PIL import Image

from core import context, numbers
from core.errors import DataUnavailable
from tools import snapshot
from tools.chart_draw import (
    DOWN_RED,
    UP_GREEN,
    candles_figure,
    cjk_font_family,
    render_candles,
    render_comparison,
)
from tools.charts import generate_chart
from tools.fonts import cjk_font_path


def _pixels_near(png: bytes, hex_color: str, tol: int = 30) -> int:
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    rgb = np.array([int(hex_color[i:i + 2], 16) for i in (1, 3, 5)])
    return int((np.abs(img - rgb).sum(axis=2) < tol).sum())


def test_candles_png_has_up_and_down_candles() -> None:
    df = snapshot.load("NVDA")
    png = render_candles(df, title="NVDA", bars=120)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert Image.open(io.BytesIO(png)).size == (1000, 600)
    assert _pixels_near(png, UP_GREEN) > 500 and _pixels_near(png, DOWN_RED) > 500


def test_cjk_title_renders_without_missing_glyphs() -> None:
    from fontTools.ttLib import TTFont

    cmap = TTFont(cjk_font_path(), fontNumber=0).getBestCmap()
    assert all(ord(ch) in cmap for ch in "沪深300贵州茅台涨跌")
    assert "CJK" in cjk_font_family()
    df = snapshot.load("000300")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns "Glyph ... missing" on tofu
        png = render_candles(df, title="沪深300 贵州茅台", bars=60, market="cn")
    assert len(png) > 10_000


def test_cjk_still_renders_after_another_library_resets_the_fonts() -> None:
    """CI ran the chart bench (mplfinance applies its style to the global rcParams) before
    this file, and every later Chinese chart drew tofu: the font list was set once, cached."""
    import matplotlib

    render_candles(snapshot.load("000300"), title="warm", bars=20)
    matplotlib.rcdefaults()  # what mplfinance's style, or any library's, may do meanwhile
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            png = render_candles(snapshot.load("000300"), title="沪深300 贵州茅台", bars=60,
                                 market="cn")
        assert len(png) > 10_000
    finally:
        cjk_font_family()


def test_the_mplfinance_peer_leaves_the_fonts_as_it_found_them() -> None:
    import matplotlib

    from bot.benches.chart import mplfinance_peer

    cjk_font_family()
    before = list(matplotlib.rcParams["font.family"])
    mplfinance_peer(snapshot.load("000300").tail(60), "peer")
    assert list(matplotlib.rcParams["font.family"]) == before


@pytest.mark.parametrize(("lang", "volume", "units"), [("zh", "成交量", ("万", "亿")),
                                                     ("en", "Vol", ("K", "M", "B"))])
def test_a_chart_for_a_chinese_reader_says_its_axes_in_chinese(lang: str, volume: str,
                                                                units: tuple[str, ...]) -> None:
    """The volume panel's label and its ticks in the reader's units (the pack's real volumes
    of 600000: tens of millions of shares a day, 千万 / tens of M)."""
    df = snapshot.load("SH600000")  # the hqchart pack's daily bars
    fig = candles_figure(df, title="浦发银行 (600000)", bars=60, market="cn", lang=lang)
    axv = fig.axes[1]
    assert axv.get_ylabel() == volume
    fig.canvas.draw()
    ticks = [x.get_text() for x in axv.get_yticklabels() if x.get_text() not in ("", "0")]
    assert ticks and all(x.endswith(units) for x in ticks), ticks
    big = float(df["volume"].iloc[-60:].max())
    assert fig.axes[1].yaxis.get_major_formatter()(big, 0) == numbers.compact(big, lang, digits=3)


def test_comparison_is_rebased() -> None:
    closes = {s: snapshot.load(s)["close"] for s in ("AAPL", "IBM")}
    png = render_comparison(closes, title="AAPL vs IBM")
    assert png[:4] == b"\x89PNG"


async def test_generate_chart_emits_file_and_numbers() -> None:
    ctx = context.RunContext()
    token = context.use(ctx)
    try:
        res = await generate_chart(symbols=["NVDA"], period="6mo")
    finally:
        context.reset(token)
    assert res.kind == "candlestick" and res.series[0].last == "2025-02-14"
    assert 120 <= res.series[0].bars <= 130 and res.note.startswith("offline")
    (file,) = ctx.files
    assert file.kind == "image" and file.mime_type == "image/png"
    assert file.filename == res.filename and file.data[:4] == b"\x89PNG"


async def test_generate_comparison_chart() -> None:
    ctx = context.RunContext()
    token = context.use(ctx)
    try:
        res = await generate_chart(symbols=["NVDA", "AMZN"], period="1y")
    finally:
        context.reset(token)
    assert res.kind == "comparison" and res.series[1].last == "2020-07-31"
    assert len(ctx.files) == 1


async def test_chart_with_no_common_dates() -> None:
    with pytest.raises(DataUnavailable, match="share no dates"):
        await generate_chart(symbols=["NVDA", "EURUSD", "FB"], period="1y")
