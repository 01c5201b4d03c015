"""The real `openai` client against the local OpenAI-compatible fake."""

from __future__ import annotations

import pytest

from core.errors import LLMBadResponse, LLMError
from core.llm import Final, LLMRouter, ModelProfile, TextChunk, ThinkingChunk
from core.llm.think import ThinkSplitter, split_thinking
from core.types import ChatMessage
from tests.fakes.openai_server import FakeOpenAI, Turn

USER = [ChatMessage(role="user", content="hi")]


def profile(server: FakeOpenAI, name: str = "main", **kw: object) -> ModelProfile:
    return ModelProfile(name=name, base_url=server.base_url, model="fake-model",
                        **kw)  # type: ignore[arg-type]


def test_think_splitter_handles_tags_split_across_chunks():
    s = ThinkSplitter()
    out = [s.feed(c) for c in ["Hel", "lo <th", "ink>secret", " plan</thi", "nk> world"]]
    visible = "".join(v for v, _ in out) + s.flush()[0]
    thinking = "".join(t for _, t in out)
    assert visible == "Hello  world" and thinking == "secret plan"
    assert split_thinking("<think>a</think>b") == ("b", "a")


async def test_stream_text_thinking_tool_calls_and_usage():
    turn = Turn(text="<think>check price</think>NVDA closed at 1.", chunk=5,
                tool_calls=[("get_quote", {"symbol": "NVDA"})])
    async with FakeOpenAI([turn]) as srv:
        router = LLMRouter(default=profile(srv, price_in_per_mtok=1.0, price_out_per_mtok=2.0))
        items = [i async for i in router.stream(USER, tools=[{"type": "function", "function": {
            "name": "get_quote", "parameters": {"type": "object"}}}])]
        await router.aclose()
    text = "".join(i.text for i in items if isinstance(i, TextChunk))
    thinking = "".join(i.text for i in items if isinstance(i, ThinkingChunk))
    final = items[-1]
    assert isinstance(final, Final)
    assert text == "NVDA closed at 1." and "<think>" not in text and thinking == "check price"
    assert final.response.tool_calls[0].name == "get_quote"
    assert final.response.tool_calls[0].arguments == '{"symbol": "NVDA"}'
    assert final.response.usage.prompt_tokens == 20
    assert final.response.usage.cost_usd == pytest.approx((20 * 1 + 10 * 2) / 1e6)
    assert srv.requests[0]["tools"][0]["function"]["name"] == "get_quote"


async def test_retries_429_and_500_then_succeeds():
    async with FakeOpenAI([Turn(fault="429"), Turn(fault="500"), Turn(text="ok")]) as srv:
        router = LLMRouter(default=profile(srv, max_retries=2))
        resp = await router.complete(USER)
        await router.aclose()
    assert resp.content == "ok" and len(srv.requests) == 3


async def test_timeout_falls_back_to_next_profile_then_fails_clearly():
    async with FakeOpenAI([Turn(fault="hang")]) as slow, \
            FakeOpenAI([Turn(text="from fallback")]) as good:
        router = LLMRouter(default=profile(slow, "slow", timeout_s=0.3, max_retries=0),
                           fallbacks=[profile(good, "backup")])
        resp = await router.complete(USER)
        assert resp.content == "from fallback" and resp.usage.provider == "backup"
        with pytest.raises(LLMError) as info:  # both exhausted now: slow hangs, good has 500
            slow.script = [Turn(fault="hang")]
            await router.complete(USER)
        await router.aclose()
    assert "every model profile failed" in str(info.value)
    assert "did not answer in time" in str(info.value)


async def test_role_profile_comes_first_in_the_chain():
    async with FakeOpenAI(default=Turn(text="a")) as a, FakeOpenAI(default=Turn(text="b")) as b:
        router = LLMRouter(default=profile(a, "default"), roles={"judge": profile(b, "judge")})
        assert (await router.complete(USER, role="judge")).content == "b"
        assert (await router.complete(USER, role="agent")).content == "a"
        await router.aclose()


async def test_malformed_json_is_a_bad_response():
    async with FakeOpenAI([Turn(fault="malformed")]) as srv:
        router = LLMRouter(default=profile(srv, max_retries=0))
        with pytest.raises(LLMError):
            await router.complete(USER)
        await router.aclose()
    async with FakeOpenAI([Turn(fault="malformed")]) as srv:
        from core.llm.openai_provider import OpenAIProvider

        provider = OpenAIProvider(profile(srv, max_retries=0))
        with pytest.raises(LLMBadResponse):
            async for _ in provider.stream(USER):
                pass
        await provider.aclose()
