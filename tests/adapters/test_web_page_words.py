"""The page's words and tables: every word the page's scripts and HTML ask for is in the
catalogue's "web" namespace (served as /static/words.js, built from it), every word there is
used, every tool the agent can call has a friendly label and every label names a real tool;
Markdown tables end before the source line under them and mark their figures to stay on one
line."""

from __future__ import annotations

import json
import re
from importlib import resources

from adapters.web.page_words import page_words, words_js
from adapters.web.render import is_numeric, markdown_html

STATIC = resources.files("adapters.web") / "static"
ASSETS = {name: (STATIC / name).read_text(encoding="utf-8")
          for name in ("app.js", "admin.js", "index.html", "admin.html")}
SERVER = (resources.files("adapters.web") / "adapter.py").read_text(encoding="utf-8")
ASKED = [re.compile(p) for p in (r'\bt\(\s*"(\w+)"', r'copyButton\(\s*"(\w+)"',
                                 r'data-t[pa]?="(\w+)"', r'"(suggest_\d+)"')]


def asked() -> set[str]:
    return {m for text in ASSETS.values() for p in ASKED for m in p.findall(text)}


def test_every_word_the_page_asks_for_is_in_the_catalogue() -> None:
    words = page_words()
    assert set(words["en"]) == set(words["zh"])
    missing = sorted(asked() - set(words["en"]))
    assert not missing, missing
    assert len(asked()) > 40  # the patterns do find the page's words


def test_every_word_of_the_namespace_is_used() -> None:
    everything = "\n".join([*ASSETS.values(), SERVER])
    unused = [k for k in page_words()["en"]
              if not k.startswith("tool_") and f'"{k}"' not in everything]
    assert not unused, unused


def test_every_tool_has_a_friendly_label_and_every_label_a_tool() -> None:
    import importlib

    from tools import build_registry

    for module in ("tools.ta_script", "tools.strategies"):  # offered where TA is set up
        importlib.import_module(module)
    names = {spec.name for spec in build_registry().specs()}
    labels = {k.removeprefix("tool_") for k in page_words()["en"] if k.startswith("tool_")}
    assert names - labels == set()
    assert labels - names == {"other"}


def test_words_js_is_the_catalogue_as_a_frozen_table() -> None:
    js = words_js()
    table = json.loads(js.split("Object.freeze(", 1)[1].rsplit(");", 1)[0])
    assert table == page_words()
    assert table["zh"]["new_chat"] == "新对话" and table["en"]["new_chat"] == "New chat"


def test_chinese_words_have_no_stray_english() -> None:
    allowed = {"RSI", "MACD", "ICT", "DCF", "SEC", "SQL", "Token", "USD", "A", "Bullpen",
               "NVDA", "AAPL", "F", "P", "E", "B"}  # 13F, P/E
    for key, text in page_words()["zh"].items():
        words = set(re.findall(r"[A-Za-z]+", re.sub(r"\{\w+\}", "", text)))
        assert words <= allowed, (key, words - allowed)


def test_a_table_ends_before_its_source_line_and_keeps_figures_whole() -> None:
    html = markdown_html("| 代码 | 收盘 | 涨跌 |\n|---|---|---|\n| 600000 | 1,234.56 | -3.2% |\n"
                         "| NVDA | ¥12.5亿 | (0.8) |\n来源：Tushare，2025-01-02")
    table, after = html.split("</table>")
    assert "来源" not in table and "<p>来源：Tushare，2025-01-02</p>" in after
    assert html.startswith('<div class="table-wrap"><table>')
    assert table.count('<td class="num">') == 5  # all but "NVDA"
    assert "<td>NVDA</td>" in table


def test_a_table_inside_a_code_block_is_left_alone() -> None:
    html = markdown_html("```\n| a |\n|---|\nnot a row\n```")
    assert "not a row" in html and "<table" not in html and "\n\n" not in html.split(
        "<code>")[1]


def test_what_counts_as_a_figure() -> None:
    for figure in ("1,234.56", "-3.2%", "+0.8%", "¥12.5亿", "(0.8)", "25.3x", "2025-01-02",
                   "**12.5**", "600000", "3.5 万"):
        assert is_numeric(figure), figure
    for text in ("NVDA", "浦发银行", "Tushare 2025", "", "1.2.3.4"):
        assert not is_numeric(text), text
