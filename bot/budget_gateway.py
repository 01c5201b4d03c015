"""What the stages of who may spend what (`bot.pipeline.spend`) and a few commands share: how a
budget level degrades a question, the limits a question counts against, a wait said as a
duration, and who an account is. Pure: no store, no gateway."""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from datetime import datetime

from bot.commands import Question
from core.store import Conversation
from core.types import IncomingMessage
from core.usage_gate import LEVELS, Decision, degraded_options
from core.words import t

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



def when(at: datetime, lang: str, now: datetime) -> str:
    left = max(0.0, (at - now).total_seconds())
    return f"{at:%Y-%m-%d %H:%M} UTC ({duration(left, lang)})"


def rate_refusal(kind: str, wait: float, lang: str) -> str:
    """What a person over a rate limit is told: which rate (`kind`), and when to try again."""
    return t("chat.rate_limited", lang, what=t("chat.rate_" + kind, lang),
             wait=duration(wait, lang))


def budget_refusal(decision: Decision, lang: str, now: datetime) -> str:
    """What a person whose budget is spent is told: which budget, and when it resets."""
    assert decision.resets_at is not None
    return t("chat.budget_refused", lang, which=t("chat.budget_" + decision.reason, lang),
             at=when(decision.resets_at, lang, now))
