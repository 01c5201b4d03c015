"""Result types of the ICT analyzer: plain dataclasses with a JSON-ready `to_dict()`.

The result dataclasses are plain (not frozen, for construction speed): treat them as read-only.
Every event carries `confirmed_index` / `confirmed_at`: the bar whose *close* made it knowable
(times are bar labels, i.e. bar open times). Fields named `*_index` / `*_at` that describe later
state changes (mitigation, fill, sweep) hold the first bar at which that change happened, or
None. Fields documented as "as of the last bar" (state, age, score, validity) are the only ones
that depend on how far the data reaches; everything else about an event is fixed once it is
confirmed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import date, datetime
from typing import Any, ClassVar, Literal

import numpy as np

from ict.errors import ICTInputError

Bias = Literal["bullish", "bearish", "neutral"]
Side = Literal["bullish", "bearish"]
Direction = Literal["up", "down"]
SwingKind = Literal["high", "low"]
StructureKind = Literal["BOS", "ChoCH"]
ZoneType = Literal["main", "sub"]
Refinement = Literal["defensive", "aggressive"]
FVGMode = Literal["very_aggressive", "aggressive", "defensive", "very_defensive"]
LiquidityMode = Literal["static", "dynamic"]
SessionTemplate = Literal["NY", "LDN", "CN"]  # CN: the Shanghai/Shenzhen exchange sessions
KillZoneName = Literal["london", "ny_am", "ny_pm", "asia", "cn_am", "cn_pm"]
SessionFit = Literal["preferred", "acceptable", "off"]

_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def to_jsonable(value: object) -> Any:
    """Convert dataclasses, datetimes, numpy scalars and containers into JSON-ready values.

    Non-finite floats become None so the output is strict JSON.
    """
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        names = _FIELD_NAMES.get(cls)
        if names is None:
            names = tuple(f.name for f in fields(value))
            _FIELD_NAMES[cls] = names
        return {name: to_jsonable(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    raise TypeError(f"cannot serialise {type(value).__name__}")


class JSONMixin:
    """`to_dict()` for result dataclasses."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        out = to_jsonable(self)
        assert isinstance(out, dict)
        return out


# ---------------------------------------------------------------------------------------------
# options


_FVG_MODES = ("very_aggressive", "aggressive", "defensive", "very_defensive")


@dataclass(frozen=True, slots=True, kw_only=True)
class ICTOptions(JSONMixin):
    """Tuning knobs of `analyze`; every field has a sensible default.

    `as_of` is the wall-clock time of the analysis. The analyzer never reads the clock (it is
    pure), so without `as_of` every bar is taken as closed. With it, a last bar that has not
    closed by `as_of` is dropped unless `include_current_bar` is set.
    """

    symbol: str | None = None
    minor_window: int = 2
    major_window: int = 5
    ob_refinement: Refinement = "defensive"
    fvg_mode: FVGMode = "aggressive"
    validity_period: int = 100
    liquidity_mode: LiquidityMode = "dynamic"
    equal_tolerance: float = 0.1
    displacement_factor: float = 1.5
    range_window: int = 20
    include_current_bar: bool = False
    as_of: datetime | None = None
    lookback_bars: int | None = None
    max_session_windows: int = 10

    def __post_init__(self) -> None:
        problems: list[str] = []
        for name in ("minor_window", "major_window", "validity_period", "range_window"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                problems.append(f"{name} must be a positive integer, got {value!r}")
        if not problems and self.major_window < self.minor_window:
            problems.append("major_window must be at least minor_window")
        if self.ob_refinement not in ("defensive", "aggressive"):
            problems.append(f"ob_refinement must be defensive or aggressive, "
                            f"got {self.ob_refinement!r}")
        if self.fvg_mode not in _FVG_MODES:
            problems.append(f"fvg_mode must be one of {', '.join(_FVG_MODES)}, "
                            f"got {self.fvg_mode!r}")
        if self.liquidity_mode not in ("static", "dynamic"):
            problems.append(f"liquidity_mode must be static or dynamic, "
                            f"got {self.liquidity_mode!r}")
        for name in ("equal_tolerance", "displacement_factor"):
            value = getattr(self, name)
            if (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value) or value < 0):
                problems.append(f"{name} must be a non-negative number, got {value!r}")
        if self.lookback_bars is not None and (
            isinstance(self.lookback_bars, bool) or not isinstance(self.lookback_bars, int)
            or self.lookback_bars < 1
        ):
            problems.append(f"lookback_bars must be a positive integer, got {self.lookback_bars!r}")
        if (isinstance(self.max_session_windows, bool)
                or not isinstance(self.max_session_windows, int)
                or self.max_session_windows < 0):
            problems.append("max_session_windows must be a non-negative integer")
        if self.as_of is not None and (
            not isinstance(self.as_of, datetime) or self.as_of.tzinfo is None
        ):
            problems.append("as_of must be a timezone-aware datetime")
        if problems:
            raise ICTInputError("invalid ICT options: " + "; ".join(problems))

    @classmethod
    def from_value(cls, value: ICTOptions | Mapping[str, Any] | None) -> ICTOptions:
        """Accept an `ICTOptions`, a mapping of its fields (e.g. from JSON) or None."""
        if value is None:
            return cls()
        if isinstance(value, ICTOptions):
            return value
        if not isinstance(value, Mapping):
            raise ICTInputError(f"options must be ICTOptions or a mapping, not "
                                f"{type(value).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ICTInputError(f"unknown ICT option(s): {', '.join(map(str, unknown))}; "
                                f"known: {', '.join(sorted(known))}")
        kwargs = dict(value)
        as_of = kwargs.get("as_of")
        if isinstance(as_of, str):
            try:
                kwargs["as_of"] = datetime.fromisoformat(as_of)
            except ValueError as exc:
                raise ICTInputError(f"as_of is not an ISO timestamp: {as_of!r}") from exc
        return cls(**kwargs)


# ---------------------------------------------------------------------------------------------
# events


@dataclass(slots=True)
class BarSummary(JSONMixin):
    time: datetime
    open: float
    high: float
    low: float
    close: float
    volume: float


@dataclass(slots=True)
class Swing(JSONMixin):
    """A pivot: the extreme of `window` bars either side; knowable `window` bars later."""

    kind: SwingKind
    index: int
    time: datetime
    price: float
    confirmed_index: int
    confirmed_at: datetime
    window: int


@dataclass(slots=True)
class Swings(JSONMixin):
    major: tuple[Swing, ...]
    minor: tuple[Swing, ...]


@dataclass(slots=True)
class StructureEvent(JSONMixin):
    """A body close beyond the most recent swing level.

    `break_index` is the first bar whose wick crossed the level, `confirmed_index` the first bar
    that closed beyond it (the event is knowable at that close). BOS continues the prior
    direction (or starts one); ChoCH reverses it. `displacement` is the confirming candle's body
    over the mean body of the `range_window` bars before it.
    """

    kind: StructureKind
    direction: Direction
    level: float
    swing_index: int
    swing_time: datetime
    break_index: int
    break_time: datetime
    confirmed_index: int
    confirmed_at: datetime
    close: float
    displacement: float
    displaced: bool


@dataclass(slots=True)
class Structure(JSONMixin):
    """Market structure on one swing set (major: `structure`, minor: `internal_structure`)."""

    swings: Literal["major", "minor"]
    window: int
    events: tuple[StructureEvent, ...]
    bias: Bias
    last_bos: StructureEvent | None
    last_choch: StructureEvent | None


@dataclass(slots=True)
class OrderBlock(JSONMixin):
    """The last opposite candle before the impulse leg that broke structure.

    `state`, `age_bars`, `is_valid` and `score` are as of the last analysed bar; `mitigated_*`
    is the first later bar that traded into the zone, `broken_*` the first close through it.
    """

    side: Side
    zone_type: ZoneType
    refinement: Refinement
    top: float
    bottom: float
    origin_index: int
    origin_time: datetime
    event_kind: StructureKind
    level: float
    confirmed_index: int
    confirmed_at: datetime
    mitigated_index: int | None
    mitigated_at: datetime | None
    broken_index: int | None
    broken_at: datetime | None
    state: Literal["valid", "mitigated", "broken"]
    age_bars: int
    is_valid: bool
    score: float

    AS_OF_FIELDS: ClassVar[tuple[str, ...]] = ("state", "age_bars", "is_valid", "score")
    TRANSITIONS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("mitigated_index", "mitigated_at"), ("broken_index", "broken_at"))


@dataclass(slots=True)
class FairValueGap(JSONMixin):
    """Three-candle imbalance around candle `index` (the middle one); knowable at `index + 1`.

    Bullish: low[index+1] > high[index-1], gap [high[index-1], low[index+1]].
    Bearish: high[index+1] < low[index-1], gap [high[index+1], low[index-1]].
    `mitigated_*`: first later candle body entering the gap; `filled_*`: first later candle body
    reaching its far side. `state` is as of the last analysed bar.
    """

    side: Side
    index: int
    time: datetime
    top: float
    bottom: float
    ce: float
    width: float
    relative_width: float
    confirmed_index: int
    confirmed_at: datetime
    mitigated_index: int | None
    mitigated_at: datetime | None
    filled_index: int | None
    filled_at: datetime | None
    state: Literal["open", "partially_filled", "filled"]

    AS_OF_FIELDS: ClassVar[tuple[str, ...]] = ("state",)
    TRANSITIONS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("mitigated_index", "mitigated_at"), ("filled_index", "filled_at"))


@dataclass(slots=True)
class LiquidityPool(JSONMixin):
    """Equal highs (buy-side) or equal lows (sell-side): two minor swings within tolerance.

    Pools chain: a third equal high joins the pool of the previous pair (`pool_id` is the index
    of the pool's first swing, `touches` the number of swings in the chain so far).
    """

    kind: Literal["EQH", "EQL"]
    side: Literal["buy", "sell"]
    level: float
    first_index: int
    first_time: datetime
    second_index: int
    second_time: datetime
    pool_id: int
    touches: int
    tolerance: float
    confirmed_index: int
    confirmed_at: datetime
    swept_index: int | None
    swept_at: datetime | None

    AS_OF_FIELDS: ClassVar[tuple[str, ...]] = ()
    TRANSITIONS: ClassVar[tuple[tuple[str, str], ...]] = (("swept_index", "swept_at"),)


@dataclass(slots=True)
class ExternalLiquidity(JSONMixin):
    """A range extreme resting beyond price (as of the last bar)."""

    side: Literal["buy", "sell"]
    price: float
    index: int
    time: datetime
    swept_index: int | None
    swept_at: datetime | None


@dataclass(slots=True)
class Liquidity(JSONMixin):
    mode: LiquidityMode
    tolerance_factor: float
    equal_highs: tuple[LiquidityPool, ...]
    equal_lows: tuple[LiquidityPool, ...]
    external_high: ExternalLiquidity | None
    external_low: ExternalLiquidity | None


@dataclass(slots=True)
class DealingRange(JSONMixin):
    """Swing low/high around the last close; `pd_percent` 0 = range low, 100 = range high."""

    high: float
    high_index: int
    high_time: datetime
    low: float
    low_index: int
    low_time: datetime
    equilibrium: float
    pd_percent: float
    zone: Literal["premium", "discount", "equilibrium"]
    last_close: float
    swings: Literal["major", "minor"]


@dataclass(slots=True)
class KillZoneWindow(JSONMixin):
    name: KillZoneName
    start: datetime
    end: datetime
    start_index: int
    end_index: int
    high: float
    low: float
    complete: bool


@dataclass(slots=True)
class Sessions(JSONMixin):
    """Kill zones from each bar's open time, on the template's wall clock (`ict.sessions`):
    New York's for "NY"/"LDN" (London 02:00-05:00, NY AM 10:00-11:00, NY PM 14:00-15:00, Asia
    20:00-24:00, DST-aware), Shanghai's exchange sessions for "CN" (09:30-11:30, 13:00-15:00).
    Only intraday intervals have them (`applicable` is False for daily and longer bars).
    """

    template: SessionTemplate
    timezone: str
    applicable: bool
    last_bar_time_ny: datetime | None
    current_kill_zone: KillZoneName | None
    in_kill_zone: bool
    session_fit: SessionFit
    windows: tuple[KillZoneWindow, ...]


@dataclass(slots=True)
class KeyLevel(JSONMixin):
    """Previous period high or low; `swept_*` is the first later bar trading beyond it."""

    name: str
    price: float
    period_start: date
    index: int
    time: datetime
    swept_index: int | None
    swept_at: datetime | None


@dataclass(slots=True)
class Levels(JSONMixin):
    pdh: KeyLevel | None
    pdl: KeyLevel | None
    pwh: KeyLevel | None
    pwl: KeyLevel | None
    pmh: KeyLevel | None
    pml: KeyLevel | None

    def all(self) -> tuple[KeyLevel, ...]:
        items = (self.pdh, self.pdl, self.pwh, self.pwl, self.pmh, self.pml)
        return tuple(x for x in items if x is not None)


@dataclass(slots=True)
class Meta(JSONMixin):
    """What was analysed. `gaps` counts bar-to-bar steps much longer than the interval (weekends
    included): bars are analysed in sequence and gaps are never filled. `average_range` is the
    mean high-low range of the last `range_window` bars (the scale used for tolerances)."""

    symbol: str | None
    interval: str
    timezone: str
    bars: int
    start: datetime
    end: datetime
    last_bar: BarSummary
    last_closed_bar_time: datetime | None
    includes_current_bar: bool
    current_bar: BarSummary | None
    gaps: int
    largest_gap_seconds: float
    zero_volume_bars: int
    average_range: float
    warnings: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class ICTAnalysis(JSONMixin):
    meta: Meta
    swings: Swings
    structure: Structure
    internal_structure: Structure
    order_blocks: tuple[OrderBlock, ...]
    fvgs: tuple[FairValueGap, ...]
    liquidity: Liquidity
    dealing_range: DealingRange | None
    sessions: Sessions
    levels: Levels

    @property
    def bias(self) -> Bias:
        return self.structure.bias

    def brief(self, *, limit: int = 8) -> dict[str, Any]:
        """A compact JSON-ready digest for a model's context (the full `to_dict()` of 5,000
        bars is about a megabyte): what is live as of the last bar plus the latest events,
        at most `limit` of each kind, with totals so nothing looks complete when it is not."""
        s, liq = self.structure, self.liquidity
        meta = self.meta.to_dict()
        meta.pop("options", None)
        live_obs = sorted((b for b in self.order_blocks if b.state != "broken"),
                          key=lambda b: (-b.score, -b.confirmed_index))[:limit]
        unfilled = [g for g in self.fvgs if g.state != "filled"]
        eqh = [p for p in liq.equal_highs if p.swept_index is None]
        eql = [p for p in liq.equal_lows if p.swept_index is None]
        sessions = self.sessions
        digest = {
            "meta": meta,
            "structure": {"bias": s.bias, "last_bos": s.last_bos, "last_choch": s.last_choch,
                          "recent_events": s.events[-limit:], "events_total": len(s.events)},
            "internal_structure": {"bias": self.internal_structure.bias,
                                   "recent_events": self.internal_structure.events[-3:]},
            "major_swings": self.swings.major[-limit:],
            "order_blocks": {"live_by_score": live_obs, "live_total": sum(
                b.state != "broken" for b in self.order_blocks), "total": len(self.order_blocks)},
            "fvgs": {"unfilled_latest": unfilled[-limit:], "unfilled_total": len(unfilled),
                     "total": len(self.fvgs)},
            "liquidity": {"mode": liq.mode, "equal_highs_unswept": eqh[-limit:],
                          "equal_lows_unswept": eql[-limit:], "external_high": liq.external_high,
                          "external_low": liq.external_low},
            "dealing_range": self.dealing_range,
            "sessions": {"template": sessions.template, "applicable": sessions.applicable,
                         "last_bar_time_ny": sessions.last_bar_time_ny,
                         "current_kill_zone": sessions.current_kill_zone,
                         "session_fit": sessions.session_fit,
                         "recent_windows": sessions.windows[-4:]},
            "levels": self.levels,
        }
        out: dict[str, Any] = to_jsonable(digest)
        return out
