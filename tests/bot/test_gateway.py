"""Gateway and renderer behaviour with the in-process recording adapter and a scripted LLM."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.gateway import Gateway
from bot.renderer import Renderer
from core.agent import AgentRunner, NormalMode
from core.errors import FormattingRejected, RateLimited
from core.events import Done, Failed, TextDelta
from core.store import STOPPED_NOTE, Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import Capabilities, ChatRef, IncomingMessage, MessageRef, Reply, Sender

CHAT = ChatRef(platform="test", chat_id="c1")


def msg(body: str, mid: str, uid: str = "u1", chat: ChatRef = CHAT) -> IncomingMessage:
    return IncomingMessage(platform=chat.platform, chat=chat, sender=Sender(platform_uid=uid),
                           message_id=mid, text=body)


async def until(check: Callable[[], Any], within_s: float = 60.0) -> None:
    """Poll `check` (a bool, or an awaitable of one) until it holds."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within_s
    while True:
        got = check()
        if not isinstance(got, bool):
            got = await got
        if got:
            return
        assert loop.time() < end, "not within the time allowed"
        await asyncio.sleep(0.02)


def gateway(pg_db, tmp_path: Path, llm: ScriptedLLM) -> tuple[Gateway, Store]:
    store = Store(pg_db, files_dir=tmp_path)
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
    return Gateway(store=store, runner=runner), store


async def test_messages_during_a_run_are_answered_in_order(pg_db, tmp_path):
    llm = ScriptedLLM([text("first"), text("second"), text("third")], latency_s=0.05)
    gw, _ = gateway(pg_db, tmp_path, llm)
    chat = RecordingAdapter()
    await chat.start(gw.handler_for(chat))
    for i, q in enumerate(["q1", "q2", "q3"]):
        await chat.deliver(msg(q, str(i)))
    await gw.idle()
    assert [t for t in chat.visible_text(CHAT)] == ["first", "second", "third"]
    asked = [r["messages"][-1].content for r in llm.requests]
    assert asked == ["q1", "q2", "q3"]


async def test_stop_cancels_the_run_and_says_so(pg_db, tmp_path):
    llm = ScriptedLLM([text("too late")], latency_s=5)
    gw, store = gateway(pg_db, tmp_path, llm)
    chat = RecordingAdapter()
    await chat.start(gw.handler_for(chat))
    await chat.deliver(msg("slow question", "1"))
    await until(lambda: bool(llm.requests))  # the run asked the model: stopped mid-answer
    await chat.deliver(msg("/stop", "2"))
    await gw.idle()
    assert chat.visible_text(CHAT) == ["⏹ Stopped."]
    conv = await store.conversations.active(CHAT, None)
    last = (await store.conversations.messages(conv.id))[-1].message
    assert last.content == "[stopped by the user]"
    await chat.deliver(msg("/stop", "3"))
    assert chat.visible_text(CHAT)[-1] == "Nothing is running."


class Watching(RecordingAdapter):
    """A page's adapter: records the run's events (an EventObserver); once the first
    placeholder is out, `hold()` runs if given (a test locks the question's row with it)."""

    def __init__(self, hold=None) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.hold = hold
        self.placeholder: str | None = None
        self.events: list[tuple[str | None, object]] = []

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        ref = await super().send(chat, reply)
        if self.placeholder is None:
            self.placeholder = ref.message_id
            if self.hold is not None:
                await self.hold()
        return ref

    async def observe(self, chat: ChatRef, ref: MessageRef | None, event: object) -> None:
        self.events.append((ref.message_id if ref is not None else None, event))


@pytest.mark.parametrize("stop", ["/stop", "/new"])
async def test_a_stop_between_the_placeholder_and_the_run_is_said_in_the_placeholder(
        pg_db, tmp_path, stop):
    """/stop or /new while the run records its placeholder, before it asks the model: the
    placeholder says it stopped (not "working" for good), a page watching the run is told it
    ended (or it shows the run, and its Stop button, for good), and the question stays in the
    conversation it was asked in, its stop noted, as a run stopped midway leaves it (it had
    vanished: not in the history, not found by the web page's search)."""
    llm = ScriptedLLM([text("never asked")])
    gw, store = gateway(pg_db, tmp_path, llm)
    locker = await pg_db.pool.acquire()
    tx = locker.transaction()

    async def hold() -> None:  # the question's row, locked: recording the placeholder waits
        await tx.start()
        await locker.execute("SELECT 1 FROM inbound_events WHERE message_id = '1' FOR UPDATE")

    chat = Watching(hold)
    await chat.start(gw.handler_for(chat))
    try:
        await chat.deliver(msg("slow question", "1"))
        await until(lambda: pg_db.pool.fetchval(  # the run waits on the lock
            "SELECT count(*) > 0 FROM pg_locks WHERE NOT granted"))
        asked_in = await store.conversations.active(CHAT, None)
        await chat.deliver(msg(stop, "2"))
    finally:
        await tx.rollback()
        await pg_db.pool.release(locker)
    await gw.idle()
    assert chat.visible_text(CHAT)[0] == "⏹ Stopped."
    assert len(chat.visible_text(CHAT)) == (1 if stop == "/stop" else 2)  # /new: and says so
    assert llm.requests == []
    kept = [(m.message.role, m.message.content)
            for m in await store.conversations.messages(asked_in.id)]
    assert kept == [("user", "slow question"), ("assistant", STOPPED_NOTE)]
    assert (await store.conversations.get(asked_in.id)).title == "slow question"
    if stop == "/new":
        now = await store.conversations.active(CHAT, None)
        assert now.id != asked_in.id
        assert await store.conversations.messages(now.id) == []
    seen = [(type(e).__name__, getattr(e, "kind", "")) for ref, e in chat.events
            if ref == chat.placeholder]
    assert seen == [("Status", ""), ("Failed", "cancelled")]  # running from the placeholder
    await gw.aclose()


class HalfAnswered:
    """Streams half an answer, then takes its time (or fails) over the rest."""

    name = "normal"

    def __init__(self, then_fail: bool = False) -> None:
        self.then_fail = then_fail

    async def run(self, turn):  # type: ignore[no-untyped-def]
        yield TextDelta(text="**NVDA** closed higher; the first half")
        if self.then_fail:
            yield Failed(error="The model could not answer: connection reset", kind="llm")
            return
        await asyncio.sleep(30)
        yield Done(text="never")


async def test_stop_or_a_failure_mid_answer_keeps_what_was_already_read(pg_db, tmp_path):
    """The text the user watched grow stays, marked as stopped or failed, rather than being
    replaced by the mark alone."""
    store = Store(pg_db, files_dir=tmp_path)
    for then_fail, mark in ((False, "⏹ Stopped."),
                            (True, "⚠️ The model could not answer: connection reset")):
        gw = Gateway(store=store, runner=AgentRunner(
            store=store, modes={"normal": HalfAnswered(then_fail)}))
        chat = Watching()  # a page watching it: told once that the run ended
        await chat.start(gw.handler_for(chat))
        mid = "f" if then_fail else "s"
        await chat.deliver(msg("NVDA today?", mid + "1"))
        if not then_fail:
            for _ in range(100):
                if any("first half" in m for m in chat.visible_text(CHAT)):
                    break
                await asyncio.sleep(0.05)
            await chat.deliver(msg("/stop", mid + "2"))
        await gw.idle()
        assert chat.visible_text(CHAT)[-1] == (  # as Markdown is shown on a plain platform
            f"NVDA closed higher; the first half\n\n{mark}")
        ended = [getattr(e, "kind", "") for _, e in chat.events if isinstance(e, (Done, Failed))]
        assert ended == ["llm" if then_fail else "cancelled"]
        await gw.aclose()


async def test_mode_is_stored_on_the_conversation_and_new_keeps_it(pg_db, tmp_path):
    gw, store = gateway(pg_db, tmp_path, ScriptedLLM(default=text("ok")))
    chat = RecordingAdapter()
    await chat.start(gw.handler_for(chat))
    await chat.deliver(msg("/mode debate", "1"))
    assert (await store.conversations.active(CHAT, None)).mode == "debate"
    await chat.deliver(msg("/mode nonsense", "2"))
    assert "Unknown mode" in chat.visible_text(CHAT)[-1]
    await chat.deliver(msg("/new", "3"))
    assert (await store.conversations.active(CHAT, None)).mode == "debate"
    await chat.deliver(msg("/whatever", "4"))
    assert "/mode" in chat.visible_text(CHAT)[-1]  # unknown commands get the help


async def test_link_from_console_then_code_from_another_platform(pg_db, tmp_path):
    gw, store = gateway(pg_db, tmp_path, ScriptedLLM(default=text("ok")))
    console = RecordingAdapter(name="console")
    tg = RecordingAdapter(name="telegram")
    await console.start(gw.handler_for(console))
    await tg.start(gw.handler_for(tg))
    cchat = ChatRef(platform="console", chat_id="local")
    tchat = ChatRef(platform="telegram", chat_id="99")
    await console.deliver(msg("/link", "1", uid="local", chat=cchat))
    code = re.search(r"\b\d{8}\b", console.visible_text(cchat)[-1]).group(0)
    await tg.deliver(msg(f"/link {code}", "1", uid="99", chat=tchat))
    assert "Linked" in tg.visible_text(tchat)[-1]
    a = await store.accounts.user_for("console", "local")
    assert a == await store.accounts.user_for("telegram", "99")
    assert len(await store.accounts.accounts_of(a)) == 2


async def test_renderer_waits_out_429_and_falls_back_to_plain_text():
    caps = Capabilities(max_message_length=50, can_edit=True, min_edit_interval_s=0.0,
                        markup="telegram_html")
    chat = RecordingAdapter(capabilities=caps)
    chat.faults["edit"] = [RateLimited(retry_after=0.01), FormattingRejected("bad entity")]
    r = Renderer(chat, CHAT)
    await r.start()
    await r.on_event(TextDelta(text="partial"))  # dropped: rate limited
    long_answer = "**Bold** answer. " + " ".join(f"word{i}" for i in range(30))
    await r.on_event(Done(text=long_answer))
    assert r.result.delivered and r.result.dropped_edits == 1
    shown = chat.visible_text(CHAT)
    assert all(len(s) <= 50 for s in shown) and len(shown) >= 3
    assert shown[0].startswith("Bold answer.")  # plain after the markup was rejected
    joined = " ".join(shown)
    assert all(f"word{i}" in joined for i in range(30))


async def test_final_text_is_sent_anew_when_the_placeholder_is_gone():
    from core.errors import PlatformError

    chat = RecordingAdapter()
    chat.faults["edit"] = [PlatformError("message to edit not found")]
    holders: list[str] = []

    async def holder(message_id: str) -> None:
        holders.append(message_id)

    r = Renderer(chat, CHAT, on_holder=holder)
    await r.start()
    await r.on_event(Done(text="the answer"))
    assert r.result.delivered
    assert chat.visible_text(CHAT)[-1] == "the answer"
    # the new message holds the answer now: recorded, so a crash's survivor edits it
    assert holders == [chat.ops[-1].message_id] and r.placeholder_id == holders[0]


async def test_an_answer_sent_without_a_placeholder_is_recorded_as_its_holder():
    """The placeholder could not be sent (a 500): the answer goes as a new message, whose id
    is handed over before anything else is sent, as a placeholder's is (a resumed run edits
    it instead of showing the answer twice: seen in a kill-load run)."""
    from core.errors import PlatformUnavailable

    chat = RecordingAdapter()
    chat.faults["send"] = [PlatformUnavailable("telegram sendMessage: Internal Server Error")]
    holders: list[str] = []

    async def holder(message_id: str) -> None:
        assert chat.visible_text(CHAT) == ["the answer"]  # called once it is shown
        holders.append(message_id)

    r = Renderer(chat, CHAT, on_holder=holder)
    await r.start()
    assert r.placeholder_id is None
    await r.on_event(Done(text="the answer"))
    assert r.result.delivered and chat.visible_text(CHAT) == ["the answer"]
    assert holders == [chat.ops[-1].message_id]


class AnswerTracingAdapter(RecordingAdapter):
    """Records which incoming message each send and edit says it answers."""

    def __init__(self) -> None:
        super().__init__()
        self.answers: list[tuple[str, str, str | None]] = []  # (op, text, in_reply_to)

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef:
        self.answers.append(("send", reply.text, reply.in_reply_to))
        return await super().send(chat, reply)

    async def edit(self, ref: MessageRef, reply: Reply) -> None:
        self.answers.append(("edit", reply.text, reply.in_reply_to))
        await super().edit(ref, reply)


async def test_every_reply_says_which_message_it_answers(pg_db, tmp_path):
    long = "A sentence that goes on. " * 40  # over the adapter's limit below: split in pieces
    gw, _ = gateway(pg_db, tmp_path, ScriptedLLM([text(long), text("short")], chunk=50))
    chat = AnswerTracingAdapter()
    chat.capabilities = chat.capabilities.model_copy(update={"max_message_length": 400})
    await chat.start(gw.handler_for(chat))
    await chat.deliver(msg("q1", "m1"))
    await chat.deliver(msg("/help", "m2"))
    await chat.deliver(msg("q2", "m3"))
    await gw.idle()
    by_message: dict[str | None, list[str]] = {}
    for _, body, answered in chat.answers:
        by_message.setdefault(answered, []).append(body)
    assert set(by_message) == {"m1", "m2", "m3"}  # no reply without its question
    assert any("/mode" in t for t in by_message["m2"])
    assert by_message["m3"][-1] == "short"
    pieces = [t for op, t, a in chat.answers if a == "m1" and op == "send"][1:]
    assert len(pieces) >= 2  # the continuation pieces carry it too


async def test_an_unknown_timeframe_in_ict_or_plan_gets_the_list_and_runs_nothing(
        pg_db, tmp_path):
    llm = ScriptedLLM(default=text("analysed"))
    gw, _ = gateway(pg_db, tmp_path, llm)
    chat = RecordingAdapter()
    await chat.start(gw.handler_for(chat))
    await chat.deliver(msg("/ict EURUSD 2h", "1"))
    await chat.deliver(msg("/plan NVDA fortnight", "2"))
    await gw.idle()
    replies = chat.visible_text(CHAT)
    assert len(replies) == 2 and all("1m, 5m, 15m, 30m, 1h, 4h" in r for r in replies)
    assert '"2h"' in replies[0] and '"fortnight"' in replies[1]
    assert llm.requests == []
    await chat.deliver(msg("/ict EURUSD 30m", "3"))  # a known one goes to the agent
    await gw.idle()
    assert chat.visible_text(CHAT)[-1] == "analysed"


async def test_ict_and_chart_commands_run_in_normal_mode_in_a_debate_chat(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path)
    normal, debate = ScriptedLLM(default=text("normal answer")), ScriptedLLM(
        default=text("debate answer"))
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=normal, registry=ToolRegistry(), plan=False),
        "debate": NormalMode(llm=debate, registry=ToolRegistry(), plan=False)})
    gw = Gateway(store=store, runner=runner)
    chat = RecordingAdapter()
    await chat.start(gw.handler_for(chat))
    await chat.deliver(msg("/mode debate", "1"))
    for i, body in enumerate(["/ict NVDA 1h", "/chart NVDA 6mo", "Is NVDA a buy?"], start=2):
        await chat.deliver(msg(body, str(i)))
    await gw.idle()
    assert chat.visible_text(CHAT)[1:] == ["normal answer", "normal answer", "debate answer"]


async def test_a_shutdown_mid_answer_is_recorded_as_such_not_as_a_user_stop(pg_db, tmp_path):
    llm = ScriptedLLM([text("too late")], latency_s=5)
    gw, store = gateway(pg_db, tmp_path, llm)
    chat = RecordingAdapter()
    await chat.start(gw.handler_for(chat))
    await chat.deliver(msg("slow question", "1"))
    for _ in range(3000):  # until the model is asked: the run is under way (30 s at most)
        if llm.requests:
            break
        await asyncio.sleep(0.01)
    assert llm.requests, "the run never reached the model"
    await gw.aclose()  # SIGTERM: the app closes the gateway
    assert "restarting" in chat.visible_text(CHAT)[-1]
    state = await pg_db.pool.fetchval("SELECT status FROM inbound_events WHERE message_id = '1'")
    assert state == "running"  # left for the next process to answer
    conv = await store.conversations.active(CHAT, None)
    last = (await store.conversations.messages(conv.id))[-1].message
    assert last.content == "[interrupted: Bullpen was shutting down]"
