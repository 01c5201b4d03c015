"""The gateway's side of who may spend what: access, rate limits, and the usage gate's
decision before a run (kept here so that `bot.gateway` only calls in)."""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING
from uuid import UUID

from bot.commands import Question
from core.ports import Adapter
from core.rate_limit import Rate, RateLimits, SharedRateLimiter
from core.store import Budget, Conversation, Store
from core.store.person_locks import PersonLocks
from core.types import IncomingMessage
from core.usage_gate import LEVELS, Decision, UsageGate, degraded_options
from core.words import t

if TYPE_CHECKING:
    from bot.gateway import Gateway, _Job
    from bot.settings import Settings

log = logging.getLogger(__name__)

# modes that cost many model calls: counted against the debates-per-day limit
HEAVY_MODES = frozenset({"debate", "podcast"})
# what the last level runs instead (FastMode's one call, no tools)
DEGRADED_MODE = "fast"
# the modes degraded to it (the debate degrades itself, seed 002 ADR-010; a podcast is not a
# question fast mode could answer: both run with the token allowance only). The levels before
# it (fewer turns, the cheaper profile) are normal mode's.
DEGRADABLE_MODES = frozenset({"normal", "plan"})


def degrade(question: Question, mode: str, decision: Decision,
            cheap_role: str | None) -> tuple[Question, str | None]:
    """The question as it runs at the decision's level, and the catalogue key the user is told
    (None: nothing changes for this mode)."""
    level = LEVELS[min(decision.level, len(LEVELS) - 1)]
    if level.fast and mode in DEGRADABLE_MODES:
        return (Question(question.text, mode=DEGRADED_MODE, options=question.options),
                "chat.budget_level_fast_mode")
    if mode != "normal":
        return question, None
    extra = degraded_options(level, cheap_role=cheap_role)
    if not extra:
        return question, None
    told = ("chat.budget_level_cheaper_profile" if "profile_role" in extra
            else "chat.budget_level_fewer_turns")
    return (Question(question.text, mode=question.mode, options=replace(question.options, **extra)),
            told)


def account_of(msg: IncomingMessage) -> str:
    return f"{msg.platform}:{msg.sender.platform_uid}"


def is_admin(gateway: Gateway, msg: IncomingMessage) -> bool:
    """The account that sent `msg` is named in BULLPEN_ADMINS (no lookup)."""
    return account_of(msg) in gateway.admins


async def is_admin_person(gateway: Gateway, msg: IncomingMessage, user_id: UUID) -> bool:
    """The person is an admin: the account that wrote, or any account linked to it, is named
    in BULLPEN_ADMINS (linked accounts are one person: an admin listed by their Telegram id is
    one on the web page too). A lookup only when the writing account is not listed itself."""
    if is_admin(gateway, msg):
        return True
    if not gateway.admins:
        return False
    accounts = await gateway._store.accounts.accounts_of(user_id)
    return any(f"{a.platform}:{a.platform_uid}" in gateway.admins for a in accounts)


async def admitted(gateway: Gateway, msg: IncomingMessage, user_id: UUID) -> bool:
    if is_admin(gateway, msg):
        return True
    assert gateway.gate is not None
    return (await gateway.gate.admitted(user_id)
            or await is_admin_person(gateway, msg, user_id))


def rate_limiter(settings: Settings, store: Store) -> SharedRateLimiter:
    """The settings' limits, counted in Postgres: one allowance per person however many
    `serve` processes share the database."""
    return SharedRateLimiter(store.rate_limits, {
        "message": Rate(settings.rate_messages_per_minute, 60.0),
        "voice": Rate(settings.rate_voice_per_hour, 3600.0),
        "heavy": Rate(settings.rate_debates_per_day, 86_400.0),
    })


# Every command counts against the person's message rate like a question (a command is work:
# a database write, a report built, a sandbox started, a reply sent), unless its declaration
# says `rated=False` (/stop: it starts nothing and must always reach the run the person wants
# ended). /help is not free: a flood of it is a flood of replies like any other. Commands that
# spend model calls outside a run (the report's narrative) are declared `gated=True`: refused
# when the person's budget is spent (`command_allowed`).


def question_kinds(msg: IncomingMessage, question: Question,
                   conversation: Conversation | None) -> list[str]:
    """The limits a question counts against: always the message rate; a voice note's; and the
    debates-per-day for a heavy mode (asked for, or the conversation's). In this order always:
    the shared limiter locks the person's rows in it."""
    mode = question.mode or (conversation.mode if conversation is not None else None)
    kinds = ["message"]
    if not question.text and any(a.kind in ("voice", "audio") for a in msg.attachments):
        kinds.append("voice")
    if mode in HEAVY_MODES:
        kinds.append("heavy")
    return kinds


async def rate_refusal(rates: RateLimits, user_id: UUID, lang: str,
                       kinds: list[str]) -> str | None:
    """What the person is told when this is over a rate limit (with when to try again), or
    None: it is allowed and counted (every kind, or none when refused)."""
    got = await rates.take(user_id, kinds)
    if got is None:
        return None
    kind, wait = got
    return t("chat.rate_limited", lang, what=t("chat.rate_" + kind, lang),
             wait=duration(wait, lang))


def duration(seconds: float, lang: str) -> str:
    s = max(1, math.ceil(seconds))
    if s < 120:
        return t("age.seconds", lang, n=s)
    hours, minutes = divmod(math.ceil(s / 60), 60)
    if hours >= 48:
        days, hours = divmod(hours, 24)
        return t("age.days_hours", lang, d=days, h=hours)
    if hours:
        return t("age.hours_minutes", lang, h=hours, m=minutes)
    return t("age.minutes", lang, m=minutes)



async def command_allowed(gateway: Gateway, adapter: Adapter, msg: IncomingMessage,
                          user_id: UUID, lang: str) -> bool:
    assert gateway.gate is not None
    decision = await gateway.gate.check(user_id)
    if decision.action != "refuse":
        return True
    assert decision.resets_at is not None
    await gateway.say(adapter, msg, t("chat.budget_refused", lang,
                                      which=t("chat.budget_" + decision.reason, lang),
                                      at=_when(decision.resets_at, lang, gateway.gate.now())))
    return False


def _when(at: datetime, lang: str, now: datetime) -> str:
    left = max(0.0, (at - now).total_seconds())
    return f"{at:%Y-%m-%d %H:%M} UTC ({duration(left, lang)})"


async def before_run(gateway: Gateway, job: _Job, conv: Conversation) -> Conversation | None:
    """The usage gate's decision for `job`: None when refused (the user told when the budget
    resets); else the conversation to run in (a new one when `conv` spent its own budget),
    the job degraded or given its token allowance as decided."""
    store, msg = gateway._store, job.message
    if gateway.gate is not None:
        decision = await gateway.gate.check(job.user_id)
        if decision.action == "refuse":
            assert decision.resets_at is not None
            await gateway.say(job.adapter, msg, t(
                "chat.budget_refused", job.lang,
                which=t("chat.budget_" + decision.reason, job.lang),
                at=_when(decision.resets_at, job.lang, gateway.gate.now())))
            return None
        job.token_allowance = decision.token_allowance
        if decision.action == "degrade":
            job.question, told = degrade(job.question, job.question.mode or conv.mode,
                                         decision, gateway.gate.cheap_role)
            if told is not None:  # once per run, before it starts
                await gateway.say(job.adapter, msg, t(told, job.lang,
                                                      left=f"{max(0.0, decision.left):.0%}"))
    budget = gateway.conversation_token_budget
    if budget is not None and conv.token_budget is None:
        await store.budgets.set_conversation_budget(conv.id, budget)
        conv = await store.conversations.get(conv.id)
    if conv.token_budget is not None and conv.token_used >= conv.token_budget:
        conv = await _carry_over(gateway, job, conv)
    return conv


async def _carry_over(gateway: Gateway, job: _Job, old: Conversation) -> Conversation:
    """Seed 003: a conversation over its token budget is closed; the question starts a new
    one that carries the old one's summary (or its last exchanges), and the user is told."""
    store = gateway._store
    summary = old.summary
    if not summary:
        recent = await store.conversations.messages(old.id, limit=6)
        summary = "\n".join(f"{m.message.role}: {m.message.content[:500]}" for m in recent
                            if m.message.content and m.message.role in ("user", "assistant"))
    new = await store.conversations.start_new(job.message.chat, job.user_id)
    gateway._conv_epoch += 1  # conversations read before are stale from now on
    if summary:
        await store.conversations.set_summary(new.id, summary, 0)
    if old.token_budget is not None:
        await store.budgets.set_conversation_budget(new.id, old.token_budget)
    await gateway.say(job.adapter, job.message, t("chat.conversation_closed", job.lang,
                                                  used=old.token_used))
    return await store.conversations.get(new.id)


def dearest_token_usd(settings: Settings) -> float:
    """The highest price of one token (input, cached input or output) of any configured
    profile: dollars left divided by it is a token allowance no run can cost more than."""
    default = settings.default_profile()
    profiles = [*([default] if default else []), *settings.role_profiles().values()]
    prices = [p for prof in profiles for p in (prof.price_in_per_mtok, prof.price_out_per_mtok,
                                               prof.price_cached_in_per_mtok or 0.0)]
    return max(prices, default=0.0) / 1_000_000


def cheap_role(settings: Settings) -> str | None:
    """"fast" when the fast role's profile is another model or endpoint than the agent's (the
    cheaper profile of the degradation levels), else None."""
    roles = settings.role_profiles()
    fast = roles.get("fast")
    agent = roles.get("agent") or settings.default_profile()
    if fast is None or agent is None:
        return None
    return "fast" if (fast.model, fast.base_url) != (agent.model, agent.base_url) else None


def configure(gateway: Gateway, store: Store, settings: Settings) -> None:
    """The settings' access, admins, budgets, rate limits and caps onto `gateway` (bot.app)."""
    gateway.gate = UsageGate(store.budgets, access=settings.access, default=Budget(
        settings.budget_daily_tokens, settings.budget_monthly_tokens, settings.budget_daily_usd,
        settings.budget_monthly_usd), usd_per_token=dearest_token_usd(settings),
        cheap_role=cheap_role(settings))
    gateway.admins = frozenset(a.strip() for a in settings.admins.split(",") if a.strip())
    gateway.rates = rate_limiter(settings, store)
    gateway.unlinks_per_day = settings.unlinks_per_day
    gateway.subscriptions_per_person = settings.subscriptions_per_person
    gateway.subscriptions_per_chat = settings.subscriptions_per_chat
    gateway.one_run_per_person = settings.one_run_per_person
    if settings.one_run_per_person:
        gateway.person_locks = PersonLocks(store.db.dsn)
    gateway.conversation_token_budget = settings.conversation_token_budget
