"""The stages of who may spend what: admission (access; admins always), the person's rate
limits, and spend (the usage gate's decision before a run, a conversation over its token
budget carried over). Each is built with the `Limits` it reads and the store; none of them
reaches into the gateway."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from uuid import UUID

from bot.budget_gateway import account_of, budget_refusal, degrade, rate_refusal
from bot.pipeline.context import Epoch, Job
from bot.pipeline.limits import Limits
from core.store import Conversation, Store
from core.types import IncomingMessage
from core.words import t

Say = Callable[[str], Awaitable[None]]  # says a text to the person, in the message's chat


class Admission:
    """Who may use Bullpen: the admins always; the others as the usage gate's access says."""

    def __init__(self, *, limits: Limits, store: Store, enabled: bool = True) -> None:
        self._limits = limits
        self._store = store
        self.enabled = enabled

    def is_admin(self, msg: IncomingMessage) -> bool:
        """The account that sent `msg` is named in BULLPEN_ADMINS (no lookup)."""
        return account_of(msg) in self._limits.admins

    async def is_admin_person(self, msg: IncomingMessage, user_id: UUID) -> bool:
        """The person is an admin: the account that wrote, or any account linked to it, is
        named in BULLPEN_ADMINS (linked accounts are one person: an admin listed by their
        Telegram id is one on the web page too). A lookup only when the writing account is
        not listed itself."""
        if self.is_admin(msg):
            return True
        if not self._limits.admins:
            return False
        accounts = await self._store.accounts.accounts_of(user_id)
        return any(f"{a.platform}:{a.platform_uid}" in self._limits.admins for a in accounts)

    @property
    def everyone(self) -> bool:
        """Everyone is admitted (off, or no usage gate): nobody is refused at the door."""
        return not self.enabled or self._limits.gate is None

    async def admitted(self, msg: IncomingMessage, user_id: UUID) -> bool:
        gate = self._limits.gate
        if not self.enabled or gate is None or self.is_admin(msg):
            return True
        return await gate.admitted(user_id) or await self.is_admin_person(msg, user_id)


# Every command counts against the person's message rate like a question (a command is work:
# a database write, a report built, a sandbox started, a reply sent), unless its declaration
# says `rated=False` (/stop: it starts nothing and must always reach the run the person wants
# ended). /help is not free: a flood of it is a flood of replies like any other. Commands that
# spend model calls outside a run (the report's narrative) are declared `gated=True`: refused
# when the person's budget is spent (`command_allowed`).


class Rates:
    """The person's rate limits (messages, voice notes, heavy modes), counted before anything
    is queued, so a flood never reaches the model."""

    def __init__(self, *, limits: Limits, enabled: bool = True) -> None:
        self._limits = limits
        self.enabled = enabled

    async def refusal(self, user_id: UUID, lang: str, kinds: list[str]) -> str | None:
        """What the person is told when this is over a rate limit (with when to try again), or
        None: it is allowed and counted (every kind, or none when refused)."""
        rates = self._limits.rates
        if rates is None or not kinds or not self.enabled:
            return None
        got = await rates.take(user_id, kinds)
        if got is None:
            return None
        kind, wait = got
        return rate_refusal(kind, wait, lang)


class Spend:
    """The usage gate's decision before a run (and before a command declared `gated`), and
    the conversations' token budget."""

    def __init__(self, *, limits: Limits, store: Store, epoch: Epoch,
                 enabled: bool = True) -> None:
        self._limits = limits
        self._store = store
        self._epoch = epoch
        self.enabled = enabled

    @property
    def active(self) -> bool:
        return self.enabled and (self._limits.gate is not None
                                 or self._limits.conversation_token_budget is not None)

    async def command_allowed(self, user_id: UUID, lang: str, say: Say) -> bool:
        """A command that spends model calls outside a run (`gated=True`): refused, with the
        reset time, when the person's budget is spent (and this stage is on)."""
        gate = self._limits.gate
        if gate is None or not self.enabled:
            return True
        decision = await gate.check(user_id)
        if decision.action != "refuse":
            return True
        await say(budget_refusal(decision, lang, gate.now()))
        return False

    async def before_run(self, job: Job, conv: Conversation, say: Say) -> Conversation | None:
        """The usage gate's decision for `job`: None when refused (the person told when the
        budget resets); else the conversation to run in (a new one when `conv` spent its own
        budget), the job degraded or given its token allowance as decided."""
        gate = self._limits.gate
        if gate is not None:
            decision = await gate.check(job.user_id)
            if decision.action == "refuse":
                await say(budget_refusal(decision, job.lang, gate.now()))
                return None
            job.token_allowance = decision.token_allowance
            if decision.action == "degrade":
                job.question, told = degrade(job.question, job.question.mode or conv.mode,
                                             decision, gate.cheap_role)
                if told is not None:  # once per run, before it starts
                    await say(t(told, job.lang, left=f"{max(0.0, decision.left):.0%}"))
        budget = self._limits.conversation_token_budget
        if budget is not None and conv.token_budget is None:
            await self._store.budgets.set_conversation_budget(conv.id, budget)
            conv = await self._store.conversations.get(conv.id)
        if conv.token_budget is not None and conv.token_used >= conv.token_budget:
            conv = await self._carry_over(job, conv, say)
        return conv

    async def _carry_over(self, job: Job, old: Conversation, say: Say) -> Conversation:
        """Seed 003: a conversation over its token budget is closed; the question starts a
        new one that carries the old one's summary (or its last exchanges), and the person is
        told."""
        store = self._store
        summary = old.summary
        if not summary:
            recent = await store.conversations.messages(old.id, limit=6)
            summary = "\n".join(f"{m.message.role}: {m.message.content[:500]}"
                                for m in recent if m.message.content
                                and m.message.role in ("user", "assistant"))
        new = await store.conversations.start_new(job.message.chat, job.user_id)
        self._epoch.move()  # conversations read before are stale from now on
        if summary:
            await store.conversations.set_summary(new.id, summary, 0)
        if old.token_budget is not None:
            await store.budgets.set_conversation_budget(new.id, old.token_budget)
        await say(t("chat.conversation_closed", job.lang, used=old.token_used))
        return await store.conversations.get(new.id)
