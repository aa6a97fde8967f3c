"""The workspace database connection: one disciplined write path, and Alembic migrations run from code.

SQLite (the default) is opened in WAL mode with a busy timeout, foreign keys on, and every write transaction
started with ``BEGIN IMMEDIATE``: the write lock is taken at the start, so two writers queue on the busy
timeout instead of failing half-way with "database is locked" when a read transaction tries to upgrade.
Reads use a plain deferred ``BEGIN`` and run beside a writer (WAL). PostgreSQL needs none of this.

Migrations live in ``migrations/`` (package data) and are applied with Alembic's API on ``init`` and on every
open, so a workspace made by an older zuhyo is upgraded in place; one made by a newer zuhyo is refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from zuhyo.errors import ZuhyoError

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: The newest migration in ``migrations/versions`` (a test checks it against Alembic's head), so that opening
#: a current workspace does not need to import Alembic at all.
HEAD_REVISION = "0005"
#: Seconds a SQLite writer waits for another writer's lock before failing.
BUSY_TIMEOUT_S = 60.0
#: Any fixed number: the PostgreSQL advisory lock that serialises concurrent migrations of one database.
_PG_MIGRATION_LOCK = 7_240_531


T = TypeVar("T")


class WorkspaceError(ZuhyoError):
    """A workspace that cannot be opened or used: missing, newer than this zuhyo, a bad database URL."""


def make_engine(url: str) -> Engine:
    """An engine for ``url`` with zuhyo's SQLite discipline applied (WAL, busy timeout, BEGIN IMMEDIATE)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        try:
            # A long wait rather than an error when a loaded machine holds connections longer (a pool timeout is a
            # failed request); at most 25 connections, so a few servers fit PostgreSQL's default 100.
            return create_engine(parsed, pool_pre_ping=True, pool_size=5, max_overflow=20, pool_timeout=120)
        except ModuleNotFoundError as e:
            raise WorkspaceError(f"database driver for {parsed.drivername} is not installed ({e.name}); "
                                 "for PostgreSQL: pip install 'psycopg[binary]'") from None
    engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_S})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we issue BEGIN ourselves (below), pysqlite must not
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")  # durable across process crashes in WAL mode
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        write = conn.get_execution_options().get("zuhyo_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


class Database:
    """An engine plus the two ways to use it: :meth:`write` (one short transaction) and :meth:`read`."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        self._writer = sessionmaker(bind=self.engine.execution_options(zuhyo_write=True), expire_on_commit=False)
        self._reader = sessionmaker(bind=self.engine, expire_on_commit=False)

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    @contextmanager
    def write(self) -> Iterator[Session]:
        """One write transaction (``BEGIN IMMEDIATE`` on SQLite): committed on exit, rolled back on error."""
        with self._writer() as session, session.begin():
            yield session

    def write_retrying(self, work: Callable[[Session], T], attempts: int = 3) -> T:
        """``work(session)`` in a write transaction, run again when it loses a race on a unique constraint.

        On PostgreSQL two writers can both find a row missing and both insert it; the second gets an
        IntegrityError. Running the whole transaction again lets its get-or-create steps find the row the other
        writer committed. (SQLite's BEGIN IMMEDIATE serialises writers, so there it never happens.)
        """
        from sqlalchemy.exc import IntegrityError

        for attempt in range(attempts):
            try:
                with self.write() as session:
                    return work(session)
            except IntegrityError:
                if attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read-only transaction (rolled back on exit)."""
        with self._reader() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()


def _alembic_config(connection: Connection | None = None) -> Any:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("path_separator", "os")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str:
    """The newest migration this zuhyo ships."""
    from alembic.script import ScriptDirectory

    head = ScriptDirectory.from_config(_alembic_config()).get_current_head()
    assert head is not None
    return head


def current_revision(db: Database) -> str | None:
    """The migration the database is at (None for an empty database); read without importing Alembic."""
    from sqlalchemy import inspect, text

    with db.engine.connect() as conn:
        if not inspect(conn).has_table("alembic_version"):
            return None
        rows = conn.execute(text("SELECT version_num FROM alembic_version")).scalars().all()
        conn.rollback()
    if len(rows) > 1:
        raise WorkspaceError(f"workspace database {db.url!r} has several migration heads: {', '.join(rows)}")
    return rows[0] if rows else None


def upgrade(db: Database, target: str = "head") -> tuple[str | None, str | None]:
    """Migrate the database to ``target`` (default: the newest); returns (revision before, revision after).

    Runs inside one write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: under an advisory lock), so two
    processes opening an old workspace at once migrate it once.
    """
    before = current_revision(db)
    if target == "head" and before == HEAD_REVISION:
        return before, before
    from alembic import command
    from alembic.script import ScriptDirectory
    from alembic.util.exc import CommandError

    script = ScriptDirectory.from_config(_alembic_config())
    if before is not None:
        try:
            script.get_revision(before)
        except CommandError:
            raise WorkspaceError(f"workspace database {db.url!r} is at migration {before!r}, which this zuhyo "
                                 f"does not know (newest here: {script.get_current_head()}); upgrade zuhyo") from None
    wanted = script.get_current_head() if target == "head" else target
    if before == wanted:
        return before, before
    with db.engine.execution_options(zuhyo_write=True).begin() as conn:
        if db.backend == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({_PG_MIGRATION_LOCK})")
        command.upgrade(_alembic_config(conn), target)
    return before, current_revision(db)
