"""Typed records of the symbols directory: one listed security, and one resolution result."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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


class SymbolEntry(BaseModel):
    """One listed security as the directory knows it (a row of ``stocknames``)."""

    model_config = ConfigDict(frozen=True)

    code: str  # 6 digits (cn), 4-5 digits (hk), SEC ticker with '-' for classes (us),
    # index ticker (^GSPC), crypto pair (BTC-USD), FX pair (EURUSD)
    market: Market
    exchange: str | None = None  # SH, SZ, BJ, Nasdaq, NYSE, OTC, CBOE, HKEX
    name: str  # local short name: 贵州茅台, "Apple Inc."
    name_en: str | None = None  # English/official name when different from name
    pinyin: str | None = None  # "gui zhou mao tai" (cn only)
    initials: str | None = None  # "gzmt" (cn only)
    name_tw: str | None = None  # traditional characters (cn/hk only)
    aliases: list[str] = Field(default_factory=list)
    sector: str | None = None
    list_date: date | None = None
    indices: list[str] = Field(default_factory=list)  # csi300, csi500, sp500, nasdaq100, dow30
    cik: str | None = None
    rank: int | None = None  # source order (SEC lists by size); lower is bigger
    primary: bool = True  # False for secondary share classes and preferreds of one issuer

    @property
    def symbol(self) -> str:
        """Conventional written form, e.g. ``600519.SH``."""
        return display_symbol(self.code, self.market, self.exchange)

    @property
    def kind(self) -> Kind:
        """stock, index, crypto or fx (derived, so the stored table needs no new column)."""
        return instrument_kind(self.code, self.market, self.exchange)

    @classmethod
    def trusted(cls, data: dict[str, Any]) -> SymbolEntry:
        """Wrap a complete, already valid row (our own table) without validation.

        Four times cheaper than ``model_construct`` (it matters when 16k rows load at start);
        falls back to it when the row does not carry exactly the model's fields.
        """
        if data.keys() != _FIELDS:
            return cls.model_construct(**data)
        obj = cls.__new__(cls)
        object.__setattr__(obj, "__dict__", data)
        object.__setattr__(obj, "__pydantic_fields_set__", set(_FIELDS))
        object.__setattr__(obj, "__pydantic_extra__", None)
        object.__setattr__(obj, "__pydantic_private__", None)
        return obj


_FIELDS = frozenset(SymbolEntry.model_fields)


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
