"""In groups, only the group's admins (as the platform reports them) change the chat's mode or
its subscriptions: Telegram's getChatMember, Discord's member permissions (carried by a slash
command, else the member fetched over REST), Slack's users.info / conversations.info, each
through the real SDK against its fake with a configurable admin set. A non-admin is refused
in their language and nothing changes; an admin changes it; reading the mode needs no admin;
the platform is asked only when such a command arrives, once a minute per person.

WeChat official accounts have no groups (every chat is one follower and the account), so there
the defined behaviour is that anyone changes their own chat's mode."""

from __future__ import annotations

import re

import pytest

from core.ports import ChatAdmins
from core.types import ChatRef, Sender
from tests.adapters.conformance.conftest import (
    BaseHarness,
    PlatformHarness,
    SlackHarness,
    TelegramHarness,
)
from tests.fakes.discord_server import MANAGER_ROLE_ID
from tests.fakes.discord_server import forbidden as discord_forbidden
from tests.fakes.slack_server import ApiError as SlackApiError
from tests.fakes.telegram_server import ApiError as TelegramApiError

ADMIN, MEMBER = 1, 2
REFUSED = "only its admins can use"


async def said(h: PlatformHarness, user: int, text: str, expect: str, *,
               native: bool = True) -> str:
    """`text` in the group; the bot's newest group message once it shows `expect`."""
    before = len(h.group_messages())
    await h.send_in_group(user, text, native=native)
    await h.wait_for(lambda: len(h.group_messages()) > before
                     and expect in h.group_messages()[-1])
    return h.group_messages()[-1]


async def test_only_the_groups_admins_change_its_mode_and_subscriptions(
        harness: PlatformHarness) -> None:
    if not harness.has_groups:
        async with harness.running():
            await harness.send_command(MEMBER, "/mode fast")
            await harness.wait_for(lambda: harness.shows(MEMBER, "Mode set to"))
            assert not isinstance(harness.adapter, ChatAdmins)  # nothing to ask
        return
    harness.make_group_admin(ADMIN)
    async with harness.running() as app:
        assert harness.admin_checks() == 0
        # reading the mode is for everyone, and asks the platform nothing
        assert re.search(r"Current mode: \W*normal", await said(harness, MEMBER, "/mode",
                                                                "Current mode"))
        assert harness.admin_checks() == 0
        refusal = await said(harness, MEMBER, "/mode debate", REFUSED)
        assert "/mode" in refusal and "Mode set" not in "".join(harness.group_messages())
        checks = harness.admin_checks()
        assert checks >= 1 or harness.name == "discord"  # a slash command carries its answer
        refusal = await said(harness, MEMBER, "/subscribe NVDA at 08:00", REFUSED)
        assert "/subscribe" in refusal
        assert harness.admin_checks() == checks  # the platform's answer is kept for a minute
        assert await app.db.pool.fetchval("SELECT count(*) FROM subscriptions") == 0

        assert re.search(r"Mode set to \W*debate", await said(harness, ADMIN, "/mode debate",
                                                              "Mode set to"))
        assert re.search(r"Current mode: \W*debate", await said(harness, MEMBER, "/mode",
                                                                "Current mode"))
        subscribed = await said(harness, ADMIN, "/subscribe NVDA at 08:00", "Subscribed")
        found = re.search(r"#(\d+)", subscribed)
        assert found is not None, subscribed
        assert "/unsubscribe" in await said(harness, MEMBER, f"/unsubscribe {found.group(1)}",
                                            REFUSED)
        assert await app.db.pool.fetchval(
            "SELECT count(*) FROM subscriptions WHERE status = 'active'") == 1
        await said(harness, ADMIN, f"/unsubscribe {found.group(1)}", "Unsubscribed")

        # in the member's language: /lang is theirs to choose, in the group too
        await said(harness, MEMBER, "/lang zh", "中文")
        assert "只有群管理员" in await said(harness, MEMBER, "/mode fast", "群管理员")
        await harness.idle()


async def test_a_message_addressed_to_the_bot_is_checked_by_asking_the_platform(
        harness: PlatformHarness) -> None:
    """Not a native slash command (a mention, or typed with the command entity): the adapter
    asks the platform (Discord: the member and their roles over REST)."""
    if not harness.has_groups:
        pytest.skip(f"{harness.name}: no group chats (the test above covers what it does)")
    harness.make_group_admin(ADMIN)
    async with harness.running():
        assert REFUSED in await said(harness, MEMBER, "/mode fast", REFUSED, native=False)
        assert harness.admin_checks() >= 1
        assert "Mode set to" in await said(harness, ADMIN, "/mode fast", "Mode set to",
                                           native=False)
        await harness.idle()


def refuse_the_check(harness: BaseHarness) -> None:
    """The platform refuses the adapter's next question about a member (a permission error:
    no SDK retries it)."""
    fake = harness.fake
    if harness.name == "telegram":
        fake.fail("getChatMember", TelegramApiError(400, "Bad Request: user not found"))
    elif harness.name == "discord":
        fake.fail("member", discord_forbidden(50013, "Missing Permissions"))
    else:
        fake.fail("users.info", SlackApiError("user_not_found"))


async def test_when_the_platform_refuses_the_check_nothing_changes_and_the_person_is_told(
        harness: PlatformHarness) -> None:
    if not harness.has_groups:
        pytest.skip(f"{harness.name}: no group chats")
    assert isinstance(harness, BaseHarness)
    refuse_the_check(harness)
    async with harness.running():
        told = await said(harness, ADMIN, "/mode fast", "could not check", native=False)
        assert "try again" in told and "Mode set" not in "".join(harness.group_messages())
        harness.make_group_admin(ADMIN)  # a failed check is not kept: asked again
        await said(harness, ADMIN, "/mode fast", "Mode set to", native=False)
        await harness.idle()


async def test_a_slack_app_without_the_scope_to_ask_lets_everyone(pg_dsn, tmp_path) -> None:
    """Cannot tell (users.info answers missing_scope): nobody is locked out."""
    async with SlackHarness(dsn=pg_dsn, data_dir=tmp_path / "data") as slack:
        slack.fake.fail("users.info", SlackApiError("missing_scope"))
        async with slack.running():
            assert "Mode set to" in await said(slack, MEMBER, "/mode fast", "Mode set to")
            await slack.idle()


async def test_each_platforms_own_kinds_of_admin_count_and_private_chats_have_none(
        everywhere: list[BaseHarness]) -> None:
    """Asked directly: Telegram's creator as well as administrators; Discord's Manage Channels
    role as well as Administrator, also for a channel no message came from yet (a command
    resumed after a restart: the gateway's cache); Slack's workspace owner and the channel's
    creator. Private chats (and channels Discord does not know) have no answer."""
    telegram, discord, slack, _ = everywhere
    owner, manager = 4, 5
    for h in (telegram, discord, slack):
        if h is telegram:
            h.fake.make_admin(TelegramHarness.GROUP, int(h.uid(owner)), "creator")
        elif h is discord:
            h.fake.make_admin(int(h.uid(manager)), MANAGER_ROLE_ID)
        else:
            h.fake.make_admin(h.uid(owner), "is_owner")
            h.fake.creators[SlackHarness.GROUP] = h.uid(manager)
        async with h.running():
            adapter = h.adapter
            assert isinstance(adapter, ChatAdmins)
            group = ChatRef(platform=h.name, chat_id=str(h._group_key()), is_group=True)
            admins = [owner] if h is telegram else [manager] if h is discord else [owner,
                                                                                  manager]
            for user in admins:
                assert await adapter.is_chat_admin(group, Sender(platform_uid=h.uid(user)))
            others = Sender(platform_uid=h.uid(MEMBER))
            assert await adapter.is_chat_admin(group, others) is False
            assert await adapter.is_chat_admin(h.chat(MEMBER), others) is None
            if h is discord:
                elsewhere = group.model_copy(update={"chat_id": "123456789"})
                assert await adapter.is_chat_admin(elsewhere, others) is None
