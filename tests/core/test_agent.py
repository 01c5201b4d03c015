"""The agent runner and modes with in-process twins and a real Postgres store."""

from __future__ import annotations

from pydantic import BaseModel

from core.agent import AgentRunner, FastMode, NormalMode
from core.agent.runner import RunLimits, sanitize_history
from core.events import Done, Thinking, ToolFinished, ToolStarted
from core.store import Store
from core.testing import ScriptedLLM, calls, text
from core.tools import ToolRegistry, tool
from core.types import ChatMessage, ChatRef, LLMResponse, ToolCall

CHAT = ChatRef(platform="test", chat_id="agent")


class Echo(BaseModel):
    said: str


def registry() -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg, label="Echoing {word}")
    async def echo(word: str) -> Echo:
        """Repeat a word.

        Args:
            word: what to repeat
        """
        return Echo(said=word)

    @tool(registry=reg)
    async def explode() -> Echo:
        """Always fails."""
        raise RuntimeError("kaboom")

    return reg


async def collect(runner: AgentRunner, store: Store, text_in: str, **kw):
    conv = await store.conversations.active(CHAT, None)
    return [e async for e in runner.run(conversation=conv, user_id=None, text=text_in, **kw)]


async def test_parallel_tools_errors_as_text_and_thinking(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path)
    llm = ScriptedLLM([
        LLMResponse(content="PLAN: echo twice", thinking="let me think"),
        calls(("echo", {"word": "a"}), ("echo", {"word": "b"}), ("explode", {})),
        text("done: a b"),
    ])
    runner = AgentRunner(store=store, modes={"normal": NormalMode(llm=llm, registry=registry())})
    events = await collect(runner, store, "echo a and b")
    started = [e for e in events if isinstance(e, ToolStarted)]
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [s.label for s in started] == ["Echoing a", "Echoing b", "Running explode..."]
    assert [f.ok for f in finished] == [True, True, False]
    assert any(isinstance(e, Thinking) and e.text == "let me think" for e in events)
    assert isinstance(events[-1], Done) and events[-1].text == "done: a b"
    tool_msgs = [m for m in llm.requests[2]["messages"] if m.role == "tool"]
    assert tool_msgs[2].content == "Error: RuntimeError: kaboom"


async def test_chitchat_is_answered_by_the_planning_turn(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path)
    llm = ScriptedLLM([text("ANSWER: Hello! Ask me about a stock.")])
    runner = AgentRunner(store=store, modes={"normal": NormalMode(llm=llm, registry=registry())})
    events = await collect(runner, store, "hi")
    assert events[-1] == Done(text="Hello! Ask me about a stock.", usage=events[-1].usage)
    assert len(llm.requests) == 1 and llm.requests[0]["tools"] is None


async def test_fast_mode_is_one_call_without_tools(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path)
    llm = ScriptedLLM([text("quick answer")])
    runner = AgentRunner(store=store, modes={"normal": FastMode(llm=llm),
                                             "fast": FastMode(llm=llm)})
    events = await collect(runner, store, "quick?", mode="fast")
    assert events[-1].text == "quick answer"
    assert len(llm.requests) == 1 and llm.requests[0]["role"] == "fast"
    assert not llm.requests[0]["tools"]


async def test_long_conversations_are_summarised_once_with_a_watermark(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path)
    conv = await store.conversations.active(CHAT, None)
    for i in range(35):
        await store.conversations.add_message(conv.id, ChatMessage(role="user", content=f"q{i}"))
        await store.conversations.add_message(conv.id, ChatMessage(role="assistant",
                                                                   content=f"a{i}"))
    llm = ScriptedLLM([text("SUMMARY: talked about q0..q24"), text("answer")])
    runner = AgentRunner(store=store, summarizer=llm, limits=RunLimits(),
                         modes={"normal": NormalMode(llm=llm, registry=ToolRegistry(),
                                                     plan=False)})
    await collect(runner, store, "next")
    conv = await store.conversations.get(conv.id)
    assert conv.summary == "SUMMARY: talked about q0..q24"
    summarised = llm.requests[0]["messages"][-1].content
    assert "q0" in summarised and "q25" not in summarised  # the last 20 stay verbatim
    history = llm.requests[1]["messages"]
    assert next(m.content for m in history if m.role == "user") == "q25"
    assert any("SUMMARY: talked about" in m.content for m in history if m.role == "system")
    # below the threshold again until 60 more messages: no second summary
    llm2 = ScriptedLLM([text("answer 2")])
    runner2 = AgentRunner(store=store, summarizer=llm2, modes={"normal": FastMode(llm=llm2)})
    await collect(runner2, store, "again")
    assert len(llm2.requests) == 1


def test_sanitize_history_drops_dangling_tool_calls():
    msgs = [
        ChatMessage(role="tool", content="orphan", tool_call_id="x"),
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", tool_calls=[ToolCall(id="1", name="a", arguments="{}")]),
        ChatMessage(role="user", content="q2"),
        ChatMessage(role="assistant", content="ok"),
    ]
    assert [m.content for m in sanitize_history(msgs)] == ["q", "q2", "ok"]
