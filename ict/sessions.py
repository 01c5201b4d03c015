"""Sessions and kill zones on the wall clock of the instrument's own exchange.

Two clocks, chosen by the session template:

- "NY" and "LDN" (FX, US stocks, crypto): ICT kill zones in New York time, daylight saving
  included: London 02:00-05:00, NY AM 10:00-11:00, NY PM 14:00-15:00, Asia 20:00-24:00. For
  "NY" the NY AM/PM zones are preferred and London acceptable; for "LDN" London is preferred
  and NY AM acceptable.
- "CN" (Shanghai and Shenzhen stocks): the exchange's own continuous sessions in Shanghai time,
  morning 09:30-11:30 and afternoon 13:00-15:00. The market trades only then, so both are
  preferred; London and New York mean nothing for it and are never marked.

A bar belongs to the zone containing its open time; anything else is "off".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Final
from zoneinfo import ZoneInfo

import numpy as np

from ict._arrays import BarArrays
from ict.types import KillZoneName, KillZoneWindow, SessionFit, Sessions, SessionTemplate

NY: Final = ZoneInfo("America/New_York")
SHANGHAI: Final = ZoneInfo("Asia/Shanghai")
_DAY_NS: Final = 86_400 * 10**9
_EPOCH: Final = date(1970, 1, 1)

Zone = tuple[KillZoneName, int, int]  # name, start minute, end minute (exclusive), wall clock

# New York wall clock
KILL_ZONES: Final[tuple[Zone, ...]] = (
    ("london", 2 * 60, 5 * 60),
    ("ny_am", 10 * 60, 11 * 60),
    ("ny_pm", 14 * 60, 15 * 60),
    ("asia", 20 * 60, 24 * 60),
)
# Shanghai wall clock: the SSE/SZSE continuous auction
CN_SESSIONS: Final[tuple[Zone, ...]] = (
    ("cn_am", 9 * 60 + 30, 11 * 60 + 30),
    ("cn_pm", 13 * 60, 15 * 60),
)


@dataclass(frozen=True, slots=True)
class Clock:
    """A template's zones, the time zone they are read in, and how each one fits."""

    tz: ZoneInfo
    zones: tuple[Zone, ...]
    preferred: tuple[KillZoneName, ...]
    acceptable: tuple[KillZoneName, ...]


CLOCKS: Final[dict[SessionTemplate, Clock]] = {
    "NY": Clock(NY, KILL_ZONES, ("ny_am", "ny_pm"), ("london",)),
    "LDN": Clock(NY, KILL_ZONES, ("london",), ("ny_am",)),
    "CN": Clock(SHANGHAI, CN_SESSIONS, ("cn_am", "cn_pm"), ()),
}
# markets whose instruments keep their exchange's own sessions, whatever template was asked
_EXCHANGE_TEMPLATE: Final[dict[str, SessionTemplate]] = {"cn": "CN"}


def template_for(market: str, asked: SessionTemplate = "NY") -> SessionTemplate:
    """The template an instrument of `market` ("cn", "us", "hk", "crypto", "fx") is analysed
    with: a Shanghai/Shenzhen stock always gets "CN"; others keep the asked kill zones."""
    return _EXCHANGE_TEMPLATE.get(market, asked)


def zones_of(template: SessionTemplate) -> tuple[Zone, ...]:
    """The zones a template marks, in its own wall clock (charts shade these)."""
    return CLOCKS[template].zones


def kill_zone_at(moment: datetime, template: SessionTemplate = "NY") -> KillZoneName | None:
    """The zone of `template` containing a timezone-aware moment, or None."""
    clock = CLOCKS[template]
    local = moment.astimezone(clock.tz)
    minute = local.hour * 60 + local.minute
    for name, start, end in clock.zones:
        if start <= minute < end:
            return name
    return None


def session_fit(zone: str | None, template: SessionTemplate = "NY") -> SessionFit:
    clock = CLOCKS[template]
    if zone is not None and zone in clock.preferred:
        return "preferred"
    if zone is not None and zone in clock.acceptable:
        return "acceptable"
    return "off"


def _zone_bounds(clock: Clock, day: int, code: int) -> tuple[datetime, datetime]:
    """Start and end of zone `code` on local date `day` (days since 1970-01-01)."""
    _, start, end = clock.zones[code - 1]
    midnight = datetime.combine(_EPOCH + timedelta(days=day), time(0))
    begin = (midnight + timedelta(minutes=start)).replace(tzinfo=clock.tz)
    finish = (midnight + timedelta(minutes=end)).replace(tzinfo=clock.tz)
    return begin, finish


def build_sessions(
    bars: BarArrays, *, interval_minutes: int, template: SessionTemplate, max_windows: int,
    last_bar_end: datetime,
) -> Sessions:
    """The zones of `template` over the bars, in its own wall clock (`timezone`);
    `last_bar_time_ny` stays the last bar's open in New York time, as its name says."""
    clock = CLOCKS[template]
    tz_name = str(clock.tz)
    applicable = interval_minutes < 240
    n = bars.n
    last_ny = bars.time(n - 1).astimezone(NY) if n else None
    if not applicable or n == 0:
        return Sessions(template, tz_name, False, last_ny, None, False, "off", ())
    wall = np.asarray(bars.index.tz_convert(clock.tz).tz_localize(None).as_unit("ns").asi8,
                      dtype=np.int64)
    minute = (wall // 60_000_000_000) % 1440
    code = np.zeros(n, dtype=np.int64)
    for k, (_, start, end) in enumerate(clock.zones, start=1):
        code[(minute >= start) & (minute < end)] = k
    day = wall // _DAY_NS
    current: KillZoneName | None = clock.zones[code[-1] - 1][0] if code[-1] else None
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
            name, _, _ = clock.zones[code[s] - 1]
            begin, finish = _zone_bounds(clock, int(day[s]), int(code[s]))
            complete = e < n - 1 or last_bar_end >= finish
            windows.append(KillZoneWindow(
                name, begin, finish, s, e, float(bars.high[s:e + 1].max()),
                float(bars.low[s:e + 1].min()), complete))
    return Sessions(
        template, tz_name, True, last_ny, current, current is not None,
        session_fit(current, template), tuple(windows),
    )
