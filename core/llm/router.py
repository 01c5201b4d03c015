"""Roles to profiles, with a fallback chain: the role's own profile first, then the default."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from core.errors import ConfigError, LLMBadResponse, LLMError
from core.llm.base import AllProfilesFailed, Final, StreamItem
from core.llm.profiles import ModelProfile
from core.types import ChatMessage, LLMResponse

if TYPE_CHECKING:
    from core.llm.openai_provider import OpenAIProvider

log = logging.getLogger(__name__)



class LLMRouter:
    """Implements the `LLMProvider` port over several `OpenAIProvider`s."""

    def __init__(self, *, default: ModelProfile, roles: dict[str, ModelProfile] | None = None,
                 fallbacks: Sequence[ModelProfile] = ()) -> None:
        self._default = default
        self._roles = dict(roles or {})
        self._fallbacks = list(fallbacks)
        self._providers: dict[str, OpenAIProvider] = {}

    def chain(self, role: str) -> list[ModelProfile]:
        first = self._roles.get(role, self._default)
        out = [first]
        for p in [self._default, *self._fallbacks]:
            if all(p.name != q.name for q in out):
                out.append(p)
        return out

    def _provider(self, profile: ModelProfile) -> OpenAIProvider:
        if profile.name not in self._providers:
            # imported on the first call: `openai` is ~20 MB a server without a model (the
            # offline analyst) never needs (issue 34)
            from core.llm.openai_provider import OpenAIProvider

            self._providers[profile.name] = OpenAIProvider(profile)
        return self._providers[profile.name]

    async def context_tokens(self, role: str = "agent") -> int:
        """The context window of the role's first profile (configured or discovered)."""
        return await self._provider(self.chain(role)[0]).context_tokens()

    def profile(self, role: str = "agent") -> ModelProfile:
        """The profile that answers `role` first."""
        return self.chain(role)[0]

    def expected_seconds(self, role: str, prompt_tokens: int, max_tokens: int) -> float | None:
        """What one call of `role` takes at its first profile's measured pace (None: the pace
        is unknown, or the profile does not derive its limits from it)."""
        profile = self.chain(role)[0]
        if not profile.derive_timeouts:
            return None
        return self._provider(profile).pace.seconds(prompt_tokens, max_tokens)

    def peak_request_tokens(self) -> int:
        """The largest request sent so far: server-counted prompt plus `max_tokens`."""
        return max((p.peak_request_tokens for p in self._providers.values()), default=0)

    async def aclose(self) -> None:
        for p in self._providers.values():
            await p.aclose()

    async def complete(
        self, messages: Sequence[ChatMessage], *, role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> LLMResponse:
        errors: list[str] = []
        for profile in self.chain(role):
            try:
                return await self._provider(profile).complete(
                    messages, role=role, tools=tools, max_tokens=max_tokens, json_mode=json_mode)
            except LLMError as exc:
                log.warning("llm profile %s failed for %s: %s", profile.name, role, exc)
                errors.append(f"{profile.name}: {exc}")
        raise AllProfilesFailed(errors)

    async def stream(
        self, messages: Sequence[ChatMessage], *, role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
        require_tool: bool = False,
    ) -> AsyncIterator[StreamItem]:
        """Fall back while nothing was yielded, or after a malformed stream (its text is
        superseded by the `Final` of the next profile): a half-streamed answer that timed out
        or was refused is not restarted."""
        errors: list[str] = []
        for profile in self.chain(role):
            yielded = False
            try:
                async for item in self._provider(profile).stream(
                        messages, role=role, tools=tools, max_tokens=max_tokens,
                        require_tool=require_tool):
                    yielded = True
                    yield item
                    if isinstance(item, Final):
                        return
                return
            except LLMError as exc:
                if yielded and not isinstance(exc, LLMBadResponse):
                    raise
                log.warning("llm profile %s failed for %s: %s", profile.name, role, exc)
                errors.append(f"{profile.name}: {exc}")
        raise AllProfilesFailed(errors)


def require_profile(base_url: str | None, model: str | None) -> None:
    if base_url and not model:
        raise ConfigError("BULLPEN_LLM_BASE_URL is set but BULLPEN_LLM_MODEL is not")
