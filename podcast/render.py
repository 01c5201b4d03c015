"""The script as a document: Markdown (chapters as headings), a PDF, and `script.json`, in the
listener's language (the words are the catalogue's `report_pdf` namespace). A turn's sources are
a small note under it: an italic line in Markdown, small grey text in the PDF, never a tag.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.cjk_markdown import cjk_bold
from core.words import t
from debate.report import sources_note
from podcast.models import PodcastResult, PodcastScript, ScriptTurn
from tools.symbols.sources import reader_name

_CHAPTERS = {"opening": "report_pdf.chapter_opening", "theme": "report_pdf.chapter_theme",
             "closing": "report_pdf.chapter_closing"}


def _date(yyyymmdd: str) -> str:
    d = yyyymmdd
    return f"{d[:4]}-{d[4:6]}-{d[6:8]}" if len(d) == 8 and d.isdigit() else d


def chapter_title(name: str, lang: str, names: Mapping[str, str] | None = None) -> str:
    """`opening` -> "Opening" / "开场"; `ticker:600519` -> "贵州茅台（600519）" when `names`
    knows the code's name, else the code."""
    if name.startswith("ticker:"):
        code = name.removeprefix("ticker:")
        full = (names or {}).get(code, "")
        return t("report_pdf.chapter_ticker", lang, name=full, code=code) if full else code
    key = _CHAPTERS.get(name)
    return t(key, lang) if key else name


def ticker_names(result: PodcastResult, lang: str = "en") -> dict[str, str]:
    """Each debated code's name as the reader knows it, for chapter titles."""
    out = {s.code or s.ticker: s.name for s in result.tickers if s.name}
    for code, art in result.debates.items():
        if art.meta.name:
            out.setdefault(code, art.meta.name)
    return {code: known for code, name in out.items() if (known := reader_name(code, name,
                                                                               lang))}


def _lead(turn: ScriptTurn, lang: str) -> str:
    """"Host: " / "主持人：" before a turn."""
    return t("report_pdf.lead", lang, who=turn.speaker[:1].upper() + turn.speaker[1:])


def render_markdown(script: PodcastScript, lang: str = "en",
                    names: Mapping[str, str] | None = None) -> str:
    """`# Bullpen daily podcast: YYYY-MM-DD`, a `##` heading per chapter, one paragraph per
    turn (`**speaker:** text`) with its sources in an italic line under it."""
    out = [f"# {t('report_pdf.podcast_title', lang, date=_date(script.date))}", ""]
    if script.user_tickers:
        out += [t("report_pdf.podcast_tickers", lang, items=", ".join(script.user_tickers)), ""]
    for ch in script.chapter:
        out += [f"## {chapter_title(ch.name, lang, names)}", ""]
        for turn in script.scripts[ch.start_id:ch.end_id + 1]:
            lead = _lead(turn, lang)
            bold = lead.rstrip()
            out.append(cjk_bold(f"**{bold}**{lead[len(bold):]}{turn.text}"))
            if turn.sources:
                out.append(f"*{sources_note(turn.sources, lang)}*")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def render_pdf(result: PodcastResult, lang: str) -> bytes:
    """The script as a PDF: a heading per chapter kept with its first turn, each turn a
    left-aligned paragraph led by its speaker, its sources in small grey text under it."""
    from tools.pdf import Document

    script = result.script
    names = ticker_names(result, lang)
    title = t("report_pdf.podcast_title", lang, date=_date(script.date))
    doc = Document(title)
    doc.heading(title, 16)
    if script.user_tickers:
        doc.para(t("report_pdf.podcast_tickers", lang, items=", ".join(
            chapter_title(f"ticker:{c}", lang, names) for c in script.user_tickers)), 9)
    for ch in script.chapter:
        doc.heading(chapter_title(ch.name, lang, names))
        for turn in script.scripts[ch.start_id:ch.end_id + 1]:
            doc.para(turn.text.replace("**", ""), lead=_lead(turn, lang))
            if turn.sources:
                doc.note(sources_note(turn.sources, lang))
            doc.gap(2)
    return doc.output()


def script_json(script: PodcastScript) -> str:
    """`script.json`: date, user_tickers, chapter, scripts (UTF-8, indented)."""
    return script.model_dump_json(indent=2)


__all__ = ["chapter_title", "render_markdown", "render_pdf", "script_json", "ticker_names"]
