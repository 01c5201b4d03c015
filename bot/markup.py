"""Markdown from the agent, converted to each platform's dialect, and split to length.

Pipe tables: the web page and the console draw them as tables; Telegram, Slack, Discord and
plain text cannot, so a table becomes its rows laid out in columns in a monospace block (CJK
characters count two columns), with the same cells in the same order as the web page's table.
What is a table follows markdown-it's GFM rule: a header row, then a delimiter row with as many
cells (`---`, `:---`, `---:`, `:---:`), then rows until a blank line or a line without a pipe.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable

from core.types import Markup

_CODE_BLOCK = re.compile(r"```(?:[\w+-]*)\n?(.*?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_ITALIC = re.compile(r"(?<![\*\w])\*(?!\s)([^*\n]+?)\*(?!\*)|(?<![_\w])_(?!\s)([^_\n]+?)_(?![_\w])")
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)


_DELIM_CELL = re.compile(r"^:?-+:?$")
_PIPE = re.compile(r"(?<!\\)\|")


def _cells(line: str) -> list[str]:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return [c.strip().replace("\\|", "|") for c in _PIPE.split(row)]


def _delimiters(line: str, columns: int) -> list[str] | None:
    """The alignments of a delimiter row with `columns` cells ("<", ">", "^"), or None."""
    if "-" not in line:
        return None
    cells = _cells(line)
    if len(cells) != columns or not all(_DELIM_CELL.match(c) for c in cells):
        return None
    return [("^" if c.endswith(":") else "<") if c.startswith(":") else
            (">" if c.endswith(":") else "<") for c in cells]


def _cell_text(cell: str) -> str:
    """A cell's words without inline markup (a monospace block shows no bold or links)."""
    text = _INLINE_CODE.sub(lambda m: m.group(1), cell)
    text = _LINK.sub(lambda m: m.group(1), text)
    return _BOLD.sub(lambda m: m.group(1) or m.group(2), text)


def text_width(text: str) -> int:
    """Columns `text` takes in a monospace font: wide and full-width characters take two."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _layout(rows: list[list[str]], aligns: list[str]) -> str:
    widths = [max(text_width(r[i]) for r in rows) for i in range(len(aligns))]

    def pad(cell: str, width: int, align: str) -> str:
        room = width - text_width(cell)
        if align == ">":
            return " " * room + cell
        if align == "^":
            return " " * (room // 2) + cell + " " * (room - room // 2)
        return cell + " " * room

    lines = ["  ".join(pad(c, w, a) for c, w, a in zip(r, widths, aligns, strict=True)).rstrip()
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def tables_as_text(md: str, block: Callable[[str], str]) -> str:
    """Every pipe table of `md` (outside code blocks) replaced by `block(its laid-out text)`."""
    lines = md.split("\n")
    out: list[str] = []
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            fenced = not fenced
        head = _cells(line) if not fenced and "|" in line and i + 1 < len(lines) else []
        aligns = _delimiters(lines[i + 1], len(head)) if head else None
        if aligns is None:
            out.append(line)
            i += 1
            continue
        rows = [[_cell_text(c) for c in head]]
        i += 2
        while i < len(lines) and lines[i].strip() and "|" in lines[i]:
            cells = ([_cell_text(c) for c in _cells(lines[i])] + [""] * len(head))[:len(head)]
            rows.append(cells)
            i += 1
        out.append(block(_layout(rows, aligns)))
    return "\n".join(out)


def to_telegram_html(md: str) -> str:
    """Markdown -> the HTML subset Telegram accepts, every text part escaped."""
    stash: list[str] = []

    def keep(fragment: str) -> str:
        stash.append(fragment)
        return f"\x00{len(stash) - 1}\x00"

    text = _CODE_BLOCK.sub(lambda m: keep(f"<pre>{html.escape(m.group(1).rstrip())}</pre>"), md)
    text = tables_as_text(text, lambda table: keep(f"<pre>{html.escape(table)}</pre>"))
    text = _INLINE_CODE.sub(lambda m: keep(f"<code>{html.escape(m.group(1))}</code>"), text)
    text = _LINK.sub(lambda m: keep(
        f'<a href="{html.escape(m.group(2), quote=True)}">{html.escape(m.group(1))}</a>'), text)
    text = html.escape(text, quote=False)
    text = _HEADING.sub(lambda m: f"<b>{m.group(1)}</b>", text)
    text = _BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", text)
    text = _ITALIC.sub(lambda m: f"<i>{m.group(1) or m.group(2)}</i>", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: stash[int(m.group(1))], text)


def to_plain(md: str) -> str:
    text = tables_as_text(md, lambda table: table)
    text = _CODE_BLOCK.sub(lambda m: m.group(1), text)
    text = _INLINE_CODE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text)
    text = _HEADING.sub(lambda m: m.group(1), text)
    text = _BOLD.sub(lambda m: m.group(1) or m.group(2), text)
    return text


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_slack_mrkdwn(md: str) -> str:
    """Markdown -> Slack mrkdwn; `&<>` escaped everywhere but in the links it builds."""
    links: list[str] = []

    def keep(m: re.Match[str]) -> str:
        links.append(f"<{m.group(2)}|{_slack_escape(m.group(1))}>")
        return f"\x00{len(links) - 1}\x00"

    def table(laid_out: str) -> str:
        links.append(f"```\n{_slack_escape(laid_out)}\n```")
        return f"\x00{len(links) - 1}\x00"

    text = _slack_escape(_LINK.sub(keep, tables_as_text(md, table)))
    text = _HEADING.sub(lambda m: f"*{m.group(1)}*", text)
    text = _BOLD.sub(lambda m: f"*{m.group(1) or m.group(2)}*", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: links[int(m.group(1))], text)


def convert(md: str, markup: Markup) -> str:
    if markup == "telegram_html":
        return to_telegram_html(md)
    if markup == "slack_mrkdwn":
        return to_slack_mrkdwn(md)
    if markup == "plain":
        return to_plain(md)
    if markup == "discord_md":  # Discord's Markdown has no tables
        return tables_as_text(md, lambda table: f"```\n{table}\n```")
    return md  # rich draws Markdown tables itself


def split_text(text: str, limit: int) -> list[str]:
    """Split at paragraph, then line, then sentence, then word boundaries; never lose text."""
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = -1
        for sep in ("\n\n", "\n", ". ", "。", "! ", "? ", " "):
            idx = window.rfind(sep)
            if idx >= limit // 3:
                cut = idx + len(sep)
                break
        if cut <= 0:
            cut = limit
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip("\n")
    if rest.strip():
        parts.append(rest)
    return [p for p in parts if p]
