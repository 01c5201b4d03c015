"""Numbers the debate states, computed in code from bars and financials (never by a model).

`price_metrics` is pure: returns, volatility, drawdown, beta against a benchmark, RSI, moving
average distances, 52-week position and volume trend from daily OHLCV bars (oldest first).
`Fundamentals` is what the latest reported period says, when a financials tool answered.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from pydantic import BaseModel

from debate.models import Metric

TRADING_DAYS = 252


class PriceMetrics(BaseModel):
    as_of: str = ""
    first_date: str = ""
    bars: int = 0
    close: float | None = None
    ret_1m: float | None = None
    ret_3m: float | None = None
    ret_6m: float | None = None
    ret_12m: float | None = None
    momentum_12_1: float | None = None
    vol_ann: float | None = None
    max_drawdown_1y: float | None = None
    beta_1y: float | None = None
    benchmark: str = ""
    # the window beta was measured over: the stock's last year where the benchmark has prices
    beta_start: str = ""
    beta_end: str = ""
    beta_days: int = 0
    rsi14: float | None = None
    dist_ma50: float | None = None
    dist_ma200: float | None = None
    pos_52w: float | None = None
    high_52w: float | None = None
    low_52w: float | None = None
    volume_ratio_20_60: float | None = None
    up_volume_share_20: float | None = None


class Fundamentals(BaseModel):
    """The latest report's lines (percent values as reported) and ratios against the price."""

    period: str = ""
    period_end: str = ""  # ISO date the reported period ended (its label says which report)
    pe: float | None = None
    pb: float | None = None
    roe_pct: float | None = None
    gross_margin_pct: float | None = None
    net_margin_pct: float | None = None
    debt_ratio_pct: float | None = None
    revenue_yoy_pct: float | None = None
    net_profit_yoy_pct: float | None = None


def _f(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _ret(close: pd.Series, n: int, skip: int = 0) -> float | None:
    if len(close) <= n:
        return None
    end = close.iloc[-1 - skip]
    start = close.iloc[-1 - n]
    return _f(end / start - 1.0) if start else None


def rsi(close: pd.Series, n: int = 14) -> float | None:
    """Wilder's RSI of the last bar."""
    if len(close) <= n:
        return None
    delta = close.diff().dropna()
    gain = delta.clip(lower=0).ewm(alpha=1 / n, adjust=False).mean().iloc[-1]
    loss = (-delta.clip(upper=0)).ewm(alpha=1 / n, adjust=False).mean().iloc[-1]
    if loss == 0:
        return 100.0
    return _f(100.0 - 100.0 / (1.0 + gain / loss))


def max_drawdown(close: pd.Series) -> float | None:
    """Largest peak-to-trough fall (a negative fraction)."""
    if len(close) < 2:
        return None
    peak = close.cummax()
    return _f((close / peak - 1.0).min())


class BetaFit(BaseModel):
    """Beta over the stock's last year where the benchmark has prices on the same dates:
    `value` None when fewer than `MIN_BETA_DAYS` such days; `start`/`end`/`days` say which."""

    value: float | None = None
    start: str = ""
    end: str = ""
    days: int = 0


MIN_BETA_DAYS = 60


def _naive_days(s: pd.Series) -> pd.Series:
    out = s.copy()
    out.index = pd.DatetimeIndex(out.index).tz_localize(None).normalize()
    return out[~out.index.duplicated(keep="last")]


def beta_fit(close: pd.Series, bench: pd.Series, window: int = TRADING_DAYS) -> BetaFit:
    """Beta of daily returns against the benchmark's, on the dates both have within the
    stock's last `window` returns (the overlap that exists, whatever each series covers)."""
    a = _naive_days(close).iloc[-(window + 1):]
    joined = pd.concat([a, _naive_days(bench)], axis=1, join="inner").dropna()
    days = max(0, len(joined) - 1)
    fit = BetaFit(start=str(joined.index[0].date()) if len(joined) else str(a.index[0].date()),
                  end=str(joined.index[-1].date()) if len(joined) else str(a.index[-1].date()),
                  days=days)
    if days < MIN_BETA_DAYS:
        return fit
    r = joined.pct_change().dropna().to_numpy(float)
    var = float(np.var(r[:, 1], ddof=1))
    if var == 0:
        return fit
    return fit.model_copy(update={"value": _f(np.cov(r[:, 0], r[:, 1], ddof=1)[0, 1] / var)})


def beta(close: pd.Series, bench: pd.Series, window: int = TRADING_DAYS) -> float | None:
    """Beta of daily returns against the benchmark's on common dates (None under 60 days)."""
    return beta_fit(close, bench, window).value


def price_metrics(bars: pd.DataFrame, bench: pd.DataFrame | None = None,
                  bench_name: str = "") -> PriceMetrics:
    """Price-based metrics of daily bars; fields stay None where history is too short."""
    if bars.empty:
        return PriceMetrics()
    close = bars["close"].astype(float)
    year = close.iloc[-TRADING_DAYS:]
    vol = bars["volume"].astype(float)
    logret = np.log(close / close.shift(1)).dropna().iloc[-TRADING_DAYS:]
    ma50 = close.rolling(50).mean().iloc[-1] if len(close) >= 50 else np.nan
    ma200 = close.rolling(200).mean().iloc[-1] if len(close) >= 200 else np.nan
    hi, lo = float(bars["high"].iloc[-TRADING_DAYS:].max()), float(
        bars["low"].iloc[-TRADING_DAYS:].min())
    last = float(close.iloc[-1])
    v20, v60 = vol.iloc[-20:].mean(), vol.iloc[-60:].mean()
    chg = close.diff().iloc[-20:]
    v_last20 = vol.iloc[-20:]
    total20 = float(v_last20.sum())
    fit = (beta_fit(close, bench["close"].astype(float)) if bench is not None and len(bench)
           else BetaFit())
    return PriceMetrics(
        as_of=str(bars.index[-1].date()),
        first_date=str(bars.index[0].date()),
        bars=len(bars),
        close=last,
        ret_1m=_ret(close, 21),
        ret_3m=_ret(close, 63),
        ret_6m=_ret(close, 126),
        ret_12m=_ret(close, TRADING_DAYS),
        momentum_12_1=_ret(close, TRADING_DAYS, skip=21),
        vol_ann=_f(logret.std(ddof=1) * math.sqrt(TRADING_DAYS)) if len(logret) > 20 else None,
        max_drawdown_1y=max_drawdown(year),
        beta_1y=fit.value,
        benchmark=bench_name,
        beta_start=fit.start if fit.days else "",
        beta_end=fit.end if fit.days else "",
        beta_days=fit.days,
        rsi14=rsi(close),
        dist_ma50=_f(last / ma50 - 1.0) if ma50 == ma50 and ma50 else None,
        dist_ma200=_f(last / ma200 - 1.0) if ma200 == ma200 and ma200 else None,
        pos_52w=_f((last - lo) / (hi - lo)) if hi > lo else None,
        high_52w=_f(hi),
        low_52w=_f(lo),
        volume_ratio_20_60=_f(v20 / v60) if v60 and v60 == v60 else None,
        up_volume_share_20=_f(float(v_last20[chg > 0].sum()) / total20) if total20 else None,
    )


def fundamentals_from(report: Any, close: float | None) -> Fundamentals | None:
    """Read a `get_financials` result (newest period first); None when it holds nothing."""
    fin = getattr(report, "financials", None)
    periods = list(getattr(fin, "periods", []) or [])
    if not periods:
        return None
    latest = periods[0]
    end: Any = getattr(latest, "period", None)
    values: dict[str, Any] = dict(getattr(latest, "values", {}) or {})
    annual = next((p for p in periods if "年报" in str(getattr(p, "label", ""))
                   or "annual" in str(getattr(p, "label", "")).lower()
                   or getattr(getattr(p, "period", None), "month", 0) == 12), None)
    eps = _f(dict(getattr(annual, "values", {}) or {}).get("eps")) if annual else None
    bvps = _f(values.get("bvps"))
    return Fundamentals(
        period=str(getattr(latest, "label", "")),
        period_end=end.isoformat()[:10] if hasattr(end, "isoformat") else str(end or ""),
        pe=_f(close / eps) if close and eps and eps > 0 else None,
        pb=_f(close / bvps) if close and bvps and bvps > 0 else None,
        roe_pct=_f(values.get("roe_pct")),
        gross_margin_pct=_f(values.get("gross_margin_pct")),
        net_margin_pct=_f(values.get("net_margin_pct")),
        debt_ratio_pct=_f(values.get("debt_ratio_pct")),
        revenue_yoy_pct=_f(values.get("revenue_yoy_pct")),
        net_profit_yoy_pct=_f(values.get("net_profit_yoy_pct")),
    )


def _pct(v: float | None, digits: int = 1) -> str:
    return "n/a" if v is None else f"{v * 100:+.{digits}f}%"


def _num(v: float | None, digits: int = 2, suffix: str = "") -> str:
    return "n/a" if v is None else f"{v:,.{digits}f}{suffix}"


def metric_rows(pm: PriceMetrics, fund: Fundamentals | None, currency: str = "") -> list[Metric]:
    """The metrics table every report and prompt shows (values and their display text)."""
    cur = f" {currency}" if currency else ""
    rows = [
        Metric(key="close", label="Last close", value=pm.close,
               display=_num(pm.close, 2, cur) + (f" ({pm.as_of})" if pm.as_of else "")),
        Metric(key="ret_1m", label="Return 1M", value=pm.ret_1m, display=_pct(pm.ret_1m)),
        Metric(key="ret_3m", label="Return 3M", value=pm.ret_3m, display=_pct(pm.ret_3m)),
        Metric(key="ret_12m", label="Return 12M", value=pm.ret_12m, display=_pct(pm.ret_12m)),
        Metric(key="momentum_12_1", label="Momentum 12-1M", value=pm.momentum_12_1,
               display=_pct(pm.momentum_12_1)),
        Metric(key="vol_ann", label="Volatility (ann.)", value=pm.vol_ann,
               display="n/a" if pm.vol_ann is None else f"{pm.vol_ann * 100:.1f}%"),
        Metric(key="max_drawdown_1y", label="Max drawdown 1Y", value=pm.max_drawdown_1y,
               display=_pct(pm.max_drawdown_1y)),
        Metric(key="beta_1y", label=f"Beta 1Y{' vs ' + pm.benchmark if pm.benchmark else ''}",
               value=pm.beta_1y, display=_num(pm.beta_1y) + (
                   f" ({pm.beta_start} to {pm.beta_end}, {pm.beta_days} days)"
                   if pm.beta_1y is not None and pm.beta_start else "")),
        Metric(key="rsi14", label="RSI(14)", value=pm.rsi14, display=_num(pm.rsi14, 1)),
        Metric(key="dist_ma200", label="vs MA200", value=pm.dist_ma200,
               display=_pct(pm.dist_ma200)),
        Metric(key="pos_52w", label="52W range position", value=pm.pos_52w,
               display="n/a" if pm.pos_52w is None else f"{pm.pos_52w * 100:.0f}%"),
        Metric(key="volume_ratio_20_60", label="Volume 20D/60D", value=pm.volume_ratio_20_60,
               display=_num(pm.volume_ratio_20_60, 2, "x")),
    ]
    if fund is not None:
        for key, label in (("pe", "P/E"), ("pb", "P/B")):
            v = getattr(fund, key)
            rows.append(Metric(key=key, label=label, value=v, display=_num(v, 1, "x")))
        for key, label in (("roe_pct", "ROE"), ("gross_margin_pct", "Gross margin"),
                           ("net_margin_pct", "Net margin"), ("debt_ratio_pct", "Debt ratio"),
                           ("revenue_yoy_pct", "Revenue YoY"),
                           ("net_profit_yoy_pct", "Net profit YoY")):
            v = getattr(fund, key)
            rows.append(Metric(key=key, label=f"{label} ({fund.period})", value=v,
                               display=_num(v, 1, "%")))
    return rows
