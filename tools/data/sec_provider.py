"""SEC EDGAR fetchers over HTTP (aiohttp): filing lists, filing documents, 13F holdings.

EDGAR requires a User-Agent naming a contact (`DataConfig.sec_user_agent`, from
SEC_USER_AGENT); without one every SEC call fails with a clear `DataUnavailable`. Ticker -> CIK
comes from data edgartools ships (company_tickers.parquet, portfolio_managers.json) before
asking EDGAR. Documents are cleaned to text and split into pages (20,000 characters by default)
with a per-page index of the items (Item 1A, Item 7, ...) that start on each page.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import xml.etree.ElementTree as ET
from datetime import date
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data import http
from tools.data.config import get_config
from tools.models import DataSource

PROVIDER = "sec"
WWW = "https://www.sec.gov"
DATA = "https://data.sec.gov"


def _headers() -> dict[str, str]:
    ua = get_config().sec_user_agent.strip()
    if not ua:
        raise DataUnavailable(
            "SEC EDGAR requires a User-Agent with contact details; set SEC_USER_AGENT, e.g. "
            "'Bullpen Research admin@example.com'", provider=PROVIDER)
    return {"User-Agent": ua, "Accept-Encoding": "gzip, deflate"}


def _www() -> str:
    return get_config().base_url("sec_www", WWW).rstrip("/")


def _data() -> str:
    return get_config().base_url("sec_data", DATA).rstrip("/")


# --- CIK lookup (local data first) -----------------------------------------------------------


def _edgar_reference(name: str) -> Path | None:
    """A data file edgartools ships, found without importing edgartools (its import adds
    ~65 MB to a serving process and pulls in pyarrow: issue 34)."""
    spec = importlib.util.find_spec("edgar")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "reference" / "data" / name
    return path if path.exists() else None


@functools.cache
def _ticker_ciks() -> dict[str, tuple[str, str]]:
    path = _edgar_reference("company_tickers.parquet")
    if path is None:
        return {}
    import pandas as pd

    df = pd.read_parquet(path)
    return {str(t).upper(): (str(c).zfill(10), str(n))
            for t, c, n in zip(df["ticker"], df["cik"], df["name"], strict=True)}


@functools.cache
def _managers() -> list[tuple[str, str, list[str]]]:
    path = _edgar_reference("portfolio_managers.json")
    if path is None:
        return []
    data = json.loads(path.read_text())
    return [(str(m["cik"]).zfill(10), str(m["company_name"]),
             [p.lower() for p in m.get("match_patterns", [])])
            for m in data.get("managers", {}).values() if m.get("cik")]


def local_cik(ticker_or_name: str) -> tuple[str, str] | None:
    """(CIK, company name) from edgartools' shipped tables, or None."""
    text = ticker_or_name.strip()
    if text.isdigit():
        return text.zfill(10), ""
    hit = _ticker_ciks().get(text.upper().replace(".", "-"))
    if hit:
        return hit
    low = text.lower()
    for cik, name, patterns in _managers():
        if low == name.lower() or any(p == low or (len(p) > 4 and p in low) for p in patterns):
            return cik, name
    return None


# --- models ----------------------------------------------------------------------------------


class FilingsQuery(BaseModel):
    cik: str


class Filing(BaseModel):
    form: str
    filed: str
    report_date: str = ""
    accession_number: str
    primary_document: str = ""
    description: str = ""


class FilingList(BaseModel):
    cik: str
    company: str
    tickers: list[str] = Field(default_factory=list)
    filings: list[Filing]
    source: DataSource


class DocumentQuery(BaseModel):
    cik: str
    accession_number: str
    primary_document: str
    page_chars: int = 20_000


class PageIndex(BaseModel):
    page: int
    items: list[str] = Field(description="section headings that start on this page")
    lead: str = Field(description="the page's first words")


class FilingDocument(BaseModel):
    cik: str
    accession_number: str
    url: str
    total_chars: int
    pages: list[str]
    index: list[PageIndex]
    source: DataSource


class Holdings13FQuery(BaseModel):
    cik: str


class Holding13F(BaseModel):
    issuer: str
    cusip: str
    title: str = ""
    value_usd_mn: float
    shares: float | None = None
    put_call: str = ""
    pct_of_portfolio: float = 0.0


class Holdings13F(BaseModel):
    cik: str
    manager: str
    filed: str
    report_date: str
    accession_number: str
    positions: int
    total_value_usd_mn: float
    holdings: list[Holding13F]
    source: DataSource


def _source(dataset: str, as_of: str | date | None, note: str = "") -> DataSource:
    return DataSource.at(PROVIDER, dataset, as_of, note)


# --- filing list -----------------------------------------------------------------------------

_RECENT_KEYS = ("accessionNumber", "filingDate", "reportDate", "form", "primaryDocument",
                "primaryDocDescription")


def _trim_submissions(doc: Any, limit: int = 400) -> Any:
    if not isinstance(doc, dict):
        return doc
    recent = (doc.get("filings") or {}).get("recent") or {}
    return {"cik": doc.get("cik"), "name": doc.get("name"), "tickers": doc.get("tickers", []),
            "filings": {"recent": {k: list(recent.get(k, []))[:limit] for k in _RECENT_KEYS}}}


async def fetch_submissions(cik: str) -> Any:
    url = f"{_data()}/submissions/CIK{int(cik):010d}.json"
    return _trim_submissions(await http.get_json(url, provider=PROVIDER, headers=_headers()))


def parse_filings(raw: Any, cik: str) -> FilingList:
    if not isinstance(raw, dict) or "filings" not in raw:
        raise DataUnavailable("submissions: unexpected response shape", provider=PROVIDER)
    recent = raw["filings"].get("recent") or {}
    missing = [k for k in ("accessionNumber", "filingDate", "form") if k not in recent]
    if missing:
        raise DataUnavailable(f"submissions: response shape changed, missing {missing}",
                              provider=PROVIDER)
    n = len(recent["accessionNumber"])

    def col(key: str, i: int) -> str:
        values = recent.get(key) or []
        return str(values[i]) if i < len(values) and values[i] is not None else ""

    filings = [Filing(form=col("form", i), filed=col("filingDate", i),
                      report_date=col("reportDate", i),
                      accession_number=col("accessionNumber", i),
                      primary_document=col("primaryDocument", i),
                      description=col("primaryDocDescription", i)) for i in range(n)]
    if not filings:
        raise DataUnavailable("submissions: no filings", provider=PROVIDER)
    return FilingList(cik=str(cik).zfill(10), company=str(raw.get("name") or ""),
                      tickers=[str(t) for t in raw.get("tickers") or []], filings=filings,
                      source=_source("submissions", filings[0].filed))


class SecFilings(fx.Fetcher[FilingsQuery, FilingList]):
    provider: ClassVar[str] = PROVIDER
    dataset: ClassVar[str] = "sec.filings"
    result_model: ClassVar[type[FilingList]] = FilingList
    ttl_s: ClassVar[int] = 3600

    async def fetch(self, query: FilingsQuery) -> Any:
        return await fetch_submissions(query.cik)

    def transform(self, query: FilingsQuery, raw: Any) -> FilingList:
        return parse_filings(raw, query.cik)


# --- documents -------------------------------------------------------------------------------

_ITEM = re.compile(r"(?im)^\s*(item\s+\d{1,2}[a-c]?\.?)\s*([^\n]{0,80})$")
_PART = re.compile(r"(?im)^\s*(part\s+i{1,3}v?)\b")


def html_to_text(html: str) -> str:
    """Visible text of an HTML filing (inline-XBRL headers dropped), whitespace tidied."""
    if "<" not in html[:2000] and "<html" not in html.lower()[:5000]:
        text = html
    else:
        from bs4 import BeautifulSoup

        soup = BeautifulSoup(html, "lxml")
        for tag in soup(["script", "style", "head", "ix:header"]):
            tag.decompose()
        for tag in soup.select('[style*="display:none"], [style*="display: none"]'):
            tag.decompose()
        text = soup.get_text("\n")
    text = text.replace("\xa0", " ")
    text = re.sub(r"[ \t\r\f\v]+", " ", text)
    text = re.sub(r" *\n *", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def paginate(text: str, page_chars: int) -> tuple[list[str], list[PageIndex]]:
    """Split into pages of at most `page_chars` (at a line break when one is near) and index
    the item headings that begin on each page."""
    pages: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + page_chars, len(text))
        if end < len(text):
            cut = text.rfind("\n", start + page_chars // 2, end)
            end = cut + 1 if cut > 0 else end
        pages.append(text[start:end])
        start = end
    index: list[PageIndex] = []
    for i, page in enumerate(pages, start=1):
        items = []
        for m in _ITEM.finditer(page):
            head = (m.group(1).rstrip(".") + ". " + m.group(2).strip()).strip(" .")
            if head not in items:
                items.append(head[:90])
        index.append(PageIndex(page=i, items=items[:12],
                               lead=" ".join(page.split())[:160]))
    return pages, index


class SecDocument(fx.Fetcher[DocumentQuery, FilingDocument]):
    provider: ClassVar[str] = PROVIDER
    dataset: ClassVar[str] = "sec.document"
    result_model: ClassVar[type[FilingDocument]] = FilingDocument
    ttl_s: ClassVar[int] = 604800

    def url(self, query: DocumentQuery) -> str:
        folder = query.accession_number.replace("-", "")
        doc = query.primary_document or f"{query.accession_number}.txt"
        return f"{_www()}/Archives/edgar/data/{int(query.cik)}/{folder}/{doc}"

    async def fetch(self, query: DocumentQuery) -> Any:
        url = self.url(query)
        return {"url": url, "body": await http.get_text(url, provider=PROVIDER,
                                                        headers=_headers())}

    def transform(self, query: DocumentQuery, raw: Any) -> FilingDocument:
        if not isinstance(raw, dict) or not isinstance(raw.get("body"), str):
            raise DataUnavailable("filing document: unexpected response shape",
                                  provider=PROVIDER)
        text = html_to_text(raw["body"])
        if len(text) < 50:
            raise DataUnavailable("filing document: empty text", provider=PROVIDER)
        pages, index = paginate(text, query.page_chars)
        return FilingDocument(cik=query.cik, accession_number=query.accession_number,
                              url=str(raw.get("url") or self.url(query)), total_chars=len(text),
                              pages=pages, index=index,
                              source=DataSource(provider=PROVIDER, dataset="Archives"))


# --- 13F -------------------------------------------------------------------------------------


class Sec13F(fx.Fetcher[Holdings13FQuery, Holdings13F]):
    provider: ClassVar[str] = PROVIDER
    dataset: ClassVar[str] = "sec.13f"
    result_model: ClassVar[type[Holdings13F]] = Holdings13F
    ttl_s: ClassVar[int] = 86400

    async def fetch(self, query: Holdings13FQuery) -> Any:
        subs = await fetch_submissions(query.cik)
        filings = parse_filings(subs, query.cik)
        latest = next((f for f in filings.filings if f.form in ("13F-HR", "13F-HR/A")), None)
        if latest is None:
            raise DataUnavailable(f"CIK {query.cik} ({filings.company}) files no 13F-HR",
                                  provider=PROVIDER)
        folder = (f"{_www()}/Archives/edgar/data/{int(query.cik)}/"
                  f"{latest.accession_number.replace('-', '')}")
        listing = await http.get_json(f"{folder}/index.json", provider=PROVIDER,
                                      headers=_headers())
        names = [str(i.get("name", "")) for i in
                 (listing.get("directory", {}).get("item", []) if isinstance(listing, dict)
                  else [])]
        xmls = [n for n in names if n.lower().endswith(".xml")
                and n.lower() != "primary_doc.xml"]
        table = next((n for n in xmls if "info" in n.lower()), xmls[0] if xmls else None)
        if table is None:
            raise DataUnavailable("13F filing has no information table", provider=PROVIDER)
        xml = await http.get_text(f"{folder}/{table}", provider=PROVIDER, headers=_headers())
        return {"company": filings.company, "filed": latest.filed,
                "report_date": latest.report_date, "accession": latest.accession_number,
                "xml": xml}

    def transform(self, query: Holdings13FQuery, raw: Any) -> Holdings13F:
        if not isinstance(raw, dict) or not isinstance(raw.get("xml"), str):
            raise DataUnavailable("13F: unexpected response shape", provider=PROVIDER)
        try:
            root = ET.fromstring(raw["xml"].encode())
        except ET.ParseError as exc:
            raise DataUnavailable(f"13F information table is not XML: {exc}",
                                  provider=PROVIDER) from exc

        def text(el: ET.Element, tag: str) -> str:
            for child in el.iter():
                if child.tag.rsplit("}", 1)[-1] == tag:
                    return (child.text or "").strip()
            return ""

        filed = str(raw.get("filed") or "")
        # values are in whole dollars from 2023 filings on, in thousands before
        scale = 1.0 if filed >= "2023-01-03" else 1000.0
        merged: dict[tuple[str, str], Holding13F] = {}
        for el in root.iter():
            if el.tag.rsplit("}", 1)[-1] != "infoTable":
                continue
            cusip, put_call = text(el, "cusip"), text(el, "putCall")
            value = float(text(el, "value") or 0) * scale / 1e6
            shares = float(text(el, "sshPrnamt") or 0)
            key = (cusip, put_call)
            if key in merged:
                merged[key].value_usd_mn += value
                merged[key].shares = (merged[key].shares or 0) + shares
            else:
                merged[key] = Holding13F(issuer=text(el, "nameOfIssuer"), cusip=cusip,
                                         title=text(el, "titleOfClass"), value_usd_mn=value,
                                         shares=shares, put_call=put_call)
        if not merged:
            raise DataUnavailable("13F information table: no holdings", provider=PROVIDER)
        total = sum(h.value_usd_mn for h in merged.values())
        holdings = sorted(merged.values(), key=lambda h: -h.value_usd_mn)
        for h in holdings:
            h.value_usd_mn = round(h.value_usd_mn, 3)
            h.pct_of_portfolio = round(h.value_usd_mn / total * 100, 2) if total else 0.0
        return Holdings13F(cik=query.cik, manager=str(raw.get("company") or ""), filed=filed,
                           report_date=str(raw.get("report_date") or ""),
                           accession_number=str(raw.get("accession") or ""),
                           positions=len(holdings), total_value_usd_mn=round(total, 3),
                           holdings=holdings,
                           source=_source("13F-HR", str(raw.get("report_date") or filed)))


for _f in (SecFilings(), SecDocument(), Sec13F()):
    fx.register(_f)
