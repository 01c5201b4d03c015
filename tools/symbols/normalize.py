"""Text normalisation shared by building and querying: width, script, case, suffixes, sounds."""

from __future__ import annotations

import itertools
import logging
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_CTRL = {c: None for c in range(32) if c not in (9, 10, 13)} | {127: None}
_SPACE = re.compile(r"\s+")
_NON_KEY = re.compile(r"[^0-9a-z\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# Status prefixes the exchanges put in front of short names: *ST, ST, S, XD, XR, DR, N, C.
_CN_PREFIX = re.compile(r"^(?:\*?ST|S\*ST|SST|S|XD|XR|DR|N|C|U|W)(?=[\u4e00-\u9fff])")
_CN_SUFFIX = re.compile(r"(?<=[\u4e00-\u9fff])(?:退|-U|-W|-UW|A|B|Ａ|Ｂ)$")

_SLASH_TAG = re.compile(r"/[a-z]{2,4}/?")
_WORD = re.compile(r"[a-z0-9]+")
_NOT_LETTER = re.compile(r"[^a-z]")
_CORP_WORDS = frozenset(
    """inc incorporated corp corporation co company companies cos ltd limited plc llc lp
    l p holdings holding hldgs group grp sa s a ag nv n v se spa s p a ab asa oyj kgaa bhd
    adr ads sponsored de new the trust reit com class cl ordinary shares share units unit
    and""".split()
)


def clean(text: str) -> str:
    """NFKC, drop control characters, collapse whitespace. Safe on any input."""
    if not text:
        return ""
    if text.isascii():
        return _SPACE.sub(" ", text.translate(_CTRL)).strip()
    text = unicodedata.normalize("NFKC", text).translate(_CTRL)
    text = "".join(ch for ch in text if unicodedata.category(ch) not in ("Cf", "Cs", "Co"))
    return _SPACE.sub(" ", text).strip()


def has_cjk(text: str) -> bool:
    """True when the text contains a Chinese character."""
    return _CJK.search(text) is not None


def is_cjk_char(ch: str) -> bool:
    """True for one CJK ideograph."""
    return _CJK.match(ch) is not None


_ASCII_DROP = {c: None for c in range(128) if not chr(c).isalnum()}


def key(text: str) -> str:
    """Match key: lower-case letters, digits and ideographs only ("AT&T Inc." -> "attinc")."""
    if text.isascii():
        return text.lower().translate(_ASCII_DROP)
    return _NON_KEY.sub("", text.lower())


# The only dictionaries the two conversions read (opencc-purepy's own t2s/s2t plans). Loading
# just these instead of its shared all-in-one provider (25 dictionaries parsed from one JSON
# file, ~14 MB of Python objects kept for the life of the process) makes the query-time t2s
# converter a few hundred KB; the larger s2t one is only needed while building entries.
_DICT_FILES = {
    "t2s": (("ts_phrases", "TSPhrases.txt"), ("ts_characters", "TSCharacters.txt")),
    "s2t": (("st_phrases", "STPhrases.txt"), ("st_characters", "STCharacters.txt")),
}


@lru_cache(maxsize=2)
def _opencc(config: str) -> Any:
    try:
        import opencc_purepy
        from opencc_purepy import OpenCC
    except ImportError:  # dependency missing: traditional forms are simply not recognised
        log.warning("opencc-purepy is not installed; traditional Chinese is not converted")
        return None
    try:
        from opencc_purepy.dictionary_lib import DictionaryMaxlength

        folder = Path(opencc_purepy.__file__).parent / "dicts"
        dictionary = DictionaryMaxlength()  # type: ignore[no-untyped-call]
        for slot, filename in _DICT_FILES[config]:
            text = (folder / filename).read_text(encoding="utf-8")
            setattr(dictionary, slot, DictionaryMaxlength.load_dictionary_maxlength(text))
    except Exception as exc:  # another layout of the package: its shared dictionaries
        log.debug("opencc %s: slim dictionaries unavailable (%s)", config, exc)
        return OpenCC(config)
    return OpenCC(config, dictionary=dictionary)


def release_converters() -> None:
    """Drop the cached converters (the s2t one holds ~50k phrases and only building entries
    needs it); the next conversion loads what it needs again."""
    _opencc.cache_clear()


def _convert(text: str, config: str) -> str:
    if not has_cjk(text):
        return text
    converter = _opencc(config)
    if converter is None:
        return text
    out: str = converter.convert(text)
    return out


def to_simplified(text: str) -> str:
    """Traditional -> simplified Chinese (no-op without ideographs)."""
    return _convert(text, "t2s")


def to_traditional(text: str) -> str:
    """Simplified -> traditional Chinese (no-op without ideographs)."""
    return _convert(text, "s2t")


def cn_base_name(name: str) -> str:
    """Short name without status marks: "*ST九鼎" -> "九鼎", "万科A" -> "万科"."""
    base = _CN_PREFIX.sub("", clean(name))
    return _CN_SUFFIX.sub("", base) or base


def pinyin(text: str) -> tuple[str, str]:
    """Full pinyin (space separated) and initials of Chinese text; Latin runs are kept."""
    from pypinyin import lazy_pinyin

    syllables = [key(s) for s in lazy_pinyin(text)]
    syllables = [s for s in syllables if s]
    full = " ".join(syllables)
    initials = "".join(s if s.isdigit() else s[:1] for s in syllables)
    return full, initials


@lru_cache(maxsize=1)
def _char_readings() -> dict[str, tuple[str, ...]]:
    """Tone-less readings of each character, default first, from pypinyin's one-character
    table read as data (importing pypinyin also parses its 47k-phrase dictionary: ~35 MB kept
    for the life of the process, for a query-time path that only needs this ~2 MB table)."""
    import importlib.util
    import json

    spec = importlib.util.find_spec("pypinyin")
    if spec is None or not spec.submodule_search_locations:
        return {}
    path = Path(next(iter(spec.submodule_search_locations))) / "pinyin_dict.json"
    try:
        raw: dict[str, str] = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as exc:
        log.warning("pypinyin's character table is unreadable: %s", exc)
        return {}
    syllables: dict[str, str] = {}
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    out: dict[str, tuple[str, ...]] = {}
    for code, readings in raw.items():
        plain = []
        for r in readings.split(","):
            r = _toneless(r)
            if r and r not in plain:
                plain.append(syllables.setdefault(r, r))
        if plain:
            t = tuple(plain)
            out[chr(int(code))] = shared.setdefault(t, t)
    return out


def _toneless(reading: str) -> str:
    """"lǜ" -> "lv", "zhōng" -> "zhong" (pypinyin's NORMAL style, keyed)."""
    text = unicodedata.normalize("NFD", reading).replace("u\u0308", "v")
    return key("".join(c for c in text if not unicodedata.combining(c)))


def sound_alike_keys(text: str, limit: int = 32) -> list[str]:
    """Keys of the ways Chinese ``text`` can be read (syllables joined, Latin runs kept),
    default readings first, at most ``limit``; empty for fewer than two syllables. Matches
    what ``pinyin`` gives a name, without loading pypinyin's phrase dictionary."""
    table = _char_readings()
    parts: list[tuple[str, ...]] = []
    latin = ""
    for ch in text:
        readings = table.get(ch) if is_cjk_char(ch) else None
        if readings is None:
            latin += ch
            continue
        if latin:
            parts.append((latin,))
            latin = ""
        parts.append(readings)
    if latin:
        parts.append((latin,))
    if len(parts) < 2:
        return []
    out: list[str] = []
    for combo in itertools.product(*parts):
        out.append(key("".join(combo)))
        if len(out) >= limit:
            break
    return out


def short_company_name(name: str) -> str:
    """US name without legal suffixes: "AMAZON COM INC" -> "amazon", "Meta Platforms, Inc." ->
    "meta platforms", "Alphabet Inc. Class A" -> "alphabet"."""
    text = name.lower() if name.isascii() else clean(name).lower()
    if "/" in text:
        text = _SLASH_TAG.sub(" ", text)  # /DE/, /CAN/, /ADR
    text = text.replace("&", " and ").replace("'s", "s").replace("’s", "s")
    words = _WORD.findall(text)
    while len(words) > 1 and (
        words[-1] in _CORP_WORDS or (len(words[-1]) == 1 and words[-2] in {"class", "cl", "series"})
    ):
        words.pop()
    while len(words) > 1 and words[0] == "the":
        words.pop(0)
    return " ".join(words)


_DESCRIPTORS = frozenset(
    """international intl technologies technology systems laboratories labs industries
    enterprises worldwide brands entertainment scientific solutions services resources
    pharmaceuticals pharmaceutical therapeutics communications networks software bancorp
    bancshares financial""".split()
)


def core_company_name(short: str) -> str:
    """Short name without trailing descriptors: "honeywell international" -> "honeywell",
    "thermo fisher scientific" -> "thermo fisher"; unchanged when nothing would be left."""
    words = short.split()
    while len(words) > 1 and words[-1] in _DESCRIPTORS:
        words.pop()
    return " ".join(words)


def phonetic(text: str) -> str:
    """A sound key for English words (metaphone of the letters, spaces removed)."""
    letters = _NOT_LETTER.sub("", text.lower())
    metaphone = _metaphone()
    if not letters or metaphone is None:
        return ""
    out: str = metaphone(letters)
    return out.replace(" ", "")


@lru_cache(maxsize=1)
def _metaphone() -> Any:
    try:
        import jellyfish
    except ImportError:  # dependency missing: no sound-alike pass
        log.warning("jellyfish is not installed; phonetic matching is off")
        return None
    return jellyfish.metaphone
