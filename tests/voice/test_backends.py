"""Backends: the bounded worker pool, the OpenAI-compatible API through the real openai client
against a loopback server, the optional openai-whisper backend, and backend selection."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest
from aiohttp import web

from bot.voice.backends import (
    ApiBackend,
    FasterWhisperBackend,
    OpenAIWhisperBackend,
    WorkerPool,
    load_faster_whisper,
    make_backend,
)
from bot.voice.decode import TranscriptionUnavailable, decode
from bot.voice.pipeline import VoicePipeline
from core.errors import ConfigError
from tests.voice.conftest import audio


async def test_pool_runs_at_most_workers_jobs_at_once_off_the_loop() -> None:
    pool = WorkerPool(workers=2)
    running = peak = 0
    lock = threading.Lock()
    loop_thread = threading.get_ident()
    threads: set[int] = set()

    def job() -> None:
        nonlocal running, peak
        with lock:
            running += 1
            peak = max(peak, running)
            threads.add(threading.get_ident())
        time.sleep(0.05)
        with lock:
            running -= 1

    await asyncio.gather(*(pool.run(job) for _ in range(6)))
    pool.close()
    assert peak == 2 and loop_thread not in threads


async def test_a_cancelled_waiter_never_starts() -> None:
    pool = WorkerPool(workers=1)
    started: list[str] = []
    gate = threading.Event()

    def job(name: str) -> None:
        started.append(name)
        gate.wait(2)

    first = asyncio.ensure_future(pool.run(lambda: job("first")))
    await asyncio.sleep(0.05)
    second = asyncio.ensure_future(pool.run(lambda: job("second")))
    await asyncio.sleep(0.05)
    assert pool.waiting == 1
    second.cancel()
    gate.set()
    await first
    with pytest.raises(asyncio.CancelledError):
        await second
    pool.close()
    assert started == ["first"] and pool.waiting == 0


def test_faster_whisper_model_loads_once_per_process(backend: FasterWhisperBackend) -> None:
    other = FasterWhisperBackend(workers=1, compute_type=backend.compute_type,
                                 cpu_threads=backend.cpu_threads)
    assert other._model() is backend._model() is load_faster_whisper(
        None, compute_type=backend.compute_type, cpu_threads=backend.cpu_threads)
    assert backend.loaded and backend.english_only


def test_a_model_name_that_is_not_on_disk_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="cannot load Whisper model"):
        load_faster_whisper("/nonexistent/whisper-model")


def test_backend_selection() -> None:
    assert isinstance(make_backend(), FasterWhisperBackend)
    assert isinstance(make_backend("openai-whisper"), OpenAIWhisperBackend)
    api = make_backend("api", api_base_url="http://127.0.0.1:1/v1", model="whisper-large-v3")
    assert isinstance(api, ApiBackend) and api.model == "whisper-large-v3"
    with pytest.raises(ConfigError):
        make_backend("api")
    with pytest.raises(ConfigError):
        make_backend("sphinx")


def test_pipeline_from_settings_reads_the_voice_fields() -> None:
    settings = SimpleNamespace(whisper_backend="api", whisper_model="whisper-1",
                               whisper_api_base_url="http://127.0.0.1:9/v1",
                               whisper_api_key=None, voice_max_seconds=60.0,
                               voice_max_bytes=1_000_000, voice_workers=3)
    p = VoicePipeline.from_settings(settings)
    assert isinstance(p.backend, ApiBackend) and p.backend.pool.workers == 3
    assert (p.max_seconds, p.max_bytes) == (60.0, 1_000_000)
    default = VoicePipeline.from_settings(SimpleNamespace())
    assert isinstance(default.backend, FasterWhisperBackend)
    assert (default.max_seconds, default.max_bytes) == (300.0, 20 * 1024 * 1024)


@pytest.mark.skipif(not OpenAIWhisperBackend.available(),
                    reason="openai-whisper (optional extra '.[whisper]', PyTorch) not installed")
async def test_openai_whisper_backend_transcribes_a_fixture() -> None:  # pragma: no cover
    b = OpenAIWhisperBackend(model="tiny.en")
    try:
        raw = await b.transcribe(decode(audio("boeing_slow.amr")), prompt="Boeing.")
    except ConfigError as exc:
        pytest.skip(f"openai-whisper model not available offline: {exc}")
    finally:
        await b.aclose()
    assert "boeing" in raw.text.lower()


def test_openai_whisper_missing_is_a_clear_config_error() -> None:
    if OpenAIWhisperBackend.available():
        pytest.skip("openai-whisper is installed")
    with pytest.raises(ConfigError, match=r"pip install '\.\[whisper\]'"):
        OpenAIWhisperBackend()._model()


# --- an OpenAI-compatible transcription server on loopback ------------------------------------


class FakeSTT:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail = 0

    async def handle(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        assert isinstance(upload, web.FileField)
        body = upload.file.read()
        self.requests.append({"model": form.get("model"), "prompt": form.get("prompt"),
                              "format": form.get("response_format"),
                              "filename": upload.filename, "bytes": body,
                              "auth": request.headers.get("Authorization")})
        if self.fail:
            self.fail -= 1
            return web.json_response({"error": {"message": "boom"}}, status=500)
        return web.json_response({
            "text": " What's the latest on then video and apple?", "language": "english",
            "duration": 2.9,
            "segments": [{"id": 0, "seek": 0, "start": 0.0, "end": 2.9, "text": "x",
                          "tokens": [1], "temperature": 0.0, "avg_logprob": -0.3,
                          "compression_ratio": 1.0, "no_speech_prob": 0.01}]})


@pytest.fixture
async def stt_server() -> AsyncIterator[tuple[FakeSTT, str]]:
    fake = FakeSTT()
    app = web.Application()
    app.router.add_post("/v1/audio/transcriptions", fake.handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        yield fake, f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


async def test_api_backend_through_the_openai_client(stt_server, pipeline) -> None:  # type: ignore[no-untyped-def]
    fake, url = stt_server
    api = ApiBackend(base_url=url, api_key="sk-test", model="whisper-1", max_retries=0)
    p = VoicePipeline(backend=api, directory=pipeline.directory())
    try:
        t = await p.transcribe(audio("latest_nvda_aapl.ogg"))
    finally:
        await p.aclose()
    [req] = fake.requests
    assert req["model"] == "whisper-1" and req["format"] == "verbose_json"
    assert req["auth"] == "Bearer sk-test" and req["bytes"][:4] == b"RIFF"
    assert req["prompt"].startswith("NVIDIA, Tesla, Apple")
    assert t.source == "api" and t.language == "en"
    assert t.query == "What's the latest on NVIDIA (NVDA) and Apple (AAPL)?"


async def test_api_failure_is_transcription_unavailable(stt_server) -> None:  # type: ignore[no-untyped-def]
    fake, url = stt_server
    fake.fail = 1
    api = ApiBackend(base_url=url, api_key="k", max_retries=0)
    try:
        with pytest.raises(TranscriptionUnavailable) as err:
            await api.transcribe(decode(audio("avgo.amr")))
    finally:
        await api.aclose()
    assert "can't be transcribed right now" in err.value.message("en")
