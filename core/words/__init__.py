"""Everything Bullpen says to a person, in English and Chinese: one catalogue.

A key is namespaced, `"<namespace>.<name>"`. The words of a namespace live in the module
`core/words/<namespace>.py` as `WORDS: dict[str, dict[str, str]]`, each entry
`{"en": ..., "zh": ...}` with the same `{fields}` in both; `NAMESPACES` below lists them.
Every package says things through `t(key, lang, **values)` and no module branches on the
language itself: what differs between the languages is a catalogue entry. A key that is not
in the catalogue raises `KeyError` (the tests check that every key used exists, that the two
languages have the same keys and fields, and that every key is used), so a missing word fails
a test and not a user.

`core` so that every package reaches it (tools, debate, podcast, jobs, bot); `ict` stays pure
and gets its words from its callers.
"""

from __future__ import annotations

import importlib
import string
from collections.abc import Mapping
from functools import cache
from typing import Literal

Lang = Literal["en", "zh"]
LANGS: tuple[Lang, ...] = ("en", "zh")

# One module per namespace, in core/words/<name>.py.
NAMESPACES: tuple[str, ...] = ("labels", "chat", "phrase", "src", "ta", "ict", "age", "grammar",
                               "debate", "factors", "subs", "report", "plan",
                               "offline", "answer", "scripting", "admin",
                               "podcast", "report_pdf",
                               "startup", "voice", "web", "errors")


def norm(lang: str | None) -> Lang:
    """'zh' for any Chinese tag (zh, zh-CN, zh_Hans), else 'en'."""
    return "zh" if (lang or "").lower().startswith("zh") else "en"


def is_zh(lang: str | None) -> bool:
    return norm(lang) == "zh"


def detect_lang(text: str) -> Lang:
    """'zh' when the text has more CJK characters than Latin letters, else 'en'."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if cjk and cjk * 2 >= latin else "en"


@cache
def catalogue() -> Mapping[str, Mapping[str, str]]:
    """Every key of every namespace, `"ns.name" -> {"en": ..., "zh": ...}`."""
    out: dict[str, Mapping[str, str]] = {}
    for ns in NAMESPACES:
        words: Mapping[str, Mapping[str, str]] = importlib.import_module(
            f"core.words.{ns}").WORDS
        for name, entry in words.items():
            out[f"{ns}.{name}"] = entry
    return out


def has(key: str) -> bool:
    return key in catalogue()


def t(key: str, lang: str | None = "en", **values: object) -> str:
    """The catalogue's `key` in `lang`, its `{fields}` filled from `values`."""
    template = catalogue()[key][norm(lang)]
    return template.format(**values) if values else template


def fields(template: str) -> set[str]:
    """The `{field}` names a template fills (for the catalogue's own checks)."""
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}
