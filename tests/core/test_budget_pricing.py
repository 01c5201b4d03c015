"""Cached-input pricing: the provider's cached prompt tokens read through the real `openai`
client (complete and stream) from the local fake, priced at the profile's cached input price,
and stored in the usage rows (UsageRepo and the run's one-round-trip records)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.llm import Final, LLMRouter, ModelProfile
from core.store import Store
from core.types import ChatMessage, ChatRef, Usage
from tests.fakes.openai_server import FakeOpenAI, Turn

USER = [ChatMessage(role="user", content="hi")]
# $2 input, $0.5 cached input, $8 output per million tokens
PRICES = {"price_in_per_mtok": 2.0, "price_cached_in_per_mtok": 0.5, "price_out_per_mtok": 8.0}
# 1,000,000 prompt tokens of which 600,000 cached, 100,000 completion
EXPECTED = 400_000 * 2.0 / 1e6 + 600_000 * 0.5 / 1e6 + 100_000 * 8.0 / 1e6  # $1.90


def test_cost_prices_cached_prompt_tokens_apart():
    p = ModelProfile(base_url="http://127.0.0.1:1/v1", model="m", **PRICES)
    assert p.cost(1_000_000, 100_000, 600_000) == pytest.approx(EXPECTED)
    assert p.cost(1_000_000, 100_000) == pytest.approx(2.0 + 0.8)  # nothing cached
    # a provider reporting more cached than prompt tokens (or negative) is clamped
    assert p.cost(1000, 0, 5000) == pytest.approx(1000 * 0.5 / 1e6)
    assert p.cost(1000, 0, -5) == pytest.approx(1000 * 2.0 / 1e6)
    # no cached price configured: cached tokens cost the input price
    plain = ModelProfile(base_url="http://127.0.0.1:1/v1", model="m", price_in_per_mtok=2.0)
    assert plain.cost(1_000_000, 0, 600_000) == pytest.approx(2.0)


async def test_cached_tokens_read_and_priced_in_complete_and_stream():
    # 10,000 prompt tokens of which 6,000 cached, 1,000 completion (within the fake's window)
    turn = Turn(text="ok", prompt_tokens=10_000, completion_tokens=1_000, cached_tokens=6_000)
    async with FakeOpenAI(default=turn) as srv:
        router = LLMRouter(default=ModelProfile(base_url=srv.base_url, model="fake-model",
                                                **PRICES))
        done = await router.complete(USER)
        items = [i async for i in router.stream(USER)]
        await router.aclose()
    assert srv.requests[-1]["stream_options"] == {"include_usage": True}
    final = items[-1]
    assert isinstance(final, Final)
    for usage in (done.usage, final.response.usage):
        assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (
            10_000, 6_000, 1_000)
        assert usage.cost_usd == pytest.approx(EXPECTED / 100)


async def test_a_server_that_reports_no_cache_costs_the_input_price():
    async with FakeOpenAI(default=Turn(text="ok", prompt_tokens=10_000,
                                       completion_tokens=0)) as srv:
        router = LLMRouter(default=ModelProfile(base_url=srv.base_url, model="fake-model",
                                                **PRICES))
        done = await router.complete(USER)
        await router.aclose()
    assert done.usage.cached_tokens == 0 and done.usage.cost_usd == pytest.approx(0.02)


async def test_cached_tokens_are_stored_with_the_usage(pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    user = await store.accounts.user_for("test", "cache")
    conv = await store.conversations.active(ChatRef(platform="test", chat_id="c"), user)
    await store.usage.record(Usage(prompt_tokens=100, cached_tokens=60, cost_usd=0.1),
                             user_id=user, conversation_id=conv.id)
    await store.conversations.add_run_records(
        conv.id, user_id=user, usages=[Usage(prompt_tokens=50, cached_tokens=20),
                                       Usage(prompt_tokens=10)])
    rows = await pg_db.pool.fetch("SELECT prompt_tokens, cached_tokens FROM usage"
                                  " WHERE user_id=$1 ORDER BY id", user)
    assert [(r["prompt_tokens"], r["cached_tokens"]) for r in rows] == [
        (100, 60), (50, 20), (10, 0)]


def test_cached_input_price_settings_default_and_per_role(monkeypatch):
    from bot.settings import load_settings

    def settings():  # the environment is read once, when the settings load
        return load_settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m",
                             llm_price_in_per_mtok=2.0, llm_price_cached_in_per_mtok=0.5)

    default = settings().default_profile()
    assert default is not None and default.price_cached_in_per_mtok == 0.5
    monkeypatch.setenv("BULLPEN_LLM_FAST_PRICE_CACHED_IN_PER_MTOK", "0.1")
    roles = settings().role_profiles()
    assert roles["fast"].price_cached_in_per_mtok == 0.1
    assert roles["fast"].price_in_per_mtok == 2.0  # the rest from the default
    monkeypatch.delenv("BULLPEN_LLM_FAST_PRICE_CACHED_IN_PER_MTOK")
    assert load_settings().llm_price_cached_in_per_mtok is None  # unset: the input price
    monkeypatch.setenv("BULLPEN_LLM_FAST_PRICE_CACHED_IN_PER_MTOK", "-1")
    with pytest.raises(ValueError, match="PRICE_CACHED_IN_PER_MTOK='-1': a price in US"):
        settings()
