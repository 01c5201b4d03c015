"""Catalogue words chosen at run time: a name through a key prefix (`word`), the English
phrases the tools and the data layer write said in the reader's language (`localize`), and a
data source's label (`source_label`). The words themselves live in `core.words`."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import Any

from core.words import catalogue, is_zh, t


@lru_cache(maxsize=32)
def _keys(prefix: str) -> tuple[str, ...]:
    """The catalogue's keys under `prefix`; a prefix with none is a mistake (a key renamed,
    a prefix misspelt), so it raises rather than leave every word in English."""
    keys = tuple(k for k in catalogue() if k.startswith(prefix))
    if not keys:
        raise KeyError(f"no catalogue key starts with {prefix!r}")
    return keys


def word(prefix: str, name: str, lang: str) -> str:
    """`name` said in `lang` through the catalogue key `prefix + name`; `name` itself when the
    catalogue has no such key (a field or interval it does not know yet)."""
    key = prefix + name
    return t(key, lang) if key in _keys(prefix) else name


@lru_cache(maxsize=64)
def words_of(prefix: str, lang: str) -> Mapping[str, str]:
    """The templates under `prefix` in `lang`, by the rest of their key: for a module that
    writes many lines of one namespace (`w = words_of("report.", lang)`, `w["title"]`)."""
    return MappingProxyType({k.removeprefix(prefix): t(k, lang) for k in _keys(prefix)})


def listing(items: Sequence[str], lang: str) -> str:
    """"a", "a and b", "a, b and c"; in Chinese "a、b、c"."""
    if len(items) < 2:
        return "".join(items)
    return (t("grammar.list_sep", lang).join(items[:-1]) + t("grammar.list_last", lang)
            + items[-1])


def _pattern(template: str) -> re.Pattern[str]:
    """An English template as a pattern: each {field} matches the shortest text (or, at the
    template's end, the text up to the next separator)."""
    parts = re.split(r"\{(\w+)\}", template)
    last = len(parts) - 2 if template.endswith("}") else -1
    out = "".join(re.escape(p) if i % 2 == 0 else
                  (rf"(?P<{p}>[^,;)\s]+)" if i == last else rf"(?P<{p}>[^;()\s]+?)")
                  for i, p in enumerate(parts))
    # a phrase that starts or ends in a Latin letter is a whole word ("up" is not in "upper")
    head = r"(?<![A-Za-z0-9_])" if template[:1].isalnum() and template.isascii() else ""
    tail = r"(?![A-Za-z_])" if template[-1:].isalpha() and template.isascii() else ""
    return re.compile(head + out + tail)


@lru_cache(maxsize=8)
def _phrases(prefix: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    words = catalogue()
    keys = sorted(_keys(prefix), key=lambda k: -len(words[k]["en"]))
    return tuple((_pattern(words[k]["en"]), words[k]["zh"]) for k in keys)


def _filler(template: str) -> Callable[[re.Match[str]], str]:
    def fill(m: re.Match[str]) -> str:
        return template.format(**m.groupdict())
    return fill


def localize(text: str, lang: str, prefix: str = "phrase.") -> str:
    """English phrases the tools and the data layer write (for the model and the logs), said
    in `lang`: every catalogue key under `prefix` whose English is found in `text` is
    replaced by its Chinese, longest first, then the list punctuation is made Chinese."""
    phrases = _phrases(prefix)  # first: a wrong prefix fails in English too
    if not is_zh(lang) or not text:
        return text
    for pattern, zh in phrases:
        text = pattern.sub(_filler(zh), text)
    return text.replace(", ", "，").replace("; ", "；")


def source_label(src: Any, lang: str) -> str:
    """A tool result's `DataSource` in `lang`: its provider, what was read and its date."""
    if not hasattr(src, "provider"):
        return str(src)
    when = t("src.as_of", lang, day=src.as_of.isoformat()) if src.as_of else ""
    provider = word("src.provider_", src.provider, lang)
    if not src.dataset:
        return provider + when
    return t("src.label", lang, provider=provider, dataset=localize(src.dataset, lang),
             when=when)


# the arguments that name an instrument, first found first (the web page's `SYMBOL_ARGS`)
_SYMBOL_ARGS = ("symbol", "code", "ticker", "query", "name")


def tool_label(name: str, args: Mapping[str, Any], lang: str, english: str) -> str:
    """A tool call's progress line in `lang`: the catalogue's `web.tool_<name>` (every tool has
    one; `{symbol}` filled from the first argument naming an instrument) for a Chinese reader,
    the tool's own `english` label otherwise."""
    if not is_zh(lang):
        return english
    key = f"web.tool_{name}"
    template = catalogue().get(key, {}).get("zh")
    if template is None:
        return t("web.tool_other", lang)
    if "{symbol}" not in template:
        return template
    symbol = next((v for a in _SYMBOL_ARGS if isinstance(v := args.get(a), str) and v), None)
    return t(key, lang, symbol=symbol) if symbol else t("web.tool_other", lang)

