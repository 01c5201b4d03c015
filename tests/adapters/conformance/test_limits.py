"""Who may spend what, on every platform through its real SDK and fake (the settings as
`BULLPEN_*` would give them): a person at their daily budget is refused with the reset time
in every mode; allowlist access refuses a stranger until an admin allows them; a burst over
the per-minute rate limit is answered with when to try again and never reaches the model.
(Group admins: test_group_admins.py; one run per linked person: test_linked_person.py.)"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from core.types import Usage
from tests.adapters.conformance.conftest import PlatformHarness
from tests.fakes.openai_server import FakeOpenAI, Turn

USER, STRANGER, ADMIN = 1, 2, 3
ANSWER = "Answered."
# one question in each mode: normal, fast, debate, plan, ICT, and the podcast
QUESTIONS = ("Good morning, how are markets?", "/fast NVDA outlook", "/debate NVDA or AMD",
             "/plan NVDA", "/ict NVDA 1h", "/podcast NVDA")
REFUSED = re.compile(r"You have used your daily token budget\. It resets at "
                     r"(\d{4}-\d\d-\d\d) 00:00 UTC")
TOO_MANY = re.compile(r"Too many requests \(messages per minute\): please try again in "
                      r"(\d+) s\.")


async def ask(h: PlatformHarness, user: int, text: str) -> None:
    if text.startswith("/"):
        await h.send_command(user, text)
    else:
        await h.send_text(user, text)


async def test_at_the_daily_budget_every_mode_is_refused_with_the_reset_time(
        harness: PlatformHarness) -> None:
    async with FakeOpenAI(default=Turn(text=ANSWER)) as llm, \
            harness.running(llm=llm, budget_daily_tokens=1000) as app:
        person = await app.store.accounts.user_for(harness.name, harness.uid(USER))
        await app.store.usage.record(Usage(prompt_tokens=600, completion_tokens=400),
                                     user_id=person, conversation_id=None)
        for i, question in enumerate(QUESTIONS):
            await ask(harness, USER, question)
            await harness.wait_for(lambda i=i: sum(
                bool(REFUSED.search(t)) for t in harness.visible_messages(USER)) == i + 1)
        await harness.idle()
    shown = harness.visible_messages(USER)
    assert len(shown) == len(QUESTIONS), shown  # the refusal is all each question got
    today = datetime.now(UTC).date()
    for text in shown:
        found = REFUSED.search(text)
        assert found is not None, text
        resets = datetime.strptime(found.group(1), "%Y-%m-%d").date()
        assert resets in (today + timedelta(days=1), today + timedelta(days=2))  # midnight
    assert llm.requests == []


async def test_allowlist_refuses_a_stranger_until_an_admin_allows_them(
        harness: PlatformHarness) -> None:
    stranger = f"{harness.name}:{harness.uid(STRANGER)}"
    async with FakeOpenAI(default=Turn(text=ANSWER)) as llm, harness.running(
            llm=llm, access="allowlist", admins=f"{harness.name}:{harness.uid(ADMIN)}"):
        await harness.send_text(STRANGER, "Good morning, anyone there?")
        await harness.wait_for(lambda: harness.shows(STRANGER, "This bot is private"))
        assert stranger in harness.final_text(STRANGER)  # what to ask the admin to allow
        await harness.send_command(STRANGER, "/admin allow " + stranger)  # not an admin
        await harness.wait_for(lambda: len(harness.visible_messages(STRANGER)) == 2)
        assert "This bot is private" in harness.final_text(STRANGER)
        assert llm.requests == []

        await harness.send_command(ADMIN, "/admin allow " + stranger)
        await harness.wait_for(lambda: harness.shows(ADMIN, "allowed"))
        await harness.send_text(STRANGER, "Good morning again, anyone there?")
        await harness.wait_for(lambda: harness.final_text(STRANGER) == ANSWER)
        await harness.idle()
    assert len(llm.requests) == 1


async def test_a_burst_over_the_rate_limit_is_told_when_to_try_again(
        harness: PlatformHarness) -> None:
    allowed, sent = 2, 4  # four replies: within WeChat's five per message the user sends
    async with FakeOpenAI(default=Turn(text=ANSWER)) as llm, \
            harness.running(llm=llm, rate_messages_per_minute=allowed):
        for i in range(sent):
            await harness.send_text(USER, f"Good morning, anyone there? ({i})")

        def told() -> list[str]:
            return [t for t in harness.visible_messages(USER) if TOO_MANY.fullmatch(t)]

        await harness.wait_for(lambda: len(told()) == sent - allowed and sum(
            t == ANSWER for t in harness.visible_messages(USER)) == allowed, within_s=30)
        await harness.idle()
        await harness.settle()
    shown = harness.visible_messages(USER)
    assert sum(t == ANSWER for t in shown) == allowed and len(told()) == sent - allowed
    waits = [int(m.group(1)) for t in told() if (m := TOO_MANY.fullmatch(t))]
    assert all(1 <= w <= 60 for w in waits), waits
    assert len(llm.requests) == allowed  # the burst never reached the model
