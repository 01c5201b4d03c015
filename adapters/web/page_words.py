"""The page's words, from the one catalogue (`core.words`, namespace "web"): served as
/static/words.js, a table the page's scripts read as `window.BULLPEN_WORDS[lang][name]`, with
`{field}` filled by the page as the catalogue's `t()` fills it."""

from __future__ import annotations

import json

from core.words import LANGS, catalogue

NAMESPACE = "web"


def page_words() -> dict[str, dict[str, str]]:
    """`{lang: {name: text}}` of every word in the namespace."""
    prefix = f"{NAMESPACE}."
    return {lang: {key.removeprefix(prefix): entry[lang]
                   for key, entry in catalogue().items() if key.startswith(prefix)}
            for lang in LANGS}


def words_js() -> str:
    table = json.dumps(page_words(), ensure_ascii=False, sort_keys=True)
    return f'"use strict";\nwindow.BULLPEN_WORDS = Object.freeze({table});\n'
