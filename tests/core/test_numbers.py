"""`core.numbers`: amounts, volumes, prices, percentages and dates in both languages, against
figures read from the data packs through the tools (600519, 601318, 600000)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from core import numbers as n
from core.agent.grounding import figures


async def test_a_real_volume_in_wan_yi_for_chinese_and_k_m_b_for_english():
    from tools.market import get_quote

    maotai = await get_quote(symbol="600519")  # hqchart's one day: shares, not lots
    assert maotai.volume == 1883086
    assert n.volume(maotai.volume, "zh") == "188.3万股"
    assert n.volume(maotai.volume, "en") == "1.883M"
    assert n.volume(maotai.volume / n.LOT, "zh", lots=True) == "1.883万手"
    assert n.volume(maotai.volume / n.LOT, "en", lots=True) == "18.83K lots"
    pingan = await get_quote(symbol="601318")
    assert n.volume(pingan.volume, "zh") == "3419万股" and n.volume(pingan.volume, "en") == "34.19M"
    # what is written is what the grounding check reads back, to its written precision
    (_, value, tol), = figures(n.volume(pingan.volume, "zh"))
    assert abs(value - pingan.volume) <= tol


async def test_a_real_price_goes_to_the_a_share_tick():
    from tools.market import get_quote

    spdb = await get_quote(symbol="600000")
    assert (spdb.close, spdb.as_of) == (8.52, date(2024, 9, 19))
    assert n.price(spdb.close, market="cn") == "8.52"
    assert n.price(spdb.change, market="cn") == "0.20"  # 0.2 to the tick, not 0.2000
    maotai = await get_quote(symbol="600519")
    assert n.price(maotai.close, market=maotai.market) == "1,824.98"
    assert n.price(0.61, market="cn") == "0.61"  # not 0.6100
    assert n.price(1.2345, market="cn", symbol="510300") == "1.234"  # an ETF ticks at 0.001
    assert n.price(0.12345, market="us") == "0.1235" and n.price(12.5, market="us") == "12.50"
    assert n.price(None, "zh") == "—" and n.price(None, "en") == "n/a"


async def test_real_statement_amounts_in_yi_without_false_precision():
    from tools.fundamentals import get_financials

    report = await get_financials(symbol="601318")
    values = report.financials.periods[0].values  # 亿元, four significant digits
    assert report.financials.units["total_assets"] == "亿元"
    assert values["total_assets"] == 86600.0
    assert n.amount_yi(values["total_assets"], "zh") == "8.66万亿元"  # not 86,600.00 亿元
    assert n.amount_yi(values["total_assets"], "en") == "CNY 8.66T"
    assert n.amount_yi(values["revenue"], "zh") == "3282亿元"
    assert n.amount_yi(values["revenue"], "en") == "CNY 328.2B"
    assert n.amount_yi(values["net_profit"], "zh") == "260.6亿元"
    assert n.amount_yi(11700, "zh") == "1.17万亿元"  # the 11,700.00 亿元
    assert n.amount(3.2e9, "zh", currency="USD") == "32亿美元"
    assert n.amount(3.2e9, "en", currency="USD") == "$3.2B"
    assert n.amount(-3.2e9, "en", currency="USD") == "-$3.2B"
    assert n.amount(None, "zh") == "—"


@pytest.mark.parametrize(("v", "zh", "en"), [
    (26_460_477_523, "264.6亿", "26.46B"),  # the obv 26,460,477,523.00
    (35_000, "3.5万", "35K"),
    (9_999.6, "1万", "10K"),
    (9_876.5, "9,877", "9.877K"),
    (999_960_000, "10亿", "1B"),  # rounding up carries into the next digit, not "10.00亿"
    (-1.5e8, "-1.5亿", "-150M"),
    (12.0, "12", "12"),
])
def test_compact_in_both_languages(v: float, zh: str, en: str):
    assert n.compact(v, "zh") == zh and n.compact(v, "en") == en


def test_percentages_two_decimals_and_indicator_values_without_false_precision():
    assert n.pct(1.25) == "+1.25%" and n.pct(-0.5) == "-0.50%"
    assert n.pct(89.55, signed=False) == "89.55%" and n.pct(None, "zh") == "—"
    assert n.value(-0.13, "zh") == "-0.13"  # the j -0.1300
    assert n.value(26_460_477_523, "zh") == "264.6亿"
    assert n.value(54.321, "en") == "54.32"
    assert n.value(0.004567, "en") == "0.0046"


async def test_a_real_change_and_date_in_both_languages():
    """600000's last day in the hqchart pack: +0.20 on 8.32 is +2.40%, two decimals in either
    language, and its date ISO in both (the one convention every answer keeps)."""
    from tools.market import get_quote

    spdb = await get_quote(symbol="600000")
    assert (spdb.prev_close, spdb.change_pct) == (8.32, 2.4)
    assert n.pct(spdb.change_pct, "zh") == n.pct(spdb.change_pct, "en") == "+2.40%"
    assert n.pct(-spdb.change_pct, "zh") == "-2.40%"
    assert n.day(spdb.as_of) == "2024-09-19"
    (_, value, _), = figures(n.pct(spdb.change_pct, "zh"))
    assert value == pytest.approx(2.4)


def test_dates_are_iso_in_both_languages():
    assert n.day(date(2024, 9, 19)) == "2024-09-19"
    assert n.day(datetime(2024, 9, 19, 15, 0)) == "2024-09-19"
    assert n.day("2024-09-19T15:00:00") == "2024-09-19"


def test_ticks_are_one_fact_shared_with_the_plan_code():
    from tools import ticks

    assert ticks.tick_size is n.tick_size and ticks.tick_text is n.tick_text
