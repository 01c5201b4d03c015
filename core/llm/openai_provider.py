"""One model profile served through the official `openai` client (any compatible endpoint).

Every call is fitted into the profile's context window (`core.llm.fit`) and always carries
`max_tokens`; `timeout_s` is a deadline for the whole call, retries and keep-alives included
(a read timeout alone is reset by every keep-alive a server sends). A server's refusal reaches
the caller with its reason, secrets redacted. A request the server still finds too long is
fitted again once with the sizes the server reported. A stream that breaks off malformed
(llama.cpp's 500 "does not match the expected format" arrives mid-stream) is retried once
without streaming; if that fails too, `LLMBadResponse` lets the router fall back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import httpx
import openai

from core.errors import LLMBadResponse, LLMError, LLMRateLimited, LLMTimeout
from core.llm.base import Final, StreamItem, TextChunk, ThinkingChunk
from core.llm.clients import http_client, openai_client
from core.llm.fit import ContextOverflow, Fitted, estimate_request, fit_request
from core.llm.pace import Pace
from core.llm.profiles import DEFAULT_CONTEXT, ModelProfile
from core.llm.redact import error_text, redact
from core.llm.think import ThinkSplitter, split_thinking
from core.types import ChatMessage, LLMResponse, ToolCall, Usage

log = logging.getLogger(__name__)

_RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
              openai.APIConnectionError)
# llama.cpp, vLLM and OpenAI say a prompt is too long in these words
_OVER_LLAMA = re.compile(r"request \((\d+) tokens\) exceeds the available context size "
                         r"\((\d+) tokens\)")
_OVER_OPENAI = re.compile(r"maximum context length is (\d+) tokens.*?(?:requested|resulted "
                          r"in) (\d+) tokens", re.DOTALL)


def _estimate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


class CallTimedOut(LLMTimeout):
    """A call past its limit, with the limit it had (the runner says it)."""

    def __init__(self, message: str, *, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds


class _ServerOverflow(LLMError):
    """The server counted the prompt and found it over its window (sizes when it said them)."""

    def __init__(self, message: str, *, prompt: int | None, context: int | None) -> None:
        super().__init__(message)
        self.prompt = prompt
        self.context = context


class OpenAIProvider:
    """Completions for one profile, with retries (backoff on 429/5xx/timeouts)."""

    def __init__(self, profile: ModelProfile) -> None:
        self.profile = profile
        self._client = openai_client(
            base_url=profile.base_url,
            api_key=profile.api_key.get_secret_value(),
            timeout=profile.timeout_s,
            max_retries=0,  # retries are ours, so fallbacks and usage stay accountable
        )
        self._context: int | None = profile.context_tokens
        self._ratio = 1.0  # server tokens per estimated token, when it counted more
        self.peak_request_tokens = 0  # largest prompt + max_tokens sent (server-counted prompt)
        self.pace = Pace(prompt_tps=profile.prompt_tps, gen_tps=profile.gen_tps)

    def call_timeout(self, messages: Sequence[ChatMessage],
                     tools: Sequence[dict[str, Any]] | None, max_tokens: int | None) -> float:
        """Seconds this call may take: `timeout_s`, or with `derive_timeouts` what the measured
        pace says it needs (never less than `timeout_s`)."""
        if not self.profile.derive_timeouts:
            return self.profile.timeout_s
        prompt = estimate_request(messages, tools, self._ratio)
        if self._context:
            prompt = min(prompt, self._context)
        return self.pace.timeout(prompt, max_tokens or self.profile.max_output_tokens,
                                 floor=self.profile.timeout_s)

    def _observe(self, usage: Any, started: float, first_token: float | None) -> None:
        if usage is None:
            return
        self.pace.observe(prompt_tokens=max(0, (usage.prompt_tokens or 0) - _cached(usage)),
                          completion_tokens=usage.completion_tokens or 0,
                          total_s=time.perf_counter() - started,
                          first_token_s=None if first_token is None else first_token - started)

    async def aclose(self) -> None:
        await self._client.close()

    # --- the context window -----------------------------------------------------------------

    async def context_tokens(self) -> int:
        """The profile's window: as configured, else as the server says, else the default."""
        if self._context is None:
            found = await self._discover_context()
            self._context = found or DEFAULT_CONTEXT
            log.info("llm %s: context window %d tokens (%s)", self.profile.name, self._context,
                     "from the server" if found else "default")
        return self._context

    async def _discover_context(self) -> int | None:
        base = self.profile.base_url.rstrip("/")
        root = base[:-3] if base.endswith("/v1") else base
        headers = {"Authorization": f"Bearer {self.profile.api_key.get_secret_value()}"}
        try:
            async with http_client(timeout=3.0, headers=headers) as http:
                props = await http.get(root + "/props")  # llama.cpp: the per-slot window
                if props.status_code == 200:
                    n = _int((props.json().get("default_generation_settings") or {})
                             .get("n_ctx"))
                    if n:
                        return n
                models = await http.get(base + "/models")
                if models.status_code == 200:
                    return _context_from_models(models.json(), self.profile.model)
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            log.info("llm %s: context window not discoverable: %s", self.profile.name, exc)
        return None

    async def fit(self, messages: Sequence[ChatMessage], tools: Sequence[dict[str, Any]] | None,
                  max_tokens: int | None) -> Fitted:
        context = await self.context_tokens()
        fitted = fit_request(messages, tools, context=context,
                             max_tokens=max_tokens or self.profile.max_output_tokens,
                             ratio=self._ratio)
        if fitted.trimmed:
            log.info("llm %s: request fitted into %d tokens: %s", self.profile.name, context,
                     "; ".join(fitted.trimmed))
        return fitted

    def _learn(self, exc: _ServerOverflow, fitted: Fitted) -> None:
        if exc.context and (self._context is None or exc.context < self._context):
            self._context = exc.context
        if exc.prompt:
            est = estimate_request(fitted.messages, fitted.tools)
            self._ratio = max(self._ratio, exc.prompt / max(1, est) * 1.05)

    def _calibrate(self, fitted: Fitted, prompt_tokens: int | None) -> None:
        if not prompt_tokens:
            return
        self.peak_request_tokens = max(self.peak_request_tokens,
                                       prompt_tokens + fitted.max_tokens)
        est = estimate_request(fitted.messages, fitted.tools)
        if prompt_tokens > est * self._ratio:  # the estimate was short: be safer from now on
            self._ratio = prompt_tokens / max(1, est) * 1.05

    # --- requests ---------------------------------------------------------------------------

    def _request(self, fitted: Fitted, json_mode: bool) -> dict[str, Any]:
        req: dict[str, Any] = {
            "model": self.profile.model,
            "messages": [m.to_openai() for m in fitted.messages],
            "max_tokens": fitted.max_tokens,
        }
        if fitted.tools:
            req["tools"] = list(fitted.tools)
        if json_mode:
            req["response_format"] = {"type": "json_object"}
        log.debug("llm %s request: ~%d prompt tokens + max_tokens %d", self.profile.name,
                  fitted.prompt_tokens, fitted.max_tokens)
        return req

    def _usage(self, role: str, prompt: int, completion: int, started: float,
               cached: int = 0) -> Usage:
        return Usage(
            provider=self.profile.name, model=self.profile.model, role=role,
            prompt_tokens=prompt, completion_tokens=completion, cached_tokens=cached,
            cost_usd=self.profile.cost(prompt, completion, cached),
            latency_s=time.perf_counter() - started,
        )

    def _status_error(self, exc: openai.APIStatusError) -> LLMError:
        why = redact(error_text(exc.body, exc.message), self.profile.api_key.get_secret_value())
        for pattern, prompt_first in ((_OVER_LLAMA, True), (_OVER_OPENAI, False)):
            if m := pattern.search(why):
                a, b = int(m.group(1)), int(m.group(2))
                prompt, context = (a, b) if prompt_first else (b, a)
                return _ServerOverflow(f"HTTP {exc.status_code}: {why}",
                                       prompt=prompt, context=context)
        if exc.status_code == 400 and "context" in why.lower():
            return _ServerOverflow(f"HTTP 400: {why}", prompt=None, context=None)
        return LLMError(f"HTTP {exc.status_code}: {why}")

    async def _with_retries(self, attempt_fn: Callable[[], Awaitable[Any]]) -> Any:
        delay = 0.5
        for attempt in range(self.profile.max_retries + 1):
            try:
                return await attempt_fn()
            except _RETRYABLE as exc:
                last = attempt == self.profile.max_retries
                if last:
                    raise self._translate(exc) from exc
                wait = _retry_after(exc) or delay * (1 + random.random() * 0.25)
                log.warning("llm %s: %s, retrying in %.1fs", self.profile.name,
                            type(exc).__name__, wait)
                await asyncio.sleep(min(wait, 30.0))
                delay *= 2
            except openai.APIStatusError as exc:
                raise self._status_error(exc) from exc
            except (json.JSONDecodeError, openai.APIResponseValidationError, ValueError) as exc:
                raise LLMBadResponse(f"{self.profile.name}: malformed response") from exc
        raise AssertionError("unreachable")

    def _translate(self, exc: Exception) -> LLMError:
        if isinstance(exc, openai.APITimeoutError):
            return LLMTimeout("the model did not answer in time")
        if isinstance(exc, openai.RateLimitError):
            return LLMRateLimited("the model is rate limited", retry_after=_retry_after(exc))
        if isinstance(exc, openai.APIConnectionError):
            return LLMError("the model's endpoint could not be reached")
        if isinstance(exc, openai.APIStatusError):
            return self._status_error(exc)
        return LLMError(f"the model's endpoint failed ({type(exc).__name__})")

    def _deadline(self, seconds: float) -> LLMTimeout:
        return CallTimedOut(f"the model did not answer in time ({round(seconds, 1):g} s for "
                            "the whole call)", seconds=seconds)

    async def _create(self, messages: Sequence[ChatMessage],
                      tools: Sequence[dict[str, Any]] | None, max_tokens: int | None,
                      json_mode: bool, stream: bool, timeout_s: float,
                      require_tool: bool = False) -> tuple[Fitted, Any]:
        """Fit, send (with retries); on the server's "too long", fit again once and resend."""
        fitted = await self.fit(messages, tools, max_tokens)
        for again in (True, False):
            req = self._request(fitted, json_mode)
            if require_tool and fitted.tools:  # llama.cpp (--jinja) constrains it by grammar
                req["tool_choice"] = "required"
            # the client's own limit follows the call's, as a backstop behind our deadline
            req["timeout"] = timeout_s * 1.5 + 1.0
            if stream:
                req["stream"] = True
                req["stream_options"] = {"include_usage": True}
            async def attempt(req: dict[str, Any] = req) -> Any:
                return await self._client.chat.completions.create(**req)

            try:
                return fitted, await self._with_retries(attempt)
            except _ServerOverflow as exc:
                if not again:
                    raise
                log.warning("llm %s: %s; fitting again", self.profile.name, exc)
                self._learn(exc, fitted)
                try:
                    fitted = await self.fit(messages, tools, max_tokens)
                except ContextOverflow as again_exc:
                    raise ContextOverflow(f"{exc}; {again_exc}") from again_exc
        raise AssertionError("unreachable")

    # --- complete ---------------------------------------------------------------------------

    async def complete(
        self, messages: Sequence[ChatMessage], *, role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> LLMResponse:
        limit = self.call_timeout(messages, tools, max_tokens)
        try:
            async with asyncio.timeout(limit):
                return await self._complete(messages, role, tools, max_tokens, json_mode,
                                            limit)
        except TimeoutError as exc:
            raise self._deadline(limit) from exc

    async def _complete(self, messages: Sequence[ChatMessage], role: str,
                        tools: Sequence[dict[str, Any]] | None, max_tokens: int | None,
                        json_mode: bool, limit: float) -> LLMResponse:
        started = time.perf_counter()
        fitted, resp = await self._create(messages, tools, max_tokens, json_mode, False, limit)
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
        self._calibrate(fitted, u.prompt_tokens if u else None)
        self._observe(u, started, None)
        prompt = u.prompt_tokens if u else sum(_estimate_tokens(m.content)
                                               for m in fitted.messages)
        completion = u.completion_tokens if u else _estimate_tokens(msg.content or "")
        return LLMResponse(
            content=text, thinking=thinking, tool_calls=calls,
            usage=self._usage(role, prompt, completion, started, _cached(u)),
            finish_reason=resp.choices[0].finish_reason or "",
        )

    # --- stream -----------------------------------------------------------------------------

    async def stream(
        self, messages: Sequence[ChatMessage], *, role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None, max_tokens: int | None = None,
        require_tool: bool = False,
    ) -> AsyncIterator[StreamItem]:
        limit = self.call_timeout(messages, tools, max_tokens)
        deadline = asyncio.get_running_loop().time() + limit
        started = time.perf_counter()
        first_token: float | None = None
        try:  # the deadline is armed around each wait only, never across a yield
            async with asyncio.timeout_at(deadline):
                fitted, stream = await self._create(messages, tools, max_tokens, False, True,
                                                    limit, require_tool)
        except TimeoutError as exc:
            raise self._deadline(limit) from exc
        splitter = ThinkSplitter()
        text_parts: list[str] = []
        think_parts: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        usage = None
        finish = ""
        chunks = stream.__aiter__()
        broken: str | None = None
        try:
            while True:
                try:
                    async with asyncio.timeout_at(deadline):
                        chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    break
                if getattr(chunk, "usage", None):
                    usage = chunk.usage
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                delta = choice.delta
                if first_token is None and (delta.content or delta.tool_calls
                                            or getattr(delta, "reasoning_content", None)):
                    first_token = time.perf_counter()
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
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise self._deadline(limit) from exc
        except _RETRYABLE as exc:
            raise self._translate(exc) from exc
        except (json.JSONDecodeError, openai.APIError, httpx.HTTPError, ValueError) as exc:
            body = getattr(exc, "body", None)
            broken = redact(error_text(body, str(getattr(exc, "message", "") or exc)),
                            self.profile.api_key.get_secret_value())
        finally:
            await _close(stream)
        if broken is not None:
            log.warning("llm %s: malformed stream (%s); retrying once without streaming",
                        self.profile.name, broken)
            try:
                async with asyncio.timeout_at(deadline):
                    resp = await self._complete(messages, role, tools, max_tokens, False,
                                                limit)
            except TimeoutError as exc:
                raise self._deadline(limit) from exc
            except LLMError as exc:
                raise LLMBadResponse(f"{self.profile.name}: malformed stream ({broken}); "
                                     f"the retry without streaming failed too ({exc})") from exc
            shown = "".join(text_parts)
            if resp.content.startswith(shown) and len(resp.content) > len(shown):
                yield TextChunk(resp.content[len(shown):])
            yield Final(resp.model_copy(update={"usage": resp.usage.model_copy(
                update={"latency_s": time.perf_counter() - started})}))
            return
        visible, thinking = splitter.flush()
        if visible:
            text_parts.append(visible)
            yield TextChunk(visible)
        if thinking:
            think_parts.append(thinking)
            yield ThinkingChunk(thinking)
        text = "".join(text_parts)
        self._calibrate(fitted, usage.prompt_tokens if usage else None)
        self._observe(usage, started, first_token)
        prompt = usage.prompt_tokens if usage else sum(
            _estimate_tokens(m.content) for m in fitted.messages)
        completion = usage.completion_tokens if usage else _estimate_tokens(text)
        yield Final(LLMResponse(
            content=text.strip(), thinking="".join(think_parts).strip(),
            tool_calls=[ToolCall(id=c["id"] or f"call_{i}", name=c["name"],
                                 arguments=c["arguments"] or "{}")
                        for i, c in sorted(calls.items())],
            usage=self._usage(role, prompt, completion, started, _cached(usage)),
            finish_reason=finish,
        ))


async def _close(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if close is not None:
        try:
            await close()
        except (httpx.HTTPError, OSError):
            pass


def _cached(usage: Any) -> int:
    """Prompt tokens served from the provider's cache, where it reports them (OpenAI and
    compatible servers: `usage.prompt_tokens_details.cached_tokens`), else 0."""
    details = getattr(usage, "prompt_tokens_details", None) if usage is not None else None
    if details is None and isinstance(getattr(usage, "model_extra", None), dict):
        details = usage.model_extra.get("prompt_tokens_details")
    value = (details.get("cached_tokens") if isinstance(details, dict)
             else getattr(details, "cached_tokens", None))
    return value if isinstance(value, int) and value > 0 else 0


def _int(value: Any) -> int | None:
    try:
        n = int(value)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def _context_from_models(body: Any, model: str) -> int | None:
    """The window a `/models` listing states: vLLM `max_model_len`, LM Studio / OpenRouter
    `context_length`, llama.cpp `meta.n_ctx_train`; the profile's model first."""
    entries = body.get("data") if isinstance(body, dict) else None
    if not isinstance(entries, list):
        return None
    entries = sorted((e for e in entries if isinstance(e, dict)),
                     key=lambda e: e.get("id") != model)
    for e in entries:
        meta = e.get("meta") if isinstance(e.get("meta"), dict) else {}
        for value in (e.get("max_model_len"), e.get("context_length"),
                      e.get("context_window"), meta.get("n_ctx"), meta.get("n_ctx_train")):
            if n := _int(value):
                return n
    return None


def _retry_after(exc: Exception) -> float | None:
    response = getattr(exc, "response", None)
    if response is None:
        return None
    value = response.headers.get("retry-after")
    try:
        return float(value) if value else None
    except ValueError:
        return None
