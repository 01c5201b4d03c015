"""The message path as named stages over a typed context, built in order by `build_pipeline`.

1. record: stored first, idempotent; a duplicate dropped unless nobody answers it; database
   outages (the spool, the messages not stored yet) -- `record.Record`; dedupe: the gateway
2. held_deliveries: the chat wrote, so what the outbox held goes first -- `HeldDeliveries`
3. admission: access, admins always -- `spend.Admission`
4. routing: a voice note to the preprocessor, a command to its declaration, the rest is a
   question -- `bot.gateway` (the commands being handled)
5. rate_limits: the person's rates, before anything is queued -- `spend.Rates`
6. chat_queue: one worker per chat answers in order; /stop -- `ChatQueue`
7. spend: the usage gate's decision, the conversations' token budget -- `spend.Spend`
8. one_run_per_person: the person's turn across chats and processes -- `PersonTurns`
9. answer: the run through the renderer, the message's states -- `bot.gateway`
10. resume: the sweeper takes what a stopped process left -- `resume.Resume`

A stage added by `added=` (a `context.Stage`: a name, its own state, an async call on the
message's `Arrival`) runs after admission, before routing, in the order given; it is listed in
`on` after the built-in ones.

Every stage is on unless its name is in `off` (a named switch; the path itself, `record`,
`routing`, `chat_queue` and `answer`, cannot be switched off). The collaborators come in
through the constructors; the `Limits` object says how much each limiting stage allows
(`Limits()`: everyone, unlimited, in parallel).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from bot.pipeline.chat_queue import ChatQueue
from bot.pipeline.context import Epoch, Job, Stage
from bot.pipeline.held import HeldDeliveries
from bot.pipeline.limits import Limits
from bot.pipeline.person_turns import PersonTurns
from bot.pipeline.record import SPOOL_AFTER_S, Next, Record
from bot.pipeline.resume import STALE_S, TOO_OLD_S, Resume, TakeOver
from bot.pipeline.spend import Admission, Rates, Spend
from bot.spool import Spool
from core.ports import Outbox
from core.store import Store

STAGES = ("record", "held_deliveries", "admission", "routing", "rate_limits", "chat_queue",
          "spend", "one_run_per_person", "answer", "resume")
ALWAYS_ON = frozenset({"record", "routing", "chat_queue", "answer"})


@dataclass(frozen=True)
class Pipeline:
    """The stages' objects, and the names of those on, in order."""

    on: tuple[str, ...]
    epoch: Epoch
    limits: Limits
    record: Record
    held: HeldDeliveries
    admission: Admission
    rates: Rates
    queue: ChatQueue
    spend: Spend
    persons: PersonTurns
    resume: Resume
    added: tuple[Stage, ...] = ()  # after admission, before routing (`Stage`)


def build_pipeline(*, store: Store, outbox: Outbox | None, limits: Limits, instance: str,
                   recorded: Next, answer: Callable[[Job], Coroutine[Any, Any, None]],
                   spool: Spool | None = None, spool_after_s: float = SPOOL_AFTER_S,
                   take_over: TakeOver, stale_s: float = STALE_S, too_old_s: float = TOO_OLD_S,
                   added: Sequence[Stage] = (), off: Collection[str] = ()) -> Pipeline:
    """The stages in order, each on unless named in `off`. `recorded` takes a stored message
    on (dedupe, then held deliveries, admission, routing: the gateway's); `answer` answers a
    question the chat queue hands it (spend, the person's turn, the run); `take_over` routes
    a message resumed from a stopped process."""
    names = (*STAGES, *(stage.name for stage in added))
    unknown = set(off) - set(names)
    if unknown:
        raise ValueError(f"no such stage: {', '.join(sorted(unknown))} (stages: {names})")
    if set(off) & ALWAYS_ON:
        raise ValueError(f"the path itself cannot be switched off: {sorted(ALWAYS_ON)}")
    epoch = Epoch()
    record = Record(store=store, instance=instance, epoch=epoch, next_stage=recorded,
                    spool=spool, spool_after_s=spool_after_s)
    queue = ChatQueue(answer=answer)
    return Pipeline(
        on=tuple(s for s in names if s not in off),
        epoch=epoch,
        limits=limits,
        record=record,
        held=HeldDeliveries(outbox=outbox if "held_deliveries" not in off else None),
        admission=Admission(limits=limits, store=store, enabled="admission" not in off),
        rates=Rates(limits=limits, enabled="rate_limits" not in off),
        queue=queue,
        spend=Spend(limits=limits, store=store, epoch=epoch, enabled="spend" not in off),
        persons=PersonTurns(limits=limits, enabled="one_run_per_person" not in off),
        resume=Resume(store=store, instance=instance, record=record, queue=queue,
                      take_over=take_over, stale_s=stale_s, too_old_s=too_old_s,
                      enabled="resume" not in off),
        added=tuple(stage for stage in added if stage.name not in off),
    )
