"""The offline snapshot: real package data, labelled, tz-aware, aggregated correctly."""

from __future__ import annotations

import pandas as pd
import pytest

from core.errors import DataUnavailable, UnknownSymbol
from tools import snapshot
from tools.bars import aggregate, normalize_interval, with_moving_averages


@pytest.mark.parametrize(("symbol", "interval"), [
    (s.symbol, s.interval) for s in snapshot.catalogue()
])
def test_every_series_loads_with_label(symbol: str, interval: str) -> None:
    df = snapshot.load(symbol, interval)
    assert list(df.columns) == ["open", "high", "low", "close", "volume"]
    assert isinstance(df.index, pd.DatetimeIndex) and df.index.tz is not None
    assert df.index.is_monotonic_increasing and not df.index.has_duplicates
    assert len(df) > 150
    assert (df["high"] >= df[["open", "close"]].max(axis=1) - 1e-6).mean() > 0.99
    assert df.attrs["provider"] == "snapshot" and df.attrs["offline"] is True
    assert df.attrs["as_of"] == df.index[-1].date()
    series = next(s for s in snapshot.series_for(symbol) if s.interval == interval)
    assert series.package.removeprefix("pack:") in df.attrs["dataset"]


def test_known_last_dates_and_prices() -> None:
    nvda = snapshot.load("NVDA")
    assert nvda.index[-1].date().isoformat() == "2025-02-14"
    assert nvda["close"].iloc[-1] == pytest.approx(138.85, abs=0.01)
    hs300 = snapshot.load("000300")
    assert str(hs300.index.tz) == "Asia/Shanghai"
    assert hs300.index[-1].date().isoformat() == "2025-12-31"


def test_bokeh_prices_are_back_adjusted_to_last_close() -> None:
    aapl = snapshot.load("AAPL")
    assert aapl["close"].iloc[-1] == pytest.approx(430.47)  # actual close on 2013-03-01
    # the 2:1 split of 2005-02-28 no longer shows as a 50% overnight drop
    move = aapl["close"].pct_change().loc["2005-02-28"]
    assert abs(move) < 0.1


def test_unknown_symbol_suggests_snapshot_symbols() -> None:
    with pytest.raises(UnknownSymbol) as err:
        snapshot.load("APPL")
    assert "AAPL" in err.value.suggestions


def test_missing_interval_is_data_unavailable() -> None:
    with pytest.raises(DataUnavailable, match="only at 1d"):
        snapshot.load("NVDA", "5m")


def test_weekly_and_monthly_aggregation_matches_hand_sums() -> None:
    daily = snapshot.load("NVDA")
    week = daily[(daily.index >= "2025-02-10") & (daily.index <= "2025-02-14")]
    weekly = aggregate(daily, "1w", "1d")
    last = weekly.iloc[-1]
    assert weekly.index[-1] == daily.index[-1]  # stamped with its last real bar
    assert last["open"] == week["open"].iloc[0] and last["close"] == week["close"].iloc[-1]
    assert last["high"] == week["high"].max() and last["low"] == week["low"].min()
    assert last["volume"] == week["volume"].sum()
    monthly = aggregate(daily, "1mo", "1d")
    jan = daily[(daily.index >= "2025-01-01") & (daily.index < "2025-02-01")]
    assert monthly.loc[jan.index[-1], "volume"] == jan["volume"].sum()


def test_intraday_aggregation_from_15_minute_bars() -> None:
    bars = snapshot.load("BTC-USD", "15m")
    hourly = aggregate(bars, "1h", "15m")
    assert len(hourly) < len(bars) / 3
    assert (hourly.index.minute == 0).all()


def test_moving_averages() -> None:
    df = with_moving_averages(snapshot.load("IBM"))
    assert df["ma5"].iloc[-1] == pytest.approx(df["close"].iloc[-5:].mean())
    assert df["ma60"].iloc[:59].isna().all() and pd.notna(df["ma60"].iloc[59])


@pytest.mark.parametrize(("given", "canonical"), [
    ("1d", "1d"), ("D", "1d"), ("1wk", "1w"), ("M", "1mo"), ("60m", "1h"), ("15m", "15m"),
])
def test_interval_names(given: str, canonical: str) -> None:
    assert normalize_interval(given) == canonical
