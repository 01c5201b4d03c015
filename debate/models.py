"""The debate artifacts (pydantic): sources, expert rounds (`TickerDebateOutput`, seed 001),
the bull/bear record (seed 000) and the `DebateArtifact` wrapper that carries either.

`TickerDebateOutput` keeps the seed's four top-level fields (ticker, date, rounds, conclusion)
so later steps (the podcast script) can consume it unchanged; per-turn additions
(`dropped_sources`, `failed`, `error`) only appear when they say something.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, model_serializer

from core.agent.turn import Panel

Action = Literal["BUY", "HOLD", "SELL"]
ACTIONS: tuple[Action, ...] = ("BUY", "HOLD", "SELL")
ExpertName = Literal["fundamental", "risk", "growth", "sentiment"]
EXPERTS: tuple[ExpertName, ...] = ("fundamental", "risk", "growth", "sentiment")


def parse_action(value: object) -> Action:
    """BUY/HOLD/SELL from what a model or a user wrote (case and synonyms forgiven)."""
    text = str(value).strip().upper()
    aliases = {"LONG": "BUY", "ACCUMULATE": "BUY", "OVERWEIGHT": "BUY", "买入": "BUY",
               "NEUTRAL": "HOLD", "WAIT": "HOLD", "持有": "HOLD", "观望": "HOLD",
               "SHORT": "SELL", "REDUCE": "SELL", "UNDERWEIGHT": "SELL", "卖出": "SELL"}
    text = aliases.get(text, text)
    for action in ACTIONS:
        if text == action:
            return action
    raise ValueError(f"action must be BUY, HOLD or SELL, not {value!r}")


def parse_confidence(value: object) -> float:
    """A confidence in [0, 1]; a percentage (62 or "62%") is read as 0.62."""
    text = str(value).strip().rstrip("%")
    conf = float(text)
    if 1.0 < conf <= 100.0:
        conf /= 100.0
    if not 0.0 <= conf <= 1.0:
        raise ValueError(f"confidence must be between 0 and 1, not {value!r}")
    return round(conf, 4)


def parse_score10(value: object) -> int:
    """A 1-10 judge confidence; 0.7 (a fraction) is read as 7."""
    score = float(str(value).strip().split("/")[0])
    if 0.0 < score <= 1.0 and not float(score).is_integer():
        score *= 10.0
    return max(1, min(10, round(score)))


LenientAction = Annotated[Action, BeforeValidator(parse_action)]
LenientConfidence = Annotated[float, BeforeValidator(parse_confidence)]


# --- sources (seed 001 `Source`, plus `data` for our computed tool results) -------------------


class ArticleSource(BaseModel):
    type: Literal["article"] = "article"
    pk: str
    title: str = ""


class ChartSource(BaseModel):
    type: Literal["chart"] = "chart"
    ticker: str
    start_date: str
    end_date: str


class EventSource(BaseModel):
    type: Literal["event"] = "event"
    id: str
    title: str = ""
    date: str = ""


class SecFilingSource(BaseModel):
    type: Literal["sec_filing"] = "sec_filing"
    ticker: str
    form: str
    filed_date: str = ""
    accession_number: str


class DataRef(BaseModel):
    """A tool result the debate read: computed numbers (quotes, indicators, financials)."""

    type: Literal["data"] = "data"
    tool: str
    ref: str = Field(description="the call's arguments, canonical JSON")
    title: str = ""


Source = Annotated[
    ArticleSource | ChartSource | EventSource | SecFilingSource | DataRef,
    Field(discriminator="type"),
]


class DroppedSource(BaseModel):
    """A source a model cited that the code could not find among those it was given."""

    raw: str
    reason: str


# --- experts panel (seed 001) -------------------------------------------------------------------


class ExpertReply(BaseModel):
    """What an expert model must answer with (validated; one repair request when not)."""

    text: str = Field(min_length=1)
    action: LenientAction
    confidence: LenientConfidence
    sources: list[Any] = Field(default_factory=list)


class ExpertTurn(BaseModel):
    text: str
    action: Action
    confidence: float = Field(ge=0.0, le=1.0)
    sources: list[Source] = Field(default_factory=list)
    dropped_sources: list[DroppedSource] = Field(default_factory=list)
    failed: bool = False
    error: str = ""

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key, empty in (("dropped_sources", []), ("failed", False), ("error", "")):
            if data.get(key) == empty:
                data.pop(key, None)
        return data

    @classmethod
    def failure(cls, error: str) -> ExpertTurn:
        """A turn that produced nothing usable: it counts as HOLD at confidence 0."""
        return cls(text="", action="HOLD", confidence=0.0, failed=True, error=error)


class DebateRound(BaseModel):
    round: int = Field(ge=1)
    fundamental: ExpertTurn | None = None
    risk: ExpertTurn | None = None
    growth: ExpertTurn | None = None
    sentiment: ExpertTurn | None = None

    @model_serializer(mode="wrap")
    def _seated(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}

    def turns(self) -> dict[ExpertName, ExpertTurn]:
        """The seated experts' turns, in panel order."""
        out: dict[ExpertName, ExpertTurn] = {}
        for name in EXPERTS:
            turn = getattr(self, name)
            if turn is not None:
                out[name] = turn
        return out


class Conclusion(BaseModel):
    text: str
    action: Action
    confidence: float = Field(ge=0.0, le=1.0)
    consensus: bool = False
    # the parts of a partly failed debate that are missing (only present when some are)
    missing: list[str] = Field(default_factory=list)
    # what the debate's inputs did to the verdict (fundamentals years older than the price:
    # confidence lowered, or no BUY/SELL verdict), in the debate's language
    caveats: list[str] = Field(default_factory=list)
    withheld: bool = False  # the panel's BUY/SELL was withheld for want of usable inputs

    @model_serializer(mode="wrap")
    def _compact(self, handler: Any) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("missing", "caveats", "withheld"):
            if not data.get(key):
                data.pop(key, None)
        return data


class TickerDebateOutput(BaseModel):
    """Seed 001's debate JSON: one ticker, its rounds, the moderator's conclusion."""

    ticker: str
    date: str = Field(description="YYYYMMDD")
    rounds: list[DebateRound]
    conclusion: Conclusion


class ModeratorReply(BaseModel):
    decision: Annotated[Literal["continue", "stop"], BeforeValidator(
        lambda v: {"end": "stop"}.get(str(v).strip().lower(), str(v).strip().lower()))]
    reason: str = ""
    text: str = Field(min_length=1, description="the conclusion, written for the user")
    action: LenientAction


# --- bull / bear panel (seed 000) ---------------------------------------------------------------


class Entity(BaseModel):
    type: str = "stock"
    code: str = ""
    name: str = ""


class PlannedCall(BaseModel):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Hypothesis(BaseModel):
    hypothesis: str = Field(min_length=1, description="a testable H0")
    question_type: Literal["single_stock", "comparison", "sector", "general"] = "single_stock"
    entities: list[Entity] = Field(default_factory=list)
    data_plan: list[PlannedCall] = Field(default_factory=list,
                                         description="at most 20 calls; the code cuts the rest")
    pro_framing: str = ""
    con_framing: str = ""
    verdict_options: list[str] = Field(min_length=3, max_length=3)


class ArgumentReply(BaseModel):
    text: str = Field(min_length=1)
    key_points: list[str] = Field(default_factory=list)
    sources: list[Any] = Field(default_factory=list)


Side = Literal["bull", "bear"]
Phase = Literal["opening", "rebuttal"]


class Argument(BaseModel):
    analyst: str = Field(description="bull_1, bull_2, bear_1, bear_2")
    side: Side
    phase: Phase
    profile: str = Field(description="the LLM role (model profile) that wrote it")
    text: str
    key_points: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    dropped_sources: list[DroppedSource] = Field(default_factory=list)
    failed: bool = False
    error: str = ""


class VerdictReply(BaseModel):
    verdict: str = Field(min_length=1)
    action: LenientAction
    confidence: Annotated[int, BeforeValidator(parse_score10)] = Field(ge=1, le=10)
    reasons: list[str] = Field(min_length=1)
    key_risks: list[str] = Field(default_factory=list)
    strongest_opposing_data_point: str = ""
    time_horizon: str = ""


class DataItem(BaseModel):
    """One planned tool call as the code executed it (no LLM per call)."""

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    ok: bool
    source_id: str = ""
    note: str = ""


class BullBearOutput(BaseModel):
    ticker: str
    date: str
    question: str
    hypothesis: Hypothesis
    data: list[DataItem] = Field(default_factory=list)
    openings: list[Argument] = Field(default_factory=list)
    rebuttals: list[Argument] = Field(default_factory=list)
    judge_order: list[str] = Field(
        default_factory=list, description="argument ids in the shuffled order the judge saw")
    verdict: VerdictReply | None = None
    summary: str = ""
    conclusion: Conclusion


# --- the wrapper ---------------------------------------------------------------------------------


class Metric(BaseModel):
    """A number computed in code (never by a model), with its display form."""

    key: str
    label: str
    value: float | None
    display: str


class RoleUsage(BaseModel):
    seat: str
    role: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class DebateMeta(BaseModel):
    panel: Panel
    ticker: str
    name: str = ""
    market: str = ""
    currency: str = ""
    question: str = ""
    lang: str = "en"
    generated_at: datetime
    label: str = Field(default="", description="e.g. offline experts, when no model spoke")
    offline: bool = False
    data_as_of: str = ""
    data_source: str = ""
    rounds_planned: int = 0
    rounds_run: int = 0
    stop_reason: str = ""
    budget_tokens: int | None = None
    tokens_used: int = 0
    degradation_level: int = 0
    degradations: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    usage: list[RoleUsage] = Field(default_factory=list)


class DebateArtifact(BaseModel):
    meta: DebateMeta
    metrics: list[Metric] = Field(default_factory=list)
    experts: TickerDebateOutput | None = None
    bull_bear: BullBearOutput | None = None

    @property
    def conclusion(self) -> Conclusion:
        if self.experts is not None:
            return self.experts.conclusion
        assert self.bull_bear is not None
        return self.bull_bear.conclusion
