"""LLM providers over the `openai` client, per-role profiles and a fallback chain.

`LLMRouter` (and with it the `openai` client, over a second to import) loads on first use, so
reading the settings, which name model profiles, stays light for the small CLI commands."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.llm.base import Final, TextChunk, ThinkingChunk
from core.llm.profiles import ModelProfile

if TYPE_CHECKING:
    from core.llm.router import LLMRouter

__all__ = ["Final", "LLMRouter", "ModelProfile", "TextChunk", "ThinkingChunk"]


def __getattr__(name: str) -> Any:
    if name == "LLMRouter":
        from core.llm.router import LLMRouter

        return LLMRouter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
