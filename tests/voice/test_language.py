"""Choosing Mandarin or English for a voice note: what is known of the person first, then the
model's detection restricted to zh/en; another language is refused with a message to type."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.voice.decode import LanguageUnsupported
from bot.voice.language import (
    PLATFORM_LOCALE,
    LanguageContext,
    choose,
    recent_language,
    store_context_source,
)
from core.store import Database, Store
from core.types import ChatMessage, ChatRef


def test_a_clear_detection_decides_whatever_the_prior() -> None:
    assert choose(LanguageContext(chosen="en"), {"zh": 0.9, "en": 0.05}) == "zh"
    assert choose(LanguageContext(locale="zh"), {"en": 0.6, "fi": 0.2, "zh": 0.01}) == "en"


def test_an_unsure_detection_follows_what_is_known() -> None:
    probs = {"zh": 0.3, "en": 0.25, "ja": 0.2}
    assert choose(LanguageContext(chosen="en"), probs) == "en"
    assert choose(LanguageContext(recent="zh"), probs) == "zh"
    assert choose(LanguageContext(locale="en"), probs) == "en"
    assert choose(LanguageContext(), probs) == "zh"  # nothing known: the larger of the two


def test_the_order_of_what_is_known() -> None:
    assert LanguageContext(chosen="en", recent="zh", locale="zh").prior == "en"
    assert LanguageContext(recent="zh", locale="en").prior == "zh"
    assert LanguageContext(locale="zh").prior == "zh" and LanguageContext().prior is None
    assert LanguageContext(chosen="zh").certain == "zh"
    assert LanguageContext(chosen="zh", recent="en").certain is None  # they disagree: listen
    assert LanguageContext(recent="zh").certain is None
    assert PLATFORM_LOCALE["wechat"] == "zh" and "telegram" not in PLATFORM_LOCALE


@pytest.mark.parametrize("probs", [
    {"th": 0.84, "zh": 0.06, "en": 0.02},  # what base said of the synthetic Thai note
    {"yue": 0.9, "zh": 0.05},
    {"ja": 0.95, "zh": 0.03, "en": 0.01},
])
def test_another_language_is_refused_with_a_message_to_type(probs: dict[str, float]) -> None:
    with pytest.raises(LanguageUnsupported) as err:
        choose(LanguageContext(), probs)
    assert "type your question" in err.value.message("en")
    assert "粤语" in err.value.message("zh") and "文字" in err.value.message("zh")


def test_known_mandarin_speakers_get_more_benefit_of_the_doubt() -> None:
    probs = {"th": 0.8, "zh": 0.12, "en": 0.01}
    with pytest.raises(LanguageUnsupported):
        choose(LanguageContext(), probs)
    assert choose(LanguageContext(chosen="zh"), probs) == "zh"


def test_recent_language_is_the_majority_script() -> None:
    assert recent_language(["茅台怎么样", "宁德时代呢", "NVDA?"]) == "zh"
    assert recent_language(["how is NVDA", "and AAPL", "茅台"]) == "en"
    assert recent_language(["茅台", "NVDA news"]) is None
    assert recent_language(["", "  "]) is None


async def test_context_comes_from_lang_and_recent_messages(pg_db: Database,
                                                           tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    source = store_context_source(pg_db.pool)
    user = await store.accounts.user_for("wechat", "o-1")
    assert await source(user, "wechat") == LanguageContext(locale="zh")
    conv = await store.conversations.active(ChatRef(platform="wechat", chat_id="o-1"), user)
    for text in ("贵州茅台最近怎么样", "宁德时代呢", "thanks"):
        await store.conversations.add_message(conv.id, ChatMessage(role="user", content=text))
    await store.conversations.add_message(conv.id, ChatMessage(role="assistant",
                                                               content="English answer"))
    assert await source(user, "wechat") == LanguageContext(recent="zh", locale="zh")
    await store.accounts.set_lang(user, "en")
    assert await source(user, "telegram") == LanguageContext(chosen="en", recent="zh")
