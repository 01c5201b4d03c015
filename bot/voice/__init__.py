"""Voice notes: decode (PyAV), transcribe (Whisper backends), correct stock names, reply.

Importing this package is cheap: PyAV, faster-whisper and CTranslate2 load on first use, so an
idle ``bullpen serve`` does not pay for a speech model until the first voice note arrives.
"""

from bot.voice.decode import (
    Audio,
    AudioEmpty,
    AudioError,
    AudioSilent,
    AudioTooLarge,
    AudioTooLong,
    AudioUndecodable,
)

__all__ = [
    "Audio",
    "AudioEmpty",
    "AudioError",
    "AudioSilent",
    "AudioTooLarge",
    "AudioTooLong",
    "AudioUndecodable",
]
