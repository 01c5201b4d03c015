"""The script as a document: Markdown (chapters as headings) and `script.json`."""

from __future__ import annotations

from core.words import norm as lang_key
from debate.grounding import describe
from podcast.models import PodcastScript

_CHAPTERS = {"opening": ("Opening", "开场"), "theme": ("Theme", "主题"),
             "closing": ("Closing", "结尾")}


def _date(yyyymmdd: str) -> str:
    d = yyyymmdd
    return f"{d[:4]}-{d[4:6]}-{d[6:8]}" if len(d) == 8 and d.isdigit() else d


def chapter_title(name: str, lang: str) -> str:
    zh = lang_key(lang) == "zh"
    if name.startswith("ticker:"):
        return name.removeprefix("ticker:")
    en, cn = _CHAPTERS.get(name, (name, name))
    return cn if zh else en


def render_markdown(script: PodcastScript, lang: str = "en") -> str:
    """`# Bullpen daily podcast: YYYY-MM-DD`, a `##` heading per chapter, one paragraph per
    turn (`**speaker:** text`) with its sources under it."""
    zh = lang_key(lang) == "zh"
    title = "Bullpen 每日播客" if zh else "Bullpen daily podcast"
    out = [f"# {title}: {_date(script.date)}", ""]
    if script.user_tickers:
        out += [("股票：" if zh else "Tickers: ") + ", ".join(script.user_tickers), ""]
    for ch in script.chapter:
        out += [f"## {chapter_title(ch.name, lang)}", ""]
        for turn in script.scripts[ch.start_id:ch.end_id + 1]:
            out.append(f"**{turn.speaker}:** {turn.text}")
            if turn.sources:
                label = "来源" if zh else "Sources"
                out.append(f"<sub>{label}: " + "; ".join(describe(s) for s in turn.sources)
                           + "</sub>")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def script_json(script: PodcastScript) -> str:
    """`script.json`: date, user_tickers, chapter, scripts (UTF-8, indented)."""
    return script.model_dump_json(indent=2)


__all__ = ["chapter_title", "render_markdown", "script_json"]
