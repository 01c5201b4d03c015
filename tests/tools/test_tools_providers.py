"""Provider transforms and shared rules: units, report periods, pagination, parsing."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from core.errors import DataUnavailable
from tools.data import DataConfig, configure, http
from tools.data.akshare_provider import AkshareBars, AkshareFinancialAbstract, AkshareSpot
from tools.data.models import BarsQuery, EmptyQuery, FinancialsQuery
from tools.data.sec_provider import Sec13F, SecDocument, local_cik, paginate
from tools.data.units import latest_quarterly_report, num, to_yi
from tools.data.web_provider import DuckDuckGoSearch
from tools.data.yahoo_provider import YahooFinancials


def test_one_billion_yuan_is_ten_yi() -> None:
    assert to_yi(1e9) == 10.0
    assert to_yi(123_456_789_012) == 1234.57
    assert to_yi("-2.5亿") == -2.5
    assert num("1,234.5") == 1234.5 and num("12.3%") == 12.3 and num("-") is None


@pytest.mark.parametrize(("today", "label", "end"), [
    (date(2025, 1, 15), "2024三季报", date(2024, 9, 30)),
    (date(2025, 4, 30), "2024三季报", date(2024, 9, 30)),
    (date(2025, 5, 1), "2025一季报", date(2025, 3, 31)),
    (date(2025, 8, 31), "2025一季报", date(2025, 3, 31)),
    (date(2025, 9, 1), "2025半年报", date(2025, 6, 30)),
    (date(2025, 10, 31), "2025半年报", date(2025, 6, 30)),
    (date(2025, 11, 1), "2025三季报", date(2025, 9, 30)),
    (date(2025, 12, 31), "2025三季报", date(2025, 9, 30)),
])
def test_quarterly_report_selection_by_month(today: date, label: str, end: date) -> None:
    rp = latest_quarterly_report(today)
    assert (rp.label, rp.end) == (label, end)


def test_financial_abstract_in_yi_newest_first(pf: Any) -> None:
    q = FinancialsQuery(code="600519")
    fin = AkshareFinancialAbstract().transform(q, pf._abstract())
    assert [p.label for p in fin.periods] == ["2024三季报", "2024半年报", "2024一季报", "2023年报"]
    latest = fin.periods[0].values
    assert latest["net_profit"] == 608.0 and fin.units["net_profit"] == "亿元"
    assert latest["revenue"] == 1200.0 and latest["eps"] == 48.42
    assert latest["roe_pct"] == 26.3 and fin.units["roe_pct"] == "%"
    annual = AkshareFinancialAbstract().transform(q.model_copy(update={"quarterly": False}),
                                                  pf._abstract())
    assert [p.label for p in annual.periods] == ["2023年报"]


def test_cn_bars_volume_in_shares_and_adjustment_named(pf: Any) -> None:
    q = BarsQuery(code="600519", market="cn", exchange="SH")
    bars = AkshareBars().transform(q, pf.ak_table("stock_zh_a_hist", pf._bars_rows(2)))
    assert bars.rows[0] == ["2024-09-10", 10.0, 11.0, 9.5, 10.5, 1234500.0]
    assert bars.tz == "Asia/Shanghai" and "qfq" in bars.source.note
    assert bars.source.as_of == date(2024, 9, 11)


def test_screener_universe_caps_in_yi(pf: Any) -> None:
    _q, raw = pf.cases()[("akshare", "cn.screener", "stock_zh_a_spot_em")]
    uni = AkshareSpot().transform(EmptyQuery(), raw)
    assert uni.rows[0].market_cap_yi == 21000.0 and uni.rows[0].pe == 22.1


def test_us_financials_in_usd_millions_with_margins(pf: Any) -> None:
    q, raw = pf.cases()[("yfinance", "us.financials", "statements")]
    fin = YahooFinancials().transform(q, raw)
    latest = fin.periods[0]
    assert latest.period == date(2024, 6, 30)
    assert latest.values["revenue"] == 85800.0 and fin.units["revenue"] == "USD mn"
    assert latest.values["eps_diluted"] == 1.4
    assert latest.values["gross_margin_pct"] == pytest.approx(45.8, abs=0.01)


def test_filing_pages_and_index(pf: Any) -> None:
    q, raw = pf.cases()[("sec", "sec.document", "document")]
    doc = SecDocument().transform(q.model_copy(update={"page_chars": 20_000}), raw)
    assert "hidden xbrl" not in "".join(doc.pages)
    assert all(len(p) <= 20_000 for p in doc.pages) and len(doc.pages) >= 2
    assert doc.total_chars == sum(len(p) for p in doc.pages)
    items = [item for page in doc.index for item in page.items]
    assert any(i.startswith("Item 1A") for i in items)
    assert any(i.startswith("Item 7") for i in items)
    first_1a = next(p.page for p in doc.index if any(i.startswith("Item 1A") for i in p.items))
    assert "Item 1A" in doc.pages[first_1a - 1]


def test_paginate_breaks_at_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(10_000))
    pages, index = paginate(text, 20_000)
    assert "".join(pages) == text and all(p.endswith("\n") for p in pages[:-1])
    assert [i.page for i in index] == list(range(1, len(pages) + 1))


def test_13f_merges_lines_and_weights(pf: Any) -> None:
    q, raw = pf.cases()[("sec", "sec.13f", "infotable")]
    h = Sec13F().transform(q, raw)
    assert h.positions == 2 and h.holdings[0].issuer == "APPLE INC"
    assert h.holdings[0].value_usd_mn == 70000.0  # dollars since 2023 filings
    assert h.holdings[0].pct_of_portfolio == pytest.approx(70.0)
    old = Sec13F().transform(q, {**raw, "filed": "2022-11-14"})
    assert old.holdings[0].value_usd_mn == 70_000_000.0  # thousands before 2023


def test_duckduckgo_redirect_links_are_decoded(pf: Any) -> None:
    q, raw = pf.cases()[("duckduckgo", "web.search", "html")]
    res = DuckDuckGoSearch().transform(q, raw)
    assert res.hits[0].url == "https://example.com/nvda"
    assert res.hits[0].title == "NVIDIA earnings" and res.hits[0].snippet == "Revenue rose 94%."


def test_local_cik_from_edgartools_data() -> None:
    assert local_cik("AAPL") == ("0000320193", "Apple Inc.")
    assert local_cik("Berkshire Hathaway") is not None
    assert local_cik("320193") == ("0000320193", "")


async def test_private_urls_are_refused_by_default() -> None:
    with pytest.raises(DataUnavailable, match="private"):
        await http.check_public_url("http://127.0.0.1:8080/x", provider="web")
    with pytest.raises(DataUnavailable, match="http"):
        await http.check_public_url("file:///etc/passwd", provider="web")
    configure(DataConfig(allow_private_urls=True))
    try:
        await http.check_public_url("http://127.0.0.1:8080/x", provider="web")
    finally:
        configure(DataConfig())
