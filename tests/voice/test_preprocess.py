"""The gateway Preprocessor: a voice note in, "Heard: ..." out, the corrected question returned;
every bad note answered with one friendly message and nothing else."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from bot.app import build_modes
from bot.gateway import Gateway
from bot.settings import load_settings
from bot.voice.backends import RawTranscript
from bot.voice.decode import Audio
from bot.voice.pipeline import VoicePipeline
from core.agent import AgentRunner
from core.errors import ConfigError, Forbidden
from core.store import Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import Attachment, ChatRef, IncomingMessage, Sender
from tests.voice.conftest import audio

CHAT = ChatRef(platform="test", chat_id="v1")
USER = uuid.uuid4()


class VoiceAdapter(RecordingAdapter):
    """RecordingAdapter whose attachments are fixture bytes; counts downloads."""

    def __init__(self, data: bytes = b"", *, fail: Exception | None = None) -> None:
        super().__init__()
        self.data = data
        self.fail = fail
        self.fetched = 0

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes:
        self.fetched += 1
        if self.fail is not None:
            raise self.fail
        return self.data


def voice(mid: str = "m1", **att: object) -> IncomingMessage:
    fields = {"kind": "voice", "file_id": "f1", "mime_type": "audio/ogg"} | att
    return IncomingMessage(platform="test", chat=CHAT, sender=Sender(platform_uid="u1"),
                           message_id=mid, attachments=[Attachment(**fields)])  # type: ignore[arg-type]


def sent(adapter: RecordingAdapter) -> list[str]:
    return [o.text for o in adapter.ops if o.kind == "send"]


async def test_voice_note_replies_heard_and_returns_the_corrected_question(
        pipeline: VoicePipeline) -> None:
    data = audio("latest_nvda_aapl.ogg")
    adapter = VoiceAdapter(data)
    query = await pipeline.preprocess(adapter, voice(size=len(data), duration_s=2.9), USER, "en")
    assert query is not None and "NVIDIA (NVDA)" in query and "Apple (AAPL)" in query
    [line] = sent(adapter)
    assert line.startswith("Heard: What's the latest on") and line.endswith("-> NVDA, AAPL")
    assert [o.kind for o in adapter.ops] == ["typing", "send"]
    assert adapter.fetched == 1


async def test_hint_source_biases_towards_the_users_watchlist(
        pipeline: VoicePipeline) -> None:
    asked: list[uuid.UUID] = []

    async def watchlist(user_id: uuid.UUID) -> list[str]:
        asked.append(user_id)
        return ["IBM", "AMD"]

    p = VoicePipeline(backend=pipeline.backend, directory=pipeline.directory(),
                      hint_source=watchlist)
    adapter = VoiceAdapter(audio("googl_amd.ogg"))
    query = await p.preprocess(adapter, voice(), USER, "en")
    assert asked == [USER] and query is not None and "Google (GOOGL)" in query


@pytest.mark.parametrize("att, key", [
    ({"size": 50 * 1024 * 1024}, "MB"),
    ({"duration_s": 1800.0}, "1800 seconds"),
])
async def test_declared_size_or_length_is_refused_before_download(
        pipeline: VoicePipeline, att: dict, key: str) -> None:  # type: ignore[type-arg]
    adapter = VoiceAdapter(audio("ict_tsla.ogg"))
    assert await pipeline.preprocess(adapter, voice(**att), USER, "en") is None
    [reply] = sent(adapter)
    assert key in reply and adapter.fetched == 0


@pytest.mark.parametrize("data, words", [
    (b"", "empty"),
    (bytes(range(256)) * 40, "couldn't play"),
])
async def test_bad_files_get_one_friendly_reply(pipeline: VoicePipeline, data: bytes,
                                                words: str) -> None:
    adapter = VoiceAdapter(data)
    assert await pipeline.preprocess(adapter, voice(filename="note.ogg"), USER, "en") is None
    [reply] = sent(adapter)
    assert words in reply and "Traceback" not in reply


async def test_chinese_note_is_answered_in_chinese_when_the_user_reads_chinese(
        pipeline: VoicePipeline) -> None:
    adapter = VoiceAdapter(audio("zh_moutai.ogg"))
    assert await pipeline.preprocess(adapter, voice(), USER, "zh") is None
    [reply] = sent(adapter)
    assert "只支持英语" in reply and "文字" in reply


async def test_wechat_recognition_is_used_without_downloading(pipeline: VoicePipeline) -> None:
    adapter = VoiceAdapter(fail=AssertionError("must not download"))
    msg = voice(mime_type="audio/amr", recognition="请问贵州茅台最近怎么样？", duration_s=3.0)
    query = await pipeline.preprocess(adapter, msg, USER, "zh")
    assert query == "请问贵州茅台 (600519.SH) 最近怎么样？"
    assert sent(adapter) == ["听到：请问贵州茅台最近怎么样？ -> 600519.SH"]
    assert adapter.fetched == 0


async def test_a_message_without_a_voice_note(pipeline: VoicePipeline) -> None:
    adapter = VoiceAdapter()
    msg = voice()
    msg.attachments[0] = Attachment(kind="image", file_id="p1")
    assert await pipeline.preprocess(adapter, msg, USER, "en") is None
    assert "no voice note" in sent(adapter)[0]


async def test_download_refused_by_the_platform(pipeline: VoicePipeline) -> None:
    adapter = VoiceAdapter(fail=Forbidden("gone"))
    assert await pipeline.preprocess(adapter, voice(), USER, "en") is None
    assert "couldn't download" in sent(adapter)[0]


class BrokenBackend:
    name = "broken"
    english_only = True

    async def transcribe(self, audio: Audio, *, prompt: str = "") -> RawTranscript:
        raise ConfigError("model files missing")

    async def aclose(self) -> None:
        return None


async def test_backend_failure_says_voice_is_unavailable(pipeline: VoicePipeline) -> None:
    p = VoicePipeline(backend=BrokenBackend(), directory=pipeline.directory())
    adapter = VoiceAdapter(audio("avgo.amr"))
    assert await p.preprocess(adapter, voice(), USER, "en") is None
    assert "can't be transcribed right now" in sent(adapter)[0]


async def test_gateway_answers_a_voice_note_like_typed_text(pg_db, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                            pipeline: VoicePipeline) -> None:
    llm = ScriptedLLM([text("NVIDIA and Apple are both up today.")])
    store = Store(pg_db, files_dir=tmp_path)
    settings = load_settings(llm_base_url="http://unused", llm_model="m", llm_plan=False)
    runner = AgentRunner(store=store, modes=build_modes(settings, ToolRegistry(), llm))  # type: ignore[arg-type]
    gw = Gateway(store=store, runner=runner, preprocess=pipeline.preprocess)
    adapter = VoiceAdapter(audio("latest_nvda_aapl.wav"))  # a clear recording (manifest)
    await adapter.start(gw.handler_for(adapter))
    await adapter.deliver(voice("v-1", mime_type="audio/wav"))
    await gw.idle()
    await gw.aclose()
    shown = adapter.visible_text(CHAT)
    assert shown[0].startswith("Heard: ") and shown[0].endswith("-> NVDA, AAPL")
    assert shown[-1] == "NVIDIA and Apple are both up today."
    question = llm.requests[-1]["messages"][-1].content
    assert "NVIDIA (NVDA)" in question and "Apple (AAPL)" in question
