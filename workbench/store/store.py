"""The session store: SQLite (WAL) or PostgreSQL through SQLModel, behind a small facade that speaks
workbench objects.

``Store`` takes a resolved location (:func:`workbench.locations.resolve_db` decides which); it reads no
config. Both backends hold the same schema, created and migrated by the same code (on PostgreSQL under an
advisory lock, so many processes may open a new database at once). A database file is never overwritten:
a file that is not SQLite, a SQLite file that is not a workbench store, and a store from a newer schema
version are refused with a message naming the file.
A database on a read-only file, folder or file system is opened read-only: it can be listed, shown,
replayed and exported. Writes wait out a busy database (and on a server, a dropped connection or a
restart) for ``busy_timeout_s``; every other fault is a :class:`StoreError` at once, whose ``kind`` says which.
"""

from __future__ import annotations

import functools
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from sqlalchemy import Connection, Engine, event, func, inspect, text
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlmodel import Session, SQLModel, col, create_engine, delete, select, update

from workbench.events import ArmEvent
from workbench.locations import DbLocation, fallback_dir, shown_url
from workbench.session import Comparison, fold_header, settle_stored
from workbench.store.codec import decode_event, encode_event
from workbench.store.convert import arm_outcomes, info_to_header, session_record
from workbench.store.fallback import EventTuple
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
from workbench.store.imported import Imported, ImportedSweep, Waiting
from workbench.store.imports import import_file, import_waiting
from workbench.store.listing import (
    SCHEMA_VERSION,
    TOOL_CALL_KIND,
    ArmInfo,
    SessionInfo,
    casefold,
    search_pattern,
    settle,
)
from workbench.store.liveness import writer_alive
from workbench.store.older_schema import read_as_current_schema
from workbench.store.retry import WaitPolicy, waited_too_long
from workbench.store.tables import ArmRow, EventRow, MetaRow, SessionRow, SweepRow, SweepRunRow, UTCDateTime

if TYPE_CHECKING:
    from workbench.store.writer import SessionWriter

log = logging.getLogger(__name__)

_EVENT_COLUMNS = (EventRow.arm, EventRow.seq, EventRow.t, EventRow.kind, EventRow.data)
_ARM_ORDER = (col(ArmRow.position), col(ArmRow.name).desc())
"""Arms in their comparison's order (see ``ArmRow.position`` for sessions stored before positions)."""
_ARM_POSITION = (
    select(ArmRow.position)
    .where(col(ArmRow.session_id) == col(EventRow.session_id), col(ArmRow.name) == col(EventRow.arm))
    .scalar_subquery()
)
"""An event's arm's position, to order events by arm."""
DEFAULT_BUSY_TIMEOUT_S = 30.0
"""How long a write waits for a database another process holds locked, before the session's events go
to the fallback file instead (the ``store_busy_timeout_s`` setting)."""
_OURS = {MetaRow.__tablename__, SessionRow.__tablename__, ArmRow.__tablename__, EventRow.__tablename__}

P = ParamSpec("P")
R = TypeVar("R")


READ_TIMEOUT_S = 60.0
"""The least a read of a server waits for its answer (longer when ``store_busy_timeout_s`` is)."""


def _reading(method: Callable[P, R]) -> Callable[P, R]:
    """Turn a driver error met while reading (a damaged page, an I/O error) into a one-line StoreError; on a
    server, a read without an answer for ``READ_TIMEOUT_S`` (or the busy timeout) is cut and says so."""

    @functools.wraps(method)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        store: Store = args[0]  # type: ignore[assignment]
        return store.read(lambda: method(*args, **kwargs))

    return guarded


class Store:
    """Sessions, arms, events and bench sweeps in one SQLite file (or any SQLAlchemy URL)."""

    def __init__(
        self,
        location: DbLocation | str | Path,
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        unsaved_dir: Path | None = None,
        import_unsaved: bool = True,
    ) -> None:
        if not isinstance(location, DbLocation):
            from workbench.locations import db_location

            location = db_location(location)
        self.location = location
        self.busy_timeout_s = busy_timeout_s
        self.lock_wait_s = min(busy_timeout_s, 1.0)
        """How long one statement waits for a lock another session holds (then the write tries again)."""
        self.unsaved_dir = unsaved_dir if unsaved_dir is not None else fallback_dir()
        self.read_only = False
        self.busy_waited_s = 0.0
        """The longest a write of this store waited for a lock another process held."""
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
        """How this store's writes wait out a fault (and its calls to a server are cut when they stall)."""
        try:
            self.engine = _engine(
                self.url, self.path, read_only=self.read_only, timeout_s=self.lock_wait_s, wait_s=busy_timeout_s
            )
        except ImportError:
            raise StoreError(describe("driver", self.name, ""), "driver") from None
        except Exception as error:  # an unknown dialect (NoSuchModuleError), a malformed URL, ...
            raise StoreError(f"{self.name} cannot be opened ({reason(error)})") from None
        self._prepare()
        self.opened_imports: list[Imported | ImportedSweep] = []
        """Sessions of earlier failed runs that this open brought back from their fallback files (with
        ``import_unsaved``; a file that is refused is logged, one line, and stays)."""
        if import_unsaved and not self.read_only:
            self.opened_imports = self.import_pending()

    def __repr__(self) -> str:
        return f"Store({self.name!r})"

    @property
    def name(self) -> str:
        """The database as messages name it: the path, or the URL with its password masked."""
        return str(self.path) if self.path is not None else self._shown

    @property
    def key(self) -> str:
        """The database as a fallback file names it: the absolute path, or the URL without its password."""
        return str(self.path.resolve()) if self.path is not None else shown_url(self.url, password=None)

    # -- schema ----------------------------------------------------------------------------------

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
                self._create_schema()
            except Exception as error:  # a file SQLite cannot create or write (/proc, /dev/null, read-only)
                kind = fault_kind(error)
                if kind in ("full", "read-only", "busy"):
                    raise store_error(error, self.name, "creating it") from None
                raise StoreError(f"{self.name} cannot be created as a database: {reason(error)}") from None
            return
        self._check(tables, version)
        if version < SCHEMA_VERSION or not tables >= _OURS:
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
                    version = _version(row[0] if row else None, self.name)
                if not tables:
                    self._create_in(connection)
                    return
                self._check(tables, version)
                if version < SCHEMA_VERSION or not tables >= _OURS:
                    log.info("migrating %s from schema %s to %s", self.name, version, SCHEMA_VERSION)
                    self._migrate_in(connection)
                if connection.dialect.name == "postgresql":
                    self.read_only = not can_write(connection)  # a reader's login: list and show, never run

        self.write(prepare, "opening it", waitable=frozenset({"busy", "transient"}))

    def _check(self, tables: set[str], version: int) -> None:
        """Refuse a database that is not a workbench store, or one from a newer workbench."""
        if MetaRow.__tablename__ not in tables:
            raise StoreError(
                f"{self.name} is a database, but not a workbench session store (tables: {', '.join(sorted(tables))}); "
                "choose another file with --db or WORKBENCH_DB",
                "foreign",
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.name} was written by a newer workbench (schema {version}, this one reads {SCHEMA_VERSION}); "
                "upgrade the workbench to open it",
                "foreign",
            )

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
                    version = _version(row[0] if row else None, self.name)
                connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
            return tables, version
        except StoreError:
            raise
        except Exception as error:  # sqlite3.DatabaseError for a corrupt or foreign file, among others
            if fault_kind(error) == "foreign":
                raise StoreError(describe("foreign", self.name, ""), "foreign") from None
            raise store_error(error, self.name, "opening it") from None

    @_reading
    def schema_version(self) -> int:
        with Session(self.engine) as session:
            row = session.get(MetaRow, "schema_version")
        return _version(row.value if row else None, self.name)

    def _migrate(self, version: int) -> None:
        """Bring an older store up to date, in one transaction (SQLite's DDL is transactional).

        1 -> 2: the bench's tables join the schema (created if the bench never ran; ``host`` added to a
        sweep), an arm has its ``position`` in its comparison (0 for every arm stored before: tool and code
        then sort by name), and an event is unique per (session, arm, seq), so importing unsaved events is
        idempotent. 2 -> 3: a session has a ``heartbeat`` (none for the sessions stored before). 3 -> 4: the
        queue's ``queue_workers`` table (created empty: a worker registers again when it starts).
        """

        def migrate() -> None:
            with self.engine.connect() as connection:
                # The write lock before the schema is read: processes opening the file at once migrate it
                # one after the other, and the later ones find it done.
                connection.exec_driver_sql("BEGIN IMMEDIATE")
                self._migrate_in(connection)
                connection.commit()

        log.info("migrating %s from schema %s to %s", self.name, version, SCHEMA_VERSION)
        self.write(migrate, f"migrating it from schema {version}")

    @staticmethod
    def _migrate_in(connection: Connection) -> None:
        """The migration's statements, in the caller's transaction (the same on every backend)."""
        existing = set(inspect(connection).get_table_names())
        if ArmRow.__tablename__ in existing:
            columns = {column["name"] for column in inspect(connection).get_columns(ArmRow.__tablename__)}
            if "position" not in columns:
                connection.execute(text("ALTER TABLE arms ADD COLUMN position INTEGER NOT NULL DEFAULT 0"))
        if SessionRow.__tablename__ in existing:
            columns = {column["name"] for column in inspect(connection).get_columns(SessionRow.__tablename__)}
            if "heartbeat" not in columns:
                moment = UTCDateTime().compile(dialect=connection.dialect)
                connection.execute(text(f"ALTER TABLE sessions ADD COLUMN heartbeat {moment}"))
        if SweepRow.__tablename__ in existing:
            columns = {column["name"] for column in inspect(connection).get_columns(SweepRow.__tablename__)}
            if "host" not in columns:
                connection.execute(text("ALTER TABLE bench_sweeps ADD COLUMN host VARCHAR NOT NULL DEFAULT ''"))
        if EventRow.__tablename__ in existing:
            connection.execute(
                text("DELETE FROM events WHERE id NOT IN (SELECT min(id) FROM events GROUP BY session_id, arm, seq)")
            )
        SQLModel.metadata.create_all(connection)
        for table in SQLModel.metadata.sorted_tables:  # create_all leaves existing tables' indexes
            for index in table.indexes:
                index.create(connection, checkfirst=True)
        Store._record_version(connection)

    @staticmethod
    def _create_in(connection: Connection) -> None:
        SQLModel.metadata.create_all(connection)
        Store._record_version(connection)

    @staticmethod
    def _record_version(connection: Connection) -> None:
        meta = MetaRow.__table__  # type: ignore[attr-defined]
        connection.execute(meta.delete().where(meta.c.key == "schema_version"))
        connection.execute(meta.insert(), {"key": "schema_version", "value": str(SCHEMA_VERSION)})

    def _create_schema(self) -> None:
        """Create what is missing and record the schema version.

        Safe when several processes open the same new file at once (a shell starting runs in parallel): the
        loser of a race sees "table already exists" or a duplicate version row, and simply tries again.
        """
        for attempt in range(5):
            try:
                SQLModel.metadata.create_all(self.engine)
                with Session(self.engine) as session:
                    session.merge(MetaRow(key="schema_version", value=str(SCHEMA_VERSION)))
                    session.commit()
                return
            except (OperationalError, IntegrityError) as error:
                if attempt == 4 or fault_kind(error) not in ("busy", "unusable"):
                    raise
                time.sleep(0.05 * (attempt + 1))

    # -- writing ---------------------------------------------------------------------------------

    def require_writable(self) -> None:
        """Refuse, with the one-line read-only message, before starting anything that must be stored."""
        if self.read_only:
            raise StoreError(describe("read-only", self.name, ""), "read-only")

    def read(self, action: Callable[[], R], doing: str = "reading") -> R:
        """Run ``action`` (a read through this store's engine) under the read deadline: a driver error becomes a
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

    def begin(
        self,
        comparison: Comparison,
        models: Mapping[str, str] | None = None,
        modes: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
    ) -> SessionWriter:
        """Start storing a comparison as it runs: ``writer.put(event)`` for each event, then
        ``writer.close(comparison)``. ``models`` and ``modes`` name each arm's model and mode (defaults:
        the comparison's model, the arm's name)."""
        from workbench.store.writer import SessionWriter

        return SessionWriter(self, comparison, models, modes, pid=pid)

    def save(
        self,
        comparison: Comparison,
        models: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
        host: str | None = None,
    ) -> None:
        """Store a comparison whole, as it stands (a comparison still running stays "running")."""
        self.save_all([comparison], models, pid=pid, host=host)

    def save_all(
        self,
        comparisons: Iterable[Comparison],
        models: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
        host: str | None = None,
    ) -> None:
        """Store finished (or still running) comparisons whole, in one transaction."""
        now = datetime.now(UTC)
        records = []
        for comparison in comparisons:
            session, arms = session_record(comparison, models, pid=pid, host=host)  # modes: from the events
            session["status"] = comparison.status
            if comparison.status != "running":
                session["finished"] = now
            records.append((session, arm_outcomes(comparison, arms), [encode_event(e) for e in comparison.events]))

        def insert() -> None:
            with Session(self.engine) as db:
                for session, *_ in records:
                    db.add(SessionRow(**session))
                db.flush()
                db.add_all(ArmRow(session_id=session["id"], **arm) for session, arms, _ in records for arm in arms)
                db.flush()
                rows = [{"session_id": session["id"], "arm": a, "seq": s, "t": t, "kind": k, "data": d}
                        for session, _, events in records for a, s, t, k, d in events]  # fmt: skip
                if rows:
                    db.connection().execute(EventRow.__table__.insert(), rows)  # type: ignore[attr-defined]
                db.commit()

        self.write(insert, "storing sessions")

    def insert_session(
        self, session: Mapping[str, Any], arms: Sequence[Mapping[str, Any]], *, beat: bool = False
    ) -> bool:
        """Create a session's rows (``session_record``'s shape); False when it is already stored. With
        ``beat``, its writer (this process) is alive: the heartbeat starts."""

        def insert() -> bool:
            with Session(self.engine) as db:
                if db.get(SessionRow, session["id"]) is not None:
                    return False
                db.add(SessionRow(**session))
                db.flush()
                db.add_all(ArmRow(session_id=session["id"], **arm) for arm in arms)
                if beat:
                    db.connection().execute(self._beat_statement(session["id"]))
                db.commit()
                return True

        return self.write(insert, f"storing session {session['id']}")

    def beat(self, session_id: str) -> None:
        """Refresh a running session's heartbeat: its writer is alive (see :func:`liveness.writer_alive`)."""

        def update() -> None:
            with self.engine.begin() as connection:
                connection.execute(self._beat_statement(session_id))

        self.write(update, f"refreshing session {session_id}")

    def _beat_statement(self, session_id: str) -> Any:
        return (
            update(SessionRow)
            .where(col(SessionRow.id) == session_id, col(SessionRow.status) == "running")
            .values(heartbeat=_database_now(self.engine.dialect.name))
        )

    def insert_events(
        self, session_id: str, events: Sequence[EventTuple], *, skip_stored: bool = False, beat: bool = False
    ) -> int:
        """Store encoded events (:func:`encode_event`) in one transaction; with ``skip_stored``, events
        already there (the same arm and seq) are left out, and the count is of those added. With ``beat``,
        the session's heartbeat is refreshed in the same transaction.

        A retry after a dropped connection skips the events already there: the commit may have reached
        the server before the connection was lost."""
        if not events:
            return 0
        attempts = 0

        def insert() -> int:
            nonlocal attempts
            attempts += 1
            with self.engine.begin() as connection:
                if beat:
                    connection.execute(self._beat_statement(session_id))
                rows = events
                if skip_stored or attempts > 1:
                    query = select(EventRow.arm, EventRow.seq).where(col(EventRow.session_id) == session_id)
                    stored = {(arm, seq) for arm, seq in connection.execute(query)}
                    rows = [e for e in events if (e[0], e[1]) not in stored]
                if rows:
                    connection.execute(
                        EventRow.__table__.insert(),  # type: ignore[attr-defined]
                        [{"session_id": session_id, "arm": a, "seq": s, "t": t, "kind": k, "data": d}
                         for a, s, t, k, d in rows],
                    )  # fmt: skip
                return len(rows)

        return self.write(insert, f"storing events of session {session_id}")

    def finish(self, session_id: str, status: str, finished: datetime, arms: Sequence[Mapping[str, Any]]) -> None:
        """Record how a session ended: its status, and each arm's (``session_record``'s arm shape)."""

        def update() -> None:
            with Session(self.engine) as db:
                row = db.get(SessionRow, session_id)
                if row is None:
                    return
                row.status, row.finished = status, finished
                for arm in arms:
                    stored = db.get(ArmRow, (session_id, arm["name"]))
                    if stored is not None:
                        for key, value in arm.items():
                            setattr(stored, key, value)
                db.commit()

        self.write(update, f"finishing session {session_id}")

    def delete_session(self, session_id: str) -> None:
        def delete_rows() -> None:
            with Session(self.engine) as session:
                session.exec(delete(SweepRunRow).where(col(SweepRunRow.session_id) == session_id))
                session.exec(delete(EventRow).where(col(EventRow.session_id) == session_id))
                session.exec(delete(ArmRow).where(col(ArmRow.session_id) == session_id))
                session.exec(delete(SessionRow).where(col(SessionRow.id) == session_id))
                session.commit()

        self.write(delete_rows, f"deleting session {session_id}")

    # -- unsaved sessions ------------------------------------------------------------------------

    def import_file(self, path: Path) -> Imported | ImportedSweep | Waiting:
        """Add what a fallback file holds that this store lacks (a session or a sweep's rows), then remove
        the file; a file that disagrees with the store is refused and stays (:mod:`workbench.store.imports`)."""
        return import_file(self, path)

    def import_pending(self) -> list[Imported | ImportedSweep]:
        """Import every ready fallback file meant for this database (done on each writable open); each one
        refused is logged in one line and left in place."""
        report = import_waiting(self)
        for refused in report.refused:
            log.warning("%s", refused.message)
        return report.imported

    # -- reading ---------------------------------------------------------------------------------

    def load(self, session_id: str) -> Comparison:
        """A stored session as a :class:`~workbench.session.Comparison` (works for runs that never finished)."""
        info = self.session(session_id)
        comparison = fold_header(info_to_header(info), self.events(session_id), [arm.name for arm in info.arms])
        return settle_stored(comparison, info.status)

    def resolve_id(self, prefix: str) -> str:
        """The full id of the session whose id starts with ``prefix`` (it must be unambiguous)."""
        return self.resolve_prefix(SessionRow.id, prefix, noun="session", listing="workbench sessions")

    @_reading
    def resolve_prefix(self, column: Any, prefix: str, *, noun: str, listing: str) -> str:
        """The one value of ``column`` (an id) that starts with ``prefix``; the errors name the command that
        lists them."""
        prefix = prefix.strip()
        if not prefix:
            raise UnknownSession(f"empty {noun} id")
        with Session(self.engine) as session:
            ids = session.exec(select(column).where(col(column).startswith(prefix, autoescape=True)).limit(2)).all()
        if not ids:
            raise UnknownSession(f"no {noun} {prefix!r} in {self.name}; run `{listing}` to list them")
        if len(ids) > 1:
            raise UnknownSession(f"{noun} id {prefix!r} is ambiguous in {self.name}; give more characters")
        return ids[0]

    def session(self, session_id: str) -> SessionInfo:
        infos = self._infos(select(SessionRow).where(col(SessionRow.id) == session_id))
        if not infos:
            raise UnknownSession(f"no session {session_id!r} in {self.name}")
        return infos[0]

    def sessions(self, *, limit: int | None = None, search: str | None = None) -> list[SessionInfo]:
        """Sessions newest first; ``search`` matches app, model, task or prompt (case-insensitive)."""
        query = select(SessionRow).order_by(col(SessionRow.created).desc(), col(SessionRow.id).desc())
        if search:
            # The text is matched literally: "50%" or "max_items" must not act as LIKE wildcards.
            # SQLite's lower() folds ASCII only; on SQLite the connection has a Unicode casefold of its own.
            fold = func.wb_casefold if self.engine.dialect.name == "sqlite" else _server_casefold
            pattern = search_pattern(search)
            query = query.where(
                fold(SessionRow.app).like(pattern, escape="\\")
                | fold(SessionRow.model).like(pattern, escape="\\")
                | fold(func.coalesce(SessionRow.task, "")).like(pattern, escape="\\")
                | fold(SessionRow.prompt).like(pattern, escape="\\")
                | fold(SessionRow.id).like(pattern, escape="\\")
            )
        if limit is not None:
            query = query.limit(limit)
        return self._infos(query)

    @_reading
    def count_sessions(self) -> int:
        with Session(self.engine) as session:
            return session.exec(select(func.count()).select_from(SessionRow)).one()

    def events(self, session_id: str) -> list[ArmEvent]:
        """Every stored event of a session, per arm (in the comparison's order) in seq order."""
        query = (
            select(*_EVENT_COLUMNS)
            .where(col(EventRow.session_id) == session_id)
            .order_by(_ARM_POSITION, col(EventRow.arm).desc(), col(EventRow.seq))
        )
        return self._decoded(session_id, query)

    def events_by_time(self, session_id: str, *, offset: int = 0, limit: int | None = None) -> list[ArmEvent]:
        """A slice of a session's events in the order they happened (time, then arm order, then seq).

        A replay reads a first page to start at once and the rest behind it (decoding 10,000 events takes
        a few hundred milliseconds)."""
        query = (
            select(*_EVENT_COLUMNS)
            .where(col(EventRow.session_id) == session_id)
            .order_by(col(EventRow.t), _ARM_POSITION, col(EventRow.arm).desc(), col(EventRow.seq))
            .offset(offset)
            .limit(limit)
        )
        return self._decoded(session_id, query)

    @_reading
    def _decoded(self, session_id: str, query: Any) -> list[ArmEvent]:
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        events = []
        for arm, seq, t, kind, data in rows:
            try:
                events.append(decode_event(arm, seq, t, kind, data))
            except (KeyError, ValueError, TypeError) as error:
                # A kind from a newer workbench, or a damaged row: the rest of the session stays readable.
                log.warning("skipped event %s #%s of session %s in %s: %r", arm, seq, session_id, self.name, error)
        return events

    def _writer_alive(self, row: SessionRow) -> bool:
        """Whether a "running" row's writer lives (:func:`liveness.writer_alive`)."""

        def heartbeat_age_s() -> float | None:
            age = _seconds_since(SessionRow.heartbeat, self.engine.dialect.name)
            with Session(self.engine) as session:
                return session.exec(select(age).where(col(SessionRow.id) == row.id)).one()

        def last_event_t() -> float | None:
            with Session(self.engine) as session:
                return session.exec(select(func.max(EventRow.t)).where(col(EventRow.session_id) == row.id)).one()

        return writer_alive(row.pid, row.host, row.created, heartbeat_age_s, last_event_t)

    @_reading
    def _infos(self, query: Any) -> list[SessionInfo]:
        with Session(self.engine) as session:
            try:
                rows = session.exec(query).all()  # type: ignore[call-overload]
            except (ValueError, TypeError) as error:  # a row edited by hand or by another program
                raise StoreError(f"{self.name} holds a damaged session row ({error}); repair or move it") from None
            ids = [row.id for row in rows]
            arms: dict[str, list[ArmInfo]] = {}
            if ids:
                calls_query = (
                    select(EventRow.session_id, EventRow.arm, func.count())
                    .where(col(EventRow.session_id).in_(ids), col(EventRow.kind) == TOOL_CALL_KIND)
                    .group_by(col(EventRow.session_id), col(EventRow.arm))
                )
                calls = {(session_id, arm): count for session_id, arm, count in session.exec(calls_query).all()}
                query = select(ArmRow).where(col(ArmRow.session_id).in_(ids)).order_by(*_ARM_ORDER)
                for arm in session.exec(query).all():
                    arms.setdefault(arm.session_id, []).append(
                        ArmInfo(
                            arm.name, arm.mode, arm.model, arm.status, arm.passed, arm.cost_usd,
                            calls.get((arm.session_id, arm.name), 0),
                        )
                    )  # fmt: skip
        infos = []
        for row in rows:
            info = SessionInfo(
                row.id, row.created, row.app, row.items, row.seed, row.prompt, row.task, row.model, row.status,
                arms.get(row.id, []),
            )  # fmt: skip
            infos.append(settle(info, functools.partial(self._writer_alive, row)))
        return infos


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
    # WAL under them). SQLite itself refuses a file that is not a database (see _probe).


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


def _database_now(dialect: str) -> Any:
    """SQL for the database's clock, in UTC (the heartbeat's clock: every host's writer and reader share it)."""
    if dialect == "postgresql":
        return func.timezone("UTC", func.now())
    return func.strftime("%Y-%m-%d %H:%M:%f000", "now")  # SQLite's DATETIME text, with microseconds


def _seconds_since(column: Any, dialect: str) -> Any:
    """SQL for the seconds from a moment column to the database's clock (NULL for a NULL moment)."""
    if dialect == "postgresql":
        return func.extract("epoch", func.timezone("UTC", func.now()) - column)
    return (func.julianday("now") - func.julianday(column)) * 86400.0


def _server_casefold(column: Any) -> Any:
    from workbench.store.postgres import casefold

    return casefold(column)


def _version(value: str | None, name: str) -> int:
    try:
        return int(value) if value is not None else 0
    except ValueError:
        raise StoreError(f"{name} has an unreadable schema version {value!r}") from None
