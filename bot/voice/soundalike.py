"""Names a Mandarin transcript may have misheard, found by pinyin initials (tones dropped).

Whisper base writes a name it does not know as words that sound alike: 五粮液 as 我俩也
(wu liang ye / wo lia ye), 中信证券 as 中行政却. The syllables' initials survive best
(w-l-y), so the directory's Chinese names are indexed by their initials, with the pairs a
recogniser and a southern accent confuse merged (zh/z, ch/c, sh/s, n/l), and a window of the
transcript is compared syllable by syllable: half for the initial, half for the final.

These are suggestions, never answers: the pipeline asks "did you mean 五粮液 (000858)?" rather
than acting on one. Only names people ask about are indexed (the CSI 300 and CSI 500, the
indexes, names with a curated Chinese alias, the hint vocabulary) and only names of three
characters or more: two-syllable homophones are everywhere in ordinary speech.
"""

from __future__ import annotations

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
MIN_SIMILARITY = {3: 0.72, 4: 0.64, 5: 0.64, 6: 0.64}  # by name length: 我俩也 0.73, 中行政却 0.66


@lru_cache(maxsize=16384)
def syllables(text: str) -> tuple[str, ...]:
    """Toneless pinyin, one syllable a character (characters pypinyin cannot read dropped)."""
    from pypinyin import Style, lazy_pinyin

    return tuple(lazy_pinyin(text, style=Style.NORMAL, errors="ignore"))


def split(syllable: str) -> tuple[str, str]:
    """("zhong") -> ("z", "ong"): merged initial and final."""
    for ini in _INITIALS:
        if syllable.startswith(ini) and len(syllable) > len(ini):
            final = syllable[len(ini):]
            return _SAME_INITIAL.get(ini, ini), _SAME_FINAL.get(final, final)
    return "", _SAME_FINAL.get(syllable, syllable)


def similarity(heard: tuple[str, ...], name: tuple[str, ...]) -> float:
    """0..1: how alike two equally long syllable sequences sound."""
    if len(heard) != len(name) or not name:
        return 0.0
    total = 0.0
    for a, b in zip(heard, name, strict=True):
        (ia, fa), (ib, fb) = split(a), split(b)
        total += 0.5 * (ia == ib) + 0.5 * (1.0 if fa == fb else fuzz.ratio(fa, fb) / 200.0)
    return total / len(name)


def _key(syls: tuple[str, ...]) -> str:
    return "-".join(split(s)[0] or "_" for s in syls)


def _wildcards(key: str) -> list[str]:
    parts = key.split("-")
    return ["-".join("*" if k == i else p for k, p in enumerate(parts)) for i in range(len(parts))]


@dataclass(frozen=True)
class SoundIndex:
    """Popular Chinese names by their initials (exact key and with one initial unknown)."""

    by_key: dict[str, tuple[tuple[str, str], ...]]  # "g-z-m-t" -> ((贵州茅台, 600519), ...)


def _popular(entry: SymbolEntry, extra: frozenset[str]) -> bool:
    return (entry.code in extra or bool(POPULAR_INDICES & set(entry.indices))
            or (entry.market == "cn" and entry.code.startswith(("000", "399"))
                and "指" in entry.name))


def _chinese_names(entry: SymbolEntry) -> list[str]:
    names = [entry.name, *entry.aliases]
    return [n for n in dict.fromkeys(names)
            if has_cjk(n) and all(is_cjk_char(ch) for ch in n) and 3 <= len(n) <= 6]


@lru_cache(maxsize=4)
def _index(directory_id: int, directory: SymbolDirectory, extra: frozenset[str]) -> SoundIndex:
    keyed: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for entry in directory.entries:
        curated = any(has_cjk(a) for a in entry.aliases) and entry.market != "cn"
        if not (curated or _popular(entry, extra)):
            continue
        for name in _chinese_names(entry):
            syls = syllables(name)
            if len(syls) != len(name):
                continue
            key = _key(syls)
            keyed[key].append((name, entry.code))
            if len(name) >= 4:
                for wild in _wildcards(key):
                    keyed[wild].append((name, entry.code))
    return SoundIndex(by_key={k: tuple(v) for k, v in keyed.items()})


def sound_index(directory: SymbolDirectory, extra: frozenset[str] = frozenset()) -> SoundIndex:
    """The index for ``directory`` (built once, ~1 s); ``extra`` codes count as popular."""
    return _index(id(directory), directory, extra)


@dataclass(frozen=True)
class Suggestion:
    """A directory name a window of the transcript may have been misheard for."""

    start: int
    end: int
    name: str
    code: str
    similarity: float


def suggest(text: str, index: SoundIndex, *,
            taken: Sequence[tuple[int, int]] = ()) -> list[Suggestion]:
    """The best non-overlapping suggestions in ``text`` (windows outside ``taken``)."""
    found: list[Suggestion] = []
    for size in (6, 5, 4, 3):
        for i in range(len(text) - size + 1):
            window = text[i:i + size]
            if not all(is_cjk_char(ch) for ch in window):
                continue
            if any(a < i + size and i < b for a, b in taken):
                continue
            syls = syllables(window)
            if len(syls) != size:
                continue
            key = _key(syls)
            seen: set[tuple[str, str]] = set()
            for k in [key, *(_wildcards(key) if size >= 4 else [])]:
                for name, code in index.by_key.get(k, ()):
                    if (name, code) in seen or len(name) != size or name == window:
                        continue
                    seen.add((name, code))
                    sim = similarity(syls, syllables(name))
                    if sim >= MIN_SIMILARITY[size]:
                        found.append(Suggestion(i, i + size, name, code, round(sim, 3)))
    found.sort(key=lambda s: (-s.similarity, -(s.end - s.start), s.start))
    out: list[Suggestion] = []
    for s in found:
        if any(o.start < s.end and s.start < o.end for o in out):
            continue
        out.append(s)
    return sorted(out, key=lambda s: s.start)
