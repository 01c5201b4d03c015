"""A chat's first message stays cheap: the user behind a new account and the chat's first
conversation are each created in one statement, and stay race-safe when several first
messages of one account or one chat arrive at once (one user, one active conversation, no
orphaned rows)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from core.store import Database, Store
from core.types import ChatRef


async def test_first_sight_creates_one_user_whoever_races(pg_db: Database,
                                                         tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    got = await asyncio.gather(*(store.accounts.user_and_lang("test", "new-1", "Newcomer")
                                 for _ in range(8)))
    assert len({user for user, _ in got}) == 1
    assert all(lang is None for _, lang in got)
    users = await pg_db.pool.fetchval("SELECT count(*) FROM users WHERE display_name = $1",
                                      "Newcomer")
    assert users == 1  # the losers' users were removed
    # known now: the same user and, once chosen, their language
    user = got[0][0]
    await store.accounts.set_lang(user, "zh")
    assert await store.accounts.user_and_lang("test", "new-1") == (user, "zh")


async def test_a_chats_first_conversation_is_created_once(pg_db: Database,
                                                          tmp_path: Path) -> None:
    store = Store(pg_db, files_dir=tmp_path)
    chat = ChatRef(platform="test", chat_id="first", thread_id="t")
    got = await asyncio.gather(*(store.conversations.active(chat, None) for _ in range(8)))
    assert len({c.id for c in got}) == 1
    assert got[0].chat_key == "test:first:t" and got[0].mode == "normal"
    assert await pg_db.pool.fetchval(
        "SELECT count(*) FROM conversations WHERE chat_id = 'first'") == 1
    # after /new the active one is the new one
    new = await store.conversations.start_new(chat, None)
    assert (await store.conversations.active(chat, None)).id == new.id != got[0].id


async def test_a_new_chats_first_sight_creates_the_person_and_the_conversation_once(
        pg_db: Database, tmp_path: Path) -> None:
    """A new account in a chat without a conversation: user, account and the chat's first
    conversation in one statement, race-safe; a chat that has a conversation keeps it."""
    store = Store(pg_db, files_dir=tmp_path)
    chat = ChatRef(platform="test", chat_id="brand-new")
    got = await asyncio.gather(*(store.accounts.first_sight(chat, "new-2", "Firstcomer")
                                 for _ in range(8)))
    assert len({g.user_id for g in got}) == 1 and all(g.lang is None for g in got)
    made = [g.conversation for g in got if g.conversation is not None]
    assert len(made) == 1 and made[0].user_id == got[0].user_id
    assert made[0].chat_key == "test:brand-new:" and made[0].mode == "normal"
    assert (await store.conversations.active(chat, None)).id == made[0].id
    assert await pg_db.pool.fetchval(
        "SELECT count(*) FROM users WHERE display_name = 'Firstcomer'") == 1
    assert await pg_db.pool.fetchval(
        "SELECT count(*) FROM conversations WHERE chat_id = 'brand-new'") == 1
    # known now: the same person, the chat's conversation untouched
    again = await store.accounts.first_sight(chat, "new-2")
    assert (again.user_id, again.conversation) == (got[0].user_id, None)
    other = await store.accounts.first_sight(chat, "new-3", "Second")  # a group's next person
    assert other.conversation is None and other.user_id != got[0].user_id
