"""Chinese bold renders alike everywhere: the web page and the console (CommonMark) agree with
the platform converters on which spans are bold."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console
from rich.markdown import Markdown

from adapters.web.render import markdown_html
from bot.markup import to_telegram_html
from core.cjk_markdown import cjk_bold

CASES = [
    ("**市场结构：**看跌", ["市场结构"]),
    ("看**（重要）**提示", ["重要"]),
    ("**结论：** 看涨", ["结论："]),
    ("**一**二**三：**四", ["一", "三"]),
    ("**趋势。**短期偏弱，**支撑：**10.50 元", ["趋势", "支撑"]),
    ("**NVDA:** up", ["NVDA:"]),
    ("**bold** plain", ["bold"]),
]


@pytest.mark.parametrize(("md", "bold"), CASES)
def test_the_web_page_and_telegram_bold_the_same_words(md: str, bold: list[str]) -> None:
    web = re.findall(r"<strong>(.*?)</strong>", markdown_html(md))
    telegram = re.findall(r"<b>(.*?)</b>", to_telegram_html(md))
    assert [w.strip("：:。（）") for w in web] == [b.strip("：:。（）") for b in bold]
    assert [t.strip("：:。（）") for t in telegram] == [w.strip("：:。（）") for w in web]
    assert "**" not in markdown_html(md)


def test_the_console_shows_no_asterisks() -> None:
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(Markdown(cjk_bold("**市场结构：**看跌")))
    assert out.getvalue().strip() == "市场结构：看跌"


def test_code_and_plain_asterisks_are_left_alone() -> None:
    for md in ["`**代码：**x`", "```\n**代码：**x\n```", "a ** b ** c", "2 * 3 = 6", "无加粗"]:
        assert cjk_bold(md) == md
