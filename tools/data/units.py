"""Units and reporting calendars, normalised once for every provider.

Money from Chinese providers arrives in raw yuan; tools report it in 亿 (1e8): 1 billion yuan
is 10亿, never 1亿. US amounts are reported in USD millions.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Literal

from pydantic import BaseModel

YI = 1e8  # 1亿 = 100,000,000
WAN = 1e4  # 1万
MILLION = 1e6

ReportKind = Literal["q1", "mid", "q3", "annual"]


def num(value: object) -> float | None:
    """A float from provider values ('1,234.5', '12.3%', '-', None); None when not a number."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        f = float(value)
        return f if math.isfinite(f) else None
    text = str(value).strip().replace(",", "").rstrip("%")
    if text in ("", "-", "--", "nan", "NaN", "None", "null"):
        return None
    mult = 1.0
    for suffix, m in (("万亿", 1e12), ("亿", YI), ("万", WAN)):
        if text.endswith(suffix):
            text, mult = text[: -len(suffix)], m
            break
    try:
        f = float(text) * mult
    except ValueError:
        return None
    return f if math.isfinite(f) else None


def to_yi(raw_yuan: object, decimals: int = 2) -> float | None:
    """Raw yuan -> 亿元 (1e9 yuan = 10亿)."""
    v = num(raw_yuan)
    return None if v is None else round(v / YI, decimals)


def to_wan(raw: object, decimals: int = 2) -> float | None:
    v = num(raw)
    return None if v is None else round(v / WAN, decimals)


def to_millions(raw: object, decimals: int = 2) -> float | None:
    v = num(raw)
    return None if v is None else round(v / MILLION, decimals)


class ReportPeriod(BaseModel):
    """A Chinese periodic report: `kind` and the period end date."""

    year: int
    kind: ReportKind
    end: date

    @property
    def label(self) -> str:
        names = {"q1": "一季报", "mid": "半年报", "q3": "三季报", "annual": "年报"}
        return f"{self.year}{names[self.kind]}"


_ENDS = {"q1": (3, 31), "mid": (6, 30), "q3": (9, 30), "annual": (12, 31)}


def report_period(year: int, kind: ReportKind) -> ReportPeriod:
    month, day = _ENDS[kind]
    return ReportPeriod(year=year, kind=kind, end=date(year, month, day))


def latest_quarterly_report(today: date) -> ReportPeriod:
    """The newest quarterly report every A-share company has filed by `today`, from the filing
    deadlines: Jan-Apr -> prior year's Q3; May-Aug -> Q1; Sep-Oct -> half-year; Nov-Dec -> Q3.
    """
    m = today.month
    if m <= 4:
        return report_period(today.year - 1, "q3")
    if m <= 8:
        return report_period(today.year, "q1")
    if m <= 10:
        return report_period(today.year, "mid")
    return report_period(today.year, "q3")


def period_of(end: date) -> ReportPeriod | None:
    """The report period that ends on `end` (a quarter end), else None."""
    for kind, (month, day) in _ENDS.items():
        if (end.month, end.day) == (month, day):
            return ReportPeriod(year=end.year, kind=kind, end=end)
    return None
