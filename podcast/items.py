"""What a podcast delivery holds, the same for `/podcast` and a `podcast` subscription: a short
summary listing the chapters, the script as Markdown and as `script.json`, a PDF when asked, and
the whole episode as audio when a speech endpoint is configured."""

from __future__ import annotations

import asyncio
import logging

from core.errors import LLMError
from core.llm.speech import SpeechClient
from core.localize import word
from core.ports import OutItem
from core.types import OutgoingFile, Reply
from core.words import t
from podcast import PodcastResult, render_markdown, role_of, script_json
from podcast.audio import episode_audio
from podcast.render import chapter_title, render_pdf, ticker_names

log = logging.getLogger(__name__)

def summary_text(result: PodcastResult, lang: str) -> str:
    """The chat message: the episode's date, each chapter with its turn range, each ticker's
    outcome, and what the run noted (repairs, drops, degraded levels)."""
    script = result.script
    date = f"{script.date[:4]}-{script.date[4:6]}-{script.date[6:]}"
    lines = [t("podcast.summary_title", lang, date=date)]
    if result.label:
        lines.append(f"_{result.label}_")
    by_code = {t.code or t.ticker: t for t in result.tickers}
    names = ticker_names(result, lang)
    for ch in script.chapter:
        name = chapter_title(ch.name, lang, names)  # 开场, 浦发银行（600000）: not chapter ids
        extra = ""
        if ch.name.startswith("ticker:"):
            code = ch.name.split(":", 1)[1]
            status = by_code.get(code)
            if status is not None and status.action:
                extra = f" — {word('debate.action_', status.action, lang)}"
            elif status is not None:
                extra = " — " + t("podcast.no_verdict", lang) + (
                    t("podcast.detail", lang, detail=status.detail) if status.detail else "")
        turns = t("podcast.turns", lang, n=ch.end_id - ch.start_id + 1)
        lines.append(f"• {name}{extra} ({turns})")
    changed = [n for n in result.notes if n.kind in ("repair", "drop", "rejected_edit",
                                                     "degraded", "input")]
    if changed:
        lines.append(t("podcast.notes", lang, notes="; ".join(n.text for n in changed[:5])))
    lines.append(t("report.disclaimer", lang))  # the same words under every report
    return "\n".join(lines)


async def podcast_items(result: PodcastResult, *, lang: str, pdf: bool = False,
                        speech: SpeechClient | None = None,
                        voices: dict[str, str] | None = None) -> list[OutItem]:
    """The delivery. Audio that cannot be made is said in the summary, not a failed delivery."""
    name = f"podcast-{result.script.date}"
    summary = summary_text(result, lang)
    files: list[OutItem] = [
        OutgoingFile(kind="document", filename=f"{name}.md", mime_type="text/markdown",
                     data=render_markdown(result.script, lang).encode("utf-8")),
        OutgoingFile(kind="document", filename="script.json", mime_type="application/json",
                     data=script_json(result.script).encode("utf-8")),
    ]
    if pdf:
        data = await asyncio.to_thread(render_pdf, result, lang)
        files.append(OutgoingFile(kind="document", filename=f"{name}.pdf",
                                  mime_type="application/pdf", data=data))
    if speech is not None:
        turns = [(role_of(t.speaker) or "host", t.text) for t in result.script.scripts]
        try:
            files.append(await episode_audio(turns, client=speech, voices=voices or {},
                                             filename=f"{name}.mp3"))
        except LLMError as exc:
            log.warning("podcast audio not made: %s", exc)
            summary += "\n" + t("podcast.no_audio", lang, error=exc)
    return [Reply(text=summary), *files]
