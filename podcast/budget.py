"""The podcast's token budget: what each debate may spend and what the script calls keep.

The script (one worker call per debated ticker, one refiner call) is reserved first; what is
left is shared among the debates that must run (a debate reused from today's reports costs
nothing). The share picks the level, the debate's own degradation ladder (seed 002) working
inside it:

- 0 `full debates`: the debate's usual rounds (2-3), degrading within its share;
- 1 `fewer rounds`: one round and the moderator;
- 2 `cached debates only`: no new debate; stored reports of the day or an honest section.

A worker or the refiner that no longer fits when its turn comes is replaced by the
deterministic writer (or skipped), and the notes say so.
"""

from __future__ import annotations

from dataclasses import dataclass, field

FULL_DEBATE_TOKENS = 60_000  # two rounds of four experts and the moderator, at level 0-1
ONE_ROUND_TOKENS = 15_000  # one round at the debate's cheapest level, and the moderator
WORKER_TOKENS = 6_000  # one ticker's worker call: its input (the debate, the script so far)
REFINER_TOKENS = 5_000  # the refiner: the whole script, minimal form


@dataclass(frozen=True)
class Level:
    index: int
    name: str
    rounds: tuple[int, int] | None  # (min, max) rounds a debate runs; None: the debate's own
    new_debates: bool


LEVELS: tuple[Level, ...] = (
    Level(0, "full debates", None, True),
    Level(1, "fewer rounds", (1, 1), True),
    Level(2, "cached debates only", None, False),
)


@dataclass
class Plan:
    level: Level
    per_debate: int | None  # each new debate's token budget
    script: int | None  # the script calls' share (grows by what debates leave unspent)
    degradations: list[str] = field(default_factory=list)


def plan(total: int | None, *, debates: int, workers: int, debate_default: int | None,
         offline: bool) -> Plan:
    """The level and the shares for `debates` new debates and `workers` worker calls."""
    if offline:
        return Plan(LEVELS[0], None, None)
    if total is None:
        return Plan(LEVELS[0], debate_default, None)
    script = workers * WORKER_TOKENS + REFINER_TOKENS
    left = total - script
    if debates == 0:
        return Plan(LEVELS[0], None, total)
    share = max(0, left // debates)
    if debate_default is not None:
        share = min(share, debate_default)
    if share >= FULL_DEBATE_TOKENS:
        return Plan(LEVELS[0], share, total - share * debates)
    if share >= ONE_ROUND_TOKENS:
        return Plan(LEVELS[1], share, total - share * debates, [
            f"level 1 (fewer rounds): {total:,} tokens leave {share:,} per debate for "
            f"{debates} debate(s), under the {FULL_DEBATE_TOKENS:,} two rounds need; "
            "one round each"])
    note = (f"level 2 (cached debates only): {total:,} tokens leave {share:,} per debate, "
            f"under the {ONE_ROUND_TOKENS:,} one round needs; no new debate runs")
    if total < script:
        note += f"; the script calls need about {script:,}, so some may be written by code"
    return Plan(LEVELS[2], 0, total, [note])


# --- time: what a slow model can finish (issue 35) -------------------------------------------

SCRIPT_PROMPT_TOKENS = 3_000  # a worker's prompt: the debate's summary, the script so far
SCRIPT_MAX_TOKENS = 600
ONE_ROUND_TURNS = 7  # a one-round experts debate: four experts, the moderator, judge, summary
TURN_MARGIN = 2.0
MAX_PODCAST_S = 45 * 60.0


@dataclass(frozen=True)
class PodcastPace:
    """The script calls' limit and the whole podcast's estimate at the shortest plan; `fits`
    False: too slow to finish, said up front."""

    fits: bool
    turn_timeout_s: float
    worker_s: float | None
    total_s: float | None


def pace(worker_s: float | None, debate_turn_s: float | None, *, debates: int, workers: int,
         turn_timeout_s: float, max_s: float = MAX_PODCAST_S) -> PodcastPace:
    """Whether `debates` one-round debates and `workers` script calls plus the refiner, one
    after another (a local server answers one request at a time), finish within `max_s`;
    None rates (unknown pace, a remote model): the configured limit, assumed to fit."""
    if worker_s is None or debate_turn_s is None:
        return PodcastPace(True, turn_timeout_s, None, None)
    total = debates * ONE_ROUND_TURNS * debate_turn_s + (workers + 1) * worker_s
    return PodcastPace(total <= max_s, max(turn_timeout_s, worker_s * TURN_MARGIN), worker_s,
                       total)


__all__ = [
    "FULL_DEBATE_TOKENS",
    "LEVELS",
    "MAX_PODCAST_S",
    "ONE_ROUND_TOKENS",
    "REFINER_TOKENS",
    "SCRIPT_MAX_TOKENS",
    "SCRIPT_PROMPT_TOKENS",
    "WORKER_TOKENS",
    "Level",
    "Plan",
    "PodcastPace",
    "pace",
    "plan",
]
