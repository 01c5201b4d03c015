"""LLM providers over the `openai` client, per-role profiles and a fallback chain."""

from core.llm.base import Final, TextChunk, ThinkingChunk
from core.llm.profiles import ModelProfile
from core.llm.router import LLMRouter

__all__ = ["Final", "LLMRouter", "ModelProfile", "TextChunk", "ThinkingChunk"]
