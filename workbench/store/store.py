"""The session store: SQLite (WAL) through SQLModel, behind a small facade.

A database file is never overwritten: a file that is not SQLite, a SQLite file that is not a workbench
store, and a store from a newer schema version are refused with a message naming the file.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pydantic_core
from platformdirs import user_data_path
from sqlalchemy import Engine, event, func, inspect, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlmodel import Session, SQLModel, col, create_engine, delete, select

from workbench.events import ArmEvent, payload_from
from workbench.store.tables import SCHEMA_VERSION, ArmRow, EventRow, MetaRow, SessionRow

log = logging.getLogger(__name__)

APP_DIR_NAME = "code-mode-workbench"
_EVENT_COLUMNS = (EventRow.arm, EventRow.seq, EventRow.t, EventRow.kind, EventRow.data)
_ARM_ORDER = (col(ArmRow.position), col(ArmRow.name).desc())
"""Arms in their comparison's order (see ``ArmRow.position`` for sessions stored before positions)."""
_ARM_POSITION = (
    select(ArmRow.position)
    .where(col(ArmRow.session_id) == col(EventRow.session_id), col(ArmRow.name) == col(EventRow.arm))
    .scalar_subquery()
)
"""An event's arm's position, to order events by arm."""
SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(Exception):
    """The database cannot be used; the message names the file and says why."""


class UnknownSession(LookupError):
    pass


def default_db_path() -> Path:
    """``$WORKBENCH_DB`` if set, else ``sessions.db`` in the user's data directory.

    A ``Store()`` opened without a location also honours ``db`` in the config file
    (:meth:`workbench.config.Settings.db_location`).
    """
    configured = os.environ.get("WORKBENCH_DB")
    if configured:
        return expand_path(configured)
    return user_data_path(APP_DIR_NAME, appauthor=False) / "sessions.db"


@dataclass
class ArmInfo:
    name: str
    mode: str
    model: str
    status: str
    passed: bool | None
    cost_usd: float | None


@dataclass
class SessionInfo:
    """One stored session as listed: what ran, when, and how each arm ended."""

    id: str
    created: datetime
    app: str
    items: int
    seed: int
    prompt: str
    task: str | None
    model: str
    status: str
    arms: list[ArmInfo] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "session_id": self.id,
            "created": self.created.isoformat(),
            "app": self.app,
            "items": self.items,
            "model": self.model,
            "prompt": self.prompt,
            "task": self.task,
            "status": self.status,
            "arms": [
                {"name": a.name, "status": a.status, "passed": a.passed, "cost_usd": a.cost_usd} for a in self.arms
            ],
        }


class Store:
    """Sessions, arms and events in one SQLite file (or any SQLAlchemy URL)."""

    def __init__(self, location: str | Path | None = None) -> None:
        if location is None:
            from workbench.config import ConfigError, load_settings

            try:
                location = load_settings().db_location()
            except ConfigError as error:
                raise StoreError(str(error)) from None
        if isinstance(location, str) and "://" in location:
            self.path: Path | None = None
            self.url = location
        else:
            self.path = expand_path(location) if location is not None else default_db_path()
            _check_file(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                blocking = next((parent for parent in self.path.parents if parent.exists()), None)
                why = f"{blocking} is not a folder" if blocking and not blocking.is_dir() else error.strerror or error
                raise StoreError(f"{self.path} cannot be created ({why})") from None
            self.url = f"sqlite:///{self.path}"
        try:
            self.engine = _engine(self.url)
        except Exception as error:  # an unknown dialect (NoSuchModuleError), a missing driver (ImportError), ...
            raise StoreError(f"{self.name} cannot be opened ({_reason(error)})") from None
        self._prepare()

    def __repr__(self) -> str:
        return f"Store({str(self.path or self.url)!r})"

    @property
    def name(self) -> str:
        return str(self.path or self.url)

    # -- schema ----------------------------------------------------------------------------------

    def _prepare(self) -> None:
        """Create, accept, migrate or refuse the database, without writing to anything we refuse."""
        tables, version = self._probe()
        ours = {MetaRow.__tablename__, SessionRow.__tablename__, ArmRow.__tablename__, EventRow.__tablename__}
        if not tables:
            try:
                self._create_schema()
            except Exception as error:  # a file SQLite cannot create or write (/proc, /dev/null, read-only)
                raise StoreError(f"{self.name} cannot be created as a database: {_reason(error)}") from None
            return
        if MetaRow.__tablename__ not in tables:
            raise StoreError(
                f"{self.name} is a database, but not a workbench session store (tables: {', '.join(sorted(tables))}); "
                "choose another file with --db or WORKBENCH_DB"
            )
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.name} was written by a newer workbench (schema {version}, this one reads {SCHEMA_VERSION}); "
                "upgrade the workbench to open it"
            )
        if version < SCHEMA_VERSION or not ours <= tables:
            self._migrate(version)
        self._add_arm_positions()

    def _probe(self) -> tuple[set[str], int]:
        """Table names and schema version, read without changing the file (a refused file stays as it was)."""
        try:
            if self.path is None:
                tables = set(inspect(self.engine).get_table_names())
                return tables, self.schema_version() if MetaRow.__tablename__ in tables else 0
            if not self.path.exists() or self.path.stat().st_size == 0:
                return set(), 0
            with closing(sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)) as connection:
                tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                version = 0
                if MetaRow.__tablename__ in tables:
                    row = connection.execute(
                        f"SELECT value FROM {MetaRow.__tablename__} WHERE key = 'schema_version'"
                    ).fetchone()
                    version = _version(row[0] if row else None, self.name)
            return tables, version
        except StoreError:
            raise
        except Exception as error:  # sqlite3.DatabaseError for a corrupt file, among others
            raise StoreError(f"{self.name} is not a usable database: {_reason(error)}") from None

    def schema_version(self) -> int:
        with Session(self.engine) as session:
            row = session.get(MetaRow, "schema_version")
        return _version(row.value if row else None, self.name)

    def _migrate(self, version: int) -> None:
        """Bring an older store up to date, in one transaction. Version 1 is the first schema."""
        self._create_schema()

    def _add_arm_positions(self) -> None:
        """Give an arms table written before arm positions its ``position`` column (every old row gets 0)."""
        columns = {column["name"] for column in inspect(self.engine).get_columns(ArmRow.__tablename__)}
        if "position" in columns:
            return
        with self.engine.begin() as connection:
            connection.execute(
                text(f"ALTER TABLE {ArmRow.__tablename__} ADD COLUMN position INTEGER NOT NULL DEFAULT 0")
            )

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
            except (OperationalError, IntegrityError):
                if attempt == 4:
                    raise
                time.sleep(0.05 * (attempt + 1))

    # -- writing ---------------------------------------------------------------------------------

    def create_session(self, row: SessionRow, arms: Sequence[ArmRow]) -> None:
        row.pid = row.pid or os.getpid()
        row.host = row.host or socket.gethostname()
        with Session(self.engine) as session:
            session.add(row)
            session.flush()
            session.add_all(arms)
            session.commit()

    def append_events(self, session_id: str, events: Iterable[ArmEvent]) -> int:
        rows = [
            {
                "session_id": session_id,
                "arm": event.arm,
                "seq": event.seq,
                "t": event.t,
                "kind": event.kind,
                "data": pydantic_core.to_json(event.payload, fallback=str).decode(),
            }
            for event in events
        ]
        if rows:
            with self.engine.begin() as connection:
                connection.execute(EventRow.__table__.insert(), rows)  # type: ignore[attr-defined]
        return len(rows)

    def finish_session(self, session_id: str, status: str, arms: Sequence[ArmInfo]) -> None:
        with Session(self.engine) as session:
            row = session.get(SessionRow, session_id)
            if row is None:
                return
            row.status = status
            row.finished = datetime.now(UTC)
            for arm in arms:
                stored = session.get(ArmRow, (session_id, arm.name))
                if stored is not None:
                    stored.status, stored.passed, stored.cost_usd = arm.status, arm.passed, arm.cost_usd
            session.commit()

    def delete_session(self, session_id: str) -> None:
        with Session(self.engine) as session:
            session.exec(delete(EventRow).where(col(EventRow.session_id) == session_id))
            session.exec(delete(ArmRow).where(col(ArmRow.session_id) == session_id))
            session.exec(delete(SessionRow).where(col(SessionRow.id) == session_id))
            session.commit()

    # -- reading ---------------------------------------------------------------------------------

    def resolve_id(self, prefix: str) -> str:
        """The full id of the session whose id starts with ``prefix`` (it must be unambiguous)."""
        return self.resolve_prefix(SessionRow.id, prefix, noun="session", listing="workbench sessions")

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
            fold = func.wb_casefold if self.engine.dialect.name == "sqlite" else func.lower
            literal = search.casefold().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            pattern = f"%{literal}%"
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

    def _decoded(self, session_id: str, query: Any) -> list[ArmEvent]:
        with self.engine.connect() as connection:
            rows = connection.execute(query).all()
        events = []
        for arm, seq, t, kind, data in rows:
            try:
                events.append(ArmEvent(arm, seq, t, payload_from(kind, json.loads(data))))
            except (KeyError, ValueError, TypeError) as error:
                # A kind from a newer workbench, or a damaged row: the rest of the session stays readable.
                log.warning("skipped event %s #%s of session %s in %s: %r", arm, seq, session_id, self.name, error)
        return events

    def _still_running(self, row: SessionRow) -> bool:
        """A "running" row whose writer lives. A writer under another host name (a shared database, or this
        machine renamed, as a container is on every start) cannot be checked: it counts as running until
        its session has been silent for :data:`FOREIGN_SILENCE_S`."""
        alive = _writer_alive(row.pid, row.host, row.created)
        if alive is not None:
            return alive
        with Session(self.engine) as session:
            last_t = session.exec(select(func.max(EventRow.t)).where(col(EventRow.session_id) == row.id)).one()
        created = row.created if row.created.tzinfo else row.created.replace(tzinfo=UTC)
        silent_s = datetime.now(UTC).timestamp() - (created.timestamp() + (last_t or 0.0))
        return silent_s < FOREIGN_SILENCE_S

    def _infos(self, query: object) -> list[SessionInfo]:
        with Session(self.engine) as session:
            try:
                rows = session.exec(query).all()  # type: ignore[call-overload]
            except (ValueError, TypeError) as error:  # a row edited by hand or by another program
                raise StoreError(f"{self.name} holds a damaged session row ({error}); repair or move it") from None
            ids = [row.id for row in rows]
            arms: dict[str, list[ArmInfo]] = {}
            if ids:
                query = select(ArmRow).where(col(ArmRow.session_id).in_(ids)).order_by(*_ARM_ORDER)
                for arm in session.exec(query).all():
                    arms.setdefault(arm.session_id, []).append(
                        ArmInfo(arm.name, arm.mode, arm.model, arm.status, arm.passed, arm.cost_usd)
                    )
        infos = []
        for row in rows:
            status = row.status
            if status == "running" and not self._still_running(row):
                status = "interrupted"
            session_arms = arms.get(row.id, [])
            for arm in session_arms:
                if arm.status == "running" and status == "interrupted":
                    arm.status = "interrupted"
            created = row.created if row.created.tzinfo else row.created.replace(tzinfo=UTC)
            infos.append(
                SessionInfo(
                    row.id, created, row.app, row.items, row.seed, row.prompt, row.task, row.model, status, session_arms
                )
            )
        return infos


def _writer_alive(pid: int, host: str, created: datetime | None = None) -> bool | None:
    """Whether the process that is writing a "running" session still exists; ``None`` when it ran under
    another host name, where this process cannot look.

    On Linux a zombie does not count, and neither does a process that started after the session was
    created: the writer died and its pid was reused (common in containers, where pids restart low).
    """
    if host and host != socket.gethostname():
        return None
    if pid <= 0:
        return False
    if _PROC.is_dir():
        started = _process_started(pid)
        if started is None:
            return False
        if created is None:
            return True
        created_at = (created if created.tzinfo else created.replace(tzinfo=UTC)).timestamp()
        return started <= created_at + _START_SLACK_S
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


FOREIGN_SILENCE_S = 600.0
"""A session written under another host name that has stored no event for this long reads as interrupted.
A live run stores something far more often: every model request, and every provider retry while it waits."""

_PROC = Path("/proc/self")
_START_SLACK_S = 2.0
"""/proc gives start times in clock ticks after a boot time in whole seconds."""


def _process_started(pid: int) -> float | None:
    """When a live, non-zombie process started (epoch seconds, from Linux /proc), or ``None``."""
    try:
        after_name = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        boot = next(line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
    except (OSError, StopIteration):
        return None
    if after_name[0] in ("Z", "X"):
        return None
    return int(boot.split()[1]) + int(after_name[19]) / os.sysconf("SC_CLK_TCK")


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
    if path.stat().st_size == 0:
        return
    with path.open("rb") as handle:
        header = handle.read(len(SQLITE_HEADER))
    if header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a workbench database (not an SQLite file); it was left untouched")


def _engine(url: str) -> Engine:
    if not url.startswith("sqlite"):
        return create_engine(url)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 10})

    @event.listens_for(engine, "connect")
    def _pragmas(connection: sqlite3.Connection, _record: object) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()
        connection.create_function("wb_casefold", 1, _casefold, deterministic=True)

    return engine


def _casefold(value: object) -> object:
    """SQL ``wb_casefold(x)``: Unicode case folding for the session search ("ÉTÉ" finds "été")."""
    return value.casefold() if isinstance(value, str) else value


def _version(value: str | None, name: str) -> int:
    try:
        return int(value) if value is not None else 0
    except ValueError:
        raise StoreError(f"{name} has an unreadable schema version {value!r}") from None


def _reason(error: BaseException) -> str:
    cause = getattr(error, "orig", None) or error
    return str(cause).splitlines()[0]
