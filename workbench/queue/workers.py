"""Workers that say they are alive: a heartbeat row per worker process, beside DBOS's tables.

Without DBOS Conductor, DBOS recovers only its own executor's workflows, and only when that executor starts
again; a worker's executor id is unique per process, so a killed worker never comes back for its work. Every
live worker therefore writes a heartbeat here, and looks for peers whose heartbeat went stale: it re-queues
their pending workflows through DBOS's recovery (which is idempotent: a workflow another worker already took
is left alone) and marks the peer dead.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import Column, DateTime, Engine, Integer, MetaData, String, Table, select, update
from sqlalchemy.exc import IntegrityError, ProgrammingError

from workbench.queue.system_db import dbos_schema

RUNNING, STOPPED, DEAD = "running", "stopped", "dead"


def new_executor_id() -> str:
    """Unique per worker process: host, pid and a random part (a pid is reused, a host may be cloned)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


@dataclass(frozen=True)
class WorkerInfo:
    executor_id: str
    host: str
    pid: int
    started: datetime
    heartbeat: datetime
    concurrency: int
    status: str

    def is_stale(self, now: datetime, stale_after_s: float) -> bool:
        return self.status == RUNNING and now - self.heartbeat > timedelta(seconds=stale_after_s)


def _table(engine: Engine) -> Table:
    metadata = MetaData(schema=dbos_schema(engine))
    return Table(
        "workbench_workers",
        metadata,
        Column("executor_id", String, primary_key=True),
        Column("host", String, nullable=False),
        Column("pid", Integer, nullable=False),
        Column("started", DateTime(timezone=True), nullable=False),
        Column("heartbeat", DateTime(timezone=True), nullable=False),
        Column("concurrency", Integer, nullable=False),
        Column("status", String, nullable=False),
    )


def _aware(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class WorkerTable:
    """The heartbeat rows in the system database (created on first use, after DBOS created its schema)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.table = _table(engine)

    def create(self) -> None:
        with contextlib.suppress(IntegrityError, ProgrammingError):  # two workers created it at the same moment
            self.table.metadata.create_all(self.engine)

    def exists(self) -> bool:
        from sqlalchemy import inspect

        return inspect(self.engine).has_table(self.table.name, schema=self.table.schema)

    def register(self, executor_id: str, concurrency: int) -> None:
        now = datetime.now(UTC)
        with self.engine.begin() as connection:
            connection.execute(
                self.table.insert().values(
                    executor_id=executor_id, host=socket.gethostname(), pid=os.getpid(), started=now,
                    heartbeat=now, concurrency=concurrency, status=RUNNING,
                )
            )  # fmt: skip

    def beat(self, executor_id: str) -> None:
        """Record that a worker is alive (and running again, should a peer have taken it for dead)."""
        self._set(executor_id, heartbeat=datetime.now(UTC), status=RUNNING)

    def mark(self, executor_id: str, status: str, *, only_if: str | None = None) -> bool:
        """Set a worker's status; with ``only_if``, only from that status (so one peer wins a recovery)."""
        return self._set(executor_id, status=status, only_if=only_if)

    def _set(self, executor_id: str, *, only_if: str | None = None, **values: object) -> bool:
        statement = update(self.table).where(self.table.c.executor_id == executor_id).values(**values)
        if only_if is not None:
            statement = statement.where(self.table.c.status == only_if)
        with self.engine.begin() as connection:
            return connection.execute(statement).rowcount > 0

    def workers(self) -> list[WorkerInfo]:
        with self.engine.connect() as connection:
            rows = connection.execute(select(self.table).order_by(self.table.c.started)).all()
        return [
            WorkerInfo(r.executor_id, r.host, r.pid, _aware(r.started), _aware(r.heartbeat), r.concurrency, r.status)
            for r in rows
        ]

    def stale(self, stale_after_s: float) -> list[WorkerInfo]:
        now = datetime.now(UTC)
        return [worker for worker in self.workers() if worker.is_stale(now, stale_after_s)]
