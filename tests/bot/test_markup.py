"""Markdown conversion to each platform's dialect, and splitting."""

from __future__ import annotations

from bot.markup import split_text, to_plain, to_slack_mrkdwn, to_telegram_html


def test_telegram_html_escapes_text_and_keeps_formatting():
    html = to_telegram_html("**P/E < 20** & `a<b` [site](https://x.io/?a=1&b=2)")
    assert html == ('<b>P/E &lt; 20</b> &amp; <code>a&lt;b</code> '
                    '<a href="https://x.io/?a=1&amp;b=2">site</a>')


def test_slack_mrkdwn_escapes_outside_links():
    assert to_slack_mrkdwn("**P/E < 20** & [a>b](https://x.io)") == (
        "*P/E &lt; 20* &amp; <https://x.io|a&gt;b>")


def test_plain_drops_markup():
    assert to_plain("## Head\n**bold** [l](https://u)") == "Head\nbold l (https://u)"


def test_split_keeps_every_word_and_prefers_paragraphs():
    text = "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(30))
    parts = split_text(text, 500)
    assert all(len(p) <= 500 for p in parts)
    assert " ".join(parts).split() == text.split()
    assert all(p.startswith("Paragraph") for p in parts)
