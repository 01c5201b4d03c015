"""Reading tools: news (list, then content), SEC filings (list, then index, then a page),
web search and page scraping. Lists first, bodies on demand, so the LLM pulls only what it
needs into its context.
"""

from __future__ import annotations

from collections import OrderedDict
from datetime import date
from typing import Annotated

from pydantic import BaseModel, Field

from core.errors import DataUnavailable, InvalidArguments, UnknownSymbol
from tools.data import fetcher as fx
from tools.data import providers
from tools.data.config import get_config
from tools.data.models import NewsItem, NewsList, NewsQuery
from tools.data.sec_provider import (
    DocumentQuery,
    Filing,
    FilingDocument,
    FilingList,
    FilingsQuery,
    PageIndex,
    local_cik,
)
from tools.data.web_provider import Page, PageQuery, SearchHit, SearchQuery, SearchResults
from tools.models import DataSource, tool
from tools.symbol_lookup import resolve_symbol

# news ids seen in this process -> item, so get_news_content can find the URL again
_SEEN: OrderedDict[str, NewsItem] = OrderedDict()
_SEEN_MAX = 2000


def _remember(items: list[NewsItem]) -> None:
    for item in items:
        _SEEN[item.id] = item
        _SEEN.move_to_end(item.id)
    while len(_SEEN) > _SEEN_MAX:
        _SEEN.popitem(last=False)


@tool(label="Fetching news about {symbol}", tags=["news"])
async def get_news_list(
    symbol: str,
    keywords: list[str] | None = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
) -> NewsList:
    """Recent news headlines about a stock (A-shares from EastMoney, US from Yahoo Finance):
    id, title, time, publisher, link and a short summary. Read a story with get_news_content.

    Args:
        symbol: code, ticker or name.
        keywords: keep only headlines or summaries containing any of these words.
        limit: how many headlines, newest first.
    """
    providers.load()
    sym = resolve_symbol(symbol)
    news: NewsList = await fx.run("news.list", NewsQuery(code=sym.code, market=sym.market,
                                                          yahoo=sym.yahoo))
    items = news.items
    if keywords:
        words = [k.lower() for k in keywords if k.strip()]
        items = [i for i in items if any(w in (i.title + " " + i.summary).lower()
                                         for w in words)]
    news.items = items[:limit]
    _remember(news.items)
    return news


class NewsBody(BaseModel):
    id: str
    title: str = ""
    url: str = ""
    body: str = ""
    truncated: bool = False
    error: str = ""


class NewsContent(BaseModel):
    articles: list[NewsBody]


@tool(label="Reading news articles", tags=["news"])
async def get_news_content(
    ids: Annotated[list[str], Field(min_length=1, max_length=5)],
    max_chars: Annotated[int, Field(ge=500, le=20_000)] = 6000,
) -> NewsContent:
    """Full text of news articles listed by get_news_list (by their ids).

    Args:
        ids: article ids from get_news_list.
        max_chars: longest body returned per article.
    """
    providers.load()
    out: list[NewsBody] = []
    for news_id in ids:
        item = _SEEN.get(news_id)
        if item is None:
            out.append(NewsBody(id=news_id, error="unknown id: call get_news_list first"))
            continue
        body = NewsBody(id=news_id, title=item.title, url=item.url)
        try:
            page: Page = await fx.run("web.page", PageQuery(url=item.url, max_chars=max_chars))
            body.body, body.truncated = page.text, page.truncated
        except DataUnavailable as exc:
            body.body = item.summary
            body.error = f"full text unavailable ({exc}); showing the summary"
        out.append(body)
    return NewsContent(articles=out)


# --- SEC filings -----------------------------------------------------------------------------


def _cik(ticker: str) -> tuple[str, str]:
    found = local_cik(ticker)
    if found is None:
        sym = resolve_symbol(ticker)
        found = local_cik(sym.code)
    if found is None:
        raise UnknownSymbol(ticker, ["a US-listed ticker such as AAPL, or a CIK number"])
    return found


@tool(label="Listing SEC filings of {ticker}", tags=["sec", "us"])
async def get_sec_filing_list(
    ticker: str,
    forms: list[str] | None = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 6,
) -> FilingList:
    """Recent SEC EDGAR filings of a US company (10-K, 10-Q, 8-K, ...), newest first, with
    accession numbers for get_sec_filing_content.

    Args:
        ticker: US ticker or SEC CIK number.
        forms: form types to keep; default ["10-K", "10-Q"]. Use ["8-K"] for current reports.
        limit: how many filings.
    """
    providers.load()
    cik, _name = _cik(ticker)
    listing: FilingList = await fx.run("sec.filings", FilingsQuery(cik=cik))
    wanted = {f.upper() for f in (forms or ["10-K", "10-Q"])}
    listing.filings = [f for f in listing.filings if f.form.upper() in wanted][:limit]
    return listing


class FilingContent(BaseModel):
    """A filing split into pages; `content` holds the requested page only."""

    ticker: str
    form: str = ""
    filed: str = ""
    accession_number: str
    url: str
    total_pages: int
    page_chars: int
    index: list[PageIndex]
    page: int | None = None
    content: str | None = None
    source: DataSource


@tool(label="Reading SEC filing {accession_number}", tags=["sec", "us"])
async def get_sec_filing_content(
    ticker: str,
    accession_number: str,
    page: Annotated[int, Field(ge=1)] | None = None,
) -> FilingContent:
    """A SEC filing's text in pages of about 20,000 characters. Without `page` it returns only
    the page index (which items start on which page) - call that first, then ask for the pages
    you need.

    Args:
        ticker: US ticker or CIK of the filer.
        accession_number: from get_sec_filing_list, e.g. "0000320193-24-000123".
        page: page number to read; omit to get the index only.
    """
    providers.load()
    cik, _name = _cik(ticker)
    listing: FilingList = await fx.run("sec.filings", FilingsQuery(cik=cik))
    filing: Filing | None = next((f for f in listing.filings
                                  if f.accession_number == accession_number), None)
    if filing is None:
        raise InvalidArguments(f"{accession_number} is not among {ticker}'s recent filings; "
                               "call get_sec_filing_list for valid accession numbers")
    page_chars = get_config().sec_page_chars
    doc: FilingDocument = await fx.run("sec.document", DocumentQuery(
        cik=cik, accession_number=accession_number, primary_document=filing.primary_document,
        page_chars=page_chars))
    total = len(doc.pages)
    if page is not None and page > total:
        raise InvalidArguments(f"page {page} is past the end: the filing has {total} pages")
    if doc.source.offline:  # the dartlab data pack: fiscal period only, no filing date
        source = doc.source
    else:
        source = DataSource(
            provider="sec", dataset=f"{filing.form} {filing.accession_number}",
            as_of=date.fromisoformat(filing.filed) if filing.filed else None,
            note=f"report date {filing.report_date}" if filing.report_date else "")
    return FilingContent(
        ticker=ticker.upper(), form=filing.form, filed=filing.filed,
        accession_number=accession_number, url=doc.url, total_pages=total,
        page_chars=page_chars, index=doc.index, page=page,
        content=doc.pages[page - 1] if page is not None else None, source=source)


# --- web -------------------------------------------------------------------------------------


class WebSearch(BaseModel):
    query: str
    available: bool
    hits: list[SearchHit] = Field(default_factory=list)
    answer: str = ""
    note: str = ""
    source: DataSource | None = None


@tool(label="Searching the web", tags=["web"])
async def web_search(
    query: str,
    max_results: Annotated[int, Field(ge=1, le=10)] = 5,
) -> WebSearch:
    """Search the web (Tavily, then DuckDuckGo) for recent information; returns titles, links
    and snippets. Says `available: false` when offline or every search provider fails.

    Args:
        query: what to search for.
        max_results: how many results.
    """
    providers.load()
    if not query.strip():
        raise InvalidArguments("the search query is empty")
    if get_config().mode == "offline":
        return WebSearch(query=query, available=False,
                         note="web search is unavailable offline")
    try:
        res: SearchResults = await fx.run("web.search", SearchQuery(query=query,
                                                                    max_results=max_results))
    except DataUnavailable as exc:
        return WebSearch(query=query, available=False, note=f"web search unavailable: {exc}")
    return WebSearch(query=query, available=True, hits=res.hits, answer=res.answer,
                     source=res.source)


@tool(label="Reading a web page", tags=["web"])
async def scrape_webpage(
    url: str,
    max_chars: Annotated[int, Field(ge=500, le=50_000)] = 20_000,
) -> Page:
    """Fetch a public web page and return its readable text (title, main text, links).

    Args:
        url: an http(s) address.
        max_chars: longest text returned.
    """
    providers.load()
    if get_config().mode == "offline":
        raise DataUnavailable("reading web pages is unavailable offline", provider="web")
    result: Page = await fx.run("web.page", PageQuery(url=url, max_chars=max_chars))
    return result
