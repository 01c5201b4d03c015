"""Which figures in an answer did not come from the run's tool results (house rule 5).

A figure is a number with a decimal point, a percent sign, a thousands separator, a unit of
magnitude (万, 亿, million, bn ...) or a value of 100 or more; years, dates, times and numbers
the user typed, security codes (6 digits; 0700.HK), index names (CSI 300) and bar intervals
(15m) are not figures. A figure is supported when some number in the tool results
rounds to it at the precision written (after the unit's scale, and /100 for percentages).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable

_DATE = re.compile(
    r"(?:19|20)\d{2}(?:-\d{1,2}-\d{1,2}|/\d{1,2}/\d{1,2}|\.\d{1,2}\.\d{1,2}|年\d{1,2}月(?:\d{1,2}日)?"
    r"|-\d{2}(?!\d))|\b\d{1,2}:\d{2}(?::\d{2})?\b|(?<!\d)(?:19|20)\d{6}(?!\d)")
# names with a number in them, and bar intervals: not figures
_NAMES = re.compile(r"(?:S&P|CSI|SSE|SZSE|Russell|FTSE|Nikkei|DAX|STOXX|Nasdaq|沪深|中证|上证|深证"
                    r"|标普|纳斯达克|纳指|中小|科创|创业板)\s?\d+|(?<![\d.])\d{1,3}(?:m|h|d|w|mo|min|y)\b"
                    r"|(?<![\d.,])\d{6}(?!\d|[.,]\d)|(?<![\d.,])\d{4,5}\.HK\b", re.IGNORECASE)
_FIGURE = re.compile(
    r"(?<![A-Za-z0-9_.])([-+−]?)((?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*"
    r"(%|％|万亿|亿|万|千|trillion|billion|million|thousand|bn|mn|tn|[KMBT](?![A-Za-z]))?",
    re.IGNORECASE)
_DIGIT = re.compile(r"\d")
_TOOL_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_SCALE = {"万亿": 1e12, "亿": 1e8, "万": 1e4, "千": 1e3, "trillion": 1e12, "tn": 1e12,
          "t": 1e12, "billion": 1e9, "bn": 1e9, "b": 1e9, "million": 1e6, "mn": 1e6,
          "m": 1e6, "thousand": 1e3, "k": 1e3}
# a question that wants market data (so an answer without a tool call is unverified)
_DATA_WORDS = re.compile(
    r"\b(?:price|close|closing|closed|quote|opened?|high|low|volume|returns?|change|market cap|"
    r"p/?e|eps|revenue|earnings|profit|dividends?|rsi|macd|sma|ema|moving average|bollinger|"
    r"indicators?|chart|trend|ict|order blocks?|52.week|compare|performance|how much|rate|"
    r"level|index|worth|valuation)\b|"
    r"股价|价格|收盘|开盘|最高|最低|成交|涨|跌|市值|市盈率|营收|利润|分红|指标|均线|走势|行情|多少|对比|比较|"
    r"点位|表现|汇率|指数|估值|净值",
    re.IGNORECASE)
_CODE = re.compile(r"(?<![\w.])(?:\d{6}(?:\.(?:SH|SZ|BJ))?|\$?[A-Z]{2,6}(?:[.-][A-Z]{1,3})?)"
                   r"(?![\w])|沪深300|中证500|上证|深证|创业板|科创50|恒生")
_NOT_CODES = frozenset({"OK", "AI", "US", "USA", "UK", "EU", "PDF", "FAQ", "CEO", "HI", "THE",
                        "AND", "OR", "IT", "IS", "BTW", "LOL", "PS"})


def figures(text: str) -> list[tuple[str, float, float]]:
    """(as written, value, tolerance) for each figure in `text`."""
    if not _DIGIT.search(text):  # a figure has a digit: most small talk is read in one scan
        return []
    body = _NAMES.sub(" ", _DATE.sub(" ", text))
    out: list[tuple[str, float, float]] = []
    for m in _FIGURE.finditer(body):
        sign, digits, unit = m.group(1), m.group(2), (m.group(3) or "")
        plain = digits.replace(",", "")
        try:
            value = float(plain)
        except ValueError:
            continue
        decimals = len(plain.split(".")[1]) if "." in plain else 0
        is_figure = bool(decimals or unit or "," in digits or value >= 100)
        if not is_figure or (not decimals and not unit and 1900 <= value <= 2100):
            continue
        scale = _SCALE.get(unit.lower(), 1.0) if unit not in ("%", "％") else 1.0
        tol = 0.5 * 10 ** -decimals
        if not decimals and not unit and "," not in digits:
            tol = 0.5  # an integer as written
        value = -value if sign in ("-", "−") else value
        out.append((m.group(0).strip(), value * scale, tol * scale))
    return out


# The history and the question are checked again with every answer of a conversation, and a
# run's tool results with every clause of a multi-instrument answer: what each text holds is
# read once and kept (bounded; a text longer than `_CACHED_CHARS` is read every time).
_CACHED_CHARS = 20_000


@functools.lru_cache(maxsize=512)
def _figures_cached(text: str) -> tuple[tuple[str, float, float], ...]:
    return tuple(figures(text))


@functools.lru_cache(maxsize=512)
def _numbers_cached(text: str) -> frozenset[float]:
    return _numbers_of(text)


def _figures_of(text: str) -> tuple[tuple[str, float, float], ...]:
    return _figures_cached(text) if len(text) <= _CACHED_CHARS else tuple(figures(text))


def _numbers_of(text: str) -> frozenset[float]:
    found: set[float] = set()
    written = [m.group(0).replace(",", "") for m in _THOUSANDS.finditer(text)]
    for raw in [*(m.group(0) for m in _TOOL_NUMBER.finditer(text)), *written]:
        try:
            v = float(raw)
        except ValueError:
            continue
        if math.isfinite(v):
            found.add(v)
    return frozenset(found)


def _numbers(texts: Iterable[str]) -> list[float]:
    found: set[float] = set()
    for text in texts:
        found |= _numbers_cached(text) if len(text) <= _CACHED_CHARS else _numbers_of(text)
    return sorted(found)


def _supported(value: float, tol: float, percent: bool, known: list[float]) -> bool:
    targets = [value, value / 100.0] if percent else [value]
    for target in targets:
        t = tol / 100.0 if target is not value else tol
        for k in known:
            if abs(abs(k) - abs(target)) <= t * (1 + 1e-9) + 1e-12:
                return True
    return False


def unsupported_figures(answer: str, tool_texts: Iterable[str], *,
                        also: Iterable[str] = ()) -> list[str]:
    """Figures in `answer` that no tool result (or `also`, e.g. the question) backs."""
    written_here = figures(answer)
    if not written_here:  # most of a conversation: nothing to look up in the history
        return []
    also = list(also)
    known = _numbers([*tool_texts, *also])
    typed = {f[0] for text in also for f in _figures_of(text)}
    out: list[str] = []
    for written, value, tol in written_here:
        if written in typed or written in out:
            continue
        percent = written.endswith(("%", "％"))
        if not _supported(value, tol, percent, known):
            out.append(written)
    return out


# a question that asks for a figure (a price, a move, a ratio, how much ...): its answer
# states one once a data tool ran
_FIGURE_WORDS = re.compile(
    r"\b(?:price|close|closing|closed|quote|open|opened|high|low|volume|returns?|change|"
    r"market cap|p/?e|eps|revenue|earnings|profit|dividends?|rsi|macd|sma|ema|moving average|"
    r"bollinger|52.week|compare|performance|perform|how much|level|worth|yield|rate|trend|"
    r"history|historical|indicators?|technicals?)\b|"
    r"股价|价格|收盘|开盘|最高|最低|成交|涨|跌|市值|市盈率|营收|利润|分红|均线|多少|对比|比较|点位|"
    r"表现|汇率|净值|收益|走势|行情|指标|历史",
    re.IGNORECASE)


def wants_figure(question: str) -> bool:
    """Whether a question asks for a figure (narrower than `wants_data`: a ticker alone, the
    news or a chart do not)."""
    return bool(_FIGURE_WORDS.search(question))


def wants_data(question: str) -> bool:
    """Whether a question asks for market data (a named security or a data word)."""
    if _DATA_WORDS.search(question):
        return True
    return any(m.group(0).lstrip("$") not in _NOT_CODES for m in _CODE.finditer(question))


# --- units and dates (issue 35) --------------------------------------------------------------

# a field whose number is a percent or a ratio (a move in currency is not one)
_PCT_FIELD = re.compile(r"pct|percent|ratio|rate|yield|margin|growth|return|roe|roa|weight|"
                        r"%|占比|比例|幅", re.IGNORECASE)
_DATE_FIELD = re.compile(r"as_?of|date|day|end|period|updated|time", re.IGNORECASE)
_AS_OF = re.compile(r"as_?of", re.IGNORECASE)
_ISO_DAY = re.compile(r"(?:19|20)\d{2}-\d{2}-\d{2}")


def _fields(value: object, key: str = "") -> list[tuple[str, object]]:
    """Every (field name, scalar) in a decoded JSON value (list items take their list's key)."""
    if isinstance(value, dict):
        return [kv for k, v in value.items() for kv in _fields(v, str(k))]
    if isinstance(value, list):
        return [kv for v in value for kv in _fields(v, key)]
    return [(key, value)]


def _decoded(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


# fields of a tool result that are not its figures (where it came from, how it is laid out)
_NOT_FACTS = frozenset({"source", "note", "columns", "rows", "coverage", "dates", "signals",
                        "provider", "url", "fetched_at"})


def _scalars(value: dict[str, object]) -> list[str]:
    return [f"{k}: {v}" for k, v in value.items()
            if k not in _NOT_FACTS and isinstance(v, str | int | float) and v != ""]


def key_facts(tool_texts: Iterable[str], *, limit: int = 400) -> list[str]:
    """One line per tool result with its figures and dates, for a model that answered without
    them (the 1.5B apologised after a good call, or wrote "the tool results do not provide
    figures", with a year of bars and their summary above): its top-level fields, the fields
    of its `summary`, and the latest values of each item that has them (an indicator). The
    rows of a table are left out: their summary covers them."""
    out: list[str] = []
    for text in tool_texts:
        data = _decoded(text)
        if not isinstance(data, dict):
            continue
        parts = _scalars(data)
        for key, value in data.items():
            if key in _NOT_FACTS:
                continue
            if isinstance(value, dict):
                parts += [f"{key} {p}" for p in _scalars(value)]
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, dict) and isinstance(item.get("latest"), dict):
                        name = item.get("name", key)
                        parts += [f"{name} {p}" for p in _scalars(item["latest"])]
        line = "; ".join(parts)
        if line:
            out.append(line if len(line) <= limit else line[:limit].rsplit(";", 1)[0])
    return out


# a number written as a percent ("3.56%", "3.56 percent", "3.56个百分点", "百分之3.56") or as
# an amount of money ("$3.56", "3.56 USD", "3.56 美元")
_NUM = r"(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
_AS_PERCENT = re.compile(
    rf"(?<![\d.]){_NUM}\s*(?:%|％|percent\b|per cent\b|pct\b|个百分点)|百分之\s*{_NUM}",
    re.IGNORECASE)
_AS_MONEY = re.compile(
    rf"(?:US\$|HK\$|[$¥￥€£])\s*{_NUM}|(?<![\d.]){_NUM}\s*"
    r"(?:(?:USD|CNY|RMB|HKD|EUR|dollars?|yuan)\b|美元|港元|欧元|元)", re.IGNORECASE)


def _written(pattern: re.Pattern[str], text: str) -> list[tuple[str, float, float]]:
    """(as written, value, tolerance at the precision written) for each match."""
    out: list[tuple[str, float, float]] = []
    if not _DIGIT.search(text):
        return out
    for m in pattern.finditer(text):
        digits = next(g for g in m.groups() if g).replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        out.append((m.group(0).strip(), float(digits), 0.5 * 10 ** -decimals))
    return out


def _numeric_fields(tool_texts: Iterable[str]) -> list[tuple[str, float]]:
    return [(k, float(v)) for text in tool_texts for k, v in _fields(_decoded(text))
            if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _near(numbers: list[tuple[str, float]], value: float, tol: float) -> list[str]:
    return [k for k, x in numbers if abs(abs(x) - abs(value)) <= tol * (1 + 1e-9)]


def unit_mismatches(answer: str, tool_texts: Iterable[str]) -> list[tuple[str, str]]:
    """(figure, field) for each percentage in `answer` whose number the tool results hold only
    as an amount (e.g. `change` = 3.56 USD written as "3.56%" or "3.56 percent"), never as a
    percent."""
    numbers = _numeric_fields(tool_texts)
    out: list[tuple[str, str]] = []
    for written, value, tol in _written(_AS_PERCENT, answer):
        near = _near(numbers, value, tol)
        as_percent = any(_PCT_FIELD.search(k) for k in near) or any(
            _PCT_FIELD.search(k) for k in _near(numbers, value / 100, tol / 100))
        amounts = [k for k in near if k and not _PCT_FIELD.search(k)]
        if amounts and not as_percent:
            out.append((written, amounts[0]))
    return out


def percent_as_money(answer: str, tool_texts: Iterable[str]) -> list[tuple[str, str]]:
    """(figure, field) for each amount of money in `answer` whose number the tool results
    hold only as a percent (`change_pct` = 2.63 written as "$2.63" or "2.63 美元")."""
    numbers = _numeric_fields(tool_texts)
    out: list[tuple[str, str]] = []
    for written, value, tol in _written(_AS_MONEY, answer):
        near = [k for k in _near(numbers, value, tol) if k]
        percents = [k for k in near if _PCT_FIELD.search(k)]
        if percents and len(percents) == len(near):
            out.append((written, percents[0]))
    return out


def tool_dates(tool_texts: Iterable[str]) -> list[str]:
    """The dates the tool results give their data, latest first: their `as_of` fields, else
    the latest of their other date fields (a series of bars is as of its last bar)."""
    as_of: set[str] = set()
    other: set[str] = set()
    for text in tool_texts:
        for k, v in _fields(_decoded(text)):
            if isinstance(v, str) and _DATE_FIELD.search(k) and (m := _ISO_DAY.match(v)):
                (as_of if _AS_OF.search(k) else other).add(m.group(0))
    found = as_of or set(sorted(other)[-1:])
    return sorted(found, reverse=True)


def states_a_date(answer: str) -> bool:
    """Whether `answer` writes a calendar date (2025-02-14, 2025年2月14日, 2/14 ...)."""
    return bool(_DATE.search(answer) or re.search(
        r"\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}\b|"
        r"\d{1,2}月\d{1,2}日|\b\d{1,2}/\d{1,2}\b", answer))


# --- dates the answer gives its data (issue 35: today's date given as the data's date) -------

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_FULL_DATES = re.compile(
    r"(?<!\d)((?:19|20)\d{2})(?:[-/.]|年)(\d{1,2})(?:[-/.]|月)(\d{1,2})(?!\d)"
    r"|\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? (\d{1,2})(?:st|nd|rd|th)?,? "
    r"((?:19|20)\d{2})\b"
    r"|\b(\d{1,2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? ((?:19|20)\d{2})\b",
    re.IGNORECASE)
_ANY_DAY = re.compile(r"(?<!\d)((?:19|20)\d{2})-?(\d{2})-?(\d{2})(?!\d)")


def _iso(year: str, month: str | int, day: str) -> str | None:
    m, d = int(month), int(day)
    if not (1 <= m <= 12 and 1 <= d <= 31):
        return None
    return f"{int(year):04d}-{m:02d}-{d:02d}"


def stated_dates(text: str) -> list[str]:
    """The calendar dates with a year that `text` writes (2025-02-14, 2025/2/14, 2025年2月14日,
    Feb 14, 2025, 14 Feb 2025), as ISO days, in order of appearance."""
    out: list[str] = []
    if not _DIGIT.search(text):
        return out
    for m in _FULL_DATES.finditer(text):
        if m.group(1):
            day = _iso(m.group(1), m.group(2), m.group(3))
        elif m.group(4):
            day = _iso(m.group(6), _MONTHS.index(m.group(4).lower()[:3]) + 1, m.group(5))
        else:
            day = _iso(m.group(9), _MONTHS.index(m.group(8).lower()[:3]) + 1, m.group(7))
        if day and day not in out:
            out.append(day)
    return out


def _known_days(texts: Iterable[str]) -> set[str]:
    """Every ISO day the texts carry (2025-02-14, 20250214, a timestamp's day, or a date as
    a person writes it)."""
    days: set[str] = set()
    for text in texts:
        days.update(d for m in _ANY_DAY.finditer(text) if (d := _iso(*m.groups())))
        days.update(stated_dates(text))
    return days


def wrong_dates(answer: str, tool_texts: Iterable[str], *, also: Iterable[str] = ()
                ) -> list[str]:
    """Dates `answer` states that lie outside every date the tool results carry (the span
    from their first to their last day), and that the question or the history did not give:
    e.g. today's date written as the date of data that is as of an earlier close. Nothing
    when the tool results carry no date (then nothing says which date is right)."""
    stated = stated_dates(answer)
    if not stated:
        return []
    tool_days = sorted(_known_days(tool_texts))
    if not tool_days:
        return []
    given = _known_days(also)
    first, last = tool_days[0], tool_days[-1]
    return [d for d in stated if d not in given and not first <= d <= last]


# --- the currency an amount is written in --------------------------------------------------------

_CURRENCY_OF = (("HKD", re.compile(r"HK\$|港元|港币|HKD", re.IGNORECASE)),
                ("EUR", re.compile(r"€|欧元|EUR", re.IGNORECASE)),
                ("USD", re.compile(r"US\$|\$|美元|USD|dollars?", re.IGNORECASE)),
                ("CNY", re.compile(r"[¥￥]|人民币|元|CNY|RMB|yuan", re.IGNORECASE)))


def _written_currency(money: str) -> str:
    return next((code for code, pattern in _CURRENCY_OF if pattern.search(money)), "")


def _numbers_under(value: object, top: bool = True) -> list[float]:
    """The numbers of a decoded value and of what it holds, but not of a held object that
    says a currency of its own."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, dict):
        if not top and isinstance(value.get("currency"), str) and value["currency"]:
            return []
        return [x for v in value.values() for x in _numbers_under(v, False)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers_under(v, False)]
    return []


def _priced(value: object) -> list[tuple[str, list[float]]]:
    """(currency, the numbers it holds) for every object of a decoded tool result that says
    its currency: its own fields and those of its summary and rows (a table's currency is
    said once, at its top; 奈飞's closes were written in 元)."""
    out: list[tuple[str, list[float]]] = []
    if isinstance(value, dict):
        currency = value.get("currency")
        if isinstance(currency, str) and currency:
            out.append((currency.upper(), _numbers_under(value)))
        for v in value.values():
            out += _priced(v)
    elif isinstance(value, list):
        for v in value:
            out += _priced(v)
    return out


def wrong_currency(answer: str, tool_texts: Iterable[str]) -> list[tuple[str, str]]:
    """(figure, the tools' currency) for each amount `answer` writes in a currency that no
    tool result holding that number is in (NVDA's 138.85 USD written as "138.85元")."""
    priced = [p for text in tool_texts for p in _priced(_decoded(text))]
    out: list[tuple[str, str]] = []
    for written, value, tol in _written(_AS_MONEY, answer):
        said = _written_currency(written)
        holders = {c for c, numbers in priced
                   if any(abs(abs(x) - value) <= tol * (1 + 1e-9) for x in numbers)}
        if said and holders and said not in holders:
            out.append((written, sorted(holders)[0]))
    return out


# --- a figure given to another instrument than the one whose tool result holds it -----------

_CLAUSE = re.compile(r"[。；;\n]|，|,\s|(?<!\d)\.(?!\d)|\b(?:while|whereas|and|but)\b|而|但|和")


def _by_instrument(tool_texts: Iterable[str]) -> dict[str, tuple[list[str], list[str]]]:
    """symbol -> (the words that name it in an answer: its code and its name, the texts of
    the tool results about it)."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    for text in tool_texts:
        data = _decoded(text)
        if not isinstance(data, dict) or not isinstance(data.get("symbol"), str):
            continue
        symbol = data["symbol"]
        names = [symbol, symbol.split(".")[0]]
        if isinstance(data.get("name"), str) and len(data["name"]) >= 3:
            names.append(data["name"])
        known, texts = out.setdefault(symbol, ([], []))
        known.extend(n for n in names if n not in known)
        texts.append(text)
    return out


def _names(clause: str, words: list[str]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9]){re.escape(w)}(?![A-Za-z0-9])", clause,
                         re.IGNORECASE) for w in words)


def wrong_instrument(answer: str, tool_texts: Iterable[str], *, also: Iterable[str] = ()
                     ) -> list[tuple[str, str, str]]:
    """(figure, the instrument the answer gives it to, the instrument whose tool result holds
    it) for each figure in a clause that names one instrument of the tool results (by code or
    name) when that instrument's results do not hold the figure and another's do. The 1.5B
    wrote "MSFT 的收盘价 … 达到 138.85" with NVDA's close: every number came from a tool, so
    the figures check passed it."""
    texts = list(tool_texts)
    also = list(also)
    by = _by_instrument(texts)
    if len(by) < 2:
        return []
    out: list[tuple[str, str, str]] = []
    for clause in _CLAUSE.split(answer):
        named = [sym for sym, (words, _) in by.items() if _names(clause, words)]
        if len(named) != 1:
            continue
        own = by[named[0]][1]
        for written in unsupported_figures(clause, own, also=also):
            holders = [sym for sym, (_, other) in by.items()
                       if sym != named[0] and not unsupported_figures(written, other)]
            if holders:
                out.append((written, named[0], holders[0]))
    return out
