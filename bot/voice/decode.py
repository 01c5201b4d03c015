"""Decode a voice note with PyAV to 16 kHz mono float32, within size and duration limits.

Every container FFmpeg can probe works: OGG/Opus (Telegram, Discord), AMR-NB/WB (WeChat),
M4A/AAC, MP3, WAV and WebM. Limits are checked in the cheapest order: bytes first, then the
duration the container declares (so a 30-minute file is refused before a sample is decoded),
then the decoded duration (for files that declare none or lie). Each refusal is an
:class:`AudioError` carrying a friendly message for the user in English or Chinese.
"""

from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from core.errors import InputError
from core.words import t

log = logging.getLogger(__name__)

SAMPLE_RATE = 16_000
MIN_SECONDS = 0.3  # shorter than this is a tap on the record button, not speech
SILENCE_PEAK = 10 ** (-50 / 20)  # -50 dBFS: nothing but noise floor
DEFAULT_MAX_SECONDS = 300.0
DEFAULT_MAX_BYTES = 20 * 1024 * 1024


class AudioError(InputError):
    """A voice note that cannot be used; :meth:`message` is what to tell the user
    (the words are ``voice.<key>`` in the catalogue)."""

    key = "undecodable"

    def __init__(self, detail: str = "", **params: Any) -> None:
        super().__init__(detail or self.key)
        self.params = params

    def message(self, lang: str = "en") -> str:
        """The friendly reply, in ``lang`` (``en`` or ``zh``; English otherwise)."""
        return message_for(self.key, lang, **self.params)


class AudioEmpty(AudioError):
    """Zero bytes, or shorter than a syllable."""

    key = "empty"


class AudioTooLong(AudioError):
    """Longer than the duration limit (``seconds``, ``limit``)."""

    key = "too_long"


class AudioTooLarge(AudioError):
    """More bytes than the size limit (``mb``, ``limit_mb``)."""

    key = "too_large"


class AudioUndecodable(AudioError):
    """Not audio FFmpeg can read (random bytes, a picture, a truncated file)."""

    key = "undecodable"


class AudioSilent(AudioError):
    """Decoded fine, but nothing above the noise floor."""

    key = "silent"


class SpeechUnclear(AudioError):
    """The recogniser heard nothing usable, or was not confident (``heard``: what it guessed).

    With ``english_only`` the reply also says the model understands English only, which is
    what a note in another language sounds like to such a model: low-confidence English.
    """

    key = "unclear"

    def __init__(self, detail: str = "", *, heard: str = "", english_only: bool = False) -> None:
        super().__init__(detail or "speech not understood")
        self.heard = heard
        self.english_only = english_only

    def message(self, lang: str = "en") -> str:
        heard = self.heard.strip()
        if len(heard) > 80:
            heard = heard[:77].rstrip() + "..."
        if heard:
            heard = t("voice.heard_as", lang, heard=heard)
        return message_for("unclear_en_only" if self.english_only else "unclear", lang,
                           heard=heard)


class SpeechNotEnglish(AudioError):
    """The note is not in English and the model understands English only."""

    key = "language"


class LanguageUnsupported(AudioError):
    """Neither Mandarin nor English (Cantonese, Thai ...): the user is asked to type."""

    key = "language_other"


class NoteTooSlow(AudioError):
    """The note could not be heard within its deadline (``limit`` seconds)."""

    key = "too_slow"

    def __init__(self, detail: str = "", *, limit: float = 0.0) -> None:
        super().__init__(detail or "deadline passed", limit=limit)

    def message(self, lang: str = "en") -> str:
        return message_for(self.key, lang, limit=self.params.get("limit") or 0.0)


class TranscriptionUnavailable(AudioError):
    """The backend failed (model missing, API down); not the user's fault."""

    key = "unavailable"


class FetchFailed(AudioError):
    """The platform would not hand over the file."""

    key = "fetch_failed"


class NoVoiceNote(AudioError):
    """The message has attachments but none is a voice note or audio file."""

    key = "no_audio"


def message_for(key: str, lang: str = "en", **params: Any) -> str:
    """A voice reply by key (the ones the error classes use), e.g. for a custom error."""
    return t(f"voice.{key}", lang, **params)


@dataclass(frozen=True)
class Audio:
    """Decoded speech: ``samples`` are float32 in [-1, 1], mono, at ``SAMPLE_RATE``."""

    samples: NDArray[np.float32]
    duration_s: float
    source_rate: int = SAMPLE_RATE
    codec: str = ""
    container: str = ""

    @property
    def sample_rate(self) -> int:
        return SAMPLE_RATE

    def wav_bytes(self) -> bytes:
        """16-bit PCM WAV of the samples (what an HTTP transcription API is sent)."""
        import wave

        pcm = (np.clip(self.samples, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SAMPLE_RATE)
            w.writeframes(pcm)
        return buf.getvalue()


def check_size(size: int | None, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
    """Refuse a file by its size alone (``size`` from the platform, before downloading)."""
    if size is not None and size > max_bytes:
        raise AudioTooLarge(f"{size} bytes > {max_bytes}", mb=size / 2**20,
                            limit_mb=max_bytes / 2**20)


def check_duration(seconds: float | None, *, max_seconds: float = DEFAULT_MAX_SECONDS) -> None:
    """Refuse a note by its declared duration (from the platform or the container)."""
    if seconds is not None and seconds > max_seconds:
        raise AudioTooLong(f"{seconds:.1f} s > {max_seconds:.0f} s", seconds=seconds,
                           limit=max_seconds)


def _open(data: bytes) -> Any:
    import av

    try:
        return av.open(io.BytesIO(data), mode="r", metadata_errors="ignore")
    except (av.FFmpegError, ValueError, OSError, EOFError) as exc:
        raise AudioUndecodable(f"not a container FFmpeg can read: {exc}") from exc


def _declared_seconds(container: Any, stream: Any) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return float(container.duration) / 1_000_000.0  # AV_TIME_BASE
    return None


def probe(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES,
          max_seconds: float = DEFAULT_MAX_SECONDS) -> float | None:
    """Check the limits without decoding; returns the declared duration (None if unknown)."""
    if not data:
        raise AudioEmpty("0 bytes")
    check_size(len(data), max_bytes=max_bytes)
    container = _open(data)
    try:
        if not container.streams.audio:
            raise AudioUndecodable("no audio stream")
        seconds = _declared_seconds(container, container.streams.audio[0])
        check_duration(seconds, max_seconds=max_seconds)
        return seconds
    finally:
        container.close()


def decode(data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES,
           max_seconds: float = DEFAULT_MAX_SECONDS) -> Audio:
    """Bytes of any supported file -> :class:`Audio`; raises an :class:`AudioError` subclass.

    CPU-bound (about 1 s for five minutes of Opus): call it off the event loop.
    """
    import av

    if not data:
        raise AudioEmpty("0 bytes")
    check_size(len(data), max_bytes=max_bytes)
    container = _open(data)
    try:
        if not container.streams.audio:
            raise AudioUndecodable("no audio stream")
        stream = container.streams.audio[0]
        check_duration(_declared_seconds(container, stream), max_seconds=max_seconds)
        source_rate = int(stream.rate or 0)
        codec = stream.codec_context.name
        resampler = av.AudioResampler(format="flt", layout="mono", rate=SAMPLE_RATE)
        limit = int(max_seconds * SAMPLE_RATE)
        chunks: list[NDArray[np.float32]] = []
        total = 0
        try:
            for frame in container.decode(stream):
                for out in resampler.resample(frame):
                    arr = np.asarray(out.to_ndarray(), dtype=np.float32).reshape(-1)
                    chunks.append(arr)
                    total += arr.size
                if total > limit:  # no (or a lying) declared duration: stop decoding now
                    raise AudioTooLong("decoded past the limit", seconds=total / SAMPLE_RATE,
                                       limit=max_seconds)
            for out in resampler.resample(None):
                chunks.append(np.asarray(out.to_ndarray(), dtype=np.float32).reshape(-1))
        except (av.FFmpegError, ValueError, EOFError) as exc:
            if not chunks:
                raise AudioUndecodable(f"decoding failed: {exc}") from exc
            log.info("audio truncated after %.1f s: %s", total / SAMPLE_RATE, exc)
        fmt = container.format.name
    finally:
        container.close()
    samples = np.concatenate(chunks).astype(np.float32, copy=False) if chunks else (
        np.zeros(0, dtype=np.float32))
    duration = samples.size / SAMPLE_RATE
    if duration < MIN_SECONDS:
        raise AudioEmpty(f"{duration:.2f} s of audio")
    if duration > max_seconds:
        raise AudioTooLong("decoded past the limit", seconds=duration, limit=max_seconds)
    if not np.isfinite(samples).all():
        samples = np.nan_to_num(samples, nan=0.0, posinf=0.0, neginf=0.0)
    if float(np.max(np.abs(samples))) < SILENCE_PEAK:
        raise AudioSilent(f"peak below {SILENCE_PEAK:.5f}")
    return Audio(samples=samples, duration_s=duration, source_rate=source_rate, codec=codec,
                 container=fmt)
