"""Text to safe HTML for the web page: Markdown through markdown-it-py with raw HTML escaped
(``html=False``), images off (an answer cannot make the browser fetch another site) and only
http(s)/mailto links; plain text escaped. Also the safe `Content-Disposition` of a download."""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt

from core.cjk_markdown import cjk_bold

_SAFE_SCHEMES = ("http://", "https://", "mailto:", "#", "/")

_md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False,
                               "breaks": True})  # a chat line break is a line break
_md.enable(["table", "strikethrough"])
_md.disable("image")


def _validate_link(url: str) -> bool:
    """Relative links and http(s)/mailto only: no `javascript:`, `data:`, `vbscript:` ..."""
    lowered = re.sub(r"[\x00-\x20]", "", url).lower()
    if ":" not in lowered.split("/", 1)[0]:
        return True  # relative
    return lowered.startswith(_SAFE_SCHEMES)


_md.validateLink = _validate_link  # type: ignore[method-assign]

# A cell that is a figure: a number with its sign, currency, thousands separators, percent or
# unit (1,234.56 · -3.2% · ¥12.5亿 · (0.8) · 25.3x), or a date. Such cells never wrap.
NUMERIC_CELL = re.compile(
    r"^(?:[+\-−±]?[¥$€£]?[(（]?[+\-−]?\d[\d,，]*(?:\.\d+)?[%％]?[)）]?"
    r"(?:万亿|万|亿|千|百万|[KMBkmb]|bn|元|倍|x|×|pp|bp)?"
    r"|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?)$")
_DELIMITER_ROW = re.compile(r"^\s*\|?\s*:?-+:?\s*(?:\|\s*:?-+:?\s*)*\|?\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


def is_numeric(cell: str) -> bool:
    return NUMERIC_CELL.match(re.sub(r"[\s*_`]", "", cell)) is not None


def _cell(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    inline = tokens[idx + 1] if idx + 1 < len(tokens) else None
    if inline is not None and inline.type == "inline" and is_numeric(inline.content):
        tokens[idx].attrJoin("class", "num")
    return str(self.renderToken(tokens, idx, options, env))


def _table_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    return '<div class="table-wrap">' + str(self.renderToken(tokens, idx, options, env))


def _table_close(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    return str(self.renderToken(tokens, idx, options, env)) + "</div>"


_md.add_render_rule("td_open", _cell)
_md.add_render_rule("th_open", _cell)
_md.add_render_rule("table_open", _table_open)
_md.add_render_rule("table_close", _table_close)


def end_tables(text: str) -> str:
    """A blank line after each table where the next line is not a row (it has no `|`): in
    Markdown a table runs on until a blank line, so the source line under a table would
    otherwise become its last row."""
    out: list[str] = []
    in_table = in_fence = False
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence:
            if in_table and line.strip() and "|" not in line:
                out.append("")
                in_table = False
            elif not line.strip():
                in_table = False
            elif (not in_table and "|" in line and n + 1 < len(lines)
                  and _DELIMITER_ROW.match(lines[n + 1]) and "-" in lines[n + 1]):
                in_table = True
        out.append(line)
    return "\n".join(out)


def markdown_html(text: str) -> str:
    """Markdown as HTML in which nothing the text says can run (Chinese bold made
    renderable first: `core.cjk_markdown`); tables end where their rows do and sit in a
    scrolling box, their figures marked `num` (kept on one line)."""
    return str(_md.render(end_tables(cjk_bold(text))))


def plain_html(text: str) -> str:
    """Plain text as HTML (the page keeps its line breaks with `white-space: pre-wrap`)."""
    return html.escape(text, quote=True)


def reply_html(text: str, markup: str) -> str:
    return markdown_html(text) if markup == "markdown" else f"<p class=plain>{plain_html(text)}</p>"


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
INLINE_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def safe_filename(name: str) -> str:
    """An ASCII file name with nothing a header or a file system could misread."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE_NAME.sub("_", base).strip("._") or "file"
    return cleaned[:120]


def content_disposition(name: str, *, inline: bool) -> str:
    """`attachment` (or `inline`) with an ASCII fallback and the UTF-8 name (RFC 6266)."""
    kind = "inline" if inline else "attachment"
    utf8 = quote(name.replace("\\", "/").rsplit("/", 1)[-1][:200] or "file", safe="")
    return f'{kind}; filename="{safe_filename(name)}"; filename*=UTF-8\'\'{utf8}'
