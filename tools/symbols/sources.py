"""Build directory entries from what pip packages ship (and, when asked, from live lists).

Offline sources, all real data:

- A-shares: ``chstockdata`` bundles the official SSE/SZSE current list (5,223 names, listing
  dates) and the CSRC industry classification (5,521 codes incl. Beijing and B shares; those
  extra codes have no name in any package, so they resolve by code only).
- US: ``edgartools`` bundles SEC ``company_tickers.parquet`` (ticker, CIK, exchange, name), in
  SEC's own order, which is roughly by size; we keep it as ``rank``.
- Index membership and former A-share names: ``index-constitution``.
- HK: no installed package ships Hong Kong names; a handful of HK-only large caps come from the
  curated ``aliases.json``.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import logging
import re
from collections.abc import Iterable
from datetime import date
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from core.words import is_zh
from tools.symbols.index import paused_gc
from tools.symbols.model import SymbolEntry
from tools.symbols.normalize import (
    clean,
    cn_base_name,
    has_cjk,
    pinyin,
    release_converters,
    to_traditional,
)

log = logging.getLogger(__name__)

INDICES_CN = ("csi300", "csi500")
_CLASS_ROW = re.compile(r'"code":\s*"(\d{6})".*?"menlei_name":\s*"([^"]+)"')
INDICES_US = ("sp500", "nasdaq100", "dow30")


def _package_dir(package: str) -> Path:
    """Where an installed package lives, without importing it (edgar's import is slow)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(package)
    return Path(next(iter(spec.submodule_search_locations)))


@lru_cache(maxsize=1)
def curated() -> dict[str, Any]:
    """The curated alias file (``aliases.json`` next to this module)."""
    text = resources.files("tools.symbols").joinpath("aliases.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@lru_cache(maxsize=1)
def _chinese_names() -> dict[str, str]:
    """code -> the first Chinese name the curated file gives (US stocks' aliases, indexes,
    crypto and FX instruments)."""
    data = curated()
    out: dict[str, str] = {}
    for market in ("us", "cn"):
        for code, entry in data.get(market, {}).items():
            zh = [a for a in entry.get("aliases", []) if has_cjk(a)]
            if zh:
                out.setdefault(code, zh[0])
    for inst in data.get("instruments", []):
        names = [inst.get("name", ""), *inst.get("names", [])]
        zh = [n for n in names if n and has_cjk(n)]
        if zh:
            out.setdefault(inst["code"], zh[0])
    return out


def chinese_name(code: str) -> str | None:
    """The name a Chinese reader knows an instrument by (英伟达 for NVDA, 标普500 for ^GSPC,
    比特币 for BTC-USD), or None when the curated file has none."""
    return _chinese_names().get(code)


_LATIN_TAIL = re.compile(r"\s+[A-Za-z][\w&.()/ -]*$")


def reader_name(code: str, name: str, lang: str) -> str:
    """The name a reader knows an instrument by: for a Chinese reader an A-share's own name
    (without a Latin tail), the curated Chinese name of a US stock, index or coin (英伟达,
    标普500, 比特币), else none (the code says it); for anyone else the data's name."""
    if not is_zh(lang):  # not words: which name, not how it is said
        return name
    if has_cjk(name):
        return _LATIN_TAIL.sub("", name)  # 沪深300 CSI 300 index -> 沪深300
    return chinese_name(code) or ""


def expand_aliases(aliases: Iterable[str], name: str = "") -> list[str]:
    """Aliases plus, for Chinese ones, their traditional form and full pinyin (spaced).

    Done at build time so loading the directory (e.g. from Postgres) needs neither pypinyin
    nor OpenCC.
    """
    out: list[str] = []
    for alias in aliases:
        alias = clean(alias)
        forms = [alias]
        if has_cjk(alias):
            forms.append(to_traditional(alias))
            full, _ = pinyin(cn_base_name(alias))
            if len(full.split()) >= 2:
                forms.append(full)
        for form in forms:
            if form and form != name and form not in out:
                out.append(form)
    return out


def _bj_or_b_exchange(code: str) -> str | None:
    if code.startswith(("92", "43", "83", "87", "88")):
        return "BJ"
    if code.startswith("900"):
        return "SH"
    if code.startswith("200"):
        return "SZ"
    return None


def _parse_date(text: str | None) -> date | None:
    try:
        return date.fromisoformat(text) if text else None
    except ValueError:
        return None


def _index_members() -> dict[str, dict[str, list[str]]]:
    """{"cn"|"us": {code: [index, ...]}} from index-constitution's latest lists."""
    import index_constitution as ic

    out: dict[str, dict[str, list[str]]] = {"cn": {}, "us": {}}
    for market, names in (("cn", INDICES_CN), ("us", INDICES_US)):
        for index in names:
            frame = ic.load(index, "latest")
            for symbol in frame["symbol"]:
                code = _index_code(str(symbol), market)
                out[market].setdefault(code, []).append(index)
    return out


def _index_code(symbol: str, market: str) -> str:
    if market == "cn":
        return symbol[-6:]
    return symbol.upper().replace(".", "-").replace("/", "-")


def _former_cn_names() -> dict[str, set[str]]:
    """Names an A-share carried in CSI 300/500 history (full names for truncated XD names)."""
    import index_constitution as ic

    out: dict[str, set[str]] = {}
    for index in INDICES_CN:
        frame = ic.load(index, "history")
        for symbol, name in zip(frame["symbol"], frame["name"], strict=True):
            out.setdefault(str(symbol)[-6:], set()).add(clean(str(name)))
    return out


def cn_entries(
    members: dict[str, list[str]] | None = None, extra_names: dict[str, str] | None = None
) -> list[SymbolEntry]:
    """A-shares from chstockdata: named SH/SZ list plus code-only Beijing/B-share codes.

    ``extra_names`` (code -> name, e.g. from a live list) fills in or replaces names.
    """
    base = _package_dir("chstockdata") / "data" / "industry"
    sectors: dict[str, str] = {}
    versions = sorted(base.glob("classifications_*.jsonl"))
    if versions:  # the latest CSRC classification (covers SH, SZ, BJ and B shares)
        with versions[-1].open(encoding="utf-8") as fh:
            for line in fh:
                m = _CLASS_ROW.search(line)
                if m:
                    sectors[m.group(1)] = m.group(2)
    universe = sorted(base.glob("universe_*.csv"))
    rows: dict[str, dict[str, str]] = {}
    if universe:
        with universe[-1].open(encoding="utf-8") as fh:
            for row in csv.DictReader(fh):
                rows[row["code"]] = row
    members = members or {}
    extra_names = extra_names or {}
    former = _former_cn_names()
    cur = curated().get("cn", {})
    out: list[SymbolEntry] = []
    for code in sorted(set(rows) | set(sectors) | set(extra_names)):
        row = rows.get(code, {})
        exchange = row.get("exchange") or _bj_or_b_exchange(code)
        if exchange is None:
            exchange = "SH" if code.startswith(("6", "9")) else "SZ"
        name = "".join(clean(extra_names.get(code) or row.get("name") or "").split()) or code
        olds = sorted(n for n in former.get(code, set()) if n != name)
        if name[:2] in ("XD", "XR", "DR"):  # ex-dividend marks truncate the name: XD工商银
            full_names = [n for n in olds if n.startswith(cn_base_name(name))]
            if full_names:
                olds.append(name)
                name = full_names[0]
        aliases = expand_aliases([*olds, *cur.get(code, {}).get("aliases", [])], name)
        base_name = cn_base_name(name) if name != code else ""
        full, initials = pinyin(base_name) if base_name else ("", "")
        tw = to_traditional(name) if base_name else name
        out.append(
            SymbolEntry(
                code=code,
                market="cn",
                exchange=exchange,
                name=name,
                name_en=cur.get(code, {}).get("name_en"),
                pinyin=full or None,
                initials=initials or None,
                name_tw=tw if tw != name else None,
                aliases=tuple(aliases),
                sector=sectors.get(code),
                list_date=_parse_date(row.get("listing_date")),
                indices=tuple(members.get(code, ())),
            )
        )
    return out


def us_entries(
    members: dict[str, list[str]] | None = None, rows: Iterable[dict[str, Any]] | None = None
) -> list[SymbolEntry]:
    """US tickers from edgartools' bundled SEC list (or ``rows`` from a live SEC download)."""
    if rows is None:
        import pandas as pd

        path = _package_dir("edgar") / "reference" / "data" / "company_tickers.parquet"
        rows = pd.read_parquet(path).to_dict("records")
    members = members or {}
    cur = curated().get("us", {})
    seen_cik: set[str] = set()
    seen_ticker: set[str] = set()
    out: list[SymbolEntry] = []
    for rank, row in enumerate(rows):
        ticker = str(row["ticker"]).upper().replace(".", "-")
        if not ticker or ticker in seen_ticker:
            continue
        seen_ticker.add(ticker)
        cik = str(row.get("cik") or "").zfill(10) or None
        exchange = row.get("exchange")
        exchange = exchange if isinstance(exchange, str) and exchange else None
        preferred = "-P" in ticker or ticker.endswith(("-W", "-WS", "-U", "-UN", "-R", "-RT"))
        primary = not preferred and (cik is None or cik not in seen_cik)
        if cik:
            seen_cik.add(cik)
        extra = cur.get(ticker, {})
        out.append(
            SymbolEntry(
                code=ticker,
                market="us",
                exchange=exchange,
                name=clean(str(row["name"])),
                name_en=extra.get("name_en"),
                aliases=tuple(expand_aliases(extra.get("aliases", []))),
                indices=tuple(members.get(ticker, ())),
                cik=cik,
                rank=rank,
                primary=primary or bool(extra),
            )
        )
    return out


def hk_entries() -> list[SymbolEntry]:
    """The curated HK-only large caps (no package ships HK names)."""
    out = []
    for code, item in sorted(curated().get("hk", {}).items()):
        name = item["name"]
        full, initials = pinyin(name)
        out.append(
            SymbolEntry(
                code=code,
                market="hk",
                exchange="HKEX",
                name=name,
                name_en=item.get("name_en"),
                pinyin=full,
                initials=initials,
                name_tw=to_traditional(name) if to_traditional(name) != name else None,
                aliases=tuple(expand_aliases(item.get("aliases", []), name)),
            )
        )
    return out


def build_entries(*, live: bool = False) -> list[SymbolEntry]:
    """Every entry from the installed packages; with ``live`` also merge online lists.

    The s2t converter (~50k phrases) is dropped afterwards: queries only need t2s, which
    reloads in milliseconds. (pypinyin's dictionaries stay: they are module globals.)"""
    try:
        with paused_gc():
            return _build_entries(live=live)
    finally:
        release_converters()


def _build_entries(*, live: bool) -> list[SymbolEntry]:
    members = _index_members()
    extra_cn: dict[str, str] = {}
    us_rows: list[dict[str, Any]] | None = None
    if live:
        extra_cn = fetch_live_cn()
        us_rows = fetch_live_us()
    return [
        *cn_entries(members["cn"], extra_cn),
        *us_entries(members["us"], us_rows),
        *hk_entries(),
    ]


def fetch_live_cn() -> dict[str, str]:
    """Current SH/SZ/BJ code -> name from akshare; empty when offline."""
    try:
        import akshare as ak

        frame = ak.stock_info_a_code_name()
        return {str(c).zfill(6): str(n) for c, n in zip(frame["code"], frame["name"], strict=True)}
    except Exception as exc:  # network, provider change: keep the offline directory
        log.warning("live A-share list unavailable: %s", exc)
        return {}


def fetch_live_us() -> list[dict[str, Any]] | None:
    """SEC's current ticker/name/exchange list through edgartools; ``None`` when offline."""
    try:
        from edgar.reference.tickers import get_company_ticker_name_exchange

        frame = get_company_ticker_name_exchange()  # columns cik, name, ticker, exchange
        return list(frame.to_dict("records"))
    except Exception as exc:
        log.warning("live SEC ticker list unavailable: %s", exc)
        return None
