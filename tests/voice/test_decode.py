"""Decoding every platform format with PyAV, and each kind of bad file getting a friendly error."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import wave

import numpy as np
import pytest

from bot.voice.decode import (
    SAMPLE_RATE,
    AudioEmpty,
    AudioError,
    AudioSilent,
    AudioTooLarge,
    AudioTooLong,
    AudioUndecodable,
    decode,
    probe,
)
from core.errors import InputError
from tests.voice.conftest import audio, manifest

FORMATS = ["latest_nvda_aapl.ogg", "latest_nvda_aapl.amr", "latest_nvda_aapl.mp3",
           "latest_nvda_aapl.m4a", "latest_nvda_aapl.webm", "latest_nvda_aapl.wav",
           "latest_nvda_aapl_8k.wav"]


def _wav(samples: np.ndarray, rate: int = SAMPLE_RATE) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((samples * 32767).astype("<i2").tobytes())
    return buf.getvalue()


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_decodes_to_16k_mono_float32(name: str) -> None:
    got = decode(audio(name))
    assert got.samples.dtype == np.float32 and got.samples.ndim == 1
    assert got.sample_rate == SAMPLE_RATE
    assert 2.5 < got.duration_s < 3.3  # the same sentence in every container
    assert 0.05 < float(np.abs(got.samples).max()) <= 1.0


def test_wechat_amr_and_8k_wav_are_resampled_from_8k() -> None:
    assert decode(audio("latest_nvda_aapl.amr")).source_rate == 8000
    wav8 = decode(audio("latest_nvda_aapl_8k.wav"))
    assert wav8.source_rate == 8000 and wav8.codec == "pcm_s16le"
    assert abs(wav8.samples.size - wav8.duration_s * SAMPLE_RATE) < 2


def test_all_committed_fixtures_decode_and_stay_small() -> None:
    total = 0
    for note in manifest():
        data = audio(note["file"])
        total += len(data)
        assert decode(data).duration_s > 1.0
    assert total < 2 * 1024 * 1024


def test_zero_bytes_is_empty() -> None:
    with pytest.raises(AudioEmpty) as err:
        decode(b"")
    assert "empty" in err.value.message("en")
    assert isinstance(err.value, InputError)


def test_random_bytes_named_ogg_are_undecodable() -> None:
    rng = np.random.default_rng(7)
    with pytest.raises(AudioUndecodable) as err:
        decode(rng.bytes(20_000))
    assert "couldn't play" in err.value.message("en")
    assert "无法" in err.value.message("zh")


def test_ogg_header_with_garbage_after_it_is_undecodable_or_short() -> None:
    data = audio("latest_nvda_aapl.ogg")[:200] + os.urandom(5000)
    with pytest.raises(AudioError):
        decode(data)


def test_real_thirty_minute_amr_is_refused_by_its_declared_duration() -> None:
    # a genuine 30-minute AMR-NB file: one 20 ms frame of the fixture repeated 90,000 times
    amr = audio("latest_nvda_aapl.amr")
    frame = amr[6:6 + 32]  # "#!AMR\n" then 32-byte 12.2 kbit/s frames
    long = b"#!AMR\n" + frame * 90_000
    assert len(long) < 3 * 1024 * 1024
    with pytest.raises(AudioTooLong) as err:
        probe(long, max_seconds=300)  # container metadata only
    assert err.value.params["seconds"] == pytest.approx(1800, rel=0.05)
    with pytest.raises(AudioTooLong) as err:
        decode(long, max_seconds=300)
    message = err.value.message("en")
    assert "seconds long" in message and "at most 300 seconds" in message
    assert "最多只能识别 300 秒" in err.value.message("zh")


def test_decoding_stops_at_the_limit_when_the_length_is_not_declared() -> None:
    data = audio("latest_nvda_aapl.amr")
    with pytest.raises(AudioTooLong):
        decode(data, max_seconds=1.0)


def test_size_limit_is_checked_first() -> None:
    with pytest.raises(AudioTooLarge) as err:
        decode(audio("ict_tsla.ogg"), max_bytes=1000)
    assert "MB" in err.value.message("en")


def test_silence_is_refused() -> None:
    with pytest.raises(AudioSilent) as err:
        decode(_wav(np.zeros(SAMPLE_RATE * 2)))
    assert "silent" in err.value.message("en")


def test_a_tap_on_the_record_button_is_empty() -> None:
    tone = 0.3 * np.sin(np.linspace(0, 200, SAMPLE_RATE // 10))
    with pytest.raises(AudioEmpty):
        decode(_wav(tone))


def test_importing_the_voice_package_loads_no_audio_or_model_library() -> None:
    code = ("import sys, bot.voice, bot.voice.pipeline, bot.voice.backends, bot.voice.decode, "
            "bot.cli.transcribe, bot.benches.stt; "
            "print(sorted(m for m in ('av', 'faster_whisper', 'ctranslate2', 'torch', 'whisper')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
