"""Bullpen's database roles: the application's own role, the admin console's, and what
neither may do.

- `APP_ROLE` (bullpen_app) owns Bullpen's tables and nothing more: no superuser, no CREATEROLE,
  no CREATEDB. The application connects as it (the embedded server always; an external server
  when `DATABASE_URL` names it).
- `CONSOLE_ROLE` (bullpen_console) is what the admin console's SQL runs as: SELECT on named
  Bullpen tables (migration 0015), nothing on secrets (sign-in links, sessions, CSRF tokens,
  link codes), no member of any predefined role (`pg_read_all_data` reads `pg_authid`).

`provision` makes them where the connected user may (a superuser, or a user with CREATEROLE),
and hands every Bullpen object the connected user owns over to `APP_ROLE`. It runs after each
migration run (`core.store.migrate`) and, as the embedded server's superuser, before the
application's first connection (`core.store.database`). Every step is idempotent and is skipped
with a log line where the connected user lacks the power: a plain application user migrating
its own database is not an error.
"""

from __future__ import annotations

import logging

import asyncpg

log = logging.getLogger(__name__)

APP_ROLE = "bullpen_app"
CONSOLE_ROLE = "bullpen_console"

# Functions PUBLIC may execute by default that run a query given as text: under a role the
# console could reach they ran SQL it should not (ts_stat read a file as the superuser).
# Nothing in Bullpen calls them.
_QUERY_RUNNERS = (
    "ts_stat(text)", "ts_stat(text, text)",
    "query_to_xml(text, boolean, boolean, text)",
    "query_to_xmlschema(text, boolean, boolean, text)",
    "query_to_xml_and_xmlschema(text, boolean, boolean, text)",
)

# Relations of the public schema the connected user owns; sequences owned by a table column
# (serial, identity) follow their table and are left out.
_OWNED_RELATIONS = """
SELECT c.relname, c.relkind::text AS relkind FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
  AND NOT (c.relkind = 'S' AND EXISTS (
      SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
      AND d.deptype IN ('a', 'i')))
ORDER BY c.relname
"""
_OWNED_ROUTINES = """
SELECT p.oid::regprocedure::text AS sig, p.prokind::text AS prokind FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
WHERE n.nspname = 'public' AND p.proowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
"""
_ALTER = {"r": "TABLE", "p": "TABLE", "f": "FOREIGN TABLE", "v": "VIEW",
          "m": "MATERIALIZED VIEW", "S": "SEQUENCE"}


def ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


async def _try(conn: asyncpg.Connection, sql: str, what: str) -> bool:
    """One step, outside any transaction (a refusal aborts nothing else); False, logged,
    when the connected user may not (or another process did it first)."""
    try:
        await conn.execute(sql)
    except asyncpg.PostgresError as exc:
        log.info("database roles: %s skipped (%s: %s)", what, type(exc).__name__, exc)
        return False
    return True


async def may_set_role(conn: asyncpg.Connection, role: str) -> bool:
    """The connected user may SET ROLE to `role` (so hand objects over to it). PostgreSQL 16
    split membership into INHERIT and SET; before it a member could always."""
    how = "SET" if int(await conn.fetchval("SHOW server_version_num")) >= 160000 else "MEMBER"
    return bool(await conn.fetchval("SELECT pg_has_role(current_user, $1, $2)", role, how))


async def _role_exists(conn: asyncpg.Connection, role: str) -> bool:
    return bool(await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", role))


async def provision(conn: asyncpg.Connection, *, passwords: dict[str, str] | None = None) -> None:
    """Make or repair the roles where the connected user may, then hand its Bullpen objects
    over to `APP_ROLE`. `passwords` (role -> password) are set too: the embedded server keeps
    them in a file of the data directory; elsewhere the operator sets them."""
    me = await conn.fetchrow(
        "SELECT rolname, rolsuper, rolcreaterole FROM pg_roles WHERE rolname = current_user")
    assert me is not None
    superuser, may_make = bool(me["rolsuper"]), bool(me["rolsuper"] or me["rolcreaterole"])
    if me["rolname"] == APP_ROLE:
        return  # the application migrating its own database: it owns what it made already
    if may_make:
        for role in (APP_ROLE, CONSOLE_ROLE):
            if not await _role_exists(conn, role):
                # two databases of one server migrating at once may both try: one wins
                await _try(conn, f"CREATE ROLE {ident(role)} LOGIN", f"CREATE ROLE {role}")
            await _try(conn, f"ALTER ROLE {ident(role)} NOSUPERUSER NOCREATEDB NOCREATEROLE"
                             " NOREPLICATION NOBYPASSRLS LOGIN", f"ALTER ROLE {role}")
            password = (passwords or {}).get(role)
            if password is not None:
                await conn.execute(f"ALTER ROLE {ident(role)} PASSWORD {literal(password)}")
        # a CREATEROLE user hands objects over only to a role it may SET ROLE to
        if await _role_exists(conn, APP_ROLE) and not await may_set_role(conn, APP_ROLE):
            await _try(conn, f"GRANT {ident(APP_ROLE)} TO {ident(me['rolname'])}",
                       "membership of the app role")
        # the console is a member of no role: pg_read_all_data read pg_authid and every secret
        for granted in await conn.fetch(
                "SELECT r.rolname FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid"
                " WHERE m.member = (SELECT oid FROM pg_roles WHERE rolname = $1)",
                CONSOLE_ROLE):
            await _try(conn, f"REVOKE {ident(granted['rolname'])} FROM {ident(CONSOLE_ROLE)}",
                       f"revoking {granted['rolname']} from the console")
    if superuser:
        for fn in _QUERY_RUNNERS:
            await _try(conn, f"REVOKE EXECUTE ON FUNCTION pg_catalog.{fn} FROM PUBLIC",
                       f"revoking {fn}")
        # DO blocks: only the application (its migrations use them) may write plpgsql
        if await _role_exists(conn, APP_ROLE):
            await _try(conn, f"GRANT USAGE ON LANGUAGE plpgsql TO {ident(APP_ROLE)}",
                       "plpgsql for the app role")
            await _try(conn, "REVOKE USAGE ON LANGUAGE plpgsql FROM PUBLIC",
                       "revoking plpgsql from PUBLIC")
    if await _role_exists(conn, APP_ROLE) and await may_set_role(conn, APP_ROLE):
        await hand_over(conn)


async def hand_over(conn: asyncpg.Connection) -> list[str]:
    """Give `APP_ROLE` the Bullpen objects the connected user owns in the public schema (what
    its migrations made), and the right to make more there (its own later migrations); the
    names handed over."""
    await _try(conn, f"GRANT USAGE, CREATE ON SCHEMA public TO {ident(APP_ROLE)}",
               "CREATE on the public schema for the app role")
    done: list[str] = []
    for row in await conn.fetch(_OWNED_RELATIONS):
        kind = _ALTER[row["relkind"]]
        if await _try(conn, f"ALTER {kind} public.{ident(row['relname'])} OWNER TO"
                            f" {ident(APP_ROLE)}", f"owning {row['relname']}"):
            done.append(row["relname"])
    for row in await conn.fetch(_OWNED_ROUTINES):
        kind = "PROCEDURE" if row["prokind"] == "p" else "FUNCTION"
        if await _try(conn, f"ALTER {kind} {row['sig']} OWNER TO {ident(APP_ROLE)}",
                      f"owning {row['sig']}"):
            done.append(row["sig"])
    if done:
        log.info("database roles: %d object(s) now owned by %s", len(done), APP_ROLE)
    return done
