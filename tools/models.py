"""Value types shared by the financial tools: where a number came from, and rounding."""

from __future__ import annotations

import math
from datetime import date

from pydantic import BaseModel, Field

from core.tools import tool as core_tool


class DataSource(BaseModel):
    """Which provider answered and how fresh the data is; every tool result carries one."""

    provider: str = Field(description="snapshot, akshare, yfinance, sec, tavily, ...")
    dataset: str = Field(default="", description="what was read, e.g. a package file or API")
    as_of: date | None = Field(default=None, description="date of the latest data point")
    offline: bool = Field(default=False, description="true when served from the snapshot")
    note: str = ""

    @classmethod
    def at(cls, provider: str, dataset: str, as_of: str | date | None,
           note: str = "") -> DataSource:
        """A source dated by `as_of`: a date, or text starting with an ISO or YYYYMMDD date."""
        return cls(provider=provider, dataset=dataset, as_of=parse_date(as_of), note=note)

    def label(self) -> str:
        when = f" as of {self.as_of.isoformat()}" if self.as_of else ""
        return f"{self.provider}{' (' + self.dataset + ')' if self.dataset else ''}{when}"


def parse_date(value: str | date | None) -> date | None:
    """A date from a date, '2024-09-30...', '20240930' or None; None when unreadable."""
    if value is None or isinstance(value, date):
        return value
    text = str(value).strip()
    if len(text) >= 8 and text[:8].isdigit():
        text = f"{text[:4]}-{text[4:6]}-{text[6:8]}"
    try:
        return date.fromisoformat(text[:10])
    except ValueError:
        return None


def price_decimals(value: float) -> int:
    """Decimals that keep about five significant digits: 2 for 130.25, 5 for 1.05236."""
    if not math.isfinite(value) or value == 0:
        return 2
    return max(2, min(8, 4 - math.floor(math.log10(abs(value)))))


def rnd(value: float | None, decimals: int = 2) -> float | None:
    """Round for the LLM; NaN and None become None."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), decimals)


# `core.tools.tool` is typed to keep each tool's signature; re-exported for the tool modules.
tool = core_tool
