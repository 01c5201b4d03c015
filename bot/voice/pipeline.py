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

from bot.voice.backends import (
    SHORT_NOTE_S,
    Decide,
    FasterWhisperBackend,
    Hypothesis,
    RawTranscript,
    Transcriber,
    make_backend,
    make_multilingual,
)
from bot.voice.codes import guessed_matches
from bot.voice.correct import Correction, common_words, correct
from bot.voice.decode import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_SECONDS,
    Audio,
    AudioError,
    AudioTooLarge,
    FetchFailed,
    LanguageUnsupported,
    NoteTooSlow,
    NoVoiceNote,
    SpeechNotEnglish,
    SpeechUnclear,
    TranscriptionUnavailable,
    check_duration,
    check_size,
    decode,
)
from bot.voice.hints import Hints, build_hints
from bot.voice.language import (
    PLATFORM_LOCALE,
    ContextSource,
    LanguageContext,
    choose,
    detected,
)
from bot.voice.mandarin import (
    cantonese_share,
    correct_mandarin,
    simplified,
)
from bot.voice.reading import Reading, choose_reading
from core.errors import ConfigError, PlatformError, TooLarge
from core.ports import Adapter, Outbox
from core.types import Attachment, Button, IncomingMessage
from core.words import is_zh, t
from tools.symbols import Match, SymbolDirectory, default_directory
from tools.symbols.normalize import has_cjk

log = logging.getLogger(__name__)

HintSource = Callable[[UUID], Awaitable[Sequence[str]]]

# What Whisper says to silence and noise (it learned them from subtitles).
_HALLUCINATIONS = frozenset({
    "you", "thank you", "thanks", "thank you for watching", "thanks for watching",
    "thank you so much for watching", "please subscribe", "bye", "okay", "so",
    "subtitles by the amaraorg community", "music", "applause", "silence",
    # Mandarin ones (simplified, punctuation removed)
    "谢谢观看", "谢谢大家", "请不吝点赞订阅转发打赏支持明镜与点点栏目", "字幕by索兰娅",
    "中文字幕志愿者李宗盛", "明镜与点点栏目", "谢谢",
})
# Below this mean log-probability a Mandarin transcript is refused (Whisper base is less sure
# of Mandarin than tiny.en of English: -1.0, its own failure line, refused most synthetic
# notes; the synthetic Cantonese note scored -1.44).
MIN_LOGPROB_ZH = -1.3
# A prompt name whose tokens average below this without the prompt was put there by the prompt
# ("Xiaomi" at -6.8 on a note that said "Show me"); names really said scored -4.1 at worst.
LEAK_LOGPROB = -5.5
CANTONESE_SHARE = 0.12
# A note no longer than this whose language detection is unsure is heard in both languages.
BOTH_LANGUAGES_MAX_S = 15.0
CALLBACK_BYTES = 64  # Telegram's limit on a button's data
# The model that hears a note known to be English when the multilingual one is there (as
# serve's settings default, BULLPEN_WHISPER_ENGLISH_MODEL): a pipeline built in code without
# saying (the bench, the tests) heard English with tiny.en instead, and measured 31/33 English
# symbols where serve finds 33/33 (tiny.en hears "A M D" as "Mv", "Qualcomm" as "welcome").
ENGLISH_MODEL = "base"


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
    # securities the note may have named but was not sure enough of: asked about, not acted on
    suggestions: list[Match] = Field(default_factory=list)

    @property
    def unsure(self) -> bool:
        return bool(self.suggestions) and not self.symbols

    def choices(self, lang: str = "en") -> list[tuple[str, str]]:
        """(label, button data) for each suggestion: pressing one asks the question about it
        (``/fast SYMBOL heard text``, within Telegram's 64 bytes of callback data)."""
        out = []
        for m in self.suggestions:
            data = f"fast:{m.symbol} {self.text}"
            while len(data.encode("utf-8")) > CALLBACK_BYTES:
                data = data[:-1]
            out.append((f"{_shown_name(m, lang)} ({m.symbol})", data.rstrip()))
        return out

    def ask_line(self, lang: str = "en") -> str:
        """"Heard: ... Did you mean 五粮液 (000858.SZ)?": what an unsure note gets."""
        names = [f"{_shown_name(m, lang)} ({m.symbol})" for m in self.suggestions]
        return t("voice.did_you_mean", lang, text=self.text,
                 choices=t("voice.or", lang).join(names))

    def heard_line(self, lang: str = "en") -> str:
        """The line shown in the chat before the answer: "Heard: ... -> NVDA, AAPL"."""
        codes = list(dict.fromkeys(m.symbol for m in self.symbols))
        head = t("voice.heard", lang, text=self.text)
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
                 min_unprompted_logprob: float = -2.0, max_unknown_share: float = 0.35,
                 multilingual: FasterWhisperBackend | None = None,
                 english_model: str = ENGLISH_MODEL,
                 context_source: ContextSource | None = None, deadline_s: float = 20.0,
                 deadline_per_audio_s: float = 0.5, deadline_max_s: float = 90.0,
                 nbest: int = 5) -> None:
        self.backend: Transcriber = backend if backend is not None else make_backend()
        # Mandarin (and language detection); None: English only, as with tiny.en alone
        self.multilingual = multilingual
        # which model hears English once the note is known to be English: "tiny.en" (the
        # backend above) or "base" (the multilingual one); see `bullpen bench stt`
        self.english_model = english_model
        self.context_source = context_source
        self.deadline_s = deadline_s
        self.deadline_per_audio_s = deadline_per_audio_s
        self.deadline_max_s = deadline_max_s
        # readings kept from the beam for a Mandarin note (0: the one-best path, as before)
        self.nbest = nbest
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
        multilingual = None
        if "zh" in str(get("voice_languages", "zh,en")).split(","):
            multilingual = make_multilingual(
                model=get("whisper_multilingual_model", None),
                compute_type=str(get("whisper_compute_type", "int8")),
                cpu_threads=int(get("whisper_cpu_threads", 0)),
                beam_size=int(get("whisper_beam_size", 5)))
            if multilingual is not None and isinstance(backend, FasterWhisperBackend):
                multilingual.pool = backend.pool  # one CPU queue for both models
        kwargs: dict[str, Any] = {
            "backend": backend,
            "multilingual": multilingual,
            "english_model": str(get("whisper_english_model", ENGLISH_MODEL)),
            "max_seconds": float(get("voice_max_seconds", DEFAULT_MAX_SECONDS)),
            "max_bytes": int(get("voice_max_bytes", DEFAULT_MAX_BYTES)),
            "deadline_s": float(get("voice_deadline_s", 20.0)),
            "deadline_per_audio_s": float(get("voice_deadline_per_audio_s", 0.5)),
            "deadline_max_s": float(get("voice_deadline_max_s", 90.0)),
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
        model_en_only = self.backend.english_only
        english_only = model_en_only and self.multilingual is None  # what the user is told
        if not plain or plain in _HALLUCINATIONS:
            raise SpeechUnclear("nothing recognisable", english_only=english_only)
        letters = [ch for ch in text if ch.isalpha()]
        if model_en_only and sum(not ch.isascii() for ch in letters) > 0.3 * len(letters):
            raise SpeechNotEnglish(f"non-Latin transcript from an English-only model: {text!r}")
        low = raw.avg_logprob is not None and raw.avg_logprob < self.min_logprob
        leaning = (raw.unprompted_logprob is not None
                   and raw.unprompted_logprob < self.min_unprompted_logprob)
        unknown = model_en_only and _unknown_share(text, names) >= self.max_unknown_share
        if low or leaning or unknown:
            raise SpeechUnclear(f"low confidence (logprob {raw.avg_logprob}, unprompted "
                                f"{raw.unprompted_logprob}, unknown words {unknown})",
                                heard=text, english_only=english_only)

    def check_mandarin(self, raw: RawTranscript) -> None:
        """Refuse an empty, hallucinated, Cantonese or low-confidence Mandarin transcript."""
        text = raw.text.strip()
        plain = re.sub(r"[^\w]", "", text.lower())
        if not plain or plain in _HALLUCINATIONS:
            raise SpeechUnclear("nothing recognisable")
        if cantonese_share(text) >= CANTONESE_SHARE:
            raise LanguageUnsupported(f"written Cantonese: {text!r}")
        if raw.avg_logprob is not None and raw.avg_logprob < MIN_LOGPROB_ZH:
            raise SpeechUnclear(f"low confidence (logprob {raw.avg_logprob:.2f})", heard=text)

    # --- API ---------------------------------------------------------------------------------

    def deadline_for(self, duration_s: float) -> float:
        """Seconds a note of this length may take to be heard before it is refused."""
        return min(self.deadline_max_s,
                   self.deadline_s + self.deadline_per_audio_s * max(0.0, duration_s))

    async def hear(self, audio: Audio, *, context: LanguageContext | None = None,
                   prompt: str = "", hint: Hints | None = None) -> RawTranscript:
        """Whisper on decoded audio, in Mandarin or English, within the note's deadline.

        Raises :class:`LanguageUnsupported` for other languages and :class:`NoteTooSlow`
        past the deadline (the worker stops at its next 30 s window).
        """
        context = context or LanguageContext()
        limit = self.deadline_for(audio.duration_s)
        deadline = time.monotonic() + limit
        multi = self.multilingual

        async def run() -> RawTranscript:
            if multi is None:
                return await self.backend.transcribe(audio, prompt=prompt)
            lang = context.certain
            # English on base: the short encoder window, detected on it first when the
            # language is not certain (the full window detects when that is unsure)
            short = isinstance(multi, FasterWhisperBackend) and self._short_english(audio)
            if short and lang is None:
                english = await multi.english(
                    audio, prompt=prompt, sure=lambda probs: surely_english(context, probs),
                    again=self._doubtful(prompt, hint))
                if english is not None:
                    return short_english(english, prompt)
            if lang is None:
                lang = choose(context, await multi.detect(audio))
            if short and lang == "en":
                english = await multi.english(audio, prompt=prompt,
                                              again=self._doubtful(prompt, hint))
                assert english is not None  # (None only when asked to detect)
                return short_english(english, prompt)
            if lang == "en" and self.english_model != "base":
                return await self.backend.transcribe(audio, prompt=prompt)
            # no prompt for Mandarin: the generic one cost names (2/20 exact, 7/20 without)
            used = "" if lang == "zh" else prompt
            raw = await multi.transcribe(audio, prompt=used, language=lang, deadline=deadline)
            text = drop_prompt_leaks(raw, used)
            if lang == "zh":
                text = simplified(text)
            return RawTranscript(text=text, language=lang,
                                 language_probability=raw.language_probability,
                                 avg_logprob=raw.avg_logprob, no_speech_prob=raw.no_speech_prob,
                                 backend=raw.backend + (":base" if lang == "zh" else ""))

        try:
            return await asyncio.wait_for(run(), timeout=limit)
        except TimeoutError as exc:
            raise NoteTooSlow(f"not heard within {limit:.0f} s", limit=limit) from exc
        except NoteTooSlow as exc:
            raise NoteTooSlow(str(exc), limit=limit) from exc

    async def transcribe(self, data: bytes, *, filename: str = "", mime: str = "",
                         recognition: str | None = None, hints: Sequence[str] = (),
                         duration_s: float | None = None,
                         context: LanguageContext | None = None) -> Transcript:
        """Transcribe one note and correct it; raises an :class:`AudioError` subclass.

        ``recognition`` (WeChat's own transcript) is used instead of Whisper when present.
        ``hints`` are codes to bias towards (watchlist, recent symbols). ``context`` is what
        is known of the speaker's language. ``filename`` and ``mime`` are informational: the
        container is detected from the bytes.
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
            context = context or LanguageContext()
            prompt = hint.prompt if (self.use_hints and hint is not None) else ""
            english = await self._english_first(audio, context, prompt, hint)
            if english is None and self._listens(audio, context):
                heard = await self._listen(audio, context, hint, directory, start)
                if heard is not None:
                    return heard
                context = LanguageContext(chosen="en")  # detection: English, the path below
            try:
                raw = (short_english(english, prompt) if english is not None
                       else await self.hear(audio, context=context, prompt=prompt,
                                            hint=hint))
            except ConfigError as exc:
                raise TranscriptionUnavailable(str(exc)) from exc
            duration = audio.duration_s
        if raw.language == "zh" or (from_platform and has_cjk(raw.text)):
            if not from_platform:
                self.check_mandarin(raw)
            fixed = await asyncio.to_thread(correct_mandarin, raw.text, directory, hint)
            return Transcript(text=fixed.text, language="zh", duration_s=duration,
                              elapsed_s=time.perf_counter() - start, query=fixed.query,
                              symbols=fixed.symbols, source=raw.backend,
                              avg_logprob=raw.avg_logprob)
        if self.correct_names:
            fixed = await asyncio.to_thread(correct, raw.text, directory,
                                            hint if self.use_hints or hints else None)
        else:
            fixed = Correction(text=raw.text.strip(), query=raw.text.strip(),
                               symbols=directory.extract(raw.text.strip()))
        if not from_platform:
            self.check(raw, fixed.symbols)
        query, symbols = fixed.query, fixed.symbols
        # a code heard a digit short or long ("3-0-0-0-7-5-0"): asked about, not acted on
        asked = [] if symbols else guessed_matches([raw.text], directory)
        return Transcript(text=raw.text.strip(), language=raw.language, duration_s=duration,
                          elapsed_s=time.perf_counter() - start, query=query, symbols=symbols,
                          source=raw.backend, avg_logprob=raw.avg_logprob, suggestions=asked)

    async def _english_first(self, audio: Audio, context: LanguageContext, prompt: str,
                             hint: Hints | None) -> RawTranscript | None:
        """A note of unknown language that the short window is sure is English, heard from
        that window at once; None for the rest (detected on the full window as before)."""
        multi = self.multilingual
        if context.prior is not None or not self._short_english(audio):
            return None
        assert isinstance(multi, FasterWhisperBackend)
        limit = self.deadline_for(audio.duration_s)
        try:
            return await asyncio.wait_for(multi.english(
                audio, prompt=prompt, sure=lambda probs: surely_english(context, probs),
                again=self._doubtful(prompt, hint)), timeout=limit)
        except TimeoutError as exc:
            raise NoteTooSlow(f"not heard within {limit:.0f} s", limit=limit) from exc
        except ConfigError as exc:
            raise TranscriptionUnavailable(str(exc)) from exc

    def _doubtful(self, prompt: str, hint: Hints | None = None) -> Callable[[str], bool]:
        """Whether an English reading from the short window is heard again on the full one:
        it names no security the directory finds, or a name from the prompt opens it."""
        names = [n.strip(" .").lower() for n in prompt.split(",") if n.strip(" .")]

        def doubtful(text: str) -> bool:
            opening = re.sub(r"[^\w\s]", "", text.lower())
            if any(re.match(rf"{re.escape(n)}(?!\w)", opening) for n in names):
                return True
            return not correct(text, self.directory(), hint).symbols
        return doubtful

    def _short_english(self, audio: Audio) -> bool:
        """Whether a note that may be English is heard by base on the short encoder window
        (:meth:`FasterWhisperBackend.english_sync`): one window, English heard by base."""
        return (isinstance(self.multilingual, FasterWhisperBackend)
                and self.english_model == "base" and audio.duration_s <= SHORT_NOTE_S)

    def _listens(self, audio: Audio, context: LanguageContext) -> bool:
        """Whether the n-best path hears this note: a multilingual faster-whisper model, one
        window, and a note that may be Mandarin (English by context keeps its own path)."""
        return (isinstance(self.multilingual, FasterWhisperBackend) and self.nbest > 0
                and audio.duration_s <= SHORT_NOTE_S and context.prior != "en")

    def _languages(self, context: LanguageContext, duration_s: float) -> Decide:
        def decide(probs: dict[str, float]) -> tuple[str, ...]:
            if context.prior is not None:
                return (context.prior,)
            sure = detected(context, probs)
            if sure is not None:
                return (sure,) if sure == "zh" else ()
            return ("zh", "en") if duration_s <= BOTH_LANGUAGES_MAX_S else (
                ("zh",) if probs.get("zh", 0.0) >= probs.get("en", 0.0) else ())
        return decide

    async def _listen(self, audio: Audio, context: LanguageContext, hint: Hints | None,
                      directory: SymbolDirectory, start: float) -> Transcript | None:
        """Mandarin (or, when unsure, both languages) from one encoder pass and the beam's n
        best readings; None when the note is English (heard by the English path)."""
        multi = self.multilingual
        assert isinstance(multi, FasterWhisperBackend)
        limit = self.deadline_for(audio.duration_s)
        deadline = time.monotonic() + limit
        # the short encoder window first (a third of the CPU); the full 30 s window again when a
        # Mandarin-only reading acts on no name (`bullpen bench stt_speed`: each window kept
        # names the other lost)
        # Detection (no language known from the chat) keeps the full window: detected on the
        # short one, 5 of 22 English notes were called another language and refused
        passes = (True, False) if multi.short_context and context.prior else (False,)
        for n, short in enumerate(passes):
            last = n == len(passes) - 1
            left = deadline - time.monotonic()
            if n and left <= 0:
                break
            try:
                heard = await asyncio.wait_for(multi.listen(
                    audio, decide=None if context.prior else self._languages(
                        context, audio.duration_s),
                    languages=(context.prior,) if context.prior else (),
                    hypotheses=self.nbest, short_context=short), timeout=left)
            except TimeoutError as exc:
                if n:
                    break  # the first pass stands
                raise NoteTooSlow(f"not heard within {limit:.0f} s", limit=limit) from exc
            except ConfigError as exc:
                raise TranscriptionUnavailable(str(exc)) from exc
            zh = heard.hypotheses.get("zh", ())
            if not zh:
                if n:
                    break
                return None
            got = heard
            top, en = zh[0], got.hypotheses.get("en", ())
            refused: AudioError | None = None
            reading: Reading | None = None
            try:
                self.check_mandarin(RawTranscript(text=simplified(top.text), language="zh",
                                                  avg_logprob=top.logprob))
                reading = await asyncio.to_thread(choose_reading, zh, directory, hint)
            except AudioError as exc:  # not Mandarin after all? the English reading may be
                if not en and last:
                    raise
                refused = exc
            if last or en or (reading is not None and reading.correction.symbols):
                break  # (heard in both languages: the English reading is weighed instead)
        if en and (english := await self._english_reading(en[0], directory, hint, reading,
                                                          got.language_probs)) is not None:
            return english.model_copy(update={"duration_s": audio.duration_s,
                                              "elapsed_s": time.perf_counter() - start})
        if refused is not None or reading is None:
            raise refused or SpeechUnclear("nothing recognisable")
        fixed = reading.correction
        return Transcript(text=reading.text, language="zh", duration_s=audio.duration_s,
                          elapsed_s=time.perf_counter() - start, query=fixed.query,
                          symbols=fixed.symbols, suggestions=list(reading.suggestions),
                          source=got.backend + ":base:nbest", avg_logprob=reading.logprob)

    async def _english_reading(self, hyp: Hypothesis, directory: SymbolDirectory,
                               hint: Hints | None, reading: Reading | None,
                               probs: dict[str, float]) -> Transcript | None:
        """The English reading of a note heard in both languages, when it is the better one:
        more securities confirmed, or as many and English detected likelier (``reading``:
        the Mandarin one, None when Mandarin was refused)."""
        fixed = await asyncio.to_thread(correct, hyp.text, directory, hint)
        zh_found = -1.0 if reading is None else (
            len(reading.correction.symbols) + (0.5 if reading.unsure else 0.0))
        likelier = probs.get("en", 0.0) > probs.get("zh", 0.0)
        if len(fixed.symbols) < zh_found or (len(fixed.symbols) == zh_found and not likelier):
            return None
        try:
            self.check(RawTranscript(text=hyp.text, language="en", avg_logprob=hyp.logprob),
                       fixed.symbols)
        except AudioError:
            return None
        return Transcript(text=hyp.text.strip(), language="en", duration_s=0.0, elapsed_s=0.0,
                          query=fixed.query, symbols=fixed.symbols, source="base:nbest",
                          avg_logprob=hyp.logprob)

    async def warm_up(self) -> None:
        """Build the directory and hints and load the model now, not on the first note.

        Not called by ``serve`` (idle memory stays low until a voice note arrives); the CLI
        and the benchmark call it so that ``elapsed_s`` measures one note.
        """
        await asyncio.to_thread(self.hints_for)
        for backend in (self.backend, self.multilingual):
            load = getattr(backend, "load", None)
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
            context = await self._context(user_id, msg.platform)
            lang = context.chosen or context.recent or context.locale or lang
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
                hints=codes, duration_s=att.duration_s, context=context)
            if not context.chosen:
                lang = transcript.language  # answer in the language the note was in
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
        if transcript.unsure:  # a name it may have misheard: ask, do not guess
            await self._say(adapter, msg, transcript.ask_line(lang),
                            buttons=[[Button(label=label, data=data)]
                                     for label, data in transcript.choices(lang)])
            return None
        await self._say(adapter, msg, transcript.heard_line(lang))
        return transcript.query

    async def aclose(self) -> None:
        """Release the backends' worker threads and HTTP client."""
        await self.backend.aclose()
        if self.multilingual is not None:
            await self.multilingual.aclose()

    # --- helpers -----------------------------------------------------------------------------

    async def _context(self, user_id: UUID, platform: str) -> LanguageContext:
        locale = PLATFORM_LOCALE.get(platform)
        if self.context_source is None:
            return LanguageContext(locale=locale)
        try:
            return await self.context_source(user_id, platform)
        except Exception as exc:  # a nicety, like the hints
            log.warning("language context failed for %s: %s", user_id, exc)
            return LanguageContext(locale=locale)

    async def _hint_codes(self, user_id: UUID) -> Sequence[str]:
        if self.hint_source is None:
            return ()
        try:
            return await self.hint_source(user_id)
        except Exception as exc:  # hints are a nicety: never fail the note for them
            log.warning("hint source failed for %s: %s", user_id, exc)
            return ()

    async def _say(self, adapter: Adapter, msg: IncomingMessage, text: str,
                   buttons: list[list[Button]] | None = None) -> None:
        """The gateway's path for a short reply: at once, or through the outbox."""
        from bot.sender import say

        await say(adapter, msg, text, outbox=self.outbox, plain=True, buttons=buttons)


def _shown_name(m: Match, lang: str) -> str:
    """A security's name as the reader knows it: 五粮液, or NVIDIA for an English reader."""
    return m.name if is_zh(lang) and has_cjk(m.name) else m.name.split(",")[0]


def surely_english(context: LanguageContext, probs: dict[str, float]) -> bool:
    """Whether detection on the short encoder window may decide English at once: English is
    the likeliest of all languages and sure against Mandarin. Otherwise the full window
    decides (on the short one, 5 of 22 English notes were likelier Finnish, Latin or Thai,
    and a Thai note must still be refused)."""
    if not probs or max(probs, key=lambda k: probs[k]) != "en":
        return False
    try:
        return detected(context, probs) == "en"
    except LanguageUnsupported:
        return False


def short_english(raw: RawTranscript, prompt: str) -> RawTranscript:
    """An English reading from the short window, without the prompt's leaked names."""
    return RawTranscript(text=drop_prompt_leaks(raw, prompt), language="en",
                         avg_logprob=raw.avg_logprob, no_speech_prob=raw.no_speech_prob,
                         backend=raw.backend.replace(":", ":base:", 1))


def drop_prompt_leaks(raw: RawTranscript, prompt: str) -> str:
    """``raw.text`` without the prompt's names that the audio itself does not support.

    Whisper copies names from its prompt into notes that never said them, where the prompt
    joins the note: at the start of the transcript. Re-scored without the prompt, such a
    name's tokens are very unlikely (``raw.unprompted_tokens``). Only a name that opens the
    transcript is judged: a name said mid-sentence can score as low ("Is Costco more ...").
    """
    text = raw.text
    if not prompt or not raw.unprompted_tokens:
        return text
    names = {n.strip(" .") for n in prompt.split(",") if n.strip(" .")}
    cuts: list[tuple[int, int]] = []
    for name in names:
        for m in re.finditer(rf"(?<!\w){re.escape(name)}(?!\w)", text, flags=re.IGNORECASE):
            s, e = m.span()
            if re.search(r"\w", text[:s]):
                continue
            lps = [lp for a, b, lp in raw.unprompted_tokens if a < e and s < b]
            if lps and sum(lps) / len(lps) < LEAK_LOGPROB:
                cuts.append((s, e))
    for s, e in sorted(cuts, reverse=True):
        text = text[:s] + text[e:]
    if cuts:
        log.info("prompt names dropped from %r: %s", raw.text, [raw.text[s:e] for s, e in cuts])
    return re.sub(r"\s{2,}", " ", text).strip()


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
