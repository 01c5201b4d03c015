"""One model profile served through the official `openai` client (any compatible endpoint)."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import openai

from core.errors import LLMBadResponse, LLMError, LLMRateLimited, LLMTimeout
from core.llm.base import Final, StreamItem, TextChunk, ThinkingChunk
from core.llm.profiles import ModelProfile
from core.llm.think import ThinkSplitter, split_thinking
from core.types import ChatMessage, LLMResponse, ToolCall, Usage

log = logging.getLogger(__name__)

_RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
              openai.APIConnectionError)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class OpenAIProvider:
    """Completions for one profile, with retries (backoff on 429/5xx/timeouts)."""

    def __init__(self, profile: ModelProfile) -> None:
        self.profile = profile
        self._client = openai.AsyncOpenAI(
            base_url=profile.base_url,
            api_key=profile.api_key.get_secret_value(),
            timeout=profile.timeout_s,
            max_retries=0,  # retries are ours, so fallbacks and usage stay accountable
        )

    async def aclose(self) -> None:
        await self._client.close()

    def _request(
        self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] | None,
        max_tokens: int | None, json_mode: bool,
    ) -> dict[str, Any]:
        req: dict[str, Any] = {
            "model": self.profile.model,
            "messages": [m.to_openai() for m in messages],
        }
        if tools:
            req["tools"] = list(tools)
        if max_tokens:
            req["max_tokens"] = max_tokens
        if json_mode:
            req["response_format"] = {"type": "json_object"}
        return req

    def _usage(self, role: str, prompt: int, completion: int, started: float) -> Usage:
        return Usage(
            provider=self.profile.name, model=self.profile.model, role=role,
            prompt_tokens=prompt, completion_tokens=completion,
            cost_usd=self.profile.cost(prompt, completion),
            latency_s=time.perf_counter() - started,
        )

    async def _with_retries(self, attempt_fn: Any) -> Any:
        delay = 0.5
        for attempt in range(self.profile.max_retries + 1):
            try:
                return await attempt_fn()
            except _RETRYABLE as exc:
                last = attempt == self.profile.max_retries
                if last:
                    raise _translate(exc) from exc
                wait = _retry_after(exc) or delay * (1 + random.random() * 0.25)
                log.warning("llm %s: %s, retrying in %.1fs", self.profile.name,
                            type(exc).__name__, wait)
                await asyncio.sleep(min(wait, 30.0))
                delay *= 2
            except openai.APIStatusError as exc:
                raise LLMError(f"{self.profile.name}: HTTP {exc.status_code}") from exc
            except (json.JSONDecodeError, openai.APIResponseValidationError, ValueError) as exc:
                raise LLMBadResponse(f"{self.profile.name}: malformed response") from exc
        raise AssertionError("unreachable")

    async def complete(
        self, messages: Sequence[ChatMessage], *, role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> LLMResponse:
        req = self._request(messages, tools, max_tokens, json_mode)
        started = time.perf_counter()

        async def attempt() -> Any:
            return await self._client.chat.completions.create(**req)

        resp = await self._with_retries(attempt)
        if not getattr(resp, "choices", None):
            raise LLMBadResponse(f"{self.profile.name}: response has no choices")
        msg = resp.choices[0].message
        text, thinking = split_thinking(msg.content or "")
        reasoning = getattr(msg, "reasoning_content", None)
        if isinstance(reasoning, str) and reasoning:
            thinking = (reasoning + "\n" + thinking).strip()
        calls = [
            ToolCall(id=c.id or f"call_{i}", name=c.function.name,
                     arguments=c.function.arguments or "{}")
            for i, c in enumerate(msg.tool_calls or [])
        ]
        u = resp.usage
        prompt = u.prompt_tokens if u else sum(_estimate_tokens(m.content) for m in messages)
        completion = u.completion_tokens if u else _estimate_tokens(msg.content or "")
        return LLMResponse(
            content=text, thinking=thinking, tool_calls=calls,
            usage=self._usage(role, prompt, completion, started),
            finish_reason=resp.choices[0].finish_reason or "",
        )

    async def stream(
        self, messages: Sequence[ChatMessage], *, role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
    ) -> AsyncIterator[StreamItem]:
        req = self._request(messages, tools, max_tokens, False)
        req["stream"] = True
        req["stream_options"] = {"include_usage": True}
        started = time.perf_counter()

        async def attempt() -> Any:
            return await self._client.chat.completions.create(**req)

        stream = await self._with_retries(attempt)
        splitter = ThinkSplitter()
        text_parts: list[str] = []
        think_parts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage = None
        finish = ""
        try:
            async for chunk in stream:
                if getattr(chunk, "usage", None):
                    usage = chunk.usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                delta = choice.delta
                reasoning = getattr(delta, "reasoning_content", None)
                if isinstance(reasoning, str) and reasoning:
                    think_parts.append(reasoning)
                    yield ThinkingChunk(reasoning)
                if delta.content:
                    visible, thinking = splitter.feed(delta.content)
                    if thinking:
                        think_parts.append(thinking)
                        yield ThinkingChunk(thinking)
                    if visible:
                        text_parts.append(visible)
                        yield TextChunk(visible)
                for tc in delta.tool_calls or []:
                    slot = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                    if tc.id:
                        slot["id"] = tc.id
                    if tc.function and tc.function.name:
                        slot["name"] += tc.function.name
                    if tc.function and tc.function.arguments:
                        slot["arguments"] += tc.function.arguments
        except _RETRYABLE as exc:
            raise _translate(exc) from exc
        except (json.JSONDecodeError, openai.APIError, ValueError) as exc:
            raise LLMBadResponse(f"{self.profile.name}: malformed stream") from exc
        visible, thinking = splitter.flush()
        if visible:
            text_parts.append(visible)
            yield TextChunk(visible)
        if thinking:
            think_parts.append(thinking)
            yield ThinkingChunk(thinking)
        text = "".join(text_parts)
        prompt = usage.prompt_tokens if usage else sum(
            _estimate_tokens(m.content) for m in messages)
        completion = usage.completion_tokens if usage else _estimate_tokens(text)
        yield Final(LLMResponse(
            content=text.strip(), thinking="".join(think_parts).strip(),
            tool_calls=[ToolCall(id=c["id"] or f"call_{i}", name=c["name"],
                                 arguments=c["arguments"] or "{}")
                        for i, c in sorted(calls.items())],
            usage=self._usage(role, prompt, completion, started),
            finish_reason=finish,
        ))


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    value = response.headers.get("retry-after")
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _translate(exc: Exception) -> LLMError:
    if isinstance(exc, openai.APITimeoutError):
        return LLMTimeout("the model did not answer in time")
    if isinstance(exc, openai.RateLimitError):
        return LLMRateLimited("the model is rate limited", retry_after=_retry_after(exc))
    if isinstance(exc, openai.APIConnectionError):
        return LLMError("the model's endpoint could not be reached")
    return LLMError(f"the model's endpoint failed ({type(exc).__name__})")
