"""Reports: the PDF opens and renders (pypdfium2), with the Chinese name and the conclusion."""

from __future__ import annotations

import pypdfium2 as pdfium

from debate.report import render_markdown
from tests.debate.helpers import SeatFake, make_mode, moderator, produce, reply, router

CONCLUSION = "维持持有，等待更好的价位。"


def _pdf_text(data: bytes) -> tuple[str, pdfium.PdfDocument]:
    doc = pdfium.PdfDocument(data)
    text = "".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))
    return text, doc


async def test_pdf_has_the_chinese_name_the_conclusion_and_renders(registry):
    scripts = {e: [reply("HOLD", 0.6, text="估值合理，但增长放缓。")] * 2
               for e in ("fundamental", "risk", "growth", "sentiment")}
    scripts["moderator"] = [moderator("stop", "HOLD", CONCLUSION)]
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        outcome, _, _ = await produce(make_mode(llm, registry), "茅台", question="值得买吗",
                                      lang="zh")
        await llm.aclose()
    assert outcome.artifact.meta.ticker == "600519"
    assert outcome.pdf is not None and outcome.pdf.startswith(b"%PDF")
    text, doc = _pdf_text(outcome.pdf)
    assert "贵州茅台" in text and "600519" in text
    assert CONCLUSION in text and "持有" in text
    assert "关键指标" in text and "第 2 轮" in text and "估值合理" in text
    page = doc[0].render(scale=1.0).to_pil()
    assert page.size[0] > 500 and page.size[1] > 700
    colours = page.convert("RGB").getcolors(maxcolors=1_000_000)
    assert colours is not None and len(colours) > 50  # text, tables and the chart drew
    md = outcome.markdown
    assert md.startswith("# 辩论报告：贵州茅台 (600519)")
    for section in ("## 结论", "## 关键指标", "## 第 1 轮", "## 第 2 轮", "## 来源", "## 用量"):
        assert section in md
    assert CONCLUSION in md


async def test_bull_bear_pdf_and_markdown_offline(registry):
    outcome, _, _ = await produce(make_mode(None, registry), "600519", panel="bull_bear")
    art = outcome.artifact
    text, doc = _pdf_text(outcome.pdf)
    assert "贵州茅台" in text and "Verdict" in text and art.bull_bear.verdict.verdict in text
    assert "Offline experts" in text
    doc[0].render(scale=0.5).to_pil()
    md = render_markdown(art)
    assert "## Hypothesis" in md and "## Verdict" in md and "## Openings" in md
