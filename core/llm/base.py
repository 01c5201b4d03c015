"""What a streaming completion yields: text, thinking, then one final response."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.errors import LLMError
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


class AllProfilesFailed(LLMError):
    """Every profile of a role's chain failed: `reasons` has each one's (the log shows them;
    the person is told in their language, `core.agent.runner.llm_failure`)."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("every model profile failed (" + "; ".join(reasons) + ")")
        self.reasons = reasons
