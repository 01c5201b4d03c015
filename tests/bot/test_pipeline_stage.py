"""The recipe for a stage, as a test: a stage declared here, with its own state, added to the
path by `build_pipeline(added=...)` (through `Gateway(added=...)`), on by default and off only
by its name; and the stage list itself, in order, built by one function."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.budget_gateway import account_of
from bot.gateway import Gateway
from bot.pipeline import ALWAYS_ON, STAGES, build_pipeline
from bot.pipeline.context import Arrival
from bot.pipeline.limits import Limits
from core.agent import AgentRunner, NormalMode
from core.store import Store
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import ChatRef, IncomingMessage, Sender
from core.words import t


class Blocklist:
    """The example stage: accounts an operator shut out, refused before routing (they never
    reach the model). Its own state: the accounts, and how many messages it refused."""

    name = "blocklist"

    def __init__(self, accounts: set[str]) -> None:
        self.accounts = accounts
        self.refused = 0

    async def __call__(self, arrival: Arrival) -> bool:
        who = account_of(arrival.message)
        if who not in self.accounts:
            return False  # not ours: on to routing
        self.refused += 1
        await arrival.say(t("chat.access_denied", arrival.lang, who=who))
        return True  # answered here


def _gateway(pg_db, tmp_path: Path, llm: ScriptedLLM, **kw) -> Gateway:  # type: ignore[no-untyped-def]
    store = Store(pg_db, files_dir=tmp_path)
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
    return Gateway(store=store, runner=runner, **kw)


def _msg(chat: ChatRef, uid: str, mid: str, body: str) -> IncomingMessage:
    return IncomingMessage(platform=chat.platform, chat=chat, message_id=mid, text=body,
                           sender=Sender(platform_uid=uid))


async def test_an_added_stage_answers_before_routing_and_keeps_its_own_state(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("an answer"))
    stage = Blocklist({"test:mallory"})
    gw = _gateway(pg_db, tmp_path, llm, added=[stage])
    assert gw.stages.on == (*STAGES, "blocklist")
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    alice, mallory = ChatRef(platform="test", chat_id="a"), ChatRef(platform="test", chat_id="m")
    await adapter.deliver(_msg(alice, "alice", "1", "How is NVDA?"))
    await adapter.deliver(_msg(mallory, "mallory", "2", "How is NVDA?"))
    await gw.idle()
    assert adapter.visible_text(alice) == ["an answer"]
    assert adapter.visible_text(mallory) == [t("chat.access_denied", "en", who="test:mallory")]
    assert stage.refused == 1 and len(llm.requests) == 1  # mallory's never reached the model
    await gw.aclose()


async def test_a_stage_is_off_only_by_its_name(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("an answer"))
    stage = Blocklist({"test:mallory"})
    gw = _gateway(pg_db, tmp_path, llm, added=[stage], off=["blocklist", "rate_limits"])
    assert "blocklist" not in gw.stages.on and "rate_limits" not in gw.stages.on
    adapter = RecordingAdapter()
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="test", chat_id="m")
    await adapter.deliver(_msg(chat, "mallory", "1", "How is NVDA?"))
    await gw.idle()
    assert adapter.visible_text(chat) == ["an answer"] and stage.refused == 0
    await gw.aclose()


async def test_the_stage_list_is_built_in_order_by_one_function(pg_db, tmp_path):
    store = Store(pg_db, files_dir=tmp_path)

    async def answer(job):  # type: ignore[no-untyped-def]
        return None

    async def recorded(*_):  # type: ignore[no-untyped-def]
        return None

    kw = {"store": store, "outbox": None, "limits": Limits(), "instance": "i",
          "recorded": recorded, "answer": answer, "take_over": recorded}
    built = build_pipeline(**kw)
    assert built.on == STAGES
    assert STAGES.index("record") == 0 and STAGES.index("admission") < STAGES.index("routing")
    assert STAGES.index("chat_queue") < STAGES.index("spend") < STAGES.index("answer")
    with pytest.raises(ValueError, match="no such stage"):
        build_pipeline(**kw, off=["admision"])  # misspelt: loud
    for core_stage in ALWAYS_ON:
        with pytest.raises(ValueError, match="cannot be switched off"):
            build_pipeline(**kw, off=[core_stage])
