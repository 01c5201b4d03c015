"""The recipe for a stage, as a test: a stage declared here, with its own state, added to the
path by `build_pipeline(added=...)` (through `Gateway(added=...)`), on by default and off only
by its name; the stage list itself, in order, built by one function; and the built-in stages
that may be off, each off only by its named setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.budget_gateway import account_of
from bot.gateway import Gateway
from bot.pipeline import ALWAYS_ON, STAGES, SWITCHES, build_pipeline, switched_off
from bot.pipeline.context import Arrival
from bot.pipeline.limits import Limits
from bot.settings import Settings, env_names, load_settings
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
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=ScriptedLLM(), registry=ToolRegistry(), plan=False)})

    async def dispatch(*_):  # type: ignore[no-untyped-def]
        return None

    kw = {"store": store, "runner": runner, "outbox": None, "limits": Limits(),
          "instance": "i", "dispatch": dispatch}
    built = build_pipeline(**kw)
    assert built.on == STAGES
    assert STAGES.index("record") == 0 and STAGES.index("admission") < STAGES.index("routing")
    assert STAGES.index("chat_queue") < STAGES.index("spend") < STAGES.index("answer")
    with pytest.raises(ValueError, match="no such stage"):
        build_pipeline(**kw, off=["admision"])  # misspelt: loud
    for core_stage in ALWAYS_ON:
        with pytest.raises(ValueError, match="cannot be switched off"):
            build_pipeline(**kw, off=[core_stage])


def test_each_stage_that_may_be_off_has_its_named_setting(monkeypatch):
    """The switches are settings like any other (validated, in docs/settings.md): one per
    stage that may be off, on by default, named BULLPEN_..., read from the environment."""
    assert ALWAYS_ON == {"record", "routing", "chat_queue", "answer"}
    assert set(SWITCHES) == set(STAGES) - ALWAYS_ON
    stage_fields = {name for name in Settings.model_fields if name.startswith("stage_")}
    assert stage_fields <= set(SWITCHES.values())  # no switch that switches nothing
    assert switched_off(load_settings()) == ()  # every stage on by default
    for stage, field in SWITCHES.items():
        env = env_names()[list(Settings.model_fields).index(field)]
        assert env.startswith("BULLPEN_"), env
        monkeypatch.setenv(env, "false")
        assert switched_off(load_settings()) == (stage,), env
        monkeypatch.delenv(env)
    monkeypatch.setenv("BULLPEN_STAGE_SPEND", "perhaps")
    with pytest.raises(ValueError, match=r"(?i)stage_spend"):
        load_settings()  # not a yes or a no: loud, never taken for on


async def test_a_setting_switches_the_rate_limits_off_in_a_served_gateway(pg_db, tmp_path,
                                                                          monkeypatch):
    """BULLPEN_STAGE_RATE_LIMITS=false, as `serve` builds its gateway: the person's second
    message in the minute is answered, where the stage on refuses it."""
    store = Store(pg_db, files_dir=tmp_path)
    llm = ScriptedLLM(default=text("an answer"))
    said: dict[bool, list[str]] = {}
    for switched in (False, True):
        if switched:
            monkeypatch.setenv("BULLPEN_STAGE_RATE_LIMITS", "false")
        settings = load_settings(rate_messages_per_minute=1, one_run_per_person=False)
        runner = AgentRunner(store=store, modes={
            "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
        gw = Gateway(store=store, runner=runner, limits=Limits.from_settings(settings, store),
                     off=switched_off(settings))
        assert ("rate_limits" in gw.stages.on) is not switched
        adapter = RecordingAdapter()
        await adapter.start(gw.handler_for(adapter))
        chat = ChatRef(platform="test", chat_id=f"r{switched}")
        await adapter.deliver(_msg(chat, f"rated{switched}", "1", "How is NVDA?"))
        await gw.idle()
        await adapter.deliver(_msg(chat, f"rated{switched}", "2", "And AAPL?"))
        await gw.idle()
        said[switched] = adapter.visible_text(chat)
        await gw.aclose()
    assert said[True] == ["an answer", "an answer"]
    assert said[False][0] == "an answer" and said[False][1] != "an answer"  # refused
