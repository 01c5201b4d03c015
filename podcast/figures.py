"""Figures in prose: every number and date a model writes must be one its input held.

`FigureSet.of(texts)` collects the numbers (with whether they are percentages) and dates of an
input; `FigureSet.check(text)` looks at each figure of a written text:

- found in the input (same value, sign and thousands separators ignored): kept;
- a rounding of exactly one input figure ("92%" for "+92.5%"), or a figure with more decimals
  than one input figure it rounds to: replaced by the input's figure as written (a repair);
- anything else (no such figure, or several it could be): unverified, and the caller drops
  the turn.

A percentage must match a percentage; a plain number may match either ("56 percent"). The
year, month and day of an input date count as plain numbers ("February 14, 2025"). A number
after a Latin letter (MA200, Q3, S1) is part of a name, not a figure, on both sides; one
before a letter (12M, 1.23x) is a figure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

_DATE = re.compile(
    r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)"
    r"|(?<!\d)(\d{4})/(\d{1,2})/(\d{1,2})(?!\d)"
    r"|(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日")
_NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(?P<sign>[+\-−]?)(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<pct>\s?[%％])?")


@dataclass(frozen=True)
class Figure:
    value: Decimal  # absolute value
    decimals: int
    percent: bool
    digits: str  # as written, without sign or percent sign
    start: int
    end: int  # span of `digits` in the text


def _figure(m: re.Match[str], offset: int = 0) -> Figure | None:
    digits = m.group("digits")
    try:
        value = abs(Decimal(digits.replace(",", "")))
    except InvalidOperation:
        return None
    decimals = len(digits.split(".", 1)[1]) if "." in digits else 0
    return Figure(value=value, decimals=decimals, percent=bool(m.group("pct")), digits=digits,
                  start=m.start("digits") + offset, end=m.end("digits") + offset)


def _dates(text: str) -> tuple[list[tuple[str, int, int]], str]:
    """Dates as YYYY-MM-DD with their spans, and the text with them blanked out."""
    found: list[tuple[str, int, int]] = []
    chars = list(text)
    for m in _DATE.finditer(text):
        parts = [g for g in m.groups() if g is not None]
        y, mo, d = (int(p) for p in parts)
        found.append((f"{y:04d}-{mo:02d}-{d:02d}", m.start(), m.end()))
        for i in range(m.start(), m.end()):
            chars[i] = " "
    return found, "".join(chars)


def figures_in(text: str) -> tuple[list[str], list[Figure]]:
    """The dates (YYYY-MM-DD) and the numbers a text states."""
    dates, rest = _dates(text)
    figs = [f for m in _NUMBER.finditer(rest) if (f := _figure(m)) is not None]
    return [d for d, _, _ in dates], figs


@dataclass
class Checked:
    text: str
    repairs: list[tuple[str, str]] = field(default_factory=list)  # (written, replaced by)
    unverified: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.unverified


def _close(a: Figure, b: Figure) -> bool:
    """Whether two figures agree at the coarser of their precisions."""
    tol = Decimal(5) * Decimal(10) ** -(min(a.decimals, b.decimals) + 1)
    return abs(a.value - b.value) <= tol


@dataclass
class FigureSet:
    """The figures an input holds."""

    numbers: list[Figure] = field(default_factory=list)
    dates: set[str] = field(default_factory=set)
    _plain: set[Decimal] = field(default_factory=set)
    _percent: set[Decimal] = field(default_factory=set)

    @classmethod
    def of(cls, texts: Iterable[str]) -> FigureSet:
        out = cls()
        for text in texts:
            out.add(text)
        return out

    def add(self, text: str) -> None:
        dates, figs = figures_in(text)
        for d in dates:
            self.dates.add(d)
            y, mo, dd = d.split("-")
            for part in (y, mo, dd, str(int(mo)), str(int(dd))):
                self._plain.add(Decimal(part))
        for f in figs:
            self.numbers.append(f)
            (self._percent if f.percent else self._plain).add(f.value)

    def known(self, fig: Figure) -> bool:
        if fig.percent:
            return fig.value in self._percent
        return fig.value in self._plain or fig.value in self._percent

    def candidates(self, fig: Figure) -> list[Figure]:
        """Input figures `fig` could be a rounding of, one per distinct value."""
        seen: dict[Decimal, Figure] = {}
        for f in self.numbers:
            if (f.percent or not fig.percent) and _close(fig, f) and f.value not in seen:
                seen[f.value] = f
        return list(seen.values())

    def check(self, text: str, *, repair: bool = True) -> Checked:
        """`text` with its figures checked (and repaired when `repair` and unambiguous)."""
        dates, rest = _dates(text)
        out = Checked(text=text)
        for d, _, _ in dates:
            if d not in self.dates:
                out.unverified.append(d)
        edits: list[tuple[int, int, str]] = []
        for m in _NUMBER.finditer(rest):
            fig = _figure(m)
            if fig is None or self.known(fig):
                continue
            found = self.candidates(fig) if repair else []
            if len(found) == 1:
                edits.append((fig.start, fig.end, found[0].digits))
                out.repairs.append((m.group(0).strip(), found[0].digits))
            else:
                out.unverified.append(m.group(0).strip())
        new = text
        for start, end, digits in reversed(edits):
            new = new[:start] + digits + new[end:]
        out.text = new
        return out


__all__ = ["Checked", "Figure", "FigureSet", "figures_in"]
