"""Price bars through the data layer: live providers by market, then the offline snapshot.

`get_bars` is the one entry point for bars; every frame it returns carries `attrs` with the
`DataSource` fields (provider, dataset, as_of, offline, note).
"""

from __future__ import annotations

import asyncio

import pandas as pd

from core.errors import DataUnavailable, UnknownSymbol
from tools import snapshot
from tools.bars import aggregate, interval_minutes, normalize_interval
from tools.data import cn_packs, providers
from tools.data import fetcher as fx
from tools.data.config import get_config
from tools.data.models import Bars, BarsQuery
from tools.symbol_lookup import ResolvedSymbol


def _snapshot_bars_sync(sym: ResolvedSymbol, interval: str) -> pd.DataFrame:
    code = snapshot.key_for(sym.code, sym.market, sym.exchange)
    if code is None:
        if sym.name:  # a real symbol, just not in the offline data
            raise DataUnavailable(
                f"the offline snapshot has no data for {sym.code} {sym.name}"
                f"{one_day_hint(sym)}; it holds {snapshot.held_text(sym.market)}",
                provider=snapshot.PROVIDER,
            )
        raise UnknownSymbol(sym.code, snapshot.suggest(sym.code))
    native = snapshot.best_native(code, interval_minutes(interval))
    df = snapshot.load(code, native)
    out = aggregate(df, interval, native)
    out.attrs = dict(df.attrs)
    return out


def one_day_hint(sym: ResolvedSymbol) -> str:
    """", only the one day 2023-08-25 (close 1824.98)" when the one-day A-share table has it."""
    if sym.market != "cn" or not sym.exchange:
        return ""
    try:
        row = cn_packs.one_day(sym.code, sym.exchange)
    except DataUnavailable:
        return ""
    if row is None:
        return ""
    return f", only the one day {row.day.isoformat()} (close {row.close:g} CNY)"


async def snapshot_bars(sym: ResolvedSymbol, interval: str) -> pd.DataFrame:
    return await asyncio.to_thread(_snapshot_bars_sync, sym, interval)


_LIVE_INTRADAY = ("1m", "5m", "15m", "30m", "1h")


def _fetch_interval(interval: str) -> str:
    """The bar size to ask providers for: daily for 1d and coarser, else the coarsest intraday
    size that divides into the wanted one."""
    minutes = interval_minutes(interval)
    if minutes >= 1440:
        return "1d"
    fits = [i for i in _LIVE_INTRADAY if minutes % interval_minutes(i) == 0]
    return fits[-1] if fits else "1m"


def bars_frame(bars: Bars) -> pd.DataFrame:
    """A provider's Bars as the standard frame (tz-aware index `ts`, float OHLCV, attrs)."""
    df = pd.DataFrame(bars.rows, columns=["ts", *snapshot.COLUMNS])
    idx = pd.DatetimeIndex(pd.to_datetime(df.pop("ts"), utc=False, format="mixed"))
    idx = idx.tz_localize(bars.tz) if idx.tz is None else idx.tz_convert(bars.tz)
    df.index = idx.rename("ts")
    df = df.astype("float64")
    df = df[~df.index.duplicated(keep="last")].sort_index()
    df.attrs.update(bars.source.model_dump())
    return df


async def live_bars(sym: ResolvedSymbol, interval: str) -> pd.DataFrame:
    """Bars from the live providers (cache, record/replay per the data mode)."""
    providers.load()
    native = _fetch_interval(interval)
    query = BarsQuery(code=sym.code, market=sym.market, exchange=sym.exchange, kind=sym.kind,
                      yahoo=sym.yahoo, interval=native)
    bars: Bars = await fx.run("bars", query)
    df = bars_frame(bars)
    out = aggregate(df, interval, native)
    out.attrs = dict(df.attrs)
    return out


async def get_bars(sym: ResolvedSymbol, interval: str = "1d") -> pd.DataFrame:
    """Full available history of `sym` at `interval` (tz-aware index, OHLCV float columns).

    Offline mode reads the snapshot. Otherwise the live providers for the market answer in
    turn (akshare then yfinance for A-shares; yfinance for US); when all fail, the snapshot
    answers and its note names the failures.
    """
    interval = normalize_interval(interval)
    failure: DataUnavailable | None = None
    if get_config().mode != "offline":
        try:
            return await live_bars(sym, interval)
        except DataUnavailable as exc:
            failure = exc
    try:
        df = await snapshot_bars(sym, interval)
    except (DataUnavailable, UnknownSymbol) as exc:
        if failure is not None:
            raise DataUnavailable(f"{failure}; fallback: {exc}",
                                  provider=failure.provider) from exc
        raise
    if failure is not None:
        df.attrs["note"] = f"live providers failed ({failure}); {df.attrs.get('note', '')}"
    return df
