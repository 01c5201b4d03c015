"""The wall clock as a port: what reads the calendar (budgets reset at 00:00 UTC and on the
first of the month, /usage and /admin usage say when) asks a `Clock` instead of
`datetime.now`, so a test pins the day it runs in and never sleeps out midnight.

`SystemClock` is the real one. `FixedClock` is its twin: it says the instant it was given
until it is moved (`set`). Components take a clock as a keyword argument; those
built without one read `current()`, which is the system clock unless a test put a twin there
with `use()` (as `core.testing`'s other twins are put in place for a test).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> datetime:
        """The current instant, timezone-aware (UTC)."""
        ...


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class FixedClock:
    """A clock that stands still at `at` until it is moved."""

    def __init__(self, at: datetime) -> None:
        if at.tzinfo is None:
            raise ValueError("a FixedClock needs a timezone-aware instant")
        self._at = at

    def now(self) -> datetime:
        return self._at

    def set(self, at: datetime) -> None:
        self._at = at


SYSTEM = SystemClock()
_current: Clock = SYSTEM


def current() -> Clock:
    """The clock of components built without one: the system's, or a test's twin."""
    return _current


def use(clock: Clock | None) -> None:
    """Puts `clock` in place for components built without one (None: the system's again)."""
    global _current
    _current = clock if clock is not None else SYSTEM
