"""The voice-note pipeline: attachment -> limits -> decode -> Whisper -> checks -> correction.

:meth:`VoicePipeline.preprocess` is the gateway's ``Preprocessor``: for a message whose only
content is a voice note it replies "Heard: ... -> NVDA, AAPL" and returns the corrected question
for the agent, or replies with a friendly reason and returns None (nothing else happens).
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from uuid import UUID

from pydantic import BaseModel, Field

from bot.voice.backends import RawTranscript, Transcriber, make_backend
from bot.voice.correct import Correction, common_words, correct
from bot.voice.decode import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_SECONDS,
    AudioError,
    AudioTooLarge,
    FetchFailed,
    NoVoiceNote,
    SpeechNotEnglish,
    SpeechUnclear,
    TranscriptionUnavailable,
    check_duration,
    check_size,
    decode,
)
from bot.voice.hints import Hints, build_hints
from core.errors import ConfigError, PlatformError, TooLarge
from core.ports import Adapter, Outbox
from core.types import Attachment, IncomingMessage
from tools.symbols import Match, SymbolDirectory, default_directory
from tools.symbols.normalize import has_cjk

log = logging.getLogger(__name__)

HintSource = Callable[[UUID], Awaitable[Sequence[str]]]

# What Whisper says to silence and noise (it learned them from subtitles).
_HALLUCINATIONS = frozenset({
    "you", "thank you", "thanks", "thank you for watching", "thanks for watching",
    "thank you so much for watching", "please subscribe", "bye", "okay", "so",
    "subtitles by the amaraorg community", "music", "applause", "silence",
})


class Transcript(BaseModel):
    """A transcribed voice note: what was heard and the question the agent gets."""

    text: str
    language: str
    duration_s: float
    elapsed_s: float
    query: str
    symbols: list[Match] = Field(default_factory=list)
    source: str = ""  # backend name, or "recognition" (the platform's own transcript)
    avg_logprob: float | None = None

    def heard_line(self, lang: str = "en") -> str:
        """The line shown in the chat before the answer: "Heard: ... -> NVDA, AAPL"."""
        codes = list(dict.fromkeys(m.symbol for m in self.symbols))
        head = f"听到：{self.text}" if lang == "zh" else f"Heard: {self.text}"
        return f"{head} -> {', '.join(codes)}" if codes else head


class VoicePipeline:
    """Transcribes voice notes and corrects the stock names in them.

    Components take keyword-only settings: ``max_seconds`` / ``max_bytes`` (limits, checked
    before download when the platform declares them), ``min_logprob`` (below it the note is
    "not understood"), ``hint_source`` (a user's watchlist and recent symbols), ``use_hints``
    and ``correct_names`` (switch the biasing and correction steps, for the benchmark).
    """

    def __init__(self, *, backend: Transcriber | None = None,
                 directory: SymbolDirectory | None = None,
                 max_seconds: float = DEFAULT_MAX_SECONDS, max_bytes: int = DEFAULT_MAX_BYTES,
                 hint_source: HintSource | None = None, use_hints: bool = True,
                 correct_names: bool = True, min_logprob: float = -1.0,
                 min_unprompted_logprob: float = -2.0, max_unknown_share: float = 0.35) -> None:
        self.backend: Transcriber = backend if backend is not None else make_backend()
        self.max_seconds = max_seconds
        self.max_bytes = max_bytes
        self.hint_source = hint_source
        self.use_hints = use_hints
        self.correct_names = correct_names
        self.min_logprob = min_logprob
        self.min_unprompted_logprob = min_unprompted_logprob
        self.max_unknown_share = max_unknown_share
        self._directory = directory
        self.outbox: Outbox | None = None  # set by the app: replies the platform refuses now
        self._default_hints: Hints | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> VoicePipeline:
        """Build from ``bot.settings.Settings`` (whisper_* and voice_* fields; defaults when a
        field is missing)."""

        def get(name: str, default: Any) -> Any:
            value = getattr(settings, name, None)
            if value is not None and hasattr(value, "get_secret_value"):
                value = value.get_secret_value()
            return default if value is None else value

        backend = make_backend(
            get("whisper_backend", "faster-whisper"), model=get("whisper_model", None),
            api_base_url=get("whisper_api_base_url", None),
            api_key=get("whisper_api_key", None), workers=int(get("voice_workers", 1)),
            beam_size=int(get("whisper_beam_size", 5)),
            compute_type=str(get("whisper_compute_type", "int8")),
            cpu_threads=int(get("whisper_cpu_threads", 0)))
        kwargs: dict[str, Any] = {
            "backend": backend,
            "max_seconds": float(get("voice_max_seconds", DEFAULT_MAX_SECONDS)),
            "max_bytes": int(get("voice_max_bytes", DEFAULT_MAX_BYTES)),
        }
        kwargs.update(overrides)
        return cls(**kwargs)

    # --- pieces ------------------------------------------------------------------------------

    def directory(self) -> SymbolDirectory:
        """The symbols directory (the process-wide one unless given); builds on first use."""
        if self._directory is None:
            with self._lock:
                if self._directory is None:
                    self._directory = default_directory()
        return self._directory

    def hints_for(self, codes: Sequence[str] = ()) -> Hints:
        """Hints for a user's codes (watchlist, recent) ahead of the most-traded names."""
        if codes:
            return build_hints(self.directory(), watchlist=codes)
        if self._default_hints is None:
            self._default_hints = build_hints(self.directory())
        return self._default_hints

    def check(self, raw: RawTranscript, names: Sequence[Match] = ()) -> None:
        """Refuse a transcript nobody should act on (raises :class:`AudioError`).

        An English-only model does not say "this is not English": it writes confident-looking
        English-ish words. Three signs give it away, any one is enough: a low mean token
        log-probability, tokens that only the hint prompt made likely (``unprompted_logprob``),
        and many words that are neither English nor a name the directory found ("Xian, Wuhn,
        Gweichow ... Muyang").
        """
        text = raw.text.strip()
        plain = re.sub(r"[^\w\s]", "", text.lower()).strip()
        english_only = self.backend.english_only
        if not plain or plain in _HALLUCINATIONS:
            raise SpeechUnclear("nothing recognisable", english_only=english_only)
        letters = [ch for ch in text if ch.isalpha()]
        if english_only and sum(not ch.isascii() for ch in letters) > 0.3 * len(letters):
            raise SpeechNotEnglish(f"non-Latin transcript from an English-only model: {text!r}")
        low = raw.avg_logprob is not None and raw.avg_logprob < self.min_logprob
        leaning = (raw.unprompted_logprob is not None
                   and raw.unprompted_logprob < self.min_unprompted_logprob)
        unknown = english_only and _unknown_share(text, names) >= self.max_unknown_share
        if low or leaning or unknown:
            raise SpeechUnclear(f"low confidence (logprob {raw.avg_logprob}, unprompted "
                                f"{raw.unprompted_logprob}, unknown words {unknown})",
                                heard=text, english_only=english_only)

    # --- API ---------------------------------------------------------------------------------

    async def transcribe(self, data: bytes, *, filename: str = "", mime: str = "",
                         recognition: str | None = None, hints: Sequence[str] = (),
                         duration_s: float | None = None) -> Transcript:
        """Transcribe one note and correct it; raises an :class:`AudioError` subclass.

        ``recognition`` (WeChat's own transcript) is used instead of Whisper when present.
        ``hints`` are codes to bias towards (watchlist, recent symbols). ``filename`` and
        ``mime`` are informational: the container is detected from the bytes.
        """
        directory = await asyncio.to_thread(self.directory)
        hint = await asyncio.to_thread(self.hints_for, tuple(hints)) if (
            self.use_hints or self.correct_names) else None
        start = time.perf_counter()  # per-note work only: the directory is built once
        from_platform = bool(recognition and recognition.strip())
        if from_platform:
            text = (recognition or "").strip()
            raw = RawTranscript(text=text, language="zh" if has_cjk(text) else "en",
                                backend="recognition")
            duration = float(duration_s or 0.0)
        else:
            log.debug("voice note %s (%s, %d bytes)", filename or "-", mime or "-", len(data))
            audio = await asyncio.to_thread(decode, data, max_bytes=self.max_bytes,
                                            max_seconds=self.max_seconds)
            prompt = hint.prompt if (self.use_hints and hint is not None) else ""
            try:
                raw = await self.backend.transcribe(audio, prompt=prompt)
            except ConfigError as exc:
                raise TranscriptionUnavailable(str(exc)) from exc
            duration = audio.duration_s
        if self.correct_names:
            fixed = await asyncio.to_thread(correct, raw.text, directory,
                                            hint if self.use_hints or hints else None)
        else:
            fixed = Correction(text=raw.text.strip(), query=raw.text.strip(),
                               symbols=directory.extract(raw.text.strip()))
        if not from_platform:
            self.check(raw, fixed.symbols)
        query, symbols = fixed.query, fixed.symbols
        return Transcript(text=raw.text.strip(), language=raw.language, duration_s=duration,
                          elapsed_s=time.perf_counter() - start, query=query, symbols=symbols,
                          source=raw.backend, avg_logprob=raw.avg_logprob)

    async def warm_up(self) -> None:
        """Build the directory and hints and load the model now, not on the first note.

        Not called by ``serve`` (idle memory stays low until a voice note arrives); the CLI
        and the benchmark call it so that ``elapsed_s`` measures one note.
        """
        await asyncio.to_thread(self.hints_for)
        load = getattr(self.backend, "load", None)
        if load is not None:
            await load()

    async def preprocess(self, adapter: Adapter, msg: IncomingMessage, user_id: UUID,
                         lang: str) -> str | None:
        """The gateway ``Preprocessor``: the corrected question, or None after replying."""
        found = _voice_attachment(msg)
        try:
            if found is None:
                raise NoVoiceNote(f"attachments: {[a.kind for a in msg.attachments]}")
            index, att = found
            # refuse before downloading when the platform declares size or length
            check_size(att.size, max_bytes=self.max_bytes)
            check_duration(att.duration_s, max_seconds=self.max_seconds)
            try:
                await adapter.typing(msg.chat)
            except PlatformError:
                pass
            codes = await self._hint_codes(user_id)
            data = b""
            if not (att.recognition and att.recognition.strip()):
                try:
                    data = await adapter.fetch_attachment(msg, index)
                except TooLarge as exc:  # the adapter stopped reading past its own limit
                    size = exc.size if exc.size is not None else exc.read  # at least that
                    raise AudioTooLarge(str(exc), mb=size / 2**20,
                                        limit_mb=min(exc.limit, self.max_bytes) / 2**20) from exc
                except PlatformError as exc:
                    raise FetchFailed(str(exc)) from exc
            transcript = await self.transcribe(
                data, filename=att.filename, mime=att.mime_type, recognition=att.recognition,
                hints=codes, duration_s=att.duration_s)
        except AudioError as exc:
            log.info("voice note %s/%s refused: %s: %s", msg.platform, msg.message_id,
                     type(exc).__name__, exc)
            await self._say(adapter, msg, exc.message(lang))
            return None
        except Exception:
            log.exception("voice note %s/%s failed", msg.platform, msg.message_id)
            await self._say(adapter, msg, TranscriptionUnavailable().message(lang))
            return None
        log.info("voice note %s/%s: %.1f s in %.2f s -> %s", msg.platform, msg.message_id,
                 transcript.duration_s, transcript.elapsed_s,
                 [m.symbol for m in transcript.symbols])
        await self._say(adapter, msg, transcript.heard_line(lang))
        return transcript.query

    async def aclose(self) -> None:
        """Release the backend's worker threads and HTTP client."""
        await self.backend.aclose()

    # --- helpers -----------------------------------------------------------------------------

    async def _hint_codes(self, user_id: UUID) -> Sequence[str]:
        if self.hint_source is None:
            return ()
        try:
            return await self.hint_source(user_id)
        except Exception as exc:  # hints are a nicety: never fail the note for them
            log.warning("hint source failed for %s: %s", user_id, exc)
            return ()

    async def _say(self, adapter: Adapter, msg: IncomingMessage, text: str) -> None:
        """The gateway's path for a short reply: at once, or through the outbox."""
        from bot.outbox import say

        await say(adapter, msg, text, outbox=self.outbox, plain=True)


def _unknown_share(text: str, names: Sequence[Match]) -> float:
    """Share of the words that are neither ordinary English nor part of a found name."""
    common = common_words()
    spans = [m.span for m in names if m.span is not None]
    words = [(w.group(0), w.start()) for w in re.finditer(r"[A-Za-z][A-Za-z'’]*", text)]
    if len(words) < 3:
        return 0.0
    unknown = [w for w, at in words
               if w.lower().replace("'", "").replace("’", "") not in common
               and not any(s <= at < e for s, e in spans)]
    return len(unknown) / len(words) if len(unknown) >= 2 else 0.0


def _voice_attachment(msg: IncomingMessage) -> tuple[int, Attachment] | None:
    for i, att in enumerate(msg.attachments):
        if att.kind in ("voice", "audio"):
            return i, att
    return None
