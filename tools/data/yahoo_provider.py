"""yfinance fetchers: US (and any Yahoo-listed) bars, financial statements and news.

Raw responses are yfinance's DataFrames as JSON tables (or its news list as returned), so
`transform` can be tested on fixtures shaped like yfinance output.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from typing import Any, ClassVar

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data.akshare_provider import news_id
from tools.data.models import (
    Bars,
    BarsQuery,
    FinancialPeriod,
    Financials,
    FinancialsQuery,
    NewsItem,
    NewsList,
    NewsQuery,
)
from tools.data.units import num, to_millions
from tools.models import DataSource

PROVIDER = "yfinance"
_INTRADAY_PERIOD = {"1m": "7d", "5m": "60d", "15m": "60d", "30m": "60d", "1h": "730d"}
_TZ = {"us": "America/New_York", "cn": "Asia/Shanghai", "hk": "Asia/Hong_Kong",
       "crypto": "UTC", "fx": "UTC"}


def _source(dataset: str, as_of: str | date | None, note: str = "") -> DataSource:
    return DataSource.at(PROVIDER, dataset, as_of, note)


class YahooBars(fx.Fetcher[BarsQuery, Bars]):
    provider: ClassVar[str] = PROVIDER
    dataset: ClassVar[str] = "bars"
    result_model: ClassVar[type[Bars]] = Bars
    ttl_s: ClassVar[int] = 900
    priority: ClassVar[int] = 20

    def supports(self, query: BarsQuery) -> bool:
        return bool(query.yahoo) and (query.interval == "1d" or query.interval in _INTRADAY_PERIOD)

    async def fetch(self, query: BarsQuery) -> Any:
        def call() -> Any:
            import yfinance as yf

            period = "10y" if query.interval == "1d" else _INTRADAY_PERIOD[query.interval]
            df = yf.Ticker(query.yahoo).history(period=period, interval=query.interval,
                                                auto_adjust=True)
            return fx.table(df.reset_index())

        return await asyncio.to_thread(call)

    def transform(self, query: BarsQuery, raw: Any) -> Bars:
        cols = raw.get("columns", []) if isinstance(raw, dict) else []
        ts_col = "Datetime" if "Datetime" in cols else "Date"
        rows = fx.rows_of(raw, [ts_col, "Open", "High", "Low", "Close", "Volume"],
                          provider=PROVIDER, what=f"history({query.yahoo})")
        intraday = query.interval != "1d"
        out = [
            [str(r[ts_col]) if intraday else str(r[ts_col])[:10], num(r["Open"]),
             num(r["High"]), num(r["Low"]), num(r["Close"]), num(r["Volume"]) or 0.0]
            for r in rows
        ]
        out = [r for r in out if None not in r[1:5]]
        if not out:
            raise DataUnavailable(f"history({query.yahoo}): no usable bars", provider=PROVIDER)
        return Bars(symbol=query.code, interval=query.interval, tz=_TZ.get(query.market, "UTC"),
                    rows=out, source=_source(f"history {query.yahoo}", str(out[-1][0]),
                                             "split/dividend adjusted"))


# statement -> (yfinance row, our key)
_LINES: dict[str, list[tuple[str, str]]] = {
    "income": [("Total Revenue", "revenue"), ("Gross Profit", "gross_profit"),
               ("Operating Income", "operating_income"), ("Net Income", "net_income"),
               ("Diluted EPS", "eps_diluted")],
    "cashflow": [("Operating Cash Flow", "operating_cash_flow"),
                 ("Capital Expenditure", "capex"), ("Free Cash Flow", "free_cash_flow")],
    "balance": [("Stockholders Equity", "equity"), ("Total Debt", "total_debt"),
                ("Cash And Cash Equivalents", "cash")],
}


class YahooFinancials(fx.Fetcher[FinancialsQuery, Financials]):
    provider: ClassVar[str] = PROVIDER
    dataset: ClassVar[str] = "us.financials"
    result_model: ClassVar[type[Financials]] = Financials
    ttl_s: ClassVar[int] = 86400

    def supports(self, query: FinancialsQuery) -> bool:
        return bool(query.yahoo)

    async def fetch(self, query: FinancialsQuery) -> Any:
        def call() -> Any:
            import yfinance as yf

            t = yf.Ticker(query.yahoo)
            frames = ((t.quarterly_income_stmt, t.quarterly_cashflow, t.quarterly_balance_sheet)
                      if query.quarterly else (t.income_stmt, t.cashflow, t.balance_sheet))
            return {name: fx.table(df.reset_index()) for name, df in
                    zip(("income", "cashflow", "balance"), frames, strict=True)}

        return await asyncio.to_thread(call)

    def transform(self, query: FinancialsQuery, raw: Any) -> Financials:
        if not isinstance(raw, dict) or "income" not in raw:
            raise DataUnavailable("financial statements: unexpected response shape",
                                  provider=PROVIDER)
        values: dict[str, dict[str, float | None]] = {}
        for statement, lines in _LINES.items():
            tab = raw.get(statement) or {"columns": [], "rows": []}
            rows = fx.rows_of(tab, ["index"], provider=PROVIDER, what=f"{statement} statement",
                              allow_empty=statement != "income")
            periods = [c for c in tab["columns"] if c != "index"]
            by_line = {str(r["index"]): r for r in rows}
            for line, key in lines:
                row = by_line.get(line)
                for p in periods:
                    v = None if row is None else row.get(p)
                    eps = num(v) if key == "eps_diluted" else None
                    values.setdefault(p[:10], {})[key] = (
                        round(eps, 4) if eps is not None else
                        None if key == "eps_diluted" else to_millions(v))
        if not values:
            raise DataUnavailable("financial statements: no periods", provider=PROVIDER)
        out: list[FinancialPeriod] = []
        for p in sorted(values, reverse=True):
            vals = values[p]
            rev, gp, op = vals.get("revenue"), vals.get("gross_profit"), vals.get(
                "operating_income")
            ni = vals.get("net_income")
            if rev:
                vals["gross_margin_pct"] = round(gp / rev * 100, 2) if gp is not None else None
                vals["operating_margin_pct"] = round(op / rev * 100, 2) if op is not None else None
                vals["net_margin_pct"] = round(ni / rev * 100, 2) if ni is not None else None
            if all(v is None for v in vals.values()):
                continue
            label = ("Q" if query.quarterly else "FY") + f" ending {p}"
            out.append(FinancialPeriod(period=date.fromisoformat(p), label=label, values=vals))
        units = {key: ("USD" if key == "eps_diluted" else "USD mn")
                 for lines in _LINES.values() for _, key in lines}
        units.update(gross_margin_pct="%", operating_margin_pct="%", net_margin_pct="%")
        return Financials(symbol=query.code, market="us", units=units, periods=out,
                          source=_source(f"financial statements {query.yahoo}",
                                         out[0].period.isoformat() if out else None))


class YahooNews(fx.Fetcher[NewsQuery, NewsList]):
    provider: ClassVar[str] = PROVIDER
    dataset: ClassVar[str] = "news.list"
    result_model: ClassVar[type[NewsList]] = NewsList
    ttl_s: ClassVar[int] = 600
    priority: ClassVar[int] = 20

    def supports(self, query: NewsQuery) -> bool:
        return bool(query.yahoo)

    async def fetch(self, query: NewsQuery) -> Any:
        def call() -> Any:
            import yfinance as yf

            return list(yf.Ticker(query.yahoo).news or [])

        return await asyncio.to_thread(call)

    def transform(self, query: NewsQuery, raw: Any) -> NewsList:
        if not isinstance(raw, list):
            raise DataUnavailable("news: unexpected response shape", provider=PROVIDER)
        items: list[NewsItem] = []
        for entry in raw:
            if not isinstance(entry, dict):
                continue
            c = entry.get("content") if isinstance(entry.get("content"), dict) else None
            if c is not None:  # yfinance >= 0.2.50 layout
                url = ((c.get("canonicalUrl") or {}).get("url")
                       or (c.get("clickThroughUrl") or {}).get("url") or "")
                title, published = str(c.get("title") or ""), str(c.get("pubDate") or "")
                publisher = str((c.get("provider") or {}).get("displayName") or "")
                summary = str(c.get("summary") or c.get("description") or "")
            else:  # older layout
                url, title = str(entry.get("link") or ""), str(entry.get("title") or "")
                ts = entry.get("providerPublishTime")
                published = (datetime.fromtimestamp(int(ts), tz=UTC).isoformat()
                             if isinstance(ts, int | float) else "")
                publisher, summary = str(entry.get("publisher") or ""), ""
            if not title:
                continue
            items.append(NewsItem(id=news_id(url, title), title=title, published=published,
                                  publisher=publisher, url=url, summary=summary[:300]))
        if raw and not items:
            raise DataUnavailable("news: response shape changed (no titles)", provider=PROVIDER)
        items.sort(key=lambda n: n.published, reverse=True)
        return NewsList(symbol=query.code, items=items,
                        source=_source(f"news {query.yahoo}",
                                       items[0].published if items else None))


for _f in (YahooBars(), YahooFinancials(), YahooNews()):
    fx.register(_f)
