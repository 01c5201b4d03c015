"""Subscription schedules: /subscribe and /tz parsing, fire days, fire instants, descriptions."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from core.errors import InputError
from jobs.schedule import (
    MAX_SYMBOLS,
    Schedule,
    ScheduleError,
    SubscribeSpec,
    calendar_for,
    default_timezone,
    parse_subscribe,
    parse_time,
    valid_timezone,
)

SH = ZoneInfo("Asia/Shanghai")
NY = ZoneInfo("America/New_York")


def _days(fires: list[datetime], zone: ZoneInfo) -> list[date]:
    return [f.astimezone(zone).date() for f in fires]


# ----------------------------------------------------------------------------- /subscribe


def test_empty_arguments_mean_watchlist_at_eight_on_trading_days() -> None:
    spec = parse_subscribe("")
    assert spec == SubscribeSpec(symbols=[], at=time(8, 0), recurrence="tradingdays", pdf=False)
    assert spec.watchlist


def test_full_command_in_any_order() -> None:
    expected = SubscribeSpec(symbols=["NVDA", "茅台"], at=time(20, 30), recurrence="mon", pdf=True)
    assert parse_subscribe("NVDA, 茅台 at 8:30pm mon pdf") == expected
    assert parse_subscribe("PDF 周一 20:30 NVDA 茅台") == expected
    assert parse_subscribe("mon 20:30 NVDA，茅台 Pdf") == expected


def test_symbols_keep_order_as_typed_and_are_deduplicated() -> None:
    spec = parse_subscribe("茅台 600519,0700.HK  NVDA nvda 茅台,,BRK-B")
    assert spec.symbols == ["茅台", "600519", "0700.HK", "NVDA", "BRK-B"]
    assert not spec.watchlist


@pytest.mark.parametrize("words", ["watchlist", "自选", "WATCHLIST at 9:00", "my watchlist"])
def test_watchlist_word_means_watchlist(words: str) -> None:
    assert parse_subscribe(words).symbols == []


@pytest.mark.parametrize(
    ("args", "at"),
    [
        ("at 8:00", time(8, 0)),
        ("at 08:00", time(8, 0)),
        ("08:00", time(8, 0)),
        ("at 8", time(8, 0)),
        ("8am", time(8, 0)),
        ("8 am", time(8, 0)),
        ("8:30pm", time(20, 30)),
        ("at 8:30PM", time(20, 30)),
        ("12am", time(0, 0)),
        ("12pm", time(12, 0)),
        ("23:59", time(23, 59)),
        ("00:00", time(0, 0)),
        ("8点半", time(8, 30)),
        ("21：15", time(21, 15)),
    ],
)
def test_times(args: str, at: time) -> None:
    assert parse_subscribe(f"NVDA {args}") == SubscribeSpec(symbols=["NVDA"], at=at)


@pytest.mark.parametrize(
    ("word", "recurrence"),
    [
        ("daily", "daily"),
        ("每天", "daily"),
        ("every day", "daily"),
        ("weekdays", "weekdays"),
        ("工作日", "weekdays"),
        ("tradingdays", "tradingdays"),
        ("交易日", "tradingdays"),
        ("每个交易日", "tradingdays"),
        ("mon", "mon"),
        ("Friday", "fri"),
        ("周一", "mon"),
        ("周三", "wed"),
        ("周日", "sun"),
        ("星期六", "sat"),
    ],
)
def test_recurrences(word: str, recurrence: str) -> None:
    assert parse_subscribe(f"茅台 {word}").recurrence == recurrence


def test_parse_time_directly() -> None:
    assert parse_time("7:05") == time(7, 5)
    assert parse_time(" 11:59 pm ") == time(23, 59)
    with pytest.raises(ScheduleError):
        parse_time("noon")


@pytest.mark.parametrize("text", ["25:00", "12:61", "24:00", "8:5", "13pm", "0am", "08:00:00"])
def test_impossible_times_are_errors(text: str) -> None:
    with pytest.raises(ScheduleError) as err:
        parse_subscribe(f"NVDA at {text}")
    assert err.value.key == "bad_time"
    assert err.value.params == {"text": text}
    assert err.value.message("en") == f"{text} is not a time of day: use HH:MM, 00:00-23:59"
    assert err.value.message("zh").startswith(f"{text} 不是有效的时间")


def test_time_without_at_is_still_checked() -> None:
    with pytest.raises(ScheduleError, match="25:00 is not a time of day"):
        parse_subscribe("NVDA 25:00")


def test_too_many_symbols() -> None:
    assert len(parse_subscribe(" ".join(f"S{i}" for i in range(MAX_SYMBOLS))).symbols) == 20
    with pytest.raises(ScheduleError) as err:
        parse_subscribe(" ".join(f"S{i}" for i in range(200)))
    assert err.value.key == "too_many_symbols"
    assert err.value.params == {"count": 200, "max": 20}
    assert str(err.value) == "200 symbols is more than one report can hold (20 at most)"
    assert err.value.message("zh") == "200 个标的太多了，一份报告最多 20 个"


def test_two_recurrences() -> None:
    with pytest.raises(ScheduleError) as err:
        parse_subscribe("NVDA mon 周五")
    assert err.value.key == "two_recurrences"
    assert err.value.params == {"first": "mon", "second": "周五"}
    assert "mon" in err.value.message("en") and "周五" in err.value.message("zh")
    assert parse_subscribe("NVDA daily 每天").recurrence == "daily"  # the same one twice is fine


def test_two_times() -> None:
    with pytest.raises(ScheduleError) as err:
        parse_subscribe("NVDA at 8:00 9:00")
    assert err.value.key == "two_times"


@pytest.mark.parametrize("soup", [",", " , ，、 ", ";;", "- / ..."])
def test_empty_token_soup(soup: str) -> None:
    with pytest.raises(ScheduleError) as err:
        parse_subscribe(soup)
    assert err.value.key == "empty"
    assert "/subscribe" in err.value.message("en") and "用法" in err.value.message("zh")


def test_at_without_a_time() -> None:
    with pytest.raises(ScheduleError) as err:
        parse_subscribe("NVDA at")
    assert err.value.key == "missing_time"
    with pytest.raises(ScheduleError) as err:
        parse_subscribe("at NVDA")
    assert err.value.key == "bad_time"


def test_watchlist_and_symbols_together() -> None:
    with pytest.raises(ScheduleError) as err:
        parse_subscribe("watchlist NVDA")
    assert err.value.key == "watchlist_and_symbols"


def test_schedule_error_is_an_input_error() -> None:
    with pytest.raises(InputError):
        parse_subscribe("at 99:99")


# ------------------------------------------------------------------------------- schedule


def test_next_fire_across_dst_in_new_york() -> None:
    s = Schedule(at=time(8), recurrence="daily", tz="America/New_York")
    # 2026-03-08: clocks spring forward (EST -5 -> EDT -4)
    before = s.next_fire(datetime(2026, 3, 7, 9, tzinfo=NY))
    after = s.next_fire(before)
    assert before == datetime(2026, 3, 8, 8, tzinfo=NY)
    assert before.astimezone(UTC) == datetime(2026, 3, 8, 12, tzinfo=UTC)
    assert after.astimezone(NY).time() == time(8) and after - before == timedelta(hours=24)
    # 2026-11-01: clocks fall back (EDT -4 -> EST -5): 25 hours between two 08:00s
    first = s.next_fire(datetime(2026, 10, 31, 7, tzinfo=NY))
    second = s.next_fire(first)
    assert first.astimezone(UTC) == datetime(2026, 10, 31, 12, tzinfo=UTC)
    assert second.astimezone(UTC) == datetime(2026, 11, 1, 13, tzinfo=UTC)
    assert second.astimezone(NY).time() == time(8)


def test_wall_clock_time_skipped_by_dst_fires_an_hour_later() -> None:
    s = Schedule(at=time(2, 30), recurrence="daily", tz="America/New_York")
    fire = s.next_fire(datetime(2026, 3, 8, 0, tzinfo=NY))
    assert fire.astimezone(UTC) == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)  # 03:30 EDT
    # and a repeated wall-clock time fires once
    s = Schedule(at=time(1, 30), recurrence="daily", tz="America/New_York")
    fires = s.fires_between(datetime(2026, 11, 1, tzinfo=NY), datetime(2026, 11, 1, 23, tzinfo=NY))
    assert fires == [datetime(2026, 11, 1, 5, 30, tzinfo=UTC)]


def test_trading_days_skip_national_day_week_and_weekends() -> None:
    s = Schedule(at=time(8), recurrence="tradingdays", tz="Asia/Shanghai", calendar="XSHG")
    fires = s.fires_between(datetime(2026, 9, 26, tzinfo=SH), datetime(2026, 10, 18, tzinfo=SH))
    assert _days(fires, SH) == [
        date(2026, 9, 28), date(2026, 9, 29), date(2026, 9, 30),
        date(2026, 10, 8), date(2026, 10, 9),
        date(2026, 10, 12), date(2026, 10, 13), date(2026, 10, 14), date(2026, 10, 15),
        date(2026, 10, 16),
    ]  # fmt: skip
    assert all(f.astimezone(SH).time() == time(8) for f in fires)
    assert not any(s.is_fire_day(date(2026, 10, d)) for d in range(1, 8))
    assert not s.is_fire_day(date(2026, 10, 10))  # a make-up Saturday: exchanges stay shut
    assert s.next_fire(datetime(2026, 9, 30, 9, tzinfo=SH)) == datetime(2026, 10, 8, 8, tzinfo=SH)


def test_trading_days_outside_the_calendar_fall_back_to_weekdays() -> None:
    trading = Schedule(at=time(8), recurrence="tradingdays", tz="Asia/Shanghai", calendar="XSHG")
    weekdays = Schedule(at=time(8), recurrence="weekdays", tz="Asia/Shanghai")
    start, end = datetime(2027, 6, 1, tzinfo=SH), datetime(2027, 7, 1, tzinfo=SH)
    fires = trading.fires_between(start, end)
    assert fires == weekdays.fires_between(start, end)
    assert len(fires) == 22 and all(d.weekday() < 5 for d in _days(fires, SH))


def test_trading_days_without_calendar_are_every_day() -> None:
    s = Schedule(at=time(0), recurrence="tradingdays", tz="UTC", calendar=None)
    fires = s.fires_between(datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 8, tzinfo=UTC))
    assert len(fires) == 7
    assert str(s.trigger().fields[4]) == "*"  # day_of_week


def test_weekday_recurrence() -> None:
    s = Schedule(at=time(9, 15), recurrence="mon", tz="Asia/Hong_Kong", calendar="XHKG")
    hk = ZoneInfo("Asia/Hong_Kong")
    wednesday = datetime(2026, 5, 6, 12, tzinfo=hk)
    monday = s.next_fire(wednesday)
    assert monday == datetime(2026, 5, 11, 9, 15, tzinfo=hk)
    assert s.next_fire(monday) == monday + timedelta(days=7)  # strictly after
    assert [s.is_fire_day(date(2026, 5, d)) for d in range(11, 18)] == [True] + [False] * 6


def test_fires_between_returns_exactly_the_due_instants() -> None:
    s = Schedule(at=time(8), recurrence="weekdays", tz="America/New_York")
    friday = datetime(2026, 5, 8, 8, tzinfo=NY)
    monday = datetime(2026, 5, 11, 8, tzinfo=NY)
    assert s.fires_between(friday - timedelta(minutes=1), friday) == [friday.astimezone(UTC)]
    assert s.fires_between(friday, friday + timedelta(minutes=1)) == []  # start is excluded
    assert s.fires_between(friday, monday) == [monday.astimezone(UTC)]  # weekend skipped
    fires = s.fires_between(friday - timedelta(days=7), monday)
    assert len(fires) == 6 and all(f.tzinfo is UTC for f in fires)  # Mon 4th .. Mon 11th
    assert fires == sorted(fires)


def test_fires_between_is_empty_for_an_empty_interval() -> None:
    s = Schedule(at=time(8), recurrence="daily", tz="Asia/Shanghai")
    fire = datetime(2026, 5, 8, 8, tzinfo=SH)
    assert s.fires_between(fire, fire) == []
    assert s.fires_between(fire + timedelta(days=3), fire) == []


@pytest.mark.parametrize("recurrence", ["daily", "weekdays", "mon", "sat"])
@pytest.mark.parametrize("tz", ["America/New_York", "Asia/Shanghai", "UTC"])
def test_cron_trigger_agrees_with_next_fire(recurrence: str, tz: str) -> None:
    s = Schedule(at=time(8, 0), recurrence=recurrence, tz=tz)
    trigger = s.trigger()
    assert str(trigger.timezone) == tz
    now = datetime(2026, 2, 27, 12, 34, 56, tzinfo=UTC)  # a Friday
    for _ in range(60):  # through the March and November DST changes for New York
        expected = s.next_fire(now)
        assert trigger.get_next_fire_time(None, now) == expected
        now = expected + timedelta(days=2, minutes=7)
    fire = s.next_fire(datetime(2026, 10, 25, tzinfo=UTC))
    for _ in range(10):  # the scheduler's own stepping: from the previous fire time
        expected = s.next_fire(fire)
        assert trigger.get_next_fire_time(fire, fire) == expected
        fire = expected


def test_trading_day_trigger_is_weekdays_filtered_by_is_fire_day() -> None:
    s = Schedule(at=time(8), recurrence="tradingdays", tz="Asia/Shanghai", calendar="XSHG")
    trigger = s.trigger()
    assert str(trigger.fields[4]) == "mon-fri"
    cron = trigger.get_next_fire_time(None, datetime(2026, 9, 30, 9, tzinfo=SH))
    assert cron == datetime(2026, 10, 1, 8, tzinfo=SH)
    assert not s.is_fire_day(cron.date())


def test_describe() -> None:
    s = Schedule(at=time(8), recurrence="tradingdays", tz="Asia/Shanghai", calendar="XSHG")
    assert s.describe("en") == "08:00 Asia/Shanghai, trading days (Shanghai)"
    assert s.describe("zh") == "每个交易日 08:00（北京时间）"
    us = Schedule(at=time(17, 5), recurrence="fri", tz="America/New_York", calendar="XNYS")
    assert us.describe("en") == "17:05 America/New_York, Fridays"
    assert us.describe("zh") == "每周五 17:05（美东时间）"
    hk = Schedule(at=time(9), recurrence="tradingdays", tz="Asia/Hong_Kong", calendar="XHKG")
    assert hk.describe("zh") == "每个港股交易日 09:00（香港时间）"
    assert hk.describe("en") == "09:00 Asia/Hong_Kong, trading days (Hong Kong)"
    # a zone with no name of its own is called by its IANA name in both languages
    paris = Schedule(at=time(9), recurrence="daily", tz="Europe/Paris")
    assert paris.describe("zh") == "每天 09:00（Europe/Paris）"


def test_schedule_rejects_bad_values() -> None:
    with pytest.raises(ValueError):
        Schedule(at=time(8), recurrence="hourly", tz="UTC")
    with pytest.raises(ValueError):
        Schedule(at=time(8), recurrence="daily", tz="UTC", calendar="XMARS")
    with pytest.raises(ScheduleError):
        Schedule(at=time(8), recurrence="daily", tz="Mars/Olympus")
    s = Schedule(at=time(8), recurrence="daily", tz="UTC")
    with pytest.raises(ValueError, match="timezone-aware"):
        s.next_fire(datetime(2026, 1, 1))


# ------------------------------------------------------------------------------ calendars


@pytest.mark.parametrize(
    ("markets", "calendar"),
    [
        (["cn", "cn"], "XSHG"),
        (["sh", "sz", "bj"], "XSHG"),
        (["hk"], "XHKG"),
        (["us", "us"], "XNYS"),
        (["us", "cn"], "XNYS"),
        (["cn", "us"], "XSHG"),
        (["hk", "cn"], "XHKG"),
        (["crypto"], None),
        (["crypto", "hk"], "XHKG"),  # crypto trades every day: the exchange decides
        (["fx"], "XNYS"),
        ([], "XNYS"),
    ],
)
def test_calendar_for(markets: list[str], calendar: str | None) -> None:
    assert calendar_for(markets) == calendar


def test_calendar_for_empty_uses_the_default() -> None:
    assert calendar_for([], default="XSHG") == "XSHG"


# ----------------------------------------------------------------------------- time zones


@pytest.mark.parametrize(
    ("name", "canonical"),
    [
        ("Asia/Shanghai", "Asia/Shanghai"),
        ("asia/shanghai", "Asia/Shanghai"),
        ("Beijing", "Asia/Shanghai"),
        ("shanghai", "Asia/Shanghai"),
        ("北京", "Asia/Shanghai"),
        ("PRC", "Asia/Shanghai"),
        ("New York", "America/New_York"),
        ("NY", "America/New_York"),
        ("america/new york", "America/New_York"),
        ("US/Eastern", "America/New_York"),
        ("UTC", "UTC"),
        ("utc", "UTC"),
        ("Etc/UTC", "UTC"),
        ("HK", "Asia/Hong_Kong"),
        ("Hong Kong", "Asia/Hong_Kong"),
        ("香港", "Asia/Hong_Kong"),
        ("London", "Europe/London"),
        ("Europe/Copenhagen", "Europe/Copenhagen"),
        ("Asia/Calcutta", "Asia/Kolkata"),
    ],
)
def test_valid_timezone(name: str, canonical: str) -> None:
    assert valid_timezone(name) == canonical


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "CST", "../etc/passwd"])
def test_unknown_timezone(name: str) -> None:
    with pytest.raises(ScheduleError) as err:
        valid_timezone(name)
    assert err.value.key == "unknown_timezone"
    assert "Asia/Shanghai" in err.value.message("en")
    assert "不认识时区" in err.value.message("zh")


def test_default_timezone() -> None:
    assert default_timezone("zh") == "Asia/Shanghai"
    assert default_timezone("en") == "America/New_York"
