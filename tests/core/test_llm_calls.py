"""Calls that end badly, against the local OpenAI-compatible fake with the real `openai`
client (issue 17 findings 1, 6 and 7; the context window, the deadline, broken streams)."""

from __future__ import annotations

import asyncio

import pytest

from core.errors import LLMBadResponse, LLMError, LLMTimeout
from core.llm import Final, LLMRouter, ModelProfile, TextChunk
from core.llm.fit import ContextOverflow, estimate_request, fit_request
from core.llm.openai_provider import OpenAIProvider
from core.llm.redact import redact
from core.types import ChatMessage, ToolCall
from tests.fakes.openai_server import FakeOpenAI, Turn, prompt_size

USER = [ChatMessage(role="user", content="hi")]
BOUND = 30.0  # a broken deadline would hang: fail instead (a bound, not a timing claim)


def profile(server: FakeOpenAI, name: str = "main", **kw: object) -> ModelProfile:
    return ModelProfile(name=name, base_url=server.base_url, model="fake-model",
                        **kw)  # type: ignore[arg-type]


def schemas(n: int, size: int = 900) -> list[dict[str, object]]:
    return [{"type": "function", "function": {
        "name": f"tool_{i}", "description": f"tool number {i} " + "x" * size,
        "parameters": {"type": "object", "properties": {}}}} for i in range(n)]


# --- finding 1: every request fits the window and carries max_tokens ---------------------------


async def test_window_is_discovered_and_every_request_fits_with_max_tokens():
    history = []
    for i in range(12):
        history += [ChatMessage(role="user", content=f"question {i} " + "q" * 800),
                    ChatMessage(role="assistant", content=f"answer {i} " + "a" * 800)]
    messages = [ChatMessage(role="system", content="You are Bullpen."), *history,
                ChatMessage(role="user", content="NVDA latest close?")]
    tools = schemas(25)  # ~ 25 tool schemas: more than the window on their own
    async with FakeOpenAI(default=Turn(text="ok"), context_tokens=8192) as srv:
        provider = OpenAIProvider(profile(srv))
        resp = await provider.complete(messages, tools=tools)
        assert await provider.context_tokens() == 8192  # from llama.cpp's /props
        items = [i async for i in provider.stream(messages, tools=tools, max_tokens=1024)]
        await provider.aclose()
    assert resp.content == "ok" and isinstance(items[-1], Final)
    assert not srv.refused
    for body in srv.requests:
        assert body["max_tokens"] > 0
        assert prompt_size(body) + body["max_tokens"] <= 8192
        assert body["messages"][-1]["content"] == "NVDA latest close?"  # the question stays
        assert body["messages"][0]["role"] == "system"
        assert 0 < len(body["tools"]) < 25  # narrowed, most relevant (first) kept
        assert body["tools"][0]["function"]["name"] == "tool_0"


def test_trimming_order_keeps_tool_calls_with_their_results():
    msgs = [ChatMessage(role="system", content="sys"),
            ChatMessage(role="user", content="old question"),
            ChatMessage(role="assistant", tool_calls=[ToolCall(id="a", name="t", arguments="{}")]),
            ChatMessage(role="tool", content="r" * 5000, tool_call_id="a", name="t"),
            ChatMessage(role="assistant", content="old answer " + "b" * 3000),
            ChatMessage(role="user", content="new question"),
            ChatMessage(role="assistant", tool_calls=[ToolCall(id="b", name="t", arguments="{}")]),
            ChatMessage(role="tool", content="n" * 3000, tool_call_id="b", name="t")]
    fitted = fit_request(msgs, None, context=2000, max_tokens=300)
    roles = [m.role for m in fitted.messages]
    assert roles[0] == "system" and fitted.messages[-1].content.startswith("n" * 100)
    assert "old question" not in [m.content for m in fitted.messages]
    # no orphaned tool result: every tool message follows its call
    for i, m in enumerate(fitted.messages):
        if m.role == "tool":
            assert fitted.messages[i - 1].role in ("assistant", "tool")
    assert fitted.prompt_tokens + fitted.max_tokens <= 2000
    assert any("history" in t for t in fitted.trimmed)


def test_a_request_that_cannot_fit_fails_with_a_clear_message():
    huge = [ChatMessage(role="user", content="z" * 40_000)]
    with pytest.raises(ContextOverflow) as info:
        fit_request(huge, None, context=4096, max_tokens=512)
    assert "context of 4,096 tokens" in str(info.value) and "/new" in str(info.value)
    assert estimate_request(huge, None) > 4096


async def test_the_servers_count_wins_when_it_counted_more():
    """Bullpen believes the window is 100k; the server has 3,000 and says so: the request is
    fitted again with the server's sizes and then goes through."""
    messages = [ChatMessage(role="system", content="s"),
                ChatMessage(role="user", content="q")]
    async with FakeOpenAI(default=Turn(text="fine"), context_tokens=3000) as srv:
        provider = OpenAIProvider(profile(srv, context_tokens=100_000, max_retries=0))
        resp = await provider.complete(messages, tools=schemas(20))
        await provider.aclose()
    assert resp.content == "fine"
    assert len(srv.refused) == 1 and len(srv.requests) == 2
    assert prompt_size(srv.requests[1]) <= 3000 and len(srv.requests[1]["tools"]) < 20


async def test_the_servers_reason_reaches_the_caller_with_secrets_redacted():
    why = ("request (8860 tokens) exceeds the available context size (8192 tokens); "
           "key sk-abcdefghijklmnop1234 rejected")
    async with FakeOpenAI(default=Turn(fault="400", error=why)) as srv:
        router = LLMRouter(default=profile(srv, "default", context_tokens=8192, max_retries=0,
                                           api_key="secret-key-42"))  # type: ignore[arg-type]
        with pytest.raises(LLMError) as info:
            await router.complete(USER)
        await router.aclose()
    text = str(info.value)
    assert "every model profile failed" in text
    assert "exceeds the available context size (8192 tokens)" in text
    assert "sk-abcdefghijklmnop1234" not in text and "sk-[redacted]" in text
    assert redact("Bearer abcdefghijkl and secret-key-42", "secret-key-42") == (
        "Bearer [redacted] and [redacted]")


async def test_a_server_error_500_says_its_reason_after_the_retries():
    async with FakeOpenAI(default=Turn(fault="500", error="model failed to load")) as srv:
        router = LLMRouter(default=profile(srv, max_retries=1))
        with pytest.raises(LLMError) as info:
            await router.complete(USER)
        await router.aclose()
    assert "HTTP 500: model failed to load" in str(info.value) and len(srv.requests) == 2


# --- finding 6: the timeout bounds the whole call ---------------------------------------------


async def test_keep_alives_do_not_extend_the_deadline_of_a_complete():
    async with FakeOpenAI(default=Turn(fault="trickle")) as srv:
        provider = OpenAIProvider(profile(srv, timeout_s=0.6, max_retries=2))
        with pytest.raises(LLMTimeout) as info:
            await asyncio.wait_for(provider.complete(USER), BOUND)
        await provider.aclose()
    assert "whole call" in str(info.value)


async def test_keep_alives_do_not_extend_the_deadline_of_a_stream():
    async with FakeOpenAI(default=Turn(fault="trickle")) as srv:
        provider = OpenAIProvider(profile(srv, timeout_s=0.6, max_retries=0))

        async def drain() -> None:
            async for _ in provider.stream(USER):
                pass

        with pytest.raises(LLMTimeout):
            await asyncio.wait_for(drain(), BOUND)
        await provider.aclose()


# --- finding 7: a malformed stream is retried without streaming, then falls back --------------


FORMAT = "Value looks like object, but can't find closing '}' symbol; does not match the " \
         "expected format"


async def test_a_stream_that_breaks_off_is_retried_once_without_streaming():
    script = [Turn(text="Let me check", fault="stream_error", error=FORMAT),
              Turn(text="Let me check the quote.", tool_calls=[("get_quote", {"symbol": "X"})])]
    async with FakeOpenAI(script) as srv:
        router = LLMRouter(default=profile(srv, max_retries=0))
        items = [i async for i in router.stream(USER)]
        await router.aclose()
    final = items[-1]
    assert isinstance(final, Final) and final.response.tool_calls[0].name == "get_quote"
    assert [r.get("stream", False) for r in srv.requests] == [True, False]
    shown = "".join(i.text for i in items if isinstance(i, TextChunk))
    assert shown == "Let me check the quote."  # the rest of the text, not a repeat


async def test_when_the_retry_fails_too_the_next_profile_answers():
    async with FakeOpenAI([Turn(text="x", fault="stream_error", error=FORMAT),
                           Turn(fault="500", error="still broken")]) as bad, \
            FakeOpenAI([Turn(text="from backup")]) as good:
        router = LLMRouter(default=profile(bad, "local", max_retries=0),
                           fallbacks=[profile(good, "backup")])
        items = [i async for i in router.stream(USER)]
        await router.aclose()
    final = items[-1]
    assert isinstance(final, Final) and final.response.content == "from backup"
    assert final.response.usage.provider == "backup"


async def test_a_broken_stream_on_the_only_profile_is_a_bad_response_with_reasons():
    async with FakeOpenAI([Turn(fault="stream_error", error=FORMAT),
                           Turn(fault="500", error="still broken")]) as srv:
        provider = OpenAIProvider(profile(srv, max_retries=0))
        with pytest.raises(LLMBadResponse) as info:
            async for _ in provider.stream(USER):
                pass
        await provider.aclose()
    assert "does not match the expected format" in str(info.value)
    assert "still broken" in str(info.value)
