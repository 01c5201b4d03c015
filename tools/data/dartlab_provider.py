"""SEC filing section text from the dartlab data pack (offline `sec.filings`/`sec.document`).

dartlab 0.12.0 ships `canonicalRows.parquet`: one row per (ticker, fiscal period, form, item)
with the item's text (10-K, 10-Q, 20-F), for 16 US tickers (AAPL 10-K 2009-2025, AMZN,
GOOGL, JPM, MSFT, XOM ...). It holds no accession numbers or filing dates, so a filing here is
named `dartlab-<TICKER>-<FORM>-<PERIOD>` and dated by its fiscal period only; the tools show
that id in place of an accession number. The document is the items in order, paginated like
an EDGAR document (seed 001's page index).
"""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar

import pandas as pd

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data import packs
from tools.data.sec_provider import (
    DocumentQuery,
    Filing,
    FilingDocument,
    FilingList,
    FilingsQuery,
    local_cik,
    paginate,
)
from tools.models import DataSource

PROVIDER = "dartlab"
PACK = "dartlab"
MEMBER = "dartlab/providers/edgar/docs/sections/artifactData/canonicalRows.parquet"
ID_PREFIX = "dartlab-"


@functools.lru_cache(maxsize=2)
def _rows(packs_root: str) -> pd.DataFrame:
    """Every (ticker, period, form, item) row without its text (cheap to hold)."""
    del packs_root  # cache key
    return pd.read_parquet(packs.path(PACK, MEMBER),
                           columns=["stockCode", "period", "periodOrder", "form_type", "topic"])


def rows() -> pd.DataFrame:
    return _rows(str(packs.packs_dir()))


def sections(ticker: str, form: str, period: str) -> list[tuple[str, str]]:
    """(item heading, text) of one filing, read with a filter (the text is most of the file)."""
    df = pd.read_parquet(packs.path(PACK, MEMBER), columns=["topic", "topicText"],
                         filters=[("stockCode", "==", ticker), ("form_type", "==", form),
                                  ("period", "==", period)])
    return [(str(t), str(x)) for t, x in zip(df["topic"], df["topicText"], strict=True)]


@functools.lru_cache(maxsize=2)
def _ciks(packs_root: str) -> dict[str, tuple[str, str]]:
    """CIK -> (ticker, company) for the pack's tickers that edgartools' table knows."""
    out: dict[str, tuple[str, str]] = {}
    for ticker in sorted(set(_rows(packs_root)["stockCode"])):
        found = local_cik(str(ticker))
        if found is not None and found[0] not in out:
            out[found[0]] = (str(ticker), found[1])
    return out


def tickers() -> list[str]:
    """Tickers with section text (empty when the pack is not installed)."""
    try:
        return sorted(str(t) for t in set(rows()["stockCode"]))
    except DataUnavailable:
        return []


def ticker_for(cik: str) -> tuple[str, str] | None:
    try:
        return _ciks(str(packs.packs_dir())).get(cik.zfill(10))
    except DataUnavailable:
        return None


def filing_id(ticker: str, form: str, period: str) -> str:
    return f"{ID_PREFIX}{ticker}-{form}-{period}"


def _source(as_of_note: str) -> DataSource:
    version = packs.by_name(PACK).version
    return DataSource(provider=PROVIDER, offline=True,
                      dataset=f"dartlab {version} data pack: canonicalRows.parquet, SEC "
                              "section text",
                      note=as_of_note)


class _Local(fx.Fetcher[Any, Any]):
    provider: ClassVar[str] = PROVIDER
    local: ClassVar[bool] = True
    priority: ClassVar[int] = 90

    def supports(self, query: Any) -> bool:
        return ticker_for(str(query.cik)) is not None


class DartlabFilings(_Local):
    dataset: ClassVar[str] = "sec.filings"
    result_model: ClassVar[type[FilingList]] = FilingList

    async def fetch(self, query: FilingsQuery) -> Any:
        found = ticker_for(query.cik)
        assert found is not None
        df = rows()
        mine = df[df["stockCode"] == found[0]]
        periods = (mine.groupby(["period", "periodOrder", "form_type"]).size()
                   .reset_index().sort_values("periodOrder", ascending=False))
        return {"ticker": found[0], "company": found[1],
                "filings": [[str(r.period), str(r.form_type)] for r in periods.itertuples()]}

    def transform(self, query: FilingsQuery, raw: Any) -> FilingList:
        if not raw.get("filings"):
            raise DataUnavailable(f"no section text for CIK {query.cik}", provider=PROVIDER)
        ticker = str(raw["ticker"])
        filings = [Filing(form=form, filed="", report_date=_period_text(period),
                          accession_number=filing_id(ticker, form, period),
                          description="section text (offline; no SEC accession number or "
                                      "filing date)")
                   for period, form in raw["filings"]]
        first, last = raw["filings"][-1][0], raw["filings"][0][0]
        return FilingList(cik=query.cik.zfill(10), company=str(raw["company"]),
                          tickers=[ticker], filings=filings,
                          source=_source(f"fiscal periods {_period_text(first)} to "
                                         f"{_period_text(last)}; filing dates are not in the "
                                         "offline data"))


def _period_text(period: str) -> str:
    """2025 -> FY2025, 2025Q2 -> 2025Q2."""
    return period if "Q" in period else f"FY{period}"


_ITEM_NO = re.compile(r"Item\s+(\d+)([A-C]?)", re.I)


def _item_key(topic: str) -> tuple[int, str, str]:
    m = _ITEM_NO.search(topic)
    return (int(m.group(1)), m.group(2).upper(), topic) if m else (999, "", topic)


class DartlabDocument(_Local):
    dataset: ClassVar[str] = "sec.document"
    result_model: ClassVar[type[FilingDocument]] = FilingDocument

    def supports(self, query: Any) -> bool:
        return str(query.accession_number).startswith(ID_PREFIX) and super().supports(query)

    async def fetch(self, query: DocumentQuery) -> Any:
        found = ticker_for(query.cik)
        assert found is not None
        rest = query.accession_number.removeprefix(f"{ID_PREFIX}{found[0]}-")
        form, _, period = rest.rpartition("-")
        found_sections = sorted(sections(found[0], form, period), key=lambda s: _item_key(s[0]))
        return {"form": form, "period": period, "sections": found_sections}

    def transform(self, query: DocumentQuery, raw: Any) -> FilingDocument:
        sections = raw.get("sections") or []
        if not sections:
            raise DataUnavailable(f"{query.accession_number}: no such filing in the offline "
                                  "data", provider=PROVIDER)
        text = "\n\n".join(body.strip() for _, body in sections)
        pages, index = paginate(text, query.page_chars)
        return FilingDocument(
            cik=query.cik, accession_number=query.accession_number,
            url=f"offline: {query.accession_number} (dartlab data pack, no URL)",
            total_chars=len(text), pages=pages, index=index,
            source=_source(f"{raw['form']} {_period_text(str(raw['period']))}"))


for _f in (DartlabFilings(), DartlabDocument()):
    fx.register(_f)
