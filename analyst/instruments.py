"""The instruments a sentence names, exchange-qualified, in the order it names them.

Three passes over one text, each claiming the characters it reads so a later pass cannot
re-read them as something else:

1. index words (上证指数, 沪指, 上证, 深证成指, 创业板指, 沪深300, ...): always the index, so
   "上证指数和沪深300对比" is two indexes and never 平安银行 (000001 is both the SSE Composite
   on Shanghai and Ping An Bank on Shenzhen; an index is routed as ``000001.SH``);
2. the symbols directory's own sentence extraction (codes, tickers, names, pinyin, aliases);
3. what a sentence about a company says that (2) is too careful to take alone: a well-known
   name in lower case ("how is nvidia and amd doing"), a possessive ("Apple's"), a misspelt
   name that is no English word ("Nvidea"), a Chinese alias before a question word
   (苹果怎么样). Everyday words ("I want to know", "how is the market") are never tickers.

A message that is only one word or symbol is that symbol where the directory is sure of it,
even where a sentence would need a finance word to take it ("btc", "spx", "Nasdaq", "Apple"),
while chat words stay chat ("hello", "news", "gold"). This is the one way Bullpen finds
instruments in text: the offline analyst's understanding, the debate, plan mode and
`bot.symbols_bridge.find_symbols` all come here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# index words, longest first within a line; the routed symbol is what the tools take
INDEX_WORDS: tuple[tuple[str, str, str], ...] = (
    ("上证综合指数", "000001.SH", "上证指数"), ("上证综指", "000001.SH", "上证指数"),
    ("上证指数", "000001.SH", "上证指数"), ("上证50", "000016.SH", "上证50"),
    ("上证", "000001.SH", "上证指数"), ("沪指", "000001.SH", "上证指数"),
    ("沪市", "000001.SH", "上证指数"),
    ("深证成份指数", "399001", "深证成指"), ("深证成指", "399001", "深证成指"),
    ("深成指", "399001", "深证成指"), ("深证", "399001", "深证成指"),
    ("深指", "399001", "深证成指"),
    ("创业板指数", "399006", "创业板指"), ("创业板指", "399006", "创业板指"),
    ("沪深300", "000300", "沪深300"), ("沪深三百", "000300", "沪深300"),
    ("中证500", "000905.SH", "中证500"),
    ("shanghai composite", "000001.SH", "上证指数"), ("sse composite", "000001.SH", "上证指数"),
    ("csi 300", "000300", "沪深300"), ("csi300", "000300", "沪深300"),
    ("shenzhen component", "399001", "深证成指"), ("chinext", "399006", "创业板指"),
)
_INDEX_RE = re.compile("|".join(
    rf"(?<![a-z]){re.escape(w)}(?![a-z\d])" if w.isascii() else
    rf"{re.escape(w)}(?!\d)" for w, _, _ in sorted(INDEX_WORDS, key=lambda x: -len(x[0]))),
    re.I)
_INDEX_BY_WORD = {w.lower(): (sym, name) for w, sym, name in INDEX_WORDS}

# words a sentence about a company uses; never taken as a name in pass 3
_NOT_NAMES = frozenset("""
stock stocks share shares price prices quote quotes chart charts history trend performance
doing going how what when which who why where is are was were the and or but for with about
today now latest last past recent month months year years week weeks day days market markets
buy sell hold should would could will can may might rise fall drop up down tomorrow
risk risks factor factors filing filings latest annual report reports revenue profit earnings
dividend dividends yield ratio ratios cap compare versus against index indexes indices
fund funds nav etf sector sectors board know want tell show give please thanks thank hello
""".split())
# indicators and ratios written like tickers (RSI is Rush Street Interactive, CCI Crown Castle)
_INDICATOR_NAMES = frozenset("RSI MACD KDJ ATR OBV EMA SMA BOLL CCI ADX VWAP EPS ROE".split())
# names so frequent in English text that the word list counts them as very common, though
# they mean the company and nothing else: in lower case they are still that company
# ("what about netflix"), unlike "apple", "target" or "visa"
_ONLY_A_COMPANY = frozenset("amazon ebay intel microsoft netflix".split())
# a Chinese question after a bare alias ("苹果怎么样"): what makes it a question about a stock
_ZH_CUE = re.compile(r"(?:的)?(?:怎么样|怎样|如何|股价|价格|走势|表现|行情|最近|今天|现在|明天|"
                     r"会|能|值得|还|市盈率|市净率|市值|财报|营收|利润|分红|股息|涨|跌|多少|和|与|跟|、|"
                     r"对比|比较|[?？]|$)")
_LATIN = re.compile(r"[A-Za-z][A-Za-z&\-]*(?:['’]s)?")
_CJK_RUN = re.compile(r"[\u4e00-\u9fff]+")


@dataclass(frozen=True)
class Instrument:
    """One instrument a question names: `symbol` is what the tools take (``000001.SH``,
    ``000001``, ``NVDA``, ``0700``), `code` the bare code, `written` the words used."""

    symbol: str
    code: str
    name: str
    market: str  # cn, us, hk, crypto, fx
    kind: str  # stock, index, crypto, fx, fund
    written: str = ""
    at: int = 0

    @property
    def display(self) -> str:
        """``上证指数 (000001.SH)``, ``平安银行 (000001.SZ)``, ``NVIDIA CORP (NVDA)``."""
        code = self.symbol
        if self.market == "cn" and "." not in code:
            code = f"{code}.{_cn_exchange(code, self.kind)}"
        if self.market == "hk":
            code = f"{self.code}.HK"
        return f"{self.name} ({code})" if self.name else code


def _cn_exchange(code: str, kind: str) -> str:
    if kind == "index":
        return "SZ" if code.startswith("399") else "SH"
    if code.startswith(("6", "9", "5")):
        return "SH"
    if code.startswith(("4", "8", "92")):
        return "BJ"
    return "SZ"


class ReadWork:
    """What one `find_instruments` call did, counted: the characters its own passes read
    (pass 1 and 3, only the parts `extract` reads: `extract_windows`), its probes (each index
    word found, each Latin word looked at, each Chinese question cue tried) and its directory
    searches (fuzzy `resolve`, the costly step, at most `MAX_NAME_LOOKUPS`). Every probe costs
    a bounded amount, so the three bound the work; `extract` is the directory's own
    (`ExtractWork`, when the directory takes one). Tests hold the bound on these counts."""

    __slots__ = ("chars", "extract", "probes", "searches")

    def __init__(self) -> None:
        self.chars = 0
        self.probes = 0
        self.searches = 0
        self.extract: Any = None


def find_instruments(text: str, directory: Any, *,
                     work: ReadWork | None = None) -> list[Instrument]:
    """The instruments `text` names, in order, each once (see the module's docstring). Only
    the head and tail `extract` reads are read, so a long paste costs what its first
    `EXTRACT_MAX_CHARS` characters cost; `work`, when given, counts what was done."""
    from tools.symbols.index import extract_windows

    work = work if work is not None else ReadWork()
    windows = [(o, o + len(w)) for o, w in extract_windows(text)]
    work.chars = sum(e - s for s, e in windows)
    taken = [False] * (len(text) + 1)
    found: list[Instrument] = []

    def claim(s: int, e: int) -> bool:
        if any(taken[s:e]):
            return False
        for i in range(s, e):
            taken[i] = True
        return True

    for a, b in windows:
        for m in _INDEX_RE.finditer(text, a, b):
            work.probes += 1
            if claim(m.start(), m.end()):
                symbol, name = _INDEX_BY_WORD[m.group(0).lower()]
                found.append(Instrument(symbol=symbol, code=symbol.split(".")[0], name=name,
                                        market="cn", kind="index", written=m.group(0),
                                        at=m.start()))
    if directory is None:
        return _ordered(found)
    masked = "".join(" " if taken[i] else ch for i, ch in enumerate(text))
    try:
        if work.extract is not None:
            matches = directory.extract(masked, work=work.extract)
        else:
            matches = directory.extract(masked)
        if not matches and not found and _ONE_WORD.match(text):
            work.searches += 1
            matches = _only_a_symbol(directory, text)
            if matches:
                m = matches[0]
                return [_from_match(m, directory, text.strip(), text.find(text.strip()))]
    except Exception:  # a broken directory must not take the question down
        matches = []
    for m in matches:
        s, e = m.span or (0, 0)
        if m.span is not None and not claim(s, e):
            continue
        found.append(_from_match(m, directory, text[s:e], s))
    found.extend(_sentence_names(text, taken, directory, windows, work))
    return _ordered(found)


def _ordered(found: list[Instrument]) -> list[Instrument]:
    out: dict[str, Instrument] = {}
    for ins in sorted(found, key=lambda x: x.at):
        out.setdefault(ins.symbol, ins)
    named = list(out.values())
    # "the RSI for $COIN": an indicator's name that is also a ticker (Rush Street, Crown
    # Castle) is the indicator when the question names another instrument; `$RSI` stays
    terms = [i for i in named if i.written in _INDICATOR_NAMES]
    return [i for i in named if i not in terms] if len(terms) < len(named) else named


def routable(m: Any, directory: Any) -> str:
    """A directory match's code as the tools take it: the bare code, or the written symbol
    when the bare code belongs to another security (上证指数 is ``000001.SH``: a bare
    ``000001`` is 平安银行)."""
    if str(m.kind) != "stock":
        listed = directory.get(m.code, m.market)
        if listed is not None and listed.symbol != m.symbol:
            return str(m.symbol)
    return str(m.code)


def _from_match(m: Any, directory: Any, written: str, at: int) -> Instrument:
    return Instrument(symbol=routable(m, directory), code=str(m.code), name=str(m.name),
                      market=str(m.market), kind=str(m.kind), written=written, at=at)


def _sentence_names(text: str, taken: list[bool], directory: Any,
                    windows: list[tuple[int, int]], work: ReadWork) -> list[Instrument]:
    """Pass 3: well-known names in lower case or possessive, misspelt names, Chinese aliases
    before a question word; only in characters no earlier pass claimed, only in `windows`
    (the parts `extract` read), each word searched once and at most `MAX_NAME_LOOKUPS`
    searches whatever was pasted."""
    from tools.symbols.index import common_word

    seen: dict[str, tuple[Any | None, float]] = {}

    def best(word: str) -> tuple[Any | None, float]:
        if word not in seen:
            if len(seen) < MAX_NAME_LOOKUPS:
                work.searches += 1
                seen[word] = _best(directory, word)
            else:
                seen[word] = (None, 0.0)
        return seen[word]

    out: list[Instrument] = []
    for a, b in windows:
        for m in _LATIN.finditer(text, a, b):
            work.probes += 1
            s, e = m.start(), m.end()
            word = re.sub(r"['’]s$", "", m.group(0))
            low = word.lower()
            if (any(taken[s:e]) or len(word) < 3 or low in _NOT_NAMES or low in _CHAT_WORDS
                    or word.isupper()):
                continue  # all capitals: a ticker, which pass 2 judged already
            everyday = common_word(word, very=True) and low not in _ONLY_A_COMPANY
            if word.islower() and everyday:
                continue  # neither rule below can take it: skip the directory's search
            top, second = best(word)
            if top is None or top.kind not in ("stock", "index", "crypto"):
                continue
            if top.why.startswith(_CODE_WHY):
                continue  # a code in lower case in a sentence ("my dji drone"): pass 2's call
            exact = top.score >= 99.0 and not top.why.startswith(("fuzzy", "sounds",
                                                                  "initials"))
            if exact:
                # an everyday word ("apple") only as a proper noun ("Apple's", "Apple")
                ok = not everyday or word[:1].isupper()
            else:
                # a misspelt name ("Nvidea", "Microsfot"): no English word, clearly one company
                ok = (top.score >= 87.0 and len(word) >= 5 and not common_word(word)
                      and top.score - second >= (5.0 if top.score >= 90.0 else 10.0))
            if ok:
                out.append(_from_match(top, directory, m.group(0), s))
                for i in range(s, e):
                    taken[i] = True
        for run in _CJK_RUN.finditer(text, a, b):
            out.extend(_aliases_before_cues(text, run.start(), run.end(), taken, best,
                                            directory, work))
    return out


def _aliases_before_cues(text: str, start: int, end: int, taken: list[bool], best: Any,
                         directory: Any, work: ReadWork) -> list[Instrument]:
    """A Chinese alias (two to six characters) in ``text[start:end]`` followed by a question
    cue (苹果怎么样): at most five cue probes per character, each reading a few characters
    (the cue is matched in place, never on a copy of the rest of the text)."""
    out: list[Instrument] = []
    i = start
    while i < end:
        step = 1
        for n in range(min(6, end - i), 1, -1):
            if any(taken[i:i + n]):
                continue
            work.probes += 1
            if not _ZH_CUE.match(text, i + n):
                continue
            hit, _ = best(text[i:i + n])
            if hit is None or hit.score < 99.0 or hit.why.startswith(("fuzzy", "sounds")):
                continue
            out.append(_from_match(hit, directory, text[i:i + n], i))
            for k in range(i, i + n):
                taken[k] = True
            step = n
            break
        i += step
    return out


# a message of one Latin word or symbol: "btc", "nvda?", "$spx", "BTC-USD", "S&P"
_ONE_WORD = re.compile(r"^\s*\$?[A-Za-z0-9^][A-Za-z0-9.^/&-]{0,23}[\s?!.]*$")
MAX_NAME_LOOKUPS = 64  # directory searches for names in one message (a question names a few)
_SURE = 97.0  # an exact code, ticker, name or alias; not fuzzy, nor a common word's ticker
_WELL_KNOWN = 99.0  # an exact name plus the popularity bonus of an index member or curated name
_CODE_WHY = ("ticker", "symbol", "code", "index code", "HK code", "spelled-out ticker")
# words that are chat, whatever company shares the name
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


def _best(directory: Any, word: str) -> tuple[Any | None, float]:
    """The directory's clear best match for one word (None when two securities tie) and
    the runner-up's score."""
    try:
        matches = directory.resolve(word, limit=2)
    except Exception:
        return None, 0.0
    if not matches or getattr(matches[0], "ambiguous", False):
        return None, 0.0
    return matches[0], float(matches[1].score) if len(matches) > 1 else 0.0
