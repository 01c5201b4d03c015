"""get_quote / get_quotes / get_ohlcv / load_bars over the offline snapshot."""

from __future__ import annotations

from datetime import date, timedelta

import pandas as pd
import pytest

from core.errors import InvalidArguments, UnknownSymbol
from tools import build_registry
from tools.market import get_ohlcv, get_quote, get_quotes, load_bars
from tools.symbol_lookup import resolve_symbol


async def test_quote_from_snapshot_names_source_and_date() -> None:
    q = await get_quote(symbol="NVDA")
    assert q.as_of == date(2025, 2, 14) and q.source.as_of == q.as_of
    assert q.source.provider == "snapshot" and q.source.offline
    assert q.close == pytest.approx(138.85)
    assert q.prev_close == pytest.approx(135.29)
    assert q.change == pytest.approx(3.56) and q.change_pct == pytest.approx(2.63)
    assert q.high_52w is not None and q.low_52w is not None
    assert q.low_52w <= q.close <= q.high_52w


async def test_quote_by_chinese_name_and_alias() -> None:
    q = await get_quote(symbol="沪深300")
    assert q.symbol == "000300" and q.market == "cn" and q.currency == ""  # an index: points
    assert (await get_quote(symbol="英伟达")).symbol == "NVDA"


async def test_unknown_symbol_gets_suggestions_through_registry() -> None:
    reg = build_registry()
    outcome = await reg.call("get_quote", {"symbol": "APPL"})
    assert not outcome.ok and isinstance(outcome.error, UnknownSymbol)
    assert "AAPL" in outcome.content


async def test_batch_quotes_report_errors_per_symbol() -> None:
    res = await get_quotes(symbols=["AAPL", "ZZZZQ", "MSFT"])
    assert [q.symbol for q in res.quotes] == ["AAPL", "MSFT"]
    assert res.errors[0].symbol == "ZZZZQ" and "Unknown symbol" in res.errors[0].error


async def test_ohlcv_has_moving_averages_and_summary() -> None:
    res = await get_ohlcv(symbol="AAPL", limit=5)
    assert res.columns == ["date", "open", "high", "low", "close", "volume", "ma5", "ma20", "ma60"]
    assert len(res.rows) == 5 and res.total_bars > 3000
    assert res.rows[-1][0] == "2013-03-01"
    closes = [r[4] for r in res.rows]
    assert res.rows[-1][6] == pytest.approx(sum(closes) / 5, abs=0.01)  # type: ignore[arg-type]
    assert res.note.startswith("showing the last 5")
    assert res.source.as_of == date(2013, 3, 1)


async def test_ohlcv_weekly_period() -> None:
    res = await get_ohlcv(symbol="NVDA", interval="1w", period="3mo")
    assert res.interval == "1w" and 12 <= res.total_bars <= 15
    assert res.summary is not None and res.summary.last == "2025-02-14"


async def test_ohlcv_no_trading_days_says_so() -> None:
    res = await get_ohlcv(symbol="NVDA", start=date(2024, 12, 28), end=date(2024, 12, 29))
    assert res.rows == [] and "no trading days" in res.note


async def test_ohlcv_outside_coverage_names_coverage() -> None:
    res = await get_ohlcv(symbol="NVDA", start=date(2026, 1, 1))
    assert res.rows == [] and "1999-01-22 to 2025-02-14" in res.note


async def test_ohlcv_bad_range_and_interval() -> None:
    with pytest.raises(InvalidArguments):
        await get_ohlcv(symbol="NVDA", start=date(2024, 2, 1), end=date(2024, 1, 1))
    with pytest.raises(InvalidArguments):
        await get_ohlcv(symbol="NVDA", interval="7x")


async def test_ohlcv_compact_output() -> None:
    res = await get_ohlcv(symbol="NVDA", period="max", limit=500)
    assert len(res.model_dump_json()) < 40_000


async def test_load_bars_for_ict_and_charts() -> None:
    df = await load_bars("NVDA", "1d", 250)
    assert len(df) == 250 and list(df.columns) == ["open", "high", "low", "close", "volume"]
    assert df.index.tz is not None and df.attrs["as_of"] == date(2025, 2, 14)
    span = await load_bars("BTC-USD", "1h", timedelta(days=2))
    assert 40 <= len(span) <= 49
    ended = await load_bars("NVDA", "1d", 10, end=date(2024, 12, 31))
    assert ended.index[-1] == pd.Timestamp("2024-12-31", tz="America/New_York")


@pytest.mark.parametrize(("text", "code", "market"), [
    ("600519", "600519", "cn"), ("sh600519", "600519", "cn"), ("000001.SZ", "000001", "cn"),
    ("nvda", "NVDA", "us"), ("BRK.B", "BRK-B", "us"), ("比特币", "BTC-USD", "crypto"),
    ("EUR/USD", "EURUSD", "fx"),
])
def test_resolve_symbol_by_shape(text: str, code: str, market: str) -> None:
    sym = resolve_symbol(text)
    assert (sym.code, sym.market) == (code, market)


def test_resolved_yahoo_tickers() -> None:
    assert resolve_symbol("600519").yahoo == "600519.SS"
    assert resolve_symbol("腾讯").yahoo == "0700.HK"
    assert resolve_symbol("000001.SZ").yahoo == "000001.SZ"


@pytest.mark.parametrize(("text", "code", "market"), [
    ("茅台", "600519", "cn"), ("贵州茅台", "600519", "cn"), ("Tesla", "TSLA", "us"),
    ("TSM", "TSM", "us"), ("腾讯", "0700", "hk"), ("700.HK", "0700", "hk"),
])
def test_resolve_names_through_the_directory(text: str, code: str, market: str) -> None:
    sym = resolve_symbol(text)
    assert (sym.code, sym.market) == (code, market) and sym.name


def test_misspelt_ticker_is_unknown_with_suggestions() -> None:
    with pytest.raises(UnknownSymbol) as err:
        resolve_symbol("APPL")
    assert any(s.startswith("AAPL") for s in err.value.suggestions)


async def test_real_symbol_missing_offline_names_the_snapshot() -> None:
    from core.errors import DataUnavailable

    with pytest.raises(DataUnavailable, match="offline snapshot has no data for ORCL"):
        await get_quote(symbol="ORCL")
