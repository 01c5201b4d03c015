"""`/podcast`: the episode as an answer in the chat, run like any question (queued per chat,
stoppable with /stop, recorded): progress as status lines, the summary as the answer, the
script (Markdown, script.json), the PDF when asked and the audio when speech is configured."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from core.agent.modes import ModeDecl, ModeNeeds
from core.agent.turn import Turn
from core.events import Done, Event, File, Status
from core.llm.speech import SpeechClient
from core.ports import LLMProvider, Mode
from core.types import OutgoingFile, Reply
from core.words import t
from podcast import PodcastError, produce_podcast
from podcast.items import podcast_items


class PodcastMode:
    name = "podcast"

    def __init__(self, *, llm: LLMProvider | None, pool: Any = None,
                 speech: SpeechClient | None = None,
                 voices: dict[str, str] | None = None) -> None:
        self._llm = llm
        self._pool = pool
        self._speech = speech
        self._voices = voices or {}

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        tickers = list(turn.options.tickers)
        yield Status(text=t("podcast.preparing", turn.lang, tickers=", ".join(tickers)))
        progress: asyncio.Queue[Event] = asyncio.Queue()
        task = asyncio.create_task(produce_podcast(
            tickers, lang=turn.lang, llm=self._llm, pool=self._pool,
            emit=progress.put_nowait))
        try:
            while not task.done():
                getter = asyncio.ensure_future(progress.get())
                await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                if getter.done():
                    event = getter.result()
                    if isinstance(event, Status):
                        yield event
                else:
                    getter.cancel()
            result = task.result()
        except PodcastError as exc:
            yield Done(text=exc.message(turn.lang))
            return
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        items = await podcast_items(result, lang=turn.lang,
                                    pdf=turn.options.pdf,
                                    speech=self._speech, voices=self._voices)
        for item in items:
            if isinstance(item, OutgoingFile):
                yield File(file=item)
        summary = next((i.text for i in items if isinstance(i, Reply)), "")
        # the summary carries the offline notice itself (a label would say it twice)
        yield Done(text=summary)


def _declared(needs: ModeNeeds) -> Mode | None:
    """With no model the episode is scripted from the offline debates (labelled as such)."""
    return PodcastMode(llm=needs.llm, pool=needs.pool, speech=needs.speech,
                       voices=needs.speech_voices)


MODES = (ModeDecl("podcast", _declared, when="always"),)
