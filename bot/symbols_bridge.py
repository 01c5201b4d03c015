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
        if not matches and _ONE_WORD.match(text):
            matches = _only_a_symbol(directory, text)
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


# a message of one Latin word or symbol: "btc", "nvda?", "$spx", "BTC-USD", "S&P"
_ONE_WORD = re.compile(r"^\s*\$?[A-Za-z0-9^][A-Za-z0-9.^/&-]{0,23}[\s?!.]*$")
_SURE = 97.0  # an exact code, ticker, name or alias; not fuzzy, nor a common word's ticker
_WELL_KNOWN = 99.0  # an exact name plus the popularity bonus of an index member or curated name
_CODE_WHY = ("ticker", "symbol", "code", "index code", "HK code", "spelled-out ticker")
# one-word messages that are chat, whatever company shares the name
_CHAT_WORDS = frozenset({"hello", "hi", "hey", "thanks", "news", "gold", "crypto", "help",
                         "start", "stop", "ok", "yes", "no", "test", "ping"})


def _only_a_symbol(directory: Any, text: str) -> list[Any]:
    """A message that is only a symbol is that symbol, even where a sentence would need a
    finance word to take it: "btc", "spx", "nvda", "nasdaq", "s&p". A company's name counts
    when it is a well-known one's: "tesla" is TSLA, and an everyday word only as a proper
    noun ("Apple" is AAPL, "apple" is not), while "hello" (Hello Group), "gold" (Barrick) and
    "news" (News Corp) stay chat."""
    from tools.symbols.index import common_word

    word = text.strip().rstrip("?!.")
    top = directory.resolve(word, limit=1)
    if not top or top[0].score < _SURE:
        return []
    m = top[0]
    if m.why.startswith(_CODE_WHY) or m.kind != "stock":
        return [m]
    if m.score < _WELL_KNOWN or word.lower() in _CHAT_WORDS:
        return []
    # an everyday word that is also a well-known company's name: only as a proper noun
    return [m] if word[:1].isupper() or not common_word(word, very=True) else []


def _routable(match: Any, directory: Any) -> str:
    """The code, or the written symbol when the bare code belongs to another security."""
    if match.kind == "stock":
        return str(match.code)
    listed = directory.get(match.code, match.market)
    if listed is not None and listed.symbol != match.symbol:
        return str(match.symbol)
    return str(match.code)
