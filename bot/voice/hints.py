"""Biasing the recogniser: the names a user is likely to say, as a Whisper prompt.

Whisper reads its prompt as text that came before the note, so listing "NVIDIA, Apple, Tesla"
makes it spell those names instead of "then video". The list is the user's watchlist, then their
recent symbols, then the most-traded names; every code is checked against the symbols directory
(nothing the directory does not know is ever suggested). The same vocabulary, with sound keys,
is what :mod:`bot.voice.correct` matches misheard words against.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from tools.symbols import SymbolDirectory, SymbolEntry
from tools.symbols.normalize import has_cjk, phonetic, short_company_name

# The names people ask about most (by traded value, US and China/HK), with the way they are
# said. Order matters: earlier names win when the prompt is cut short.
MOST_TRADED: tuple[tuple[str, str], ...] = (
    ("NVDA", "NVIDIA"), ("TSLA", "Tesla"), ("AAPL", "Apple"), ("MSFT", "Microsoft"),
    ("AMZN", "Amazon"), ("META", "Meta"), ("GOOGL", "Google"), ("AVGO", "Broadcom"),
    ("AMD", "AMD"), ("PLTR", "Palantir"), ("NFLX", "Netflix"), ("TSM", "TSMC"),
    ("MU", "Micron"), ("INTC", "Intel"), ("QCOM", "Qualcomm"), ("ASML", "ASML"),
    ("JPM", "JPMorgan"), ("BRK-B", "Berkshire Hathaway"), ("COST", "Costco"),
    ("WMT", "Walmart"), ("LLY", "Eli Lilly"), ("UNH", "UnitedHealth"), ("V", "Visa"),
    ("MA", "Mastercard"), ("ORCL", "Oracle"), ("COIN", "Coinbase"), ("SMCI", "Super Micro"),
    ("UBER", "Uber"), ("BA", "Boeing"), ("DIS", "Disney"), ("KO", "Coca-Cola"),
    ("XOM", "Exxon Mobil"), ("BAC", "Bank of America"), ("BABA", "Alibaba"),
    ("PDD", "Pinduoduo"), ("NIO", "NIO"), ("0700", "Tencent"), ("1810", "Xiaomi"),
    ("600519", "Kweichow Moutai"), ("300750", "CATL"), ("002594", "BYD"),
    ("601318", "Ping An"),
)

MAX_PROMPT_NAMES = 40


def spoken_name(entry: SymbolEntry) -> str:
    """How an English speaker names a security: "Apple", "Kweichow Moutai", "Amazon"."""
    for code, name in MOST_TRADED:
        if code == entry.code:
            return name
    if entry.market != "us":
        latin = [a for a in entry.aliases if a.isascii() and not a.islower()]
        return entry.name_en or (latin[0] if latin else entry.name)
    latin = [a for a in entry.aliases if a.isascii() and a[:1].isupper()]
    if latin:
        return latin[0]
    short = short_company_name(entry.name)
    return short.upper() if len(short) <= 4 else short.title()


def display_name(entry: SymbolEntry, *, chinese: bool = False) -> str:
    """The name written into a corrected question (Chinese names in a Chinese sentence)."""
    if chinese and has_cjk(entry.name):
        return entry.name
    return spoken_name(entry)


@dataclass(frozen=True)
class Hints:
    """The vocabulary for one note: codes in priority order, how each is said, sound keys."""

    codes: tuple[str, ...] = ()
    names: dict[str, str] = field(default_factory=dict)  # code -> spoken name
    sounds: dict[str, tuple[str, ...]] = field(default_factory=dict)  # code -> phonetic keys

    @property
    def prompt(self) -> str:
        """The initial prompt: the names, comma separated, as a transcript would spell them."""
        names = list(dict.fromkeys(self.names[c] for c in self.codes[:MAX_PROMPT_NAMES]
                                   if not has_cjk(self.names[c])))
        return ", ".join(names) + "." if names else ""

    @property
    def hotwords(self) -> tuple[str, ...]:
        """The same names as a list, for backends with a hotword parameter."""
        return tuple(self.names[c] for c in self.codes)


def _sound_keys(entry: SymbolEntry, spoken: str) -> tuple[str, ...]:
    forms = [spoken, short_company_name(entry.name_en or entry.name)]
    forms += [a for a in entry.aliases if a.isascii() and a[:1].isupper() and len(a) > 3]
    keys = [phonetic(f) for f in forms if f and not has_cjk(f)]
    return tuple(dict.fromkeys(k for k in keys if len(k) >= 3))


def build_hints(directory: SymbolDirectory, *, watchlist: Iterable[str] = (),
                recent: Iterable[str] = (),
                most_traded: Sequence[tuple[str, str]] = MOST_TRADED) -> Hints:
    """Hints for a user: watchlist first, then recent symbols, then the most-traded names.

    Codes the directory does not know are dropped. ``600519.SH`` and ``600519`` both work.
    """
    codes: list[str] = []
    names: dict[str, str] = {}
    sounds: dict[str, tuple[str, ...]] = {}
    wanted = [*watchlist, *recent, *(c for c, _ in most_traded)]
    for raw in wanted:
        code = raw.strip().upper()
        entry = directory.get(code) or directory.get(code.rsplit(".", 1)[0])
        if entry is None or entry.code in names:
            continue
        codes.append(entry.code)
        names[entry.code] = spoken_name(entry)
        sounds[entry.code] = _sound_keys(entry, names[entry.code])
    return Hints(codes=tuple(codes), names=names, sounds=sounds)
