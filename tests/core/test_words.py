"""The catalogue itself: both languages, the same keys and the same fields everywhere."""

from __future__ import annotations

import pytest

from core.words import LANGS, NAMESPACES, catalogue, fields, has, is_zh, t


def test_every_entry_has_both_languages_and_the_same_fields() -> None:
    bad = []
    for key, entry in catalogue().items():
        if set(entry) != set(LANGS):
            bad.append(f"{key}: languages {sorted(entry)}")
        elif fields(entry["en"]) != fields(entry["zh"]):
            bad.append(f"{key}: fields {fields(entry['en'])} vs {fields(entry['zh'])}")
    assert not bad, "\n".join(bad)


def test_keys_are_namespaced_by_their_module() -> None:
    assert all(key.split(".", 1)[0] in NAMESPACES for key in catalogue())
    assert has("labels.fast") and not has("fast")


def test_a_missing_key_fails_loudly() -> None:
    with pytest.raises(KeyError):
        t("labels.no_such_word", "zh")


def test_chinese_tags_and_filling() -> None:
    assert is_zh("zh-CN") and is_zh("zh") and not is_zh("en") and not is_zh(None)
    assert t("labels.cut_off", "zh_Hans", tokens=512) == (
        "回答不完整：已达到模型的长度上限（512 个 token）。")
    assert t("labels.cut_off", "fr", tokens=512).startswith("Cut off")
