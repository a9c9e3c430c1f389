"""Which stored sessions belong to which sweep: two tables of the bench's own, in the session database.

The session store knows nothing of sweeps; a sweep only adds rows here that point at its sessions.
Both tables are created on first use (``checkfirst``), so databases written before the bench existed
keep working, and deleting a session removes its sweep rows with it (``ON DELETE CASCADE``).
A finished run is identified for ``--resume`` by (task, items, seed, model, repeat).
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func
from sqlmodel import Field, Session, SQLModel, col, select

from workbench.bench.plan import BenchCase
from workbench.bench.results import RunResult
from workbench.store import SessionInfo, Store, UnknownSession

SWEEP_PREFIX = "sweep-"
FINISHED_STATUSES = ("completed", "failed")
"""Comparison statuses of runs that ended on their own; cancelled or interrupted runs are run again."""


class BenchSweepRow(SQLModel, table=True):
    __tablename__ = "bench_sweeps"

    id: str = Field(primary_key=True)
    created: datetime = Field(index=True)
    model: str
    planned: int
    options: str = "{}"
    """The sweep's selection and settings as JSON (tier, app, repeat, concurrency, ...)."""
    status: str = "running"
    """running / completed / interrupted."""
    finished: datetime | None = None
    pid: int = 0


class BenchRunRow(SQLModel, table=True):
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
    finished: datetime


@dataclass(frozen=True)
class SweepInfo:
    id: str
    created: datetime
    model: str
    planned: int
    finished_runs: int
    status: str
    options: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "sweep_id": self.id,
            "created": self.created.isoformat(),
            "model": self.model,
            "planned": self.planned,
            "finished": self.finished_runs,
            "status": self.status,
            "options": self.options,
        }


@dataclass(frozen=True)
class SweepMember:
    case: BenchCase
    session_id: str
    model: str
    reused: bool


def new_sweep_id() -> str:
    return SWEEP_PREFIX + secrets.token_hex(4)


class SweepLog:
    """The bench's rows in a :class:`Store`'s database."""

    def __init__(self, store: Store) -> None:
        self.store = store
        for table in (BenchSweepRow, BenchRunRow):
            table.__table__.create(store.engine, checkfirst=True)  # type: ignore[attr-defined]

    # -- writing ---------------------------------------------------------------------------------

    def start(self, sweep_id: str, model: str, planned: int, options: dict[str, Any]) -> None:
        row = BenchSweepRow(
            id=sweep_id,
            created=datetime.now(UTC),
            model=model,
            planned=planned,
            options=json.dumps(options, sort_keys=True),
            pid=os.getpid(),
        )
        with Session(self.store.engine) as session:
            session.add(row)
            session.commit()

    def record(self, sweep_id: str, result: RunResult, position: int) -> None:
        case = result.case
        row = BenchRunRow(
            sweep_id=sweep_id,
            session_id=result.session_id,
            position=position,
            tier=case.tier,
            task=case.task,
            items=case.items,
            seed=case.seed,
            repeat=case.repeat,
            model=result.model,
            status=result.status if result.finished else "cancelled",
            reused=result.reused,
            finished=datetime.now(UTC),
        )
        with Session(self.store.engine) as session:
            session.add(row)
            session.commit()

    def finish(self, sweep_id: str, status: str) -> None:
        with Session(self.store.engine) as session:
            row = session.get(BenchSweepRow, sweep_id)
            if row is not None:
                row.status, row.finished = status, datetime.now(UTC)
                session.commit()

    # -- reading ---------------------------------------------------------------------------------

    def finished_sessions(self, cases: Iterable[BenchCase], model: str) -> dict[BenchCase, str]:
        """For each case already run to its end with this model (in any sweep), its latest session id."""
        wanted = {case.key(model): case for case in cases}
        if not wanted:
            return {}
        tasks = sorted({case.task for case in wanted.values()})
        query = (
            select(BenchRunRow)
            .where(col(BenchRunRow.model) == model)
            .where(col(BenchRunRow.task).in_(tasks))
            .where(col(BenchRunRow.status).in_(FINISHED_STATUSES))
            .order_by(col(BenchRunRow.finished), col(BenchRunRow.id))
        )
        found: dict[BenchCase, str] = {}
        with Session(self.store.engine) as session:
            for row in session.exec(query).all():
                case = wanted.get((row.task, row.items, row.seed, row.model, row.repeat))
                if case is not None:
                    found[case] = row.session_id
        return found

    def resolve_id(self, prefix: str) -> str:
        return self.store.resolve_prefix(BenchSweepRow.id, prefix, noun="sweep", listing="workbench bench --list")

    def sweep(self, sweep_id: str) -> SweepInfo:
        infos = self.sweeps(ids=[sweep_id])
        if not infos:
            raise UnknownSession(f"no sweep {sweep_id!r} in {self.store.name}")
        return infos[0]

    def sweeps(self, *, limit: int | None = None, ids: Sequence[str] | None = None) -> list[SweepInfo]:
        """Sweeps, newest first."""
        query = select(BenchSweepRow).order_by(col(BenchSweepRow.created).desc())
        if ids is not None:
            query = query.where(col(BenchSweepRow.id).in_(list(ids)))
        if limit is not None:
            query = query.limit(limit)
        with Session(self.store.engine) as session:
            rows = session.exec(query).all()
            counts = dict(
                session.exec(
                    select(BenchRunRow.sweep_id, func.count())
                    .where(col(BenchRunRow.sweep_id).in_([row.id for row in rows]))
                    .where(col(BenchRunRow.status).in_(FINISHED_STATUSES))
                    .group_by(col(BenchRunRow.sweep_id))
                ).all()
            )
        return [
            SweepInfo(
                row.id,
                row.created if row.created.tzinfo else row.created.replace(tzinfo=UTC),
                row.model,
                row.planned,
                counts.get(row.id, 0),
                _status(row),
                json.loads(row.options or "{}"),
            )
            for row in rows
        ]

    def members(self, sweep_id: str) -> list[SweepMember]:
        """The finished runs of a sweep, in plan order."""
        query = (
            select(BenchRunRow)
            .where(col(BenchRunRow.sweep_id) == sweep_id)
            .where(col(BenchRunRow.status).in_(FINISHED_STATUSES))
            .order_by(col(BenchRunRow.position), col(BenchRunRow.id))
        )
        with Session(self.store.engine) as session:
            rows = session.exec(query).all()
        return [
            SweepMember(BenchCase(r.tier, r.task, r.items, r.seed, r.repeat), r.session_id, r.model, r.reused)
            for r in rows
        ]

    def session_ids(self) -> set[str]:
        """Every session a sweep ran, to tell bench runs from a person's own comparisons."""
        with Session(self.store.engine) as session:
            return set(session.exec(select(BenchRunRow.session_id)).all())


def sessions_without_sweeps(
    store: Store, *, limit: int | None = None, search: str | None = None
) -> tuple[list[SessionInfo], int]:
    """Stored sessions newest first without the ones bench sweeps ran (one sweep stores dozens, which bury a
    person's own), and how many of those matched and were left out."""
    bench = SweepLog(store).session_ids()
    found = store.sessions(limit=None if limit is None else limit + len(bench), search=search)
    own = [info for info in found if info.id not in bench]
    return own[:limit], len(found) - len(own)


def _status(row: BenchSweepRow) -> str:
    """A sweep still marked running whose process is gone was interrupted (killed before it could say so)."""
    if row.status != "running":
        return row.status
    return "running" if _alive(row.pid) else "interrupted"


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
