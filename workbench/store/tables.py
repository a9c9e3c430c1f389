"""SQLModel tables of the session store: sessions, their arms and events, and the bench's sweeps.

Only :mod:`workbench.store` builds these rows; everything else hands the store workbench objects. The schema's
version is :data:`workbench.store.listing.SCHEMA_VERSION`, which reads without SQLAlchemy.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import DateTime, Index
from sqlalchemy.types import TypeDecorator
from sqlmodel import Column, Field, SQLModel


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
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


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
