"""Linking two accounts carries the per-person budgets and access over (real Postgres): what
either set explicitly wins over the default, and set on both, the stricter wins."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

from core.store import Budget, Store
from core.store.budgets import Limits
from core.types import Usage
from core.usage_gate import UsageGate


async def two_accounts(store: Store, owner_uid: str, other_uid: str) -> tuple[UUID, UUID]:
    """Two people so far: a Telegram account and a Slack account."""
    owner = await store.accounts.user_for("telegram", owner_uid)
    other = await store.accounts.user_for("slack", other_uid)
    return owner, other


async def redeem(store: Store, owner: UUID, other: UUID) -> None:
    code = await store.accounts.issue_link_code(owner)
    assert (await store.accounts.redeem_link_code(code, other)).ok


async def test_the_explicit_limits_of_the_linked_away_account_follow_the_person(
        pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    owner, other = await two_accounts(store, "t1", "s1")
    await store.budgets.set_budget(other, Budget(daily_tokens=100))
    await store.budgets.set_access(other, "block")
    await redeem(store, owner, other)
    assert await store.budgets.limits(owner) == Limits("block", Budget(daily_tokens=100))
    gate = UsageGate(store.budgets, access="open")
    assert not await gate.admitted(owner)  # a blocked account cannot unblock itself by linking


async def test_set_on_both_the_stricter_wins_field_by_field(pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    owner, other = await two_accounts(store, "t2", "s2")
    await store.budgets.set_budget(owner, Budget(daily_tokens=500, daily_usd=3.0))
    await store.budgets.set_access(owner, "allow")
    await store.budgets.set_budget(other, Budget(daily_tokens=200, monthly_tokens=10_000,
                                                 daily_usd=5.0, monthly_usd=20.0))
    await store.usage.record(Usage(prompt_tokens=150), user_id=other, conversation_id=None)
    await redeem(store, owner, other)
    assert await store.budgets.limits(owner) == Limits("allow", Budget(
        daily_tokens=200, monthly_tokens=10_000, daily_usd=3.0, monthly_usd=20.0))
    # the spend moved with the account: the merged budget sees it
    d = await UsageGate(store.budgets).check(owner)
    assert d.token_allowance == 50


async def test_block_beats_allow_and_nothing_set_stays_the_default(pg_db, tmp_path: Path):
    store = Store(pg_db, files_dir=tmp_path)
    owner, other = await two_accounts(store, "t3", "s3")
    await store.budgets.set_access(owner, "block")
    await store.budgets.set_access(other, "allow")
    await redeem(store, owner, other)
    assert (await store.budgets.limits(owner)).access == "block"
    plain_owner, plain_other = await two_accounts(store, "t4", "s4")
    await redeem(store, plain_owner, plain_other)
    assert await store.budgets.limits(plain_owner) == Limits(None, None)
    rows = await pg_db.pool.fetchval("SELECT count(*) FROM user_limits WHERE user_id = ANY($1)",
                                     [other, plain_other])
    assert rows == 0  # the linked-away users' rows are gone with them
