"""Transcript -> the question the agent sees, with stock names fixed and codes attached.

Four passes, each conservative:

1. Tickers spelled letter by letter ("N V D A", "n-v-d-a", "A.M.D.") become "N V D A", which
   the directory's ``extract`` reads as a ticker; only letter runs that are a listed ticker are
   touched, and the text keeps its length so spans stay valid.
2. Codes said digit by digit or as a number ("six oh oh five one nine", "600 519") become
   the code when the directory lists it (:mod:`bot.voice.codes`; length kept).
3. ``SymbolDirectory.extract`` finds names, tickers and codes (either language).
4. Speech errors ("then video", "broad come", "KP Morgan"): runs of words no name claimed are
   compared by sound with the hint vocabulary only (watchlist, recent and most-traded names),
   so an ordinary sentence cannot turn into a ticker nobody mentioned.

Every found security is written into the question as "NVIDIA (NVDA)"; everything else stays as
the user said it.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import lru_cache

from rapidfuzz import fuzz

from bot.voice.codes import normalise_codes
from bot.voice.hints import Hints, display_name
from tools.symbols import Match, SymbolDirectory
from tools.symbols.normalize import has_cjk, phonetic

_SPELLED = re.compile(r"(?<![\w'’])[A-Za-z](?:[ .\-]{1,2}[A-Za-z](?![\w'’])){1,4}\.?")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*")
_VOWELS = "AEIOU"

# Words that never carry a company name on their own (a window made only of these is skipped).
_STOP = frozenset("""
a about after all also am an and any are as at be been before buy by can could did do does
doing for from get give go going had has have he her how i if in into is it its just know
latest let like me more most my news no not now of on or our out please price right sell
she should show so some stock stocks than that the their them then there these they this to
today up us was we week what when where which who why will with would you your yes hi hello
ok okay think want look up down over chart quote share shares
""".split())

# Words a recogniser writes for the first syllable of a name that starts with an "n" sound:
# "en-VID-ia" -> "and video", "then video"; "IN-tel" -> "in tell".
_N_WORDS = frozenset({"n", "en", "in", "an", "and", "end", "then", "them", "than", "un"})
_COORDINATORS = frozenset({"and", "or", "vs", "versus", "with", "plus", "&"})


@lru_cache(maxsize=1)
def common_words() -> frozenset[str]:
    """Ordinary English words (the symbols directory's list, most frequent ~28k)."""
    from importlib import resources

    text = resources.files("tools.symbols").joinpath("common_en.txt").read_text("utf-8")
    return frozenset(w.strip() for w in text.splitlines() if w and not w.startswith("#"))


@dataclass(frozen=True)
class Correction:
    """The corrected question and the securities in it (spans index ``text``)."""

    text: str  # what was heard
    query: str  # what the agent gets
    symbols: list[Match] = field(default_factory=list)

    @property
    def codes(self) -> list[str]:
        return [m.symbol for m in self.symbols]


def normalise_spelling(text: str, directory: SymbolDirectory) -> str:
    """"n-v-d-a" / "A.M.D." -> "N V D A" / "A M D " when the letters are a listed ticker.

    Length-preserving, so spans found in the result are valid in ``text``.
    """

    def fix(m: re.Match[str]) -> str:
        raw = m.group(0)
        letters = "".join(ch for ch in raw if ch.isalpha())
        if len(letters) < 2 or directory.get(letters.upper(), "us") is None:
            return raw
        return "".join(ch.upper() if ch.isalpha() else " " for ch in raw)

    return _SPELLED.sub(fix, text)


@lru_cache(maxsize=4096)
def _sound(text: str) -> str:
    return phonetic(text)


def _variants(key: str) -> tuple[str, ...]:
    return (key, key[1:]) if len(key) > 3 and key[0] in _VOWELS else (key,)


def _similarity(words: list[str], key: str) -> float:
    """How alike the sound of ``words`` is to a name's sound key (rapidfuzz ratio, 0-100)."""
    heard = [_sound(" ".join(words))]
    if len(words) > 1 and words[0].lower() in _N_WORDS:
        heard.append("N" + _sound(" ".join(words[1:])))
    return max(fuzz.ratio(h, k) for h in heard for k in _variants(key) if h)


def _needed(key: str, common_only: bool) -> float:
    """Similarity required: stricter for short keys and for runs of ordinary words."""
    return 80.0 + (5.0 if len(key) <= 3 else 0.0) + (10.0 if common_only else 0.0)


def _coordinated(text: str, s: int, e: int, taken: list[tuple[int, int]]) -> bool:
    """True when [s, e) is joined to another found name by "and", "or", a comma..."""
    for a, b in taken:
        between = text[b:s] if b <= s else text[e:a]
        words = re.findall(r"[\w&]+", between.lower())
        if len(words) <= 1 and all(w in _COORDINATORS for w in words) and (
                words or "," in between or "/" in between):
            return True
    return False


def _sound_alikes(text: str, taken: list[tuple[int, int]], hints: Hints,
                  directory: SymbolDirectory) -> list[Match]:
    common = common_words()
    words = [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]
    free = [w for w in words if not any(s < w[2] and w[1] < e for s, e in taken)]
    spoken = {name.lower(): code for code, name in hints.names.items()}
    letters = [ch for ch in text if ch.isalpha()]
    shouting = sum(ch.isupper() for ch in letters) > 0.6 * max(1, len(letters))
    scored: list[tuple[float, int, int, str]] = []
    plain: list[tuple[int, int, str]] = []  # ordinary words that are also a name ("apple")
    for i in range(len(free)):
        for n in (1, 2, 3):
            run = free[i:i + n]
            if len(run) < n or any(not re.fullmatch(r"[\s\-]*", text[a[2]:b[1]])
                                   for a, b in itertools.pairwise(run)):
                break
            lows = [w[0].lower().replace("'", "").replace("’", "") for w in run]
            if all(w in _STOP for w in lows) or lows[-1] in _STOP:
                continue
            s, e = run[0][1], run[-1][2]
            if n == 1 and (lows[0] in common or lows[0] in _STOP):
                if lows[0] in spoken:
                    plain.append((s, e, spoken[lows[0]]))
                continue
            # an acronym the recogniser could not place ("KP Morgan") is not an ordinary word
            common_only = all((w in common or w in _STOP) and not (
                not shouting and 2 <= len(r[0]) <= 3 and r[0].isupper())
                for w, r in zip(lows, run, strict=True))
            parts = [w[0] for w in run]
            for code in hints.codes:
                for key in hints.sounds.get(code, ()):
                    sim = _similarity(parts, key)
                    if sim >= _needed(key, common_only):
                        scored.append((sim, s, e, code))
    out: list[Match] = []
    claimed: list[tuple[int, int]] = []
    ranked = sorted(scored, key=lambda t: (-t[0], t[2] - t[1], t[1]))
    # "apple" alone is fruit; "Nvidia and apple" is a company
    ranked += [(100.0, s, e, code) for s, e, code in plain
               if _coordinated(text, s, e, taken + [(a, b) for _, a, b, _ in ranked])]
    for sim, s, e, code in ranked:
        if any(a < e and s < b for a, b in claimed) or any(m.code == code for m in out):
            continue
        entry = directory.get(code)
        if entry is None:
            continue
        claimed.append((s, e))
        out.append(Match(code=entry.code, name=entry.name, market=entry.market,
                         exchange=entry.exchange, symbol=entry.symbol,
                         score=round(min(94.0, sim * 0.9), 2),
                         why=f"sounds like {hints.names[code]} ({text[s:e]!r})", span=(s, e)))
    return out


def correct(text: str, directory: SymbolDirectory, hints: Hints | None = None) -> Correction:
    """Find the securities in a transcript and write them into the question."""
    text = text.strip()
    if not text:
        return Correction(text="", query="")
    work = normalise_codes(normalise_spelling(text, directory), directory)
    found = [m for m in directory.extract(work) if m.span is not None]
    if hints is not None and hints.codes:
        taken = [m.span for m in found if m.span is not None]
        known = {m.code for m in found}
        found += [m for m in _sound_alikes(work, taken, hints, directory)
                  if m.code not in known]
    found.sort(key=lambda m: m.span or (0, 0))
    return Correction(text=text, query=_rewrite(work, found, directory, hints), symbols=found)


def _rewrite(text: str, found: list[Match], directory: SymbolDirectory,
             hints: Hints | None) -> str:
    chinese = has_cjk(text)
    out = text
    for m in sorted(found, key=lambda m: -(m.span or (0, 0))[0]):
        assert m.span is not None
        s, e = m.span
        entry = directory.get(m.code, m.market)
        if entry is not None and entry.symbol != m.symbol:
            entry = None  # the code of another instrument (000001: 平安银行, 000001.SH: 上证指数)
        name = (hints.names.get(m.code) if hints is not None and not chinese and entry is not None
                else None) or (display_name(entry, chinese=chinese) if entry is not None
                               else m.name)
        label = name if name == m.symbol else f"{name} ({m.symbol})"
        pad = " " if e < len(out) and out[e].isalnum() else ""
        out = out[:s] + label + pad + out[e:]
    out = re.sub(r"[ \t]{2,}", " ", out)
    return re.sub(r"(?<=\S)[ \t]+([?!.,;:])", r"\1", out).strip()
