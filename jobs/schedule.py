"""Subscription schedules: parse ``/subscribe`` and ``/tz``, compute fire times (pure, sync).

``/subscribe [SYMBOLS] [at HH:MM] [daily|weekdays|tradingdays|mon..sun] [pdf]`` becomes a
:class:`SubscribeSpec`; with the user's time zone and :func:`calendar_for` of the symbols'
markets it becomes a :class:`Schedule`, which knows its APScheduler ``CronTrigger``, whether a
local date is a fire day, and every fire instant in an interval (to fire what is due and to
catch up after downtime).

Trading days come from ``exchange_calendars``; each calendar is loaded once per process. A
calendar covers a limited range (XSHG ends 2026-12-31, XHKG and XNYS about a year after the
process loads them): outside it ``tradingdays`` falls back to Monday-Friday, so reports keep
coming (on the odd holiday too) rather than stop. A date is a fire day when the subscriber's
local date is a session of the calendar.

Wall-clock times follow the zone's rules: a time skipped by a DST change fires at the same
instant one hour later (02:30 -> 03:30), and a time that occurs twice fires once, the first time.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from importlib import resources
from typing import Any, Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

import exchange_calendars as xcals
from apscheduler.triggers.cron import CronTrigger

from core import localize, numbers
from core.errors import InputError
from core.words import has, t

__all__ = [
    "DEFAULT_AT",
    "DEFAULT_RECURRENCE",
    "MAX_SYMBOLS",
    "RECURRENCES",
    "Schedule",
    "ScheduleError",
    "SubscribeSpec",
    "calendar_for",
    "default_timezone",
    "parse_subscribe",
    "parse_time",
    "valid_timezone",
    "zone_name",
]

RECURRENCES: Final = (
    "daily", "weekdays", "tradingdays", "mon", "tue", "wed", "thu", "fri", "sat", "sun",
)  # fmt: skip
WEEKDAYS: Final[tuple[str, ...]] = RECURRENCES[3:]  # index == date.weekday()
MAX_SYMBOLS: Final = 20
DEFAULT_AT: Final = time(8, 0)
DEFAULT_RECURRENCE: Final = "tradingdays"
_MAX_SCAN_DAYS: Final = 400  # next_fire looks this far ahead (a gap is never longer than ~2 weeks)

# ---------------------------------------------------------------------------------- errors

class ScheduleError(InputError):
    """A ``/subscribe`` or ``/tz`` argument that cannot be used.

    ``key`` names the problem (its catalogue key is ``subs.error_<key>``), ``params`` fill its
    sentence, and :meth:`message` says it in the user's language; ``str(error)`` is the
    English sentence.
    """

    def __init__(self, key: str, **params: Any) -> None:
        if not has(f"subs.error_{key}"):
            raise ValueError(f"unknown ScheduleError key {key!r}")
        self.key = key
        self.params = params
        super().__init__(self.message("en"))

    def message(self, lang: str = "en") -> str:
        """The sentence for the user in `lang`."""
        return t(f"subs.error_{self.key}", lang, **self.params)


# --------------------------------------------------------------------------------- parsing


@dataclass(frozen=True, slots=True)
class SubscribeSpec:
    """What ``/subscribe`` asked for. No ``symbols`` means the user's watchlist."""

    symbols: list[str] = field(default_factory=list)  # raw tokens as typed, in order, unique
    at: time = DEFAULT_AT
    recurrence: str = DEFAULT_RECURRENCE  # one of RECURRENCES
    pdf: bool = False

    @property
    def watchlist(self) -> bool:
        """True when the subscription follows the user's watchlist."""
        return not self.symbols


_SEPARATORS = re.compile(r"[\s,，、;；]+")
_EDGE_PUNCT = "[](){}<>\"'“”‘’「」【】《》"
_CLOCK = re.compile(r"(\d+)\s*[:：]\s*(\d+)")
_AMPM = re.compile(r"(\d+)(?:\s*[:：]\s*(\d+))?\s*([ap])\.?m\.?", re.IGNORECASE)
_DIAN = re.compile(r"(\d+)\s*点\s*(?:(半)|(\d+)\s*分?)?")
_TIME_LIKE = re.compile(
    r"\d+(?:[:：]\d+)+|\d+(?:[:：]\d+)?[ap]\.?m\.?|\d+点(?:半|\d+分?)?", re.IGNORECASE
)
_WATCHLIST_WORDS: Final = frozenset({"watchlist", "自选", "自选股", "我的自选"})
_PDF_WORDS: Final = frozenset({"pdf"})


def _recurrence_words() -> dict[str, str]:
    words: dict[str, str] = {
        "daily": "daily", "everyday": "daily", "每天": "daily", "每日": "daily", "天天": "daily",
        "weekdays": "weekdays", "weekday": "weekdays", "workdays": "weekdays",
        "工作日": "weekdays", "每个工作日": "weekdays",
        "tradingdays": "tradingdays", "tradingday": "tradingdays", "trading-days": "tradingdays",
        "trading_days": "tradingdays", "交易日": "tradingdays", "每个交易日": "tradingdays",
    }  # fmt: skip
    english = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    for short, long_ in zip(WEEKDAYS, english, strict=True):
        for word in (short, long_, long_ + "s"):
            words[word] = short
    words.update({"tues": "tue", "thur": "thu", "thurs": "thu"})
    chinese = ("一", "二", "三", "四", "五", "六", "日")
    for short, digit in zip(WEEKDAYS, chinese, strict=True):
        for stem in ("周", "星期", "礼拜"):
            words[stem + digit] = words["每" + stem + digit] = short
    for stem in ("周", "星期", "礼拜"):
        words[stem + "天"] = words["每" + stem + "天"] = "sun"
    return words


_RECURRENCE_WORDS: Final = _recurrence_words()


def parse_time(text: str) -> time:
    """A time of day from ``8:00``, ``08:00``, ``8am``, ``8:30pm``, ``8点``, ``8点半``.

    Raises :class:`ScheduleError` (``bad_time``) for anything else, e.g. ``25:00`` or ``12:61``.
    """
    s = text.strip()
    hour: int | None = None
    minute = 0
    if m := _CLOCK.fullmatch(s):
        hour, minute = int(m[1]), int(m[2])
        if len(m[2]) != 2:
            hour = None
    elif m := _AMPM.fullmatch(s):
        h, minute = int(m[1]), int(m[2] or 0)
        if 1 <= h <= 12 and (m[2] is None or len(m[2]) == 2):
            hour = h % 12 + (12 if m[3].lower() == "p" else 0)
    elif m := _DIAN.fullmatch(s):
        hour, minute = int(m[1]), 30 if m[2] else int(m[3] or 0)
    if hour is None or not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise ScheduleError("bad_time", text=s or repr(text))
    return time(hour, minute)


def _tokens(args: str) -> list[str]:
    """Words of the argument string: separators and edge brackets/quotes stripped."""
    text = re.sub(r"\bevery\s+day\b", "daily", args, flags=re.IGNORECASE)
    text = re.sub(r"\btrading\s+days?\b", "tradingdays", text, flags=re.IGNORECASE)
    text = re.sub(r"\b(?:every|each)\s+(?=\w)", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\bmy\s+watchlist\b", "watchlist", text, flags=re.IGNORECASE)
    text = re.sub(r"(?<=\d)\s+(?=[ap]\.?m\b)", "", text, flags=re.IGNORECASE)  # 8 am -> 8am
    words = (w.strip(_EDGE_PUNCT) for w in _SEPARATORS.split(text))
    return [w for w in words if any(ch.isalnum() for ch in w)]


def parse_subscribe(args: str) -> SubscribeSpec:
    """Parse the arguments of ``/subscribe`` (everything after the command).

    Order is free: ``NVDA, 茅台 at 8:30pm mon pdf`` and ``pdf 周一 20:30 NVDA 茅台`` are the same.
    Empty arguments (or only ``watchlist``/``自选``) mean the watchlist at 08:00 on trading days.
    """
    tokens = _tokens(args)
    if not tokens and args.strip():
        raise ScheduleError("empty", text=repr(args.strip()))
    symbols: dict[str, str] = {}  # casefolded -> as typed
    at: tuple[str, time] | None = None
    recurrence: tuple[str, str] | None = None
    pdf = watchlist = False
    i = 0
    while i < len(tokens):
        token, word = tokens[i], tokens[i].casefold()
        i += 1
        if word == "at":
            if i == len(tokens):
                raise ScheduleError("missing_time")
            token, i = tokens[i], i + 1
            when = parse_time(f"{token}:00" if token.isdigit() else token)
            at = _one(at, (token, when), "two_times")
        elif _TIME_LIKE.fullmatch(token):
            at = _one(at, (token, parse_time(token)), "two_times")
        elif word in _RECURRENCE_WORDS:
            recurrence = _one(recurrence, (token, _RECURRENCE_WORDS[word]), "two_recurrences")
        elif word in _PDF_WORDS:
            pdf = True
        elif word in _WATCHLIST_WORDS:
            watchlist = True
        else:
            symbols.setdefault(word, token)
    found = list(symbols.values())
    if watchlist and found:
        raise ScheduleError("watchlist_and_symbols", symbols=", ".join(found))
    if len(found) > MAX_SYMBOLS:
        raise ScheduleError("too_many_symbols", count=len(found), max=MAX_SYMBOLS)
    return SubscribeSpec(
        symbols=found,
        at=at[1] if at else DEFAULT_AT,
        recurrence=recurrence[1] if recurrence else DEFAULT_RECURRENCE,
        pdf=pdf,
    )


def _one[T](seen: tuple[str, T] | None, new: tuple[str, T], key: str) -> tuple[str, T]:
    """``new`` unless a different value was already given (then ``ScheduleError(key)``)."""
    if seen is not None and seen[1] != new[1]:
        raise ScheduleError(key, first=seen[0], second=new[0])
    return seen or new


# ------------------------------------------------------------------------ trading calendars

_MARKET_CALENDARS: Final[dict[str, str | None]] = {
    "cn": "XSHG", "sh": "XSHG", "sz": "XSHG", "bj": "XSHG",
    "hk": "XHKG",
    "us": "XNYS",
    "crypto": None,
}  # fmt: skip


def calendar_for(markets: Sequence[str], *, default: str | None = "XNYS") -> str | None:
    """The exchange calendar for a subscription whose symbols trade in ``markets``.

    Markets are the symbols directory's (``cn``, ``hk``, ``us``, ``crypto``, ``fx``; ``sh``,
    ``sz``, ``bj`` also mean A-shares). The first market that keeps exchange hours decides:
    A-shares -> XSHG, Hong Kong -> XHKG, anything else (US, FX, unknown) -> XNYS. Crypto trades
    every day, so crypto only -> ``None``. No markets at all (an empty watchlist) -> ``default``.
    """
    if not markets:
        return default
    for market in markets:
        key = market.strip().casefold()
        code = _MARKET_CALENDARS.get(key, "XNYS")
        if code is not None:
            return code
    return None


@dataclass(frozen=True, slots=True)
class _Sessions:
    first: date
    last: date
    days: frozenset[date]


@functools.cache
def _sessions(code: str) -> _Sessions:
    """The session dates of an exchange calendar (built once per process: ~0.1-1 s)."""
    with warnings.catch_warnings():  # exchange_calendars' own use of a deprecated pandas API
        warnings.filterwarnings("ignore", message="Series.values returning an ndarray")
        calendar = xcals.get_calendar(code)
    days = frozenset(ts.date() for ts in calendar.sessions)
    return _Sessions(calendar.first_session.date(), calendar.last_session.date(), days)


def _is_trading_day(code: str, day: date) -> bool:
    """A session of ``code``; Monday-Friday outside the calendar's range."""
    sessions = _sessions(code)
    if sessions.first <= day <= sessions.last:
        return day in sessions.days
    return day.weekday() < 5


# -------------------------------------------------------------------------------- schedule


@dataclass(frozen=True, slots=True)
class Schedule:
    """When a subscription fires: ``at`` wall-clock time in ``tz`` on ``recurrence`` days.

    ``calendar`` (an ``exchange_calendars`` code: XSHG, XHKG, XNYS) decides ``tradingdays``;
    ``None`` makes every day a trading day (crypto).
    """

    at: time
    recurrence: str  # one of RECURRENCES
    tz: str
    calendar: str | None = None

    def __post_init__(self) -> None:
        if self.recurrence not in RECURRENCES:
            raise ValueError(f"recurrence must be one of {RECURRENCES}, not {self.recurrence!r}")
        if self.at.tzinfo is not None:
            raise ValueError("at is a wall-clock time: it must not carry a tzinfo")
        if self.calendar is not None and self.calendar not in xcals.get_calendar_names():
            raise ValueError(f"unknown exchange calendar {self.calendar!r}")
        _zone(self.tz)

    @property
    def zone(self) -> ZoneInfo:
        """The subscriber's time zone."""
        return _zone(self.tz)

    def trigger(self) -> CronTrigger:
        """An APScheduler cron trigger for ``at`` in ``tz``.

        ``tradingdays`` fires Monday-Friday (every day without a calendar): the job must still
        skip a fire whose local date fails :meth:`is_fire_day` (an exchange holiday).
        """
        return CronTrigger(
            day_of_week=self._cron_days(),
            hour=self.at.hour,
            minute=self.at.minute,
            second=self.at.second,
            timezone=self.zone,
        )

    def _cron_days(self) -> str:
        if self.recurrence == "daily" or (
            self.recurrence == "tradingdays" and self.calendar is None
        ):
            return "*"
        if self.recurrence in ("weekdays", "tradingdays"):
            return "mon-fri"
        return self.recurrence

    def is_fire_day(self, d: date) -> bool:
        """Whether the subscription fires on local date ``d`` (in ``tz``)."""
        match self.recurrence:
            case "daily":
                return True
            case "weekdays":
                return d.weekday() < 5
            case "tradingdays":
                return self.calendar is None or _is_trading_day(self.calendar, d)
            case _:
                return WEEKDAYS.index(self.recurrence) == d.weekday()

    def fire_on(self, d: date) -> datetime:
        """The instant ``at`` on local date ``d`` (whether or not ``d`` is a fire day)."""
        local = datetime.combine(d, self.at, tzinfo=self.zone)
        return local.astimezone(UTC).astimezone(self.zone)  # resolves DST gaps and folds

    def next_fire(self, after: datetime) -> datetime:
        """The first fire strictly after ``after`` (tz-aware), in the schedule's zone."""
        _require_aware(after, "after")
        day = after.astimezone(self.zone).date()
        for _ in range(_MAX_SCAN_DAYS):
            if self.is_fire_day(day):
                fire = self.fire_on(day)
                if fire > after:
                    return fire
            day += timedelta(days=1)
        raise RuntimeError(f"no fire within {_MAX_SCAN_DAYS} days of {after}")  # unreachable

    def fires_between(self, start: datetime, end: datetime) -> list[datetime]:
        """Every fire instant in ``(start, end]``, in UTC, oldest first."""
        _require_aware(start, "start")
        _require_aware(end, "end")
        fires: list[datetime] = []
        if end <= start:
            return fires
        fire = self.next_fire(start)
        while fire <= end:
            fires.append(fire.astimezone(UTC))
            fire = self.next_fire(fire)
        return fires

    def describe(self, lang: str = "en") -> str:
        """For the user: ``08:00 Asia/Shanghai, trading days (Shanghai)`` in English,
        ``每个交易日 08:00（北京时间）`` in Chinese: the one place its zone is named."""
        hhmm = self.at.strftime("%H:%M") if not self.at.second else self.at.isoformat()
        return t("subs.schedule", lang, at=hhmm, tz=zone_name(self.tz, lang),
                 days=self._days(lang))

    def _days(self, lang: str) -> str:
        if self.recurrence == "daily":
            return t("subs.days_daily", lang)
        if self.recurrence == "weekdays":
            return t("subs.days_weekdays", lang)
        if self.recurrence == "tradingdays":
            if self.calendar is None:
                return t("subs.days_crypto", lang)
            return t("subs.days_trading", lang,
                     calendar=localize.word("subs.calendar_", self.calendar, lang))
        return t("subs.days_" + self.recurrence, lang)


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, not {value!r}")


# ------------------------------------------------------------------------------ time zones

_TZ_ALIASES: Final[dict[str, str]] = {
    "beijing": "Asia/Shanghai", "shanghai": "Asia/Shanghai", "china": "Asia/Shanghai",
    "北京": "Asia/Shanghai", "上海": "Asia/Shanghai", "中国": "Asia/Shanghai",
    "深圳": "Asia/Shanghai", "北京时间": "Asia/Shanghai", "shenzhen": "Asia/Shanghai",
    "hk": "Asia/Hong_Kong", "hong kong": "Asia/Hong_Kong", "hkt": "Asia/Hong_Kong",
    "香港": "Asia/Hong_Kong",
    "new york": "America/New_York", "ny": "America/New_York", "nyc": "America/New_York",
    "纽约": "America/New_York", "eastern": "America/New_York", "et": "America/New_York",
    "est": "America/New_York", "edt": "America/New_York",
    "chicago": "America/Chicago", "芝加哥": "America/Chicago",
    "los angeles": "America/Los_Angeles", "la": "America/Los_Angeles",
    "san francisco": "America/Los_Angeles", "sf": "America/Los_Angeles",
    "pacific": "America/Los_Angeles", "pt": "America/Los_Angeles",
    "pst": "America/Los_Angeles", "pdt": "America/Los_Angeles",
    "洛杉矶": "America/Los_Angeles", "旧金山": "America/Los_Angeles",
    "london": "Europe/London", "uk": "Europe/London", "伦敦": "Europe/London",
    "tokyo": "Asia/Tokyo", "jst": "Asia/Tokyo", "东京": "Asia/Tokyo",
    "singapore": "Asia/Singapore", "sg": "Asia/Singapore", "新加坡": "Asia/Singapore",
    "taipei": "Asia/Taipei", "台北": "Asia/Taipei",
    "sydney": "Australia/Sydney", "悉尼": "Australia/Sydney",
    "utc": "UTC", "gmt": "UTC", "z": "UTC", "zulu": "UTC",
}  # fmt: skip
# The zones a reader knows by a name of their own (北京时间, 美东时间): the catalogue's words for
# them; any other zone is said by its IANA name, in both languages.
_ZONE_WORDS: Final[dict[str, str]] = {
    "Asia/Shanghai": "subs.zone_beijing", "Asia/Hong_Kong": "subs.zone_hong_kong",
    "Asia/Taipei": "subs.zone_taipei", "Asia/Tokyo": "subs.zone_tokyo",
    "Asia/Singapore": "subs.zone_singapore", "America/New_York": "subs.zone_new_york",
    "America/Chicago": "subs.zone_chicago", "America/Los_Angeles": "subs.zone_los_angeles",
    "Europe/London": "subs.zone_london", "Australia/Sydney": "subs.zone_sydney",
    "UTC": "subs.zone_utc",
}  # fmt: skip
_UTC_NAMES: Final = frozenset({"Etc/UTC", "Etc/UCT", "Etc/Universal", "Etc/Zulu", "Etc/GMT"})


def _tz_key(name: str) -> str:
    return " ".join(name.replace("_", " ").split()).casefold()


@functools.cache
def _tz_names() -> dict[str, str]:
    """Normalised key -> IANA name, for every zone this machine knows."""
    return {_tz_key(name): name for name in available_timezones()}


@functools.cache
def _tz_links() -> tuple[frozenset[str], dict[str, str]]:
    """(zones named in zone.tab, link -> target) from the ``tzdata`` package; empty if absent."""
    try:
        root = resources.files("tzdata").joinpath("zoneinfo")
        tab = root.joinpath("zone.tab").read_text(encoding="utf-8")
        zi = root.joinpath("tzdata.zi").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        return frozenset(), {}
    zones = frozenset(
        line.split("\t")[2] for line in tab.splitlines() if line and not line.startswith("#")
    )
    links = {p[2]: p[1] for p in (line.split() for line in zi.splitlines()) if p[:1] == ["L"]}
    return zones, links


def _canonical(name: str) -> str:
    """Follow legacy links (US/Eastern, PRC, Asia/Calcutta), but keep every country's zones
    (Europe/Copenhagen stays, though the database links it to Europe/Berlin)."""
    zones, links = _tz_links()
    if name not in zones:
        name = links.get(name, name)
    return "UTC" if name in _UTC_NAMES else name


@functools.cache
def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ScheduleError("unknown_timezone", name=repr(name)) from exc


def zone_name(tz: str, lang: str) -> str:
    """A time zone as the reader says it: 北京时间 / 美东时间 in Chinese; English keeps the IANA
    name (Asia/Shanghai), which is also what any zone without a name of its own is called."""
    key = _ZONE_WORDS.get(tz)
    return t(key, lang) if key else tz


def valid_timezone(name: str) -> str:
    """The canonical IANA name for what a user typed after ``/tz``.

    Case and ``_``/spaces do not matter (``asia/shanghai``, ``America/New York``), and common
    names work: ``Beijing``, ``北京``, ``HK``, ``New York``, ``NY``, ``London``, ``UTC``.
    Raises :class:`ScheduleError` (``unknown_timezone``) otherwise.
    """
    key = _tz_key(name)
    found = _TZ_ALIASES.get(key) or _tz_names().get(key)
    if found is None:
        raise ScheduleError("unknown_timezone", name=repr(name.strip()))
    canonical = _canonical(found)
    _zone(canonical)
    return canonical


def default_timezone(lang: str) -> str:
    """The time zone assumed before ``/tz``: Asia/Shanghai for Chinese, else America/New_York."""
    return numbers.home_zone(lang)
