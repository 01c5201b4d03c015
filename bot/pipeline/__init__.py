"""The message path as named stages over a typed context, built in order by `build_pipeline`.

1. record: stored first, idempotent; database outages (the spool, the messages not stored
   yet) -- `record.Record`; then dedupe: a duplicate dropped unless nobody answers it --
   `dedupe.Dedupe`
2. held_deliveries: the chat wrote, so what the outbox held goes first -- `HeldDeliveries`
3. admission: access, admins always -- `spend.Admission` (called by `arrival.Arrivals`, which
   also ignores what is not for the bot and creates the person on first sight)
4. routing: a voice note to the preprocessor, a command to its declaration, the rest is a
   question -- `routing.Routing`
5. rate_limits: the person's rates, before anything is queued -- `spend.Rates`
6. chat_queue: one worker per chat answers in order; /stop -- `ChatQueue`
7. spend: the usage gate's decision, the conversations' token budget -- `spend.Spend`
8. one_run_per_person: the person's turn across chats and processes -- `PersonTurns`
9. answer: the run through the renderer, the message's states -- `answer.Answer`
10. resume: the sweeper takes what a stopped process left -- `resume.Resume`

A stage added by `added=` (a `context.Stage`: a name, its own state, an async call on the
message's `Arrival`) runs after admission, before routing, in the order given; it is listed in
`on` after the built-in ones.

The collaborators come in through the constructors; the `Limits` object says how much each
limiting stage allows (`Limits()`: everyone, unlimited, in parallel). `bot.gateway.Gateway` is
the shell that builds the pipeline and holds it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.pipeline.answer import Answer, OnEvent, Preprocessor
from bot.pipeline.arrival import Arrivals
from bot.pipeline.chat_queue import ChatQueue
from bot.pipeline.context import Epoch, Job, Stage
from bot.pipeline.dedupe import Dedupe
from bot.pipeline.held import HeldDeliveries
from bot.pipeline.limits import Limits
from bot.pipeline.outcome import Outcome
from bot.pipeline.person_turns import PersonTurns
from bot.pipeline.record import SPOOL_AFTER_S, Record
from bot.pipeline.resume import STALE_S, TOO_OLD_S, Resume
from bot.pipeline.routing import Dispatch, Routing
from bot.pipeline.spend import Admission, Rates, Spend
from bot.spool import Spool
from core.agent.runner import AgentRunner
from core.ports import Adapter, Outbox
from core.store import Store
from core.store.inbound import Inbound
from core.types import IncomingMessage

if TYPE_CHECKING:
    from bot.settings import Settings

STAGES = ("record", "held_deliveries", "admission", "routing", "rate_limits", "chat_queue",
          "spend", "one_run_per_person", "answer", "resume")
# The stages a named setting may switch off (the Settings field; false turns it off), and what
# that costs; the others are the path itself. `build_pipeline`'s table says why, stage by stage.
SWITCHES: dict[str, str] = {
    "held_deliveries": "stage_held_deliveries",  # BULLPEN_STAGE_HELD_DELIVERIES
    "admission": "stage_admission",  # BULLPEN_STAGE_ADMISSION
    "rate_limits": "stage_rate_limits",  # BULLPEN_STAGE_RATE_LIMITS
    "spend": "stage_spend",  # BULLPEN_STAGE_SPEND
    "one_run_per_person": "one_run_per_person",  # BULLPEN_ONE_RUN_PER_PERSON
    "resume": "stage_resume",  # BULLPEN_STAGE_RESUME
}
ALWAYS_ON = frozenset(STAGES) - frozenset(SWITCHES)  # record (and dedupe), routing, the queue,
# the answer


def switched_off(settings: Settings) -> tuple[str, ...]:
    """The stages the settings switch off, in path order (`SWITCHES`)."""
    return tuple(stage for stage in STAGES
                 if stage in SWITCHES and not getattr(settings, SWITCHES[stage]))


@dataclass(frozen=True)
class Pipeline:
    """The stages' objects, and the names of those on, in order."""

    on: tuple[str, ...]
    epoch: Epoch
    limits: Limits
    outcome: Outcome
    record: Record
    dedupe: Dedupe
    held: HeldDeliveries
    admission: Admission
    arrivals: Arrivals
    routing: Routing
    rates: Rates
    queue: ChatQueue
    spend: Spend
    persons: PersonTurns
    answer: Answer
    resume: Resume
    added: tuple[Stage, ...] = ()  # after admission, before routing (`Stage`)


def build_pipeline(*, store: Store, runner: AgentRunner, outbox: Outbox | None, limits: Limits,
                   instance: str, dispatch: Dispatch, preprocess: Preprocessor | None = None,
                   on_event: OnEvent | None = None, spool: Spool | None = None,
                   spool_after_s: float = SPOOL_AFTER_S, stale_s: float = STALE_S,
                   too_old_s: float = TOO_OLD_S, added: Sequence[Stage] = (),
                   off: Collection[str] = ()) -> Pipeline:
    """The stages in order, each on unless named in `off` (`serve`: `switched_off(settings)`,
    one named setting per stage, the way slack-bolt builds its middleware list). `dispatch`
    hands a command to its handler; `preprocess` turns a voice note into text (None: an
    attachment without text is told it is unsupported); `on_event` sees every run's events.

    | stage              | off by                              | safe to turn off?             |
    |--------------------|-------------------------------------|-------------------------------|
    | record (+ dedupe)  | never                               | no: a retry answered twice,   |
    |                    |                                     | nothing to resume from        |
    | held_deliveries    | BULLPEN_STAGE_HELD_DELIVERIES=false | yes: held replies wait for    |
    |                    |                                     | the outbox's own sender, and  |
    |                    |                                     | a new answer may overtake them|
    | admission          | BULLPEN_STAGE_ADMISSION=false       | a security layer: the         |
    |                    |                                     | allowlist and blocks go       |
    | routing            | never                               | no: it is the path            |
    | rate_limits        | BULLPEN_STAGE_RATE_LIMITS=false     | yes, a cost: floods reach the |
    |                    |                                     | model                         |
    | chat_queue         | never                               | no: order and /stop live here |
    | spend              | BULLPEN_STAGE_SPEND=false           | yes, a cost: budgets (before  |
    |                    |                                     | a run and a gated command)    |
    |                    |                                     | and the conversations' token  |
    |                    |                                     | budget are not enforced       |
    | one_run_per_person | BULLPEN_ONE_RUN_PER_PERSON=false    | yes: a person runs several    |
    |                    |                                     | answers at once               |
    | answer             | never                               | no: it is what the path is for|
    | resume             | BULLPEN_STAGE_RESUME=false          | yes, for one process that     |
    |                    |                                     | never crashes: a stopped      |
    |                    |                                     | process's messages (and one   |
    |                    |                                     | cut by an outage) stay        |
    |                    |                                     | unanswered                    |

    A name in `off` that is no stage, or one of the path's own, is refused (a misspelt switch
    is loud). The stages are built in path order; where two need each other (the record's
    next stage is dedupe, which resumes through the resume stage, which reads the record's
    spool; the chat queue runs the answer, which tells the queue when it is done) the later
    one is reached through a call made only once both exist."""
    names = (*STAGES, *(stage.name for stage in added))
    unknown = set(off) - set(names)
    if unknown:
        raise ValueError(f"no such stage: {', '.join(sorted(unknown))} (stages: {names})")
    if set(off) & ALWAYS_ON:
        raise ValueError(f"the path itself cannot be switched off: {sorted(ALWAYS_ON)}")
    epoch = Epoch()
    outcome = Outcome(store=store, outbox=outbox)

    async def dedupe_(adapter: Adapter, msg: IncomingMessage, got: Inbound, at: int) -> None:
        await dedupe(adapter, msg, got, at)

    async def answer_(job: Job) -> None:
        await answer(job)

    record = Record(store=store, instance=instance, epoch=epoch, next_stage=dedupe_,
                    spool=spool, spool_after_s=spool_after_s)
    held = HeldDeliveries(outbox=outbox if "held_deliveries" not in off else None)
    admission = Admission(limits=limits, store=store, enabled="admission" not in off)
    rates = Rates(limits=limits, enabled="rate_limits" not in off)
    queue = ChatQueue(answer=answer_)
    spend = Spend(limits=limits, store=store, epoch=epoch, enabled="spend" not in off)
    routing = Routing(store=store, queue=queue, spend=spend, rates=rates, epoch=epoch,
                      outcome=outcome, dispatch=dispatch, voice=preprocess is not None)
    arrivals = Arrivals(store=store, held=held, admission=admission, outcome=outcome,
                        added=tuple(stage for stage in added if stage.name not in off),
                        routing=routing)
    persons = PersonTurns(limits=limits, enabled="one_run_per_person" not in off)
    resume = Resume(store=store, instance=instance, record=record, queue=queue,
                    take_over=routing.take_over, stale_s=stale_s, too_old_s=too_old_s,
                    enabled="resume" not in off)
    dedupe = Dedupe(queue=queue, resume=resume, outcome=outcome, arrived=arrivals)
    answer = Answer(store=store, runner=runner, outbox=outbox, epoch=epoch, queue=queue,
                    held=held, persons=persons, spend=spend, resume=resume, outcome=outcome,
                    preprocess=preprocess, on_event=on_event)
    return Pipeline(
        on=tuple(s for s in names if s not in off), epoch=epoch, limits=limits,
        outcome=outcome, record=record, dedupe=dedupe, held=held, admission=admission,
        arrivals=arrivals, routing=routing, rates=rates, queue=queue, spend=spend,
        persons=persons, answer=answer, resume=resume, added=arrivals.added)
