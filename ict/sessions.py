"""Kill zones in New York time, daylight saving included (zoneinfo America/New_York).

London 02:00-05:00, NY AM 10:00-11:00, NY PM 14:00-15:00, Asia 20:00-24:00. A bar belongs to
the kill zone containing its open time. Session fit grades a moment for the chosen template:
for "NY" the NY AM/PM zones are preferred and London acceptable; for "LDN" London is preferred
and NY AM acceptable; anything else is "off".
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Final
from zoneinfo import ZoneInfo

import numpy as np

from ict._arrays import BarArrays
from ict.types import KillZoneName, KillZoneWindow, SessionFit, Sessions, SessionTemplate

NY: Final = ZoneInfo("America/New_York")
_DAY_NS: Final = 86_400 * 10**9
_EPOCH: Final = date(1970, 1, 1)

# name, start minute, end minute (exclusive), New York wall clock
KILL_ZONES: Final[tuple[tuple[KillZoneName, int, int], ...]] = (
    ("london", 2 * 60, 5 * 60),
    ("ny_am", 10 * 60, 11 * 60),
    ("ny_pm", 14 * 60, 15 * 60),
    ("asia", 20 * 60, 24 * 60),
)
_PREFERRED: Final[dict[str, tuple[str, ...]]] = {"NY": ("ny_am", "ny_pm"), "LDN": ("london",)}
_ACCEPTABLE: Final[dict[str, tuple[str, ...]]] = {"NY": ("london",), "LDN": ("ny_am",)}


def kill_zone_at(moment: datetime) -> KillZoneName | None:
    """The kill zone containing a timezone-aware moment, or None."""
    local = moment.astimezone(NY)
    minute = local.hour * 60 + local.minute
    for name, start, end in KILL_ZONES:
        if start <= minute < end:
            return name
    return None


def session_fit(zone: str | None, template: SessionTemplate = "NY") -> SessionFit:
    if zone is not None and zone in _PREFERRED[template]:
        return "preferred"
    if zone is not None and zone in _ACCEPTABLE[template]:
        return "acceptable"
    return "off"


def _zone_bounds(day: int, code: int) -> tuple[datetime, datetime]:
    """Start and end of kill zone `code` on New York date `day` (days since 1970-01-01)."""
    _, start, end = KILL_ZONES[code - 1]
    midnight = datetime.combine(_EPOCH + timedelta(days=day), time(0))
    begin = (midnight + timedelta(minutes=start)).replace(tzinfo=NY)
    finish = (midnight + timedelta(minutes=end)).replace(tzinfo=NY)
    return begin, finish


def build_sessions(
    bars: BarArrays, *, interval_minutes: int, template: SessionTemplate, max_windows: int,
    last_bar_end: datetime,
) -> Sessions:
    applicable = interval_minutes < 240
    n = bars.n
    last_ny = bars.time(n - 1).astimezone(NY) if n else None
    if not applicable or n == 0:
        return Sessions(template, "America/New_York", False, last_ny, None, False, "off", ())
    wall = np.asarray(bars.index.tz_convert(NY).tz_localize(None).as_unit("ns").asi8,
                      dtype=np.int64)
    minute = (wall // 60_000_000_000) % 1440
    code = np.zeros(n, dtype=np.int64)
    for k, (_, start, end) in enumerate(KILL_ZONES, start=1):
        code[(minute >= start) & (minute < end)] = k
    day = wall // _DAY_NS
    current: KillZoneName | None = KILL_ZONES[code[-1] - 1][0] if code[-1] else None
    windows: list[KillZoneWindow] = []
    if max_windows > 0:
        in_zone = code > 0
        new_run = in_zone.copy()
        new_run[1:] &= (code[1:] != code[:-1]) | (day[1:] != day[:-1])
        run_end = in_zone.copy()
        run_end[:-1] &= new_run[1:] | ~in_zone[1:]
        starts = np.flatnonzero(new_run)[-max_windows:]
        ends = np.flatnonzero(run_end)[-max_windows:]
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            name, _, _ = KILL_ZONES[code[s] - 1]
            begin, finish = _zone_bounds(int(day[s]), int(code[s]))
            complete = e < n - 1 or last_bar_end >= finish
            windows.append(KillZoneWindow(
                name, begin, finish, s, e, float(bars.high[s:e + 1].max()),
                float(bars.low[s:e + 1].min()), complete))
    return Sessions(
        template, "America/New_York", True, last_ny, current, current is not None,
        session_fit(current, template), tuple(windows),
    )
