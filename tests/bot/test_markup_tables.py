"""Pipe tables with Chinese and numbers: every platform shows the web page's rows and cells, in
order; what the web page does not take for a table, no platform does."""

from __future__ import annotations

import html
import re

import pytest

from adapters.web.render import markdown_html
from bot.markup import convert, text_width, to_plain, to_slack_mrkdwn, to_telegram_html

METRICS = """**关键指标：**由数据计算

| 指标 | 数值 |
|---|---:|
| 最新收盘价 | 1,500.00 CNY |
| **市盈率** | 25.3 倍 |
| ROE（2024年报） | 31.2% |
| 近1个月涨跌幅 | -3.4% |

以上数据仅供参考。"""

ROUND = """| 专家 | 操作 | 信心 | 来源数 |
|:---|:---:|---:|---:|
| 基本面专家 | 持有 | 0.62 | 2 |
| 风险专家 | 卖出 | 0.71 | 1 |
| NVDA `code` | [买入](https://x.io) | 0.50 | 10 |"""


def web_rows(md: str) -> list[list[str]]:
    page = markdown_html(md)
    rows = []
    for tr in re.findall(r"<tr>(.*?)</tr>", page, re.S):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)
        rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells])
    return rows


def block_rows(block: str) -> list[list[str]]:
    lines = [ln for ln in block.strip("\n").split("\n") if ln.strip()]
    assert set(lines[1].replace(" ", "")) == {"-"}  # the rule under the header
    return [re.split(r" {2,}", ln.strip()) for i, ln in enumerate(lines) if i != 1]


def telegram_block(md: str) -> str:
    (pre,) = re.findall(r"<pre>(.*?)</pre>", to_telegram_html(md), re.S)
    return html.unescape(pre)


def fenced_block(text: str) -> str:
    (block,) = re.findall(r"```\n(.*?)\n```", text, re.S)
    return block


def plain_block(md: str) -> str:
    text = to_plain(md)
    lines = text.split("\n")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("指标") or ln.startswith("专家"))
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[start:end])


PLATFORMS = {
    "telegram": telegram_block,
    "slack": lambda md: html.unescape(fenced_block(to_slack_mrkdwn(md))),
    "discord": lambda md: fenced_block(convert(md, "discord_md")),
    "plain": plain_block,
}


@pytest.mark.parametrize("md", [METRICS, ROUND], ids=["metrics", "round"])
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_every_platform_shows_the_web_pages_cells(md: str, platform: str) -> None:
    web = web_rows(md)
    assert len(web) >= 4 and all(len(r) == len(web[0]) for r in web)
    assert block_rows(PLATFORMS[platform](md)) == web


def test_numbers_line_up_on_the_right_and_chinese_counts_two_columns() -> None:
    lines = telegram_block(METRICS).split("\n")
    assert len({text_width(ln) for ln in lines if "%" in ln or "CNY" in ln or "倍" in ln}) == 1
    assert text_width("市盈率") == 6 and text_width("ROE") == 3


def test_the_text_around_a_table_and_its_bold_are_kept() -> None:
    tg = to_telegram_html(METRICS)
    assert tg.startswith("<b>关键指标：</b>由数据计算") and tg.endswith("以上数据仅供参考。")
    assert "|" not in tg


@pytest.mark.parametrize("md", [
    "| 指标 | 数值 |\n|---|\n| 市盈率 | 25.3 |",  # the delimiter row has too few cells
    "```\n| 指标 | 数值 |\n|---|---|\n| 市盈率 | 25.3 |\n```",  # inside a code block
    "市盈率 | 25.3 倍",  # a pipe in a sentence
])
def test_what_the_web_page_does_not_take_for_a_table_stays_as_it_is(md: str) -> None:
    assert "<table>" not in markdown_html(md)
    for out in (to_plain(md), to_telegram_html(md), to_slack_mrkdwn(md)):
        assert "市盈率 | 25.3" in out
    assert convert(md, "discord_md") == md
