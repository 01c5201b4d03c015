"""What an analysis knew at a given bar: the basis of the no-repaint guarantee.

`knowable(analysis, k)` keeps the events confirmed before bar k, blanks state changes (fills,
mitigations, sweeps, breaks) that happened at or after bar k and drops the fields that are
evaluated as of the last bar (scores, ages, states). For bars with a common start,
`knowable(analyze(bars[:k]), k) == knowable(analyze(bars), k)` for every k: nothing reported
for a bar depends on later bars.
"""

from __future__ import annotations

from typing import Any

from ict.types import ICTAnalysis, StructureEvent, Swing


def _event(obj: Any, k: int) -> dict[str, Any]:
    data: dict[str, Any] = obj.to_dict()
    for name in getattr(obj, "AS_OF_FIELDS", ()):
        data.pop(name, None)
    for idx_name, at_name in getattr(obj, "TRANSITIONS", ()):
        value = getattr(obj, idx_name)
        if value is not None and value >= k:
            data[idx_name] = None
            data[at_name] = None
    return data


def _swings(items: tuple[Swing, ...], k: int) -> list[dict[str, Any]]:
    return [s.to_dict() for s in items if s.confirmed_index < k]


def _structure(items: tuple[StructureEvent, ...], k: int) -> list[dict[str, Any]]:
    return [e.to_dict() for e in items if e.confirmed_index < k]


def knowable(analysis: ICTAnalysis, k: int) -> dict[str, list[dict[str, Any]]]:
    """Every event of `analysis` confirmed before bar `k`, as known at the close of bar k-1."""
    liq = analysis.liquidity
    return {
        "major_swings": _swings(analysis.swings.major, k),
        "minor_swings": _swings(analysis.swings.minor, k),
        "structure": _structure(analysis.structure.events, k),
        "internal_structure": _structure(analysis.internal_structure.events, k),
        "order_blocks": [_event(b, k) for b in analysis.order_blocks if b.confirmed_index < k],
        "fvgs": [_event(g, k) for g in analysis.fvgs if g.confirmed_index < k],
        "equal_highs": [_event(p, k) for p in liq.equal_highs if p.confirmed_index < k],
        "equal_lows": [_event(p, k) for p in liq.equal_lows if p.confirmed_index < k],
    }
