"""The web platform's records on real Postgres: one-time sign-in links, sessions, share links
and the admin console's read-only SQL."""

from __future__ import annotations

import tracemalloc
from datetime import timedelta
from pathlib import Path

import pytest

from core.errors import ConsoleOff, QueryRefused
from core.store import Database, Store, WebRepo


@pytest.fixture
def store(pg_db: Database, tmp_path: Path) -> Store:
    return Store(pg_db, files_dir=tmp_path)


async def test_a_sign_in_link_works_once(store: Store) -> None:
    user = await store.accounts.user_for("telegram", "1", "Ann")
    token = await store.web.issue_login(user)
    assert len(token) >= 40
    assert await store.web.redeem_login(token) == user
    assert await store.web.redeem_login(token) is None  # used
    assert await store.web.redeem_login(token + "x") is None  # never issued
    assert await store.web.redeem_login("") is None
    stored = await store.pool.fetchval("SELECT count(*) FROM web_logins WHERE token_hash = $1",
                                       token.encode())
    assert stored == 0  # only a hash of the token is kept


async def test_an_expired_sign_in_link_is_refused(store: Store) -> None:
    user = await store.accounts.user_for("telegram", "1", "Ann")
    token = await store.web.issue_login(user, ttl=timedelta(seconds=-1))
    assert await store.web.redeem_login(token) is None


async def test_sessions_end_alone_or_all_at_once(store: Store) -> None:
    user = await store.accounts.user_for("telegram", "1", "Ann")
    a, row = await store.web.open_session(user)
    b, _ = await store.web.open_session(user)
    assert row.user_id == user and len(row.csrf) >= 40
    assert (await store.web.session(a)) == row
    await store.web.end_session(a)
    assert await store.web.session(a) is None
    assert await store.web.session(b) is not None
    assert await store.web.end_sessions(user) == 1
    assert await store.web.session(b) is None
    expired, _ = await store.web.open_session(user, ttl=timedelta(seconds=-1))
    assert await store.web.session(expired) is None


async def test_the_web_account_is_made_once_and_resolves_to_the_person(store: Store) -> None:
    user = await store.accounts.user_for("telegram", "1", "Ann")
    uid = await store.web.web_account(user, "Ann")
    assert await store.web.web_account(user, "Ann") == uid
    assert await store.accounts.user_for("web", uid) == user  # what the gateway does
    person = await store.web.person(user)
    assert person is not None and ("web", uid) in person.accounts
    assert ("telegram", "1") in person.accounts


async def test_shares_are_revoked_at_once_and_tokens_are_not_guessable(store: Store) -> None:
    from core.types import ChatRef

    user = await store.accounts.user_for("telegram", "1", "Ann")
    conv = await store.conversations.active(ChatRef(platform="telegram", chat_id="1"), user)
    one = await store.web.share(conv.id, created_by=user)
    two = await store.web.share(conv.id, created_by=user)
    assert one != two and len(one) >= 32
    assert await store.web.shared(one) == conv.id
    assert await store.web.shared(one[:-1] + ("A" if one[-1] != "A" else "B")) is None
    assert await store.web.unshare([conv.id]) == 2
    assert await store.web.shared(one) is None and await store.web.shared(two) is None
    assert await store.web.unshare([conv.id]) == 0


async def test_admin_query_reads_with_a_row_limit(store: Store) -> None:
    for n in range(5):
        await store.accounts.user_for("telegram", str(n), f"user{n}")
    got = await store.web.admin_query(
        "SELECT display_name, created_at, preferences FROM users ORDER BY display_name",
        timeout_ms=5000, row_limit=3)
    assert got.columns == ("display_name", "created_at", "preferences")
    assert [r[0] for r in got.rows] == ["user0", "user1", "user2"] and got.truncated
    assert got.rows[0][2] == "{}"  # jsonb as text
    small = await store.web.admin_query("SELECT 1 AS one, NULL::text AS nothing",
                                        timeout_ms=5000, row_limit=3)
    assert small.rows == (("1", None),) and not small.truncated


@pytest.mark.parametrize("sql, refusal", [
    ("DELETE FROM users", "cannot execute DELETE in a read-only transaction"),
    ("INSERT INTO users (display_name) VALUES ('x')",
     "cannot execute INSERT in a read-only transaction"),
    ("UPDATE users SET display_name = 'x'", "cannot execute UPDATE in a read-only transaction"),
    ("DROP TABLE users", "cannot execute DROP TABLE in a read-only transaction"),
    ("SELECT 1; DELETE FROM users", "cannot insert multiple commands into a prepared statement"),
    ("SELEC 1", 'syntax error at or near "SELEC"'),
    ("COPY users TO PROGRAM 'true'",
     "permission denied to COPY to or from an external program"),
    ("SELECT pg_read_file('PG_VERSION')", "permission denied for function pg_read_file"),
    ("", "the query is empty"),
])
async def test_admin_query_refuses_writes_with_postgres_own_message(
        store: Store, sql: str, refusal: str) -> None:
    await store.accounts.user_for("telegram", "1", "Ann")
    with pytest.raises(QueryRefused) as exc:
        await store.web.admin_query(sql, timeout_ms=5000, row_limit=10)
    assert refusal in str(exc.value)
    names = [r["display_name"] for r in await store.pool.fetch("SELECT display_name FROM users")]
    assert names == ["Ann"]  # nothing changed
    assert await store.pool.fetchval("SELECT to_regclass('users') IS NOT NULL")


async def test_admin_query_has_a_statement_timeout(store: Store) -> None:
    with pytest.raises(QueryRefused, match="statement timeout"):
        await store.web.admin_query("SELECT pg_sleep(10)", timeout_ms=200, row_limit=10)


async def test_admin_tables_and_rows(store: Store) -> None:
    for n in range(3):
        await store.accounts.user_for("telegram", str(n), f"user{n}")
    tables = dict(await store.web.admin_tables(timeout_ms=5000))
    assert tables["users"] == 3 and tables["platform_accounts"] == 3 and "shares" in tables
    page = await store.web.admin_rows("platform_accounts", page=2, page_size=2,
                                      timeout_ms=5000)
    assert page is not None and page.total == 3 and len(page.rows) == 1
    assert page.columns[:3] == ("id", "user_id", "platform") and page.rows[0][2] == "telegram"
    assert page.rows[0][0] == "3"  # ordered by the primary key
    for bad in ("users; drop table users", "pg_class", "USERS", 'users"', ""):
        assert await store.web.admin_rows(bad, page=1, page_size=10, timeout_ms=5000) is None
    assert await store.pool.fetchval("SELECT count(*) FROM users") == 3


async def test_links_and_sessions_long_past_their_end_are_forgotten(store: Store) -> None:
    user = await store.accounts.user_for("telegram", "1", "Ann")
    await store.web.issue_login(user, ttl=timedelta(days=-2))
    await store.web.open_session(user, ttl=timedelta(days=-2))
    live, _ = await store.web.open_session(user)
    await store.web.issue_login(user)
    assert await store.pool.fetchval("SELECT count(*) FROM web_logins") == 1
    assert await store.pool.fetchval("SELECT count(*) FROM web_sessions") == 1
    assert await store.web.session(live) is not None


# Each attack of the hostile-user campaign (issue #27), as the console runs it: its own role,
# logged in as itself, with no stronger role to step back to and no secret to read.
@pytest.mark.parametrize("sql, refusal", [
    ("DO $$BEGIN PERFORM set_config('role', 'postgres', true); END$$",
     "permission denied for language plpgsql"),
    ("SELECT set_config('role', 'postgres', true)", 'permission denied to set role "postgres"'),
    ("SELECT set_config('role', 'bullpen_app', true)",
     'permission denied to set role "bullpen_app"'),
    ("SET ROLE postgres", 'permission denied to set role "postgres"'),
    ("SET LOCAL ROLE bullpen_app", 'permission denied to set role "bullpen_app"'),
    ("SELECT set_config('session_authorization', 'postgres', true)", "permission denied"),
    ("COPY (SELECT 1) TO PROGRAM 'id'",
     "permission denied to COPY to or from an external program"),
    ("SELECT pg_read_file('/etc/passwd')", "permission denied for function pg_read_file"),
    ("SELECT * FROM ts_stat('SELECT to_tsvector(''x'')')",
     "permission denied for function ts_stat"),
    ("SELECT query_to_xml('SELECT 1', true, true, '')",
     "permission denied for function query_to_xml"),
    ("SELECT lo_import('/etc/passwd')", "permission denied for function lo_import"),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid()",
     "permission denied to terminate process"),
    ("SELECT rolname, rolpassword FROM pg_authid", "permission denied for table pg_authid"),
    ("SELECT usename, passwd FROM pg_shadow", "permission denied for view pg_shadow"),
    ("SELECT * FROM link_codes", "permission denied for table link_codes"),
    ("SELECT * FROM web_sessions", "permission denied for table web_sessions"),
    ("SELECT csrf FROM web_sessions", "permission denied for table web_sessions"),
    ("SELECT * FROM web_logins", "permission denied for table web_logins"),
    ("SELECT token_hash FROM shares", "permission denied for table shares"),
])
async def test_the_console_role_refuses_every_attack(store: Store, sql: str,
                                                     refusal: str) -> None:
    user = await store.accounts.user_for("telegram", "1", "Ann")
    await store.accounts.issue_link_code(user)
    await store.web.open_session(user)
    with pytest.raises(QueryRefused) as exc:
        await store.web.admin_query(sql, timeout_ms=5000, row_limit=10)
    assert refusal in str(exc.value)
    who = await store.web.admin_query(
        "SELECT current_user, session_user, r.rolsuper FROM pg_roles r"
        " WHERE r.rolname = current_user", timeout_ms=5000, row_limit=10)
    assert who.rows == (("bullpen_console", "bullpen_console", "false"),)


async def test_the_console_sees_no_secret_table_and_no_secret_column(store: Store) -> None:
    user = await store.accounts.user_for("telegram", "1", "Ann")
    await store.web.open_session(user)
    tables = dict(await store.web.admin_tables(timeout_ms=5000))
    assert not {"web_sessions", "web_logins", "link_codes"} & set(tables)
    assert tables["users"] == 1
    for hidden in ("web_sessions", "web_logins", "link_codes"):
        assert await store.web.admin_rows(hidden, page=1, page_size=10, timeout_ms=5000) is None
    shares = await store.web.admin_rows("shares", page=1, page_size=10, timeout_ms=5000)
    assert shares is not None and "token_hash" not in shares.columns
    member = await store.web.admin_query(
        "SELECT count(*) FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.member"
        " WHERE r.rolname = 'bullpen_console'", timeout_ms=5000, row_limit=10)
    assert member.rows == (("0",),)  # no pg_read_all_data, no role at all


async def test_without_a_login_as_its_role_the_console_is_off_and_says_why(
        store: Store, pg_db: Database, pg_dsn: str) -> None:
    """No fallback to the application's user (nor any stronger role): the console is off."""
    off = WebRepo(pg_db.pool, console_dsn=None)
    assert "no login is configured" in (await off.admin_status() or "")
    with pytest.raises(ConsoleOff):
        await off.admin_query("SELECT 1", timeout_ms=5000, row_limit=10)
    superuser = WebRepo(pg_db.pool, console_dsn=pg_dsn)  # a stronger login is refused too
    assert "is not the role bullpen_console" in (await superuser.admin_status() or "")
    with pytest.raises(ConsoleOff):
        await superuser.admin_tables(timeout_ms=5000)
    await pg_db.pool.execute("ALTER ROLE bullpen_console NOLOGIN")
    try:
        reason = await store.web.admin_status()
        assert reason is not None and "cannot log in as the role bullpen_console" in reason
        with pytest.raises(ConsoleOff):
            await store.web.admin_query("SELECT current_user", timeout_ms=5000, row_limit=10)
        with pytest.raises(ConsoleOff):
            await store.web.admin_rows("users", page=1, page_size=10, timeout_ms=5000)
    finally:
        await pg_db.pool.execute("ALTER ROLE bullpen_console LOGIN")
    assert await store.web.admin_status() is None


async def test_a_200_mb_result_is_cut_in_bytes_without_being_held(store: Store) -> None:
    sql = "SELECT repeat('x', 1000000) AS mb FROM generate_series(1, 200)"
    tracemalloc.start()
    try:
        got = await store.web.admin_query(sql, timeout_ms=60_000, row_limit=500,
                                          byte_limit=2 * 1024 * 1024)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert got.truncated and got.cut_by == "bytes"
    assert len(got.rows) == 2 and all(len(r[0] or "") == 1_000_000 for r in got.rows)
    assert peak < 40 * 1024 * 1024, f"{peak / 1e6:.0f} MB held for a 2 MB answer"
    rows = await store.web.admin_query("SELECT g FROM generate_series(1, 20) g",
                                       timeout_ms=5000, row_limit=5, byte_limit=1024)
    assert rows.cut_by == "rows" and len(rows.rows) == 5
    whole = await store.web.admin_query("SELECT g FROM generate_series(1, 5) g",
                                        timeout_ms=5000, row_limit=5, byte_limit=1024)
    assert not whole.truncated and whole.cut_by == "" and len(whole.rows) == 5
