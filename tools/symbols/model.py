"""Typed records of the symbols directory: one listed security, and one resolution result."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from dataclasses import MISSING, dataclass, fields
from datetime import date
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field

Market = Literal["cn", "us", "hk", "crypto", "fx"]
Kind = Literal["stock", "index", "crypto", "fx"]

_SUFFIX = {"SH": ".SH", "SZ": ".SZ", "BJ": ".BJ"}


def display_symbol(code: str, market: str, exchange: str | None) -> str:
    """The conventional written form: ``600519.SH``, ``0700.HK``, ``AAPL``."""
    if market == "cn":
        return code + _SUFFIX.get(exchange or "", "")
    if market == "hk":
        return f"{code}.HK"
    return code


def instrument_kind(code: str, market: str, exchange: str | None) -> Kind:
    """What a (code, market, exchange) is, as ``tools.symbol_lookup`` routes it.

    Listed securities (shares, ETFs, funds) are "stock"; "index" are the A-share index codes
    (000xxx on Shanghai, 399xxx on Shenzhen: no listed share uses them) and US index tickers
    (``^GSPC``); crypto and FX pairs have their own markets.
    """
    if market == "crypto":
        return "crypto"
    if market == "fx":
        return "fx"
    if market == "cn" and (
        (exchange == "SH" and code.startswith("000"))
        or (exchange == "SZ" and code.startswith("399"))
    ):
        return "index"
    if market == "us" and code.startswith("^"):
        return "index"
    return "stock"


@dataclass(frozen=True, slots=True, kw_only=True)
class SymbolEntry:
    """One listed security as the directory knows it (a row of ``stocknames``).

    A frozen, slotted dataclass rather than a pydantic model: the directory holds ~16,000 of
    them for the life of the process, and a model with its ``__dict__`` and fields-set cost
    about ten times the memory. The constructor still checks the market and the field types
    that matter; ``trusted`` wraps rows from our own table without checks.
    """

    code: str  # 6 digits (cn), 4-5 digits (hk), SEC ticker with '-' for classes (us),
    # index ticker (^GSPC), crypto pair (BTC-USD), FX pair (EURUSD)
    market: Market
    exchange: str | None = None  # SH, SZ, BJ, Nasdaq, NYSE, OTC, CBOE, HKEX
    name: str  # local short name: 贵州茅台, "Apple Inc."
    name_en: str | None = None  # English/official name when different from name
    pinyin: str | None = None  # "gui zhou mao tai" (cn only)
    initials: str | None = None  # "gzmt" (cn only)
    name_tw: str | None = None  # traditional characters (cn/hk only)
    aliases: tuple[str, ...] = ()
    sector: str | None = None
    list_date: date | None = None
    indices: tuple[str, ...] = ()  # csi300, csi500, sp500, nasdaq100, dow30
    cik: str | None = None
    rank: int | None = None  # source order (SEC lists by size); lower is bigger
    primary: bool = True  # False for secondary share classes and preferreds of one issuer

    def __post_init__(self) -> None:
        if self.market not in _MARKETS:
            raise ValueError(f"market must be one of {sorted(_MARKETS)}, not {self.market!r}")
        for name in ("code", "name"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"{name} must be a string")
        if self.list_date is not None and not isinstance(self.list_date, date):
            raise TypeError("list_date must be a date")
        if self.rank is not None and not isinstance(self.rank, int):
            raise TypeError("rank must be an integer")
        _set(self, "aliases", tuple(self.aliases))
        _set(self, "indices", _shared_tuple(self.indices))
        for name in ("market", "exchange", "sector"):
            value = getattr(self, name)
            if type(value) is str:
                _set(self, name, sys.intern(value))

    @property
    def symbol(self) -> str:
        """Conventional written form, e.g. ``600519.SH``."""
        return display_symbol(self.code, self.market, self.exchange)

    @property
    def kind(self) -> Kind:
        """stock, index, crypto or fx (derived, so the stored table needs no new column)."""
        return instrument_kind(self.code, self.market, self.exchange)

    def model_dump(self) -> dict[str, Any]:
        """The fields as a dict, list-valued like the table's arrays (and the pydantic model
        this class replaced)."""
        out = {name: getattr(self, name) for name in FIELDS}
        out["aliases"] = list(self.aliases)
        out["indices"] = list(self.indices)
        return out

    @classmethod
    def trusted(cls, data: dict[str, Any]) -> SymbolEntry:
        """Wrap a row of our own table (or a ``model_dump``) without validation; missing
        fields take their defaults, unknown keys are ignored."""
        return cls.from_values(tuple(data.get(name, _DEFAULTS.get(name)) for name in FIELDS))

    @classmethod
    def from_values(cls, values: Sequence[Any]) -> SymbolEntry:
        """Wrap field values in ``FIELDS`` order without validation (loading 16k rows)."""
        obj = object.__new__(cls)
        for setter, value in zip(_SETTERS, values, strict=True):
            setter(obj, value)
        aliases = obj.aliases
        if type(aliases) is not tuple:
            _set(obj, "aliases", tuple(aliases or ()))
        _set(obj, "indices", _shared_tuple(obj.indices or ()))
        for name in ("market", "exchange", "sector"):
            value = getattr(obj, name)
            if type(value) is str:
                _set(obj, name, sys.intern(value))
        return obj


FIELDS: tuple[str, ...] = tuple(f.name for f in fields(SymbolEntry))
_MARKETS = frozenset(get_args(Market))
_DEFAULTS: dict[str, Any] = {
    f.name: f.default for f in fields(SymbolEntry) if f.default is not MISSING
}
# slot descriptors: set a field of a frozen instance while constructing it
_SETTERS = tuple(SymbolEntry.__dict__[name].__set__ for name in FIELDS)
_SETTER = dict(zip(FIELDS, _SETTERS, strict=True))
_TUPLES: dict[tuple[str, ...], tuple[str, ...]] = {}


def _set(obj: SymbolEntry, name: str, value: Any) -> None:
    _SETTER[name](obj, value)


def _shared_tuple(values: Iterable[str]) -> tuple[str, ...]:
    """One tuple object per distinct short list (index memberships: a few dozen combinations
    shared by thousands of entries)."""
    key = tuple(sys.intern(v) for v in values)
    if len(key) > 4:
        return key
    return _TUPLES.setdefault(key, key)


class Match(BaseModel):
    """A directory hit for a query or a mention in a sentence."""

    code: str
    name: str
    market: Market
    exchange: str | None = None
    symbol: str  # 600519.SH, AAPL, 0700.HK
    score: float = Field(ge=0, le=100)
    why: str  # which rule matched: "ticker", "alias 茅台", "pinyin", "fuzzy name ...", ...
    span: tuple[int, int] | None = None  # [start, end) in the text given to extract()
    ambiguous: bool = False  # another, different security scored nearly as high
    alternatives: list[str] = Field(default_factory=list)  # other symbols for the same mention

    @property
    def kind(self) -> Kind:
        """stock, index, crypto or fx (a property: the JSON output keeps its keys)."""
        return instrument_kind(self.code, self.market, self.exchange)
