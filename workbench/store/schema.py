"""The store's schema: its SQLModel tables (sessions, their arms and events, the bench's sweeps, the queue's
workers) and the statements that create a store or bring an older one up to :data:`SCHEMA_VERSION`.

Only :mod:`workbench.store` builds these rows; everything else hands the store workbench objects. The
version and the table names are in :mod:`workbench.store.version`, which reads without SQLAlchemy.
Creating and migrating run in the caller's transaction, the same statements on every backend
(:class:`workbench.store.database.Database` decides when, under which lock).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, DateTime, Engine, Index, inspect, text
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.types import TypeDecorator
from sqlmodel import Column, Field, Session, SQLModel

from workbench.store.faults import StoreError, fault_kind
from workbench.store.version import SCHEMA_VERSION, TABLES, stored_utc

__all__ = ["SCHEMA_VERSION", "TABLES"]


class UTCDateTime(TypeDecorator[datetime]):
    """A moment in time: stored as naive UTC (the format schema 1 used), always read back aware in UTC."""

    impl = DateTime
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return stored_utc(value)


def _moment(*, index: bool = False, nullable: bool = False) -> Any:
    return Field(sa_column=Column(UTCDateTime(), index=index, nullable=nullable))


class MetaRow(SQLModel, table=True):
    __tablename__ = "workbench_meta"

    key: str = Field(primary_key=True)
    value: str


class SessionRow(SQLModel, table=True):
    __tablename__ = "sessions"

    id: str = Field(primary_key=True)
    created: datetime = _moment(index=True)
    app: str
    items: int
    seed: int
    prompt: str
    task: str | None = None
    model: str
    status: str = "running"
    """running / completed / failed / cancelled; "running" with a dead writer reads as interrupted."""
    pid: int = 0
    host: str = ""
    finished: datetime | None = _moment(nullable=True)
    heartbeat: datetime | None = _moment(nullable=True)
    """When the writer last said it was alive, by the database's clock (every few seconds while it runs);
    ``None`` for a session stored whole, or by a workbench from before schema 3."""


class ArmRow(SQLModel, table=True):
    __tablename__ = "arms"

    session_id: str = Field(primary_key=True, foreign_key="sessions.id", ondelete="CASCADE")
    name: str = Field(primary_key=True)
    mode: str
    model: str
    status: str = "running"
    passed: bool | None = None
    cost_usd: float | None = None
    position: int = 0
    """The arm's place in its comparison (0: the baseline). Sessions stored before arms had positions hold 0
    for both of their arms, tool and code, which sort by name descending."""


class EventRow(SQLModel, table=True):
    __tablename__ = "events"
    __table_args__ = (Index("ix_events_session_arm_seq", "session_id", "arm", "seq", unique=True),)

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(index=True, foreign_key="sessions.id", ondelete="CASCADE")
    arm: str
    seq: int
    t: float
    kind: str
    data: str
    """The payload's fields as JSON."""


class SweepRow(SQLModel, table=True):
    __tablename__ = "bench_sweeps"

    id: str = Field(primary_key=True)
    created: datetime = _moment(index=True)
    model: str
    planned: int
    options: str = "{}"
    """The sweep's selection and settings as JSON (tier, app, repeat, concurrency, ...)."""
    status: str = "running"
    """running / completed / interrupted."""
    finished: datetime | None = _moment(nullable=True)
    pid: int = 0
    host: str = ""


class SweepRunRow(SQLModel, table=True):
    __tablename__ = "bench_runs"

    id: int | None = Field(default=None, primary_key=True)
    sweep_id: str = Field(index=True, foreign_key="bench_sweeps.id", ondelete="CASCADE")
    session_id: str = Field(index=True, foreign_key="sessions.id", ondelete="CASCADE")
    position: int = 0
    """The case's place in the sweep's plan, so reports list runs in plan order."""
    tier: str
    task: str = Field(index=True)
    items: int
    seed: int
    repeat: int
    model: str
    status: str
    """The comparison's status: completed, failed, cancelled or interrupted."""
    reused: bool = False
    finished: datetime = _moment()


class WorkerRow(SQLModel, table=True):
    """A ``workbench worker`` process and its lease on the comparisons it runs (schema 4).

    The worker renews its lease every heartbeat (``renewals`` counts up); a peer takes it for dead only
    once it has watched ``renewals`` stand still for ``lease_s`` of its own time while it could read the
    table, and takes the lease over by moving ``token`` on, which fences the old holder out."""

    __tablename__ = "queue_workers"

    executor_id: str = Field(primary_key=True)
    """The worker's DBOS executor id (host, pid, random part)."""
    queue: str = Field(index=True)
    """The queue's system database (its URL without a password): the workers that recover each other."""
    host: str
    pid: int
    started: datetime = _moment()
    renewed: datetime = _moment()
    """The last renewal, by the database's clock (what ``bench --list`` shows as silent)."""
    renewals: int = 0
    lease_s: float
    """How long the worker may go without renewing before a peer takes its lease over."""
    token: int = 1
    """The lease's fence: a take-over moves it on, and the old holder's renewals and records then fail."""
    concurrency: int
    status: str = "running"
    """running / stopped / dead (its lease was taken over)."""


OURS = frozenset({MetaRow.__tablename__, SessionRow.__tablename__, ArmRow.__tablename__, EventRow.__tablename__})
"""The tables every workbench store has had since schema 1 (one that lacks any is migrated)."""


def check(tables: set[str], version: int, name: str) -> None:
    """Refuse a database that is not a workbench store, or one from a newer workbench."""
    if MetaRow.__tablename__ not in tables:
        raise StoreError(
            f"{name} is a database, but not a workbench session store (tables: {', '.join(sorted(tables))}); "
            "choose another file with --db or WORKBENCH_DB",
            "foreign",
        )
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{name} was written by a newer workbench (schema {version}, this one reads {SCHEMA_VERSION}); "
            "upgrade the workbench to open it",
            "foreign",
        )


def needs_migration(tables: set[str], version: int) -> bool:
    return version < SCHEMA_VERSION or not tables >= OURS


def parse_version(value: str | None, name: str) -> int:
    """The stored schema version (0: none recorded)."""
    try:
        return int(value) if value is not None else 0
    except ValueError:
        raise StoreError(f"{name} has an unreadable schema version {value!r}") from None


def migrate_in(connection: Connection) -> None:
    """Bring an older store up to date, in the caller's transaction (the same statements on every backend).

    1 -> 2: the bench's tables join the schema (created if the bench never ran; ``host`` added to a
    sweep), an arm has its ``position`` in its comparison (0 for every arm stored before: tool and code
    then sort by name), and an event is unique per (session, arm, seq), so importing unsaved events is
    idempotent. 2 -> 3: a session has a ``heartbeat`` (none for the sessions stored before). 3 -> 4: the
    queue's ``queue_workers`` table (created empty: a worker registers again when it starts).
    """
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
    _record_version(connection)


def create_in(connection: Connection) -> None:
    """A new store's tables and version, in the caller's transaction."""
    SQLModel.metadata.create_all(connection)
    _record_version(connection)


def _record_version(connection: Connection) -> None:
    meta = MetaRow.__table__  # type: ignore[attr-defined]
    connection.execute(meta.delete().where(meta.c.key == "schema_version"))
    connection.execute(meta.insert(), {"key": "schema_version", "value": str(SCHEMA_VERSION)})


def create_file_schema(engine: Engine) -> None:
    """Create what is missing in a SQLite file and record the schema version.

    Safe when several processes open the same new file at once (a shell starting runs in parallel): the
    loser of a race sees "table already exists" or a duplicate version row, and simply tries again.
    """
    for attempt in range(5):
        try:
            SQLModel.metadata.create_all(engine)
            with Session(engine) as session:
                session.merge(MetaRow(key="schema_version", value=str(SCHEMA_VERSION)))
                session.commit()
            return
        except (OperationalError, IntegrityError) as error:
            if attempt == 4 or fault_kind(error) not in ("busy", "unusable"):
                raise
            time.sleep(0.05 * (attempt + 1))
