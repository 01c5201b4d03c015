"""Who may spend what, through the gateway: budgets refused with the reset time on every
platform and in every mode, degraded runs, conversation budgets, one run per person, rate
limits, allowlist access and /admin."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.gateway import Gateway
from bot.pipeline.limits import Limits, cheap_role, dearest_token_usd
from core.agent import AgentRunner, FastMode, NormalMode
from core.clock import FixedClock
from core.rate_limit import Rate, RateLimiter
from core.store import Budget, Store
from core.store.person_locks import PersonLocks
from core.testing import RecordingAdapter, ScriptedLLM, text
from core.tools import ToolRegistry
from core.types import Attachment, ChatRef, IncomingMessage, Sender, Usage, utcnow
from core.usage_gate import UsageGate, next_day

PLATFORMS = ("telegram", "discord", "slack", "wechat", "console")


def msg(body: str, mid: str, uid: str, chat: ChatRef) -> IncomingMessage:
    return IncomingMessage(platform=chat.platform, chat=chat, sender=Sender(platform_uid=uid),
                           message_id=mid, text=body)


def make(pg_db: Any, tmp_path: Path, llm: Any, preprocess: Any = None,
         **gate: Any) -> tuple[Gateway, Store]:
    """A gateway with the gate on; every mode is a real mode on the scripted LLM."""
    store = Store(pg_db, files_dir=tmp_path)
    normal = NormalMode(llm=llm, registry=ToolRegistry(), plan=False)
    runner = AgentRunner(store=store, modes={"normal": normal, "fast": FastMode(llm=llm),
                                             "debate": normal, "plan": normal,
                                             "podcast": normal})
    gw = Gateway(store=store, runner=runner, preprocess=preprocess)
    gw.limits.gate = UsageGate(store.budgets, **gate)
    return gw, store


async def spent(store: Store, platform: str, uid: str, tokens: int) -> None:
    user = await store.accounts.user_for(platform, uid)
    await store.usage.record(Usage(prompt_tokens=tokens, cost_usd=0.01), user_id=user,
                             conversation_id=None)



async def linked_on_two_gateways(store: Store, gateways: list[Gateway],
                                 ) -> tuple[RecordingAdapter, RecordingAdapter, ChatRef, ChatRef]:
    """One person with a Telegram account on the first gateway and a Slack account on the
    second, linked: the adapters and their chats."""
    tg, sl = RecordingAdapter(name="telegram"), RecordingAdapter(name="slack")
    await tg.start(gateways[0].handler_for(tg))
    await sl.start(gateways[1].handler_for(sl))
    tchat, schat = ChatRef(platform="telegram", chat_id="t"), ChatRef(platform="slack",
                                                                        chat_id="s")
    owner = await store.accounts.user_for("telegram", "t1")
    code = await store.accounts.issue_link_code(owner)
    assert (await store.accounts.redeem_link_code(
        code, await store.accounts.user_for("slack", "s1"))).ok
    return tg, sl, tchat, schat

async def test_at_the_daily_budget_every_platform_and_mode_is_refused_with_the_reset_time(
        pg_db, tmp_path):
    llm = ScriptedLLM(default=text("should not run"))
    gw, store = make(pg_db, tmp_path, llm, default=Budget(daily_tokens=1000))
    for platform in PLATFORMS:
        adapter = RecordingAdapter(name=platform)
        await adapter.start(gw.handler_for(adapter))
        chat = ChatRef(platform=platform, chat_id="c1")
        await spent(store, platform, "u1", 1000)
        for i, q in enumerate(["NVDA latest close?", "/fast NVDA", "/debate NVDA or AMD",
                               "/plan NVDA", "/ict NVDA 1h", "/podcast NVDA"]):
            await adapter.deliver(msg(q, str(i), "u1", chat))
            await gw.idle()
        shown = adapter.visible_text(chat)
        assert len(shown) == 6, (platform, shown)
        assert all(re.search(r"daily token budget\. It resets at \d{4}-\d\d-\d\d 00:00 UTC", s)
                   for s in shown), shown
    assert llm.requests == []


async def test_the_budget_resets_when_the_clock_turns_the_day_without_waiting_for_it(
        pg_db, tmp_path):
    """Refused until the next 00:00 UTC by the gate's clock; the twin is moved to that instant
    (nothing sleeps) and the same question is answered."""
    llm = ScriptedLLM(default=text("answered"))
    day = FixedClock(datetime.now(UTC))
    gw, store = make(pg_db, tmp_path, llm, default=Budget(daily_tokens=1000), clock=day)
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="telegram", chat_id="c1")
    await spent(store, "telegram", "u1", 1000)
    await adapter.deliver(msg("NVDA latest close?", "1", "u1", chat))
    await gw.idle()
    reset = next_day(day.now())
    assert f"It resets at {reset:%Y-%m-%d} 00:00 UTC" in adapter.visible_text(chat)[-1]
    assert llm.requests == []
    day.set(reset)
    await adapter.deliver(msg("NVDA latest close?", "2", "u1", chat))
    await gw.idle()
    assert adapter.visible_text(chat)[-1] == "answered" and len(llm.requests) == 1


async def test_little_budget_left_runs_in_fast_mode_and_says_so(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("quick answer"))
    gw, store = make(pg_db, tmp_path, llm, default=Budget(daily_tokens=1000))
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="telegram", chat_id="c1")
    await spent(store, "telegram", "u1", 900)
    await adapter.deliver(msg("NVDA outlook", "1", "u1", chat))
    await gw.idle()
    shown = adapter.visible_text(chat)
    assert "fast mode" in shown[0] and shown[-1] == "quick answer"
    assert len(llm.requests) == 1 and not llm.requests[0].get("tools")


async def test_each_level_is_told_once_per_run_in_the_users_language(pg_db, tmp_path):
    """60 % spent: fewer tool turns; 75 %: the cheaper profile (the fast role's) for every
    call; 90 %: fast mode. Each run says its level once, before the answer."""
    def answer(messages):  # in the question's language, as the agent asks of a model
        asked = next(m.content for m in reversed(messages) if m.role == "user")
        return text("已回答" if re.search(r"[\u4e00-\u9fff]", asked) else "answered")

    llm = ScriptedLLM(default=answer)
    gw, store = make(pg_db, tmp_path, llm, default=Budget(daily_tokens=1000), cheap_role="fast")
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    cases = [("u60", 600, "NVDA outlook", r"Over half of your budget is used \(40% left\): this "
              r"answer takes fewer tool steps\.", "agent"),
             ("u75", 750, "英伟达的前景如何？", r"预算不多了（剩余 25%）：本次使用更便宜的模型，"
              r"并减少工具调用轮数。", "fast"),
             ("u90", 900, "NVDA outlook", r"Your budget is nearly used \(10% left\): answering in "
              r"fast mode \(one model call, no tools\)\.", "fast")]
    for uid, used, question, told, role in cases:
        chat = ChatRef(platform="telegram", chat_id=uid)
        await spent(store, "telegram", uid, used)
        before = len(llm.requests)
        await adapter.deliver(msg(question, "1", uid, chat))
        await gw.idle()
        shown = adapter.visible_text(chat)
        assert len(shown) == 2 and re.fullmatch(told, shown[0]), shown
        assert shown[1] in ("answered", "已回答"), shown
        assert [r["role"] for r in llm.requests[before:]] == [role]


async def test_no_cheaper_profile_configured_keeps_fewer_turns_at_that_level(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("answered"))
    gw, store = make(pg_db, tmp_path, llm, default=Budget(daily_tokens=1000))
    adapter = RecordingAdapter(name="slack")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="slack", chat_id="c")
    await spent(store, "slack", "u", 750)
    await adapter.deliver(msg("NVDA outlook", "1", "u", chat))
    await gw.idle()
    assert "fewer tool steps" in adapter.visible_text(chat)[0]
    assert [r["role"] for r in llm.requests] == ["agent"]


async def test_admin_budget_takes_effect_at_once(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("answered"))
    gw, store = make(pg_db, tmp_path, llm, cache_s=3600)
    gw.limits.admins = frozenset({"telegram:boss"})
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    boss, user = ChatRef(platform="telegram", chat_id="b"), ChatRef(platform="telegram",
                                                                     chat_id="u")
    await spent(store, "telegram", "u2", 500)
    await adapter.deliver(msg("first", "1", "u2", user))
    await gw.idle()
    assert adapter.visible_text(user)[-1] == "answered"
    await adapter.deliver(msg("/admin budget telegram:u2 100 -", "2", "boss", boss))
    assert "daily 100 tokens" in adapter.visible_text(boss)[-1]
    await adapter.deliver(msg("second", "3", "u2", user))
    await gw.idle()
    assert "daily token budget" in adapter.visible_text(user)[-1]
    await adapter.deliver(msg("/usage", "4", "u2", user))
    assert re.search(r"Today: [\d,]+ tokens .* of 100 tokens; resets", adapter.visible_text(
        user)[-1])
    # bad input gets a clear message and changes nothing
    await adapter.deliver(msg("/admin budget telegram:u2 lots -", "5", "boss", boss))
    assert "token counts, $amounts or -" in adapter.visible_text(boss)[-1]
    await adapter.deliver(msg("/admin budget u2 1 1", "6", "boss", boss))
    assert "not PLATFORM:ID" in adapter.visible_text(boss)[-1]
    await adapter.deliver(msg("/admin budget telegram:u2 - $5", "7", "boss", boss))
    await adapter.deliver(msg("third", "8", "u2", user))
    await gw.idle()
    assert adapter.visible_text(user)[-1] == "answered"
    await adapter.deliver(msg("/admin usage", "9", "boss", boss))
    assert "Today:" in adapter.visible_text(boss)[-1]
    await adapter.deliver(msg("/admin usage", "10", "u2", user))  # not an admin
    assert "Only the bot's admins" in adapter.visible_text(user)[-1]


async def test_allowlist_refuses_a_stranger_and_admits_an_allowed_user(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("welcome"))
    gw, _ = make(pg_db, tmp_path, llm, access="allowlist")
    gw.limits.admins = frozenset({"slack:ADMIN"})
    adapter = RecordingAdapter(name="slack")
    await adapter.start(gw.handler_for(adapter))
    stranger, admin = ChatRef(platform="slack", chat_id="D1"), ChatRef(platform="slack",
                                                                         chat_id="D0")
    await adapter.deliver(msg("hello", "1", "U9", stranger))
    await gw.idle()
    assert "private" in adapter.visible_text(stranger)[-1]
    assert "slack:U9" in adapter.visible_text(stranger)[-1]
    assert llm.requests == []
    await adapter.deliver(msg("/admin allow slack:U9", "2", "ADMIN", admin))
    await adapter.deliver(msg("hello again", "3", "U9", stranger))
    await gw.idle()
    assert adapter.visible_text(stranger)[-1] == "welcome"
    await adapter.deliver(msg("/admin block slack:U9", "4", "ADMIN", admin))
    await adapter.deliver(msg("and again", "5", "U9", stranger))
    await gw.idle()
    assert "private" in adapter.visible_text(stranger)[-1] and len(llm.requests) == 1


async def test_a_burst_reaches_the_llm_at_most_the_allowed_number_of_times(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("ok"))
    gw, _ = make(pg_db, tmp_path, llm)
    gw.limits.rates = RateLimiter({"message": Rate(5, 60.0)})
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="telegram", chat_id="c1")
    await asyncio.gather(*(adapter.deliver(msg(f"q{i}", str(i), "u1", chat))
                           for i in range(100)))
    await gw.idle()
    await asyncio.sleep(0.05)  # the refusals are told by small tasks
    assert len(llm.requests) == 5
    shown = adapter.visible_text(chat)
    assert sum(s == "ok" for s in shown) == 5
    assert sum(bool(re.fullmatch(r"Too many requests \(messages per minute\): please try "
                                 r"again in \d+ s\.", s)) for s in shown) == 95


async def test_voice_notes_per_hour_and_debates_per_day_are_limited(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("ok"))
    heard: list[str] = []

    async def hear(adapter: Any, message: IncomingMessage, user_id: Any, lang: str) -> str:
        heard.append(message.message_id)
        return "what did NVDA close at"

    gw, _ = make(pg_db, tmp_path, llm, preprocess=hear)
    gw.limits.rates = RateLimiter({"message": Rate(100, 60.0), "voice": Rate(2, 3600.0),
                            "heavy": Rate(1, 86_400.0)})
    adapter = RecordingAdapter(name="wechat")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="wechat", chat_id="c1")
    for i in range(3):
        note = msg("", f"v{i}", "u1", chat).model_copy(
            update={"attachments": [Attachment(kind="voice", file_id=f"f{i}")]})
        await adapter.deliver(note)
        await gw.idle()
    await asyncio.sleep(0.05)
    assert heard == ["v0", "v1"]  # the third note is not even transcribed
    assert re.search(r"voice notes per hour\): please try again in (59 min|1 h 0 min)\.",
                     adapter.visible_text(chat)[-1])
    await adapter.deliver(msg("/debate NVDA or AMD", "d1", "u1", chat))
    await gw.idle()
    await adapter.deliver(msg("/debate AMD or INTC", "d2", "u1", chat))
    await gw.idle()
    assert re.search(r"debates and podcasts per day\): please try again in "
                     r"(23 h 59 min|24 h 0 min)\.", adapter.visible_text(chat)[-1])
    assert len(llm.requests) == 3


async def test_report_is_refused_when_the_budget_is_spent(pg_db, tmp_path):
    gw, store = make(pg_db, tmp_path, ScriptedLLM(), default=Budget(daily_usd=0.01))
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="telegram", chat_id="c1")
    await spent(store, "telegram", "u1", 10)  # $0.01
    await adapter.deliver(msg("/report NVDA", "1", "u1", chat))
    assert "daily spending budget. It resets at" in adapter.visible_text(chat)[-1]


async def test_with_the_spend_stage_off_a_spent_budget_refuses_nothing(pg_db, tmp_path):
    """BULLPEN_STAGE_SPEND=false: the budget is enforced neither before a run nor before a
    gated command (/report's narrative)."""
    from bot.pipeline import switched_off
    from bot.settings import load_settings

    llm = ScriptedLLM(default=text("an answer"))
    store = Store(pg_db, files_dir=tmp_path)
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=llm, registry=ToolRegistry(), plan=False)})
    gw = Gateway(store=store, runner=runner,
                 off=switched_off(load_settings(stage_spend=False)))
    assert "spend" not in gw.stages.on
    gw.limits.gate = UsageGate(store.budgets, default=Budget(daily_usd=0.01))
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="telegram", chat_id="c1")
    await spent(store, "telegram", "u1", 10)  # $0.01: the day's budget is spent
    await adapter.deliver(msg("How is NVDA?", "1", "u1", chat))
    await gw.idle()
    assert adapter.visible_text(chat) == ["an answer"]
    said: list[str] = []

    async def say(text: str) -> None:
        said.append(text)

    user = await store.accounts.user_for("telegram", "u1")
    assert await gw.stages.spend.command_allowed(user, "en", say) and said == []
    await gw.aclose()


class Overlap:
    """A scripted LLM that counts how many of its calls run at once."""

    def __init__(self) -> None:
        self.inner = ScriptedLLM(default=text("answer"), latency_s=0.2)
        self.now = self.most = 0

    async def complete(self, *a: Any, **k: Any) -> Any:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            return await self.inner.complete(*a, **k)
        finally:
            self.now -= 1

    def stream(self, *a: Any, **k: Any) -> Any:
        outer = self

        async def gen() -> Any:
            outer.now += 1
            outer.most = max(outer.most, outer.now)
            try:
                async for chunk in outer.inner.stream(*a, **k):
                    yield chunk
            finally:
                outer.now -= 1

        return gen()


async def test_one_linked_person_on_telegram_and_slack_runs_one_question_at_a_time(
        pg_db, tmp_path):
    llm = Overlap()
    gw, store = make(pg_db, tmp_path, llm)
    gw.limits.one_run_per_person = True
    tg, sl = RecordingAdapter(name="telegram"), RecordingAdapter(name="slack")
    await tg.start(gw.handler_for(tg))
    await sl.start(gw.handler_for(sl))
    tchat, schat = ChatRef(platform="telegram", chat_id="t"), ChatRef(platform="slack",
                                                                        chat_id="s")
    owner = await store.accounts.user_for("telegram", "t1")
    code = await store.accounts.issue_link_code(owner)
    other = await store.accounts.user_for("slack", "s1")
    assert (await store.accounts.redeem_link_code(code, other)).ok
    await asyncio.gather(tg.deliver(msg("NVDA?", "1", "t1", tchat)),
                         sl.deliver(msg("AMD?", "1", "s1", schat)))
    await gw.idle()
    assert llm.most == 1 and len(llm.inner.requests) == 2
    shown = tg.visible_text(tchat) + sl.visible_text(schat)
    assert shown.count("answer") == 2
    assert sum("Queued" in s for s in shown) == 1


async def test_one_person_served_by_two_processes_runs_one_question_at_a_time(
        pg_db, tmp_path):
    """Two gateways stand for two `serve` processes on one database, Telegram answered by
    one and Slack by the other: the person's lock is then Postgres's, not a process's."""
    llm = Overlap()
    gateways = [make(pg_db, tmp_path, llm)[0] for _ in range(2)]
    for gw in gateways:
        gw.limits.one_run_per_person = True
        gw.limits.person_locks = PersonLocks(pg_db.dsn, poll_s=0.05)
    store = Store(pg_db, files_dir=tmp_path)
    tg, sl, tchat, schat = await linked_on_two_gateways(store, gateways)
    try:
        await asyncio.gather(tg.deliver(msg("NVDA?", "1", "t1", tchat)),
                             sl.deliver(msg("AMD?", "1", "s1", schat)))
        await asyncio.gather(*(gw.idle() for gw in gateways))
    finally:
        for gw in gateways:
            await gw.aclose()
    assert llm.most == 1 and len(llm.inner.requests) == 2
    shown = tg.visible_text(tchat) + sl.visible_text(schat)
    assert shown.count("answer") == 2
    assert sum("Queued" in s for s in shown) == 1


async def test_two_people_still_run_side_by_side(pg_db, tmp_path):
    llm = Overlap()
    gw, _ = make(pg_db, tmp_path, llm)
    gw.limits.one_run_per_person = True
    tg = RecordingAdapter(name="telegram")
    await tg.start(gw.handler_for(tg))
    a, b = ChatRef(platform="telegram", chat_id="a"), ChatRef(platform="telegram", chat_id="b")
    await asyncio.gather(tg.deliver(msg("NVDA?", "1", "pa", a)),
                         tg.deliver(msg("AMD?", "1", "pb", b)))
    await gw.idle()
    assert llm.most == 2


async def test_a_conversation_over_its_budget_closes_and_the_next_starts_with_its_summary(
        pg_db, tmp_path):
    llm = ScriptedLLM(default=text("fine"))
    gw, store = make(pg_db, tmp_path, llm)
    gw.limits.conversation_token_budget = 20  # each scripted answer costs 15 tokens
    adapter = RecordingAdapter(name="discord")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="discord", chat_id="c1")
    for i, q in enumerate(["What about NVDA margins?", "And AMD?"]):
        await adapter.deliver(msg(q, str(i), "u1", chat))
        await gw.idle()
    first = await store.conversations.active(chat, None)
    assert first.token_used == 30 and first.token_budget == 20
    await adapter.deliver(msg("Compare them", "3", "u1", chat))
    await gw.idle()
    shown = adapter.visible_text(chat)
    assert "reached its budget (30 tokens)" in shown[-2] and shown[-1] == "fine"
    second = await store.conversations.active(chat, None)
    assert second.id != first.id and second.token_budget == 20
    assert "NVDA margins" in second.summary
    prompt = " ".join(m.content for m in llm.requests[-1]["messages"])
    assert "NVDA margins" in prompt  # the new conversation carries the old one's summary


async def test_configure_reads_the_settings(pg_db, tmp_path):
    from bot.settings import load_settings

    gw, store = make(pg_db, tmp_path, ScriptedLLM())
    limits = Limits.from_settings(load_settings(
        access="allowlist", admins="telegram:1, slack:U2", budget_daily_tokens=5000,
        rate_messages_per_minute=3), store)
    await gw.aclose()
    runner = AgentRunner(store=store, modes={
        "normal": NormalMode(llm=ScriptedLLM(), registry=ToolRegistry(), plan=False)})
    gw = Gateway(store=store, runner=runner, limits=limits)  # settings come in built
    gate = gw.limits.gate
    assert gw.limits.admins == {"telegram:1", "slack:U2"} and gate is not None
    assert gate.access == "allowlist" and gate.default == Budget(daily_tokens=5000)
    assert gw.limits.one_run_per_person and gw.limits.person_locks is not None
    assert gate.cheap_role is None and gate.usd_per_token == 0.0  # no model configured
    await gw.aclose()
    defaults = load_settings()
    assert (defaults.access, defaults.budget_daily_tokens, defaults.conversation_token_budget) == (
        "open", None, None)


def test_the_cheaper_role_and_the_dearest_price_come_from_the_profiles(monkeypatch):
    from bot.settings import load_settings

    s = load_settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="big",
                      llm_price_in_per_mtok=3.0, llm_price_out_per_mtok=15.0)
    assert cheap_role(s) is None  # the fast role is the same model
    assert dearest_token_usd(s) == 15.0 / 1e6
    monkeypatch.setenv("BULLPEN_LLM_FAST_MODEL", "small")
    monkeypatch.setenv("BULLPEN_LLM_FAST_PRICE_OUT_PER_MTOK", "0.6")
    monkeypatch.setenv("BULLPEN_LLM_JUDGE_PRICE_OUT_PER_MTOK", "60")
    s = load_settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="big",  # read at load
                      llm_price_in_per_mtok=3.0, llm_price_out_per_mtok=15.0)
    assert cheap_role(s) == "fast"
    assert dearest_token_usd(s) == 60.0 / 1e6


def test_prices_per_profile_come_from_the_settings(monkeypatch):
    import pytest

    from bot.settings import load_settings

    monkeypatch.setenv("BULLPEN_LLM_JUDGE_PRICE_OUT_PER_MTOK", "2.5")
    s = load_settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m",
                      llm_price_in_per_mtok=0.5, llm_price_out_per_mtok=1.5)
    default = s.default_profile()
    assert default is not None and default.cost(1_000_000, 1_000_000) == 2.0
    judge = s.role_profiles()["judge"]
    assert (judge.price_in_per_mtok, judge.price_out_per_mtok) == (0.5, 2.5)
    monkeypatch.setenv("BULLPEN_LLM_JUDGE_PRICE_OUT_PER_MTOK", "cheap")
    with pytest.raises(ValueError, match="PRICE_OUT_PER_MTOK='cheap': a price in US dollars"):
        load_settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m")  # said at load


async def test_refusals_speak_the_users_language(pg_db, tmp_path):
    gw, store = make(pg_db, tmp_path, ScriptedLLM(), default=Budget(monthly_tokens=10))
    gw.limits.rates = RateLimiter({"message": Rate(1, 60.0)})
    adapter = RecordingAdapter(name="wechat")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="wechat", chat_id="zh")
    await spent(store, "wechat", "u1", 10)
    await adapter.deliver(msg("英伟达最新收盘价是多少？", "1", "u1", chat))
    await gw.idle()
    assert re.search(r"你的每月 token 预算已用完，将于 \d{4}-\d\d-01 00:00 UTC",
                     adapter.visible_text(chat)[-1])
    await adapter.deliver(msg("再问一次英伟达", "2", "u1", chat))
    await gw.idle()
    await asyncio.sleep(0.05)
    assert re.fullmatch(r"请求太频繁（每分钟消息数），请在 \d+ 秒后再试。",
                        adapter.visible_text(chat)[-1])


async def test_stop_while_queued_behind_ones_own_run_says_stopped(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("first done"), latency_s=0.5)
    gw, _ = make(pg_db, tmp_path, llm)
    gw.limits.one_run_per_person = True
    tg = RecordingAdapter(name="telegram")
    await tg.start(gw.handler_for(tg))
    a, b = ChatRef(platform="telegram", chat_id="a"), ChatRef(platform="telegram", chat_id="b")
    await tg.deliver(msg("NVDA?", "1", "p", a))
    await asyncio.sleep(0.1)
    await tg.deliver(msg("AMD?", "1", "p", b))
    await asyncio.sleep(0.1)
    await tg.deliver(msg("/stop", "2", "p", b))
    await gw.idle()
    assert tg.visible_text(b) == [
        "Queued: I'm still answering your other question; this one comes next.", "⏹ Stopped."]
    assert tg.visible_text(a) == ["first done"] and len(llm.requests) == 1
    await gw.aclose()


async def test_an_admin_is_one_on_every_linked_account(pg_db, tmp_path):
    """BULLPEN_ADMINS names one account; linked accounts are one person, so the admin may use
    /admin (and is let in under the allowlist) from their other platforms too, the web page
    among them. Someone who is not linked to it is still refused."""
    llm = ScriptedLLM(default=text("welcome"))
    gw, store = make(pg_db, tmp_path, llm, access="allowlist")
    gw.limits.admins = frozenset({"telegram:boss"})
    web = RecordingAdapter(name="web")
    await web.start(gw.handler_for(web))
    boss = await store.accounts.user_for("telegram", "boss")
    on_web = await store.accounts.user_for("web", "w-boss")
    code = await store.accounts.issue_link_code(boss)
    assert (await store.accounts.redeem_link_code(code, on_web)).ok
    page, other = ChatRef(platform="web", chat_id="web:boss"), ChatRef(platform="web",
                                                                        chat_id="web:x")
    await web.deliver(msg("hello", "1", "w-boss", page))
    await gw.idle()
    assert web.visible_text(page)[-1] == "welcome"
    await web.deliver(msg("/admin usage", "2", "w-boss", page))
    assert "Today:" in web.visible_text(page)[-1]
    await web.deliver(msg("/admin usage", "3", "w-stranger", other))
    assert "This bot is private" in web.visible_text(other)[-1]
    await web.deliver(msg("/admin allow web:w-stranger", "4", "w-boss", page))
    await web.deliver(msg("/admin usage", "5", "w-stranger", other))  # let in, not an admin
    assert "Only the bot's admins" in web.visible_text(other)[-1]


async def test_linking_applies_the_merged_limits_at_once(pg_db, tmp_path):
    """The gate keeps each person's limits a while (here an hour); linking an account whose
    budget is stricter changes the person's limits, and the next question sees them."""
    llm = ScriptedLLM(default=text("answered"))
    gw, store = make(pg_db, tmp_path, llm, cache_s=3600)
    tg, slack = RecordingAdapter(name="telegram"), RecordingAdapter(name="slack")
    for adapter in (tg, slack):
        await adapter.start(gw.handler_for(adapter))
    t_chat, s_chat = ChatRef(platform="telegram", chat_id="t"), ChatRef(platform="slack",
                                                                         chat_id="D1")
    await tg.deliver(msg("first", "1", "ann", t_chat))
    await gw.idle()
    assert tg.visible_text(t_chat)[-1] == "answered"  # ann's limits (none) are now cached
    on_slack = await store.accounts.user_for("slack", "U-ann")
    await store.budgets.set_budget(on_slack, Budget(daily_tokens=100))
    await spent(store, "slack", "U-ann", 500)
    code = await store.accounts.issue_link_code(await store.accounts.user_for("telegram", "ann"))
    await slack.deliver(msg(f"/link {code}", "2", "U-ann", s_chat))
    assert "Linked" in slack.visible_text(s_chat)[-1], slack.visible_text(s_chat)
    await tg.deliver(msg("second", "3", "ann", t_chat))
    await gw.idle()
    assert "daily token budget" in tg.visible_text(t_chat)[-1]
    assert len(llm.requests) == 1


async def test_usage_says_how_much_of_the_prompt_came_from_the_cache(pg_db, tmp_path):
    gw, store = make(pg_db, tmp_path, ScriptedLLM(default=text("answered")))
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="telegram", chat_id="u")
    await adapter.deliver(msg("/usage", "1", "ann", chat))
    assert "cache" not in adapter.visible_text(chat)[-1]  # nothing cached: nothing said
    ann = await store.accounts.user_for("telegram", "ann")
    conv = await store.conversations.active(chat, ann)
    await store.usage.record(Usage(prompt_tokens=1200, completion_tokens=50, cached_tokens=800,
                                   cost_usd=0.002), user_id=ann, conversation_id=conv.id)
    await adapter.deliver(msg("/usage", "2", "ann", chat))
    assert ("This conversation: 1,250 tokens, 800 of them from the model's cache ($0.0020)"
            " in 1 model calls.") in adapter.visible_text(chat)[-1]
    await adapter.deliver(msg("/lang zh", "3", "ann", chat))
    await adapter.deliver(msg("/usage", "4", "ann", chat))
    assert "1,250 tokens，其中 800 来自模型缓存" in adapter.visible_text(chat)[-1]


# --- issue 28: usage belongs to the human; limits shared by every process --------------------


async def _link(store: Store, adapter: RecordingAdapter, chat: ChatRef, into: tuple[str, str],
                uid: str, mid: str) -> None:
    """`uid` on `adapter` redeems a code given by the account `into` (platform, uid)."""
    code = await store.accounts.issue_link_code(await store.accounts.user_for(*into))
    await adapter.deliver(msg(f"/link {code}", mid, uid, chat))
    assert "Linked" in adapter.visible_text(chat)[-1], adapter.visible_text(chat)


async def test_link_spend_unlink_cycles_cannot_get_past_the_daily_budget(pg_db, tmp_path):
    """The campaign's case: each /unlink used to give the account a fresh person with zero
    usage. Now the account leaves with the person's spend (and the person keeps it): five
    link, ask, unlink, ask cycles at 1,000 tokens an answer against a 2,500 daily budget get
    three answers in all (the third crosses it), then every ask on either account is refused.
    The unlink cap is lifted here: the budget holds by itself."""
    llm = ScriptedLLM(default=text("answer", tokens=(900, 100)))
    gw, store = make(pg_db, tmp_path, llm, default=Budget(daily_tokens=2500))
    gw.limits.unlinks_per_day = 0
    tg, sl = RecordingAdapter(name="telegram"), RecordingAdapter(name="slack")
    for adapter in (tg, sl):
        await adapter.start(gw.handler_for(adapter))
    tchat, schat = ChatRef(platform="telegram", chat_id="t"), ChatRef(platform="slack",
                                                                        chat_id="D1")
    for cycle in range(5):
        await _link(store, sl, schat, ("telegram", "t1"), "s1", f"l{cycle}")
        await sl.deliver(msg("NVDA?", f"a{cycle}", "s1", schat))
        await gw.idle()
        await sl.deliver(msg("/unlink", f"u{cycle}", "s1", schat))
        assert "unlinked" in sl.visible_text(schat)[-1]
        await sl.deliver(msg("AMD?", f"b{cycle}", "s1", schat))
        await gw.idle()
    await tg.deliver(msg("TSLA?", "t", "t1", tchat))
    await gw.idle()
    assert len(llm.requests) == 3
    assert sl.visible_text(schat).count("answer") + tg.visible_text(tchat).count("answer") == 3
    assert "daily token budget" in sl.visible_text(schat)[-1]
    assert "daily token budget" in tg.visible_text(tchat)[-1]
    # linking the two again counts each token once: the copies the unlinks made are dropped
    await _link(store, sl, schat, ("telegram", "t1"), "s1", "l-last")
    person = await store.accounts.user_for("telegram", "t1")
    assert (await store.budgets.spend(person, utcnow())).day_tokens == 3000


async def test_unlinks_are_capped_per_day_in_the_users_language(pg_db, tmp_path):
    gw, store = make(pg_db, tmp_path, ScriptedLLM())
    gw.limits.unlinks_per_day = 2
    sl = RecordingAdapter(name="slack")
    await sl.start(gw.handler_for(sl))
    schat = ChatRef(platform="slack", chat_id="D1")
    for cycle in range(2):
        await _link(store, sl, schat, ("telegram", "t1"), "s1", f"l{cycle}")
        await sl.deliver(msg("/unlink", f"u{cycle}", "s1", schat))
        assert sl.visible_text(schat)[-1].startswith("This account is unlinked")
    await _link(store, sl, schat, ("telegram", "t1"), "s1", "l2")
    await sl.deliver(msg("/lang zh", "z", "s1", schat))
    await sl.deliver(msg("/unlink", "u2", "s1", schat))
    assert re.fullmatch(r"每天最多解除绑定 2 次，请在 (23 小时 59 分|24 小时 0 分) 后再试。"
                        r"（今天已用的额度无论如何都会计入。）", sl.visible_text(schat)[-1])
    assert len(await store.accounts.accounts_of(
        await store.accounts.user_for("telegram", "t1"))) == 2  # still linked
    # the other side of the link cannot unlink either: the count is the person's
    tg = RecordingAdapter(name="telegram")
    await tg.start(gw.handler_for(tg))
    await tg.deliver(msg("/unlink", "u3", "t1", ChatRef(platform="telegram", chat_id="t")))
    assert "每天最多解除绑定" in tg.visible_text(ChatRef(platform="telegram", chat_id="t"))[-1]


async def test_an_unlinked_account_keeps_the_persons_own_budget_and_block(pg_db, tmp_path):
    llm = ScriptedLLM(default=text("answer"))
    gw, store = make(pg_db, tmp_path, llm)
    sl = RecordingAdapter(name="slack")
    await sl.start(gw.handler_for(sl))
    schat = ChatRef(platform="slack", chat_id="D1")
    await _link(store, sl, schat, ("telegram", "t1"), "s1", "l")
    await store.budgets.set_access(await store.accounts.user_for("telegram", "t1"), "block")
    gw.limits.gate = UsageGate(store.budgets)  # nothing cached
    await sl.deliver(msg("/unlink", "u", "s1", schat))  # a blocked person is refused anyway
    alone = await store.accounts.unlink("slack", "s1")
    assert alone is not None and (await store.budgets.limits(alone)).access == "block"


async def test_two_processes_share_one_persons_rate_limit(pg_db, pg_dsn, tmp_path):
    """Two gateways, each with its own pool and limiter (two `serve` processes on one
    database), Telegram answered by one and Slack by the other, one linked person sending a
    burst on both: five a minute in all, not five per process."""
    from core.rate_limit import SharedRateLimiter
    from core.store import Database

    llm = ScriptedLLM(default=text("ok"))
    other_db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    try:
        gateways = [make(pg_db, tmp_path, llm)[0], make(other_db, tmp_path, llm)[0]]
        for gw in gateways:
            gw.limits.rates = SharedRateLimiter(gw._store.rate_limits, {"message": Rate(5, 60.0)})
        store = gateways[0]._store
        tg, sl, tchat, schat = await linked_on_two_gateways(store, gateways)
        await asyncio.gather(*(tg.deliver(msg(f"q{i}", str(i), "t1", tchat)) for i in range(15)),
                             *(sl.deliver(msg(f"q{i}", str(i), "s1", schat)) for i in range(15)))
        await asyncio.gather(*(gw.idle() for gw in gateways))
        shown = tg.visible_text(tchat) + sl.visible_text(schat)
        assert len(llm.requests) == 5 and shown.count("ok") == 5
        assert sum("Too many requests (messages per minute)" in s for s in shown) == 25
    finally:
        for gw in gateways:
            await gw.aclose()
        await other_db.aclose()


async def test_every_command_but_stop_counts_against_the_message_rate(pg_db, tmp_path):
    from core.rate_limit import SharedRateLimiter

    llm = ScriptedLLM(default=text("ok"))
    gw, store = make(pg_db, tmp_path, llm)
    gw.limits.rates = SharedRateLimiter(store.rate_limits, {"message": Rate(3, 60.0)})
    adapter = RecordingAdapter(name="telegram")
    await adapter.start(gw.handler_for(adapter))
    chat = ChatRef(platform="telegram", chat_id="c1")
    for i, command in enumerate(["/help", "/watchlist", "/lang en", "/tz", "/subscriptions"]):
        await adapter.deliver(msg(command, str(i), "u1", chat))
    shown = adapter.visible_text(chat)
    assert not any("Too many requests" in s for s in shown[:3])
    assert all(re.fullmatch(r"Too many requests \(messages per minute\): please try again "
                            r"in \d+ s\.", s) for s in shown[3:]) and len(shown) == 5
    await adapter.deliver(msg("/stop", "s", "u1", chat))  # never refused: it starts nothing
    assert adapter.visible_text(chat)[-1] == "Nothing is running."
    await adapter.deliver(msg("NVDA?", "q", "u1", chat))
    await gw.idle()
    assert "Too many requests" in adapter.visible_text(chat)[-1] and llm.requests == []
