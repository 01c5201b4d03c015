"""Bold that CommonMark renders in Chinese text.

CommonMark closes `**` only when it is "right-flanking": a `**` right after punctuation must be
followed by a space or more punctuation. Chinese puts neither after its full-width colon, so
`**市场结构：**看跌` prints its asterisks in every CommonMark renderer (markdown-it-py on the
web page and the share page, rich in the console), while the platform converters in
`bot/markup.py` make it bold: the two disagreed. `cjk_bold()` moves punctuation at the inner
edge of such a span outside it (`**市场结构**：看跌`), which every renderer reads alike and which
changes nothing a reader sees but the weight of one mark. Code spans and blocks are left alone.
"""

from __future__ import annotations

import re
import unicodedata

_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_BOLD = re.compile(r"\*\*(?=\S)([^\n]+?)(?<=\S)\*\*")


def _punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _word(ch: str) -> bool:
    """Neither space nor punctuation: a character that makes a flanking rule fail."""
    return bool(ch) and not ch.isspace() and not _punct(ch)


def _fix_line(text: str) -> str:
    def fix(m: re.Match[str]) -> str:
        inner, start, end = m.group(1), m.start(), m.end()
        before = text[start - 1] if start > 0 else ""
        after = text[end] if end < len(text) else ""
        lead = trail = ""
        if _word(after):  # `…：**看` cannot close: the closing punctuation goes outside
            while inner and _punct(inner[-1]) and inner[-1] not in "*_`":
                trail, inner = inner[-1] + trail, inner[:-1]
        if _word(before):  # `看**（…` cannot open: the opening punctuation goes outside
            while inner and _punct(inner[0]) and inner[0] not in "*_`":
                lead, inner = lead + inner[0], inner[1:]
        if not inner.strip():
            return m.group(0)
        return f"{lead}**{inner}**{trail}"

    return _BOLD.sub(fix, text)


def cjk_bold(md: str) -> str:
    """`md` with every `**` span a CommonMark renderer would leave literal made renderable."""
    if "**" not in md:
        return md
    out, last = [], 0
    for code in _CODE.finditer(md):
        out.append(_fix_line(md[last:code.start()]))
        out.append(code.group(0))
        last = code.end()
    out.append(_fix_line(md[last:]))
    return "".join(out)
