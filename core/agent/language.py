"""Which language a question is in, and whether an answer is written in it.

A question with Chinese characters is answered in Chinese; one with English words in English;
one with neither (a bare ticker, "600519") in the person's own language (`fallback`).
"""

from __future__ import annotations

import re

from core.words import Lang, norm

_CJK = re.compile(r"[\u4e00-\u9fff]")
# a word of three or more letters that is not an all-caps ticker
_WORD = re.compile(r"\b(?![A-Z]{1,5}\b)[A-Za-z]{3,}\b")


def _counts(text: str) -> tuple[int, int]:
    cjk = len(_CJK.findall(text))
    latin = sum(len(w) for w in _WORD.findall(text))
    return cjk, latin


def question_lang(text: str, fallback: str | None = "en") -> Lang:
    cjk, latin = _counts(text)
    if cjk:
        return "zh"
    return "en" if latin else norm(fallback)


def written_in(answer: str, lang: str) -> bool:
    """Whether `answer` is in `lang`, leniently: names, tickers and terms of the other language
    are normal in a financial answer. Chinese: at least one CJK character for every three
    letters of English words; English: not mostly CJK characters."""
    cjk, latin = _counts(answer)
    if norm(lang) == "zh":
        return (cjk > 0 and cjk * 3 >= latin) or (not cjk and not latin)
    return cjk <= max(latin, 8)
