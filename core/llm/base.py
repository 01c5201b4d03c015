"""What a streaming completion yields: text, thinking, then one final response."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.types import LLMResponse


@dataclass(frozen=True)
class TextChunk:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ThinkingChunk:
    text: str
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class Final:
    response: LLMResponse
    kind: Literal["final"] = "final"


StreamItem = TextChunk | ThinkingChunk | Final
