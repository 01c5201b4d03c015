"""One real path end to end: a message through the gateway, the agent core with the real
`openai` client against the local fake, a real tool, edits on an adapter, rows in Postgres."""

from __future__ import annotations

import json
import logging

from core.testing import RecordingAdapter
from core.types import Capabilities, ChatRef, IncomingMessage, Sender
from tests.fakes.openai_server import FakeOpenAI, Turn

CHAT = ChatRef(platform="test", chat_id="c1")


def msg(text: str, mid: str = "1") -> IncomingMessage:
    return IncomingMessage(platform="test", chat=CHAT, sender=Sender(platform_uid="u1"),
                           message_id=mid, text=text)


def adapter() -> RecordingAdapter:
    return RecordingAdapter(capabilities=Capabilities(
        max_message_length=4096, can_edit=True, min_edit_interval_s=0.0, markup="plain"))


async def test_tool_call_then_streamed_text_reaches_the_chat_and_the_store(make_app):
    script = [
        Turn(text="PLAN: 1. get_quote NVDA"),
        Turn(tool_calls=[("get_quote", {"symbol": "NVDA"})]),
    ]
    async with FakeOpenAI(script) as llm:
        async with make_app(llm_base_url=llm.base_url, llm_model="fake-model") as app:
            # the answer quotes what the tool returns (an answer without the figure asked for
            # is sent back and labelled unanswered)
            quote = json.loads((await app.registry.call("get_quote", {"symbol": "NVDA"})).content)
            answer = (f"NVDA closed at {quote['close']} USD on {quote['source']['as_of']}, "
                      "per the offline snapshot.")
            llm.script.append(Turn(text=answer, chunk=7))
            chat = adapter()
            await app.start_adapters([chat])
            await chat.deliver(msg("What is NVDA's latest close?"))
            await app.gateway.idle()

            # the tool really ran: its result is in the third request (after plan + call)
            tool_msgs = [m for m in llm.requests[2]["messages"] if m["role"] == "tool"]
            assert len(tool_msgs) == 1
            result = json.loads(tool_msgs[0]["content"])
            assert result["symbol"] == "NVDA" and result["close"] > 0
            assert result["source"]["as_of"]

            sends = [o for o in chat.ops if o.kind == "send"]
            edits = [o for o in chat.ops if o.kind == "edit"]
            assert len(sends) == 1  # one placeholder
            assert len(edits) >= 2  # grows in place
            assert chat.texts[sends[0].message_id] == answer

            pool = app.db.pool
            roles = [r["role"] for r in await pool.fetch("SELECT role FROM messages ORDER BY id")]
            assert roles == ["user", "assistant", "tool", "assistant"]
            calls = await pool.fetchval(
                "SELECT tool_calls FROM messages WHERE role='assistant' ORDER BY id LIMIT 1")
            assert calls[0]["name"] == "get_quote"
            usage = await pool.fetch("SELECT role, prompt_tokens FROM usage ORDER BY id")
            assert [u["role"] for u in usage] == ["planner", "agent", "agent"]
            assert all(u["prompt_tokens"] == 20 for u in usage)


async def test_malformed_tool_arguments_go_back_to_the_model_and_the_run_continues(make_app):
    script = [
        Turn(tool_calls=[("get_quote", '{"symbol": ')]),  # broken JSON
        Turn(tool_calls=[("get_quote", {"ticker": "NVDA"})]),  # wrong field
        Turn(text="Recovered."),
    ]
    async with FakeOpenAI(script) as llm:
        async with make_app(llm_base_url=llm.base_url, llm_model="fake-model",
                            llm_plan=False) as app:
            chat = adapter()
            await app.start_adapters([chat])
            await chat.deliver(msg("quote nvda"))
            await app.gateway.idle()
    errors = [m["content"] for r in llm.requests[1:] for m in r["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in errors[0]
    assert "symbol: Field required" in errors[-1]
    assert chat.visible_text(CHAT)[-1] == "Recovered."


async def test_llm_timeout_falls_back_then_reports_a_clear_failure(make_app, monkeypatch,
                                                                   caplog):
    """Both profiles hang: the agent's own model, then the default, each cut off at its
    timeout, then a clear failure. The router's log says which profiles were tried (at a load
    of 8 a 0.3 s timeout ran out before the second request reached the fake, so the fake's
    record alone is not the proof)."""
    monkeypatch.setenv("BULLPEN_LLM_AGENT_MODEL", "agent-model")
    async with FakeOpenAI([Turn(fault="hang")], default=Turn(fault="hang")) as llm:
        async with make_app(llm_base_url=llm.base_url, llm_model="fake-model", llm_plan=False,
                            llm_timeout_s=1.5, llm_max_retries=0) as app:
            chat = adapter()
            await app.start_adapters([chat])
            with caplog.at_level(logging.WARNING, logger="core.llm.router"):
                await chat.deliver(msg("quote nvda"))
                await app.gateway.idle()
    tried = [r.getMessage().split(" failed")[0] for r in caplog.records
             if r.name == "core.llm.router"]
    assert tried == ["llm profile agent", "llm profile default"]
    assert [r["model"] for r in llm.requests][:1] == ["agent-model"]
    final = chat.visible_text(CHAT)[-1]
    assert "did not answer in time" in final and final.startswith("⚠️")


async def test_empty_and_huge_messages_get_a_clear_reply(make_app):
    async with make_app() as app:
        chat = adapter()
        await app.start_adapters([chat])
        await chat.deliver(msg("   ", "1"))
        await chat.deliver(msg("x" * 100_000, "2"))
        await app.gateway.idle()
        texts = [t for t in chat.texts.values()]
        assert any("empty" in t for t in texts)
        assert any("100,000 characters" in t and "limit" in t for t in texts)
        n = await app.db.pool.fetchval("SELECT count(*) FROM messages")
        assert n == 0  # nothing reached the agent


async def test_duplicate_delivery_runs_once(make_app):
    async with make_app() as app:
        chat = adapter()
        await app.start_adapters([chat])
        await chat.deliver(msg("NVDA latest close", "7"))
        await chat.deliver(msg("NVDA latest close", "7"))
        await app.gateway.idle()
        assert len([o for o in chat.ops if o.kind == "send"]) == 1
        assert app.gateway.stages.dedupe.dropped == 1  # the second, by the dedupe stage
