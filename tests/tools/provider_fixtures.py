"""Raw provider responses shaped on the real ones, for the fetcher contract tests.

akshare tables take their columns from the function's documented outputs in the installed
`akshare/data/interfaces.json`; where that file lists none (stock_zh_a_hist,
stock_zh_a_hist_min_em) the columns are the ones the function's source assigns. yfinance,
SEC EDGAR, Tavily and DuckDuckGo responses follow their published layouts.
"""

from __future__ import annotations

import functools
import json
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from tools.data.models import (
    BarsQuery,
    DateRangeQuery,
    EmptyQuery,
    FinancialsQuery,
    FundHoldingsQuery,
    FundQuery,
    NewsQuery,
    RankingQuery,
    ShareholdersQuery,
    SymbolQuery,
)
from tools.data.sec_provider import DocumentQuery, FilingsQuery, Holdings13FQuery
from tools.data.web_provider import PageQuery, SearchQuery


@functools.cache
def interfaces() -> dict[str, list[tuple[str, str]]]:
    spec = find_spec("akshare")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "interfaces.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return {i["name"]: [(o["name"], o["type"]) for o in (i.get("outputs") or [])]
            for i in data["interfaces"]}


# columns assigned in akshare's source where interfaces.json documents none
_FROM_SOURCE = {
    "stock_zh_a_hist": [("日期", "object"), ("股票代码", "str"), ("开盘", "float64"),
                        ("收盘", "float64"), ("最高", "float64"), ("最低", "float64"),
                        ("成交量", "int64"), ("成交额", "float64"), ("振幅", "float64"),
                        ("涨跌幅", "float64"), ("涨跌额", "float64"), ("换手率", "float64")],
    "stock_zh_a_hist_min_em": [("时间", "str"), ("开盘", "float64"), ("收盘", "float64"),
                               ("最高", "float64"), ("最低", "float64"), ("成交量", "float64"),
                               ("成交额", "float64"), ("均价", "float64")],
}


def ak_columns(func: str) -> list[tuple[str, str]]:
    cols = interfaces().get(func) or _FROM_SOURCE.get(func)
    assert cols, f"no documented columns for {func}"
    return cols


def _default(name: str, typ: str, i: int) -> Any:
    if "日" in name or name in ("时间", "季度", "报告期", "date"):
        return f"2024-09-{10 + i:02d}"
    if typ.startswith("int"):
        return 1000 + i
    if typ.startswith("float"):
        return 12.5 + i
    return f"{name}{i}"


def ak_table(func: str, rows: list[dict[str, Any]] | None = None, n: int = 3,
             columns: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    """A raw table with exactly the documented columns; `rows` override cell values."""
    cols = columns or ak_columns(func)
    rows = rows or [{} for _ in range(n)]
    return {"columns": [c for c, _ in cols],
            "rows": [[r.get(c, _default(c, t, i)) for c, t in cols] for i, r in enumerate(rows)]}


def _bars_rows(n: int = 5) -> list[dict[str, Any]]:
    return [{"日期": f"2024-09-{10 + i:02d}", "开盘": 10.0 + i, "收盘": 10.5 + i,
             "最高": 11.0 + i, "最低": 9.5 + i, "成交量": 12345 + i} for i in range(n)]


def _abstract() -> dict[str, Any]:
    # stock_financial_abstract: 选项, 指标, then one column per report period (documented as
    # "【具体的报告期】")
    periods = ["20240930", "20240630", "20240331", "20231231"]
    names = [("常用指标", "归母净利润", 6.08e10), ("常用指标", "营业总收入", 1.2e11),
             ("常用指标", "扣非净利润", 6.07e10), ("常用指标", "经营现金流量净额", 3.2e10),
             ("常用指标", "基本每股收益", 48.42), ("常用指标", "净资产收益率(ROE)", 26.3),
             ("常用指标", "毛利率", 91.5), ("常用指标", "资产负债率", 17.2),
             ("常用指标", "商誉", None)]
    return {"columns": ["选项", "指标", *periods],
            "rows": [[opt, name, *[v for _ in periods]] for opt, name, v in names]}


def _yahoo_history(intraday: bool = False) -> dict[str, Any]:
    ts = "Datetime" if intraday else "Date"
    stamps = ([f"2024-09-10T0{9 + i // 4}:{(i % 4) * 15:02d}:00-04:00" for i in range(5)]
              if intraday else [f"2024-09-{10 + i:02d}T00:00:00-04:00" for i in range(5)])
    return {"columns": [ts, "Open", "High", "Low", "Close", "Volume", "Dividends",
                        "Stock Splits"],
            "rows": [[s, 220.0 + i, 222.0 + i, 219.0 + i, 221.0 + i, 5.1e7, 0.0, 0.0]
                     for i, s in enumerate(stamps)]}


def _statement(lines: dict[str, float]) -> dict[str, Any]:
    periods = ["2024-06-30T00:00:00", "2024-03-31T00:00:00"]
    return {"columns": ["index", *periods],
            "rows": [[name, v, v * 0.9] for name, v in lines.items()]}


SUBMISSIONS = {
    "cik": "320193", "name": "Apple Inc.", "tickers": ["AAPL"],
    "filings": {"recent": {
        "accessionNumber": ["0000320193-24-000123", "0000320193-24-000081",
                            "0000320193-24-000069"],
        "filingDate": ["2024-11-01", "2024-08-02", "2024-05-03"],
        "reportDate": ["2024-09-28", "2024-06-29", "2024-03-30"],
        "form": ["10-K", "10-Q", "8-K"],
        "primaryDocument": ["aapl-20240928.htm", "aapl-20240629.htm", "aapl-20240502.htm"],
        "primaryDocDescription": ["10-K", "10-Q", "8-K"],
    }},
}

FILING_HTML = (
    "<html><head><title>aapl-20240928</title></head><body>"
    "<div style=\"display:none\"><ix:header>hidden xbrl</ix:header></div>"
    "<p>UNITED STATES SECURITIES AND EXCHANGE COMMISSION</p><p>FORM 10-K</p>"
    "<p>Item 1. Business</p>" + "<p>Apple designs smartphones and services.</p>" * 400 +
    "<p>Item 1A. Risk Factors</p>" + "<p>The Company's business can be affected.</p>" * 400 +
    "<p>Item 7. Management's Discussion and Analysis</p>" + "<p>Net sales rose.</p>" * 300 +
    "</body></html>"
)

INFO_TABLE = """<?xml version="1.0" encoding="UTF-8"?>
<informationTable xmlns="http://www.sec.gov/edgar/document/thirteenf/informationtable">
  <infoTable><nameOfIssuer>APPLE INC</nameOfIssuer><titleOfClass>COM</titleOfClass>
    <cusip>037833100</cusip><value>69900000000</value>
    <shrsOrPrnAmt><sshPrnamt>300000000</sshPrnamt><sshPrnamtType>SH</sshPrnamtType></shrsOrPrnAmt>
    <investmentDiscretion>DFND</investmentDiscretion></infoTable>
  <infoTable><nameOfIssuer>APPLE INC</nameOfIssuer><titleOfClass>COM</titleOfClass>
    <cusip>037833100</cusip><value>100000000</value>
    <shrsOrPrnAmt><sshPrnamt>400000</sshPrnamt><sshPrnamtType>SH</sshPrnamtType></shrsOrPrnAmt>
    <investmentDiscretion>DFND</investmentDiscretion></infoTable>
  <infoTable><nameOfIssuer>BANK AMER CORP</nameOfIssuer><titleOfClass>COM</titleOfClass>
    <cusip>060505104</cusip><value>30000000000</value>
    <shrsOrPrnAmt><sshPrnamt>700000000</sshPrnamt><sshPrnamtType>SH</sshPrnamtType></shrsOrPrnAmt>
    <investmentDiscretion>DFND</investmentDiscretion></infoTable>
</informationTable>"""

DDG_HTML = (
    '<div class="result"><a rel="nofollow" class="result__a" '
    'href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fnvda&amp;rut=x">NVIDIA '
    '<b>earnings</b></a><a class="result__snippet" href="#">Revenue rose 94%.</a></div>'
)

PAGE_HTML = ("<html><head><title>NVDA beats</title><script>var x=1;</script></head><body>"
             "<nav>menu</nav><article><h1>NVIDIA beats</h1><p>Revenue rose 94% to $35.1bn."
             "</p><a href='https://example.com/more'>more</a></article></body></html>")


def cases() -> dict[tuple[str, str, str], tuple[Any, Any]]:
    """(provider, dataset, name) -> (query, raw response) for every registered fetcher."""
    cn_bars = BarsQuery(code="600519", market="cn", exchange="SH", yahoo="600519.SS")
    return {
        ("akshare", "bars", "stock_zh_a_hist"): (
            cn_bars, ak_table("stock_zh_a_hist", _bars_rows())),
        ("akshare", "bars", "index_zh_a_hist"): (
            cn_bars.model_copy(update={"code": "000300", "kind": "index"}),
            ak_table("index_zh_a_hist", _bars_rows())),
        ("akshare", "bars", "fund_etf_hist_em"): (
            cn_bars.model_copy(update={"code": "510300", "kind": "fund"}),
            ak_table("fund_etf_hist_em", _bars_rows())),
        ("akshare", "bars", "stock_zh_a_hist_min_em"): (
            cn_bars.model_copy(update={"interval": "5m"}),
            ak_table("stock_zh_a_hist_min_em", [
                {"时间": f"2024-09-10 09:{35 + 5 * i}:00", "开盘": 10.0, "收盘": 10.2,
                 "最高": 10.3, "最低": 9.9, "成交量": 100.0} for i in range(4)])),
        ("akshare", "cn.financials", "stock_financial_abstract"): (
            FinancialsQuery(code="600519"), _abstract()),
        ("akshare", "cn.financials", "stock_financial_analysis_indicator"): (
            FinancialsQuery(code="600519"), ak_table(
                "stock_financial_analysis_indicator",
                [{"日期": "2024-09-30", "扣除非经常性损益后的净利润（元）": 6.07e10},
                 {"日期": "2024-06-30"}])),
        ("akshare", "cn.shareholders", "stock_gdfx_top_10_em"): (
            ShareholdersQuery(code="600519", exchange="SH", period="2024-09-30"),
            ak_table("stock_gdfx_top_10_em", [
                {"名次": 1, "股东名称": "中国贵州茅台酒厂(集团)有限责任公司", "持股数": 678291955,
                 "占总股本持股比例": 54.0, "增减": "不变"}, {"名次": 2}])),
        ("akshare", "cn.shareholders", "stock_gdfx_free_top_10_em"): (
            ShareholdersQuery(code="600519", exchange="SH", period="2024-09-30",
                              free_float=True),
            ak_table("stock_gdfx_free_top_10_em")),
        ("akshare", "cn.dividends", "stock_fhps_detail_em"): (
            SymbolQuery(code="600519"), ak_table("stock_fhps_detail_em", [
                {"报告期": "2023-12-31", "现金分红-现金分红比例": 308.76,
                 "现金分红-现金分红比例描述": "10派308.76元(含税)", "现金分红-股息率": 0.0178},
                {"报告期": "2024-06-30"}])),
        ("akshare", "cn.dragon_tiger", "stock_lhb_detail_em"): (
            DateRangeQuery(start="2024-09-09", end="2024-09-13"),
            ak_table("stock_lhb_detail_em", [{"代码": "600519", "龙虎榜净买额": 1.5e8}, {}])),
        ("akshare", "cn.capital_flow", "stock_individual_fund_flow"): (
            SymbolQuery(code="600519", exchange="SH"),
            ak_table("stock_individual_fund_flow", [{"主力净流入-净额": -2.5e8}, {}])),
        ("akshare", "cn.northbound", "stock_hsgt_fund_flow_summary_em"): (
            EmptyQuery(), ak_table("stock_hsgt_fund_flow_summary_em", [
                {"板块": "沪股通", "资金方向": "北向", "成交净买额": 35.2}, {}])),
        ("akshare", "cn.northbound_holdings", "stock_hsgt_hold_stock_em"): (
            EmptyQuery(), ak_table("stock_hsgt_hold_stock_em")),
        ("akshare", "cn.flow_ranking", "stock_main_fund_flow"): (
            RankingQuery(), ak_table("stock_main_fund_flow")),
        ("akshare", "cn.screener", "stock_zh_a_spot_em"): (
            EmptyQuery(), ak_table("stock_zh_a_spot_em", [
                {"代码": "600519", "名称": "贵州茅台", "总市值": 2.1e12, "市盈率-动态": 22.1},
                {"代码": "000001", "名称": "平安银行", "总市值": 2.2e11, "市盈率-动态": 4.8}])),
        ("akshare", "cn.boards", "stock_board_industry_name_em"): (
            RankingQuery(scope="行业"), ak_table("stock_board_industry_name_em")),
        ("akshare", "cn.boards", "stock_board_concept_name_em"): (
            RankingQuery(scope="概念"), ak_table("stock_board_concept_name_em")),
        ("akshare", "cn.indexes", "stock_zh_index_spot_em"): (
            EmptyQuery(), ak_table("stock_zh_index_spot_em")),
        ("akshare", "cn.hot_stocks", "stock_hot_rank_em"): (
            EmptyQuery(), ak_table("stock_hot_rank_em", [{"代码": "SH600519"}, {}])),
        ("akshare", "cn.fund_nav", "fund_etf_fund_info_em"): (
            FundQuery(code="510300"), ak_table("fund_etf_fund_info_em")),
        ("akshare", "cn.fund_holdings", "fund_portfolio_hold_em"): (
            FundHoldingsQuery(code="110022"), ak_table("fund_portfolio_hold_em", [
                {"季度": "2024年3季度股票投资明细", "占净值比例": 9.5},
                {"季度": "2024年3季度股票投资明细", "占净值比例": 8.1},
                {"季度": "2024年2季度股票投资明细"}])),
        ("akshare", "news.list", "stock_news_em"): (
            NewsQuery(code="600519", market="cn"), ak_table("stock_news_em")),
        ("yfinance", "bars", "history"): (
            BarsQuery(code="AAPL", market="us", yahoo="AAPL"), _yahoo_history()),
        ("yfinance", "bars", "history intraday"): (
            BarsQuery(code="AAPL", market="us", yahoo="AAPL", interval="15m"),
            _yahoo_history(intraday=True)),
        ("yfinance", "us.financials", "statements"): (
            FinancialsQuery(code="AAPL", market="us", yahoo="AAPL"),
            {"income": _statement({"Total Revenue": 8.58e10, "Gross Profit": 3.93e10,
                                   "Operating Income": 2.53e10, "Net Income": 2.14e10,
                                   "Diluted EPS": 1.4}),
             "cashflow": _statement({"Operating Cash Flow": 2.87e10,
                                     "Free Cash Flow": 2.62e10}),
             "balance": _statement({"Stockholders Equity": 6.67e10})}),
        ("yfinance", "news.list", "news"): (
            NewsQuery(code="AAPL", market="us", yahoo="AAPL"),
            [{"id": "abc", "content": {
                "title": "Apple unveils iPhone", "summary": "New models.",
                "pubDate": "2024-09-10T17:00:00Z", "provider": {"displayName": "Reuters"},
                "canonicalUrl": {"url": "https://example.com/apple"}}}]),
        ("sec", "sec.filings", "submissions"): (FilingsQuery(cik="0000320193"), SUBMISSIONS),
        ("sec", "sec.document", "document"): (
            DocumentQuery(cik="0000320193", accession_number="0000320193-24-000123",
                          primary_document="aapl-20240928.htm"),
            {"url": "https://www.sec.gov/Archives/x", "body": FILING_HTML}),
        ("sec", "sec.13f", "infotable"): (
            Holdings13FQuery(cik="0001067983"),
            {"company": "BERKSHIRE HATHAWAY INC", "filed": "2024-11-14",
             "report_date": "2024-09-30", "accession": "0000950123-24-011775",
             "xml": INFO_TABLE}),
        ("tavily", "web.search", "search"): (
            SearchQuery(query="nvidia earnings"),
            {"query": "nvidia earnings", "answer": "Revenue rose.", "results": [
                {"title": "NVIDIA results", "url": "https://example.com/n", "content": "x",
                 "score": 0.9}]}),
        ("duckduckgo", "web.search", "html"): (
            SearchQuery(query="nvidia earnings"), {"html": DDG_HTML}),
        ("web", "web.page", "page"): (
            PageQuery(url="https://example.com/nvda"),
            {"url": "https://example.com/nvda", "html": PAGE_HTML}),
    }
