"""The per-debate token budget: estimates, reservations, usage per seat, degradation levels.

Planning (ADR-010 of seed 002): before a debate, and again before each round, the panel asks
whether what remains affords the next step at the current level; when it does not it degrades
one level (shorter context, then cheaper profiles, then no tool rounds) and, at the last level,
runs fewer rounds. Every call also reserves its worst case (estimated prompt + `max_tokens`)
so parallel turns can never overspend together; the closing call's share is held back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from core.errors import BullpenError
from core.types import ChatMessage, Usage
from core.words import t
from debate.models import RoleUsage


class BudgetExhausted(BullpenError):
    """A call would take the debate past its token budget."""


@dataclass(frozen=True)
class Level:
    """One step of the degradation ladder (each keeps the cuts of the ones before); every step
    also shortens the answers it allows, so each one costs fewer tokens than the last."""

    index: int
    name: str
    context_rounds: int | None  # previous rounds a turn sees; None = all
    text_chars: int  # how much of each earlier turn's text a transcript keeps
    pack_chars: int  # data pack size for the bull/bear analysts
    cheap: bool  # debaters on the cheap profile
    tool_rounds: int
    max_tokens: int


LEVELS: tuple[Level, ...] = (
    Level(0, "full", None, 1500, 30_000, False, 3, 900),
    Level(1, "shorter context", 1, 500, 10_000, False, 3, 600),
    Level(2, "cheaper profiles", 1, 500, 8_000, True, 1, 500),
    Level(3, "no tool rounds", 1, 300, 6_000, True, 0, 400),
)


def level_name(level: Level, lang: str) -> str:
    """A level's name in the reader's language (`Level.name` is the English one, for logs)."""
    return t(_LEVEL_WORDS[level.index], lang)


def level_names(index: int, lang: str) -> str:
    """The cuts taken to reach level `index` (each level keeps the ones before), as a list."""
    return t("grammar.list_sep", lang).join(level_name(lv, lang) for lv in LEVELS[1:index + 1])


_LEVEL_WORDS = ("debate.level_full", "debate.level_shorter_context",
                "debate.level_cheaper_profiles", "debate.level_no_tool_rounds")  # LEVELS, in order
TOOL_RESULT_EST = 1_500  # expected tokens a tool round adds to a prompt
MESSAGE_OVERHEAD = 4


def estimate_tokens(text: str) -> int:
    """A conservative token count: ~4 ASCII characters a token, one per other character."""
    ascii_chars = sum(1 for ch in text if ord(ch) < 128)
    return ascii_chars // 4 + (len(text) - ascii_chars) + 1


def estimate_messages(messages: Sequence[ChatMessage],
                      tools: Sequence[dict[str, Any]] | None = None) -> int:
    total = sum(estimate_tokens(m.content) + MESSAGE_OVERHEAD
                + sum(estimate_tokens(c.arguments) for c in m.tool_calls) for m in messages)
    if tools:
        total += estimate_tokens(json.dumps(list(tools)))
    return total


class Budget:
    """Tokens used and in flight against an optional total; usage per seat."""

    def __init__(self, total: int | None) -> None:
        self.total = total
        self.used = 0
        self.inflight = 0
        self._seats: dict[str, RoleUsage] = {}

    def remaining(self) -> int | None:
        return None if self.total is None else self.total - self.used - self.inflight

    def fits(self, tokens: int, *, floor: int = 0) -> bool:
        """Whether `tokens` more leave at least `floor` of the budget untouched."""
        rem = self.remaining()
        return rem is None or tokens <= rem - floor

    @contextmanager
    def reserve(self, tokens: int, *, floor: int = 0) -> Iterator[None]:
        """Hold `tokens` for one call; raises BudgetExhausted when they do not fit."""
        if not self.fits(tokens, floor=floor):
            raise BudgetExhausted(
                f"the token budget ({self.total:,}) has {self.remaining():,} left; this call "
                f"may need {tokens:,}")
        self.inflight += tokens
        try:
            yield
        finally:
            self.inflight -= tokens

    def charge(self, seat: str, role: str, usage: Usage) -> None:
        self.used += usage.total_tokens
        row = self._seats.setdefault(seat, RoleUsage(seat=seat, role=role))
        row.role = role
        row.calls += 1
        row.prompt_tokens += usage.prompt_tokens
        row.completion_tokens += usage.completion_tokens
        row.cost_usd = round(row.cost_usd + usage.cost_usd, 6)

    def per_seat(self) -> list[RoleUsage]:
        return [self._seats[k] for k in sorted(self._seats)]


def choose(costs: Sequence[int], total: int | None, used: int = 0) -> int | None:
    """The first level whose projected cost fits what remains (None: none does)."""
    if total is None:
        return 0
    for i, cost in enumerate(costs):
        if used + cost <= total:
            return i
    return None


# --- time: what a slow model can finish (issue 35) -------------------------------------------

TURN_PROMPT_TOKENS = 2_500  # a debate turn's prompt at a shortened level: evidence, transcript
TURN_MAX_TOKENS = 400  # a turn's answer on a slow model (the cheapest level's)
TURN_MARGIN = 2.0  # a turn may take this many times what the pace predicts
MAX_RUN_S = 20 * 60.0  # a debate nobody waits longer for


@dataclass(frozen=True)
class PacePlan:
    """Rounds and turn limit for the model's measured pace; `rounds` None: too slow."""

    rounds: int | None
    turn_timeout_s: float
    turn_s: float | None  # one turn, expected
    total_s: float | None  # the whole debate at `rounds` (or at one round when too slow)


def pace_plan(turn_s: float | None, *, turns_per_round: int, closing_turns: int,
              max_rounds: int, turn_timeout_s: float,
              max_run_s: float = MAX_RUN_S) -> PacePlan:
    """The most rounds (down to one) whose turns, run one after another (a local server
    answers one request at a time), finish within `max_run_s`; the turn limit is what a turn
    is expected to take times `TURN_MARGIN`, never less than the configured one.

    `turn_s` None (the pace is unknown, or a remote model): the configured plan unchanged."""
    if turn_s is None:
        return PacePlan(max_rounds, turn_timeout_s, None, None)
    limit = max(turn_timeout_s, turn_s * TURN_MARGIN)

    def total(rounds: int) -> float:
        return turn_s * (turns_per_round * rounds + closing_turns)

    for rounds in range(max(max_rounds, 1), 0, -1):
        if total(rounds) <= max_run_s:
            return PacePlan(rounds, limit, turn_s, total(rounds))
    return PacePlan(None, limit, turn_s, total(1))
