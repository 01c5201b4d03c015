"""Tools given a calendar period (issue 29): get_ohlcv and generate_chart honour a month or a
range where the data covers it, say when it covers only part or none of it, and refuse a
period they cannot read with a reason instead of crashing. A-share bars come from the
hqchart pack (to 2024-09-19), checked against its raw file; the CSI 300 from the snapshot."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from core import context
from core.errors import DataUnavailable, InvalidArguments
from core.types import OutgoingFile
from tests.tools.test_offline_packs import _hq, _need
from tools.charts import generate_chart
from tools.data import DataConfig, configure
from tools.market import get_ohlcv


@pytest.fixture(autouse=True)
def _offline() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


async def test_spdb_september_2024_is_that_months_bars_and_says_the_data_ends_early() -> None:
    _need("hqchart")
    raw = [r for r in _hq("DayKLine/600000.sh.day.kline.json")
           if 20240901 <= int(r[0]) <= 20240930]
    res = await get_ohlcv("600000", period="2024年9月", limit=100)
    assert res.summary is not None and res.total_bars == len(raw)
    assert (res.summary.first, res.summary.last) == ("2024-09-02", "2024-09-19")
    assert [r[4] for r in res.rows] == pytest.approx([r[5] for r in raw])  # closes
    cov = res.coverage
    assert cov is not None and (cov.asked_start, cov.asked_end) == (date(2024, 9, 1),
                                                                    date(2024, 9, 30))
    assert cov.data_last == date(2024, 9, 19) and "partly covered" in res.note


async def test_a_month_after_the_data_has_no_bars_and_says_what_the_data_has() -> None:
    _need("hqchart")
    res = await get_ohlcv("600000", period="2024年10月")
    assert res.total_bars == 0 and res.summary is None
    assert res.coverage is not None and res.coverage.data_last == date(2024, 9, 19)
    assert "no data between 2024-10-01 and 2024-10-31" in res.note


async def test_csi_300_may_2020_is_may_2020() -> None:
    for period in ("May 2020", "2020年5月", "2020-05"):
        res = await get_ohlcv("000300", period=period, limit=100)
        assert res.summary is not None and res.coverage is None
        assert (res.summary.first, res.summary.last) == ("2020-05-06", "2020-05-29")
        assert all(str(r[0]).startswith("2020-05") for r in res.rows)


@pytest.mark.parametrize("period", ["2024y", "5月", "next week"])
async def test_an_unreadable_period_is_refused_not_a_crash(period: str) -> None:
    with pytest.raises(InvalidArguments):
        await get_ohlcv("000300", period=period)


def _charted(files: list[OutgoingFile]) -> OutgoingFile:
    (file,) = files
    assert file.kind == "image" and file.data[:4] == b"\x89PNG"
    return file


async def test_chart_of_a_range_covers_that_range() -> None:
    ctx = context.RunContext()
    token = context.use(ctx)
    try:
        res = await generate_chart(symbols=["000300"], period="2019-06-01 2020-06-16")
    finally:
        context.reset(token)
    (s,) = res.series
    assert (s.first, s.last) == ("2019-06-03", "2020-06-16") and res.coverage is None
    assert "2019-06-03..2020-06-16" in _charted(ctx.files).caption


async def test_chart_of_spdb_september_2024_says_the_data_ends_early() -> None:
    _need("hqchart")
    ctx = context.RunContext()
    token = context.use(ctx)
    try:
        res = await generate_chart(symbols=["600000"], period="2024年9月")
    finally:
        context.reset(token)
    (s,) = res.series
    assert (s.first, s.last) == ("2024-09-02", "2024-09-19")
    assert res.coverage is not None and res.coverage.asked_end == date(2024, 9, 30)
    _charted(ctx.files)


async def test_chart_of_a_month_outside_the_data_says_so() -> None:
    _need("hqchart")
    with pytest.raises(DataUnavailable, match="data runs"):
        await generate_chart(symbols=["600000"], period="2024年10月")
