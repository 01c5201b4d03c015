"""Finding symbols in a sentence: `analyst.instruments` (the one way Bullpen reads instruments
in text) over the symbols directory when it is there, else code shapes; and the period it
asks about (`tools.periods`)."""

from __future__ import annotations

import re

from core.errors import UnknownSymbol

_TOKEN = re.compile(r"\$?[A-Za-z]{1,5}(?:[.-][A-Za-z])?\b|\b\d{6}\b|[\u4e00-\u9fff]{2,6}")
_STOP = {"I", "A", "THE", "AND", "OR", "FOR", "OF", "ON", "IN", "IS", "IT", "ME", "MY", "TO",
         "WHAT", "HOW", "SHOW", "LAST", "LATEST", "CLOSE", "PRICE", "CHART", "RSI", "MACD",
         "ICT", "VS", "KDJ", "ATR", "OBV", "AT", "BY", "DO", "BE", "AN", "ALL", "ARE", "WAS"}


def find_symbols(text: str) -> list[str]:
    """Codes of the instruments `text` names, in order of appearance, as the tools take
    them: ``600519``, ``NVDA``, ``000300``, ``^GSPC``, ``BTC-USD``, ``EURUSD``; an index whose
    code a listed share also uses goes by its qualified form (上证指数 -> ``000001.SH``, since
    a bare ``000001`` is 平安银行). The same reading as the offline analyst's understanding
    (`analyst.instruments.find_instruments`): misspelt and lower-case names inside a sentence
    ("Nvidea", "how is nvidia and amd doing", 苹果怎么样), index words (上证指数, 沪指), and a
    message that is only a symbol ("btc", "spx")."""
    try:
        from analyst.instruments import find_instruments
        from tools.symbols import default_directory

        directory = default_directory()
    except (ImportError, AttributeError):
        return _by_code_shape(text)
    return [i.symbol for i in find_instruments(text, directory)]


def find_period(text: str) -> str | None:
    """The period `text` asks about as the tools' `period` argument takes it (``3mo``,
    ``1y``, ``2024-09``), or None: the same reading as the offline analyst's
    (`tools.periods.find_period`)."""
    from tools.periods import find_period as read

    found = read(text)
    return found.text if found is not None else None


def _by_code_shape(text: str) -> list[str]:
    """Without the symbols directory: words shaped like codes the resolver knows."""
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
