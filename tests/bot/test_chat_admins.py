"""bot.chat_admins on the recording adapter: an adapter that cannot tell who administers a
group lets everyone (logged once); one whose platform call fails refuses with "try again" and
changes nothing; Bullpen's own admins may always; the answer is kept for a minute; private
chats never ask. (Every platform's real check runs in tests/adapters/conformance.)"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from bot.gateway import Gateway
from core.agent import AgentRunner, FastMode
from core.errors import PlatformError
from core.store import Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.types import ChatRef, IncomingMessage, Sender

GROUP = ChatRef(platform="test", chat_id="g1", is_group=True)


class AskingAdapter(RecordingAdapter):
    """Answers `is_chat_admin` from `admins`, or raises the queued platform error."""

    def __init__(self, admins: set[str], answer: bool | None = False) -> None:
        super().__init__(name="test")
        self.admins, self.answer = admins, answer
        self.asked: list[str] = []
        self.failing: list[Exception] = []

    async def is_chat_admin(self, chat: ChatRef, sender: Sender) -> bool | None:
        self.asked.append(sender.platform_uid)
        if self.failing:
            raise self.failing.pop(0)
        return True if sender.platform_uid in self.admins else self.answer


def make(pg_db: Any, tmp_path: Path) -> Gateway:
    store = Store(pg_db, files_dir=tmp_path)
    llm = ScriptedLLM(default=text("ok"))
    return Gateway(store=store, runner=AgentRunner(store=store, modes={
        "normal": FastMode(llm=llm), "fast": FastMode(llm=llm)}))


def msg(body: str, mid: str, uid: str, chat: ChatRef = GROUP) -> IncomingMessage:
    return IncomingMessage(platform=chat.platform, chat=chat, sender=Sender(platform_uid=uid),
                           message_id=mid, text=body)


async def test_an_adapter_that_cannot_tell_lets_everyone_and_says_so_once(
        pg_db, tmp_path, caplog) -> None:
    gw = make(pg_db, tmp_path)
    plain = RecordingAdapter(name="plainchat")  # no is_chat_admin at all
    await plain.start(gw.handler_for(plain))
    group = GROUP.model_copy(update={"platform": "plainchat"})
    with caplog.at_level(logging.INFO, logger="bot.chat_admins"):
        await plain.deliver(msg("/mode fast", "1", "u1", group))
        await plain.deliver(msg("/mode debate", "2", "u2", group))
    assert plain.visible_text(group) == ["Mode set to *fast*.", "Mode set to *debate*."]
    assert sum("does not say who administers" in r.message for r in caplog.records) == 1
    undecided = AskingAdapter(set(), answer=None)  # the platform does not say for this chat
    await undecided.start(gw.handler_for(undecided))
    await undecided.deliver(msg("/mode fast", "3", "u3"))
    assert undecided.visible_text(GROUP) == ["Mode set to *fast*."]


async def test_a_failed_check_refuses_with_try_again_and_changes_nothing(
        pg_db, tmp_path) -> None:
    gw = make(pg_db, tmp_path)
    adapter = AskingAdapter({"boss"})
    await adapter.start(gw.handler_for(adapter))
    adapter.failing.append(PlatformError("test getChatMember: network error"))
    await adapter.deliver(msg("/mode debate", "1", "boss"))
    assert "could not check this group's admins" in adapter.visible_text(GROUP)[-1]
    await adapter.deliver(msg("/mode", "2", "boss"))
    assert "Current mode: *normal*" in adapter.visible_text(GROUP)[-1]
    await adapter.deliver(msg("/mode debate", "3", "boss"))  # asked again: an error is not kept
    assert adapter.visible_text(GROUP)[-1] == "Mode set to *debate*."
    assert adapter.asked == ["boss", "boss"]


async def test_bot_admins_may_always_and_private_chats_never_ask(pg_db, tmp_path) -> None:
    gw = make(pg_db, tmp_path)
    gw.limits.admins = frozenset({"test:owner"})
    adapter = AskingAdapter(set())
    await adapter.start(gw.handler_for(adapter))
    await adapter.deliver(msg("/mode fast", "1", "owner"))
    assert adapter.visible_text(GROUP)[-1] == "Mode set to *fast*."
    private = ChatRef(platform="test", chat_id="p1")
    await adapter.deliver(msg("/mode debate", "2", "someone", private))
    assert adapter.visible_text(private) == ["Mode set to *debate*."]
    assert adapter.asked == []
    for i in range(3):  # a member: asked once, refused each time from the kept answer
        await adapter.deliver(msg("/mode debate", f"m{i}", "member"))
        assert "only its admins can use /mode" in adapter.visible_text(GROUP)[-1]
    await adapter.deliver(msg("/unsubscribe all", "m9", "member"))
    assert "only its admins can use /unsubscribe" in adapter.visible_text(GROUP)[-1]
    assert adapter.asked == ["member"]
