"""Technical indicators computed with pandas-ta: the `get_indicators` tool."""

from __future__ import annotations

import asyncio
import warnings
from datetime import date
from typing import Annotated, Any, Literal

import pandas as pd
from pydantic import BaseModel, Field

from core.errors import DataUnavailable
from tools.bars import interval_minutes, normalize_interval
from tools.data.prices import get_bars
from tools.market import source_from
from tools.models import DataSource, price_decimals, rnd, tool
from tools.symbol_lookup import resolve_symbol


def _pandas_ta() -> Any:
    """pandas-ta on first use: it pulls numba (~60 MB, 0.3 s), which idle processes don't need.
    pandas-ta 0.4 trips pandas 3 deprecation warnings on import, hence the filter."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pandas_ta

    return pandas_ta

IndicatorName = Literal["rsi", "macd", "bbands", "kdj", "atr", "obv", "sma", "ema"]
ALL_INDICATORS: tuple[IndicatorName, ...] = ("rsi", "macd", "bbands", "kdj", "atr", "obv")


class Indicator(BaseModel):
    """One indicator: latest values, the last few bars of each line, and coded signals."""

    name: str = Field(description="with parameters, e.g. RSI(14)")
    latest: dict[str, float | None]
    recent: dict[str, list[float | None]] = Field(description="oldest first, aligned to dates")
    signals: list[str] = Field(default_factory=list)


class IndicatorReport(BaseModel):
    symbol: str
    name: str = ""
    interval: str
    as_of: str
    close: float
    dates: list[str] = Field(description="dates of the `recent` values")
    indicators: list[Indicator]
    source: DataSource


def _crossed(a: pd.Series, b: pd.Series, bars: int) -> str:
    """'up' if a crossed above b within the last `bars`, 'down' if below, '' otherwise."""
    diff = (a - b).dropna().iloc[-(bars + 1):]
    signs = diff.gt(0).astype(int).diff().dropna()
    if signs.empty or not signs.any():
        return ""
    return "up" if signs[signs != 0].iloc[-1] > 0 else "down"


def compute_indicators(
    df: pd.DataFrame, names: tuple[IndicatorName, ...] = ALL_INDICATORS, history: int = 5,
) -> tuple[list[str], list[Indicator]]:
    """Indicators over OHLCV bars (pure). Standard parameters: RSI 14, MACD 12/26/9,
    Bollinger 20/2, KDJ 9/3, ATR 14, SMA/EMA 20."""
    ta = _pandas_ta()
    h, lo, c, v = df["high"], df["low"], df["close"], df["volume"]
    d = price_decimals(float(c.iloc[-1]))
    tail = df.index[-history:]
    out: list[Indicator] = []

    def pack(name: str, lines: dict[str, pd.Series], signals: list[str], dec: int,
             ) -> Indicator:
        return Indicator(
            name=name,
            latest={k: rnd(float(s.iloc[-1]), dec) for k, s in lines.items()},
            recent={k: [rnd(float(x), dec) for x in s.reindex(tail)] for k, s in lines.items()},
            signals=signals,
        )

    for ind in names:
        if ind == "rsi":
            rsi = ta.rsi(c, length=14)
            last = float(rsi.iloc[-1])
            sig = ["overbought (>70)"] if last > 70 else ["oversold (<30)"] if last < 30 else []
            out.append(pack("RSI(14)", {"rsi": rsi}, sig, 2))
        elif ind == "macd":
            m = ta.macd(c, fast=12, slow=26, signal=9)
            macd, hist, signal = m.iloc[:, 0], m.iloc[:, 1], m.iloc[:, 2]
            cross = _crossed(macd, signal, history)
            sig = [f"MACD crossed {'above' if cross == 'up' else 'below'} signal "
                   f"in the last {history} bars"] if cross else []
            sig.append("MACD above zero" if float(macd.iloc[-1]) > 0 else "MACD below zero")
            out.append(pack("MACD(12,26,9)", {"macd": macd, "signal": signal, "hist": hist},
                            sig, d + 1))
        elif ind == "bbands":
            b = ta.bbands(c, length=20, std=2.0)
            lower, mid, upper = b.iloc[:, 0], b.iloc[:, 1], b.iloc[:, 2]
            pct_b = (c - lower) / (upper - lower)
            last_b = float(pct_b.iloc[-1])
            sig = ["close above upper band"] if last_b > 1 else \
                ["close below lower band"] if last_b < 0 else []
            lines = {"lower": lower, "middle": mid, "upper": upper}
            ind_b = pack("Bollinger(20,2)", lines, sig, d)
            ind_b.latest["percent_b"] = rnd(last_b, 3)
            ind_b.latest["bandwidth_pct"] = rnd(
                float((upper.iloc[-1] - lower.iloc[-1]) / mid.iloc[-1] * 100.0), 2)
            out.append(ind_b)
        elif ind == "kdj":
            k = ta.kdj(h, lo, c, length=9, signal=3)
            kk, dd, jj = k.iloc[:, 0], k.iloc[:, 1], k.iloc[:, 2]
            cross = _crossed(kk, dd, history)
            sig = [f"K crossed {'above' if cross == 'up' else 'below'} D in the last "
                   f"{history} bars ({'golden' if cross == 'up' else 'dead'} cross)"] \
                if cross else []
            if float(jj.iloc[-1]) > 100:
                sig.append("J above 100 (overbought)")
            elif float(jj.iloc[-1]) < 0:
                sig.append("J below 0 (oversold)")
            out.append(pack("KDJ(9,3)", {"k": kk, "d": dd, "j": jj}, sig, 2))
        elif ind == "atr":
            atr = ta.atr(h, lo, c, length=14)
            item = pack("ATR(14)", {"atr": atr}, [], d)
            item.latest["atr_pct_of_close"] = rnd(float(atr.iloc[-1] / c.iloc[-1] * 100.0), 2)
            out.append(item)
        elif ind == "obv":
            obv = ta.obv(c, v)
            slope = float(obv.iloc[-1] - obv.iloc[-min(len(obv), 20)])
            sig = ["OBV rising over 20 bars" if slope > 0 else "OBV falling over 20 bars"]
            out.append(pack("OBV", {"obv": obv}, sig, 0))
        elif ind in ("sma", "ema"):
            line = ta.sma(c, length=20) if ind == "sma" else ta.ema(c, length=20)
            sig = [f"close {'above' if float(c.iloc[-1]) > float(line.iloc[-1]) else 'below'} "
                   f"{ind.upper()}20"]
            out.append(pack(f"{ind.upper()}(20)", {ind: line}, sig, d))
    intraday = interval_minutes(str(df.attrs.get("interval", "1d"))) < 1440
    fmt = "%Y-%m-%d %H:%M" if intraday else "%Y-%m-%d"
    return [ts.strftime(fmt) for ts in tail], out


@tool(label="Computing indicators for {symbol}", tags=["market", "indicators"])
async def get_indicators(
    symbol: str,
    indicators: list[IndicatorName] | None = None,
    interval: str = "1d",
    end: date | None = None,
    history: Annotated[int, Field(ge=1, le=30)] = 5,
) -> IndicatorReport:
    """Technical indicators computed from price bars: RSI, MACD, Bollinger bands, KDJ, ATR, OBV
    (and SMA/EMA 20), with latest values, the last few bars and rule-based signals.

    Args:
        symbol: code, ticker or name, e.g. "AAPL", "600519".
        indicators: which ones (rsi, macd, bbands, kdj, atr, obv, sma, ema); default the
            first six.
        interval: bar size: 1d, 1w, 1mo, or intraday where the source has it.
        end: compute as of this date (YYYY-MM-DD); default the latest bar.
        history: how many recent bars of each line to include.
    """
    interval = normalize_interval(interval)
    sym = resolve_symbol(symbol)
    df = await get_bars(sym, interval)
    if end is not None:
        df = df[df.index < pd.Timestamp(end).tz_localize(df.index.tz) + pd.Timedelta(days=1)]
    if len(df) < 35:
        raise DataUnavailable(f"only {len(df)} {interval} bars for {sym.code}; indicators need "
                              "at least 35", provider=str(df.attrs.get("provider", "")))
    df.attrs["interval"] = interval
    dates, items = await asyncio.to_thread(
        compute_indicators, df, tuple(dict.fromkeys(indicators or ALL_INDICATORS)), history)
    return IndicatorReport(
        symbol=sym.code, name=sym.name, interval=interval, as_of=dates[-1],
        close=round(float(df["close"].iloc[-1]), price_decimals(float(df["close"].iloc[-1]))),
        dates=dates, indicators=items, source=source_from(df),
    )
