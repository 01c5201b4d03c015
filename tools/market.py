"""Quotes and OHLCV bars: the `get_quote`, `get_quotes` and `get_ohlcv` tools and `load_bars`."""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta
from typing import Annotated

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from core.errors import BullpenError, DataUnavailable, InvalidArguments
from tools import snapshot
from tools.bars import MA_WINDOWS, interval_minutes, normalize_interval, with_moving_averages
from tools.data import cn_packs, packs
from tools.data.prices import get_bars
from tools.models import DataSource, price_decimals, rnd, tool
from tools.periods import parse_period
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol

MAX_ROWS = 500


def source_from(df: pd.DataFrame) -> DataSource:
    """The DataSource a frame's `attrs` describe."""
    fields = {k: df.attrs[k] for k in DataSource.model_fields if k in df.attrs}
    return DataSource.model_validate({"provider": "unknown", **fields})


async def load_bars(
    symbol: str,
    interval: str = "1d",
    lookback: int | timedelta = 300,
    *,
    end: date | datetime | None = None,
) -> pd.DataFrame:
    """Bars for deterministic callers (ICT, charts, jobs).

    Returns a DataFrame with a tz-aware DatetimeIndex (`ts`) and float columns
    open/high/low/close/volume, oldest first; `attrs` names the source and `as_of` date.
    `lookback` is a bar count or a time span back from the last bar (or from `end`).
    """
    sym = resolve_symbol(symbol)
    df = await get_bars(sym, interval)
    if end is not None:
        df = df[df.index <= _end_bound(df, end)]
    if isinstance(lookback, timedelta):
        if len(df):
            df = df[df.index > df.index[-1] - lookback]
    else:
        df = df.iloc[-max(int(lookback), 1):]
    df.attrs.update(symbol=sym.code, name=sym.name, interval=normalize_interval(interval))
    return df


def _end_bound(df: pd.DataFrame, end: date | datetime) -> pd.Timestamp:
    tz = df.index.tz
    if isinstance(end, datetime):
        ts = pd.Timestamp(end)
        return ts.tz_localize(tz) if ts.tzinfo is None else ts.tz_convert(tz)
    return pd.Timestamp(end).tz_localize(tz) + pd.Timedelta(days=1) - pd.Timedelta(1, "ns")


# --- quotes ----------------------------------------------------------------------------------


class Quote(BaseModel):
    """Last close and its context; prices in `currency` (empty for an index: points), volume in
    shares (units for indexes)."""

    symbol: str
    name: str = ""
    market: str
    currency: str = ""
    as_of: date
    close: float
    prev_close: float | None = None
    change: float | None = None
    change_pct: float | None = Field(default=None, description="percent, e.g. 1.25 = +1.25%")
    open: float | None = None
    high: float | None = None
    low: float | None = None
    volume: int | None = None
    high_52w: float | None = None
    low_52w: float | None = None
    source: DataSource


def _currency(sym: ResolvedSymbol) -> str:
    """The quote currency; empty for an index, which is quoted in points."""
    if sym.kind == "index":
        return ""
    return {"cn": "CNY", "hk": "HKD"}.get(sym.market, "USD")


def quote_from_bars(sym: ResolvedSymbol, df: pd.DataFrame) -> Quote:
    """Compute a Quote from daily bars (pure)."""
    if df.empty:
        raise InvalidArguments(f"no bars for {sym.code}")
    last = df.iloc[-1]
    last_ts = df.index[-1]
    prev_close = float(df["close"].iloc[-2]) if len(df) > 1 else None
    d = price_decimals(float(last["close"]))
    year = df[df.index > last_ts - pd.Timedelta(days=365)]
    change = float(last["close"]) - prev_close if prev_close is not None else None
    return Quote(
        symbol=sym.code,
        name=sym.name,
        market=sym.market,
        currency=_currency(sym),
        as_of=last_ts.date(),
        close=round(float(last["close"]), d),
        prev_close=rnd(prev_close, d),
        change=rnd(change, d),
        change_pct=rnd(change / prev_close * 100.0, 2) if change is not None and prev_close
        else None,
        open=rnd(float(last["open"]), d),
        high=rnd(float(last["high"]), d),
        low=rnd(float(last["low"]), d),
        volume=int(last["volume"]) if pd.notna(last["volume"]) else None,
        high_52w=rnd(float(year["high"].max()), d),
        low_52w=rnd(float(year["low"].min()), d),
        source=source_from(df),
    )


async def _quote(symbol: str) -> Quote:
    sym = resolve_symbol(symbol)
    try:
        df = await get_bars(sym, "1d")
    except DataUnavailable:
        one_day = _one_day_quote(sym)
        if one_day is None:
            raise
        return one_day
    return quote_from_bars(sym, df)


def _one_day_quote(sym: ResolvedSymbol) -> Quote | None:
    """An A-share the snapshot has no history for, from the pack's one-day table of 5,051
    A-shares (2023-08-25): that day's bar and previous close, and no 52-week range."""
    if sym.market != "cn" or not sym.exchange:
        return None
    try:
        row = cn_packs.one_day(sym.code, sym.exchange)
    except DataUnavailable:
        return None
    if row is None:
        return None
    d = price_decimals(row.close)
    change = row.close - row.prev_close
    version = packs.by_name(cn_packs.HQ).version
    source = DataSource(
        provider=snapshot.PROVIDER,
        dataset=f"{cn_packs.HQ} {version}: shsz_stock_data.js, one day of "
                f"{cn_packs.one_day_count():,} A-shares, unadjusted, CNY; the snapshot has no "
                f"price history of {sym.code}",
        as_of=row.day, offline=True,
        note="offline snapshot: one historical day, not live")
    return Quote(
        symbol=sym.code, name=sym.name or row.name, market="cn", currency=_currency(sym),
        as_of=row.day, close=round(row.close, d), prev_close=round(row.prev_close, d),
        change=round(change, d),
        change_pct=round(change / row.prev_close * 100.0, 2) if row.prev_close else None,
        open=round(row.open, d), high=round(row.high, d), low=round(row.low, d),
        volume=int(row.volume), source=source)


@tool(label="Fetching a quote for {symbol}", tags=["market", "quote"])
async def get_quote(symbol: str) -> Quote:
    """Latest close of one stock, index, fund, crypto or FX pair, with change, 52-week range and
    volume, naming its source and date. Works for A-shares (600519, 贵州茅台) and US tickers.

    Args:
        symbol: code, ticker or name, e.g. "600519", "NVDA", "沪深300", "BTC-USD".
    """
    return await _quote(symbol)


class QuoteError(BaseModel):
    symbol: str
    error: str


class QuoteList(BaseModel):
    quotes: list[Quote]
    errors: list[QuoteError] = Field(default_factory=list)


@tool(label="Fetching quotes", tags=["market", "quote"])
async def get_quotes(
    symbols: Annotated[list[str], Field(min_length=1, max_length=30)],
) -> QuoteList:
    """Latest quotes for several symbols at once (A-shares and US mixed); unknown ones are listed
    under errors with suggestions instead of failing the call.

    Args:
        symbols: up to 30 codes, tickers or names.
    """
    gate = asyncio.Semaphore(4)  # a few providers calls at a time, not thirty

    async def one(s: str) -> Quote | QuoteError:
        async with gate:
            try:
                return await _quote(s)
            except BullpenError as exc:
                return QuoteError(symbol=s, error=str(exc))

    results = await asyncio.gather(*(one(s) for s in dict.fromkeys(symbols)))
    quotes = [r for r in results if isinstance(r, Quote)]
    errors = [r for r in results if isinstance(r, QuoteError)]
    return QuoteList(quotes=quotes, errors=errors)


# --- OHLCV -----------------------------------------------------------------------------------


def period_start(last: pd.Timestamp, period: str) -> pd.Timestamp | None:
    """Start of a period (`5d`, `6mo`, `1y`, `ytd`, `max`, or a calendar one: `2024-09`,
    `2024年9月`, `2019-06-01 2020-06-16`) counted back from (or placed before) the last bar;
    `InvalidArguments` for a period `tools.periods` cannot read."""
    begin = parse_period(period).begin(last.to_pydatetime())
    return None if begin is None else pd.Timestamp(begin)


class Coverage(BaseModel):
    """The asked window reaches past the data: what was asked and what the source has
    (house rule 17: an answer from less than was asked says so)."""

    asked_start: date | None = None
    asked_end: date | None = None
    data_first: date
    data_last: date


def window(df: pd.DataFrame, period: str | None, start: date | None, end: date | None,
           ) -> tuple[pd.DataFrame, date | None, date | None, Coverage | None]:
    """The bars of the asked window, the calendar bounds asked (explicit `start`/`end` win
    over a calendar `period`; a relative period counts back from the last bar up to `end`),
    and a `Coverage` when the data ends (or starts) inside that window."""
    asked = parse_period(period) if period else None  # InvalidArguments, said; never a crash
    if asked is not None and asked.absolute:
        if start is None and end is None:
            start, end = asked.start, asked.end
        elif start is None:
            start = asked.start
    if start and end and start > end:
        raise InvalidArguments(f"start {start} is after end {end}")
    view = df
    if end is not None:
        view = view[view.index <= _end_bound(df, end)]
    if start is not None:
        view = view[view.index >= pd.Timestamp(start).tz_localize(df.index.tz)]
    elif asked is not None and len(view):  # "6mo" with an end: the six months before it
        begin = asked.begin(view.index[-1].to_pydatetime())
        if begin is not None:
            view = view[view.index >= pd.Timestamp(begin)]
    return view, start, end, _coverage(df, view, start, end)


# trading days a window may reach past the data unremarked (a holiday at its edge)
_SLACK_DAYS = 2


def _coverage(df: pd.DataFrame, view: pd.DataFrame, start: date | None, end: date | None,
              ) -> Coverage | None:
    if not len(df) or (start is None and end is None):
        return None
    first, last = df.index[0].date(), df.index[-1].date()
    if view.empty:  # wholly outside the data (inside it: no trading days, not a gap)
        if (start is not None and start > last) or (end is not None and end < first):
            return Coverage(asked_start=start, asked_end=end, data_first=first, data_last=last)
        return None
    before = start is not None and int(np.busday_count(start, first)) > _SLACK_DAYS
    after = end is not None and int(np.busday_count(last + timedelta(days=1),
                                                    end + timedelta(days=1))) > _SLACK_DAYS
    if not (before or after):
        return None
    return Coverage(asked_start=start, asked_end=end, data_first=first, data_last=last)


def coverage_note(c: Coverage | None) -> str:
    if c is None:
        return ""
    return (f"the asked window {c.asked_start or '...'} to {c.asked_end or '...'} is only "
            f"partly covered: the data runs {c.data_first} to {c.data_last}")


class OHLCVSummary(BaseModel):
    first: str
    last: str
    open: float
    close: float
    change_pct: float
    high: float
    low: float
    avg_volume: int


class OHLCV(BaseModel):
    """Bars as a compact table: `rows` follow `columns`; prices in `currency`."""

    symbol: str
    name: str = ""
    interval: str
    currency: str = ""
    total_bars: int = Field(description="bars in the requested range")
    columns: list[str]
    rows: list[list[str | float | int | None]]
    summary: OHLCVSummary | None = None
    note: str = ""
    coverage: Coverage | None = Field(default=None, description="set when the data covers "
                                      "only part of the asked window")
    source: DataSource


def _ts_text(ts: pd.Timestamp, intraday: bool) -> str:
    return str(ts.strftime("%Y-%m-%d %H:%M" if intraday else "%Y-%m-%d"))


def ohlcv_table(
    sym: ResolvedSymbol,
    df: pd.DataFrame,
    interval: str,
    *,
    start: date | None = None,
    end: date | None = None,
    period: str | None = None,
    limit: int = 60,
) -> OHLCV:
    """Slice, add MA5/20/60 (computed on the full history) and shape bars for the LLM (pure)."""
    full = with_moving_averages(df)
    source = source_from(df)
    view, start, end, covered = window(full, period, start, end)
    intraday = interval_minutes(interval) < 1440
    columns = ["time" if intraday else "date", "open", "high", "low", "close", "volume",
               *[f"ma{n}" for n in MA_WINDOWS]]
    base = dict(symbol=sym.code, name=sym.name, interval=interval, currency=_currency(sym),
                columns=columns, source=source)
    if view.empty:
        have = (f"{_ts_text(full.index[0], intraday)} to {_ts_text(full.index[-1], intraday)}"
                if len(full) else "nothing")
        asked = f"{start or 'the first bar'} and {end or 'the last bar'}"
        inside = bool(len(full)) and (start is None or pd.Timestamp(start) <= full.index[-1]
                                      .tz_localize(None)) and (
            end is None or pd.Timestamp(end) >= full.index[0].tz_localize(None))
        note = (f"no trading days between {asked}" if inside else
                f"no data between {asked}; {source.provider} has {sym.code} from {have}")
        return OHLCV(total_bars=0, rows=[], note=note, coverage=covered, **base)
    total = len(view)
    limit = max(1, min(limit, MAX_ROWS))
    shown = view.iloc[-limit:]
    d = price_decimals(float(view["close"].iloc[-1]))
    rows: list[list[str | float | int | None]] = []
    for ts, r in shown.iterrows():
        assert isinstance(ts, pd.Timestamp)
        rows.append([
            _ts_text(ts, intraday),
            *(rnd(float(r[c]), d) for c in ("open", "high", "low", "close")),
            int(r["volume"]) if pd.notna(r["volume"]) else None,
            *(rnd(float(r[f"ma{n}"]), d) for n in MA_WINDOWS),
        ])
    first_open, last_close = float(view["open"].iloc[0]), float(view["close"].iloc[-1])
    summary = OHLCVSummary(
        first=_ts_text(view.index[0], intraday),
        last=_ts_text(view.index[-1], intraday),
        open=round(first_open, d),
        close=round(last_close, d),
        change_pct=round((last_close / first_open - 1.0) * 100.0, 2) if first_open else 0.0,
        high=round(float(view["high"].max()), d),
        low=round(float(view["low"].min()), d),
        avg_volume=int(view["volume"].mean()) if view["volume"].notna().any() else 0,
    )
    note = "; ".join(n for n in (
        f"showing the last {limit} of {total} bars" if total > limit else "",
        coverage_note(covered)) if n)
    return OHLCV(total_bars=total, rows=rows, summary=summary, note=note, coverage=covered,
                 **base)


@tool(label="Fetching {symbol} bars", tags=["market", "ohlcv"])
async def get_ohlcv(
    symbol: str,
    start: date | None = None,
    end: date | None = None,
    interval: str = "1d",
    period: str | None = None,
    limit: Annotated[int, Field(ge=1, le=MAX_ROWS)] = 60,
) -> OHLCV:
    """OHLCV bars with MA5/MA20/MA60 for a stock, index, crypto or FX pair, plus a period
    summary (change %, high, low). Daily bars aggregate to weekly (1w) or monthly (1mo).

    Args:
        symbol: code, ticker or name, e.g. "600519", "NVDA".
        start: first date (YYYY-MM-DD); default: by period, else the latest bars.
        end: last date (YYYY-MM-DD), inclusive.
        interval: bar size: 1d, 1w, 1mo, or intraday 5m/15m/30m/1h/4h where the source has it.
        period: instead of start/end: back from the last bar (5d, 1mo, 3mo, 6mo, 1y, ytd,
            max) or calendar dates (2024, 2024-09, 2019-06-01, 2019-06-01 2020-06-16).
        limit: at most this many most recent bars in rows (the summary covers the whole range).
    """
    interval = normalize_interval(interval)
    sym = resolve_symbol(symbol)
    df = await get_bars(sym, interval)
    return ohlcv_table(sym, df, interval, start=start, end=end, period=period, limit=limit)
