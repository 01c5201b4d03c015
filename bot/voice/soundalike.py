"""Names a Mandarin transcript may have misheard, found by pinyin initials (tones dropped).

Whisper base writes a name it does not know as words that sound alike: 五粮液 as 我俩也
(wu liang ye / wo lia ye), 中信证券 as 中行政却. The syllables' initials survive best
(w-l-y), so the directory's Chinese names are indexed by their initials, with the pairs a
recogniser and a southern accent confuse merged (zh/z, ch/c, sh/s, n/l), and a window of the
transcript is compared syllable by syllable: half for the initial, half for the final.

A window that sounds exactly like a popular name once initials and finals are merged and tones
dropped (武良业 and 五粮液 are both wu-liang-ye, 上正指数 is 上证指数, 因为达 is 英伟达 with in/ing
merged), or a window of four syllables or more that differs from one in at most a syllable's
initial or final (创业板子, 此今况也 for 紫金矿业), is *sure* (:attr:`Suggestion.sure`): the
reading acts on it. Anything less alike is a suggestion the pipeline asks about ("did you mean
五粮液 (000858)?"). Only names people ask about are indexed (the CSI 300 and CSI 500, the
indexes such as 上证指数 and 沪深300, names with a curated Chinese alias such as 英伟达 and
台积电, the hint vocabulary) and only names of three syllables or more: two-syllable homophones
are everywhere in ordinary speech. A run of digits is one unit that must match exactly
(护身300 is heard for 沪深300).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from tools.symbols import SymbolDirectory, SymbolEntry
from tools.symbols.normalize import has_cjk, is_cjk_char

_INITIALS = ("zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h", "j", "q",
             "x", "r", "z", "c", "s", "y", "w")
_SAME_INITIAL = {"zh": "z", "ch": "c", "sh": "s", "n": "l"}
_SAME_FINAL = {"ing": "in", "eng": "en", "ang": "an", "iang": "ian", "uang": "uan",
               "uo": "o", "ue": "ve", "v": "u"}
POPULAR_INDICES = frozenset({"csi300", "csi500"})
# Least similarity to suggest a name, by its length in units: 我俩也 0.73, 中行政却 0.66.
MIN_SIMILARITY = {3: 0.72, 4: 0.64, 5: 0.64, 6: 0.64}
# Least similarity to act on a name: three units must sound the same (merged initials and
# finals); from four on, one initial or one final may differ (创业胆子 for 创业板指 is 0.875).
SURE_SIMILARITY = {3: 1.0, 4: 0.87, 5: 0.89, 6: 0.9}
# ... and the syllables whose characters differ must be this alike on their own: characters a
# window shares with a name are no evidence that it was misheard for it (中国证监 shares 中国
# with 中国能建 and sounds only half like 能建: 0.75; 此今况也 for 紫金矿业 is 0.83).
SURE_CHANGED = 0.8
_UNIT = re.compile(r"[0-9]+|.", re.S)


@lru_cache(maxsize=16384)
def syllables(text: str) -> tuple[str, ...]:
    """Toneless pinyin, one syllable a character (characters pypinyin cannot read dropped)."""
    from pypinyin import Style, lazy_pinyin

    return tuple(lazy_pinyin(text, style=Style.NORMAL, errors="ignore"))


@lru_cache(maxsize=16384)
def units(text: str) -> tuple[tuple[int, int, str], ...] | None:
    """(start, end, sound) of each unit of a run of Chinese characters and digits: a
    character's toneless pinyin, a run of digits as written; None when ``text`` has anything
    else or a character has no reading."""
    out = []
    for m in _UNIT.finditer(text):
        piece = m.group(0)
        if piece.isdigit():
            out.append((m.start(), m.end(), piece))
        elif is_cjk_char(piece):
            syl = syllables(piece)
            if len(syl) != 1:
                return None
            out.append((m.start(), m.end(), syl[0]))
        else:
            return None
    return tuple(out)


def split(syllable: str) -> tuple[str, str]:
    """("zhong") -> ("z", "ong"): merged initial and final; a digit run is its own final."""
    if syllable.isdigit():
        return "#", syllable
    for ini in _INITIALS:
        if syllable.startswith(ini) and len(syllable) > len(ini):
            final = syllable[len(ini):]
            return _SAME_INITIAL.get(ini, ini), _SAME_FINAL.get(final, final)
    return "", _SAME_FINAL.get(syllable, syllable)


def similarity(heard: tuple[str, ...], name: tuple[str, ...]) -> float:
    """0..1: how alike two equally long unit sequences sound (digit runs must be equal)."""
    if len(heard) != len(name) or not name:
        return 0.0
    total = 0.0
    for a, b in zip(heard, name, strict=True):
        if a.isdigit() or b.isdigit():
            if a != b:
                return 0.0
            total += 1.0
            continue
        (ia, fa), (ib, fb) = split(a), split(b)
        total += 0.5 * (ia == ib) + 0.5 * (1.0 if fa == fb else fuzz.ratio(fa, fb) / 200.0)
    return total / len(name)


def _key(syls: tuple[str, ...]) -> str:
    return "-".join(split(s)[0] if not s.isdigit() else s for s in syls)


def _wildcards(key: str) -> list[str]:
    parts = key.split("-")
    return ["-".join("*" if k == i else p for k, p in enumerate(parts))
            for i in range(len(parts)) if not parts[i].isdigit()]


@dataclass(frozen=True)
class SoundIndex:
    """Popular Chinese names by their initials (exact key and with one initial unknown)."""

    # "g-z-m-t" -> ((贵州茅台, 600519.SH, (gui, zhou, mao, tai)), ...)
    by_key: dict[str, tuple[tuple[str, str, tuple[str, ...]], ...]]


def _popular(entry: SymbolEntry, extra: frozenset[str]) -> bool:
    return (entry.code in extra or bool(POPULAR_INDICES & set(entry.indices))
            or (entry.market == "cn" and entry.code.startswith(("000", "399"))
                and "指" in entry.name))


def _chinese_names(entry: SymbolEntry) -> list[str]:
    names = [entry.name, *entry.aliases]
    return [n for n in dict.fromkeys(names) if has_cjk(n) and 3 <= len(n) <= 8]


@lru_cache(maxsize=4)
def _index(directory_id: int, directory: SymbolDirectory, extra: frozenset[str]) -> SoundIndex:
    keyed: dict[str, list[tuple[str, str, tuple[str, ...]]]] = defaultdict(list)
    listed = [e for e in directory.entries
              if _popular(e, extra) or (e.market != "cn" and any(has_cjk(a) for a in e.aliases))]
    # indexes and other instruments (上证指数, 沪深300, 创业板指): all are names people ask about
    for entry in [*listed, *directory.instruments]:
        for name in _chinese_names(entry):
            found = units(name)
            if found is None or not 3 <= len(found) <= 6 or sum(
                    not u[2].isdigit() for u in found) < 2:
                continue
            syls = tuple(u[2] for u in found)
            key = _key(syls)
            keyed[key].append((name, entry.symbol, syls))
            if len(syls) >= 4:
                for wild in _wildcards(key):
                    keyed[wild].append((name, entry.symbol, syls))
    return SoundIndex(by_key={k: tuple(dict.fromkeys(v)) for k, v in keyed.items()})


def sound_index(directory: SymbolDirectory, extra: frozenset[str] = frozenset()) -> SoundIndex:
    """The index for ``directory`` (built once, ~1 s); ``extra`` codes count as popular."""
    return _index(id(directory), directory, extra)


def _changed(window: str, name: str, heard: tuple[tuple[int, int, str], ...],
             sound: tuple[str, ...]) -> float:
    """How alike the units are whose characters differ between ``window`` and ``name``."""
    spans = units(name)
    if spans is None:
        return 0.0
    pairs = [(h[2], n) for h, n, (a, b, _) in zip(heard, sound, spans, strict=True)
             if window[h[0]:h[1]] != name[a:b]]
    if not pairs:
        return 1.0
    return similarity(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs))


@dataclass(frozen=True)
class Suggestion:
    """A directory name a window of the transcript may have been misheard for."""

    start: int
    end: int
    name: str
    symbol: str
    similarity: float
    size: int  # the name's length in units
    changed: float = 0.0  # the similarity of the units whose characters differ

    @property
    def sure(self) -> bool:
        """Alike enough to act on, not only to ask about (see :data:`SURE_SIMILARITY`)."""
        return self.similarity >= SURE_SIMILARITY[self.size] and self.changed >= SURE_CHANGED


def suggest(text: str, index: SoundIndex, *,
            taken: Sequence[tuple[int, int]] = ()) -> list[Suggestion]:
    """The best non-overlapping suggestions in ``text`` (windows outside ``taken``)."""
    found: list[Suggestion] = []
    marks = [(m.start(), m.end()) for m in _UNIT.finditer(text)]
    for size in (6, 5, 4, 3):
        for i in range(len(marks) - size + 1):
            start, end = marks[i][0], marks[i + size - 1][1]
            window = text[start:end]
            if any(a < end and start < b for a, b in taken):
                continue
            heard = units(window)
            if heard is None or len(heard) != size:
                continue
            syls = tuple(u[2] for u in heard)
            key = _key(syls)
            seen: set[tuple[str, str]] = set()
            for k in [key, *(_wildcards(key) if size >= 4 else [])]:
                for name, symbol, sound in index.by_key.get(k, ()):
                    if (name, symbol) in seen or len(sound) != size or name == window:
                        continue
                    seen.add((name, symbol))
                    sim = similarity(syls, sound)
                    if sim >= MIN_SIMILARITY[size]:
                        found.append(Suggestion(start, end, name, symbol, round(sim, 3), size,
                                                _changed(window, name, heard, sound)))
    found.sort(key=lambda s: (-s.similarity, -s.size, s.start))
    out: list[Suggestion] = []
    for s in found:
        if any(o.start < s.end and s.start < o.end for o in out):
            continue
        out.append(s)
    return sorted(out, key=lambda s: s.start)
