"""Crash-safe processing: a message left unanswered by a process that stopped (kill -9,
SIGTERM mid-answer) is answered once by the next one, in the placeholder it left; one too old
is answered with a request to send it again."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.gateway import Gateway
from core.agent import AgentRunner
from core.events import Done
from core.store import Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.types import ChatMessage, MessageRef, Reply
from tests.bot.test_gateway import CHAT, gateway, msg


async def left_by_a_dead_process(pg_db, adapter: RecordingAdapter, body: str, mid: str, *,  # type: ignore[no-untyped-def]
                                 age_s: float, status: str = "running") -> str:
    """The rows a killed process leaves: the message recorded, its placeholder shown."""
    ref = await adapter.send(CHAT, Reply(text="⏳ Working on it…", markup="plain"))
    m = msg(body, mid)
    await pg_db.pool.execute(
        "INSERT INTO inbound_events (platform, chat_id, message_id, sender_uid, message, owner,"
        " status, placeholder, received_at, updated_at)"
        " VALUES ($1, $2, $3, $4, $5, 'dead-process', $6, $7,"
        "         now() - make_interval(secs => $8), now() - make_interval(secs => $8))",
        m.platform, m.chat.chat_id, m.message_id, m.sender.platform_uid,
        m.model_dump(mode="json"), status, ref.message_id, age_s)
    return ref.message_id


async def state(pg_db, mid: str) -> str:  # type: ignore[no-untyped-def]
    got: str = await pg_db.pool.fetchval(
        "SELECT status FROM inbound_events WHERE message_id = $1", mid)
    return got


async def test_a_message_a_killed_process_left_is_answered_once_in_its_placeholder(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    adapter = RecordingAdapter()
    placeholder = await left_by_a_dead_process(pg_db, adapter, "NVDA outlook?", "7",
                                               age_s=60)
    llm = ScriptedLLM([text("NVDA looks strong.")])
    gw, _ = gateway(pg_db, tmp_path, llm)
    assert await gw.stages.resume.unanswered(
        lambda p: adapter if p == "test" else None, ["test"]) == 1
    await gw.idle()
    assert adapter.visible_text(CHAT) == ["NVDA looks strong."]  # the placeholder became it
    assert adapter.texts[placeholder] == "NVDA looks strong."
    assert await state(pg_db, "7") == "answered"
    assert await gw.stages.resume.unanswered(lambda p: adapter, ["test"]) == 0  # once
    await gw.handle(adapter, msg("NVDA outlook?", "7"))  # the platform redelivers it
    await gw.idle()
    assert adapter.visible_text(CHAT) == ["NVDA looks strong."] and len(llm.requests) == 1
    await gw.aclose()


async def test_a_live_process_keeps_its_messages(pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    adapter = RecordingAdapter()
    await left_by_a_dead_process(pg_db, adapter, "still being answered", "8", age_s=5)
    gw, _ = gateway(pg_db, tmp_path, ScriptedLLM([]))
    # its heartbeat is recent
    assert await gw.stages.resume.unanswered(lambda p: adapter, ["test"]) == 0
    await gw.aclose()


async def test_one_too_old_to_answer_now_asks_to_send_it_again(pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    adapter = RecordingAdapter()
    placeholder = await left_by_a_dead_process(pg_db, adapter, "what about gold", "9",
                                               age_s=3600, status="received")
    gw, _ = gateway(pg_db, tmp_path, ScriptedLLM([]))
    assert await gw.stages.resume.unanswered(lambda p: adapter, ["test"]) == 1
    assert "Please send it again" in adapter.texts[placeholder]
    assert "what about gold" in adapter.texts[placeholder]
    assert await state(pg_db, "9") == "failed"
    await gw.aclose()


async def test_sigterm_mid_answer_then_the_next_process_finishes_it(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    adapter = RecordingAdapter()
    first, _ = gateway(pg_db, tmp_path, ScriptedLLM([text("too late")], latency_s=5))
    await adapter.start(first.handler_for(adapter))
    await adapter.deliver(msg("slow question", "10"))
    await asyncio.sleep(0.2)
    await first.aclose()  # SIGTERM: the answer in flight is left for the next process
    assert "restarting" in adapter.visible_text(CHAT)[-1]
    assert await state(pg_db, "10") == "running"
    await pg_db.pool.execute("UPDATE inbound_events SET updated_at = now() - interval '1 min'")
    second, _ = gateway(pg_db, tmp_path, ScriptedLLM([text("The answer, after all.")]))
    assert await second.stages.resume.unanswered(lambda p: adapter, ["test"]) == 1
    await second.idle()
    assert adapter.visible_text(CHAT) == ["The answer, after all."]  # one message, edited
    assert await state(pg_db, "10") == "answered"
    # the question is stored once; the history says what happened to the first run
    assert await said(pg_db, "10") == [
        ("user", "slow question"), ("assistant", "[interrupted: Bullpen was shutting down]"),
        ("assistant", "The answer, after all.")]
    await second.aclose()


async def said(pg_db, mid: str) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    """What the conversation of the question `mid` holds from that question on."""
    rows = await pg_db.pool.fetch(
        "SELECT role, content FROM messages WHERE conversation_id = (SELECT conversation_id"
        " FROM messages WHERE platform_message_id = $1) AND id >= (SELECT id FROM messages"
        " WHERE platform_message_id = $1) ORDER BY id", mid)
    return [(r["role"], r["content"]) for r in rows]


async def test_an_answer_stored_before_the_process_died_is_shown_without_asking_again(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Killed after the answer was stored (and perhaps shown) but before the message's state
    was: the next process shows the stored answer in the placeholder; the model is not asked
    and nothing is stored twice."""
    adapter = RecordingAdapter()
    first, _ = gateway(pg_db, tmp_path, ScriptedLLM([text("Stored, then the lights went out.")]))
    await adapter.start(first.handler_for(adapter))
    await adapter.deliver(msg("NVDA?", "11"))
    await first.idle()
    # as if the process died before recording the state: still running, owner gone quiet
    await pg_db.pool.execute(
        "UPDATE inbound_events SET status = 'running', owner = 'dead-process',"
        " updated_at = now() - interval '1 min' WHERE message_id = '11'")
    await first.aclose()
    llm = ScriptedLLM([])  # asking it would fail the test: it has nothing scripted
    second, _ = gateway(pg_db, tmp_path, llm)
    assert await second.stages.resume.unanswered(lambda p: adapter, ["test"]) == 1
    await second.idle()
    assert adapter.visible_text(CHAT) == ["Stored, then the lights went out."]
    assert llm.requests == []
    assert await state(pg_db, "11") == "answered"
    assert await said(pg_db, "11") == [("user", "NVDA?"),
                                       ("assistant", "Stored, then the lights went out.")]
    await second.aclose()


async def test_commands_and_ignored_messages_are_not_left_unanswered(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    adapter = RecordingAdapter()
    gw, _ = gateway(pg_db, tmp_path, ScriptedLLM([text("an answer")]))
    await adapter.start(gw.handler_for(adapter))
    await adapter.deliver(msg("/help", "11"))
    await adapter.deliver(msg("a question", "12"))
    await gw.idle()
    assert await state(pg_db, "11") == "answered" and await state(pg_db, "12") == "answered"
    await gw.aclose()


async def test_a_redelivery_of_a_message_nobody_is_answering_resumes_it_at_once(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The platform redelivers (Telegram after a crash, WeChat's retries): a message whose
    process went quiet is answered now, in its placeholder, not dropped as a duplicate."""
    adapter = RecordingAdapter()
    placeholder = await left_by_a_dead_process(pg_db, adapter, "AAPL?", "12", age_s=60)
    llm = ScriptedLLM([text("AAPL, answered on redelivery.")])
    gw, _ = gateway(pg_db, tmp_path, llm)
    await gw.handle(adapter, msg("AAPL?", "12"))
    await gw.idle()
    assert adapter.visible_text(CHAT) == ["AAPL, answered on redelivery."]
    assert adapter.texts[placeholder] == "AAPL, answered on redelivery."
    assert await state(pg_db, "12") == "answered"
    await gw.handle(adapter, msg("AAPL?", "12"))  # and again: now a plain duplicate
    await gw.idle()
    assert len(llm.requests) == 1
    await gw.aclose()


async def test_a_message_the_sweep_and_a_redelivery_both_take_is_answered_once(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The sweep takes a dead process's message and, before it has queued it, Telegram
    redelivers it: the claim succeeds for both (the owner is this process now), but the
    second take sees the message in hand and leaves it to the first. Before, both answered
    it: with no placeholder recorded, in two messages (seen under kill -9 at load)."""
    adapter = RecordingAdapter()
    m = msg("TSLA?", "14")
    await pg_db.pool.execute(  # killed before its placeholder went out
        "INSERT INTO inbound_events (platform, chat_id, message_id, sender_uid, message, owner,"
        " status, received_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'dead-process',"
        " 'received', now() - interval '1 min', now() - interval '1 min')",
        m.platform, m.chat.chat_id, m.message_id, m.sender.platform_uid,
        m.model_dump(mode="json"))
    llm = ScriptedLLM([text("TSLA, answered once."), text("TSLA, answered twice.")])
    gw, _ = gateway(pg_db, tmp_path, llm)
    real, inside, go_on = gw._store.accounts.user_and_lang, asyncio.Event(), asyncio.Event()
    calls = 0

    async def first_one_waits(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        if calls == 1:  # the sweep's take: held between its claim and its queueing
            inside.set()
            await go_on.wait()
        return await real(*args, **kwargs)

    gw._store.accounts.user_and_lang = first_one_waits
    sweep = asyncio.create_task(gw.stages.resume.unanswered(lambda p: adapter, ["test"]))
    await inside.wait()
    await gw.handle(adapter, msg("TSLA?", "14"))  # the redelivery, while the sweep holds it
    go_on.set()
    assert await sweep == 1
    await gw.idle()
    assert len(llm.requests) == 1
    assert adapter.visible_text(CHAT) == ["TSLA, answered once."]
    assert await state(pg_db, "14") == "answered"
    await gw.aclose()


async def test_a_redelivery_while_its_process_is_alive_is_a_duplicate(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    adapter = RecordingAdapter()
    await left_by_a_dead_process(pg_db, adapter, "MSFT?", "13", age_s=1)  # beat 1 s ago
    llm = ScriptedLLM([])
    gw, _ = gateway(pg_db, tmp_path, llm)
    await gw.handle(adapter, msg("MSFT?", "13"))
    await gw.idle()
    assert llm.requests == [] and await state(pg_db, "13") == "running"
    assert gw.stages.dedupe.dropped == 1
    await gw.aclose()


class LabelledAnswers:
    """A mode whose answers carry a note, as the offline analyst's and unverified ones do;
    `asked` counts its runs."""

    name = "normal"

    def __init__(self) -> None:
        self.asked = 0

    async def run(self, turn):  # type: ignore[no-untyped-def]
        self.asked += 1
        answer = "NVDA closed at 123.45."
        await turn.recorder.message(ChatMessage(role="assistant", content=answer))
        yield Done(text=answer, label="offline analyst")


async def test_an_answer_shown_again_after_a_restart_keeps_its_label(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The note under an answer ("offline analyst", "unverified") is stored with it: the
    stored answer shown by the next process carries it too (house rule 12)."""
    adapter = RecordingAdapter()
    store = Store(pg_db, files_dir=tmp_path)
    first_mode, second_mode = LabelledAnswers(), LabelledAnswers()
    first = Gateway(store=store, runner=AgentRunner(store=store, modes={"normal": first_mode}))
    await adapter.start(first.handler_for(adapter))
    await adapter.deliver(msg("NVDA?", "21"))
    await first.idle()
    assert adapter.visible_text(CHAT) == ["NVDA closed at 123.45.\n\n_offline analyst_"]
    await pg_db.pool.execute(
        "UPDATE inbound_events SET status = 'running', owner = 'dead-process',"
        " updated_at = now() - interval '1 min' WHERE message_id = '21'")
    await first.aclose()
    # as if it died after storing the answer and before showing it
    placeholder = await pg_db.pool.fetchval(
        "SELECT placeholder FROM inbound_events WHERE message_id = '21'")
    await adapter.edit(MessageRef(chat=CHAT, message_id=placeholder),
                       Reply(text="⏳ Working on it…", markup="plain"))
    second = Gateway(store=store, runner=AgentRunner(store=store,
                                                     modes={"normal": second_mode}))
    assert await second.stages.resume.unanswered(lambda p: adapter, ["test"]) == 1
    await second.idle()
    assert adapter.visible_text(CHAT) == ["NVDA closed at 123.45.\n\n_offline analyst_"]
    assert (first_mode.asked, second_mode.asked) == (1, 0)
    inbound_id = await pg_db.pool.fetchval(
        "SELECT id FROM inbound_events WHERE message_id = '21'")
    turn = await store.conversations.turn_of(inbound_id)
    assert turn is not None and turn.label == "offline analyst"
    await second.aclose()


class Gated:
    """A mode that answers each question with its own text ("answer to: ...") once `release`
    is set (at once when it is None); `started` is set when a run has begun (its question is
    stored), `asked` counts its runs."""

    name = "normal"

    def __init__(self, release: asyncio.Event | None = None) -> None:
        self.release = release
        self.started = asyncio.Event()
        self.asked = 0

    async def run(self, turn):  # type: ignore[no-untyped-def]
        self.asked += 1
        self.started.set()
        if self.release is not None:
            await self.release.wait()
        answer = f"answer to: {turn.text}"
        await turn.recorder.message(ChatMessage(role="assistant", content=answer))
        yield Done(text=answer)


async def test_interleaved_questions_of_one_chat_each_resume_with_their_own_answer(
        pg_db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two serve processes answer two questions of one chat at once: the first question's
    answer is stored after the second's. Both die before recording the questions answered;
    the next process shows each question ITS OWN stored answer, in its own placeholder, and
    asks the model nothing (house rule 15: found by the inbound message, not by position)."""
    adapter = RecordingAdapter()
    store = Store(pg_db, files_dir=tmp_path)
    release = asyncio.Event()
    slow, quick, third = Gated(release), Gated(), Gated()
    first = Gateway(store=store, runner=AgentRunner(store=store, modes={"normal": slow}))
    second = Gateway(store=store, runner=AgentRunner(store=store, modes={"normal": quick}))
    await first.handle(adapter, msg("What about NVDA?", "31"))
    await slow.started.wait()  # the first question is stored, its answer is not
    await second.handle(adapter, msg("And AAPL?", "32"))
    await second.idle()  # the second question and its answer are stored
    release.set()
    await first.idle()  # the first question's answer is stored last
    # as if both processes died before recording the states, and before showing the answers
    await pg_db.pool.execute(
        "UPDATE inbound_events SET status = 'running', owner = 'dead-process',"
        " updated_at = now() - interval '1 min'")
    placeholders = {}
    for mid in ("31", "32"):
        placeholders[mid] = await pg_db.pool.fetchval(
            "SELECT placeholder FROM inbound_events WHERE message_id = $1", mid)
        await adapter.edit(MessageRef(chat=CHAT, message_id=placeholders[mid]),
                           Reply(text="⏳ Working on it…", markup="plain"))
    await first.aclose()
    await second.aclose()
    resumer = Gateway(store=store, runner=AgentRunner(store=store, modes={"normal": third}))
    assert await resumer.stages.resume.unanswered(lambda p: adapter, ["test"]) == 2
    await resumer.idle()
    assert adapter.texts[placeholders["31"]] == "answer to: What about NVDA?"
    assert adapter.texts[placeholders["32"]] == "answer to: And AAPL?"
    assert third.asked == 0  # both were stored: shown, not asked again
    assert await state(pg_db, "31") == "answered" and await state(pg_db, "32") == "answered"
    await resumer.aclose()
