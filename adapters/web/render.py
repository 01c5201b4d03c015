"""Text to safe HTML for the web page: Markdown through markdown-it-py with raw HTML escaped
(``html=False``), images off (an answer cannot make the browser fetch another site) and only
http(s)/mailto links; plain text escaped. Also the safe `Content-Disposition` of a download."""

from __future__ import annotations

import html
import re
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


def markdown_html(text: str) -> str:
    """Markdown as HTML in which nothing the text says can run (Chinese bold made
    renderable first: `core.cjk_markdown`)."""
    return str(_md.render(cjk_bold(text)))


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
