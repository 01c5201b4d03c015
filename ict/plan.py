"""Trade-plan mode: the plan schema, its validation, and a deterministic plan proposal.

A plan has the keys timeframe, horizon, strategy, entry, stop, targets, confluence and risk
(plus an optional direction). Validation rejects, with every reason: a stop on the wrong side
of the entry, targets on the wrong side of the entry, targets pointing against the bias, a
timeframe other than the enforced one, and non-numeric or non-positive prices.
`propose_plan` builds a plan from an analysis (and optionally the bias stack) for the offline
analyst: entry in the best aligned order block or FVG, stop beyond it, targets at unswept
liquidity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from ict.errors import PlanValidationError
from ict.stack import BiasStack, EntryZone, best_entry_zone
from ict.timeframes import get_timeframe, normalize_interval, timeframe_for_interval
from ict.types import Bias, ICTAnalysis, JSONMixin

PLAN_KEYS: Final = ("timeframe", "horizon", "strategy", "entry", "stop", "targets",
                    "confluence", "risk")

_PLAN_INTENT: Final = re.compile(
    r"^\s*/plan\b|trade\s*plan|plan\s+(a|the|my)\s+trade|entry\s*(,|and|/|&)\s*stop|"
    r"stop[\s-]*loss|take[\s-]*profit|\btp\s*/\s*sl\b|\bsl\s*/\s*tp\b|"
    r"交易计划|止损|止盈|入场",
    re.IGNORECASE,
)


def detect_plan_intent(message: str) -> bool:
    """True for the `/plan` command or a message asking for entry/stop/targets."""
    return bool(_PLAN_INTENT.search(message or ""))


@dataclass(slots=True)
class PlanRisk(JSONMixin):
    risk_per_unit: float
    reward_risk: float
    risk_percent: float | None
    notes: str


def _price(x: float) -> str:
    """A price in a plan's words, whole (not `:g`'s six digits: 1716.165, not 1716.16), so
    that whoever puts the plan on a tick can round the words as it rounds the numbers."""
    return f"{round(x, 8):.15g}"


@dataclass(slots=True)
class TradePlan(JSONMixin):
    timeframe: str
    horizon: str
    strategy: str
    direction: Literal["long", "short"]
    entry: float
    stop: float
    targets: tuple[float, ...]
    confluence: tuple[str, ...]
    risk: PlanRisk


@dataclass(slots=True)
class PlanCheck(JSONMixin):
    ok: bool
    reasons: tuple[str, ...]
    plan: TradePlan | None


@dataclass(slots=True)
class PlanProposal(JSONMixin):
    plan: TradePlan | None
    reason: str | None
    zone: EntryZone | None


_DIRECTIONS: Final = {"long": "long", "buy": "long", "bullish": "long",
                      "short": "short", "sell": "short", "bearish": "short"}


def _number(value: Any, name: str, reasons: list[str]) -> float | None:
    if isinstance(value, bool):
        reasons.append(f"{name} must be a number, not {value!r}")
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        reasons.append(f"{name} must be a number, not {value!r}")
        return None
    if not math.isfinite(out) or out <= 0:
        reasons.append(f"{name} must be a positive finite price, not {value!r}")
        return None
    return out


def _parse(data: Mapping[str, Any], reasons: list[str]) -> TradePlan | None:
    missing = [k for k in PLAN_KEYS if k not in data]
    if missing:
        reasons.append(f"missing key(s): {', '.join(missing)}")
        return None
    entry = _number(data["entry"], "entry", reasons)
    stop = _number(data["stop"], "stop", reasons)
    raw_targets = data["targets"]
    if isinstance(raw_targets, (int, float, str)):
        raw_targets = [raw_targets]
    targets: list[float] = []
    if not isinstance(raw_targets, (list, tuple)) or not raw_targets:
        reasons.append("targets must be a non-empty list of prices")
    else:
        for pos, t in enumerate(raw_targets, start=1):
            value = _number(t, f"target {pos}", reasons)
            if value is not None:
                targets.append(value)
    conf = data["confluence"]
    if isinstance(conf, str):
        conf = [conf]
    if not isinstance(conf, (list, tuple)):
        reasons.append("confluence must be a list of reasons")
        conf = []
    text = {k: data[k] for k in ("timeframe", "horizon", "strategy")}
    for key, value in text.items():
        if not isinstance(value, str) or not value.strip():
            reasons.append(f"{key} must be a non-empty string")
    if entry is None or stop is None or reasons:
        return None
    if stop == entry:
        reasons.append("stop equals the entry")
        return None
    raw_dir = data.get("direction")
    if raw_dir is not None:
        direction = _DIRECTIONS.get(str(raw_dir).strip().lower())
        if direction is None:
            reasons.append(f"direction must be long or short, not {raw_dir!r}")
            return None
    else:
        direction = "long" if stop < entry else "short"
    risk_unit = abs(entry - stop)
    first = targets[0] if targets else entry
    rr = round(abs(first - entry) / risk_unit, 2)
    risk = data["risk"]
    pct: float | None = None
    notes = ""
    if isinstance(risk, Mapping):
        raw_pct = risk.get("risk_percent", risk.get("percent"))
        if raw_pct is not None:
            try:
                pct = float(raw_pct)
            except (TypeError, ValueError):
                reasons.append(f"risk percent must be a number, not {raw_pct!r}")
        notes = str(risk.get("notes", ""))
    elif isinstance(risk, (int, float)) and not isinstance(risk, bool):
        pct = float(risk)
    else:
        notes = str(risk)
    return TradePlan(
        str(data["timeframe"]).strip(), str(data["horizon"]).strip(),
        str(data["strategy"]).strip(), direction,  # type: ignore[arg-type]
        entry, stop, tuple(targets), tuple(str(c) for c in conf),
        PlanRisk(risk_unit, rr, pct, notes),
    )


def _same_timeframe(given: str, enforced: str) -> bool:
    def canon(value: str) -> str:
        try:
            return get_timeframe(value).interval
        except ValueError:
            try:
                return normalize_interval(value)
            except ValueError:
                return value.strip().lower()
    return canon(given) == canon(enforced)


def validate_plan(
    plan: TradePlan | Mapping[str, Any],
    *,
    bias: Bias | None = None,
    timeframe: str | None = None,
) -> PlanCheck:
    """Check a plan (a `TradePlan` or the model's JSON object); collect every failed rule."""
    reasons: list[str] = []
    parsed = plan if isinstance(plan, TradePlan) else (
        _parse(plan, reasons) if isinstance(plan, Mapping) else None)
    if parsed is None:
        if not reasons:
            reasons.append("a plan must be a JSON object")
        return PlanCheck(False, tuple(reasons), None)
    long = parsed.direction == "long"
    word = "long" if long else "short"
    if long and parsed.stop >= parsed.entry:
        reasons.append(f"stop {parsed.stop:g} is not below the entry {parsed.entry:g} of a "
                       "long plan")
    if not long and parsed.stop <= parsed.entry:
        reasons.append(f"stop {parsed.stop:g} is not above the entry {parsed.entry:g} of a "
                       "short plan")
    for t in parsed.targets:
        if (long and t <= parsed.entry) or (not long and t >= parsed.entry):
            reasons.append(f"target {t:g} is on the wrong side of the entry {parsed.entry:g} "
                           f"for a {word} plan")
    if bias == "bullish" and not long:
        reasons.append("targets point down (short plan) but the bias is bullish")
    if bias == "bearish" and long:
        reasons.append("targets point up (long plan) but the bias is bearish")
    if timeframe is not None and not _same_timeframe(parsed.timeframe, timeframe):
        reasons.append(f"plan timeframe {parsed.timeframe!r} is not the enforced "
                       f"timeframe {timeframe!r}")
    return PlanCheck(not reasons, tuple(reasons), parsed)


def parse_plan(
    data: TradePlan | Mapping[str, Any],
    *,
    bias: Bias | None = None,
    timeframe: str | None = None,
) -> TradePlan:
    """Validated plan, or PlanValidationError listing every reason."""
    check = validate_plan(data, bias=bias, timeframe=timeframe)
    if not check.ok or check.plan is None:
        raise PlanValidationError(list(check.reasons))
    return check.plan


def _targets(a: ICTAnalysis, long: bool, entry: float, risk: float) -> list[tuple[float, str]]:
    cands: list[tuple[float, str]] = []
    liq = a.liquidity
    pools = liq.equal_highs if long else liq.equal_lows
    cands += [(p.level, "equal highs" if long else "equal lows") for p in pools
              if p.swept_index is None]
    cands += [(lv.price, lv.name) for lv in a.levels.all()
              if lv.swept_index is None and lv.name.endswith("H") == long]
    ext = liq.external_high if long else liq.external_low
    if ext is not None and ext.swept_index is None:
        cands.append((ext.price, "external high" if long else "external low"))
    dr = a.dealing_range
    if dr is not None:
        cands.append((dr.high if long else dr.low, "dealing-range high" if long
                      else "dealing-range low"))
    far = [(p, n) for p, n in cands if (p >= entry + risk if long else p <= entry - risk)]
    far.sort(key=lambda x: x[0], reverse=not long)
    out: list[tuple[float, str]] = []
    for price, name in far:
        if all(abs(price - q) > 1e-12 for q, _ in out):
            out.append((price, name))
        if len(out) == 3:
            break
    return out


def propose_plan(
    analysis: ICTAnalysis,
    *,
    stack: BiasStack | None = None,
    timeframe: str | None = None,
) -> PlanProposal:
    """A deterministic plan from the analysis (and the stack's bias and zone when given)."""
    bias = stack.bias if stack is not None else analysis.structure.bias
    if bias == "neutral":
        return PlanProposal(None, "no directional bias: no plan", None)
    if stack is not None and stack.counter_trend:
        return PlanProposal(None, "the idea is counter-trend to the HTF draw: no plan", None)
    zone = stack.entry_zone if stack is not None and stack.entry_zone is not None else \
        best_entry_zone(analysis, bias)
    if zone is None:
        return PlanProposal(None, f"no order block or FVG aligned with the {bias} bias", None)
    long = bias == "bullish"
    last = analysis.meta.last_bar.close
    buffer = 0.25 * analysis.meta.average_range
    if long:
        entry = min(zone.ce, last)
        stop = zone.bottom - buffer
    else:
        entry = max(zone.ce, last)
        stop = zone.top + buffer
    risk = abs(entry - stop)
    if risk <= 0:
        return PlanProposal(None, "zero risk distance", zone)
    found = _targets(analysis, long, entry, risk)
    confluence = [f"{bias} structure", f"entry zone: {zone.side} "
                  f"{zone.kind.replace('_', ' ')} {_price(zone.bottom)}-{_price(zone.top)} "
                  f"(CE {_price(zone.ce)})"]
    last_ev = analysis.structure.events[-1] if analysis.structure.events else None
    if last_ev is not None:
        confluence.append(f"last {last_ev.kind} {last_ev.direction} at "
                          f"{last_ev.confirmed_at.isoformat()}"
                          + (" (displaced)" if last_ev.displaced else ""))
    dr = analysis.dealing_range
    if dr is not None:
        confluence.append(f"{dr.zone} ({dr.pd_percent:.0f}% of the dealing range)")
    if stack is not None:
        confluence.append(f"stack grade {stack.grade} ({stack.score}), {stack.status}")
        if stack.kill_zone:
            confluence.append(f"kill zone {stack.kill_zone}")
    if found:
        targets = [p for p, _ in found]
        confluence += [f"target {_price(p)}: {n}" for p, n in found]
    else:
        targets = [entry + 2 * risk if long else entry - 2 * risk]
        confluence.append("no resting liquidity beyond 1R: 2R measured target")
    key = timeframe or timeframe_for_interval(analysis.meta.interval).key
    tf = get_timeframe(key)
    strategy = ("order-block retest" if zone.kind == "order_block" else "FVG CE fill") + (
        " continuation" if last_ev is not None and last_ev.kind == "BOS" else " reversal")
    data = {
        "timeframe": tf.key, "horizon": tf.horizon, "strategy": strategy,
        "direction": "long" if long else "short", "entry": entry, "stop": stop,
        "targets": targets, "confluence": confluence,
        "risk": {"risk_percent": 1.0, "notes": "risk at most 1% of equity; invalid on a close "
                 "beyond the stop"},
    }
    check = validate_plan(data, bias=bias, timeframe=tf.key)
    if not check.ok:
        return PlanProposal(None, "; ".join(check.reasons), zone)
    return PlanProposal(check.plan, None, zone)


__all__ = [
    "PLAN_KEYS", "PlanCheck", "PlanProposal", "PlanRisk", "TradePlan",
    "detect_plan_intent", "parse_plan", "propose_plan", "validate_plan",
]
