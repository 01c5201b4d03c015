"""Which language a voice note is in: Mandarin or English, never anything else.

What is known about the person decides first (their ``/lang``, the language of their recent
messages, the platform's locale: WeChat is Mandarin); with nothing known, the multilingual
model's own detection restricted to ``zh`` and ``en``, and a short note it is unsure of is
heard in both (the pipeline keeps the reading whose symbols the directory confirms). A note
the model hears as neither (Cantonese, Thai ...) is refused with a message asking to type:
Whisper base has no Cantonese, so guessing would produce nonsense.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from bot.voice.decode import LanguageUnsupported

LANGUAGES = ("zh", "en")
# Platforms whose users mostly speak Mandarin (the locale when nothing else is known).
PLATFORM_LOCALE: Mapping[str, str] = {"wechat": "zh", "wecom": "zh"}
# The detection's share for zh+en below which the note is in another language; lower when
# what we know of the person already says Mandarin or English.
OTHER_LANGUAGE_SHARE = 0.25
OTHER_LANGUAGE_SHARE_KNOWN = 0.05
# Detection restricted to zh/en decides when it is at least this sure, else the prior does.
DETECTION_DECIDES = 0.75


@dataclass(frozen=True)
class LanguageContext:
    """What is known before listening: ``/lang``, recent messages, the platform's locale."""

    chosen: str | None = None
    recent: str | None = None
    locale: str | None = None

    @property
    def prior(self) -> str | None:
        for value in (self.chosen, self.recent, self.locale):
            if value in LANGUAGES:
                return value
        return None

    @property
    def certain(self) -> str | None:
        """The language when the person said it themselves (``/lang``) and their messages
        agree: then no detection is needed."""
        if self.chosen in LANGUAGES and self.recent in (None, self.chosen):
            return self.chosen
        return None


def recent_language(texts: Sequence[str]) -> str | None:
    """zh/en by the majority of recent messages' scripts (None without any)."""
    from core.words import detect_lang

    votes = [detect_lang(t) for t in texts if t and t.strip()]
    if not votes:
        return None
    zh = sum(v == "zh" for v in votes)
    return "zh" if zh * 2 > len(votes) else "en" if zh * 2 < len(votes) else None


def detected(context: LanguageContext, probs: Mapping[str, float]) -> str | None:
    """zh or en when the model's detection (restricted to the two) is sure, else None.

    Raises :class:`LanguageUnsupported` when the model hears another language.
    """
    share = sum(probs.get(lang, 0.0) for lang in LANGUAGES)
    floor = OTHER_LANGUAGE_SHARE_KNOWN if context.prior else OTHER_LANGUAGE_SHARE
    if share < floor:
        top = max(probs, key=lambda k: probs[k]) if probs else "?"
        raise LanguageUnsupported(f"heard as {top!r} ({probs.get(top, 0.0):.2f}); zh+en "
                                  f"{share:.2f} < {floor:.2f}")
    zh = probs.get("zh", 0.0) / share
    if zh >= DETECTION_DECIDES:
        return "zh"
    if 1.0 - zh >= DETECTION_DECIDES:
        return "en"
    return None


def choose(context: LanguageContext, probs: Mapping[str, float]) -> str:
    """zh or en for a note, from the context and the model's language probabilities.

    Raises :class:`LanguageUnsupported` when the model hears another language.
    """
    sure = detected(context, probs)
    if sure is not None:
        return sure
    zh = probs.get("zh", 0.0) / max(1e-9, sum(probs.get(lang, 0.0) for lang in LANGUAGES))
    return context.prior or ("zh" if zh >= 0.5 else "en")


ContextSource = Callable[[UUID, str], Awaitable[LanguageContext]]


def store_context_source(pool: Any, *, recent: int = 10) -> ContextSource:
    """A :data:`ContextSource` reading ``/lang`` and the person's last messages from Postgres."""

    async def context(user_id: UUID, platform: str) -> LanguageContext:
        row = await pool.fetchrow(
            "SELECT u.lang, ARRAY(SELECT m.content FROM messages m JOIN conversations c"
            " ON c.id = m.conversation_id WHERE c.user_id = u.id AND m.role = 'user'"
            " AND m.content <> '' ORDER BY m.id DESC LIMIT $2) AS recent"
            " FROM users u WHERE u.id = $1", user_id, recent)
        chosen = row["lang"] if row else None
        texts = list(row["recent"] or []) if row else []
        return LanguageContext(chosen=chosen, recent=recent_language(texts),
                               locale=PLATFORM_LOCALE.get(platform))

    return context
