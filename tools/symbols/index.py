"""The in-memory symbols index: exact lookups first, then bounded fuzzy and phonetic passes.

Resolution tiers (raw score; a popularity bonus of up to 2 points for exact tiers, 6 for fuzzy
and 14 for phonetic breaks ties, and codes get none):

=========================================  ========
exact code / ticker form                   100
exact name, traditional, base name         98-99
English name, curated alias, US short name 97-97.5
US name without descriptors ("honeywell")  96
pinyin (full); US name words in any order  95
same-sound Chinese characters (IME typo)   93
initials                                   90
fuzzy (rapidfuzz over candidates)          <= 94
phonetic key (metaphone of English names)  <= 80
=========================================  ========

The fuzzy passes never scan the whole directory: an n-gram inverted index (bigrams for Latin
keys, single characters for Chinese) picks at most ``_FUZZY_POOL`` candidate keys with numpy,
and only those are scored with rapidfuzz.
"""

from __future__ import annotations

import gc
import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from importlib import resources
from typing import Any, NamedTuple, cast, overload

import numpy as np
from rapidfuzz import fuzz

from tools.symbols.instruments import ANY, CASED, UPPER, FormMatcher, load_instruments
from tools.symbols.model import Market, Match, SymbolEntry, display_symbol
from tools.symbols.normalize import (
    clean,
    cn_base_name,
    core_company_name,
    has_cjk,
    is_cjk_char,
    key,
    phonetic,
    short_company_name,
    sound_alike_keys,
    to_simplified,
)

_FUZZY_POOL = 48
_MAX_QUERY = 160
_MAX_FUZZY = 48  # longer than any name: a sentence, not a name; exact lookups only
_AMBIGUITY_GAP = 3.0
# `extract` reads at most this many characters of a message (Telegram's longest message):
# longer than any question, so a pasted 20,000-character text costs what 4,096 do. Of a longer
# text it reads the head and the tail (a question comes before or after what was pasted); a
# mention in between is not found. Spans stay offsets into the text given.
EXTRACT_MAX_CHARS = 4096
EXTRACT_TAIL_CHARS = 1024
_CUT_BACK = 64  # how far a cut moves to fall between words, not inside one
_FAMOUS_INDICES = frozenset({"csi300", "sp500", "nasdaq100", "dow30"})

# kinds of exact keys
CORE, WORDS = "core", "words"
_SPELT_CLOSE = 80.0  # a fuzzy similarity from which a query is that name misspelt, not a sound
SOUND = "sounds like"  # a stored phonetic key; its label is the name it was made from
CODE, NAME, BASE, TW, ALIAS, SHORT, FULL_EN, PINYIN, INITIALS = (
    "code",
    "name",
    "base",
    "traditional",
    "alias",
    "short",
    "english",
    "pinyin",
    "initials",
)
_KIND_SCORE = {
    NAME: 99.0,
    TW: 98.5,
    BASE: 98.0,
    ALIAS: 97.0,
    SHORT: 97.0,
    FULL_EN: 97.5,
    PINYIN: 95.0,
    INITIALS: 90.0,
    CORE: 96.0,
    WORDS: 95.0,
}

_CN_CODE = re.compile(
    r"^(?:(sh|sz|bj|ss)[.:\s-]?)?(\d{6})(?:[.\s-]?(sh|sz|bj|ss|xshg|xshe))?$", re.I
)
_HK_CODE = re.compile(r"^(?:hk[.:\s-]?(\d{1,5})|(\d{1,5})[.\s-]?hk)$", re.I)
_US_TICKER = re.compile(r"^\$?([A-Za-z]{1,5})(?:[.\-/ ]([A-Za-z]{1,2}))?$")
_SPELLED = re.compile(r"^\$?(?:[A-Za-z][\s.]+){1,5}[A-Za-z]\.?$")

# extract(): explicit forms in free text
_X_CN_CODE = re.compile(
    r"(?<![A-Za-z0-9_.$¥,])(?:(sh|sz|bj|SH|SZ|BJ)[.:]?)?(\d{6})"
    r"(?:\.(sh|sz|bj|ss|SH|SZ|BJ|SS))?(?![A-Za-z0-9_%]|\.\d|,\d|元|块|万|亿|美元|港元)"
)
_X_HK_CODE = re.compile(
    r"(?<![A-Za-z0-9_.])(?:(\d{4,5})\.(?:HK|hk)|(?:HK|hk)[.:]?(\d{4,5}))(?![A-Za-z0-9_])"
)
_X_DOLLAR = re.compile(r"(?<![\w$])\$([A-Za-z]{1,5}(?:[.\-][A-Za-z]{1,2})?)(?![A-Za-z0-9_])")
_X_SPELLED = re.compile(r"(?<![A-Za-z])(?:[A-Z] ){2,4}[A-Z](?![A-Za-z])")
_X_WORD = re.compile(
    r"(?<![A-Za-z0-9_])[A-Za-z][A-Za-z0-9]*(?:[.\-&'’][A-Za-z0-9]+)*(?![A-Za-z0-9_])"
)
# The look-behinds start an e-mail or a domain only where its run of characters starts: without
# them every position inside a long run is tried again to its end (10,000 x's took 3 s).
_X_URL = re.compile(
    r"(?:https?://|www\.)\S+|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
    r"|(?<![A-Za-z0-9.-])[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:com|org|net|io|cn|dev|gov|edu"
    r"|html?)\b\S*"
    r"|(?<![\w/])(?:~|\.{1,2})?/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]*)+",
    re.I,
)
_CN_EXCH = {"sh": "SH", "ss": "SH", "xshg": "SH", "sz": "SZ", "xshe": "SZ", "bj": "BJ"}
_MARKETS: tuple[Market, ...] = ("cn", "us", "hk", "crypto", "fx")
# two-character Chinese forms whose first character also ends an everyday word: 知道指数,
# 报道指出, 采纳指标 (the character before it makes the word; 关于道指, 的道指 are the index)
_CJK_GUARD = {
    "道指": (re.compile(r"[知报通渠轨频街味难赛地霸正人王大跑管隧车航水坑称厚公写答笑叹喊骂讲传布"
                        r"顺门孔栈古茶剑书医鬼晓诉叫嚷怒哭念赞霸神魔佛诗"
                        r"茶棋武商官绿黄赤弯隘]"), None),
    "纳指": (re.compile(r"[采接吸容收缴笑出归招]"), None),
}
_BAR_SIZE = re.compile(r"(?<![A-Za-z0-9])\d{1,3}\s?(?:m|min|mins|h|hr|d|w)(?![A-Za-z0-9])", re.I)
_X_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaffA-Za-z0-9*]+")
_SENTENCE_END = re.compile(r"[.!?。！？;；\n]")

_STRONG_EN = frozenset(
    "stock stocks share shares ticker tickers calls puts options earnings dividend dividends "
    "equity etf".split()
)
_WEAK_EN = frozenset(
    "buy buying bought sell selling sold price prices chart quote quotes "
    "invest invested investing holdings bullish bearish rally valuation revenue trading traded "
    "portfolio analyst analysts upside downside nyse nasdaq guidance".split()
)
_FIN_ZH = (
    "股",
    "买",
    "卖",
    "涨",
    "跌",
    "市值",
    "财报",
    "仓",
    "持有",
    "估值",
    "分红",
    "看多",
    "看空",
    "行情",
    "走势",
    "投资",
    "业绩",
    "营收",
    "利润",
    "代码",
    "目标价",
    "研报",
    "公司",
    "板块",
    "概念",
    "利好",
    "利空",
)


class ExtractWork:
    """What one `extract` call did, counted: the characters it read and its probes (each
    exact-key lookup of a candidate span, each instrument form the scanner found). Every probe
    costs a bounded amount (context checks read fixed windows), so the probes bound the work;
    tests give one to `extract(work=...)` to hold the bound."""

    __slots__ = ("chars", "probes", "truncated")

    def __init__(self) -> None:
        self.chars = 0
        self.probes = 0
        self.truncated = False


def _between_words(text: str, cut: int, step: int) -> int:
    """``cut`` moved by ``step`` (-1 or 1, at most `_CUT_BACK` characters) until it falls
    between two characters that are not both part of a word; ``cut`` itself if none does."""
    i = cut
    for _ in range(_CUT_BACK):
        if not (text[i - 1].isalnum() and text[i].isalnum()):
            return i
        i += step
    return cut


def extract_windows(text: str) -> list[tuple[int, str]]:
    """The parts of ``text`` that `extract` reads, each with its offset: all of it up to
    `EXTRACT_MAX_CHARS`; else the head (`EXTRACT_MAX_CHARS` - `EXTRACT_TAIL_CHARS`
    characters) and the tail (`EXTRACT_TAIL_CHARS`), each cut between words where one is
    near, so a name is never read half."""
    if len(text) <= EXTRACT_MAX_CHARS:
        return [(0, text)]
    head = _between_words(text, EXTRACT_MAX_CHARS - EXTRACT_TAIL_CHARS, -1)
    tail = _between_words(text, len(text) - EXTRACT_TAIL_CHARS, 1)
    return [(0, text[:head]), (tail, text[tail:])]


class _Hit(NamedTuple):
    idx: int
    score: float
    label: str  # what matched; ``why`` adds the rule name
    kind: str

    @property
    def why(self) -> str:
        if self.kind in (CODE, "fuzzy", "phonetic"):
            return self.label
        return f"{self.kind} {self.label}"  # "sounds like Netflix", "alias 茅台", ...


# a stored hit's kind, by number; its score is its kind's (`_HitTable`)
_KINDS = (NAME, TW, BASE, ALIAS, SHORT, FULL_EN, PINYIN, INITIALS, CORE, WORDS, SOUND)
_KIND_NO = {k: n for n, k in enumerate(_KINDS)}
_HIT_SCORE = {**_KIND_SCORE, SOUND: 80.0}
_IDX_BITS, _KIND_BITS = 20, 4
_IDX_MASK, _KIND_MASK = (1 << _IDX_BITS) - 1, (1 << _KIND_BITS) - 1
_LABEL_SHIFT = _IDX_BITS + _KIND_BITS
_KIND_SCORES = tuple(_HIT_SCORE[k] for k in _KINDS)
_new_tuple = tuple.__new__  # a named tuple without its Python-level __new__ (unpacking is hot)


class _HitTable:
    """Key -> hits, packed: a hit is one int (entry position, kind and label number; it scores
    what its kind scores), a key with one hit holds that int itself, and the labels are one
    list holding each distinct text once. A named tuple per hit in a tuple per key cost ~150
    bytes a hit more, for ~100,000 hits; `get` unpacks the hits of a key found.

    A key holds one hit per entry: a later hit of the same entry replaces it only when its
    kind scores higher (an entry's name before its English name, both "apple inc")."""

    __slots__ = ("_label_no", "_labels", "packed")

    def __init__(self) -> None:
        # key -> its packed hits; scans test a key here (a dict's `in`, no method call)
        self.packed: dict[str, int | list[int] | tuple[int, ...]] = {}
        self._labels: list[str] = []
        self._label_no: dict[str, int] = {}  # while building

    def __contains__(self, k: object) -> bool:
        return k in self.packed

    def __iter__(self) -> Iterator[str]:
        return iter(self.packed)

    def __len__(self) -> int:
        return len(self.packed)

    @overload
    def get(self, k: str) -> Sequence[_Hit] | None: ...

    @overload
    def get(self, k: str, default: Sequence[_Hit]) -> Sequence[_Hit]: ...

    def get(self, k: str, default: Sequence[_Hit] | None = None) -> Sequence[_Hit] | None:
        """The hits of key ``k`` in the order they were put, else ``default``."""
        v = self.packed.get(k)
        if v is None:
            return default
        if type(v) is int:
            return (self._unpack(v),)
        unpack = self._unpack
        return tuple([unpack(x) for x in cast("tuple[int, ...]", v)])

    def __getitem__(self, k: str) -> Sequence[_Hit]:
        hits = self.get(k)
        if hits is None:
            raise KeyError(k)
        return hits

    def _unpack(self, v: int) -> _Hit:
        n = (v >> _IDX_BITS) & _KIND_MASK
        return _new_tuple(_Hit, (v & _IDX_MASK, _KIND_SCORES[n], self._labels[v >> _LABEL_SHIFT],
                                 _KINDS[n]))

    def put(self, k: str, idx: int, kind: str, label: str) -> None:
        if idx > _IDX_MASK:
            raise ValueError(f"more than {_IDX_MASK} entries")
        n = self._label_no.get(label)
        if n is None:
            n = self._label_no[label] = len(self._labels)
            self._labels.append(label)
        packed = (n << _LABEL_SHIFT) | (_KIND_NO[kind] << _IDX_BITS) | idx
        old = self.packed.get(k)
        if old is None:
            self.packed[k] = packed
            return
        hits = [old] if type(old) is int else cast("list[int]", old)
        for j, h in enumerate(hits):
            if h & _IDX_MASK == idx:
                if _HIT_SCORE[kind] > _HIT_SCORE[_KINDS[(h >> _IDX_BITS) & _KIND_MASK]]:
                    hits[j] = packed
                    if type(old) is int:
                        self.packed[k] = packed
                return
        hits.append(packed)
        self.packed[k] = hits

    def freeze(self) -> None:
        """Hit lists become tuples (in place: same keys, no second table); building is over."""
        for k, v in self.packed.items():
            if type(v) is list:
                self.packed[k] = tuple(v)
        self._label_no = {}


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic GC while allocating many small acyclic objects (a third of build time
    otherwise goes to collections that find nothing)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@lru_cache(maxsize=1)
def _load_common_words() -> tuple[frozenset[str], frozenset[str]]:
    """(very common, common) English words from ``common_en.txt`` (most frequent first)."""
    text = resources.files("tools.symbols").joinpath("common_en.txt").read_text("utf-8")
    very: list[str] = []
    rest: list[str] = []
    target = very
    for line in text.splitlines():
        if line.startswith("# zipf 3"):
            target = rest
        elif line and not line.startswith("#"):
            target.append(line.strip())
    return frozenset(very), frozenset(very) | frozenset(rest)


def common_word(word: str, *, very: bool = False) -> bool:
    """An everyday English word ("hello", "news", "gold"; with ``very`` only the most frequent
    ones), from the packaged word list."""
    return word.lower() in _load_common_words()[0 if very else 1]


def _gram_codes(text: str, n: int) -> set[int]:
    """Integer n-grams (n = 1 or 2) of a key; a one-character key is its own gram."""
    o = [ord(c) for c in text]
    if n == 1 or len(o) < 2:
        return set(o)
    return {(o[i] << 21) | o[i + 1] for i in range(len(o) - 1)}


class _GramIndex:
    """Inverted n-gram index over a list of keys; proposes the keys sharing most grams.

    Built with numpy in a few milliseconds; a query costs one ``bincount``.
    """

    def __init__(self, keys: Sequence[str], n: int) -> None:
        self.keys = list(keys)
        self._n = n
        self._post: dict[int, np.ndarray[Any, np.dtype[np.int32]]] = {}
        lens = np.fromiter((len(k) for k in self.keys), dtype=np.int64, count=len(self.keys))
        self._lens = np.maximum(lens, 1).astype(np.float32)
        if not self.keys:
            return
        chars = np.frombuffer("".join(self.keys).encode("utf-32-le"), dtype=np.uint32)
        chars = chars.astype(np.int64)
        owner = np.repeat(np.arange(len(self.keys), dtype=np.int64), lens)
        if n == 1:
            codes = chars
        else:
            ends = np.cumsum(lens)
            last = np.zeros(len(chars), dtype=bool)
            last[ends[lens > 0] - 1] = True
            pair = np.empty(len(chars), dtype=np.int64)
            pair[:-1] = (chars[:-1] << 21) | chars[1:]
            pair[-1:] = 0
            single = (lens == 1)[owner]
            keep = ~last | single
            codes = np.where(single, chars, pair)[keep]
            owner = owner[keep]
        combined = np.unique((codes << 20) | owner)
        codes, owner = combined >> 20, (combined & ((1 << 20) - 1)).astype(np.int32)
        uniq, first = np.unique(codes, return_index=True)
        for code, chunk in zip(uniq.tolist(), np.split(owner, first[1:]), strict=True):
            self._post[code] = chunk

    def candidates(self, query: str, pool: int = _FUZZY_POOL) -> list[int]:
        grams = [g for g in _gram_codes(query, self._n) if g in self._post]
        if not grams:
            return []
        hits = np.bincount(np.concatenate([self._post[g] for g in grams]), minlength=len(self.keys))
        # Dice-like overlap: shared grams relative to both lengths, so short keys are not favoured.
        score = hits / (float(len(grams)) + self._lens)
        k = min(pool, int(np.count_nonzero(hits)))
        if k == 0:
            return []
        top = np.argpartition(-score, k - 1)[:k]
        return [int(i) for i in top]


class _Codes:
    """(market, code) -> entry position, as one dict per market: no key tuple per entry."""

    __slots__ = ("_by_market",)

    def __init__(self) -> None:
        self._by_market: dict[str, dict[str, int]] = {}

    def get(self, market_code: tuple[str, str]) -> int | None:
        codes = self._by_market.get(market_code[0])
        return None if codes is None else codes.get(market_code[1])

    def setdefault(self, market_code: tuple[str, str], i: int) -> int:
        return self._by_market.setdefault(market_code[0], {}).setdefault(market_code[1], i)


class SymbolIndex:
    """Lookup structures over a fixed list of entries; cheap to query, built once.

    Built with lists, then frozen into tuples (``_freeze``): a one-hit key costs a 1-tuple
    instead of a list or a dict, and ~50k keys hold one hit each.
    """

    def __init__(
        self,
        entries: Sequence[SymbolEntry],
        *,
        curated: dict[str, Any] | None = None,
        common_words: tuple[frozenset[str], frozenset[str]] | None = None,
    ) -> None:
        with paused_gc():
            self._build(entries, curated or {}, common_words)

    def _build(
        self,
        entries: Sequence[SymbolEntry],
        cur: dict[str, Any],
        common_words: tuple[frozenset[str], frozenset[str]] | None,
    ) -> None:
        # listed securities first (their positions are what ``entries`` used to be), then the
        # curated instruments (indices, crypto, FX), which every index builds for itself
        self.entries: list[SymbolEntry] = [e for e in entries if e.kind == "stock"]
        self.n_listed = len(self.entries)
        instruments = load_instruments(cur)
        self.entries += [ins.entry for ins in instruments]
        self.very_common, self.common = common_words or _load_common_words()
        self.not_tickers = frozenset(cur.get("not_tickers", []))
        self.curated_keys: set[str] = set()
        self.context_words = frozenset(key(w) for w in cur.get("context", []))
        self.cn_common = frozenset(cur.get("cn_common_names", []))
        self.collocations = {
            k: frozenset(v) for k, v in cur.get("collocations", {}).items() if k != "_doc"
        }
        self.codes = _Codes()
        self.exact = _HitTable()
        self.phon = _HitTable()  # phonetic key -> hits of kind SOUND
        self.words = _HitTable()  # order-free words of a US name -> hits of kind WORDS
        self.instr: dict[str, list[_Hit]] = {}  # instrument keys: resolve() only
        # form key ("^dji" apart from "dji") -> (idx, policy)
        self.instr_forms: dict[str, list[tuple[int, str]]] = {}
        self.cn_instr: dict[tuple[str, str], int] = {}  # (code, exchange) -> index entry
        self.twin: dict[int, int] = {}  # listed share -> index with the same code (000001)
        self.pop: list[float] = []
        pops: dict[float, float] = {}  # one float object per distinct popularity
        curated_codes = {(m, c) for m in ("cn", "us", "hk") for c in cur.get(m, {})}
        self.famous: list[bool] = []
        self.curated: list[bool] = []
        for i, e in enumerate(self.entries):
            self.codes.setdefault((e.market, e.code), i)
            is_curated = (e.market, e.code) in curated_codes
            pop = self._popularity(e, is_curated)
            self.pop.append(pops.setdefault(pop, pop))
            self.curated.append(is_curated)
            self.famous.append(
                is_curated
                or i >= self.n_listed
                or bool(set(e.indices) & _FAMOUS_INDICES)
                or (e.rank is not None and e.rank < 300 and e.primary)
            )
            if i < self.n_listed:
                self._add_keys(i, e)
        for n, ins in enumerate(instruments):
            self._add_instrument(self.n_listed + n, ins)
        forms = [f for ins in instruments for f, _ in ins.text_forms()]
        self._instr_re = FormMatcher(forms) if forms else None
        every = [*self.exact, *(k for k in self.instr if k not in self.exact)]
        latin = [k for k in every if not has_cjk(k) and len(k) >= 2 and not k.isdigit()]
        cjk = [k for k in every if has_cjk(k)]
        self._latin = _GramIndex(latin, 2)
        self._cjk = _GramIndex(cjk, 1)
        self._phon = _GramIndex(list(self.phon), 2)
        self._cjk_lengths = sorted({len(k) for k in cjk if len(k) >= 2}, reverse=True)
        self._freeze()

    def _freeze(self) -> None:
        for table in (self.exact, self.phon, self.words):
            table.freeze()

    # ---------------------------------------------------------------- building

    @staticmethod
    def _popularity(e: SymbolEntry, is_curated: bool) -> float:
        if e.kind != "stock":  # a curated index, crypto or FX pair
            return 1.0
        if is_curated or e.indices:
            pop = 1.0 if (is_curated or set(e.indices) - {"csi500"}) else 0.8
        elif e.market == "cn":
            pop = 0.5 if e.name != e.code else 0.2
            if "ST" in e.name:
                pop = 0.3
        elif e.market == "us":
            r = e.rank if e.rank is not None else 10**6
            pop = 0.9 if r < 500 else 0.7 if r < 1500 else 0.4 if r < 4000 else 0.2
            if e.exchange in (None, "OTC"):
                pop = min(pop, 0.2)
        else:
            pop = 0.8
        return pop if e.primary else pop * 0.5

    def _put_phon(self, text: str, idx: int) -> None:
        p = phonetic(text)
        if len(p) >= 2:
            self.phon.put(p, idx, SOUND, text)  # why: "sounds like {text}"

    def _add(self, idx: int, text: str, kind: str, label: str | None = None) -> None:
        k = key(text)
        if k:
            # a name that is its own key (贵州茅台, gzmt) keys the table with its own object
            self.exact.put(text if k == text else k, idx, kind, label or text)

    def _add_keys(self, i: int, e: SymbolEntry) -> None:
        if e.market in ("cn", "hk"):
            if e.name != e.code:
                self._add(i, e.name, NAME)
                base = cn_base_name(e.name)
                if base and base != e.name:
                    self._add(i, base, BASE)
                if e.name_tw:
                    self._add(i, e.name_tw, TW, f"{e.name_tw} ({e.name})")
                if e.pinyin:
                    self._add(i, e.pinyin, PINYIN, e.pinyin)
                if e.initials and len(e.initials) >= 3:
                    self._add(i, e.initials, INITIALS, e.initials)
            self._add_aliases(i, e.aliases)
            if e.name_en:
                self._add(i, e.name_en, FULL_EN)
                self._put_phon(e.name_en, i)
            return
        # us
        self._add(i, e.name, FULL_EN)
        if not e.primary:  # other share classes, preferreds, warrants: full name and aliases
            self._add_aliases(i, e.aliases)
            return
        short = short_company_name(e.name)
        if short and key(short) != key(e.name):
            self._add(i, short, SHORT)
        core = core_company_name(short)
        if core != short:
            self._add(i, core, CORE)
        if " " in short:  # "schwab charles" is also found as "charles schwab"
            self._put_words(i, short)
        if short:
            self._put_phon(short, i)
            if "&" in e.name:
                self._add(i, re.sub(r"\s*&\s*", "", e.name.lower()), SHORT, short)
        self._add_aliases(i, e.aliases)

    def _add_instrument(self, i: int, ins: Any) -> None:
        e = ins.entry
        self.curated[i] = True
        for code, exch in ins.cn_codes():
            if exch is not None:
                self.cn_instr[(code, exch)] = i
            else:
                self.codes.setdefault(("cn", code), i)
        if e.market == "cn":
            self.cn_instr[(e.code, e.exchange or "")] = i
        listed = self.codes.setdefault((e.market, e.code), i)
        if listed != i:
            self.twin[listed] = i  # 000001: 平安银行 keeps the bare code, 上证指数 is a candidate

        def put(text: str, kind: str, score: float, label: str) -> None:
            k = key(text)
            if not k:
                return
            hits = self.instr.setdefault(k, [])
            for j, h in enumerate(hits):
                if h.idx == i:
                    if score > h.score:
                        hits[j] = _Hit(i, score, label, kind)
                    return
            hits.append(_Hit(i, score, label, kind))

        for s in ins.symbols:
            if not re.fullmatch(r"\d{6}(?:\.\w+)?|(?:SH|SZ)\d{6}", s, re.I):
                put(s, CODE, 100.0, f"symbol {s}")
        put(e.name, NAME, _KIND_SCORE[NAME], e.name)
        if e.name_en:
            put(e.name_en, FULL_EN, _KIND_SCORE[FULL_EN], e.name_en)
        for n in (*ins.names, *ins.cased):
            put(n, ALIAS, _KIND_SCORE[ALIAS], n)
        for p in ins.pinyin:
            put(p, PINYIN, _KIND_SCORE[PINYIN], p)
        for n in (e.name, e.name_en, *ins.names):
            if n and re.fullmatch(r"[A-Za-z][A-Za-z ]+", n):
                self._put_phon(n, i)
        for form, policy in ins.text_forms():
            k = _form_key(form)
            if k and (i, policy) not in self.instr_forms.get(k, []):
                self.instr_forms.setdefault(k, []).append((i, policy))

    def _hits(self, k: str) -> Sequence[_Hit]:
        """Exact hits of a key: listed names, then instruments."""
        listed = self.exact.get(k)
        extra = self.instr.get(k)
        if extra is None:
            return listed or ()
        return [*listed, *extra] if listed else extra

    def _put_words(self, i: int, text: str) -> None:
        k = _words_key(text)
        if k:
            self.words.put(k, i, WORDS, text)

    def _add_aliases(self, i: int, aliases: Iterable[str]) -> None:
        for a in aliases:
            if has_cjk(a):
                self._add(i, a, ALIAS)
                base = cn_base_name(a)
                if base != a and len(base) >= 3:  # "ST基础" must not make 基础 a name
                    self._add(i, base, ALIAS)
            elif a.islower() and " " in a:  # pinyin of a Chinese alias ("mao tai")
                self._add(i, a, PINYIN)
            else:
                self._add(i, a, ALIAS)
                self.curated_keys.add(key(a))
                self._put_phon(a, i)

    # ---------------------------------------------------------------- resolve

    def resolve(self, query: str, *, market: str | None = None, limit: int = 5) -> list[Match]:
        """Best matches for a name, code, pinyin or misspelling; ambiguous ties are flagged."""
        q = clean(query[: _MAX_QUERY * 4] if isinstance(query, str) else "")
        if not q or limit <= 0 or len(q) > _MAX_QUERY:
            return []  # nothing, or a paragraph rather than a name: use extract()
        found: dict[int, _Hit] = {}
        for hit in self._code_hits(q):
            self._keep(found, hit)
        simple = to_simplified(q)
        k = key(simple)
        if k:
            for hit in self._hits(k):
                self._keep(found, hit)
            if " " in simple:
                for hit in self.words.get(_words_key(simple), ()):
                    self._keep(found, hit)
        best = max((h.score for h in found.values()), default=0.0)
        if k and len(k) <= _MAX_FUZZY and best < 97 and not (k.isdigit() and best >= 90):
            if has_cjk(k):
                self._homophones(k, found)
                self._fuzzy_cjk(k, found)
            elif len(k) >= 3:
                # a name one letter off ("amazom", "koinbase") is that name: the sound-alike
                # pass may not then drop a leading sound to lift a popular issuer that merely
                # sounds like part of it (Masimo, Nebius); a whole sound-alike still counts
                close = self._fuzzy_latin(k, found) >= _SPELT_CLOSE
                if best < 90:
                    self._phonetic(simple, found, drop_leading=not close)
        return self._rank(found, market, limit)

    def _keep(self, found: dict[int, _Hit], hit: _Hit) -> None:
        old = found.get(hit.idx)
        if old is None or hit.score > old.score:
            found[hit.idx] = hit

    def _ticker(self, t: str) -> int | None:
        t = t.upper()
        i = self.codes.get(("us", t))
        if i is None and "-" not in t and 4 <= len(t) <= 6:
            i = self.codes.get(("us", f"{t[:-1]}-{t[-1]}"))
        return i

    def _code_hits(self, q: str) -> list[_Hit]:
        hits: list[_Hit] = []
        m = _CN_CODE.match(q)
        if m:
            code = m.group(2)
            exch = _CN_EXCH.get((m.group(1) or m.group(3) or "").lower())
            j = self.cn_instr.get((code, exch)) if exch else None
            if j is not None:  # 000001.SH is 上证指数, 000001.SZ 平安银行
                return [_Hit(j, 100.0, "index code", CODE)]
            i = self.codes.get(("cn", code))
            if i is not None:
                hits.append(_Hit(i, 100.0, "code", CODE))
                twin = self.twin.get(i)
                if twin is not None and exch is None:  # a bare 000001: report both
                    hits.append(_Hit(twin, 99.0, "index code", CODE))
            return hits
        m = _HK_CODE.match(q)
        if m:
            i = self.codes.get(("hk", f"{int(m.group(1) or m.group(2)):04d}"))
            if i is not None:
                hits.append(_Hit(i, 100.0, "HK code", CODE))
            return hits
        m = _US_TICKER.match(q)
        if m:
            base, cls = m.group(1), m.group(2)
            if cls and len(cls) > 1 and " " in q:
                return hits  # "meta platforms" is a name, not ticker META-PL
            t = f"{base}-{cls}" if cls else base
            i = self._ticker(t)
            if i is not None:
                explicit = q.startswith("$") or q.isupper() or bool(cls)
                plain = q.lower()
                score = 100.0 if explicit else 90.0 if plain in self.common else 97.0
                hits.append(_Hit(i, score, "ticker" if explicit else "ticker (lower case)", CODE))
            return hits
        if _SPELLED.match(q):
            t = re.sub(r"[^A-Za-z]", "", q)
            i = self._ticker(t)
            if i is not None:
                hits.append(_Hit(i, 98.0, "spelled-out ticker", CODE))
        return hits

    def _fuzzy_latin(self, k: str, found: dict[int, _Hit]) -> float:
        """Fuzzy hits of a Latin key; the best similarity seen (0-100)."""
        index = self._latin
        closest = 0.0
        for j in index.candidates(k):
            cand = index.keys[j]
            sim = fuzz.ratio(k, cand)
            if len(k) >= 4 and cand.startswith(k):
                sim = max(sim, 86.0 + 8.0 * len(k) / len(cand))
            if sim < 72:
                continue
            for h in self._hits(cand):
                if h.kind == INITIALS and len(k) != len(cand):
                    continue
                if h.kind != INITIALS:
                    closest = max(closest, sim)
                score = min(94.0, sim * 0.95) * h.score / 100.0
                self._keep(found, _Hit(h.idx, score, f"fuzzy {cand!r} ({h.why})", "fuzzy"))
        return closest

    def _homophones(self, k: str, found: dict[int, _Hit]) -> None:
        """Pinyin-IME typos pick a character with the same sound: 中国神化 -> 中国神华.

        The readings of the query, default first, until one is a name's pinyin: a character
        table instead of pypinyin's phrase dictionary (~35 MB, for this rare path)."""
        for sound in sound_alike_keys(k):
            hits = [h for h in self._hits(sound) if h.kind == PINYIN]
            for h in hits:
                self._keep(found, _Hit(h.idx, 93.0, f"same sound as {h.label}", "fuzzy"))
            if hits:
                return

    def _fuzzy_cjk(self, k: str, found: dict[int, _Hit]) -> None:
        index = self._cjk
        for j in index.candidates(k):
            cand = index.keys[j]
            sim = fuzz.ratio(k, cand)
            if len(k) >= 2 and len(k) < len(cand):
                if k in cand:
                    prefix = 2.0 if cand.startswith(k) else 0.0
                    sim = max(sim, 80.0 + 12.0 * len(k) / len(cand) + prefix)
                elif _subsequence(k, cand):
                    sim = max(sim, 72.0 + 12.0 * len(k) / len(cand))
            if sim < 60:
                continue
            for h in self._hits(cand):
                score = min(94.0, sim * 0.95) * h.score / 100.0
                self._keep(found, _Hit(h.idx, score, f"fuzzy {cand} ({h.why})", "fuzzy"))

    def _phonetic(self, text: str, found: dict[int, _Hit], *, drop_leading: bool = True
                  ) -> None:
        """Sound-alike names ("net flicks", "then video"); an extra leading sound is allowed,
        since speech recognisers often split a name's first syllable into a word."""
        p = phonetic(text)
        if len(p) < 2:
            return
        index = self._phon
        for j in index.candidates(p, pool=32):
            cand = index.keys[j]
            sim = fuzz.ratio(p, cand)
            extra = len(p) - len(cand)
            if extra > 0 and len(cand) >= 3 and drop_leading:
                sim = max(sim, fuzz.ratio(p[extra:], cand) - 8.0 * extra)
            if sim < 75:
                continue
            label = "" if cand == p else f" ({p}~{cand})"
            for h in self.phon[cand]:
                self._keep(found, _Hit(h.idx, sim * 0.8, h.why + label, "phonetic"))

    def _rank(self, found: dict[int, _Hit], market: str | None, limit: int) -> list[Match]:
        scored: list[tuple[float, int, _Hit]] = []
        for idx, hit in found.items():
            e = self.entries[idx]
            if market and e.market != market:
                continue
            weight = 14.0 if hit.kind == "phonetic" else 2.0 if hit.score >= 95 else 6.0
            bonus = weight * self.pop[idx]
            if hit.kind == CODE:
                bonus = 0.0
            scored.append((min(100.0, hit.score + bonus), idx, hit))
        scored.sort(key=lambda t: (-t[0], self.entries[t[1]].rank or 0, t[1]))
        out = [self._match(idx, s, hit.why) for s, idx, hit in scored[:limit]]
        if len(out) >= 2:
            # Ambiguous: another issuer scores within the gap, or matched the same exact key
            # with the same raw score (shared initials, homophones) however popular it is.
            top_score, top_idx, top_hit = scored[0]
            rivals = [
                j
                for j, (s, idx, hit) in enumerate(scored[:limit])
                if j
                and not self._same_issuer(top_idx, idx)
                and (
                    top_score - s < _AMBIGUITY_GAP
                    or (hit.score >= 90 and abs(hit.score - top_hit.score) < 0.01)
                )
            ]
            if rivals:
                out[0].ambiguous = True
                for j in rivals:
                    out[j].ambiguous = True
        return out

    def _same_issuer(self, a: int, b: int) -> bool:
        ea, eb = self.entries[a], self.entries[b]
        return a == b or (ea.cik is not None and ea.cik == eb.cik)

    def _match(
        self, idx: int, score: float, why: str, span: tuple[int, int] | None = None
    ) -> Match:
        e = self.entries[idx]
        return Match(
            code=e.code,
            name=e.name,
            market=e.market,
            exchange=e.exchange,
            symbol=display_symbol(e.code, e.market, e.exchange),
            score=round(score, 2),
            why=why,
            span=span,
        )

    # ---------------------------------------------------------------- extract

    def extract(self, text: str, *, work: ExtractWork | None = None) -> list[Match]:
        """Every security mentioned in a free sentence, with spans into ``text``; at most
        `EXTRACT_MAX_CHARS` characters are read (see `extract_windows`). ``work``, when given,
        counts what the call did."""
        if not text:
            return []
        work = work if work is not None else ExtractWork()
        windows = extract_windows(text)
        work.truncated = len(windows) > 1
        out: list[Match] = []
        for offset, window in windows:
            work.chars += len(window)
            seen = {m.symbol for m in out}  # the head named it already: once, the first time
            for hit in self._extract_one(window, work):
                if hit.symbol in seen:
                    continue
                if offset and hit.span is not None:
                    hit.span = (hit.span[0] + offset, hit.span[1] + offset)
                out.append(hit)
        return out

    def _extract_one(self, text: str, work: ExtractWork) -> list[Match]:
        norm, pos = _normalise_with_map(text)
        if not norm.strip():
            return []
        shouting = _shouting(norm)
        taken = np.zeros(len(norm) + 1, dtype=bool)
        for m in _X_URL.finditer(norm):  # nothing inside a URL, e-mail address or path
            taken[m.start() : m.end()] = True
        found: list[tuple[int, int, int, float, str, list[int]]] = []
        weak: list[tuple[int, int, int, float, str, list[int]]] = []

        def claim(
            s: int,
            e: int,
            idxs: list[int],
            score: float,
            why: str,
            *,
            sure: bool = True,
            ordered: bool = False,
        ) -> None:
            """Record a mention; an unsure one (a little-known ticker or name) is kept only
            if the text talks finance near it or names another security for sure. Several
            ``idxs`` are candidates for one mention, most popular first unless ``ordered``."""
            if taken[s:e].any():
                return
            taken[s:e] = True
            idxs = list(dict.fromkeys(idxs))
            if not ordered:
                idxs.sort(key=lambda i: (-self.pop[i], i))
            (found if sure else weak).append((s, e, idxs[0], score, why, idxs[1:]))

        self._extract_instruments(norm, shouting, taken, claim, work)
        for m in _X_CN_CODE.finditer(norm):
            code = m.group(2)
            exch = _CN_EXCH.get((m.group(1) or m.group(3) or "").lower())
            j = self.cn_instr.get((code, exch)) if exch else None
            if j is not None:
                claim(m.start(), m.end(), [j], 100.0, "index code")
                continue
            i = self.codes.get(("cn", code))
            if i is not None:
                twin = self.twin.get(i) if exch is None else None
                claim(m.start(), m.end(), [i] if twin is None else [i, twin], 100.0, "code",
                      ordered=True)
        for m in _X_HK_CODE.finditer(norm):
            digits = m.group(1) or m.group(2)
            i = self.codes.get(("hk", f"{int(digits):04d}"))
            if i is not None:
                claim(m.start(), m.end(), [i], 100.0, "HK code")
        for m in _X_DOLLAR.finditer(norm):
            t = self._ticker(m.group(1).replace(".", "-"))
            if t is not None:
                claim(m.start(), m.end(), [t], 100.0, "cashtag")
        for m in _X_SPELLED.finditer(norm):
            t = self._ticker(m.group(0).replace(" ", ""))
            if t is not None and m.group(0).replace(" ", "").lower() not in self.common:
                claim(m.start(), m.end(), [t], 95.0, "spelled-out ticker")
        self._extract_cjk(norm, taken, claim, work)
        self._extract_latin(norm, shouting, taken, claim, work)
        found += [w for w in weak if found or _zh_context(norm, w[0], w[1])]

        out: list[Match] = []
        seen: set[int] = set()
        for s, e, idx, score, why, alts in sorted(found):
            if idx in seen:
                continue
            seen.add(idx)
            hit = self._match(idx, score, why, (pos[s], pos[e - 1] + 1))
            if alts:
                hit.ambiguous = True
                hit.alternatives = [
                    self.entries[a].symbol if self.entries[a].code == hit.code
                    else self.entries[a].code
                    for a in alts
                ]
            out.append(hit)
        return out

    def _extract_instruments(
        self, norm: str, shouting: bool, taken: Any, claim: Any, work: ExtractWork
    ) -> None:
        """Indices, crypto and FX pairs written by name or symbol (either language)."""
        if self._instr_re is None:
            return
        for m in self._instr_re.finditer(norm):
            work.probes += 1
            m = self._longest_instrument(norm, m)
            text, s, e = m.group(0), m.start(), m.end()
            cashtag = text.startswith("$")
            fk = _form_key(text)
            forms = self.instr_forms.get(fk)
            if not forms:
                continue
            other = _other_meaning(norm, to_simplified(fk), s, e)
            if other:
                if other == "exchange":  # "listed on Nasdaq": neither the index nor NDAQ
                    taken[s:e] = True
                continue  # "S&P Global", "Nasdaq Inc": left to the company names
            # the rule of the form as written ("dji" is not "^DJI"); the strictest where forms
            # of one instrument share a key
            idx, policy = max(forms, key=lambda f: _STRICTNESS[f[1]])
            if policy == CASED and not _written_as(text, self.entries[idx], norm):
                continue
            if policy == UPPER and not cashtag and not self._short_symbol_ok(
                norm, text, s, e, shouting
            ):
                continue
            guard = _CJK_GUARD.get(to_simplified(text))
            if guard is not None:
                before, allowed = guard
                prev = norm[s - 1 : s]
                if prev and before.match(prev) and not (allowed and allowed.match(prev)):
                    continue
                if text.startswith("道") and re.match(r"[出导示标引南挥望责令]", norm[e : e + 1]):
                    continue
            why = f"{self.entries[idx].kind} {text.lstrip('$')}"
            alts = [idx]
            if policy == UPPER:  # BTC, ETH are also tickers of listed funds: report them
                t = self.codes.get(("us", text.lstrip("$").upper()))
                if t is not None and t != idx:
                    alts.append(t)
            elif policy == ANY:  # "Nasdaq" also names Nasdaq Inc: the index first, then it
                same = [h for h in self.exact.get(key(to_simplified(text)), ())
                        if h.kind in _NAME_KINDS]
                alts += [h.idx for h in self._one_issuer(same)]
            claim(s, e, alts, 100.0 if policy == UPPER else 97.0, why, ordered=True)

    def _longest_instrument(self, norm: str, m: re.Match[str]) -> re.Match[str]:
        """A form starting inside this match that reaches further wins: "the Dow Jones" is
        "Dow Jones", not "the Dow" and a stray "Jones"."""
        assert self._instr_re is not None
        best = m
        for w in re.finditer(r"(?<=\s)\S", norm[m.start() : m.end()]):
            other = self._instr_re.match(norm, m.start() + w.start())
            if other is not None and other.end() > best.end():
                best = other
        return best

    def _short_symbol_ok(self, norm: str, text: str, s: int, e: int, shouting: bool) -> bool:
        """BTC, SPX in capitals (not "ETH Zurich", "I work at ETH"); btc, spx only next to a
        finance word. ``shouting``: the whole text's, computed once (not per symbol: that
        made a text of many symbols quadratic)."""
        left, right = _sentence_bounds(norm, s, e)
        window = norm[max(left, s - 40) : s] + " " + norm[e : min(right, e + 40)]
        finance = _symbol_context(window)
        if not text.isupper():
            return finance
        after = _NEXT_WORD.match(norm, e)
        if after is not None:
            word = after.group(1)
            low = word.lower()
            if low in self.very_common or low in _STRONG_EN or low in _WEAK_EN:
                return True
            if low in _MARKET_WORDS or (word.isupper() and self._ticker(word) is not None):
                return True  # "ETH USDT", "BTC ICT", "BTC ETH SOL"
            if word[:1].isupper() and not word.isupper():
                return False  # "ETH Zurich", "ETH Zürich": a name goes on
            if word.isupper() and len(word) > 1 and shouting:
                return False  # "ETH ZURICH IS GREAT": case tells nothing when shouting
        # "I work at ETH.", "a professor at ETH": the university, unless finance is near
        return finance or _ACADEMIC.search(norm[max(left, s - 40) : s]) is None

    def _extract_cjk(self, norm: str, taken: Any, claim: Any, work: ExtractWork) -> None:
        low = norm.lower()
        known = self.exact.packed
        for run in _X_CJK_RUN.finditer(low):
            seg = run.group(0)
            if not has_cjk(seg):
                continue
            simple = to_simplified(seg)
            if len(simple) != len(seg):
                simple = seg
            base = run.start()
            i = 0
            while i < len(simple):
                if not is_cjk_char(simple[i]) and (i > 0 and simple[i - 1].isalnum()):
                    i += 1
                    continue
                step = 1
                for n in self._cjk_lengths:
                    if n > len(simple) - i:
                        continue
                    piece = simple[i : i + n]
                    work.probes += 1
                    if piece not in known or not has_cjk(piece):
                        continue
                    candidates = self.exact[piece]
                    end = i + n
                    if end < len(simple) and piece[-1].isascii() and simple[end].isascii():
                        continue  # do not cut a Latin word in half
                    hits = [
                        h
                        for h in candidates
                        if h.kind not in (INITIALS, PINYIN) and (n > 2 or h.kind != BASE)
                    ]
                    if not hits:
                        continue
                    if piece in self.cn_common and not _named_as_stock(norm, base + end):
                        continue
                    sure = piece not in self.context_words or _zh_context(
                        norm, base + i, base + end
                    )  # 苹果 alone is fruit; 苹果、英伟达 is a list of companies
                    best = max(h.score for h in hits)
                    top = [h for h in hits if h.score == best]
                    claim(base + i, base + end, [h.idx for h in top], best, top[0].why, sure=sure)
                    step = n
                    break
                i += step

    def _extract_latin(
        self, norm: str, shouting: bool, taken: Any, claim: Any, work: ExtractWork
    ) -> None:
        known = self.exact.packed
        words = []
        for m in _X_WORD.finditer(norm):
            w, s, e = m.group(0), m.start(), m.end()
            for suffix in ("'s", "’s"):
                if w.endswith(suffix):
                    w, e = w[:-2], e - 2
            if w:
                words.append((w, s, e))
        for wi, (_, s, e) in enumerate(words):
            if taken[s:e].any():
                continue
            # names of one to five words, longest first
            for n in range(min(5, len(words) - wi), 0, -1):
                last = words[wi + n - 1]
                gap = norm[s : last[2]]
                if n > 1 and re.search(r"[^\w\s&'’.\-]|[.]\s", gap):
                    continue
                phrase = [x[0] for x in words[wi : wi + n]]
                work.probes += 1
                k = key(" ".join(phrase))
                if k not in known:
                    continue
                hits = [
                    h
                    for h in self.exact[k]
                    if h.kind not in (INITIALS, PINYIN) and (h.kind != CORE or len(k) > 4)
                ]
                if not hits:
                    continue
                verdict = self._latin_name_ok(norm, words, wi, n, k, hits, shouting)
                if not verdict:
                    continue
                best = max(h.score for h in hits)
                top = [h for h in hits if h.score == best]
                top = self._one_issuer(top)
                claim(s, last[2], [h.idx for h in top], best, top[0].why, sure=verdict == "sure")
                break
            else:
                self._latin_ticker(norm, words, wi, shouting, claim)

    def _one_issuer(self, hits: list[_Hit]) -> list[_Hit]:
        """Collapse share classes of one company to its primary listing."""
        out: list[_Hit] = []
        for h in sorted(hits, key=lambda h: (-self.pop[h.idx], h.idx)):
            if not any(self._same_issuer(h.idx, o.idx) for o in out):
                out.append(h)
        return out

    def _latin_name_ok(
        self,
        norm: str,
        words: list[tuple[str, int, int]],
        wi: int,
        n: int,
        k: str,
        hits: list[_Hit],
        shouting: bool,
    ) -> str:
        """ "sure", "unsure" (needs corroboration) or "" (not a mention)."""
        pop = max(self.pop[h.idx] for h in hits)
        curated = k in self.curated_keys
        phrase = words[wi : wi + n]
        lowers = [w.lower() for w, _, _ in phrase]
        capital = (
            not shouting
            and all(w[:1].isupper() or not w[:1].isalpha() for w, _, _ in phrase)
            and not _sentence_start(norm, phrase[0][1])
        )
        s, e = phrase[0][1], phrase[-1][2]
        if n == 1 and not curated:
            w = phrase[0][0]
            if w.isupper() and (w in self.not_tickers or len(w) <= 4):
                return ""  # an acronym (ESG, TTM, API), not a company name
        if n == 1 and k in self.collocations:
            near = {x[0].lower() for x in words[max(0, wi - 1) : wi + 2]} - {lowers[0]}
            if near & self.collocations[k]:
                return ""  # "target price", "price target", "apple pie"
        if k in self.context_words:
            return "sure" if capital or _en_context(norm, words, wi, n, strong_only=False) else ""
        famous = any(self.famous[h.idx] for h in hits)
        if n == 1 and lowers[0] in self.common:
            if all(h.kind == CORE for h in hits):
                return ""  # "Boston" (Scientific), "research": resolve() only
            if curated and not (phrase[0][0][:1].isupper() and not shouting):
                # "the Latin alphabet", "fails to match": a word unless capitalised or traded
                return "sure" if _en_context(norm, words, wi, n, strong_only=False) else ""
        if curated:
            return "sure"
        if n == 1:
            w = lowers[0]
            if len(w) <= 2 or _in_proper_noun(norm, words, wi):
                return ""  # "Tim Abbott", "Fair Value Gap": part of another name
            if w in self.common:  # Comcast, Element, Match: a word as well
                if (capital and famous) or (pop >= 0.5 and _zh_context(norm, s, e)):
                    return "sure"
                initial = phrase[0][0][:1].isupper() and not shouting
                return "unsure" if initial and famous else ""
            return "sure" if famous else "unsure"
        if all(w in self.common for w in lowers):
            return "sure" if famous else "unsure" if capital else ""
        return "sure"

    def _latin_ticker(
        self, norm: str, words: list[tuple[str, int, int]], wi: int, shouting: bool, claim: Any
    ) -> None:
        w, s, e = words[wi]
        if not re.fullmatch(r"[A-Za-z]{1,5}(?:[.\-][A-Za-z]{1,2})?", w):
            return
        if len(w) <= 2 and _share_class(norm, s, e):
            return
        i = self._ticker(w.replace(".", "-"))
        if i is None:
            return
        low = w.lower()
        upper = w.isupper()
        if upper:
            if w in self.not_tickers and w not in ("A", "I"):
                gated = True
            elif w in ("A", "I"):
                return
            else:
                gated = low in self.very_common or len(w) == 1
            if gated:
                strong = _en_context(norm, words, wi, 1, strong_only=True, window=2, zh=False)
                weak = _en_context(norm, words, wi, 1, strong_only=False, window=2, zh=False)
                if not (strong or (weak and not shouting)):
                    return
            elif shouting and not self.famous[i]:
                return
            claim(s, e, [i], 99.0, "ticker", sure=gated or self.famous[i])
            return
        if low in self.common or len(w) < 3 or not self.famous[i]:
            return
        rank = self.entries[i].rank
        sure = self.curated[i] or (rank is not None and rank < 150)
        claim(s, e, [i], 95.0, "ticker (lower case)", sure=sure)

    # ---------------------------------------------------------------- misc

    def __len__(self) -> int:
        """Listed securities (the curated instruments are not counted)."""
        return self.n_listed

    def counts(self) -> dict[str, int]:
        """Listed securities per market."""
        out: dict[str, int] = {}
        for e in self.entries[: self.n_listed]:
            out[e.market] = out.get(e.market, 0) + 1
        return out

    def get(self, code: str, market: Market | None = None) -> SymbolEntry | None:
        """The entry for an exact code (any market when ``market`` is None)."""
        for m in (market,) if market else _MARKETS:
            i = self.codes.get((m, code if m in ("cn", "hk") else code.upper()))
            if i is not None:
                return self.entries[i]
        return None

    def instrument(self, text: str) -> SymbolEntry | None:
        """The instrument ``text`` names exactly (see ``SymbolDirectory.instrument``)."""
        q = clean(text[:_MAX_QUERY] if isinstance(text, str) else "")
        if not q:
            return None
        m = _CN_CODE.match(q)
        if m:
            code = m.group(2)
            exch = _CN_EXCH.get((m.group(1) or m.group(3) or "").lower())
            j = self.cn_instr.get((code, exch)) if exch else None
            if j is None:
                i = self.codes.get(("cn", code))
                j = i if i is not None and i >= self.n_listed else None
            return self.entries[j] if j is not None else None
        k = key(to_simplified(q))
        found = {h.idx for h in self.instr.get(k, ()) if h.kind != PINYIN}
        return self.entries[found.pop()] if len(found) == 1 else None


_STRICTNESS = {ANY: 0, UPPER: 1, CASED: 2}
_NAME_KINDS = frozenset({NAME, TW, BASE, ALIAS, SHORT, FULL_EN})

# Bare instrument names that also name something else, by form key: (words after it that make
# it a company, words after it that make it an exchange, words before it that do).
_LISTING = (
    r"(?:list(?:s|ed|ing)?|trade[sd]?|trading|ipos?|debut(?:s|ed)?|floated|uplist(?:s|ed)?|"
    r"delist(?:s|ed)?|(?:re)?mov(?:e|es|ed|ing)|switch(?:es|ed)?|transfer(?:s|red)?|"
    r"go(?:es|ing)?\s+public|went\s+public)"
)
_OTHER_MEANING: dict[str, tuple[re.Pattern[str] | None, ...]] = {
    # S&P Global, S&P MidCap 400, S&P/ASX 200, "S&P downgraded the bonds": not the S&P 500
    "sp": (
        re.compile(
            r"\s*(?:[/\d]|(?:global|ratings?|rated|rates|downgrad\w*|upgrad\w*|affirm\w*|"
            r"mid\s*cap|small\s*cap|dow\s+jones\s+indices|capital\s+iq|credit|outlook)\b)",
            re.I,
        ),
        None,
        None,
    ),
    "nasdaq": (
        re.compile(r"\s*,?\s*(?:inc\b|incorporated\b|omx\b|group\b|corp)", re.I),
        re.compile(
            r"\s*(?:-\s*listed|listed\b|:|exchange\b|stock\s+(?:market|exchange)\b|"
            r"global\s+(?:select|market)\b|capital\s+market\b|ticker|symbol)",
            re.I,
        ),
        re.compile(
            rf"(?:\b{_LISTING}\b.{{0,30}}\b(?:on|onto|to|from|in)\s+(?:the\s+)?|"
            r"\b(?:nyse|amex)\s*(?:and|or|&|,|/|vs\.?|versus)\s*(?:the\s+)?)$",
            re.I,
        ),
    ),
    "纳斯达克": (
        re.compile(r"(?:公司|集团|交易所集团|OMX)"),
        re.compile(r"(?:上市|挂牌|交易所|证券交易所|IPO)"),
        re.compile(r"(?:纽交所|纽约证券交易所)[和与及或、]?$"),
    ),
}


def _other_meaning(text: str, form_key: str, s: int, e: int) -> str:
    """"company" or "exchange" when the words around a bare name say it means that, else ""."""
    rules = _OTHER_MEANING.get(form_key)
    if rules is None:
        return ""
    company, exchange, before = rules
    after = text[e : e + 40]
    if company is not None and company.match(after):
        return "company"
    if exchange is not None and exchange.match(after):
        return "exchange"
    left, _ = _sentence_bounds(text, s, e)
    if before is not None and before.search(text[max(left, s - 60) : s]):
        return "exchange"
    return ""


def _form_key(form: str) -> str:
    """Key of a written instrument form; a caret keeps its own key ("^DJI" is an index
    anywhere, "dji" only where ``DJI`` would count)."""
    bare = form.lstrip("$")
    k = key(bare)
    return "^" + k if bare.startswith("^") and k else k


def _written_as(text: str, entry: SymbolEntry, norm: str) -> bool:
    """A cased form ("the Dow") is written with its capitals (the first word may be "The")."""
    said = " ".join(text.split())
    return any(
        said[1:] == form[1:] and said[:1].lower() == form[:1].lower()
        for form in entry.aliases
        if key(form) == key(said)
    )


def _words_key(text: str) -> str:
    """Order-free key of a multi-word name: "Charles Schwab" == "SCHWAB CHARLES"."""
    words = sorted(key(w) for w in text.split())
    return " ".join(w for w in words if w)


def _subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(ch in it for ch in small)


def _normalise_with_map(text: str) -> tuple[str, list[int]]:
    """NFKC per character with a map back to original offsets; controls become spaces."""
    out: list[str] = []
    pos: list[int] = []
    for i, ch in enumerate(text):
        if ch.isascii():
            piece = ch if ch.isprintable() else " "
        else:
            cat = unicodedata.category(ch)
            piece = " " if cat[0] == "C" else unicodedata.normalize("NFKC", ch)
        for c in piece:
            out.append(c)
            pos.append(i)
    pos.append(len(text))
    return "".join(out), pos


def _shouting(text: str) -> bool:
    letters = [c for c in text if c.isascii() and c.isalpha()]
    if len(letters) < 12:
        return False
    return sum(c.isupper() for c in letters) / len(letters) > 0.6


def _share_class(text: str, s: int, e: int) -> bool:
    """A share-class letter, not a ticker: A股, B 股, AB股, A+H股 (but GE股价 is GE)."""
    after = text[e : e + 4].lstrip(" +")
    if after[:1] == "H" and "股" in after[:3]:
        return True
    return after[:1] == "股" and after[1:2] not in ("价", "票", "份", "东", "息")


def _in_proper_noun(text: str, words: list[tuple[str, int, int]], wi: int) -> bool:
    """The word sits in a run of capitalised words that is not itself the match."""
    w, s, e = words[wi]
    if not w[:1].isupper() or w.isupper():
        return False
    for j in (wi - 1, wi + 1):
        if 0 <= j < len(words):
            o, os_, oe = words[j]
            between = text[min(e, oe) : max(s, os_)]
            if o[:1].isupper() and between.strip() == "" and not (j < wi and o in ("I", "A")):
                if j < wi and _sentence_start(text, os_) and o.lower() in _SENTENCE_OPENERS:
                    continue
                return True
    return False


_SENTENCE_OPENERS = frozenset(
    "the a an is are was does do did should would could can will what how why when which "
    "buy sell and but or so if i my our we you compare about".split()
)


def _sentence_start(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in " \t\"'“‘(":
        i -= 1
    return i < 0 or _SENTENCE_END.match(text[i]) is not None


@lru_cache(maxsize=8)
def _boundaries(text: str) -> list[int]:
    return [m.start() for m in _SENTENCE_END.finditer(text)]


def _sentence_bounds(text: str, s: int, e: int) -> tuple[int, int]:
    """[left, right) of the sentence holding text[s:e] (bisect over cached boundaries)."""
    ends = _boundaries(text)
    i = bisect_left(ends, s)
    j = bisect_left(ends, e)
    return (ends[i - 1] + 1 if i else 0), (ends[j] if j < len(ends) else len(text))


_NEXT_WORD = re.compile(r"[ \t]+([^\W\d_]+)")
# words that go with a crypto or index symbol but are no English finance word
_MARKET_WORDS = frozenset(
    "ict usd usdt usdc crypto cryptos coin coins token tokens spot perp perps futures "
    "long short longs shorts pump dump pumping dumping fvg ob rsi macd".split()
)
_SYMBOL_CONTEXT_CJK = ("币", "行情", "走势")
_ACADEMIC = re.compile(
    r"\b(?:work(?:s|ed|ing)?|stud(?:y|ies|ied|ying)|students?|professors?|researchers?|"
    r"lecturers?|phd|postdocs?|graduated?|alumn(?:us|a|i|ae)|campus|univers(?:ity|ities)|"
    r"enrolled|admitted|accepted|teach(?:es|ing)?|taught)\b[\w\s]{0,20}?\b(?:at|from|to)\s+$",
    re.I,
)


def _symbol_context(window: str) -> bool:
    """A finance or trading word (whole words: "predict" is no "ict"), a bar size, %, $ or
    币/行情/走势 in the window around a lower-case symbol."""
    if "%" in window or "$" in window or any(w in window for w in _SYMBOL_CONTEXT_CJK):
        return True
    if _BAR_SIZE.search(window) is not None:
        return True
    toks = re.findall(r"[a-z]+", window.lower())
    return any(t in _STRONG_EN or t in _WEAK_EN or t in _MARKET_WORDS for t in toks)


def _zh_context(text: str, s: int, e: int) -> bool:
    left, right = _sentence_bounds(text, s, e)
    window = text[max(left, s - 30) : s] + " " + text[e : min(right, e + 30)]
    if any(w in window for w in _FIN_ZH):
        return True
    return _has_en_finance(window) or "%" in window


_NAMING = (
    "这只",
    "这支",
    "股价",
    "股票",
    "的股",
    "公司",
    "代码",
    "涨",
    "跌",
    "市值",
    "财报",
    "(",
    "（",
)


def _named_as_stock(text: str, end: int) -> bool:
    """An everyday word that is also a short name (太阳能, 值得买) counts only when the text
    goes on to call it a stock: 太阳能这只股票, 同花顺的股价, 机器人涨了."""
    after = text[end : end + 4]
    return any(after.startswith(w) or (w in after[:3] and len(w) > 1) for w in _NAMING)


def _has_en_finance(window: str) -> bool:
    toks = re.findall(r"[a-z]+", window.lower())
    return any(t in _STRONG_EN or t in _WEAK_EN for t in toks)


def _en_context(
    text: str,
    words: list[tuple[str, int, int]],
    wi: int,
    n: int,
    *,
    strong_only: bool,
    window: int = 6,
    zh: bool = True,
) -> bool:
    """A finance word near the phrase (within ``window`` words, same sentence); with ``zh``
    also 股/买/卖/涨 close by (too common to vouch for a bare acronym like PB or D)."""
    s, e = words[wi][1], words[wi + n - 1][2]
    left, right = _sentence_bounds(text, s, e)
    vocab = _STRONG_EN if strong_only else _STRONG_EN | _WEAK_EN
    near = words[max(0, wi - window) : wi] + words[wi + n : wi + n + window]
    for w, ws, we in near:
        if ws >= left and we <= right and w.lower() in vocab:
            return True
    around = text[max(left, s - 12) : s] + text[e : min(right, e + 12)]
    if "%" in around or "$" in around:
        return True
    return zh and any(z in around for z in _FIN_ZH[:4])


def build_index(
    entries: Iterable[SymbolEntry], curated: dict[str, Any] | None = None
) -> SymbolIndex:
    """Build an index (``curated`` defaults to the packaged ``aliases.json``)."""
    if curated is None:
        from tools.symbols.sources import curated as load_curated

        curated = load_curated()
    return SymbolIndex(list(entries), curated=curated)
