"""The episode's audio through the real `openai` client against a loopback speech endpoint."""

from __future__ import annotations

import io

import av
import pytest

from core.errors import LLMError
from core.llm.speech import SpeechClient, SpeechProfile
from podcast.audio import episode_audio
from tests.fakes.openai_server import FakeOpenAI


async def test_each_turn_in_its_speakers_voice_joined_into_one_mp3() -> None:
    async with FakeOpenAI() as fake:
        client = SpeechClient(SpeechProfile(base_url=fake.base_url, model="tts-test"))
        turns = [("host", "Good morning."), ("analyst", "NVDA closed at 138.85."),
                 ("host", ""), ("host", "That is all for today.")]
        got = await episode_audio(turns, client=client,
                                  voices={"host": "alloy", "analyst": "onyx"})
        await client.aclose()
    # spoken concurrently: every non-empty turn once, in its speaker's voice
    assert sorted((r["voice"], r["input"]) for r in fake.speech_requests) == [
        ("alloy", "Good morning."), ("alloy", "That is all for today."),
        ("onyx", "NVDA closed at 138.85.")]
    assert all(r["model"] == "tts-test" and r["response_format"] == "wav"
               for r in fake.speech_requests)
    assert got.mime_type == "audio/mpeg" and got.filename == "episode.mp3"
    with av.open(io.BytesIO(got.data)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name.startswith("mp3")
        seconds = sum(f.samples for f in container.decode(audio=0)) / stream.rate
    # three clips (0.78 s, 1.32 s, 1.32 s of tone) and three pauses of 0.35 s
    assert 4.0 < seconds < 5.0


async def test_a_turn_the_endpoint_refuses_is_an_error_not_a_gap() -> None:
    async with FakeOpenAI() as fake:
        client = SpeechClient(SpeechProfile(base_url=fake.base_url))
        with pytest.raises(LLMError, match="HTTP 500"):
            await episode_audio([("host", "Hello"), ("analyst", "FAIL here")], client=client,
                                voices={"host": "a", "analyst": "b"})
        await client.aclose()
