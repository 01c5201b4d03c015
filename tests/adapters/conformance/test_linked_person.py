"""One person on Telegram, Discord, Slack and WeChat: one App with the four real adapters on
their fakes. Linked with `/link` on one platform and `/link CODE` on the next, the person is
one user row, with one usage total (`/usage` shows the same month everywhere) and one set of
preferences (`/lang zh` on one platform changes the replies on the others)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from typing import Any

from aiohttp import web

from tests.adapters.conformance.conftest import BaseHarness, run_app
from tests.adapters.conftest import user_texts
from tests.fakes.openai_server import FakeOpenAI, Turn

USER = 1
ANSWER = "Answered."
TOKENS_PER_CALL = 30  # the scripted model's usage: 20 prompt + 10 completion tokens
HELP_ZH = "A股与美股研究助手"


async def users(app) -> int:
    return int(await app.db.pool.fetchval("SELECT count(*) FROM users"))


async def link_code(giver: BaseHarness) -> str:
    """`/link` on `giver`; the code it answers."""
    before = len(giver.visible_messages(USER))
    await giver.send_command(USER, "/link")
    await giver.wait_for(lambda: len(giver.visible_messages(USER)) > before
                         and re.search(r"\b\d{8}\b", giver.final_text(USER)))
    found = re.search(r"\b(\d{8})\b", giver.final_text(USER))
    assert found is not None
    return found.group(1)


async def say(h: BaseHarness, command: str, expect: str) -> str:
    """`command` on `h`; the reply, once it shows `expect`."""
    before = len(h.visible_messages(USER))
    await h.send_command(USER, command)
    await h.wait_for(lambda: len(h.visible_messages(USER)) > before
                     and expect in h.final_text(USER))
    return h.final_text(USER)


async def test_one_person_linked_across_four_platforms_is_one_user_everywhere(
        everywhere: list[BaseHarness], pg_dsn, tmp_path) -> None:
    telegram, discord, slack, wechat = everywhere
    script = Turn(text=ANSWER, prompt_tokens=20, completion_tokens=10)
    async with FakeOpenAI(default=script) as llm, \
            run_app(everywhere, dsn=pg_dsn, data_dir=tmp_path / "data", llm=llm) as app:
        for h in everywhere:  # before linking: four people, as far as Bullpen knows
            await h.send_text(USER, f"Good morning, anyone there? (asked on {h.name})")
            await h.wait_for(lambda h=h: h.final_text(USER) == ANSWER)
        await app.gateway.idle()
        assert await users(app) == 4

        # a chain: each platform gives a code, the next one redeems it
        for giver, taker in itertools.pairwise(everywhere):
            await say(taker, f"/link {await link_code(giver)}", "Linked")
        assert "discord, slack, telegram, wechat" in wechat.final_text(USER)
        person = await app.store.accounts.user_for("telegram", telegram.uid(USER))
        for h in everywhere:
            assert await app.store.accounts.user_for(h.name, h.uid(USER)) == person
        assert await users(app) == 1
        accounts = await app.store.accounts.accounts_of(person)
        assert sorted(a.platform for a in accounts) == ["discord", "slack", "telegram", "wechat"]

        # one usage total: the four questions asked before the link, shown alike everywhere
        total = await app.db.pool.fetchval(
            "SELECT sum(prompt_tokens + completion_tokens) FROM usage WHERE user_id = $1", person)
        assert total == TOKENS_PER_CALL * len(llm.requests) == 4 * TOKENS_PER_CALL
        months = {}
        for h in everywhere:
            shown = await say(h, "/usage", "This month")
            found = re.search(r"This month: \W*([\d,]+) tokens", shown)
            assert found is not None, shown
            months[h.name] = int(found.group(1).replace(",", ""))
        assert months == dict.fromkeys(months, total)

        # one set of preferences: the language chosen on Slack is the language everywhere
        assert "语言已设置为中文" in await say(slack, "/lang zh", "中文")
        for h in (telegram, discord, wechat):
            await say(h, "/help", HELP_ZH)  # asked in English, answered in the chosen language
        assert "本月" in await say(discord, "/usage", "本月")
        await app.gateway.idle()
    assert [q.rsplit(" ", 1)[-1] for q in user_texts(llm)] == [
        f"{h.name})" for h in everywhere]


async def test_a_language_chosen_before_linking_is_kept_by_the_linked_person(
        everywhere: list[BaseHarness], pg_dsn, tmp_path) -> None:
    telegram, _, _, wechat = everywhere
    async with run_app([telegram, wechat], dsn=pg_dsn, data_dir=tmp_path / "data") as app:
        await say(wechat, "/lang zh", "中文")  # the only preference either account has
        await say(wechat, f"/link {await link_code(telegram)}", "绑定成功")
        await app.gateway.idle()
        person = await app.store.accounts.user_for("telegram", telegram.uid(USER))
        assert await app.store.accounts.user_for("wechat", wechat.uid(USER)) == person
        assert await app.store.accounts.get_lang(person) == "zh"
        for h in (wechat, telegram):
            await say(h, "/help", "/mode")
            assert HELP_ZH in h.final_text(USER)



class HeldOpenAI(FakeOpenAI):
    """The scripted server, holding every request until `release` is set and counting the
    requests it is answering at once (a streamed answer is written inside the handler, so a
    request is in flight until its last chunk)."""

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.release = asyncio.Event()
        self.now = self.most = 0

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        self.now += 1
        self.most = max(self.most, self.now)
        try:
            with contextlib.suppress(TimeoutError):  # a failed test is not left hanging
                await asyncio.wait_for(self.release.wait(), 20.0)
            return await super()._completions(request)
        finally:
            self.now -= 1


async def test_two_questions_of_one_linked_person_at_the_same_instant_run_one_after_the_other(
        everywhere: list[BaseHarness], pg_dsn, tmp_path) -> None:
    """Telegram and Slack, linked: both questions arrive together; one runs (held by the
    model until the other has been told it is queued), the other waits its turn."""
    telegram, _, slack, _ = everywhere
    async with HeldOpenAI(default=Turn(text=ANSWER)) as llm, \
            run_app([telegram, slack], dsn=pg_dsn, data_dir=tmp_path / "data", llm=llm) as app:
        await say(slack, f"/link {await link_code(telegram)}", "Linked")
        await telegram.wait_for(lambda: telegram.shows(USER, "link code was just used"))
        await asyncio.gather(telegram.send_text(USER, "Good morning from Telegram?"),
                             slack.send_text(USER, "Good morning from Slack?"))

        def queued() -> list[str]:
            return [s for h in (telegram, slack) for s in h.visible_messages(USER)
                    if "Queued: I'm still answering your other question" in s]

        await telegram.wait_for(lambda: queued() and llm.now == 1)
        assert len(llm.requests) == 0 and llm.most == 1  # the first is held, the second waits
        llm.release.set()
        for h in (telegram, slack):
            await h.wait_for(lambda h=h: h.final_text(USER) == ANSWER)
        await app.gateway.idle()
    assert llm.most == 1 and len(llm.requests) == 2 and len(queued()) == 1
