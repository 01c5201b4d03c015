"""PDF documents in the CJK font the charts use (fpdf2), laid out to read as finished:

- paragraphs are left-aligned: justified lines of mixed Chinese and Latin text gape, because
  fpdf2 can only stretch the spaces between the Latin words;
- a heading is kept with the start of what follows it (`keep`): when the heading and that much
  of the next block do not fit above the bottom margin, the heading opens the next page, so a
  heading never ends a page (a chart under its heading moves with it);
- a source note is real small grey text, never a markup tag.

The font file (16 MB, 65k glyphs) is parsed once per process, not once per document and style
(`new_fpdf`): that parse was half a second of every report's CPU.

Pure and synchronous: callers run it in a worker thread.
"""

from __future__ import annotations

import copy
import functools
import io
import struct
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from fontTools import ttLib
from fpdf import FPDF
from fpdf.fonts import FontFace, SubsetMap, TTFFont

from tools.fonts import cjk_font_path

FONT = "cjk"
LINE = 5.2  # mm per line of body text
ROW = 5.5  # mm per table row line
MARGIN = 15  # mm, bottom margin where the page breaks
TABLE_KEEP = 4 * ROW  # a heading keeps the table's header and its first rows
PARA_KEEP = 2 * LINE  # ... or the first two lines of a paragraph


# Tables of the CJK font a PDF never carries, taken out before fpdf2 subsets it: only the CFF
# outlines are embedded (tests/tools/test_pdf_font.py: the same bytes as `add_font` writes), but
# the subsetter decompiled and cut the vertical metrics (65k entries) and the layout tables of
# every document first. A Chinese page: 0.39 -> 0.29 s of CPU (best of 16 documents).
UNUSED_TABLES = ("vmtx", "vhea", "VORG", "GSUB", "GPOS", "BASE", "DSIG")


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height in pixels from a PNG header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    width, height = struct.unpack(">II", png[16:24])
    return int(width), int(height)


@functools.cache
def _parsed_cjk() -> TTFFont:
    """The CJK font as fpdf2 reads it (metrics, cmap, glyph ids): read-only once made."""
    return TTFFont(FPDF(), Path(cjk_font_path()), FONT, "")


def _add_cjk(pdf: FPDF) -> None:
    """What `pdf.add_font(FONT, fname=cjk_font_path())` does, from the parsed font (its key and
    style are the parsed one's):
    the metrics, cmap and glyph ids are shared (fpdf2 only reads them once the font is made);
    what a document changes is its own: the glyphs it uses, the font file it subsets in place
    when written (opened lazily: the table directory only), its descriptor object. The subset
    keeps the whole font's bounding box (`recalcBBoxes=False`): recomputing it from every
    glyph's outline was a third of a Chinese PDF's CPU (1.6 s -> 1.1 s a debate report)."""
    parsed = _parsed_cjk()
    font = copy.copy(parsed)
    font.i = len(pdf.fonts) + 1
    font.ttfont = ttLib.TTFont(parsed.ttffile, recalcTimestamp=False, recalcBBoxes=False,
                               lazy=True)
    for tag in UNUSED_TABLES:
        if tag in font.ttfont:
            del font.ttfont[tag]
    font.desc = copy.copy(parsed.desc)
    font.missing_glyphs = []
    font.biggest_size_pt = 0
    font._hbfont = None
    font.subset = SubsetMap(font)
    pdf.fonts[font.fontkey] = font
    if font.is_cff and font.is_cid_keyed:
        pdf._set_min_pdf_version("1.6")  # as add_font does for this font


def new_fpdf() -> FPDF:
    """An A4 FPDF with the CJK font as `cjk`, parsed once per process. The font has one
    weight, so it is registered once: bold is drawn by outlining its glyphs (`Document._bold`).
    A second, bold, registration of the same file gave the same glyphs and a second subset
    of it in every document, and the subsets are most of a Chinese PDF's CPU."""
    pdf = FPDF(format="A4")
    _add_cjk(pdf)
    return pdf


class Document:
    """One A4 document: `heading`, `para`, `note`, `table`, `image`, then `output`."""

    def __init__(self, title: str) -> None:
        pdf = new_fpdf()
        pdf.set_auto_page_break(auto=True, margin=MARGIN)
        pdf.set_title(title)
        pdf.add_page()
        self.pdf = pdf

    @contextmanager
    def _bold(self, size: float) -> Iterator[None]:
        """Bold from the one weight the CJK font ships: each glyph is also outlined. A local
        graphics context (q ... Q), so the outline mode cannot leak into later text."""
        self.pdf.set_font(FONT, "", size)
        with self.pdf.local_context(text_mode="FILL_STROKE", line_width=size * 0.012):
            yield

    def image_height(self, png: bytes) -> float:
        """The height in mm of `png` drawn across the page width."""
        width, height = png_size(png)
        return float(self.pdf.epw) * height / width

    def heading(self, text: str, size: int = 13, *, keep: float = PARA_KEEP) -> None:
        """A bold heading that stays on the page of the first `keep` mm of what follows."""
        pdf = self.pdf
        line = size * 0.55
        with self._bold(size):
            lines = pdf.multi_cell(0, line, text, align="L", dry_run=True, output="LINES")
            needed = 2 + line * max(1, len(lines) if isinstance(lines, list) else 1) + keep
            if pdf.get_y() > pdf.t_margin + 1 and pdf.will_page_break(needed):
                pdf.add_page()
            pdf.ln(2)
            pdf.multi_cell(0, line, text, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font(FONT, "", 10)

    def para(self, text: str, size: int = 10, *, lead: str = "") -> None:
        """A left-aligned paragraph; `lead` (a speaker, a name) is set in bold before it."""
        pdf = self.pdf
        line = LINE * size / 10
        if lead:
            with self._bold(size):
                pdf.write(line, lead)
        pdf.set_font(FONT, "", size)
        pdf.write(line, text)
        pdf.ln(line)

    def note(self, text: str) -> None:
        """Small grey text under a paragraph (its sources)."""
        pdf = self.pdf
        pdf.set_text_color(110, 110, 110)
        pdf.set_font(FONT, "", 8)
        pdf.multi_cell(0, 4.0, text, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_text_color(0, 0, 0)
        pdf.set_font(FONT, "", 10)

    def gap(self, mm: float = 1.5) -> None:
        self.pdf.ln(mm)

    def table(self, rows: Sequence[Sequence[str]], widths: Sequence[int]) -> None:
        """A table whose first row is its header (repeated on a new page)."""
        pdf = self.pdf
        pdf.set_font(FONT, "", 9)
        header = FontFace(fill_color=(235, 238, 245))  # the one weight: shaded, not bold
        with pdf.table(col_widths=tuple(widths), text_align="LEFT", headings_style=header,
                       line_height=ROW) as table:
            for row in rows:
                cells = table.row()
                for value in row:
                    cells.cell(value)
        pdf.ln(2)
        pdf.set_font(FONT, "", 10)

    def image(self, png: bytes) -> None:
        """`png` across the page width, on a new page when it does not fit on this one."""
        pdf = self.pdf
        height = self.image_height(png)
        if pdf.will_page_break(height):
            pdf.add_page()
        pdf.image(io.BytesIO(png), w=pdf.epw)
        pdf.ln(2)

    def output(self) -> bytes:
        return bytes(self.pdf.output())
