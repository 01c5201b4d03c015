"""Data modes over real Postgres and a local HTTP server standing in for SEC EDGAR: record then
replay gives identical results, the cache serves repeats, errors are never cached, HTTP 403
and timeouts become DataUnavailable naming the provider, and bars fall back to the snapshot."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import pytest
from aiohttp import web

from core.errors import DataUnavailable
from tools.data import DataConfig, configure, store
from tools.data import fetcher as fx
from tools.data.models import BarsQuery, EmptyQuery, FinancialsQuery, SymbolQuery
from tools.data.sec_provider import Holdings13FQuery
from tools.data.web_provider import SearchQuery
from tools.flows import get_capital_flow
from tools.fundamentals import get_financials
from tools.funds import get_13f_holdings
from tools.market import get_quote, load_bars
from tools.research import (
    get_sec_filing_content,
    get_sec_filing_list,
    scrape_webpage,
    web_search,
)
from tools.screener import screen_cn_stocks

UA = "Bullpen tests tests@example.com"


class FakeSec:
    """A loopback stand-in for data.sec.gov and www.sec.gov."""

    def __init__(self, fixtures: Any) -> None:
        self.fx = fixtures
        self.hits = 0
        self.fail: int | str | None = None  # an HTTP status, or "slow"
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.hits += 1
        if request.headers.get("User-Agent") != UA:
            return web.Response(status=403, text="Your request has been identified as a bot")
        if self.fail == "slow":
            await asyncio.sleep(3)
        elif isinstance(self.fail, int):
            return web.Response(status=self.fail)
        path = request.path
        if path == "/submissions/CIK0000320193.json":
            return web.json_response(self.fx.SUBMISSIONS)
        if path.endswith("/aapl-20240928.htm"):
            return web.Response(text=self.fx.FILING_HTML, content_type="text/html")
        return web.Response(status=404)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None


@pytest.fixture
async def sec(pf: Any) -> AsyncIterator[FakeSec]:
    server = FakeSec(pf)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture(autouse=True)
def _reset(data_config: None) -> None:
    """Every test here changes the data mode; conftest's data_config restores it."""


def use(mode: str, pool: Any = None, sec: FakeSec | None = None, **kw: Any) -> None:
    urls = (("sec_data", sec.url), ("sec_www", sec.url)) if sec else ()
    configure(DataConfig(mode=mode, pool=pool, sec_user_agent=kw.pop("ua", UA), base_urls=urls,
                         **kw))  # type: ignore[arg-type]


async def _sec_session() -> list[Any]:
    listing = await get_sec_filing_list(ticker="AAPL", forms=["10-K"])
    index = await get_sec_filing_content(ticker="AAPL",
                                         accession_number="0000320193-24-000123")
    page = await get_sec_filing_content(ticker="AAPL", accession_number="0000320193-24-000123",
                                        page=2)
    return [listing.model_dump(mode="json"), index.model_dump(mode="json"),
            page.model_dump(mode="json")]


async def test_record_then_replay_is_identical(pg_pool: Any, sec: FakeSec) -> None:
    use("record", pg_pool, sec)
    recorded = await _sec_session()
    assert recorded[0]["filings"][0]["accession_number"] == "0000320193-24-000123"
    assert recorded[1]["content"] is None and recorded[1]["total_pages"] >= 2
    assert recorded[2]["page"] == 2 and recorded[2]["content"]
    rows = await pg_pool.fetch("SELECT provider, dataset FROM provider_recordings")
    assert {(r["provider"], r["dataset"]) for r in rows} == {("sec", "sec.filings"),
                                                             ("sec", "sec.document")}
    await sec.stop()  # the provider is gone: replay must not need it
    use("replay", pg_pool, sec)
    replayed = await _sec_session()
    assert json.dumps(replayed, sort_keys=True) == json.dumps(recorded, sort_keys=True)


async def test_replay_without_recording_says_so(pg_pool: Any, sec: FakeSec) -> None:
    use("replay", pg_pool, sec)
    with pytest.raises(DataUnavailable, match="no recording"):
        await get_sec_filing_list(ticker="AAPL")
    assert sec.hits == 0


async def test_live_cache_serves_repeats(pg_pool: Any, sec: FakeSec) -> None:
    use("live", pg_pool, sec)
    first = await get_sec_filing_list(ticker="AAPL")
    hits = sec.hits
    second = await get_sec_filing_list(ticker="AAPL")
    assert sec.hits == hits and second.filings == first.filings
    assert "from cache" in second.source.note
    row = await pg_pool.fetchrow("SELECT expires_at - fetched_at AS ttl FROM market_data_cache"
                                 " WHERE dataset = 'sec.filings'")
    assert row["ttl"].total_seconds() == 3600  # the dataset's TTL from market_data_ttl


async def test_errors_are_never_cached(pg_pool: Any, sec: FakeSec) -> None:
    use("live", pg_pool, sec)
    sec.fail = 500
    with pytest.raises(DataUnavailable) as err:
        await get_sec_filing_list(ticker="AAPL")
    assert err.value.provider == "sec" and "500" in str(err.value)
    assert await pg_pool.fetchval("SELECT count(*) FROM market_data_cache") == 0
    sec.fail = None
    listing = await get_sec_filing_list(ticker="AAPL")
    assert listing.company == "Apple Inc."


async def test_http_403_names_the_provider(sec: FakeSec) -> None:
    use("live", None, sec, ua="python-requests/2.0")
    with pytest.raises(DataUnavailable) as err:
        await get_sec_filing_list(ticker="AAPL")
    assert err.value.provider == "sec" and "403" in str(err.value)


async def test_timeout_names_the_provider(sec: FakeSec) -> None:
    use("live", None, sec, timeout_s=0.3)
    sec.fail = "slow"
    with pytest.raises(DataUnavailable, match="timed out") as err:
        await get_sec_filing_list(ticker="AAPL")
    assert err.value.provider == "sec"


async def test_missing_sec_user_agent_is_a_clear_error(sec: FakeSec) -> None:
    use("live", None, sec, ua="")
    with pytest.raises(DataUnavailable, match="SEC_USER_AGENT"):
        await get_sec_filing_list(ticker="AAPL")
    assert sec.hits == 0


async def _record(pool: Any, provider: str, dataset: str, query: Any, raw: Any) -> None:
    qjson, key = store.query_key(query)
    await store.recording_put(pool, provider, dataset, key, qjson, fx.dump_raw(raw))


async def test_provider_failure_falls_back_to_the_snapshot(pg_pool: Any) -> None:
    use("replay", pg_pool)  # nothing recorded: every live provider fails
    q = await get_quote(symbol="NVDA")
    assert q.source.provider == "snapshot" and q.as_of == date(2025, 2, 14)
    assert "live providers failed" in q.source.note and "yfinance" in q.source.note


async def test_replayed_akshare_bars_feed_load_bars(pg_pool: Any, pf: Any) -> None:
    use("replay", pg_pool)
    query = BarsQuery(code="600519", market="cn", exchange="SH", kind="stock",
                      yahoo="600519.SS", interval="1d")
    await _record(pg_pool, "akshare", "bars", query,
                  pf.ak_table("stock_zh_a_hist", pf._bars_rows(5)))
    df = await load_bars("600519", "1d", 3)
    assert len(df) == 3 and str(df.index.tz) == "Asia/Shanghai"
    assert df.attrs["provider"] == "akshare" and df.attrs["as_of"] == date(2024, 9, 14)
    assert df["volume"].iloc[-1] == (12345 + 4) * 100


async def test_tools_over_replayed_provider_responses(pg_pool: Any, pf: Any) -> None:
    use("replay", pg_pool)
    cases = pf.cases()
    fin_q = FinancialsQuery(code="600519", market="cn", exchange="SH", yahoo="600519.SS")
    await _record(pg_pool, "akshare", "cn.financials", fin_q,
                  cases[("akshare", "cn.financials", "stock_financial_abstract")][1])
    report = await get_financials(symbol="贵州茅台", periods=2)
    assert report.name == "贵州茅台" and report.latest_quarterly
    assert report.financials.periods[0].values["net_profit"] == 608.0
    assert len(report.financials.periods) == 2

    await _record(pg_pool, "akshare", "cn.screener", EmptyQuery(),
                  cases[("akshare", "cn.screener", "stock_zh_a_spot_em")][1])
    screened = await screen_cn_stocks(min_market_cap_yi=10_000)
    assert [r.code for r in screened.rows] == ["600519"] and screened.matched == 1

    await _record(pg_pool, "akshare", "cn.capital_flow",
                  SymbolQuery(code="600519", market="cn", exchange="SH"),
                  cases[("akshare", "cn.capital_flow", "stock_individual_fund_flow")][1])
    flow = await get_capital_flow(symbol="600519", days=3)
    assert flow.main_net_sum_yi == -2.5 and len(flow.flow.days) == 2

    await _record(pg_pool, "sec", "sec.13f", Holdings13FQuery(cik="0001067983"),
                  cases[("sec", "sec.13f", "infotable")][1])
    h13 = await get_13f_holdings(manager="Berkshire Hathaway", limit=1)
    assert h13.holdings[0].issuer == "APPLE INC" and h13.positions == 2


async def test_web_tools_offline_say_unavailable() -> None:
    res = await web_search(query="nvidia earnings")
    assert not res.available and "offline" in res.note
    with pytest.raises(DataUnavailable, match="offline"):
        await scrape_webpage(url="https://example.com")


async def test_web_search_falls_back_to_duckduckgo(pg_pool: Any, pf: Any) -> None:
    use("replay", pg_pool, tavily_api_key="k")
    q = SearchQuery(query="nvidia earnings", max_results=5)
    await _record(pg_pool, "duckduckgo", "web.search", q, {"html": pf.DDG_HTML})
    res = await web_search(query="nvidia earnings")
    assert res.available and res.source is not None and res.source.provider == "duckduckgo"
