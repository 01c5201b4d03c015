"""What a Mandarin note said: the beam's readings and their symbols, chosen together.

Whisper base ranks its readings by sound alone and does not know stock names, so the best
reading can be 我俩也 where the third says 五粮液. Each reading is corrected against the symbols
directory (characters, codes read as digits, pinyin: :func:`bot.voice.mandarin.correct_mandarin`;
popular names it sounds exactly like, or nearly from four syllables on, are written in first:
:attr:`bot.voice.soundalike.Suggestion.sure`, 武良业 -> 五粮液, 上正指数 -> 上证指数) and scored
by its mean token log-probability plus a bonus for each security it names: people
send voice notes about stocks, so a reading that names one the directory knows is more likely
than one that names nothing, up to a point. A name that only a much less likely reading has is
not acted on: it is offered as a question ("did you mean 五粮液 (000858)?"), and so are names the
readings only sound less alike (:mod:`bot.voice.soundalike`), and codes heard one digit short
(``6.0.519`` for 六零零五一九: :func:`bot.voice.codes.code_guesses`) or with a repeated digit
written as another character (``引引引858`` for 零零零八五八).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bot.voice.backends import Hypothesis
from bot.voice.codes import guessed_matches
from bot.voice.correct import Correction
from bot.voice.hints import Hints
from bot.voice.institutions import institution_spans
from bot.voice.mandarin import correct_mandarin, simplified
from bot.voice.soundalike import SoundIndex, sound_index, suggest
from tools.symbols import Match, SymbolDirectory

# Mean token log-probability a reading may give up for each security the directory confirms
# in it, and the most it may give up in all before the name is asked about instead.
NAME_BONUS = 0.25
MAX_GAP = 0.35
MAX_CHOICES = 3


@dataclass(frozen=True)
class Reading:
    """The chosen reading: its text, the securities acted on, and those only asked about."""

    text: str
    correction: Correction
    logprob: float
    rank: int  # 0: the beam's own best reading
    suggestions: tuple[Match, ...] = ()

    @property
    def unsure(self) -> bool:
        """Nothing to act on, but names to ask about."""
        return bool(self.suggestions) and not self.correction.symbols


def _as_match(directory: SymbolDirectory, symbol: str, why: str, score: float) -> Match | None:
    """A match for ``symbol`` (000001.SZ is 平安银行, 000001.SH 上证指数: told apart here)."""
    entry = directory.get(symbol.split(".")[0]) if symbol[:1].isdigit() else directory.get(symbol)
    if entry is None or entry.symbol != symbol:
        entry = directory.instrument(symbol)
    if entry is None:
        return None
    return Match(code=entry.code, name=entry.name, market=entry.market,
                 exchange=entry.exchange, symbol=entry.symbol,
                 score=round(max(0.0, min(100.0, score)), 2), why=why)


def _shaky(text: str, directory: SymbolDirectory, index: SoundIndex) -> list[Match]:
    """A two-character name inside a longer window that sounds like a popular name (中行 in
    中行政却, heard for 中信证券): both, to ask about; else nothing."""
    out: list[Match] = []
    short = [m for m in directory.extract(text)
             if m.span is not None and m.span[1] - m.span[0] <= 2]
    for alike in suggest(text, index, taken=institution_spans(text)) if short else []:
        for m in short:
            assert m.span is not None
            if alike.start <= m.span[0] and m.span[1] <= alike.end and alike.symbol != m.symbol:
                rival = _as_match(directory, alike.symbol, f"sounds like {alike.name}",
                                  100.0 * alike.similarity)
                if rival is not None:
                    out += [rival, m.model_copy(update={"span": None})]
    return list({m.code: m for m in out}.values())


def _corrected(text: str, directory: SymbolDirectory, index: SoundIndex,
               hints: Hints | None) -> Correction:
    """:func:`correct_mandarin` of ``text`` with the popular names it surely sounds like
    written in first (the heard text is kept as ``Correction.text``)."""
    fixed = correct_mandarin(text, directory, hints)
    taken = [m.span for m in directory.extract(text) if m.span is not None]
    taken += institution_spans(text)
    sure = [s for s in suggest(text, index, taken=taken) if s.sure]
    if not sure:
        return fixed
    written = text
    for s in sorted(sure, key=lambda s: -s.start):
        written = written[:s.start] + s.name + written[s.end:]
    again = correct_mandarin(written, directory, hints)
    if len(again.symbols) <= len(fixed.symbols):
        return fixed
    return Correction(text=text, query=again.query, symbols=again.symbols)


def choose_reading(hypotheses: Sequence[Hypothesis], directory: SymbolDirectory,
                   hints: Hints | None = None) -> Reading:
    """The reading to act on, from the beam's readings (best first; at least one)."""
    if not hypotheses:
        raise ValueError("no reading to choose from")
    extra = frozenset(hints.codes) if hints is not None else frozenset()
    index = sound_index(directory, extra)
    readings = []
    for rank, h in enumerate(hypotheses):
        text = simplified(h.text.strip())
        readings.append((rank, h, text, _corrected(text, directory, index, hints)))
    top = readings[0]
    rank, h, text, fixed = max(
        readings, key=lambda r: (r[1].logprob + NAME_BONUS * min(2, len(r[3].symbols)), -r[0]))
    if fixed.symbols and hypotheses[0].logprob - h.logprob <= MAX_GAP:
        rival = _shaky(text, directory, index)
        if not rival:
            return Reading(text=text, correction=fixed, logprob=h.logprob, rank=rank)
        plain = Correction(text=text, query=text, symbols=[])
        return Reading(text=text, correction=plain, logprob=h.logprob, rank=rank,
                       suggestions=tuple(rival[:MAX_CHOICES]))
    _, th, ttext, tfixed = top
    if tfixed.symbols:
        return Reading(text=ttext, correction=tfixed, logprob=th.logprob, rank=0)
    asked: dict[str, Match] = {}
    for m in fixed.symbols:  # only a far less likely reading names it
        asked.setdefault(m.code, m.model_copy(update={"span": None, "score": 50.0}))
    found = [s for _, _, t, _ in readings for s in suggest(t, index, taken=institution_spans(t))]
    for s in sorted(found, key=lambda s: -s.similarity):
        alike = _as_match(directory, s.symbol, f"sounds like {s.name}", 100.0 * s.similarity)
        if alike is not None:
            asked.setdefault(alike.code, alike)
    for guess in guessed_matches([t for _, _, t, _ in readings], directory):
        asked.setdefault(guess.code, guess)
    return Reading(text=ttext, correction=tfixed, logprob=th.logprob, rank=0,
                   suggestions=tuple(list(asked.values())[:MAX_CHOICES]))
