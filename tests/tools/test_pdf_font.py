"""`tools.pdf.new_fpdf` parses the CJK font once per process: every document it makes is the
one fpdf2's own `add_font` makes, byte for byte (with the font's bounding box kept, as
`tools.pdf` keeps it), and no document's glyphs reach the next. The font has one weight and is
embedded once: bold is drawn, not a second copy of the same glyphs."""

from __future__ import annotations

from datetime import UTC, datetime

from fpdf import FPDF

from tools.fonts import cjk_font_path
from tools.pdf import FONT, new_fpdf


def _add_font_fpdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.add_font(FONT, fname=cjk_font_path())
    for font in pdf.fonts.values():  # as tools.pdf opens it: the subset keeps the font's bbox
        font.ttfont.recalcBBoxes = False
    return pdf


def _written(pdf: FPDF, text: str) -> bytes:
    pdf.set_creation_date(datetime(2026, 1, 1, tzinfo=UTC))
    pdf.add_page()
    pdf.set_font(FONT, "", 14)
    pdf.multi_cell(0, 6, f"标题 {text[:6]}", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font(FONT, "", 10)
    pdf.multi_cell(0, 5, text, new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def test_documents_on_the_parsed_font_are_those_add_font_makes() -> None:
    # two documents in a row, with different glyphs: the second would carry the first's
    # glyphs (or a font file the first one's subsetting cut down) if any state were shared
    for text in ("贵州茅台 Moutai: 估值合理，但增长放缓。", "完全不同的字 NVDA 英伟达 xyz 0123"):
        assert _written(new_fpdf(), text) == _written(_add_font_fpdf(), text)


def test_a_document_with_bold_embeds_the_font_once() -> None:
    from tools.pdf import Document

    doc = Document("一份报告")
    doc.heading("标题：贵州茅台")
    doc.para("正文，估值合理。", lead="结论：")
    doc.table([["代码", "收盘"], ["600519", "1,500.00"]], [30, 30])
    out = doc.output()
    assert out.count(b"/FontFile") == 1, out.count(b"/FontFile")
