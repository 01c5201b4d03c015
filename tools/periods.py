"""Periods and dates as people and models write them, read by one set of rules.

A `period` argument (a tool's, a /chart range, or a phrase in a question) is either

- relative, counted back from the last bar: ``3mo``, ``1y``, ``5d``, ``ytd``, ``max``,
  "last 3 months", "past year", "this year", 近一年, 最近3个月, 近半年, 今年, 今年以来; or
- absolute, a calendar window: a year (``2024``, 2024年), a month (``2020-05``, "May 2020",
  2020年5月), a day (``2019-06-01``, 2019年6月1日) or a range of any two of them
  (``2019-06-01 2020-06-16``, "2020-01 to 2020-05", 从2019年6月1日到2020年6月16日).

`parse_period` reads a whole argument and raises `InvalidArguments` (said to the model or the
user, never a crash) for anything else; `find_period` finds one in a question's free text.
Both return a `Period` whose `text` is the canonical form every tool accepts, so a period
found in a question can be handed to a tool unchanged. Why one module: the tools used to read
only ``3mo``-style periods and the offline analyst its own phrases, so "2024年" became the
relative "2024 years" and crashed pandas (year 0), and "2020年5月" became "5 months back".

Pure standard library: `begin` works on any `datetime` (a tz-aware pandas `Timestamp` too).
"""

from __future__ import annotations

import calendar
import itertools
import re
import unicodedata
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Literal

from core.errors import InvalidArguments

Unit = Literal["d", "mo", "y", "ytd", "max"]

# the longest relative span accepted: past this it is not a span anybody means ("2024y")
_MAX_DAYS = {"d": 36_600, "mo": 1_200, "y": 100}
_EARLIEST_YEAR = 1900


@dataclass(frozen=True)
class Period:
    """A period: relative (`unit`, `count`) or absolute (`start`..`end`, both inclusive)."""

    text: str
    unit: Unit | None = None
    count: int = 0
    start: date | None = None
    end: date | None = None

    @property
    def absolute(self) -> bool:
        return self.start is not None

    def begin(self, last: datetime) -> datetime | None:
        """Where a relative period starts, counted back from the last bar `last`; None for
        ``max``. An absolute period starts at `start` (midnight, in `last`'s time zone)."""
        if self.start is not None:
            return datetime(self.start.year, self.start.month, self.start.day,
                            tzinfo=last.tzinfo)
        if self.unit == "max" or self.unit is None:
            return None
        if self.unit == "ytd":
            return last.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
        if self.unit == "d":
            return last - timedelta(days=self.count)
        months = self.count * (12 if self.unit == "y" else 1)
        return _months_back(last, months)


def _months_back(ts: datetime, months: int) -> datetime:
    """`ts` moved back whole calendar months, the day clamped to the month's length
    (2024-03-31 minus one month is 2024-02-29), as pandas' DateOffset does."""
    index = ts.year * 12 + ts.month - 1 - months
    year, month = divmod(index, 12)
    if year < _EARLIEST_YEAR:
        raise InvalidArguments(f"the period reaches back before {_EARLIEST_YEAR}")
    day = min(ts.day, calendar.monthrange(year, month + 1)[1])
    return ts.replace(year=year, month=month + 1, day=day)


# --- numbers and words --------------------------------------------------------------------

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}
_MONTHS = {name: i for i, names in enumerate(
    (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
     ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
     ("september", "sept", "sep"), ("october", "oct"), ("november", "nov"),
     ("december", "dec")), start=1) for name in names}
_MONTH_WORD = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "a": 1, "an": 1}


def _zh_int(raw: str) -> int:
    """1-99 written as digits or in Chinese numerals (三, 十二, 二十)."""
    if raw.isdigit():
        return int(raw)
    if raw == "半":
        return 0  # handled by the caller (half a year)
    if "十" in raw:
        tens, _, ones = raw.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS[ones] if ones else 0)
    return _ZH_DIGITS[raw]


def _normal(text: str) -> str:
    """Full-width digits and punctuation folded (２０２４年, ～), lower case, one space."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().lower()


# --- absolute: years, months, days, ranges ------------------------------------------------

_Y = r"((?:19|20)\d{2})"
_ZH_M = r"(\d{1,2}|十[一二]?|[一二三四五六七八九])"
_ABSOLUTE = re.compile(
    "|".join((
        rf"(?P<d1>(?<!\d){_Y}[-/.]\s*(\d{{1,2}})[-/.]\s*(\d{{1,2}})(?!\d))",
        rf"(?P<d2>(?<!\d){_Y}\s*年\s*{_ZH_M}\s*月\s*(\d{{1,2}})\s*[日号]?)",
        rf"(?P<d3>(?<!\d){_Y}(\d{{2}})(\d{{2}})(?!\d))",
        rf"(?P<d4>(?<![a-z])({_MONTH_WORD})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_Y}(?!\d))",
        rf"(?P<q1>(?<!\d){_Y}\s*年?\s*第?\s*([1-4一二三四])\s*季度)",
        rf"(?P<q2>(?<![a-z])q([1-4])\s*,?\s*{_Y}(?!\d))",
        rf"(?P<q3>(?<!\d){_Y}\s*-?\s*q([1-4])(?![a-z\d]))",
        rf"(?P<m1>(?<!\d){_Y}[-/.](\d{{1,2}})(?![\d.\-/]))",
        rf"(?P<m2>(?<!\d){_Y}\s*年\s*{_ZH_M}\s*月份?)",
        rf"(?P<m3>(?<![a-z])({_MONTH_WORD})\.?,?\s+(?:of\s+)?{_Y}(?!\d))",
        rf"(?P<m4>(?<!\d){_Y}\s+({_MONTH_WORD})(?![a-z]))",
        rf"(?P<y1>(?<!\d){_Y}\s*年(?:度|全年)?)",
        rf"(?P<y2>(?<![\d.\-/]){_Y}(?![\d.\-/]))",
    )),
    re.I,
)
# what may stand between the two ends of a range
_BETWEEN = re.compile(r"^\s*(?:-|–|—|~|～|\.\.|,|to|through|thru|until|till|and|至|到|—+)?\s*$")
_RANGE_OPEN = re.compile(r"^\s*(?:from|between|从|自)?\s*$")
_RANGE_CLOSE = re.compile(r"^\s*(?:之间|期间|为止|止)?\s*$")


@dataclass(frozen=True)
class _Span:
    start: date
    end: date
    kind: Literal["day", "month", "quarter", "year"]
    at: int
    to: int


def _span(m: re.Match[str]) -> _Span:
    """The window one absolute expression names (InvalidArguments for 2024-13 or 2月30日)."""
    kind = m.lastgroup or ""
    g = [x for x in m.groups()[m.re.groupindex[kind]:] if x is not None]
    try:
        if kind in ("d1", "d2", "d3"):
            d = date(int(g[0]), _zh_int(g[1]), int(g[2]))
            return _Span(d, d, "day", m.start(), m.end())
        if kind == "d4":
            d = date(int(g[2]), _MONTHS[g[0].lower()], int(g[1]))
            return _Span(d, d, "day", m.start(), m.end())
        if kind in ("q1", "q2", "q3"):
            year, q = (int(g[1]), int(g[0])) if kind == "q2" else (int(g[0]), _zh_int(g[1]))
            if not 1 <= q <= 4:
                raise ValueError(q)
            last_day = calendar.monthrange(year, q * 3)[1]
            return _Span(date(year, q * 3 - 2, 1), date(year, q * 3, last_day), "quarter",
                         m.start(), m.end())
        if kind in ("m1", "m2", "m3", "m4"):
            if kind == "m3":
                year, month = int(g[1]), _MONTHS[g[0].lower()]
            elif kind == "m4":
                year, month = int(g[0]), _MONTHS[g[1].lower()]
            else:
                year, month = int(g[0]), _zh_int(g[1])
            last_day = calendar.monthrange(year, month)[1]
            return _Span(date(year, month, 1), date(year, month, last_day), "month",
                         m.start(), m.end())
        year = int(g[0])
        return _Span(date(year, 1, 1), date(year, 12, 31), "year", m.start(), m.end())
    except (ValueError, KeyError, calendar.IllegalMonthError) as exc:
        raise InvalidArguments(f"{m.group(0).strip()!r} is not a calendar date") from exc


def _absolute(spans: list[_Span]) -> Period:
    first, last = spans[0], spans[-1]
    if first.start > last.end:
        raise InvalidArguments(f"the range starts {first.start} after it ends {last.end}")
    if len(spans) == 1 and first.kind != "quarter":
        text = {"day": first.start.isoformat(), "month": first.start.isoformat()[:7],
                "year": str(first.start.year)}[first.kind]
    else:
        text = f"{first.start.isoformat()}..{last.end.isoformat()}"
    return Period(text=text, start=first.start, end=last.end)


def _absolute_in(text: str, *, whole: bool) -> Period | None:
    """An absolute period in `text`: the whole of it (`whole`), or the first range or
    single expression found in it. A bare year (2024) counts only in a whole argument or
    after "in"/"during"/"for" in a sentence (in a question it is often a fiscal year)."""
    spans: list[_Span] = []
    for m in _ABSOLUTE.finditer(text):
        if m.lastgroup == "y2" and not whole and not re.search(
                r"(?:\bin|\bduring|\bfor|\bof|\bthroughout)\s+$", text[:m.start()]):
            continue
        spans.append(_span(m))
    if whole:
        if not spans:
            return None
        gaps = [text[a.to:b.at] for a, b in itertools.pairwise(spans)]
        if (len(spans) > 2 or not _RANGE_OPEN.match(text[:spans[0].at])
                or not _RANGE_CLOSE.match(text[spans[-1].to:])
                or any(not _BETWEEN.match(g) for g in gaps)):
            return None
        return _absolute(spans)
    for a, b in itertools.pairwise(spans):
        if _BETWEEN.match(text[a.to:b.at]):
            return _absolute([a, b])
    return _absolute(spans[:1]) if spans else None


# --- relative: spans back from the last bar -----------------------------------------------

_SHORT = re.compile(r"^(\d+)\s*(d|day|days|w|wk|wks|week|weeks|mo|mos|mon|month|months|m|q|"
                    r"quarter|quarters|y|yr|yrs|year|years)$")
_EN_REL = re.compile(
    r"(?<![a-z])(?:(?:in|over|for|during)\s+)?(?:the\s+)?(last|past|recent|previous|this|"
    r"trailing)\s+(?:(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve)\s+)?"
    r"(day|week|month|quarter|year)s?(?![a-z])")
# "3 months", "6mo", "5y"; not "1d"/"1w"/"5m", which are bar sizes in a question
_EN_COUNT = re.compile(r"(?<![a-z\d])(\d+)\s*(?:(day|week|month|quarter|year)s?|"
                       r"(mo|mos|yr|yrs|y|wk|wks))(?![a-z])")
_ZH_REL = re.compile(
    r"(?:(?:近|最近|过去|前)\s*(\d+|[一二两三四五六七八九十]+|半)\s*(?:个)?\s*(天|日|周|星期|个?月|季度|年)"
    r"|(\d+|[一二两三四五六七八九十]+)\s*(?:个)\s*(月)"  # 3个月: a span even without 近
    r"|(\d+|[一二两三四五六七八九十]+)\s*(天|周|星期|季度)"
    r")(?:以来|来|内)?")
_YTD = re.compile(r"(?<![a-z])(?:ytd|year[\s-]to[\s-]date|this year|so far this year)"
                  r"(?![a-z])|今年以来|今年|年初至今|年初以来|本年")
_MAX = re.compile(r"^(?:max|all|all time|all-time|full history|"
                  r"全部|所有|全部历史|历史全部|上市以来)$")


def _relative(n: int, unit: str) -> Period:
    if unit.startswith(("d", "天", "日")):
        key, count = "d", n
    elif unit.startswith(("w", "周", "星期")):
        key, count = "d", n * 7
    elif unit.startswith(("q", "季")):
        key, count = "mo", n * 3
    elif unit.startswith(("mo", "mon", "月", "个月")) or unit == "m":
        key, count = "mo", n
    else:
        key, count = "y", n
    if count <= 0:
        raise InvalidArguments("a period must be at least one day long")
    if count > _MAX_DAYS[key]:
        raise InvalidArguments(
            f"{n}{unit} is longer than any data; for a calendar year write e.g. 2024 or "
            "2024-01-01 2024-12-31")
    text = {"d": f"{count}d", "mo": f"{count}mo", "y": f"{count}y"}[key]
    return Period(text=text, unit=key, count=count)  # type: ignore[arg-type]


def _en_count(raw: str | None) -> int:
    if raw is None:
        return 1
    return int(raw) if raw.isdigit() else _EN_NUMBERS[raw]


def _zh_relative(m: re.Match[str]) -> Period:
    raw = m.group(1) or m.group(3) or m.group(5)
    unit = m.group(2) or m.group(4) or m.group(6)
    if raw == "半":  # 近半年 six months, 近半个月 fifteen days
        return _relative(6, "mo") if unit == "年" else _relative(15, "d")
    return _relative(_zh_int(raw), unit)


def _relative_in(text: str, *, whole: bool) -> Period | None:
    if whole:
        if _MAX.match(text):
            return Period(text="max", unit="max")
        m = _SHORT.match(text)
        if m:
            return _relative(int(m.group(1)), m.group(2))
    if (_YTD.fullmatch(text) if whole else _YTD.search(text)) is not None:
        return Period(text="ytd", unit="ytd")
    found = [p for p in (_EN_REL.search(text), _ZH_REL.search(text),
                         None if whole else _EN_COUNT.search(text)) if p is not None]
    if whole:
        found = [p for p in found if p.group(0).strip() == text.strip()]
    if not found:
        return None
    m = min(found, key=lambda x: x.start())
    if m.re is _ZH_REL:
        return _zh_relative(m)
    if m.re is _EN_COUNT:
        return _relative(int(m.group(1)), m.group(2) or m.group(3))
    if m.group(1) == "this":  # this week / month / quarter / year: up to the last bar
        return (Period(text="ytd", unit="ytd") if m.group(3) == "year"
                else _relative(1, m.group(3)))
    return _relative(_en_count(m.group(2)), m.group(3))


# --- the two ways in ------------------------------------------------------------------------


def parse_period(raw: str) -> Period:
    """A whole `period` argument as a `Period`; `InvalidArguments` (saying what is accepted)
    when it is none of the forms in this module's docstring."""
    text = _normal(raw)
    if not text:
        raise InvalidArguments("the period is empty; use e.g. 3mo, 1y, ytd, 2024-09 or "
                               "2019-06-01 2020-06-16")
    found = _absolute_in(text, whole=True) or _relative_in(text, whole=True)
    if found is not None:
        return found
    raise InvalidArguments(
        f"unknown period {raw!r}; use a span back from the last bar (5d, 3mo, 1y, ytd, max) "
        "or calendar dates (2024, 2024-09, 2019-06-01, or a range: 2019-06-01 2020-06-16)")


def find_period(text: str) -> Period | None:
    """The period a question asks about, if any: a calendar range or date first (it is the
    more specific), then a span back from the last bar. None when it names none; an
    impossible date (2024年2月30日) is not a period."""
    norm = _normal(text)
    try:
        return _absolute_in(norm, whole=False) or _relative_in(norm, whole=False)
    except InvalidArguments:
        return None


def period_text(raw: str | None) -> str | None:
    """The canonical text of a period argument (None stays None); raises like parse_period."""
    return None if raw is None else parse_period(raw).text


__all__ = ["Period", "find_period", "parse_period", "period_text"]
