"""The annotated ICT chart renders a valid PNG of sensible size."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

import ict
from tests.ict.data import eurusd_hourly, nvda_daily
from tools.ict_chart import render_ict_chart

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _size(png: bytes) -> tuple[int, int]:
    assert png[:8] == PNG_MAGIC
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


@pytest.mark.parametrize(("loader", "interval"), [(eurusd_hourly, "1h"), (nvda_daily, "1d")])
def test_renders_a_png(loader: object, interval: str) -> None:
    bars = loader().iloc[-600:]  # type: ignore[operator]
    analysis = ict.analyze(bars, interval=interval, options={"lookback_bars": 400})
    png = render_ict_chart(bars, analysis, title="EURUSD 英伟达")
    assert _size(png) == (1100, 620)
    assert 20_000 < len(png) < 2_000_000
    with Image.open(io.BytesIO(png)) as img:
        img.verify()
    with Image.open(io.BytesIO(png)) as img:
        colors = img.convert("RGB").getcolors(maxcolors=1 << 20)
        assert colors is not None and len(colors) > 50  # candles, boxes, shading: not blank


def test_rejects_bars_that_do_not_match() -> None:
    bars = eurusd_hourly().iloc[-300:]
    analysis = ict.analyze(bars, interval="1h")
    with pytest.raises(ValueError, match="analysed range"):
        render_ict_chart(bars.iloc[-100:], analysis, title="x")
