"""What a mode gets for one user message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol
from uuid import UUID

from core.types import ChatMessage, Usage


class Recorder(Protocol):
    """Where a mode puts what it said and what it cost (the runner persists both)."""

    async def message(self, message: ChatMessage) -> None: ...

    async def usage(self, usage: Usage) -> None: ...


@dataclass
class Turn:
    text: str
    history: list[ChatMessage]
    recorder: Recorder
    conversation_id: UUID | None = None
    user_id: UUID | None = None
    lang: str = "en"
    summary: str = ""
    options: dict[str, str] = field(default_factory=dict)  # e.g. {"plan": "1"}
