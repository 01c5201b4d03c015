"""What every bench's JSON says about how to read it (house rule 13): the direction of its
ratios, the machine's load during the run, and rounds summarised as median and spread.

A shared machine inflates wall times; the 1-minute load average at the start and at the end
of a run (beside the CPU count) says how much to distrust them.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Sequence
from typing import Any


class LoadWatch:
    """The 1-minute load average when created and when `fields()` is called."""

    def __init__(self) -> None:
        self.start = os.getloadavg()[0]

    def fields(self) -> dict[str, Any]:
        return {"load_avg_1m": {"start": round(self.start, 2),
                                "end": round(os.getloadavg()[0], 2)},
                "cpus": os.cpu_count()}


def spread(samples: Sequence[float], *, digits: int = 3) -> dict[str, Any]:
    """Median, min, max and max - min of one figure over rounds (the median is the headline;
    the spread says how far one round can be from it)."""
    if not samples:
        return {"median": None, "min": None, "max": None, "spread": None, "n": 0}
    return {"median": round(statistics.median(samples), digits),
            "min": round(min(samples), digits), "max": round(max(samples), digits),
            "spread": round(max(samples) - min(samples), digits), "n": len(samples)}


def ratio(ours: float | None, peer: float | None, digits: int = 3) -> float | None:
    """ours / peer, None when either is missing or the peer is zero."""
    if ours is None or not peer:
        return None
    return round(ours / peer, digits)
