"""What a mode gets for one user message: the text, the history, and the typed request a
command or the usage gate made of it (`TurnOptions`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol
from uuid import UUID

from core.errors import InputError
from core.types import ChatMessage, Usage

Intent = Literal["ict", "plan", "chart", "podcast"]
Panel = Literal["experts", "bull_bear"]


class Recorder(Protocol):
    """Where a mode puts what it said and what it cost (the runner persists both)."""

    async def message(self, message: ChatMessage) -> None: ...

    async def usage(self, usage: Usage) -> None: ...


@dataclass(frozen=True)
class TurnOptions:
    """What was asked beyond the text, typed: a command's reading of its arguments (`/ict`,
    `/plan`, `/chart`, `/podcast`), the debate's flags, and the usage gate's degradation. Every
    field is optional; a mode reads the ones it knows and the text decides the rest."""

    # a command's job (the offline analyst answers it without guessing from the text)
    intent: Intent | None = None
    symbol: str | None = None  # a command's argument, read as one instrument
    interval: str | None = None  # bar interval: the chat's timeframe (ICT, plan)
    period: str | None = None  # a chart's range ("6mo")
    include_current_bar: bool = False  # plan: the still-forming bar counts
    tickers: tuple[str, ...] = ()  # podcast: the episode's tickers, in order
    pdf: bool = False  # podcast: a PDF of the script too
    question: str | None = None  # debate: the question about `symbol`
    panel: Panel | None = None  # debate: the panel (else the text's flag, else experts)
    fresh: bool = False  # debate: do not reuse today's report
    max_rounds: int | None = None  # debate: at most this many rounds
    # the usage gate's degradation (core.usage_gate.degraded_options): fewer tool turns, and
    # the role whose cheaper profile answers
    max_turns: int | None = None
    profile_role: str | None = None

    def __post_init__(self) -> None:
        for name in ("max_rounds", "max_turns"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise InputError(f"{name} must be at least 1, not {value}")


@dataclass
class Turn:
    text: str
    history: list[ChatMessage]
    recorder: Recorder
    conversation_id: UUID | None = None
    user_id: UUID | None = None
    lang: str = "en"
    summary: str = ""
    options: TurnOptions = field(default_factory=TurnOptions)
