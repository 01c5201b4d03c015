"""Shared fixtures for the voice tests: the committed recordings, the real bundled tiny.en model,
and one pipeline per session (the model and the symbols directory load once)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
    return FasterWhisperBackend()


@pytest.fixture(scope="session")
def pipeline(backend: FasterWhisperBackend, directory: SymbolDirectory) -> VoicePipeline:
    return VoicePipeline(backend=backend, directory=directory)
