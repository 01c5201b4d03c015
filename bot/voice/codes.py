"""Security codes as a recogniser writes them, back to the code the directory lists.

People say an A-share code digit by digit (六零零五一九, "six zero zero five one nine") or, in
English, as a number ("six hundred thousand five hundred nineteen"). Whisper writes what it
heard in many shapes: ``六零零五一九``, ``600 519``, ``6-0-0-5-1-9``, ``600,519``, the number
in words, or ``6.0.519`` with a repeated digit heard once. :func:`normalise_codes` turns each
shape into its digits, in place and keeping the text's length (the rest is padded with
spaces, so spans found afterwards index the heard text), and only when the directory lists
the code: any other number stays as it was said.

A reading one digit short or long, with the digits said apart (``6.0.519``: 60519;
``3-0-0-0-7-5-0``), is not acted on: :func:`code_guesses` offers the listed codes it makes with
a digit of a repeated pair heard once or three times (600519, 300750), for Bullpen to ask "did
you mean 贵州茅台 (600519.SH)?". So is a code whose repeated digit was written as another
character said as often (``引引引858`` for 零零零八五八: :func:`repeated_syllable_guesses`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tools.symbols import Match, SymbolDirectory

CJK_DIGITS = {"零": "0", "〇": "0", "○": "0", "洞": "0", "一": "1", "幺": "1", "二": "2",
              "两": "2", "三": "3", "四": "4", "五": "5", "六": "6", "七": "7", "八": "8",
              "九": "9"}
_DIGIT = f"[0-9{''.join(CJK_DIGITS)}]"
# digits with at most one separator between them; "," only as a thousands mark (600,519)
# (a count or an amount is not a code: "600,519 shares", "383,285 million")
_RUN = re.compile(r"(?<![0-9.,])[0-9]{3},[0-9]{3}(?![0-9]|[.,][0-9]|\s*(?:[%$¥元股亿万]|"
                  r"(?:shares|million|billion|dollars|yuan|percent|people|units)\b))"
                  rf"|(?<![0-9.,]){_DIGIT}(?:[ .\-·、]?{_DIGIT})+(?![0-9])")

_UNITS = {"zero": 0, "oh": 0, "o": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
          "six": 6, "seven": 7, "eight": 8, "nine": 9}
_TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
          "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
         "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000}
_REPEATS = {"double": 2, "triple": 3}
_NUMBER_WORD = "|".join(sorted([*_UNITS, *_TEENS, *_TENS, *_SCALES, *_REPEATS],
                               key=len, reverse=True))
# number words joined by spaces, hyphens or "and" ("six hundred and five thousand ...")
_WORDS = re.compile(rf"(?<![\w'])(?:{_NUMBER_WORD})(?:(?:[\s\-,]+|\s+and\s+)"
                    rf"(?:{_NUMBER_WORD}))+(?![\w'])", re.IGNORECASE)


def _digits_of_run(run: str) -> str:
    return "".join(CJK_DIGITS.get(ch, ch) for ch in run if ch.isdigit() or ch in CJK_DIGITS)


def _said_apart(run: str) -> bool:
    """Digits said one by one: Chinese numerals, or separated (not a plain number)."""
    return any(ch in CJK_DIGITS for ch in run) or bool(re.search(r"[ .\-·、]", run))


def _is_decimal(run: str) -> bool:
    """``12.5``, ``1.234``: one dot between Arabic digits is a number, not a code."""
    return run.count(".") == 1 and not re.search(r"[ \-·、]", run) and run.isascii()


def _digit_by_digit(words: list[str]) -> str | None:
    """"six oh oh five one nine" / "six double oh five nineteen" -> "600519"."""
    out: list[str] = []
    repeat = 1
    i = 0
    while i < len(words):
        w = words[i]
        if w in _REPEATS:
            repeat = _REPEATS[w]
        elif w in _UNITS:
            out.append(str(_UNITS[w]) * repeat)
            repeat = 1
        elif w in _TEENS:
            out.append(str(_TEENS[w]))
        elif w in _TENS:
            nxt = words[i + 1] if i + 1 < len(words) else ""
            if nxt in _UNITS and _UNITS[nxt] > 0:
                out.append(str(_TENS[w] + _UNITS[nxt]))
                i += 1
            else:
                out.append(str(_TENS[w]))
        else:
            return None
        i += 1
    return "".join(out)


def _as_number(words: list[str]) -> str | None:
    """"six hundred thousand five hundred nineteen" -> "600519" (a number of six digits)."""
    total, current = 0, 0
    for w in words:
        if w in _UNITS:
            current += _UNITS[w]
        elif w in _TEENS:
            current += _TEENS[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(1, current) * 100
        elif w == "thousand":
            total += max(1, current) * 1000
            current = 0
        else:
            return None
    value = total + current
    return str(value) if 100_000 <= value <= 999_999 else None


def _from_words(phrase: str) -> str | None:
    words = [w for w in re.split(r"[\s\-,]+", phrase.lower()) if w and w != "and"]
    if any(w in _SCALES for w in words):
        return _as_number(words)
    return _digit_by_digit(words)


def _spans(text: str) -> Iterator[tuple[int, int, str, bool]]:
    """(start, end, digits, said apart) of each run of digits or number words in ``text``."""
    for m in _RUN.finditer(text):
        if not _is_decimal(m.group(0)):
            yield m.start(), m.end(), _digits_of_run(m.group(0)), _said_apart(m.group(0))
    for m in _WORDS.finditer(text):
        digits = _from_words(m.group(0))
        if digits:
            yield m.start(), m.end(), digits, True


def _listed(directory: SymbolDirectory, raw: str, digits: str) -> bool:
    """A listed code: six digits, or four to six said in Chinese numerals (零零七零零, a Hong
    Kong code), never a shorter run of Arabic digits (a year, a price)."""
    chinese = all(ch in CJK_DIGITS for ch in raw)
    return (len(digits) == 6 or (chinese and 4 <= len(digits) <= 6)) and (
        directory.get(digits) is not None)


def normalise_codes(text: str, directory: SymbolDirectory) -> str:
    """``text`` with each code written as heard replaced by its digits, when the directory
    lists it (length kept: the digits, then spaces)."""
    out = text
    for start, end, digits, _ in sorted(_spans(text), key=lambda s: -s[0]):
        raw = text[start:end]
        if digits == raw or len(digits) > end - start or not _listed(directory, raw, digits):
            continue
        out = out[:start] + digits.ljust(end - start) + out[end:]
    return out


def code_guesses(text: str, directory: SymbolDirectory, *, limit: int = 3) -> list[str]:
    """Listed six-digit codes a five- or seven-digit reading said digit by digit may be, a
    repeated digit heard once (``6.0.519`` -> 600519) or three times (``3-0-0-0-7-5-0`` ->
    300750); nothing for a reading the
    directory already lists, or when more than ``limit`` codes fit (too vague to ask)."""
    out: list[str] = []
    for _, _, digits, apart in _spans(text):
        if len(digits) not in (5, 7) or not apart or directory.get(digits) is not None:
            continue
        if len(digits) == 5:  # a doubled digit heard once
            fits = {digits[:i + 1] + digits[i:] for i in range(len(digits))}
        else:  # a doubled digit heard three times (3-0-0-0-7-5-0)
            fits = {digits[:i] + digits[i + 1:] for i in range(len(digits) - 1)
                    if digits[i] == digits[i + 1]}
        listed = sorted(code for code in fits if directory.get(code, "cn") is not None)
        if 0 < len(listed) <= limit:
            out += [c for c in listed if c not in out]
    return out


def repeated_syllable_guesses(text: str, directory: SymbolDirectory, *,
                              limit: int = 3) -> list[str]:
    """Listed six-digit codes a reading may be whose repeated digit was written as another
    character said as often (零零零八五八 heard as ``引引引858``, 零零 as ``灵灵``): two or three
    of one Chinese character that is no numeral, next to the rest of the code in digits. Which
    digit was said is unknown, so each is tried; nothing when none or more than ``limit`` fit."""
    from tools.symbols.normalize import is_cjk_char

    out: list[str] = []
    for start, end, digits, _ in _spans(text):
        k = 6 - len(digits)
        if k not in (2, 3):
            continue
        sides = ((text[max(0, start - k - 1):start], True), (text[end:end + k + 1], False))
        for near, before in sides:
            run = near[-k:] if before else near[:k]
            other = near[:-k] if before else near[k:]  # must not be a longer repeat
            if (len(run) != k or len(set(run)) != 1 or not is_cjk_char(run[0])
                    or run[0] in CJK_DIGITS or other == run[0]):
                continue
            fits = [d * k + digits if before else digits + d * k for d in "0123456789"]
            listed = [c for c in fits if directory.get(c, "cn") is not None]
            if 0 < len(listed) <= limit:
                out += [c for c in listed if c not in out]
    return out


def guessed_matches(texts: list[str], directory: SymbolDirectory) -> list[Match]:
    """:func:`code_guesses` of each of ``texts`` as matches to ask about (no span)."""
    out: dict[str, Match] = {}
    for text in texts:
        for code in [*code_guesses(text, directory),
                     *repeated_syllable_guesses(text, directory)]:
            entry = directory.get(code, "cn")
            if entry is not None and entry.code not in out:
                out[entry.code] = Match(code=entry.code, name=entry.name, market=entry.market,
                                        exchange=entry.exchange, symbol=entry.symbol,
                                        score=50.0, why="a repeated digit heard once or thrice")
    return list(out.values())
