"""An answer belongs to its inbound message (house rule 15): the conversation rows a message's
run writes carry the inbound row's id, and `turn_of` finds a message's question and answer by
it, whatever other questions of the chat were stored in between or after."""

from __future__ import annotations

from pathlib import Path

from core.store import Database, Store
from core.types import ChatMessage, ChatRef, ToolCall

CHAT = ChatRef(platform="test", chat_id="c1")


async def inbound(store: Store, mid: str) -> int:
    got = await store.inbound.record_for_sender(platform=CHAT.platform, chat_id=CHAT.chat_id,
                                                message_id=mid, sender_uid="u1")
    assert got.new and got.id is not None
    return got.id


async def test_interleaved_runs_each_find_their_own_question_and_answer(
        pg_db: Database, tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    conv = await store.conversations.active(CHAT, None)
    one, two = await inbound(store, "1"), await inbound(store, "2")
    # both questions stored, then the second's run (a tool call on the way), then the first's
    for mid, text, iid in (("1", "NVDA?", one), ("2", "AAPL?", two)):
        await store.conversations.begin_turn(conv.id, text, title=text,
                                             platform_message_id=mid, inbound_id=iid)
    call = ToolCall(id="c1", name="quote", arguments='{"symbol": "AAPL"}')
    await store.conversations.add_run_records(conv.id, user_id=None, inbound_id=two, messages=[
        ChatMessage(role="assistant", content="", tool_calls=[call]),
        ChatMessage(role="tool", content="{}", tool_call_id="c1"),
        ChatMessage(role="assistant", content="AAPL's answer")])
    await store.conversations.add_run_records(conv.id, user_id=None, inbound_id=one, messages=[
        ChatMessage(role="assistant", content="NVDA's answer")])
    await store.conversations.label_answer(conv.id, "offline analyst", inbound_id=two)
    first, second = await store.conversations.turn_of(one), await store.conversations.turn_of(two)
    assert first is not None and second is not None
    assert (first.text, first.answer, first.label) == ("NVDA?", "NVDA's answer", "")
    assert (second.text, second.answer, second.label) == ("AAPL?", "AAPL's answer",
                                                          "offline analyst")
    assert first.user_message_id < second.user_message_id


async def test_a_question_without_an_answer_of_its_own_has_none(
        pg_db: Database, tmp_path: Path) -> None:
    """Another question's answer stored after it is not its answer; nor is a cut-short mark;
    a message whose question was never stored has no turn."""
    store = Store(pg_db, files_dir=tmp_path)
    conv = await store.conversations.active(CHAT, None)
    one, two, three = (await inbound(store, "1"), await inbound(store, "2"),
                       await inbound(store, "3"))
    await store.conversations.begin_turn(conv.id, "first", title="first", inbound_id=one)
    await store.conversations.add_run_records(conv.id, user_id=None, inbound_id=one, messages=[
        ChatMessage(role="assistant", content="[interrupted: Bullpen was shutting down]")])
    await store.conversations.begin_turn(conv.id, "second", title="second", inbound_id=two)
    await store.conversations.add_run_records(conv.id, user_id=None, inbound_id=two, messages=[
        ChatMessage(role="assistant", content="the second's answer")])
    turn = await store.conversations.turn_of(one)
    assert turn is not None and turn.text == "first" and turn.answer is None
    assert await store.conversations.turn_of(three) is None
