"""One set of period and date rules for every tool and the offline analyst (issue 29): the
forms people and models write, relative and absolute, and the ones that must be refused
with a reason rather than crash a tool ("2024年" once became "2024 years": year 0)."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from core.errors import InvalidArguments
from tools.periods import find_period, parse_period


@pytest.mark.parametrize(("raw", "text"), [
    ("3mo", "3mo"), ("1y", "1y"), ("5d", "5d"), ("2w", "14d"), ("1q", "3mo"),
    ("ytd", "ytd"), ("YTD", "ytd"), ("max", "max"), ("all", "max"),
    ("6 months", "6mo"), ("last 3 months", "3mo"), ("past year", "1y"),
    ("last month", "1mo"), ("this week", "7d"), ("this year", "ytd"), ("year to date", "ytd"),
    ("近一年", "1y"), ("近半年", "6mo"), ("最近3个月", "3mo"), ("近5日", "5d"), ("近一周", "7d"),
    ("过去两年", "2y"), ("近十二个月", "12mo"), ("今年", "ytd"), ("今年以来", "ytd"),
    ("年初至今", "ytd"),
])
def test_relative_periods(raw: str, text: str) -> None:
    p = parse_period(raw)
    assert p.text == text and not p.absolute
    assert parse_period(p.text) == p  # the canonical text reads back the same


@pytest.mark.parametrize(("raw", "start", "end"), [
    ("2024", date(2024, 1, 1), date(2024, 12, 31)),
    ("2024年", date(2024, 1, 1), date(2024, 12, 31)),
    ("2020-05", date(2020, 5, 1), date(2020, 5, 31)),
    ("2020/5", date(2020, 5, 1), date(2020, 5, 31)),
    ("May 2020", date(2020, 5, 1), date(2020, 5, 31)),
    ("2020年5月", date(2020, 5, 1), date(2020, 5, 31)),
    ("2024年9月", date(2024, 9, 1), date(2024, 9, 30)),
    ("２０２４年９月", date(2024, 9, 1), date(2024, 9, 30)),  # full-width digits
    ("2024年2月", date(2024, 2, 1), date(2024, 2, 29)),  # a leap February
    ("2019-06-01", date(2019, 6, 1), date(2019, 6, 1)),
    ("2019年6月1日", date(2019, 6, 1), date(2019, 6, 1)),
    ("2019-06-01 2020-06-16", date(2019, 6, 1), date(2020, 6, 16)),
    ("2019-06-01 to 2020-06-16", date(2019, 6, 1), date(2020, 6, 16)),
    ("2019-06-01..2020-06-16", date(2019, 6, 1), date(2020, 6, 16)),
    ("from 2019-06-01 until 2020-06-16", date(2019, 6, 1), date(2020, 6, 16)),
    ("从2019年6月1日到2020年6月16日", date(2019, 6, 1), date(2020, 6, 16)),
    ("2020-01 to 2020-05", date(2020, 1, 1), date(2020, 5, 31)),
    ("2020Q1", date(2020, 1, 1), date(2020, 3, 31)),
    ("2020年三季度", date(2020, 7, 1), date(2020, 9, 30)),
])
def test_absolute_periods(raw: str, start: date, end: date) -> None:
    p = parse_period(raw)
    assert p.absolute and (p.start, p.end) == (start, end)
    assert parse_period(p.text) == p


@pytest.mark.parametrize("raw", [
    "2024y",  # not 2024 years back (year 0): refused, with the calendar forms named
    "200y", "5月", "2024-13", "2024年2月30日", "2020-06-16 2019-06-01", "soon", "", "0d",
])
def test_what_is_not_a_period_is_refused_with_a_reason(raw: str) -> None:
    with pytest.raises(InvalidArguments):
        parse_period(raw)


def test_the_refusal_names_the_forms_accepted() -> None:
    with pytest.raises(InvalidArguments, match=r"2019-06-01 2020-06-16"):
        parse_period("whenever")


@pytest.mark.parametrize(("question", "text"), [
    ("浦发银行2024年9月的走势", "2024-09"),
    ("沪深300 2020年5月走势", "2020-05"),
    ("How did the CSI 300 do in May 2020?", "2020-05"),
    ("How did AAPL do in 2019?", "2019"),
    ("chart 000300 from 2019-06-01 to 2020-06-16", "2019-06-01..2020-06-16"),
    ("600519 2023-12-05 收盘价", "2023-12-05"),
    ("NVDA last 3 months", "3mo"),
    ("NVDA 6mo chart", "6mo"),
    ("IBM history over the last year", "1y"),
    ("AAPL over the past week", "7d"),
    ("英伟达最近3个月走势", "3mo"),
    ("沪深300 近一年表现", "1y"),
    ("茅台今年表现", "ytd"),
])
def test_periods_found_in_questions(question: str, text: str) -> None:
    found = find_period(question)
    assert found is not None and found.text == text


@pytest.mark.parametrize("question", [
    "NVDA latest close", "贵州茅台最近怎么样", "AAPL 2019 revenue",  # a fiscal year, not a span
    "NVDA 5-day moving average", "ICT analysis of NVDA on 1d", "2024年2月30日 茅台",
])
def test_questions_without_a_period(question: str) -> None:
    assert find_period(question) is None


def test_begin_counts_back_from_the_last_bar_in_its_time_zone() -> None:
    tz = timezone(timedelta(hours=8))
    last = datetime(2024, 3, 31, 15, 0, tzinfo=tz)
    assert parse_period("1mo").begin(last) == datetime(2024, 2, 29, 15, 0, tzinfo=tz)
    assert parse_period("1y").begin(last) == datetime(2023, 3, 31, 15, 0, tzinfo=tz)
    assert parse_period("5d").begin(last) == datetime(2024, 3, 26, 15, 0, tzinfo=tz)
    assert parse_period("ytd").begin(last) == datetime(2024, 1, 1, tzinfo=tz)
    assert parse_period("max").begin(last) is None
    assert parse_period("2024-09").begin(last) == datetime(2024, 9, 1, tzinfo=tz)


def test_a_span_reaching_before_1900_is_refused_not_a_crash() -> None:
    with pytest.raises(InvalidArguments):
        parse_period("100y").begin(datetime(1950, 1, 1))
