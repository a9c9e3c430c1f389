"""One database behind the store: its engine, the probe that refuses what is not ours, create and migrate,
read-only detection, and the one deadline and retry policy every call goes through.

:class:`Database` takes a resolved location (:func:`workbench.locations.resolve_db` decides which); it reads
no config. Both backends hold the same schema (:mod:`workbench.store.schema`), created and migrated by the
same statements (on PostgreSQL under an advisory lock, so many processes may open a new database at once).
A database file is never overwritten: a file that is not SQLite, a SQLite file that is not a workbench
store, and a store from a newer schema version are refused with a message naming the file. A database on a
read-only file, folder or file system is opened read-only: it can be listed, shown, replayed and exported.

Every write, of sessions, sweeps, imports and the queue's worker leases alike, runs through
:meth:`Database.write` (or :attr:`Database.policy` for a caller with a wait of its own): a busy database, and
on a server a dropped connection or a restart, is waited out for ``busy_timeout_s``
(:class:`workbench.store.retry.WaitPolicy`); every other fault is a :class:`StoreError` at once, whose
``kind`` says which. Reads run under :meth:`Database.read`'s deadline.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, event, func, inspect
from sqlalchemy.exc import DBAPIError
from sqlmodel import Session, col, create_engine, select

from workbench.locations import DbLocation, fallback_dir, shown_url
from workbench.store import schema
from workbench.store.faults import (
    WAITABLE,
    Fault,
    StoreError,
    UnknownSession,
    describe,
    fault_kind,
    reason,
    store_error,
)
from workbench.store.listing import casefold
from workbench.store.older_schema import read_as_current_schema
from workbench.store.retry import WaitPolicy, waited_too_long
from workbench.store.schema import SCHEMA_VERSION, MetaRow

log = logging.getLogger(__name__)

R = TypeVar("R")

DEFAULT_BUSY_TIMEOUT_S = 30.0
"""How long a write waits for a database another process holds locked, before the session's events go
to the fallback file instead (the ``store_busy_timeout_s`` setting)."""
READ_TIMEOUT_S = 60.0
"""The least a read of a server waits for its answer (longer when ``store_busy_timeout_s`` is)."""


class Database:
    """An opened session database: SQLite (WAL) in a file, or a server by URL."""

    def __init__(
        self,
        location: DbLocation | str | Path,
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        unsaved_dir: Path | None = None,
    ) -> None:
        if not isinstance(location, DbLocation):
            from workbench.locations import db_location

            location = db_location(location)
        self.location = location
        self.busy_timeout_s = busy_timeout_s
        self.lock_wait_s = min(busy_timeout_s, 1.0)
        """How long one statement waits for a lock another session holds (then the write tries again)."""
        self.unsaved_dir = unsaved_dir if unsaved_dir is not None else fallback_dir()
        """Where this database's fallback files go (and are imported from)."""
        self.read_only = False
        self.busy_waited_s = 0.0
        """The longest a write of this database waited for a lock another process held."""
        self.path: Path | None = None
        if location.path is None:
            self.url = location.url
            self._shown = shown_url(self.url)
        else:
            self.path = expand_path(location.path)
            _check_file(self.path)
            self.read_only = self.path.exists() and _read_only(self.path)
            if not self.read_only:
                try:
                    self.path.parent.mkdir(parents=True, exist_ok=True)
                except OSError as error:
                    blocking = next((parent for parent in self.path.parents if parent.exists()), None)
                    why = (
                        f"{blocking} is not a folder" if blocking and not blocking.is_dir() else error.strerror or error
                    )
                    raise StoreError(f"{self.path} cannot be created ({why})") from None
            self.url = f"sqlite:///{self.path}"
        self.policy = WaitPolicy(self.name, busy_timeout_s, self.lock_wait_s, server=self.path is None)
        """How this database's writes wait out a fault (and its calls to a server are cut when they stall)."""
        try:
            self.engine = _engine(
                self.url, self.path, read_only=self.read_only, timeout_s=self.lock_wait_s, wait_s=busy_timeout_s
            )
        except ImportError:
            raise StoreError(describe("driver", self.name, ""), "driver") from None
        except Exception as error:  # an unknown dialect (NoSuchModuleError), a malformed URL, ...
            raise StoreError(f"{self.name} cannot be opened ({reason(error)})") from None
        try:
            self._prepare()
        except BaseException:
            self.engine.dispose()  # refused or failed to migrate: nothing holds the file or the server
            raise

    def close(self) -> None:
        """Let go of the engine's pooled connections (for SQLite, the file's handles). Safe to call twice; a
        connection still checked out (a writer finishing) is closed when it is given back."""
        self.engine.dispose()

    @property
    def name(self) -> str:
        """The database as messages name it: the path, or the URL with its password masked."""
        return str(self.path) if self.path is not None else self._shown

    @property
    def key(self) -> str:
        """The database as a fallback file names it: the absolute path, or the URL without its password."""
        return str(self.path.resolve()) if self.path is not None else shown_url(self.url, password=None)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    # -- opening ---------------------------------------------------------------------------------

    def _prepare(self) -> None:
        """Create, accept, migrate or refuse the database, without writing to anything we refuse."""
        if self.path is None:
            self._prepare_server()
            return
        tables, version = self._probe()
        if not tables:
            if self.read_only:
                raise StoreError(
                    f"{self.name} cannot be created as a database: the file, its folder or the file system is "
                    "read-only; choose another file with --db",
                    "read-only",
                )
            try:
                schema.create_file_schema(self.engine)
            except Exception as error:  # a file SQLite cannot create or write (/proc, /dev/null, read-only)
                kind = fault_kind(error)
                if kind in ("full", "read-only", "busy"):
                    raise store_error(error, self.name, "creating it") from None
                raise StoreError(f"{self.name} cannot be created as a database: {reason(error)}") from None
            return
        schema.check(tables, version, self.name)
        if schema.needs_migration(tables, version):
            if self.read_only:  # it cannot be migrated: read it as it is
                read_as_current_schema(self.engine)
            else:
                self._migrate(version)

    def _prepare_server(self) -> None:
        """A database server: check, create or migrate in one transaction under the schema lock (PostgreSQL's
        DDL is transactional), waiting out a server that is starting up or a dropped connection."""
        from workbench.store.postgres import can_write, lock_schema

        def prepare() -> None:
            with self.engine.begin() as connection:
                if connection.dialect.name == "postgresql":
                    lock_schema(connection)
                tables = set(inspect(connection).get_table_names())
                version = 0
                if MetaRow.__tablename__ in tables:
                    row = connection.execute(
                        select(MetaRow.value).where(col(MetaRow.key) == "schema_version")
                    ).one_or_none()
                    version = schema.parse_version(row[0] if row else None, self.name)
                if not tables:
                    schema.create_in(connection)
                    return
                schema.check(tables, version, self.name)
                if schema.needs_migration(tables, version):
                    log.info("migrating %s from schema %s to %s", self.name, version, SCHEMA_VERSION)
                    schema.migrate_in(connection)
                if connection.dialect.name == "postgresql":
                    self.read_only = not can_write(connection)  # a reader's login: list and show, never run

        self.write(prepare, "opening it", waitable=frozenset({"busy", "transient"}))

    def _probe(self) -> tuple[set[str], int]:
        """Table names and schema version of a database file, read without changing it (a refused file stays
        as it was)."""
        assert self.path is not None
        try:
            if not self.path.exists() or self.path.stat().st_size == 0:
                return set(), 0
            # Only reads: a file refused here stays byte for byte as it was. (A ``mode=ro`` connection to a
            # writable WAL database can fail with an I/O error while another connection holds its files.)
            probe = _connect(self.path, read_only=self.read_only, immutable=self.read_only, timeout_s=5.0)
            with closing(probe) as connection:
                tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                version = 0
                if MetaRow.__tablename__ in tables:
                    row = connection.execute(
                        f"SELECT value FROM {MetaRow.__tablename__} WHERE key = 'schema_version'"
                    ).fetchone()
                    version = schema.parse_version(row[0] if row else None, self.name)
                connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return tables, version
        except StoreError:
            raise
        except Exception as error:  # sqlite3.DatabaseError for a corrupt or foreign file, among others
            if fault_kind(error) == "foreign":
                raise StoreError(describe("foreign", self.name, ""), "foreign") from None
            raise store_error(error, self.name, "opening it") from None

    def _migrate(self, version: int) -> None:
        """Bring an older file up to date in one transaction (SQLite's DDL is transactional)."""

        def migrate() -> None:
            with self.engine.connect() as connection:
                # The write lock before the schema is read: processes opening the file at once migrate it
                # one after the other, and the later ones find it done.
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                schema.migrate_in(connection)
                connection.commit()

        log.info("migrating %s from schema %s to %s", self.name, version, SCHEMA_VERSION)
        self.write(migrate, f"migrating it from schema {version}")

    def schema_version(self) -> int:
        def read() -> int:
            with Session(self.engine) as session:
                row = session.get(MetaRow, "schema_version")
            return schema.parse_version(row.value if row else None, self.name)

        return self.read(read)

    # -- the policy ------------------------------------------------------------------------------

    def require_writable(self) -> None:
        """Refuse, with the one-line read-only message, before starting anything that must be stored."""
        if self.read_only:
            raise StoreError(describe("read-only", self.name, ""), "read-only")

    def read(self, action: Callable[[], R], doing: str = "reading") -> R:
        """Run ``action`` (a read through this engine) under the read deadline: a driver error becomes a
        one-line StoreError, and on a server a read without an answer for ``READ_TIMEOUT_S`` (or the busy
        timeout) is cut and says so."""
        wait_s = max(READ_TIMEOUT_S, self.busy_timeout_s)
        with self.policy.bounded(time.monotonic(), wait_s) as attempt:
            try:
                return action()
            except (DBAPIError, sqlite3.Error) as error:
                if attempt is not None and attempt.expired:
                    message = waited_too_long("unreachable", self.name, wait_s, doing, error, stalled=True)
                    raise StoreError(message, "unreachable") from None
                raise store_error(error, self.name, doing) from None

    def write(self, action: Callable[[], R], doing: str, *, waitable: frozenset[Fault] = WAITABLE) -> R:
        """Run ``action`` (one transaction), waiting out a ``waitable`` fault with backoff for ``busy_timeout_s``:
        a busy database, and on a server a dropped connection, a restart, a serialization failure or deadlock.

        The wait is wall time from the first attempt that failed or stalled; on a server, an attempt still
        without an answer when the wait runs out is cut (:mod:`workbench.store.deadline`) and the write fails
        as unreachable. Any other fault (full, read-only, damaged, I/O, refused) raises a :class:`StoreError`
        at once.
        """
        if self.read_only:
            raise StoreError(describe("read-only", self.name, "", doing), "read-only")
        return self.policy.run(action, doing, waitable=waitable, on_wait=self._note_wait)

    def _note_wait(self, waited_s: float) -> None:
        self.busy_waited_s = max(self.busy_waited_s, waited_s)

    def resolve_prefix(self, column: Any, prefix: str, *, noun: str, listing: str) -> str:
        """The one value of ``column`` (an id) that starts with ``prefix``; the errors name the command that
        lists them."""
        prefix = prefix.strip()
        if not prefix:
            raise UnknownSession(f"empty {noun} id")

        def read() -> list[str]:
            with Session(self.engine) as session:
                query = select(column).where(col(column).startswith(prefix, autoescape=True)).limit(2)
                return list(session.exec(query))

        ids = self.read(read)
        if not ids:
            raise UnknownSession(f"no {noun} {prefix!r} in {self.name}; run `{listing}` to list them")
        if len(ids) > 1:
            raise UnknownSession(f"{noun} id {prefix!r} is ambiguous in {self.name}; give more characters")
        return ids[0]


# -- files ---------------------------------------------------------------------------------------


def expand_path(location: str | Path) -> Path:
    """``location`` with ``~`` expanded; an unknown user's home is a :class:`StoreError`, not a crash."""
    try:
        return Path(location).expanduser()
    except RuntimeError as error:  # "Could not determine home directory."
        raise StoreError(f"{location} cannot be used: {error}") from None


def _check_file(path: Path) -> None:
    if not path.exists():
        return
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    if not path.is_file():
        raise StoreError(f"{path} is not a regular file (a device, pipe or socket); it was left untouched")
    # The header is not read here: opening and closing the file outside SQLite would drop the POSIX locks
    # this process's SQLite connections hold on it (another process could then checkpoint and delete the
    # WAL under them). SQLite itself refuses a file that is not a database (see Database._probe).


def _read_only(path: Path) -> bool:
    """Whether SQLite could not write this database: a read-only file system, folder (no room for the
    WAL files) or file. ``os.access`` reports a read-only mount even to root."""
    return not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK | os.X_OK)


def _connect(path: Path, *, read_only: bool, immutable: bool, timeout_s: float) -> sqlite3.Connection:
    """A connection to a database file; ``immutable`` reads a file no one can write without locks or WAL
    files (a read-only folder or file system)."""
    if not read_only:
        return sqlite3.connect(path, timeout=timeout_s, check_same_thread=False)
    mode = "ro&immutable=1" if immutable else "ro"
    uri = f"{path.resolve().as_uri()}?mode={mode}"
    return sqlite3.connect(uri, uri=True, timeout=timeout_s, check_same_thread=False)


def _engine(url: str, path: Path | None, *, read_only: bool, timeout_s: float, wait_s: float) -> Engine:
    if path is None:
        if url.startswith("postgresql"):
            from workbench.store.postgres import postgres_engine

            return postgres_engine(url, lock_timeout_s=timeout_s, wait_s=wait_s)
        return create_engine(url)
    engine = create_engine(
        url, creator=lambda: _connect(path, read_only=read_only, immutable=read_only, timeout_s=timeout_s)
    )

    @event.listens_for(engine, "connect")
    def _pragmas(connection: sqlite3.Connection, _record: object) -> None:
        cursor = connection.cursor()
        if not read_only:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()
        connection.create_function("wb_casefold", 1, casefold, deterministic=True)

    return engine


# -- SQL that differs between the backends --------------------------------------------------------


def database_now(dialect: str) -> Any:
    """SQL for the database's clock, in UTC (the heartbeat's clock: every host's writer and reader share it)."""
    if dialect == "postgresql":
        return func.timezone("UTC", func.now())
    return func.strftime("%Y-%m-%d %H:%M:%f000", "now")  # SQLite's DATETIME text, with microseconds


def seconds_since(column: Any, dialect: str) -> Any:
    """SQL for the seconds from a moment column to the database's clock (NULL for a NULL moment)."""
    if dialect == "postgresql":
        return func.extract("epoch", func.timezone("UTC", func.now()) - column)
    return (func.julianday("now") - func.julianday(column)) * 86400.0
