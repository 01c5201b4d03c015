"""The pages drawn on the server, without script: the sign-in hint, the sign-in confirmation,
a shared conversation (read-only) and the not-found page. Every text in them is escaped or
rendered by `render` (Markdown with raw HTML escaped)."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from adapters.web.render import markdown_html, plain_html
from core.ports import WebEntry, WebTranscript


def _page(title: str, body: str, *, noindex: bool = False) -> str:
    robots = '<meta name="robots" content="noindex, nofollow">' if noindex else ""
    return ("<!doctype html><html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width, initial-scale=1">'
            f"{robots}<title>{escape(title)}</title>"
            '<link rel=stylesheet href="/static/style.css"></head>'
            f'<body class=plainpage><main class=narrow>{body}</main></body></html>')


def signin_hint() -> str:
    return _page("Bullpen — sign in", (
        "<h1>Bullpen</h1>"
        "<p>To sign in, send <code>/web</code> to the Bullpen bot in any chat you use "
        "(Telegram, Discord, Slack, WeChat), or run <code>bullpen web login</code> on the "
        "machine that runs it, and open the link it gives you. A link works once, for 10 "
        "minutes.</p>"
        "<p lang=zh>登录：在任一聊天（Telegram、Discord、Slack、微信）中向 Bullpen 发送 "
        "<code>/web</code>，或在运行它的机器上执行 <code>bullpen web login</code>，然后打开"
        "收到的链接。链接仅可使用一次，10 分钟内有效。</p>"))


def login_confirm(token: str) -> str:
    """A button, not an automatic sign-in: a chat app fetching the link for a preview must
    not use it up."""
    action = f"/login/{escape(token, quote=True)}"
    return _page("Bullpen — sign in", (
        "<h1>Bullpen</h1>"
        f'<form method=post action="{action}">'
        "<p>Sign in to Bullpen in this browser? · 在此浏览器登录 Bullpen？</p>"
        "<button type=submit id=signin>Sign in · 登录</button></form>"))


def login_failed() -> str:
    return _page("Bullpen — link not valid", (
        "<h1>This sign-in link is used or expired</h1>"
        "<p>A link works once, for 10 minutes. Send <code>/web</code> to the bot again for "
        "a new one.</p>"
        "<p lang=zh>此登录链接已使用或已过期。请再次向机器人发送 <code>/web</code> 获取新链接。"
        "</p>"))


def not_found(*, noindex: bool = False) -> str:
    return _page("Not found", "<h1>Not found</h1><p>Nothing here. · 未找到。</p>",
                 noindex=noindex)


def _entry(entry: WebEntry, file_url: Callable[[str], str]) -> str:
    when = escape(entry.at.strftime("%Y-%m-%d %H:%M UTC"))
    if entry.role == "file":
        if entry.file is None:
            return ""
        url = escape(file_url(entry.file.id), quote=True)
        name = escape(entry.file.filename)
        if entry.file.kind == "image":
            body = (f'<a href="{url}"><img class=chart src="{url}" alt="{name}" '
                    f'loading=lazy></a>')
        else:
            body = f'<a class=download href="{url}" download>▤ {name}</a>'
        return f'<div class="msg file">{body}</div>'
    if entry.role == "user":
        return (f'<div class="msg user"><div class=meta>{when}</div>'
                f"<p class=plain>{plain_html(entry.text)}</p></div>")
    return (f'<div class="msg assistant"><div class=meta>{when}</div>'
            f"<div class=md>{markdown_html(entry.text)}</div></div>")


def shared_page(transcript: WebTranscript, file_url: Callable[[str], str]) -> str:
    conv = transcript.conversation
    title = conv.title or "Bullpen conversation"
    entries = "".join(_entry(e, file_url) for e in transcript.entries)
    return _page(title, (
        f"<h1>{escape(title)}</h1>"
        "<p class=note>A conversation shared from Bullpen (read-only). · "
        "分享自 Bullpen 的对话（只读）。Not investment advice. · 不构成投资建议。</p>"
        f'<section class="log shared">{entries}</section>'), noindex=True)
