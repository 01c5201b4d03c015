"""The podcast script PDF reads as finished in the listener's language: every page rasterised
(to tests/artifacts/reports/), sources as small text and never a printed tag, no English in the
Chinese script's own words and no Chinese in the English one, no heading alone at a page foot."""

from __future__ import annotations

from bot.eval.score import english_words
from core.types import Reply
from podcast import PodcastResult, produce_podcast, render_markdown
from podcast.items import podcast_items
from podcast.render import render_pdf, ticker_names
from tests.reports_pdf import CJK, TAG, pages_ending_in_a_heading, pdf_text, rasterise


def said(result: PodcastResult) -> str:
    """What the script's turns themselves say (the writer's sentences), not the document's."""
    return "\n".join(t.text for t in result.script.scripts)


async def test_a_chinese_podcast_pdf_is_chinese_and_prints_no_markup() -> None:
    result = await produce_podcast(["浦发银行", "NVDA"], lang="zh")
    pdf = render_pdf(result, "zh")
    pages = rasterise(pdf, "podcast-zh")
    assert pages and all(p.stat().st_size > 10_000 for p in pages)
    text = pdf_text(pdf)
    assert "每日播客" in text and "开场" in text and "结尾" in text
    assert "浦发银行（600000）" in text  # a chapter title a person can read
    assert "来源：" in text and not TAG.search(text) and "sub>" not in text
    own = [w for w in english_words(text) if w not in english_words(said(result))]
    assert own == [], own
    assert pages_ending_in_a_heading(pdf) == []
    md = render_markdown(result.script, "zh", ticker_names(result, "zh"))
    assert "<sub>" not in md and "**主持人**：" in md and "## 浦发银行（600000）" in md


async def test_the_offline_writer_says_nothing_in_english_under_zh() -> None:
    """The PDF text, the chat summary and every line shown while the episode was made."""
    shown: list[str] = []
    result = await produce_podcast(["浦发银行", "NVDA"], lang="zh",
                                   emit=lambda e: shown.append(getattr(e, "text", "")))
    assert shown
    summary = next(i.text for i in await podcast_items(result, lang="zh")
                   if isinstance(i, Reply))
    for text in (pdf_text(render_pdf(result, "zh")), summary, *shown):
        assert english_words(text) == [], text


async def test_an_english_podcast_pdf_has_no_chinese() -> None:
    result = await produce_podcast(["NVDA", "AAPL"], lang="en")
    pdf = render_pdf(result, "en")
    rasterise(pdf, "podcast-en")
    text = pdf_text(pdf)
    assert "Bullpen daily podcast" in text and "Opening" in text and "Sources:" in text
    assert not TAG.search(text)
    assert not CJK.search(text), CJK.findall(text)[:20]
    assert pages_ending_in_a_heading(pdf) == []
