"""Turn what a user typed into one symbol: the only place tools resolve names and codes.

Uses the symbols directory (`tools.symbols`, names/pinyin/fuzzy, and the main indices, crypto
and FX pairs) when it is installed; until then, and for anything it does not know, plain codes
and tickers are recognised by shape and the snapshot's own aliases. A-share index codes are
told from shares by exchange: 000xxx on Shanghai and 399xxx on Shenzhen are indices
(``000001.SH`` is 上证指数; a bare ``000001`` stays 平安银行, the share). Unknown text raises
`UnknownSymbol` with suggestions.
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
        if self.market == "hk":
            return self.code.zfill(4) + ".HK"
        return self.code.replace(".", "-")


_CN_PREFIXED = re.compile(r"^(SH|SZ|BJ)[.:]?(\d{6})$")
_CN_SUFFIXED = re.compile(r"^(\d{6})\.(SH|SS|SZ|BJ)$")
_US_TICKER = re.compile(r"^\^?[A-Z]{1,5}([.-][A-Z]{1,2})?$")
_CN_INDEXES = {"000300": "沪深300", "000001": "上证指数", "399001": "深证成指",
               "399006": "创业板指", "000905": "中证500", "000016": "上证50"}


def cn_kind(code: str, exchange: str) -> Kind:
    """An A-share code's kind: 000xxx on SH and 399xxx on SZ are indices (no share uses them)."""
    if (exchange == "SH" and code.startswith("000")) or (
        exchange == "SZ" and code.startswith("399")
    ):
        return "index"
    return "stock"


def _cn(code: str, exchange: str) -> ResolvedSymbol:
    kind = cn_kind(code, exchange)
    name = _CN_INDEXES.get(code, "") if kind == "index" else ""
    return ResolvedSymbol(code=code, market="cn", exchange=exchange, kind=kind, name=name)


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
        return _cn(m.group(2), m.group(1))
    if m := _CN_SUFFIXED.match(up):
        return _cn(m.group(1), "SH" if m.group(2) == "SS" else m.group(2))
    if re.fullmatch(r"\d{6}", up):
        return _cn(up, cn_exchange(up))
    if re.fullmatch(r"\d{1,5}\.HK", up):
        code = up.split(".")[0].lstrip("0").zfill(4)
        return ResolvedSymbol(code=code, market="hk", exchange="HK")
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
    """A directory match or entry as the tools route it (snapshot series by their own entry)."""
    code = str(getattr(match, "code", "")).strip().upper()
    market = str(getattr(match, "market", "")).strip().lower()
    name = str(getattr(match, "name", ""))
    exchange = str(getattr(match, "exchange", "") or "")
    if not code:
        return None
    if market == "cn":
        exchange = exchange or cn_exchange(code)
        kind = cn_kind(code, exchange)
        if kind == "index" and snapshot.canonical(code) == code:
            return _from_snapshot(code)
        return ResolvedSymbol(code=code, market="cn", name=name, exchange=exchange, kind=kind)
    if market == "hk":
        return ResolvedSymbol(code=code, market="hk", name=name, exchange="HK")
    if market in ("crypto", "fx") or code.startswith("^"):
        if snapshot.canonical(code) == code:
            return _from_snapshot(code)
        if market == "crypto":
            return ResolvedSymbol(code=code, market="crypto", name=name, kind="crypto")
        if market == "fx":
            return ResolvedSymbol(code=code, market="fx", name=name, kind="fx")
        return ResolvedSymbol(code=code, market="us", name=name, kind="index")
    return ResolvedSymbol(code=code, market="us", name=name, exchange=exchange)


def resolve_symbol(text: str) -> ResolvedSymbol:
    """Resolve a code, ticker or name.

    Exact codes and tickers resolve by shape (named by the directory when it lists them);
    names go through the directory. Raises UnknownSymbol with suggestions when nothing fits.
    """
    if not text or not text.strip():
        raise UnknownSymbol(text, snapshot.symbols()[:5])
    shaped = _by_shape(text)
    directory = _directory()
    if directory is None:
        if shaped is None:
            raise UnknownSymbol(text, snapshot.suggest(text))
        return shaped
    if shaped is not None and shaped.name:  # a snapshot series or an A-share index code
        return shaped
    named = _instrument(directory, text.strip())  # ETH is Ethereum here, not a listed fund
    if named is not None:
        return named
    if shaped is not None:
        entry = _exact(directory, shaped.code, shaped.market)
        if entry is not None:
            return entry
        if shaped.market != "us":  # fund and index codes the directory does not list
            return shaped
    # a name, or a ticker-shaped word the directory does not list ("TESLA", "ZZZZ")
    found = _first_match(directory, text.strip())
    if found is not None:
        return found
    raise UnknownSymbol(text, _suggestions(directory, text))


def _instrument(directory: Any, text: str) -> ResolvedSymbol | None:
    """An index, crypto or FX pair the directory knows by exactly this symbol or name."""
    finder = getattr(directory, "instrument", None)
    if finder is None:
        return None
    try:
        entry = finder(text)
    except Exception:
        return None
    return _from_match(entry) if entry is not None else None


def _exact(directory: Any, code: str, market: str) -> ResolvedSymbol | None:
    try:
        entry = directory.get(code, market)
    except Exception:
        return None
    return _from_match(entry) if entry is not None else None


def _first_match(directory: Any, query: str) -> ResolvedSymbol | None:
    """The directory's best match when it is confident and unambiguous."""
    try:
        matches = directory.resolve(query, market=None, limit=2)
    except Exception:
        return None
    if not matches:
        return None
    best = matches[0]
    score = float(getattr(best, "score", 0.0))
    if score < 95.0 or getattr(best, "ambiguous", False):
        return None
    return _from_match(best)


def _suggestions(directory: Any, query: str) -> list[str]:
    try:
        matches = directory.resolve(query, market=None, limit=5)
    except Exception:
        matches = []
    out = [f"{m.code} {m.name}".strip() for m in matches]
    return out or snapshot.suggest(query)
