"""Markdown from the agent, converted to each platform's dialect, and split to length."""

from __future__ import annotations

import html
import re

from core.types import Markup

_CODE_BLOCK = re.compile(r"```(?:[\w+-]*)\n?(.*?)```", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*|__(.+?)__")
_ITALIC = re.compile(r"(?<![\*\w])\*(?!\s)([^*\n]+?)\*(?!\*)|(?<![_\w])_(?!\s)([^_\n]+?)_(?![_\w])")
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def to_telegram_html(md: str) -> str:
    """Markdown -> the HTML subset Telegram accepts, every text part escaped."""
    stash: list[str] = []

    def keep(fragment: str) -> str:
        stash.append(fragment)
        return f"\x00{len(stash) - 1}\x00"

    text = _CODE_BLOCK.sub(lambda m: keep(f"<pre>{html.escape(m.group(1).rstrip())}</pre>"), md)
    text = _INLINE_CODE.sub(lambda m: keep(f"<code>{html.escape(m.group(1))}</code>"), text)
    text = _LINK.sub(lambda m: keep(
        f'<a href="{html.escape(m.group(2), quote=True)}">{html.escape(m.group(1))}</a>'), text)
    text = html.escape(text, quote=False)
    text = _HEADING.sub(lambda m: f"<b>{m.group(1)}</b>", text)
    text = _BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", text)
    text = _ITALIC.sub(lambda m: f"<i>{m.group(1) or m.group(2)}</i>", text)
    return re.sub(r"\x00(\d+)\x00", lambda m: stash[int(m.group(1))], text)


def to_plain(md: str) -> str:
    text = _CODE_BLOCK.sub(lambda m: m.group(1), md)
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

    text = _slack_escape(_LINK.sub(keep, md))
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
    return md  # discord_md and rich take Markdown as it is


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
