"""Mandarin transcripts -> simplified Chinese with stock names and codes fixed.

Whisper base writes Mandarin in traditional characters and mishears names by sound (毛台 for
茅台, 林德时代 for 宁德时代) because it does not know them. Four conservative passes:

1. simplified characters (opencc, via the symbols directory's normaliser);
2. a code read digit by digit (六零零五一九, 600 519) becomes 600519, only when the directory
   knows it (:mod:`bot.voice.codes`);
3. ``SymbolDirectory.extract`` finds names, Chinese aliases (英伟达, 特斯拉) and codes;
4. runs of characters no name claimed are compared with the directory's Chinese names by
   pinyin: same toneless pinyin, or one character off with near-identical pinyin (l/n, an/ang),
   and always at least half the characters identical, so ordinary words stay as they are.

The Whisper prompt for Mandarin names no stocks (names in a prompt leak into transcripts of
notes that never said them); it only sets the script. If the decoder echoes the prompt, the
echo is removed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

from bot.voice.codes import CJK_DIGITS, normalise_codes
from bot.voice.correct import Correction, _rewrite
from bot.voice.hints import Hints
from bot.voice.institutions import institution_spans, overlaps
from tools.symbols import SymbolDirectory, SymbolEntry
from tools.symbols.normalize import has_cjk, is_cjk_char, to_simplified

# A neutral simplified-Chinese sentence: Whisper continues in the prompt's script.
ZH_PROMPT = "以下是普通话的句子。"

# Characters only written Cantonese uses; Mandarin transcripts do not contain them.
CANTONESE_MARKS = frozenset("嘅咗唔係佢冇啲喺嚟噉嘢睇咩乜哋嗰呢度俾攞諗嘞喇咁")


def simplified(text: str) -> str:
    """Traditional -> simplified characters (no-op for Latin text)."""
    return to_simplified(text) if has_cjk(text) else text


def strip_prompt_echo(text: str, prompt: str = ZH_PROMPT) -> str:
    """Remove what the decoder copied from the prompt: any run of three or more of its
    characters ("以下是普通话的句子" whole, or "普通话的" alone)."""
    words = re.sub(r"[，。、,.!?！？\s]", "", simplified(prompt))
    out = text
    for size in range(len(words), 2, -1):
        for i in range(len(words) - size + 1):
            out = out.replace(words[i:i + size], "")
    return re.sub(r"^[，。、,.\s]+", "", out).strip()


def cantonese_share(text: str) -> float:
    """Share of the CJK characters that are written-Cantonese only (嘅, 咗, 唔, 係 ...)."""
    cjk = [ch for ch in text if is_cjk_char(ch)]
    return sum(ch in CANTONESE_MARKS for ch in cjk) / len(cjk) if cjk else 0.0


_INDEX_NUMBERS = {"五十": "50", "一百": "100", "两百": "200", "二百": "200", "三百": "300",
                  "五百": "500", "一千": "1000", "两千": "2000"}
_SPOKEN_INDEX = re.compile(f"(沪深|中证|上证|深证|科创|创业板)({'|'.join(_INDEX_NUMBERS)})")


def spoken_index_numbers(text: str) -> str:
    """"沪深三百" -> "沪深300": an index's number as it is said, as the directory writes it."""
    return _SPOKEN_INDEX.sub(lambda m: m.group(1) + _INDEX_NUMBERS[m.group(2)], text)


def spoken_codes(text: str, directory: SymbolDirectory) -> str:
    """"六零零五一九" / "600 519" -> "600519" when the directory lists that code (length kept:
    see :func:`bot.voice.codes.normalise_codes`)."""
    return normalise_codes(text, directory)


@lru_cache(maxsize=8192)
def _syllables(text: str) -> tuple[str, ...]:
    from pypinyin import Style, lazy_pinyin

    return tuple(lazy_pinyin(text, style=Style.NORMAL, errors="ignore"))


@dataclass(frozen=True)
class ChineseNames:
    """Chinese names and aliases of the directory, keyed by toneless pinyin and by shape."""

    by_sound: dict[str, tuple[tuple[str, str], ...]]  # "mao tai" -> ((name, code), ...)
    by_shape: dict[str, tuple[tuple[str, str], ...]]  # "?德时代" -> ((宁德时代, 300750), ...)


def _names_of(entry: SymbolEntry) -> list[str]:
    names = [entry.name, *entry.aliases]
    return [n for n in dict.fromkeys(names)
            if has_cjk(n) and all(is_cjk_char(ch) for ch in n) and 2 <= len(n) <= 6]


@lru_cache(maxsize=4)
def _chinese_names(directory_id: int, directory: SymbolDirectory) -> ChineseNames:
    sound: dict[str, list[tuple[str, str]]] = defaultdict(list)
    shape: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for entry in directory.entries:
        for name in _names_of(entry):
            sound[" ".join(_syllables(name))].append((name, entry.code))
            if len(name) >= 4:
                for key in _shapes(name):
                    shape[key].append((name, entry.code))
    return ChineseNames(by_sound={k: tuple(v) for k, v in sound.items()},
                        by_shape={k: tuple(v) for k, v in shape.items()})


def chinese_names(directory: SymbolDirectory) -> ChineseNames:
    """The directory's Chinese-name index (built once per directory, ~1 s)."""
    return _chinese_names(id(directory), directory)


def _same_chars(a: str, b: str) -> int:
    return sum(x == y for x, y in zip(a, b, strict=False))


def _shapes(window: str) -> list[str]:
    """``window`` with one character (two, from four characters on) replaced by "?"."""
    n = len(window)
    out = [window[:i] + "?" + window[i + 1:] for i in range(n)]
    if n >= 4:
        out += ["".join("?" if k in (i, j) else ch for k, ch in enumerate(window))
                for i in range(n) for j in range(i + 1, n)]
    return out


def _sound_alike(window: str, names: ChineseNames,
                 short_ok: frozenset[str]) -> tuple[str, str, float] | None:
    """(name, code, similarity) of the directory name ``window`` was misheard for, or None.

    Two- and three-character names (茅台) only for codes in ``short_ok`` (the hint vocabulary):
    short homophones are everywhere in ordinary speech (天气 / 天齐).
    """
    heard = " ".join(_syllables(window))
    best: tuple[str, str, float] | None = None
    for name, code in names.by_sound.get(heard, ()):
        if (len(name) == len(window) and simplified(name) != window
                and 2 * _same_chars(name, window) >= len(name)
                and (len(name) >= 4 or code in short_ok)):
            return (name, code, 100.0)
    if len(window) >= 4:
        for shape in _shapes(window):
            for name, code in names.by_shape.get(shape, ()):
                if simplified(name) == window:
                    continue
                need = 85.0 if shape.count("?") == 1 else 88.0
                sim = fuzz.ratio(heard, " ".join(_syllables(name)))
                if sim >= need and (best is None or sim > best[2]):
                    best = (name, code, sim)
    return best


def correct_mandarin(text: str, directory: SymbolDirectory,
                     hints: Hints | None = None) -> Correction:
    """Simplified text with codes and misheard names fixed; the securities in it.

    ``hints`` (the user's watchlist, recent and most-traded codes) allow short names.
    """
    short_ok = frozenset(hints.codes) if hints is not None else frozenset()
    text = simplified(text.strip())
    if not text:
        return Correction(text="", query="")
    work = spoken_codes(spoken_index_numbers(text), directory)
    names = chinese_names(directory)
    # fix sound-alikes first (longest windows first), then let the directory read the result
    fixed = work
    i = 0
    while i < len(fixed):
        done = False
        kept = institution_spans(fixed)  # 中国证监会 is no stock, whatever it sounds like
        for size in (6, 5, 4, 3, 2):
            window = fixed[i:i + size]
            if (len(window) < size or not all(is_cjk_char(ch) for ch in window)
                    or overlaps((i, i + size), kept)):
                continue
            if any(m.span == (0, size) for m in directory.extract(window)):
                i += size  # already a name
                done = True
                break
            hit = _sound_alike(window, names, short_ok)
            if hit is not None:
                fixed = fixed[:i] + hit[0] + fixed[i + size:]
                i += len(hit[0])
                done = True
                break
        if not done:
            i += 1
    kept = institution_spans(fixed)
    found = [m for m in directory.extract(fixed)
             if m.span is not None and not _inside_a_number(fixed, *m.span)
             and not overlaps(m.span, kept)]
    return Correction(text=text, query=_rewrite(fixed, found, directory, hints), symbols=found)


def _inside_a_number(text: str, start: int, end: int) -> bool:
    """A name made of numerals that is part of a longer run of them: 二三四五 (an alias of
    岩山科技) in 一二三四五六七, which is counting."""
    digits = set(CJK_DIGITS) | set("十百千万")
    if not all(ch in digits for ch in text[start:end]):
        return False
    return (start > 0 and text[start - 1] in digits) or (end < len(text) and text[end] in digits)
