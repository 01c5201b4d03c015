"""Finding symbols in a sentence: the symbols directory when it is there, else code shapes."""

from __future__ import annotations

import re
from typing import Any

from core.errors import UnknownSymbol

_TOKEN = re.compile(r"\$?[A-Za-z]{1,5}(?:[.-][A-Za-z])?\b|\b\d{6}\b|[\u4e00-\u9fff]{2,6}")
_STOP = {"I", "A", "THE", "AND", "OR", "FOR", "OF", "ON", "IN", "IS", "IT", "ME", "MY", "TO",
         "WHAT", "HOW", "SHOW", "LAST", "LATEST", "CLOSE", "PRICE", "CHART", "RSI", "MACD",
         "ICT", "VS", "KDJ", "ATR", "OBV", "AT", "BY", "DO", "BE", "AN", "ALL", "ARE", "WAS"}


def find_symbols(text: str) -> list[str]:
    """Codes of the symbols mentioned in `text`, in order of appearance, as the tools take
    them: ``600519``, ``NVDA``, ``000300``, ``^GSPC``, ``BTC-USD``, ``EURUSD``; an index whose
    code a listed share also uses goes by its qualified form (上证指数 -> ``000001.SH``, since
    a bare ``000001`` is 平安银行)."""
    try:
        from tools.symbols import default_directory

        directory = default_directory()
        matches = directory.extract(text)
        return list(dict.fromkeys(_routable(m, directory) for m in matches))
    except (ImportError, AttributeError):
        pass
    from tools.symbol_lookup import resolve_symbol

    found: list[str] = []
    for token in _TOKEN.findall(text):
        clean = token.lstrip("$")
        if clean.upper() in _STOP or (clean.isalpha() and clean.isascii()
                                      and not clean.isupper() and not token.startswith("$")):
            continue
        try:
            found.append(resolve_symbol(clean).code)
        except UnknownSymbol:
            continue
    return list(dict.fromkeys(found))


def _routable(match: Any, directory: Any) -> str:
    """The code, or the written symbol when the bare code belongs to another security."""
    if match.kind == "stock":
        return str(match.code)
    listed = directory.get(match.code, match.market)
    if listed is not None and listed.symbol != match.symbol:
        return str(match.symbol)
    return str(match.code)
