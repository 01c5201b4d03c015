"""Who may spend what, as one object the stages are built with: access and admins, the usage
gate, the rate limits, one run per person, the conversations' token budget, and the caps on
what multiplies work (unlinks, subscriptions). Built from the settings by `from_settings`
(`bot.app`); a gateway built without settings (tests, tools) gets the defaults: everyone,
unlimited, in parallel."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.rate_limit import Rate, RateLimits, SharedRateLimiter
from core.store import Budget, Store
from core.store.person_locks import PersonLocks
from core.usage_gate import UsageGate

if TYPE_CHECKING:
    from bot.settings import Settings

# the settings' defaults (bot.settings), for a gateway built without them (tests, tools)
UNLINKS_PER_DAY = 3
SUBSCRIPTIONS_PER_PERSON = 20
SUBSCRIPTIONS_PER_CHAT = 10


@dataclass
class Limits:
    gate: UsageGate | None = None
    rates: RateLimits | None = None
    admins: frozenset[str] = frozenset()  # "platform:uid"
    one_run_per_person: bool = False
    person_locks: PersonLocks | None = None  # across processes (None: this one only)
    conversation_token_budget: int | None = None
    unlinks_per_day: int = UNLINKS_PER_DAY
    subscriptions_per_person: int = SUBSCRIPTIONS_PER_PERSON
    subscriptions_per_chat: int = SUBSCRIPTIONS_PER_CHAT

    @classmethod
    def from_settings(cls, settings: Settings, store: Store) -> Limits:
        """The settings' access, admins, budgets, rate limits and caps (bot.app)."""
        gate = UsageGate(store.budgets, access=settings.access, default=Budget(
            settings.budget_daily_tokens, settings.budget_monthly_tokens,
            settings.budget_daily_usd, settings.budget_monthly_usd),
            usd_per_token=dearest_token_usd(settings), cheap_role=cheap_role(settings))
        return cls(
            gate=gate,
            rates=rate_limiter(settings, store),
            admins=frozenset(a.strip() for a in settings.admins.split(",") if a.strip()),
            one_run_per_person=settings.one_run_per_person,
            person_locks=(PersonLocks(store.db.dsn) if settings.one_run_per_person else None),
            conversation_token_budget=settings.conversation_token_budget,
            unlinks_per_day=settings.unlinks_per_day,
            subscriptions_per_person=settings.subscriptions_per_person,
            subscriptions_per_chat=settings.subscriptions_per_chat)


def rate_limiter(settings: Settings, store: Store) -> SharedRateLimiter:
    """The settings' limits, counted in Postgres: one allowance per person however many
    `serve` processes share the database."""
    return SharedRateLimiter(store.rate_limits, {
        "message": Rate(settings.rate_messages_per_minute, 60.0),
        "voice": Rate(settings.rate_voice_per_hour, 3600.0),
        "heavy": Rate(settings.rate_debates_per_day, 86_400.0),
    })


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
