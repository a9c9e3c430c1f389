"""SQLModel tables of the session store, and converters to domain objects."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Field, SQLModel

SCHEMA_VERSION = 1


class MetaRow(SQLModel, table=True):
    __tablename__ = "workbench_meta"

    key: str = Field(primary_key=True)
    value: str


class SessionRow(SQLModel, table=True):
    __tablename__ = "sessions"

    id: str = Field(primary_key=True)
    created: datetime = Field(index=True)
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
    finished: datetime | None = None


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

    id: int | None = Field(default=None, primary_key=True)
    session_id: str = Field(index=True, foreign_key="sessions.id", ondelete="CASCADE")
    arm: str
    seq: int
    t: float
    kind: str
    data: str
    """The payload's fields as JSON."""
