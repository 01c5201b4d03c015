"""The intraday bias stack (Daily -> 4H -> 15m -> 5m -> 1m) and its grade.

1. Daily/4H draw: the higher-timeframe direction (daily structure, else 4H) and the nearest
   unswept liquidity it is drawing to (previous day/week/month extremes, external range
   extremes, equal highs/lows). An idea against it is counter-trend and loses the grade.
2. 15m session bias: only the 15m chart sets the intraday bias, and only a displaced body-close
   BOS/ChoCH moves it; its dealing range should be in discount for longs, premium for shorts.
3. 5m refiner: an unbroken order block or unfilled FVG on the bias side (with its CE) is the
   entry zone; 5m structure pointing the other way costs points.
4. 1m execution: a 1m market-structure shift in the bias direction, after the zone formed,
   from a 1m swing inside the zone. Without it the status is `wait`.
5. Session fit: NY AM/PM preferred, London acceptable (for the NY template), else off.

Score (0-100): HTF draw 25 (10 when the HTF is neutral, 0 when counter-trend), 15m displaced
bias 20, 15m premium/discount alignment 10, 5m zone 20, 5m structure agreement 5, 1m MSS 10,
session 10 preferred / 5 acceptable. Grade A needs 80+ without counter-trend, B 60+, else C;
counter-trend ideas are never above B. Status is `ready` only with a bias, a zone and the MSS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

import pandas as pd

from ict.analyze import analyze
from ict.errors import ICTInputError
from ict.sessions import kill_zone_at, session_fit
from ict.timeframes import STACK_KEYS, TIMEFRAMES, bar_end, normalize_interval, resample
from ict.types import (
    Bias,
    ICTAnalysis,
    ICTOptions,
    JSONMixin,
    KillZoneName,
    SessionFit,
    SessionTemplate,
    Side,
    StructureEvent,
)

STACK_ORDER = ("daily", "4h", "15min", "5min", "1min")
_LABEL = {"daily": "Daily", "4h": "4H", "15min": "15m", "5min": "5m", "1min": "1m"}


@dataclass(slots=True)
class DrawTarget(JSONMixin):
    """Where the higher timeframe is drawing price: a liquidity level beyond the last close."""

    interval: str
    name: str
    price: float


@dataclass(slots=True)
class EntryZone(JSONMixin):
    kind: Literal["order_block", "fvg"]
    side: Side
    top: float
    bottom: float
    ce: float
    confirmed_at: datetime
    known_at: datetime
    score: float | None


@dataclass(slots=True)
class ChecklistItem(JSONMixin):
    key: str
    label: str
    passed: bool
    detail: str


@dataclass(slots=True)
class BiasStack(JSONMixin):
    bias: Bias
    grade: Literal["A", "B", "C"]
    score: int
    counter_trend: bool
    htf_bias: Bias
    htf_draw: DrawTarget | None
    session_fit: SessionFit
    kill_zone: KillZoneName | None
    entry_zone: EntryZone | None
    mss: StructureEvent | None
    needs_one_minute_confirmation: bool
    status: Literal["wait", "ready"]
    wait_reason: str | None
    checklist: tuple[ChecklistItem, ...]
    rationale: tuple[str, ...]
    timeframe_bias: dict[str, Bias]


@dataclass(slots=True)
class StackResult(JSONMixin):
    analyses: dict[str, ICTAnalysis]
    stack: BiasStack


def _normalize(analyses: Mapping[str, ICTAnalysis]) -> dict[str, ICTAnalysis]:
    out: dict[str, ICTAnalysis] = {}
    for key, value in analyses.items():
        iv = normalize_interval(key)
        if iv not in STACK_ORDER:
            raise ICTInputError(f"{key!r} is not a bias-stack timeframe "
                                f"({', '.join(STACK_ORDER)})")
        out[iv] = value
    return out


def _last_close(found: dict[str, ICTAnalysis]) -> float | None:
    for iv in reversed(STACK_ORDER):
        if iv in found:
            return found[iv].meta.last_bar.close
    return None


def _draw(found: dict[str, ICTAnalysis], direction: Bias, price: float) -> DrawTarget | None:
    """Nearest unswept higher-timeframe liquidity beyond `price` in `direction`."""
    best: DrawTarget | None = None
    up = direction == "bullish"
    for iv in ("daily", "4h"):
        a = found.get(iv)
        if a is None:
            continue
        cands: list[tuple[str, float, bool]] = [
            (lvl.name, lvl.price, lvl.swept_index is None) for lvl in a.levels.all()
            if lvl.name.endswith("H") == up
        ]
        ext = a.liquidity.external_high if up else a.liquidity.external_low
        if ext is not None:
            cands.append(("external high" if up else "external low", ext.price,
                          ext.swept_index is None))
        pools = a.liquidity.equal_highs if up else a.liquidity.equal_lows
        for pool in pools:
            cands.append(("equal highs" if up else "equal lows", pool.level,
                          pool.swept_index is None))
        for name, level, unswept in cands:
            if not unswept or (up and level <= price) or (not up and level >= price):
                continue
            if best is None or abs(level - price) < abs(best.price - price):
                best = DrawTarget(iv, name, level)
    return best


def _session_bias(events: tuple[StructureEvent, ...]) -> tuple[Bias, StructureEvent | None]:
    for ev in reversed(events):
        if ev.displaced:
            return ("bullish" if ev.direction == "up" else "bearish"), ev
    return "neutral", None


def _known(label: datetime, a: ICTAnalysis) -> datetime:
    """When a bar labelled `label` closed (its event became knowable)."""
    end: datetime = bar_end(pd.Timestamp(label), a.meta.interval).to_pydatetime()
    return end


def best_entry_zone(a: ICTAnalysis, bias: Bias) -> EntryZone | None:
    """The best-scoring unbroken order block on the bias side not above (below) the last close,
    else the latest unfilled FVG there."""
    side: Side = "bullish" if bias == "bullish" else "bearish"
    price = a.meta.last_bar.close
    obs = [b for b in a.order_blocks if b.side == side and b.state != "broken"
           and (b.bottom <= price if side == "bullish" else b.top >= price)]
    if obs:
        ob = max(obs, key=lambda b: (b.score, b.confirmed_index))
        return EntryZone("order_block", side, ob.top, ob.bottom, (ob.top + ob.bottom) / 2,
                         ob.confirmed_at, _known(ob.confirmed_at, a), ob.score)
    gaps = [g for g in a.fvgs if g.side == side and g.state != "filled"
            and (g.bottom <= price if side == "bullish" else g.top >= price)]
    if gaps:
        g = max(gaps, key=lambda g: g.confirmed_index)
        return EntryZone("fvg", side, g.top, g.bottom, g.ce, g.confirmed_at,
                         _known(g.confirmed_at, a), None)
    return None


def _mss(a: ICTAnalysis, zone: EntryZone, bias: Bias) -> StructureEvent | None:
    """Latest 1m shift in the bias direction launched from a 1m swing inside the zone."""
    direction = "up" if bias == "bullish" else "down"
    pad = 0.1 * (zone.top - zone.bottom)
    lo, hi = zone.bottom - pad, zone.top + pad
    kind = "low" if bias == "bullish" else "high"
    touches = [s for s in a.swings.minor if s.kind == kind and lo <= s.price <= hi
               and s.time >= zone.known_at]
    if not touches:
        return None
    first_touch = min(s.confirmed_index for s in touches)
    for ev in reversed(a.internal_structure.events):
        if ev.direction == direction and ev.confirmed_index > first_touch:
            return ev
    return None


def bias_stack(
    analyses: Mapping[str, ICTAnalysis],
    *,
    session: SessionTemplate = "NY",
    as_of: datetime | None = None,
) -> BiasStack:
    """Grade the multi-timeframe picture. Missing timeframes fail their checklist items."""
    found = _normalize(analyses)
    check: list[ChecklistItem] = []
    why: list[str] = []
    score = 0
    tf_bias: dict[str, Bias] = {iv: found[iv].structure.bias for iv in STACK_ORDER
                                if iv in found}
    price = _last_close(found)

    # 1. higher-timeframe draw
    daily_b = tf_bias.get("daily", "neutral")
    h4_b = tf_bias.get("4h", "neutral")
    htf: Bias = daily_b if daily_b != "neutral" else h4_b
    draw = _draw(found, htf, price) if htf != "neutral" and price is not None else None
    if daily_b != "neutral" and h4_b != "neutral" and daily_b != h4_b:
        why.append(f"4H structure is {h4_b} against the {daily_b} daily; daily leads")

    # 2. 15m session bias
    m15 = found.get("15min")
    bias: Bias = "neutral"
    setter: StructureEvent | None = None
    if m15 is not None:
        bias, setter = _session_bias(m15.structure.events)
    if setter is not None:
        score += 20
        why.append(f"15m {setter.kind} {setter.direction} at {setter.confirmed_at.isoformat()} "
                   f"with displacement {setter.displacement:.1f}x sets a {bias} intraday bias")
    check.append(ChecklistItem(
        "session_bias", "15m displaced BOS/ChoCH sets the bias", setter is not None,
        "no 15m analysis" if m15 is None else (
            f"{bias} from {setter.kind} {setter.direction}" if setter is not None
            else "no displaced 15m BOS/ChoCH yet")))

    counter = bias != "neutral" and htf != "neutral" and bias != htf
    if bias != "neutral" and htf == bias:
        score += 25
        target = f" toward {draw.name} {draw.price:g} ({_LABEL[draw.interval]})" if draw else ""
        why.append(f"HTF ({'daily' if daily_b != 'neutral' else '4H'}) is {htf}{target}")
    elif bias != "neutral" and htf == "neutral":
        score += 10
        why.append("HTF structure is neutral: no draw to lean on")
    elif counter:
        why.append(f"counter-trend: 15m bias {bias} fights the {htf} HTF draw")
    check.insert(0, ChecklistItem(  # the checklist reads top-down: HTF first
        "htf_draw", "Daily/4H draw agrees with the idea", bias != "neutral" and htf == bias,
        f"HTF {htf}" + (f", draw {draw.name} {draw.price:g}" if draw else "")))

    # 15m premium / discount
    pd_ok = False
    pd_detail = "no 15m dealing range"
    if m15 is not None and m15.dealing_range is not None:
        dr = m15.dealing_range
        pd_ok = (bias == "bullish" and dr.zone == "discount") or (
            bias == "bearish" and dr.zone == "premium")
        pd_detail = f"{dr.zone} ({dr.pd_percent:.0f}% of the range)"
        if pd_ok:
            score += 10
            why.append(f"15m price is in {dr.zone} ({dr.pd_percent:.0f}%), right for a "
                       f"{'long' if bias == 'bullish' else 'short'}")
    check.append(ChecklistItem("dealing_range", "15m premium/discount fits the direction",
                               pd_ok, pd_detail))

    # 3. 5m entry zone
    m5 = found.get("5min")
    zone = best_entry_zone(m5, bias) if m5 is not None and bias != "neutral" else None
    if zone is not None:
        score += 20
        why.append(f"5m {zone.side} {zone.kind.replace('_', ' ')} {zone.bottom:g}-{zone.top:g} "
                   f"(CE {zone.ce:g}) is the entry zone")
    check.append(ChecklistItem(
        "entry_zone", "5m OB/FVG aligned with the bias", zone is not None,
        "no 5m analysis" if m5 is None else (
            f"{zone.kind} {zone.bottom:g}-{zone.top:g}" if zone else "no aligned zone")))
    m5_agrees = m5 is not None and bias != "neutral" and m5.structure.bias == bias
    if m5_agrees:
        score += 5
    elif m5 is not None and bias != "neutral" and m5.structure.bias != "neutral":
        why.append(f"5m structure is {m5.structure.bias}, against the bias")
    check.append(ChecklistItem("five_minute_structure", "5m structure agrees", m5_agrees,
                               f"5m {m5.structure.bias}" if m5 is not None else "no 5m analysis"))

    # 4. 1m MSS inside the zone
    m1 = found.get("1min")
    mss = _mss(m1, zone, bias) if m1 is not None and zone is not None else None
    if mss is not None:
        score += 10
        why.append(f"1m {mss.kind} {mss.direction} at {mss.confirmed_at.isoformat()} confirms "
                   "the shift inside the zone")
    check.append(ChecklistItem(
        "one_minute_mss", "1m MSS inside the 5m zone", mss is not None,
        "no 1m analysis" if m1 is None else ("confirmed" if mss else "not yet")))

    # 5. session fit. `as_of` is a bar's end, exclusive: the zone is the one the last traded
    # instant falls in, as the session line reads it from the last bar (a 14:45 15m bar ends
    # at 15:00, when the afternoon session has closed; it traded inside it)
    moment = as_of - timedelta(microseconds=1) if as_of is not None else None
    if moment is None:
        for iv in reversed(STACK_ORDER):
            if iv in found:
                moment = found[iv].meta.last_bar.time
                break
    zone_name = kill_zone_at(moment, session) if moment is not None else None
    fit = session_fit(zone_name, session)
    score += {"preferred": 10, "acceptable": 5, "off": 0}[fit]
    if fit == "off":
        why.append("outside the kill zones: reduced session fit")
    check.append(ChecklistItem("session_fit", "Inside a preferred kill zone",
                               fit == "preferred", f"{zone_name or 'no kill zone'} ({fit})"))

    grade: Literal["A", "B", "C"] = "C"
    if score >= 80 and not counter:
        grade = "A"
    elif score >= 60:
        grade = "B"
    wait_reason: str | None = None
    if m15 is None:
        wait_reason = "Waiting for a 15m analysis"
    elif bias == "neutral":
        wait_reason = "Waiting for a displaced 15m BOS/ChoCH to set the intraday bias"
    elif zone is None:
        wait_reason = f"Waiting for a 5m OB/FVG aligned with the {bias} bias"
    elif mss is None:
        wait_reason = "Waiting for 1m MSS inside zone"
    return BiasStack(
        bias=bias, grade=grade, score=score, counter_trend=counter, htf_bias=htf,
        htf_draw=draw, session_fit=fit, kill_zone=zone_name, entry_zone=zone, mss=mss,
        needs_one_minute_confirmation=mss is None,
        status="ready" if wait_reason is None else "wait", wait_reason=wait_reason,
        checklist=tuple(check), rationale=tuple(why), timeframe_bias=tf_bias,
    )


def analyze_stack(
    *,
    minute: pd.DataFrame,
    daily: pd.DataFrame,
    hourly: pd.DataFrame | None = None,
    session: SessionTemplate = "NY",
    options: ICTOptions | Mapping[str, Any] | None = None,
    as_of: datetime | None = None,
) -> StackResult:
    """Analyse the five stack timeframes from their source bars and grade them.

    Per the timeframe table: 1m, 5m and 15m come from `minute` bars, 4H from `hourly` bars
    (or from `minute` when no hourly bars are given), Daily from `daily` bars; each analysis
    uses its row's lookback. Only as many source bars as the lookback needs are resampled.
    """
    base = ICTOptions.from_value(options).to_dict()
    base["as_of"] = as_of
    if hourly is None:
        hourly = resample(_tail(minute, TIMEFRAMES["4H"].lookback_bars * 240 * 2), "60min")
    sources: dict[str, Callable[[], pd.DataFrame]] = {
        "daily": lambda: daily,
        "4h": lambda: resample(_tail(hourly, TIMEFRAMES["4H"].lookback_bars * 4 * 2), "4h"),
        "15min": lambda: resample(_tail(minute, TIMEFRAMES["15m"].lookback_bars * 15 * 2),
                                  "15min"),
        "5min": lambda: resample(_tail(minute, TIMEFRAMES["5m"].lookback_bars * 5 * 2), "5min"),
        "1min": lambda: minute,
    }
    analyses: dict[str, ICTAnalysis] = {}
    for iv in STACK_ORDER:
        opts = dict(base)
        opts["lookback_bars"] = TIMEFRAMES[STACK_KEYS[iv]].lookback_bars
        analyses[iv] = analyze(sources[iv](), interval=iv, session=session, options=opts)
    return StackResult(analyses, bias_stack(analyses, session=session, as_of=as_of))


def _tail(bars: pd.DataFrame, rows: int) -> pd.DataFrame:
    return bars.iloc[-rows:] if len(bars) > rows else bars
