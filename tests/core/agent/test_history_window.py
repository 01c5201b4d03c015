"""The runner keeps each conversation's history window between turns instead of reading it
again, and is never stale: whatever another process (another runner on the same database)
wrote, a new conversation (/new), a summary that moved the watermark, or a run that failed to
write, the next turn sees exactly what reading the window afresh gives."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path
from typing import cast

from core.agent.runner import AgentRunner, RunLimits
from core.agent.turn import Turn
from core.events import Done, Event
from core.store import Conversation, Database, Store
from core.types import ChatMessage, ChatRef, ToolCall

CHAT = ChatRef(platform="test", chat_id="w1")


class _Echo:
    """A mode that remembers the history it was given and answers with a tool call, its
    result and a final answer (four rows a turn with the question)."""

    name = "normal"

    def __init__(self) -> None:
        self.seen: list[list[tuple[str, str]]] = []

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        self.seen.append([(m.role, m.content) for m in turn.history])
        n = len(self.seen)
        call = ToolCall(id=f"c{n}", name="quote", arguments="{}")
        await turn.recorder.message(ChatMessage(role="assistant", content="", tool_calls=[call]))
        await turn.recorder.message(ChatMessage(role="tool", content=f"r{n}",
                                                tool_call_id=f"c{n}"))
        yield Done(text="")  # flushed before it goes out, then the answer after
        await turn.recorder.message(ChatMessage(role="assistant", content=f"answer to {turn.text}"))


async def _ask(runner: AgentRunner, conv: Conversation, text: str) -> None:
    async for _ in runner.run(conversation=conv, user_id=None, text=text):
        pass


async def _fresh(store: Store, conv: Conversation, limit: int) -> list[tuple[str, str]]:
    """The window as a fresh read gives it, as a mode sees it (sanitised)."""
    from core.agent.runner import sanitize_history

    now = await store.conversations.get(conv.id)
    rows = await store.conversations.messages(conv.id, after_id=now.summary_up_to, limit=limit)
    return [(m.role, m.content) for m in sanitize_history([r.message for r in rows])]


async def test_the_window_is_kept_between_turns_and_equals_a_fresh_read(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    conv = await store.conversations.active(CHAT, None)
    mode = _Echo()
    runner = AgentRunner(store=store, modes={"normal": mode}, limits=RunLimits(history_limit=6))
    for n in range(4):
        expected = await _fresh(store, conv, 6)
        await _ask(runner, conv, f"q{n}")
        assert mode.seen[-1] == expected
    assert runner.window_hits == 3  # every turn after the first
    assert len(mode.seen[-1]) <= 6 and mode.seen[-1][-1] == ("assistant", "answer to q2")


async def test_another_process_writing_is_seen_at_once(pg_db: Database, tmp_path: Path) -> None:
    """Two runners on one database (two serve processes) answering the same conversation:
    each turn sees the other's last turn, never a window it kept from before."""
    store_a, store_b = Store(pg_db, files_dir=tmp_path), Store(pg_db, files_dir=tmp_path)
    conv = await store_a.conversations.active(CHAT, None)
    a_mode, b_mode = _Echo(), _Echo()
    a = AgentRunner(store=store_a, modes={"normal": a_mode}, limits=RunLimits(history_limit=8))
    b = AgentRunner(store=store_b, modes={"normal": b_mode}, limits=RunLimits(history_limit=8))
    await _ask(a, conv, "a1")
    await _ask(b, conv, "b1")
    expected = await _fresh(store_a, conv, 8)
    await _ask(a, conv, "a2")  # a kept its window after a1; b wrote since
    assert a_mode.seen[-1] == expected
    assert ("assistant", "answer to b1") in a_mode.seen[-1]
    assert a.window_hits == 0
    # a row written outside any run (e.g. a command storing a message) is seen too
    await store_b.conversations.add_message(conv.id, ChatMessage(role="user", content="aside"))
    await store_b.conversations.add_message(conv.id, ChatMessage(role="assistant",
                                                                 content="noted"))
    expected = await _fresh(store_a, conv, 8)
    await _ask(a, conv, "a3")
    assert a_mode.seen[-1] == expected and a_mode.seen[-1][-1] == ("assistant", "noted")
    assert a.window_hits == 0


async def test_a_new_conversation_and_a_moved_summary_start_from_the_database(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    conv = await store.conversations.active(CHAT, None)
    mode = _Echo()
    runner = AgentRunner(store=store, modes={"normal": mode}, limits=RunLimits(history_limit=8))
    await _ask(runner, conv, "q1")
    await _ask(runner, conv, "q2")
    # the summary moves on (as `_summarize` or another process leaves it)
    rows = await store.conversations.messages(conv.id)
    await store.conversations.set_summary(conv.id, "earlier", rows[3].id)
    hits = runner.window_hits
    expected = await _fresh(store, conv, 8)
    await _ask(runner, conv, "q3")
    assert mode.seen[-1] == expected and ("user", "q1") not in mode.seen[-1]
    assert runner.window_hits == hits
    # /new: the new conversation has no history, whatever the old one kept
    new = await store.conversations.start_new(CHAT, None)
    await _ask(runner, new, "fresh")
    assert mode.seen[-1] == []


async def test_a_run_left_half_way_leaves_an_exact_window(pg_db: Database, tmp_path: Path) -> None:
    """A run stopped half-way (the consumer left after the first event) writes what it had
    and keeps the window only as far as its writes are known; the next turn is exact."""
    store = Store(pg_db, files_dir=tmp_path)
    conv = await store.conversations.active(CHAT, None)
    mode = _Echo()
    runner = AgentRunner(store=store, modes={"normal": mode}, limits=RunLimits(history_limit=8))
    run = cast(AsyncGenerator[Event, None],
               runner.run(conversation=conv, user_id=None, text="half"))
    async for _ in run:
        break  # the first event (Done) shown, then the consumer goes away
    await run.aclose()
    expected = await _fresh(store, conv, 8)
    await _ask(runner, conv, "next")
    assert mode.seen[-1] == expected
