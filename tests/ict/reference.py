"""Slow, obviously-correct readings of the ICT definitions, bar by bar in plain Python.

The golden tests compare the vectorised analyzer with these on real series.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

THRESHOLDS = {"very_aggressive": 0.0, "aggressive": 0.1, "defensive": 0.25,
              "very_defensive": 0.5}


@dataclass
class Bars:
    o: list[float]
    h: list[float]
    lo: list[float]
    c: list[float]

    @classmethod
    def of(cls, df: pd.DataFrame) -> Bars:
        return cls(df["open"].tolist(), df["high"].tolist(), df["low"].tolist(),
                   df["close"].tolist())

    @property
    def n(self) -> int:
        return len(self.c)

    def mean_range(self, t: int, window: int = 20) -> float:
        lo = max(0, t - window + 1)
        spans = [self.h[j] - self.lo[j] for j in range(lo, t + 1)]
        return sum(spans) / len(spans)


def fvgs(b: Bars, mode: str = "very_aggressive", window: int = 20) -> list[dict[str, object]]:
    """Three-candle rule around middle candle i, then fills by later candle bodies."""
    out: list[dict[str, object]] = []
    for i in range(1, b.n - 1):
        if b.lo[i + 1] > b.h[i - 1]:
            side, top, bottom = "bullish", b.lo[i + 1], b.h[i - 1]
        elif b.h[i + 1] < b.lo[i - 1]:
            side, top, bottom = "bearish", b.lo[i - 1], b.h[i + 1]
        else:
            continue
        avg = b.mean_range(i + 1, window)
        rel = (top - bottom) / avg if avg > 0 else float("inf")
        if rel < THRESHOLDS[mode]:
            continue
        mitigated = filled = None
        for j in range(i + 2, b.n):
            body_lo, body_hi = min(b.o[j], b.c[j]), max(b.o[j], b.c[j])
            if side == "bullish":
                if mitigated is None and body_lo < top:
                    mitigated = j
                if filled is None and body_lo <= bottom:
                    filled = j
            else:
                if mitigated is None and body_hi > bottom:
                    mitigated = j
                if filled is None and body_hi >= top:
                    filled = j
            if mitigated is not None and filled is not None:
                break
        out.append({"side": side, "index": i, "top": top, "bottom": bottom,
                    "confirmed_index": i + 1, "mitigated_index": mitigated,
                    "filled_index": filled})
    return out


def pivots(b: Bars, window: int) -> tuple[list[int], list[int]]:
    highs, lows = [], []
    for i in range(window, b.n - window):
        left_h = b.h[i - window:i]
        right_h = b.h[i + 1:i + window + 1]
        if b.h[i] > max(left_h) and b.h[i] >= max(right_h):
            highs.append(i)
        left_l = b.lo[i - window:i]
        right_l = b.lo[i + 1:i + window + 1]
        if b.lo[i] < min(left_l) and b.lo[i] <= min(right_l):
            lows.append(i)
    return highs, lows


def structure(b: Bars, window: int) -> list[dict[str, object]]:
    """Walk the bars: break the live swing level on a close beyond it, then take in new swings.

    A swing confirmed at the close of bar t becomes the live level from bar t + 1; a broken
    level stays dead until a newer swing of its kind is confirmed.
    """
    highs, lows = pivots(b, window)
    conf_high = {i + window: i for i in highs}
    conf_low = {i + window: i for i in lows}
    live_high: int | None = None
    live_low: int | None = None
    trend = 0
    events: list[dict[str, object]] = []
    for t in range(b.n):
        for direction in (1, -1):
            swing = live_high if direction == 1 else live_low
            if swing is None:
                continue
            level = b.h[swing] if direction == 1 else b.lo[swing]
            crossed = b.c[t] > level if direction == 1 else b.c[t] < level
            if not crossed:
                continue
            brk = next(j for j in range(swing + window + 1, t + 1)
                       if (b.h[j] > level if direction == 1 else b.lo[j] < level))
            kind = "BOS" if trend in (0, direction) else "ChoCH"
            trend = direction
            events.append({"kind": kind, "direction": "up" if direction == 1 else "down",
                           "level": level, "swing_index": swing, "break_index": brk,
                           "confirmed_index": t})
            if direction == 1:
                live_high = None
            else:
                live_low = None
        if t in conf_high:
            live_high = conf_high[t]
        if t in conf_low:
            live_low = conf_low[t]
    return events


def order_block(b: Bars, event: dict[str, object], refinement: str) -> dict[str, object]:
    s = int(event["swing_index"])  # type: ignore[call-overload]
    c = int(event["confirmed_index"])  # type: ignore[call-overload]
    up = event["direction"] == "up"
    span = range(s, c + 1)
    if up:
        extreme = min(b.lo[j] for j in span)
        leg = next(j for j in span if b.lo[j] == extreme)
        opposite = [j for j in range(s, leg + 1) if b.c[j] < b.o[j]]
    else:
        extreme = max(b.h[j] for j in span)
        leg = next(j for j in span if b.h[j] == extreme)
        opposite = [j for j in range(s, leg + 1) if b.c[j] > b.o[j]]
    origin = opposite[-1] if opposite else leg
    if refinement == "defensive":
        top, bottom = max(b.o[origin], b.c[origin]), min(b.o[origin], b.c[origin])
    else:
        top, bottom = b.h[origin], b.lo[origin]
    mitigated = broken = None
    for j in range(c + 1, b.n):
        if mitigated is None and (b.lo[j] <= top if up else b.h[j] >= bottom):
            mitigated = j
        if broken is None and (b.c[j] < bottom if up else b.c[j] > top):
            broken = j
    return {"origin_index": origin, "top": top, "bottom": bottom,
            "mitigated_index": mitigated, "broken_index": broken}


def equal_pairs(b: Bars, window: int, factor: float, high: bool,
                lookback: int = 10) -> list[tuple[int, int, float]]:
    """(first swing bar, second swing bar, level) of every equal-highs (lows) pair."""
    highs, lows = pivots(b, window)
    idx = highs if high else lows
    price = [b.h[i] if high else b.lo[i] for i in idx]
    out = []
    for j in range(len(idx)):
        tol = factor * b.mean_range(idx[j] + window)
        for lag in range(1, lookback + 1):
            i = j - lag
            if i < 0:
                break
            if abs(price[i] - price[j]) > tol:
                continue
            between = range(idx[i] + 1, idx[j])
            if high:
                level = max(price[i], price[j])
                ok = all(b.h[k] <= level for k in between)
            else:
                level = min(price[i], price[j])
                ok = all(b.lo[k] >= level for k in between)
            if ok:
                out.append((idx[i], idx[j], level))
                break
    return out

