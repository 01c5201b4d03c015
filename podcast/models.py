"""The podcast's typed shapes: the script (seed 001 §7.4: date, user_tickers, chapter, scripts),
the market figures it is opened with, and what a run reports beside it (notes, budget, status
per ticker).

A turn's `speaker` is the localized label (host/analyst, 主持人/分析师); `role_of` maps a
label back to its role (for voices). `PodcastScript` checks its own invariants: ids 0..n-1 in
order, chapters covering them contiguously.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from core import words
from core.errors import InputError
from debate.models import Action, ChartSource, DebateArtifact, Source

MAX_TICKERS = 10

Role = Literal["host", "analyst"]
ROLES: tuple[Role, ...] = ("host", "analyst")
# a role -> the catalogue key of the label it speaks under
SPEAKERS: dict[Role, str] = {"host": "podcast.speaker_host", "analyst": "podcast.speaker_analyst"}
_ROLE_ALIASES: dict[str, Role] = {
    "host": "host", "主持人": "host", "主持": "host", "presenter": "host", "anchor": "host",
    "analyst": "analyst", "分析师": "analyst", "分析": "analyst", "expert": "analyst",
    "commentator": "analyst",
}


def speaker(role: Role, lang: str) -> str:
    """The label a role speaks under in `lang`."""
    return words.t(SPEAKERS[role], lang)


def role_of(label: str) -> Role | None:
    """The role behind a speaker label in either language (None when it names neither)."""
    return _ROLE_ALIASES.get(label.strip().lower())


# --- the script ----------------------------------------------------------------------------


class ScriptTurn(BaseModel):
    id: int = Field(ge=0)
    speaker: str
    text: str = Field(min_length=1)
    sources: list[Source] = Field(default_factory=list)


class Chapter(BaseModel):
    name: str = Field(description="opening, theme, ticker:<CODE> (user's order), closing")
    start_id: int = Field(ge=0)
    end_id: int = Field(ge=0)


class PodcastScript(BaseModel):
    """`script.json`: seed 001 §7.4's shape."""

    date: str = Field(description="YYYYMMDD")
    user_tickers: list[str]
    chapter: list[Chapter]
    scripts: list[ScriptTurn]

    @model_validator(mode="after")
    def _contiguous(self) -> PodcastScript:
        ids = [t.id for t in self.scripts]
        if ids != list(range(len(ids))):
            raise ValueError("script ids must run 0..n-1 in order")
        nxt = 0
        for ch in self.chapter:
            if ch.start_id != nxt or ch.end_id < ch.start_id:
                raise ValueError(f"chapter {ch.name} does not continue at id {nxt}")
            nxt = ch.end_id + 1
        if nxt != len(ids):
            raise ValueError("chapters must cover every turn")
        for t in self.scripts:
            if role_of(t.speaker) is None:
                raise ValueError(f"turn {t.id}: unknown speaker {t.speaker!r}")
        return self

    def section(self, name: str) -> list[ScriptTurn]:
        """The turns of one chapter (empty when there is no such chapter)."""
        for ch in self.chapter:
            if ch.name == name:
                return self.scripts[ch.start_id:ch.end_id + 1]
        return []

    def transitions(self) -> list[int]:
        """Turn ids a refiner may edit: the first and the last turn of every chapter."""
        return sorted({i for ch in self.chapter for i in (ch.start_id, ch.end_id)})


# --- the figures the opening is built from ------------------------------------------------------


class IndexMove(BaseModel):
    """An index's last close on or before the podcast's date and its move that day."""

    code: str
    name: str
    as_of: str = Field(default="", description="YYYY-MM-DD of the last bar used")
    close: float | None = None
    change_pct: float | None = Field(default=None, description="percent: 1.25 = +1.25%")
    close_display: str = ""
    change_display: str = ""
    data_label: str = ""
    source: ChartSource | None = None
    error: str = ""


class IntradaySummary(BaseModel):
    """One session of intraday bars, summarised in code."""

    code: str
    day: str = Field(description="YYYY-MM-DD, exchange time")
    interval: str
    bars: int
    first_time: str
    last_time: str
    open: str
    high: str
    low: str
    last: str
    change_pct: str = Field(description="last vs the session's open, e.g. +1.20%")
    data_label: str = ""
    source: ChartSource


class TickerProfile(BaseModel):
    """What the directory says about a ticker: where it trades and what it belongs to."""

    given: str
    code: str
    name: str = ""
    market: str = ""
    kind: str = ""
    exchange: str = ""
    sector: str = ""
    indices: list[str] = Field(default_factory=list)


# --- what a run reports ---------------------------------------------------------------------

NoteKind = Literal["input", "offline", "degraded", "debate", "data", "worker", "repair", "drop",
                   "source", "verdict", "refiner", "edit", "rejected_edit"]
TickerState = Literal["debated", "reused", "no_verdict", "no_data", "unknown", "failed",
                      "over_budget"]
Writer = Literal["llm", "offline", "code"]


class Note(BaseModel):
    kind: NoteKind
    text: str
    ticker: str = ""
    turn_id: int | None = Field(default=None, description="a final script id (refiner notes)")

    def __str__(self) -> str:
        head = f"[{self.kind}]" + (f" {self.ticker}" if self.ticker else "") + (
            f" #{self.turn_id}" if self.turn_id is not None else "")
        return f"{head}: {self.text}"


class TickerStatus(BaseModel):
    ticker: str = Field(description="as the user gave it")
    code: str = ""
    name: str = ""
    state: TickerState
    detail: str = ""
    action: Action | None = None
    confidence: float | None = None
    data_as_of: str = ""
    writer: Writer = "code"
    turns: int = 0
    repaired: int = 0
    dropped: int = 0
    debate_level: int = 0
    debate_tokens: int = 0
    debate_calls: int = 0


class BudgetReport(BaseModel):
    total: int | None = Field(description="the podcast's token budget (None: none)")
    used: int = 0
    debate_tokens: int = 0
    script_tokens: int = 0
    per_debate: int | None = None
    level: int = 0
    level_name: str = "full debates"
    degradations: list[str] = Field(default_factory=list)


class PodcastResult(BaseModel):
    script: PodcastScript
    notes: list[Note] = Field(default_factory=list)
    budget: BudgetReport
    llm_calls: int = 0
    tickers: list[TickerStatus] = Field(default_factory=list)
    offline: bool = False
    label: str = ""
    markets: list[IndexMove] = Field(default_factory=list)
    debates: dict[str, DebateArtifact] = Field(
        default_factory=dict, description="the debate behind each section, by code")

    def summary(self) -> dict[str, Any]:
        """Everything but the debate artifacts, as plain JSON data."""
        return self.model_dump(mode="json", exclude={"debates"})


class PodcastError(InputError):
    """A podcast cannot be made from this input; `message(lang)` says why (the catalogue's
    `key`, filled from `values`); `str(error)` is the English sentence."""

    def __init__(self, key: str, **values: object) -> None:
        super().__init__(words.t(key, "en", **values))
        self.key = key
        self.values = values

    def message(self, lang: str) -> str:
        return words.t(self.key, lang, **self.values)
