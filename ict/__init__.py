"""ICT / smart-money analysis of OHLCV bars: pure numpy/pandas, causal and deterministic.

    analysis = ict.analyze(bars, interval="1h")          # one timeframe
    result = ict.analyze_stack(minute=m1, daily=d1)      # Daily/4H/15m/5m/1m bias stack
    proposal = ict.propose_plan(analysis, stack=result.stack)

No I/O, no clock, no asyncio: the same bars and options always give the same result, and
nothing reported for a bar depends on bars after its confirmation (see `ict.causality`).
"""

from ict.analyze import analyze
from ict.causality import knowable
from ict.errors import ICTError, ICTInputError, PlanValidationError
from ict.plan import (
    PLAN_KEYS,
    PlanCheck,
    PlanProposal,
    PlanRisk,
    TradePlan,
    detect_plan_intent,
    parse_plan,
    propose_plan,
    validate_plan,
)
from ict.sessions import (
    CN_SESSIONS,
    KILL_ZONES,
    kill_zone_at,
    session_fit,
    template_for,
    zones_of,
)
from ict.stack import (
    STACK_ORDER,
    BiasStack,
    ChecklistItem,
    DrawTarget,
    EntryZone,
    StackResult,
    analyze_stack,
    best_entry_zone,
    bias_stack,
)
from ict.timeframes import (
    INTERVALS,
    TIMEFRAMES,
    Enforcement,
    Timeframe,
    bar_end,
    enforce_timeframe,
    get_timeframe,
    normalize_interval,
    resample,
    timeframe_for_interval,
)
from ict.types import (
    BarSummary,
    DealingRange,
    ExternalLiquidity,
    FairValueGap,
    ICTAnalysis,
    ICTOptions,
    KeyLevel,
    KillZoneWindow,
    Levels,
    Liquidity,
    LiquidityPool,
    Meta,
    OrderBlock,
    Sessions,
    Structure,
    StructureEvent,
    Swing,
    Swings,
)

__all__ = [
    "CN_SESSIONS", "INTERVALS", "KILL_ZONES", "PLAN_KEYS", "STACK_ORDER", "TIMEFRAMES",
    "BarSummary", "BiasStack", "ChecklistItem", "DealingRange", "DrawTarget", "Enforcement",
    "EntryZone", "ExternalLiquidity", "FairValueGap", "ICTAnalysis", "ICTError",
    "ICTInputError", "ICTOptions", "KeyLevel", "KillZoneWindow", "Levels", "Liquidity",
    "LiquidityPool", "Meta", "OrderBlock", "PlanCheck", "PlanProposal", "PlanRisk",
    "PlanValidationError", "Sessions", "StackResult", "Structure", "StructureEvent", "Swing",
    "Swings", "Timeframe", "TradePlan",
    "analyze", "analyze_stack", "bar_end", "best_entry_zone", "bias_stack", "detect_plan_intent",
    "enforce_timeframe", "get_timeframe", "kill_zone_at", "knowable", "normalize_interval",
    "parse_plan", "propose_plan", "resample", "session_fit", "template_for",
    "timeframe_for_interval", "validate_plan", "zones_of",
]
