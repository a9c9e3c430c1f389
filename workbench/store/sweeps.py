"""The bench's sweeps in the database: which stored sessions each sweep ran, at which place in its plan.

A sweep only adds rows (``bench_sweeps``, ``bench_runs``: :mod:`workbench.store.schema`) that point at its
sessions; deleting a session removes its sweep rows with it. The bench speaks its own objects
(:class:`workbench.bench.manifest.SweepStore` turns a ``RunResult`` into a :class:`SweepRun` and back);
this module knows only the rows.

A sweep row that cannot be written (the database failed mid-sweep) does not stop the sweep: that row and
every later one of the sweep go to its fallback file (:class:`~workbench.store.fallback.SweepFallbackFile`,
which ``workbench import`` brings back), and :attr:`Sweeps.error` says what was not recorded and where it went.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from workbench.store.database import Database
from workbench.store.fallback import SweepFallbackFile
from workbench.store.faults import StoreError, UnknownSession
from workbench.store.liveness import process_alive, this_host
from workbench.store.schema import SweepRow, SweepRunRow

log = logging.getLogger(__name__)

FINISHED_STATUSES = ("completed", "failed")
"""Comparison statuses of runs that ended on their own; cancelled or interrupted runs are run again."""
QUEUED = "queued"
"""A sweep whose comparisons wait on the queue for ``workbench worker`` processes (``bench --queue``); the
worker that records its last comparison marks it completed."""


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
class SweepRun:
    """One comparison of a sweep as stored: its place in the plan, its case, its session and how it ended."""

    position: int
    session_id: str
    tier: str
    task: str
    items: int
    seed: int
    repeat: int
    model: str
    status: str
    """The comparison's status: completed, failed, cancelled or interrupted."""
    reused: bool = False
    """A session an earlier sweep ran (``--resume``), counted again rather than run again."""


class Sweeps:
    """The sweep rows of one database, and the faults met writing them (one object per sweep being run)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.error: StoreError | None = None
        """The first fault that kept a sweep row from the database (the sweep itself goes on)."""
        self._fallbacks: dict[str, SweepFallbackFile] = {}

    # -- writing ---------------------------------------------------------------------------------

    def start(
        self, sweep_id: str, model: str, planned: int, options: dict[str, Any], *, status: str = "running"
    ) -> None:
        fields = dict(
            id=sweep_id, status=status, created=datetime.now(UTC), model=model, planned=planned,
            options=json.dumps(options, sort_keys=True), pid=os.getpid(), host=this_host(),
        )  # fmt: skip
        if not self._try(sweep_id, self._adding(SweepRow, fields), f"starting sweep {sweep_id}"):
            self._keep(sweep_id, sweep=fields)

    def record(self, sweep_id: str, run: SweepRun) -> None:
        """Add a run to a sweep (its fallback file takes it when the database does not)."""
        fields = dict(sweep_id=sweep_id, finished=datetime.now(UTC), **asdict(run))
        if not self._try(sweep_id, self._adding(SweepRunRow, fields), f"recording a run of sweep {sweep_id}"):
            self._keep(sweep_id, run=fields)

    def finish(self, sweep_id: str, status: str) -> None:
        def update() -> None:
            with Session(self.db.engine) as session:
                row = session.get(SweepRow, sweep_id)
                if row is not None:
                    row.status, row.finished = status, datetime.now(UTC)
                    session.commit()

        if not self._try(sweep_id, update, f"finishing sweep {sweep_id}"):
            self._keep(sweep_id, finish=status)

    def _adding(self, table: type[SweepRow | SweepRunRow], fields: dict[str, Any]) -> Callable[[], None]:
        def add() -> None:
            with Session(self.db.engine) as session:
                session.add(table(**fields))  # a fresh row per attempt
                session.commit()

        return add

    def _try(self, sweep_id: str, action: Callable[[], None], doing: str) -> bool:
        """Whether the database took the row (never once this sweep's rows go to its fallback file)."""
        if sweep_id in self._fallbacks:
            return False
        try:
            self.db.write(action, doing)
            return True
        except StoreError as error:
            self.error = self.error or error
            log.error("%s", error)
            return False

    def _keep(
        self,
        sweep_id: str,
        *,
        sweep: dict[str, Any] | None = None,
        run: dict[str, Any] | None = None,
        finish: str | None = None,
    ) -> None:
        """Append a row the database did not take to the sweep's fallback file (started on the first one)."""
        file = self._fallbacks.get(sweep_id)
        try:
            if file is None:
                file = self._fallbacks[sweep_id] = SweepFallbackFile(self.db.unsaved_dir, sweep_id)
                file.start(self.db.key, os.getpid(), this_host(), sweep)
                self._say_where(f"the sweep's rows were saved to {file.path} (`workbench import` stores them)")
            if not file.started:
                return  # its first record could not be written: the rest would not import either
            if run is not None:
                file.run(run)
            if finish is not None:
                file.finish(finish, datetime.now(UTC))
        except OSError as error:
            log.error("could not write %s: %s", file.path, error)
            why = error.strerror or error
            self._say_where(f"some of the sweep's rows could not be saved to {file.path} either ({why})")

    def _say_where(self, where: str) -> None:
        if self.error is not None and where not in str(self.error):
            self.error = StoreError(f"{self.error}; {where}", self.error.kind)

    # -- reading ---------------------------------------------------------------------------------

    def resolve_id(self, prefix: str) -> str:
        return self.db.resolve_prefix(SweepRow.id, prefix, noun="sweep", listing="workbench bench --list")

    def sweep(self, sweep_id: str) -> SweepInfo:
        infos = self.sweeps(ids=[sweep_id])
        if not infos:
            raise UnknownSession(f"no sweep {sweep_id!r} in {self.db.name}")
        return infos[0]

    def sweeps(self, *, limit: int | None = None, ids: Sequence[str] | None = None) -> list[SweepInfo]:
        """Sweeps, newest first."""
        query = select(SweepRow).order_by(col(SweepRow.created).desc())
        if ids is not None:
            query = query.where(col(SweepRow.id).in_(list(ids)))
        if limit is not None:
            query = query.limit(limit)
        rows = self._all(query, "reading sweeps")
        counts = dict(
            self._all(
                select(SweepRunRow.sweep_id, func.count(func.distinct(SweepRunRow.position)))
                .where(col(SweepRunRow.sweep_id).in_([row.id for row in rows]))
                .where(col(SweepRunRow.status).in_(FINISHED_STATUSES))
                .group_by(col(SweepRunRow.sweep_id)),
                "reading sweeps",
            )
        )
        return [
            SweepInfo(
                row.id, row.created, row.model, row.planned, counts.get(row.id, 0), _status(row),
                json.loads(row.options or "{}"),
            )
            for row in rows
        ]  # fmt: skip

    def runs(self, sweep_id: str, position: int | None = None) -> list[SweepRun]:
        """The finished runs of a sweep (at one ``position``), in plan order: one per position (the first
        recorded, should a recovered comparison of a queued sweep ever have been recorded twice)."""
        query = (
            select(SweepRunRow)
            .where(col(SweepRunRow.sweep_id) == sweep_id)
            .where(col(SweepRunRow.status).in_(FINISHED_STATUSES))
            .order_by(col(SweepRunRow.position), col(SweepRunRow.id))
        )
        if position is not None:
            query = query.where(col(SweepRunRow.position) == position)
        first: dict[int, SweepRunRow] = {}
        for row in self._all(query, f"reading sweep {sweep_id}"):
            first.setdefault(row.position, row)
        return [_run(row) for row in first.values()]

    def finished_runs(self, model: str, tasks: Sequence[str]) -> list[SweepRun]:
        """Every run of any sweep that ended on its own with this model on one of ``tasks``, oldest first
        (what ``--resume`` matches its cases against)."""
        query = (
            select(SweepRunRow)
            .where(col(SweepRunRow.model) == model)
            .where(col(SweepRunRow.task).in_(list(tasks)))
            .where(col(SweepRunRow.status).in_(FINISHED_STATUSES))
            .order_by(col(SweepRunRow.finished), col(SweepRunRow.id))
        )
        return [_run(row) for row in self._all(query, "reading the runs already finished")]

    def session_ids(self) -> set[str]:
        """Every session a sweep ran, to tell bench runs from a person's own comparisons."""
        return set(self._all(select(SweepRunRow.session_id), "reading which sessions sweeps ran"))

    def _all(self, query: Any, doing: str) -> list[Any]:
        """Every row of a query, under the read deadline (a frozen server cannot hang a listing)."""

        def rows() -> list[Any]:
            with Session(self.db.engine) as session:
                return list(session.exec(query).all())

        return self.db.read(rows, doing)


def _run(row: SweepRunRow) -> SweepRun:
    return SweepRun(
        row.position, row.session_id, row.tier, row.task, row.items, row.seed, row.repeat, row.model, row.status,
        row.reused,
    )  # fmt: skip


def _status(row: SweepRow) -> str:
    """A sweep still marked running whose process is gone was interrupted (killed before it could say so)."""
    if row.status != "running":
        return row.status
    return "interrupted" if process_alive(row.pid, row.host, row.created) is False else "running"
