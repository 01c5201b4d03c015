"""The CJK font every chart and PDF uses, from the `cvttf-notosanscjk-regular` package (kept
apart from the drawing so a PDF does not load matplotlib)."""

from __future__ import annotations

import functools


@functools.cache
def cjk_font_path() -> str:
    """Path of the CJK font file shipped by `cvttf-notosanscjk-regular` (also for PDFs)."""
    import cvttf_NotoSansCJK_Regular as noto

    return str(noto.get_TTF_path())
