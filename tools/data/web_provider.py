"""Web search (Tavily, then DuckDuckGo's HTML endpoint) and page fetching for the scrape tool."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, ClassVar
from urllib.parse import parse_qs, unquote, urlsplit

from aiohttp.abc import AbstractResolver
from pydantic import BaseModel, Field

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data import http
from tools.data.config import get_config
from tools.models import DataSource

TAVILY = "https://api.tavily.com"
DUCKDUCKGO = "https://html.duckduckgo.com"


class SearchQuery(BaseModel):
    query: str
    max_results: int = 5


class SearchHit(BaseModel):
    title: str
    url: str
    snippet: str = ""


class SearchResults(BaseModel):
    query: str
    hits: list[SearchHit]
    answer: str = ""
    source: DataSource


class PageQuery(BaseModel):
    url: str
    max_chars: int = 20_000


class Page(BaseModel):
    url: str
    title: str = ""
    text: str
    total_chars: int
    truncated: bool = False
    links: list[str] = Field(default_factory=list)
    source: DataSource


class TavilySearch(fx.Fetcher[SearchQuery, SearchResults]):
    provider: ClassVar[str] = "tavily"
    dataset: ClassVar[str] = "web.search"
    result_model: ClassVar[type[SearchResults]] = SearchResults
    priority: ClassVar[int] = 10

    def supports(self, query: SearchQuery) -> bool:
        return bool(get_config().tavily_api_key)

    async def fetch(self, query: SearchQuery) -> Any:
        base = get_config().base_url("tavily", TAVILY).rstrip("/")
        body = {"query": query.query, "max_results": query.max_results,
                "include_answer": True, "search_depth": "basic"}
        return await http.post_json(f"{base}/search", body, provider=self.provider, headers={
            "Authorization": f"Bearer {get_config().tavily_api_key}"})

    def transform(self, query: SearchQuery, raw: Any) -> SearchResults:
        if not isinstance(raw, dict) or not isinstance(raw.get("results"), list):
            raise DataUnavailable("search: unexpected response shape", provider=self.provider)
        hits = [SearchHit(title=str(r.get("title") or ""), url=str(r.get("url") or ""),
                          snippet=str(r.get("content") or "")[:400])
                for r in raw["results"] if isinstance(r, dict) and r.get("url")]
        if not hits:
            raise DataUnavailable("search: no results", provider=self.provider)
        return SearchResults(query=query.query, hits=hits[:query.max_results],
                             answer=str(raw.get("answer") or ""),
                             source=DataSource(provider=self.provider, dataset="search"))


class DuckDuckGoSearch(fx.Fetcher[SearchQuery, SearchResults]):
    provider: ClassVar[str] = "duckduckgo"
    dataset: ClassVar[str] = "web.search"
    result_model: ClassVar[type[SearchResults]] = SearchResults
    priority: ClassVar[int] = 20

    async def fetch(self, query: SearchQuery) -> Any:
        base = get_config().base_url("duckduckgo", DUCKDUCKGO).rstrip("/")
        return {"html": await http.get_text(f"{base}/html/", provider=self.provider,
                                            params={"q": query.query})}

    def transform(self, query: SearchQuery, raw: Any) -> SearchResults:
        html = raw.get("html") if isinstance(raw, dict) else None
        if not isinstance(html, str):
            raise DataUnavailable("search: unexpected response shape", provider=self.provider)
        from bs4 import BeautifulSoup

        hits: list[SearchHit] = []
        for link in BeautifulSoup(html, "lxml").select("a.result__a"):
            href = str(link.get("href") or "")
            if "uddg=" in href:  # DuckDuckGo redirect links carry the target in `uddg`
                href = unquote(parse_qs(urlsplit(href).query).get("uddg", [href])[0])
            box = link.find_parent(class_="result")
            snippet = box.select_one(".result__snippet") if box is not None else None
            hits.append(SearchHit(title=link.get_text(" ", strip=True), url=href,
                                  snippet=(snippet.get_text(" ", strip=True) if snippet
                                           else "")[:400]))
        if not hits:
            raise DataUnavailable("search: no results (or the page layout changed)",
                                  provider=self.provider)
        return SearchResults(query=query.query, hits=hits[:query.max_results],
                             source=DataSource(provider=self.provider, dataset="html search"))


class WebPage(fx.Fetcher[PageQuery, Page]):
    """A page the model asked for, read behind the SSRF guard (`http.fetch_public_text`: every
    redirect hop checked, the address connected to is the address checked). `blocked` and
    `resolver` are for tests (which networks count as internal, how names resolve)."""

    provider: ClassVar[str] = "web"
    dataset: ClassVar[str] = "web.page"
    result_model: ClassVar[type[Page]] = Page

    def __init__(self, *, blocked: Sequence[http.Network] | None = None,
                 resolver: AbstractResolver | None = None) -> None:
        self._blocked = blocked
        self._resolver = resolver

    async def fetch(self, query: PageQuery) -> Any:
        _final, html = await http.fetch_public_text(
            query.url, provider=self.provider, max_bytes=5_000_000, blocked=self._blocked,
            resolver=self._resolver)
        return {"url": query.url, "html": html}

    def transform(self, query: PageQuery, raw: Any) -> Page:
        from bs4 import BeautifulSoup

        html = raw.get("html") if isinstance(raw, dict) else None
        if not isinstance(html, str):
            raise DataUnavailable("page: unexpected response shape", provider=self.provider)
        soup = BeautifulSoup(html, "lxml")
        title = soup.title.get_text(strip=True) if soup.title else ""
        for tag in soup(["script", "style", "noscript", "nav", "footer", "header", "form",
                         "svg", "iframe"]):
            tag.decompose()
        root = soup.find("article") or soup.find("main") or soup.body or soup
        text = re.sub(r"\n{3,}", "\n\n", re.sub(r"[ \t]+", " ", root.get_text("\n"))).strip()
        text = re.sub(r" *\n *", "\n", text)
        if not text:
            raise DataUnavailable("page has no readable text (it may need JavaScript)",
                                  provider=self.provider)
        links = [str(a.get("href")) for a in root.find_all("a", href=True)
                 if str(a.get("href")).startswith("http")][:20]
        return Page(url=query.url, title=title, text=text[:query.max_chars],
                    total_chars=len(text), truncated=len(text) > query.max_chars, links=links,
                    source=DataSource(provider=self.provider, dataset=urlsplit(query.url).netloc))


for _f in (TavilySearch(), DuckDuckGoSearch(), WebPage()):
    fx.register(_f)
