"""Indices, crypto and FX pairs: the instruments no package lists, from ``aliases.json``.

They are not listed securities: every index builds them from the curated file (so loading the
directory from the ``stocknames`` table, which holds listed securities only, still knows them),
and they are never saved there. Their codes are the ones the tools route (``000300``,
``^GSPC``, ``BTC-USD``, ``EURUSD``); an index whose code is also a share's (``000001`` is
上证指数 on Shanghai and 平安银行 on Shenzhen) is told apart by its exchange.

Forms, and how ``extract`` treats them:

- ``symbols`` are code-like (``BTC-USD``, ``EUR/USD``, ``SPX``, ``000300.SH``); ``resolve``
  scores them as codes. A short all-letter one (``BTC``, ``ETH``, ``SPX``) counts in a sentence
  only in capitals (or as ``$BTC``), or in lower case next to a finance word or a bar size.
- ``names`` count written in any case (``bitcoin``, ``S&P 500``, ``沪深300``).
- ``cased`` count only as written ("the Dow"; "the dow" is left alone).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from tools.symbols.model import SymbolEntry

ANY, UPPER, CASED = "any", "upper", "cased"
_SHORT_SYMBOL = re.compile(r"[A-Za-z]{1,5}")
_CN_BARE = re.compile(r"\d{6}")
_CN_QUALIFIED = re.compile(r"^(?:(SH|SZ)(\d{6})|(\d{6})\.(SH|SZ|SS))$")
_TOKEN = re.compile(r"[A-Za-z]+|\d+|[\u3400-\u9fff]+|\s+|.")


@dataclass(frozen=True)
class Instrument:
    """One instrument: its entry and the forms people write it in."""

    entry: SymbolEntry
    symbols: tuple[str, ...]
    names: tuple[str, ...]  # Latin and Chinese names, traditional forms included
    cased: tuple[str, ...]
    pinyin: tuple[str, ...]

    def cn_codes(self) -> list[tuple[str, str | None]]:
        """(code, exchange) of the A-share code forms: ("000300", "SH"), ("399300", None)."""
        out: list[tuple[str, str | None]] = []
        for s in self.symbols:
            if _CN_BARE.fullmatch(s):
                out.append((s, None))
            elif m := _CN_QUALIFIED.match(s.upper()):
                code = m.group(2) or m.group(3)
                exch = m.group(1) or m.group(4)
                out.append((code, "SH" if exch == "SS" else exch))
        return out

    def text_forms(self) -> list[tuple[str, str]]:
        """(form, policy) of every form ``extract`` looks for in a sentence."""
        out: list[tuple[str, str]] = []
        for s in self.symbols:
            if _CN_BARE.fullmatch(s) or _CN_QUALIFIED.match(s.upper()):
                continue  # the code passes find those
            out.append((s, UPPER if _SHORT_SYMBOL.fullmatch(s) else ANY))
        for n in (self.entry.name, *(() if self.entry.name_en is None else (self.entry.name_en,)),
                  *self.names):
            out.append((n, ANY))
        out.extend((c, CASED) for c in self.cased)
        return out


def load_instruments(curated: dict[str, Any]) -> list[Instrument]:
    """The curated instruments (an empty list when the file has none)."""
    out: list[Instrument] = []
    for row in curated.get("instruments", []):
        names = tuple(row.get("names", [])) + tuple(row.get("traditional", []))
        entry = SymbolEntry(
            code=row["code"],
            market=row["market"],
            exchange=row.get("exchange"),
            name=row["name"],
            name_en=row.get("name_en"),
            # names before symbols: a spoken name is the first Latin alias ("Bitcoin",
            # "S&P 500"), not "BTC-USD"
            aliases=tuple(dict.fromkeys(
                [*_latin_first(row["name"], names), *row.get("cased", []),
                 *row.get("symbols", [])]
            )),
        )
        out.append(
            Instrument(
                entry=entry,
                symbols=tuple(row.get("symbols", [])),
                names=names,
                cased=tuple(row.get("cased", [])),
                pinyin=tuple(row.get("pinyin", [])),
            )
        )
    return out


def _latin_first(name: str, names: tuple[str, ...]) -> list[str]:
    lead = [name] if name.isascii() else []
    return [*lead, *(n for n in names if n.isascii()), *(n for n in names if not n.isascii())]


def form_pattern(form: str) -> str:
    """A regex for one written form: spaces may vary ("S & P 500", "CSI300", "沪深 300") and
    Latin words keep their boundaries."""
    parts: list[str] = []
    tokens = _TOKEN.findall(form)
    for j, tok in enumerate(tokens):
        if tok.isspace():
            prev, nxt = tokens[j - 1], tokens[j + 1] if j + 1 < len(tokens) else ""
            same = prev[-1:].isalpha() and nxt[:1].isalpha() and prev.isascii() and nxt.isascii()
            parts.append(r"\s+" if same else r"[\s\-]*")
        elif tok in "/&":
            parts.append(r"\s*" + re.escape(tok) + r"\s*")
        elif tok == "-" and 0 < j < len(tokens) - 1:
            parts.append(r"[\s\-]?")
        else:
            if parts and tokens[j - 1][-1:].isdigit() != tok[:1].isdigit() and not (
                tokens[j - 1].isspace() or tokens[j - 1] in "/&-"
            ):
                parts.append(r"\s?")  # "沪深 300", "CSI300" and "CSI 300"
            parts.append(re.escape(tok))
    body = "".join(parts)
    left = r"(?<![A-Za-z0-9_])\$?" if form[:1].isascii() and form[:1].isalnum() else ""
    if form[:1] == "^":
        left = r"(?<![A-Za-z0-9_])"
    right = r"(?![A-Za-z0-9_])" if form[-1:].isascii() and form[-1:].isalnum() else ""
    if form[-1:].isdigit():
        right = r"(?![0-9])" if not form[-1:].isascii() else r"(?![A-Za-z0-9_])"
    return left + body + right


class FormMatcher:
    """Finds the written forms in a sentence, leftmost first, longest form first at a place.

    Two compiled alternations: Chinese forms (sre skips ahead on their literal first
    characters) and Latin ones, tried only at a word start whose first two characters begin
    some form, so a sentence with no instrument costs a few set lookups.
    """

    def __init__(self, forms: Iterable[str]) -> None:
        unique = sorted(set(forms), key=lambda f: (-len(f), f))
        latin = [f for f in unique if f[:1].isascii()]
        cjk = [f for f in unique if not f[:1].isascii()]
        self._heads = frozenset(_head(f) for f in latin)
        self._latin = _alternation([_unanchored(form_pattern(f)) for f in latin], re.I)
        self._cjk = _alternation([form_pattern(f) for f in cjk], 0)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        found: list[re.Match[str]] = []
        if self._cjk is not None and not text.isascii():
            found += self._cjk.finditer(text)
        if self._latin is not None:
            for w in _WORD_START.finditer(text):
                m = self.match_latin(text, w.start())
                if m is not None:
                    found.append(m)
        found.sort(key=lambda m: (m.start(), -m.end()))
        return iter(found)

    def match(self, text: str, pos: int) -> re.Match[str] | None:
        """The longest form starting exactly at ``pos``."""
        if self._cjk is not None and not text[pos : pos + 1].isascii():
            return self._cjk.match(text, pos)
        if pos and (text[pos - 1].isascii() and (text[pos - 1].isalnum() or text[pos - 1] == "_")):
            return None
        return self.match_latin(text, pos)

    def match_latin(self, text: str, pos: int) -> re.Match[str] | None:
        if self._latin is None or _head(text[pos : pos + 12]) not in self._heads:
            return None
        return self._latin.match(text, pos)


_WORD_START = re.compile(r"(?<![A-Za-z0-9_$^])[$^]?[A-Za-z]")
_LEFT = (r"(?<![A-Za-z0-9_])\$?", r"(?<![A-Za-z0-9_])")


def _head(text: str) -> str:
    """First two characters that matter: "$S & P 500" -> "s&"."""
    return "".join(text.lstrip("$").split()).lower()[:2]


def _unanchored(pattern: str) -> str:
    for left in _LEFT:
        if pattern.startswith(left):
            return pattern[len(left) :]
    return pattern


def _alternation(patterns: list[str], flags: int) -> re.Pattern[str] | None:
    if not patterns:
        return None
    return re.compile(r"\$?(?:" + "|".join(f"(?:{p})" for p in patterns) + ")", flags)
