"""Turn what a user typed into one symbol: the only place tools resolve names and codes.

Uses the symbols directory (`tools.symbols`, names/pinyin/fuzzy) when it is installed; until
then, and for anything it does not know, plain codes and tickers are recognised by shape and
the snapshot's own aliases. Unknown text raises `UnknownSymbol` with suggestions.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel

from core.errors import UnknownSymbol
from tools import snapshot

Market = Literal["cn", "us", "hk", "crypto", "fx"]
Kind = Literal["stock", "index", "fund", "crypto", "fx"]


class ResolvedSymbol(BaseModel):
    """A symbol the tools can route: `code` is canonical (600519, NVDA, 000300, BTC-USD)."""

    code: str
    market: Market
    name: str = ""
    exchange: str = ""  # SH, SZ, BJ for A-shares; empty when unknown
    kind: Kind = "stock"

    @property
    def yahoo(self) -> str:
        """The Yahoo Finance ticker (600519.SS, 000001.SZ, BRK-B, EURUSD=X)."""
        if self.market == "cn":
            suffix = {"SH": ".SS", "SZ": ".SZ", "BJ": ".BJ"}.get(self.exchange, "")
            if self.code == "000300":
                return "000300.SS"
            return self.code + suffix
        if self.market == "fx":
            return self.code + "=X"
        return self.code.replace(".", "-")


_CN_PREFIXED = re.compile(r"^(SH|SZ|BJ)[.:]?(\d{6})$")
_CN_SUFFIXED = re.compile(r"^(\d{6})\.(SH|SS|SZ|BJ)$")
_US_TICKER = re.compile(r"^\^?[A-Z]{1,5}([.-][A-Z]{1,2})?$")
_CN_INDEXES = {"000300": "沪深300", "000001": "上证指数", "399001": "深证成指",
               "399006": "创业板指", "000905": "中证500", "000016": "上证50"}


def cn_exchange(code: str) -> str:
    """Exchange of a six-digit A-share/fund code by its first digits."""
    if code.startswith(("6", "9", "5")):
        return "SH"
    if code.startswith(("4", "8", "92")):
        return "BJ"
    return "SZ"


def _from_snapshot(code: str) -> ResolvedSymbol:
    entry = snapshot.info(code)
    market: Market = entry.market  # type: ignore[assignment]
    kind: Kind = entry.kind  # type: ignore[assignment]
    exchange = "SH" if code == "000300" else ""
    return ResolvedSymbol(code=code, market=market, name=entry.name, exchange=exchange, kind=kind)


def _by_shape(text: str) -> ResolvedSymbol | None:
    raw = text.strip()
    up = raw.upper().replace(" ", "")
    if (snap := snapshot.canonical(raw)) is not None:
        return _from_snapshot(snap)
    if m := _CN_PREFIXED.match(up):
        return ResolvedSymbol(code=m.group(2), market="cn", exchange=m.group(1))
    if m := _CN_SUFFIXED.match(up):
        exch = "SH" if m.group(2) == "SS" else m.group(2)
        return ResolvedSymbol(code=m.group(1), market="cn", exchange=exch)
    if re.fullmatch(r"\d{6}", up):
        return ResolvedSymbol(code=up, market="cn", exchange=cn_exchange(up))
    if re.fullmatch(r"\d{4,5}\.HK", up):
        return ResolvedSymbol(code=up.split(".")[0].zfill(5), market="hk", exchange="HK")
    if _US_TICKER.match(up):
        return ResolvedSymbol(code=up.replace(".", "-") if "." in up else up, market="us")
    return None


def _directory() -> Any | None:
    try:
        from tools import symbols  # built by another engineer; optional until it lands
    except ImportError:
        return None
    factory = getattr(symbols, "default_directory", None)
    if factory is None:
        return None
    try:
        return factory()
    except Exception:  # a broken directory must not take the tools down with it
        return None


def _from_match(match: Any) -> ResolvedSymbol | None:
    code = str(getattr(match, "code", "")).strip().upper()
    market = str(getattr(match, "market", "")).strip().lower()
    name = str(getattr(match, "name", ""))
    if not code:
        return None
    if snapshot.canonical(code) == code and market not in ("cn", "sh", "sz", "bj", "a"):
        return _from_snapshot(code)
    if market in ("cn", "sh", "sz", "bj", "a", "a-share", "cn_a"):
        digits = re.sub(r"\D", "", code)[-6:]
        if len(digits) != 6:
            return None
        exch = market.upper() if market in ("sh", "sz", "bj") else cn_exchange(digits)
        kind: Kind = "index" if digits in _CN_INDEXES and name in _CN_INDEXES.values() else "stock"
        return ResolvedSymbol(code=digits, market="cn", name=name, exchange=exch, kind=kind)
    if market in ("hk",):
        return ResolvedSymbol(code=code, market="hk", name=name, exchange="HK")
    return ResolvedSymbol(code=code.replace(".", "-"), market="us", name=name)


def resolve_symbol(text: str) -> ResolvedSymbol:
    """Resolve a code, ticker or name.

    Exact codes and tickers resolve by shape; names go through the symbols directory.
    Raises UnknownSymbol with suggestions when nothing fits.
    """
    if not text or not text.strip():
        raise UnknownSymbol(text, snapshot.symbols()[:5])
    shaped = _by_shape(text)
    directory = _directory()
    if shaped is not None:
        if directory is None or shaped.name:
            return shaped
        named = _first_match(directory, shaped.code, shaped.market)
        if named is not None and named.code == shaped.code:
            return shaped.model_copy(update={"name": named.name, "kind": named.kind})
        if shaped.market != "us":
            return shaped
        # A ticker-shaped word the directory does not list: maybe a name ("TESLA"), maybe junk.
        found = _first_match(directory, text.strip(), None)
        if found is not None:
            return found
        raise UnknownSymbol(text, _suggestions(directory, text))
    if directory is not None:
        found = _first_match(directory, text.strip(), None)
        if found is not None:
            return found
        raise UnknownSymbol(text, _suggestions(directory, text))
    raise UnknownSymbol(text, snapshot.suggest(text))


def _first_match(directory: Any, query: str, market: str | None) -> ResolvedSymbol | None:
    try:
        matches = directory.resolve(query, market=market, limit=1)
    except Exception:
        return None
    if not matches:
        return None
    best = matches[0]
    score = float(getattr(best, "score", 100.0))
    score = score * 100.0 if score <= 1.0 else score  # accept 0-1 and 0-100 scales
    if score < 80.0 and str(getattr(best, "code", "")).upper() != query.upper():
        return None
    return _from_match(best)


def _suggestions(directory: Any, query: str) -> list[str]:
    try:
        matches = directory.resolve(query, market=None, limit=5)
    except Exception:
        matches = []
    out = [f"{m.code} {m.name}".strip() for m in matches]
    return out or snapshot.suggest(query)
