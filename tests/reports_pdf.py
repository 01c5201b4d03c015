"""Reading a rendered report PDF back as a reader would (pypdfium2): every page rasterised to a PNG
under `tests/artifacts/reports/` (run outputs, gitignored), its text, and whether a heading is
the last thing drawn on a page."""

from __future__ import annotations

import re
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "reports"
HEADING_PT = 12.0  # headings are set at 13 pt and more, everything else at 11 pt or less
TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]*)?>")
CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def rasterise(data: bytes, name: str, scale: float = 1.0) -> list[Path]:
    """Every page as `<name>-p<n>.png`; the paths."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    doc = pdfium.PdfDocument(data)
    out = []
    for i in range(len(doc)):
        path = ARTIFACTS / f"{name}-p{i + 1}.png"
        doc[i].render(scale=scale).to_pil().save(path)
        out.append(path)
    return out


def pdf_text(data: bytes) -> str:
    doc = pdfium.PdfDocument(data)
    return "\n".join(doc[i].get_textpage().get_text_range() for i in range(len(doc)))


def pages_ending_in_a_heading(data: bytes) -> list[tuple[int, str]]:
    """(page, heading text) for every page but the last whose lowest drawn text or image is
    heading-sized text: a heading left alone at the foot of a page."""
    doc = pdfium.PdfDocument(data)
    bad = []
    for p in range(len(doc) - 1):
        page = doc[p]
        textpage = page.get_textpage()
        lowest: tuple[float, str] = (float("inf"), "")
        for i in range(textpage.count_chars()):
            ch = textpage.get_text_range(i, 1)
            if not ch.strip():
                continue
            bottom = textpage.get_charbox(i)[1]
            size = pdfium_c.FPDFText_GetFontSize(textpage.raw, i)
            if bottom < lowest[0] - 0.5:
                lowest = (bottom, "heading" if size > HEADING_PT else "text")
        for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]):
            bottom = obj.get_bounds()[1]
            if bottom < lowest[0] - 0.5:
                lowest = (bottom, "image")
        if lowest[1] == "heading":
            line = [ln for ln in textpage.get_text_range().splitlines() if ln.strip()][-1]
            bad.append((p + 1, line))
    return bad
