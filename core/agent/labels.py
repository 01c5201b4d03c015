"""Notices a mode attaches to an answer (`Done.label`), in the user's language; the words are
the catalogue's `labels.*`."""

from __future__ import annotations

from core.words import t


def label(key: str, lang: str = "en", **values: object) -> str:
    return t(f"labels.{key}", lang, **values)


def join(*labels: str) -> str:
    return " ".join(x for x in labels if x)
