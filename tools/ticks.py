"""Tick sizes, and trade plans put on them: the one place that knows a market's price step.

An order can only rest at a multiple of the instrument's tick, so a plan that prints a stop
at 10.5096 CNY (an A-share ticks at 0.01) is one nobody can place (issue 29). The ICT
analyzer stays pure and market-blind (it measures zones in raw prices); plans are put on the
tick where they leave the tools (`tools.ict_tool`) and the LLM plan mode.

Rounding keeps the plan's promises: the entry goes to the nearest tick, the stop *away* from
the entry (so it stays beyond the zone it protects), each target to the nearest tick, and the
risk per unit and reward:risk are measured again from the prices as printed.
"""

from __future__ import annotations

import dataclasses
import math
import re
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Literal

from core.numbers import tick_size, tick_text
from ict import TradePlan

Way = Literal["nearest", "up", "down"]
_ROUNDING = {"nearest": ROUND_HALF_UP, "up": ROUND_CEILING, "down": ROUND_FLOOR}


def on_tick(price: float, tick: float | None, way: Way = "nearest") -> float:
    """`price` on a multiple of `tick` (unchanged when `tick` is None or price not finite),
    in decimal arithmetic so that 10.51 prints as 10.51, not 10.510000000000002."""
    if tick is None or not math.isfinite(price):
        return price
    step = Decimal(str(tick))
    # to 9 places first: a half-tick midpoint computed in floats (8.364999999999998 for
    # 8.365) rounds as the half it is, the same way its printed words do (`words_on_tick`)
    steps = (Decimal(str(round(price, 9))) / step).quantize(Decimal(1),
                                                             rounding=_ROUNDING[way])
    return float(steps * step)


_DECIMAL = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])")
_PRICED = ("entry zone:", "target ")  # the confluence lines ict writes with prices in them


def words_on_tick(line: str, tick: float | None) -> str:
    """A plan's confluence line with its prices on the tick, printed with the tick's
    decimals ("order block 10.39-10.47 (CE 10.435)" -> "(CE 10.44)"); other lines (dates,
    percentages, grades) unchanged."""
    if tick is None or not line.startswith(_PRICED):
        return line
    return _DECIMAL.sub(lambda m: tick_text(on_tick(float(m.group()), tick), tick), line)


def plan_on_tick(plan: TradePlan, tick: float | None) -> TradePlan:
    """The plan with entry, stop and targets on the tick (see the module docstring), the
    prices its confluence names too, and its risk measured again; the same plan when `tick`
    is None."""
    if tick is None:
        return plan
    long = plan.direction == "long"
    entry = on_tick(plan.entry, tick)
    stop = on_tick(plan.stop, tick, "down" if long else "up")
    if stop == entry:  # a zone narrower than a tick: the stop one tick beyond
        stop = on_tick(entry - tick if long else entry + tick, tick)
    targets = tuple(dict.fromkeys(on_tick(t, tick) for t in plan.targets))
    risk_unit = on_tick(abs(entry - stop), tick)
    first = targets[0] if targets else entry
    rr = round(abs(first - entry) / risk_unit, 2) if risk_unit else 0.0
    risk = dataclasses.replace(plan.risk, risk_per_unit=risk_unit, reward_risk=rr)
    confluence = tuple(words_on_tick(c, tick) for c in plan.confluence)
    return dataclasses.replace(plan, entry=entry, stop=stop, targets=targets, risk=risk,
                               confluence=confluence)


__all__ = ["on_tick", "plan_on_tick", "tick_size", "tick_text", "words_on_tick"]
