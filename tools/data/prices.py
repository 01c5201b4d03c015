"""Price bars through the data layer: live providers by market, then the offline snapshot.

`get_bars` is the one entry point for bars; every frame it returns carries `attrs` with the
`DataSource` fields (provider, dataset, as_of, offline, note).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pandas as pd

from core.errors import DataUnavailable, UnknownSymbol
from tools import snapshot
from tools.bars import aggregate, interval_minutes, normalize_interval
from tools.data.config import get_config
from tools.symbol_lookup import ResolvedSymbol

BarFetcher = Callable[[ResolvedSymbol, str], Awaitable[pd.DataFrame]]

# market -> live bar providers in fallback order (registered by the provider modules)
_BAR_PROVIDERS: dict[str, list[tuple[str, BarFetcher]]] = {}


def register_bar_provider(market: str, name: str, fetch: BarFetcher) -> None:
    chain = _BAR_PROVIDERS.setdefault(market, [])
    if all(n != name for n, _ in chain):
        chain.append((name, fetch))


def bar_providers(market: str) -> list[tuple[str, BarFetcher]]:
    return list(_BAR_PROVIDERS.get(market, []))


def _snapshot_bars_sync(sym: ResolvedSymbol, interval: str) -> pd.DataFrame:
    code = snapshot.canonical(sym.code) or sym.code
    if not snapshot.series_for(code):
        if sym.name:  # a real symbol, just not in the offline data
            held = ", ".join(snapshot.symbols())
            raise DataUnavailable(
                f"the offline snapshot has no data for {sym.code} {sym.name}; it holds {held}",
                provider=snapshot.PROVIDER,
            )
        raise UnknownSymbol(sym.code, snapshot.suggest(sym.code))
    native = snapshot.best_native(code, interval_minutes(interval))
    df = snapshot.load(code, native)
    out = aggregate(df, interval, native)
    out.attrs = dict(df.attrs)
    return out


async def snapshot_bars(sym: ResolvedSymbol, interval: str) -> pd.DataFrame:
    return await asyncio.to_thread(_snapshot_bars_sync, sym, interval)


async def get_bars(sym: ResolvedSymbol, interval: str = "1d") -> pd.DataFrame:
    """Full available history of `sym` at `interval` (tz-aware index, OHLCV float columns).

    Offline mode reads the snapshot. Otherwise each live provider for the market is tried in
    turn; when all fail, the snapshot answers and its note names the failures.
    """
    interval = normalize_interval(interval)
    failures: list[str] = []
    if get_config().mode != "offline":
        for name, fetch in bar_providers(sym.market):
            try:
                df = await fetch(sym, interval)
            except DataUnavailable as exc:
                failures.append(str(exc) or name)
                continue
            if not df.empty:
                return df
            failures.append(f"{name}: empty response")
    try:
        df = await snapshot_bars(sym, interval)
    except (DataUnavailable, UnknownSymbol) as exc:
        if failures:
            raise DataUnavailable(
                "; ".join([*failures, str(exc)]), provider=failures[0].split(":")[0]
            ) from exc
        raise
    if failures:
        df.attrs["note"] = "live providers failed (" + "; ".join(failures) + "); " + str(
            df.attrs.get("note", "")
        )
    return df
