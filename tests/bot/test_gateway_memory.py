"""Issue 28 item 8 (flat memory under a long soak): what the gateway keeps per chat or per
message is let go once the chat is answered, so its maps do not grow with the chats and the
messages it has seen. A soak of 25,000 questions is `bullpen bench soak`; this is the
deterministic guard: many chats, questions and commands, then every per-chat and per-message
map of the gateway (and the runner's conversation locks) is empty."""

from __future__ import annotations

import gc
from pathlib import Path

from bot.gateway import Gateway
from core.agent import AgentRunner, NormalMode
from core.store import Database, Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import ChatRef, IncomingMessage, Sender

CHATS = 40
QUESTIONS = 3


def _msg(chat: ChatRef, body: str, mid: str) -> IncomingMessage:
    return IncomingMessage(platform=chat.platform, chat=chat, message_id=mid, text=body,
                           sender=Sender(platform_uid=f"u{chat.chat_id}"))


async def test_per_chat_state_is_let_go_once_every_chat_is_answered(pg_db: Database,
                                                                     tmp_path: Path) -> None:
    llm = ScriptedLLM(default=text("answered"))
    store = Store(pg_db, files_dir=tmp_path)
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
    gw = Gateway(store=store, runner=runner)
    gw.limits.one_run_per_person = True  # the production default: a lock per person while it runs
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    chats = [ChatRef(platform="test", chat_id=f"c{i}") for i in range(CHATS)]
    for k in range(QUESTIONS):
        for chat in chats:
            await adapter.deliver(_msg(chat, f"question {k}", f"q{k}"))
    for chat in chats:
        await adapter.deliver(_msg(chat, "/help", "help"))  # a command, answered at once
    await gw.idle()
    for chat in chats:
        assert adapter.visible_text(chat).count("answered") == QUESTIONS, chat

    gc.collect()  # the person and conversation locks are weakly held
    assert len(gw.stages.queue) == 0 and gw.stages.queue.pending == 0
    assert len(gw.stages.routing) == 0  # no command in hand
    assert len(gw.stages.held) == 0 and gw.stages.record.unstored == 0
    assert len(gw.stages.persons) == 0
    assert len(runner._locks) == 0
    await gw.aclose()
