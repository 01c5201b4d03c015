"""How old data is, for an answer that calls it "latest" (house rule 17: an answer from old
data says how old it is). Numbers only; the words are the catalogue's (`core.words`)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

# data this many days old or newer is "latest" without remark (a weekend and a holiday)
FRESH_DAYS = 4


@dataclass(frozen=True)
class Age:
    """`count` `unit`s between the data's date and today (whole years past one year, whole
    months past two months, else days: never a count of 100 or more)."""

    as_of: date
    days: int
    count: int
    unit: Literal["year", "month", "day"]

    @property
    def stale(self) -> bool:
        return self.days > FRESH_DAYS


def age(as_of: date, today: date) -> Age:
    days = (today - as_of).days
    months = (today.year - as_of.year) * 12 + today.month - as_of.month - (
        1 if today.day < as_of.day else 0)
    if months >= 12:
        return Age(as_of, days, months // 12, "year")
    if months >= 2:
        return Age(as_of, days, months, "month")
    return Age(as_of, days, max(days, 0), "day")
