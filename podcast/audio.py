"""A whole podcast episode as one audio file: each turn spoken by its speaker's voice over the
configured speech endpoint, joined with short pauses, encoded once (MP3 via PyAV)."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from core.llm.speech import SpeechClient
from core.types import OutgoingFile

RATE = 24_000
PAUSE_S = 0.35


def _decode(data: bytes) -> npt.NDArray[np.float32]:
    """Any audio the endpoint returned, as mono float32 at RATE."""
    import av  # PyAV (FFmpeg) only when an episode is made: importing the bot stays light

    container: Any
    with av.open(io.BytesIO(data)) as container:
        resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE)
        chunks = []
        for frame in container.decode(audio=0):
            for out in resampler.resample(frame):
                chunks.append(out.to_ndarray().reshape(-1))
        for out in resampler.resample(None):
            chunks.append(out.to_ndarray().reshape(-1))
    return np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)


def _encode_mp3(samples: npt.NDArray[np.float32]) -> bytes:
    import av

    out = io.BytesIO()
    with av.open(out, "w", format="mp3") as container:
        stream: Any = container.add_stream("libmp3lame", rate=RATE, layout="mono")
        stream.bit_rate = 64_000
        step = 1152 * 8
        pcm = samples.astype(np.float32)
        for start in range(0, len(pcm), step):
            block = pcm[start:start + step].reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(block, format="flt", layout="mono")
            frame.sample_rate = RATE
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return out.getvalue()


async def episode_audio(turns: Sequence[tuple[str, str]], *, client: SpeechClient,
                        voices: dict[str, str], filename: str = "episode.mp3",
                        concurrency: int = 4) -> OutgoingFile:
    """`turns` as (speaker, text), in order; `voices` maps a speaker to its voice. Raises the
    speech client's `LLMError` when a turn cannot be spoken (an episode with a hole in it is
    not sent)."""
    sem = asyncio.Semaphore(concurrency)
    default = next(iter(voices.values()), "alloy")

    async def speak(speaker: str, text: str) -> bytes:
        async with sem:
            return await client.speak(text, voice=voices.get(speaker, default))

    clips = await asyncio.gather(*(speak(s, t) for s, t in turns if t.strip()))
    pause = np.zeros(int(PAUSE_S * RATE), dtype=np.float32)
    parts: list[npt.NDArray[np.float32]] = []
    for data in clips:
        parts += [await asyncio.to_thread(_decode, data), pause]
    samples = np.concatenate(parts) if parts else pause
    mp3 = await asyncio.to_thread(_encode_mp3, samples)
    return OutgoingFile(kind="document", filename=filename, data=mp3, mime_type="audio/mpeg",
                        caption="")
