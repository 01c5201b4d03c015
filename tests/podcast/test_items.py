"""The podcast delivery: summary, script files, PDF, and the episode audio over a loopback
speech endpoint (the real openai client)."""

from __future__ import annotations

import json

import pytest

from core.llm.speech import SpeechClient, SpeechProfile
from core.types import OutgoingFile, Reply
from podcast import PodcastResult, produce_podcast
from podcast.items import podcast_items
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture(scope="module")
async def episode() -> PodcastResult:
    return await produce_podcast(["NVDA", "AAPL"], lang="en")


async def test_summary_script_files_and_pdf(episode: PodcastResult) -> None:
    items = await podcast_items(episode, lang="en", pdf=True)
    summary, *files = items
    assert isinstance(summary, Reply) and "Daily podcast" in summary.text
    assert "NVIDIA Corp (NVDA)" in summary.text and "Not investment advice" in summary.text
    assert "ticker:" not in summary.text and "• Opening" in summary.text  # titles, not ids
    assert all(isinstance(f, OutgoingFile) for f in files)
    by_name = {f.filename: f for f in files if isinstance(f, OutgoingFile)}
    assert json.loads(by_name["script.json"].data)["user_tickers"] == ["NVDA", "AAPL"]
    assert any(n.endswith(".pdf") and f.data.startswith(b"%PDF") for n, f in by_name.items())
    assert not any(n.endswith(".mp3") for n in by_name)


async def test_the_episode_audio_in_each_speakers_voice(episode: PodcastResult) -> None:
    async with FakeOpenAI() as fake:
        speech = SpeechClient(SpeechProfile(base_url=fake.base_url))
        items = await podcast_items(episode, lang="en", speech=speech,
                                    voices={"host": "alloy", "analyst": "onyx"})
        await speech.aclose()
    audio = [i for i in items if isinstance(i, OutgoingFile) and i.filename.endswith(".mp3")]
    assert len(audio) == 1 and audio[0].mime_type == "audio/mpeg" and len(audio[0].data) > 1000
    assert len(fake.speech_requests) == len(episode.script.scripts)
    assert {r["voice"] for r in fake.speech_requests} == {"alloy", "onyx"}


async def test_audio_that_cannot_be_made_is_said_and_the_script_still_goes(
        episode: PodcastResult) -> None:
    async with FakeOpenAI() as fake:
        speech = SpeechClient(SpeechProfile(base_url=fake.base_url + "/nowhere"))
        items = await podcast_items(episode, lang="en", speech=speech, voices={"host": "a"})
        await speech.aclose()
    summary = items[0]
    assert isinstance(summary, Reply) and "No audio this time" in summary.text
    assert any(isinstance(i, OutgoingFile) and i.filename == "script.json" for i in items)
