"""Which stored sessions belong to which sweep: the bench's two tables in the session database.

The tables are part of the store's versioned schema (:mod:`workbench.store.schema`); a sweep only adds
rows there that point at its sessions, and deleting a session removes its sweep rows with it.
A finished run is identified for ``--resume`` by (task, items, seed, model, repeat).

A sweep row that cannot be written (the database failed mid-sweep) does not stop the sweep: the report
is still printed from the runs in memory, that row and every later one of the sweep go to its fallback
file (:class:`~workbench.store.fallback.SweepFallbackFile`, which ``workbench import`` brings back), and
:attr:`SweepLog.error` says what was not recorded and where it went.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func
from sqlmodel import Session, col, select

from workbench.bench.plan import BenchCase
from workbench.bench.results import RunResult
from workbench.store import SessionInfo, Store, StoreError, UnknownSession
from workbench.store.fallback import SweepFallbackFile
from workbench.store.liveness import process_alive, this_host
from workbench.store.schema import SweepRow, SweepRunRow

log = logging.getLogger(__name__)

SWEEP_PREFIX = "sweep-"
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
        self.error: StoreError | None = None
        """The first fault that kept a sweep row from the database (the sweep itself goes on)."""
        self._fallbacks: dict[str, SweepFallbackFile] = {}

    def _add(self, fields: dict[str, Any], table: type[SweepRow | SweepRunRow], doing: str) -> None:
        def add() -> None:
            with Session(self.store.engine) as session:
                session.add(table(**fields))
                session.commit()

        sweep_id = str(fields["id"] if table is SweepRow else fields["sweep_id"])
        if not self._try(sweep_id, add, doing):
            own = table is SweepRow
            self._keep(sweep_id, sweep=fields if own else None, run=None if own else fields)

    def _try(self, sweep_id: str, action: Any, doing: str) -> bool:
        """Whether the database took the row (never once this sweep's rows go to its fallback file)."""
        if sweep_id in self._fallbacks:
            return False
        try:
            self.store.write(action, doing)
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
                file = self._fallbacks[sweep_id] = SweepFallbackFile(self.store.unsaved_dir, sweep_id)
                file.start(self.store.key, os.getpid(), this_host(), sweep)
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

    # -- writing ---------------------------------------------------------------------------------

    def start(
        self, sweep_id: str, model: str, planned: int, options: dict[str, Any], *, status: str = "running"
    ) -> None:
        fields = dict(
            id=sweep_id,
            status=status,
            created=datetime.now(UTC),
            model=model,
            planned=planned,
            options=json.dumps(options, sort_keys=True),
            pid=os.getpid(),
            host=this_host(),
        )
        self._add(fields, SweepRow, f"starting sweep {sweep_id}")

    def record(self, sweep_id: str, result: RunResult, position: int) -> None:
        case = result.case
        fields = dict(
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
        self._add(fields, SweepRunRow, f"recording a run of sweep {sweep_id}")

    def record_once(self, sweep_id: str, result: RunResult, position: int) -> bool:
        """Record a queued comparison unless its position already has a finished run (a recovered comparison
        whose first attempt got recorded); returns whether this run became the sweep's member."""
        if self.member_at(sweep_id, position) is not None:
            return False
        self.record(sweep_id, result, position)
        return self.error is None

    def member_at(self, sweep_id: str, position: int) -> SweepMember | None:
        """The finished run recorded at a position of a sweep, if any."""
        found = self._members(sweep_id, position)
        return found[0] if found else None

    def complete_if_done(self, sweep_id: str) -> bool:
        """Mark a queued sweep completed once every planned comparison has a finished run."""
        info = self.sweep(sweep_id)
        if info.status != QUEUED or info.finished_runs < info.planned:
            return False
        self.finish(sweep_id, "completed")
        return True

    def finish(self, sweep_id: str, status: str) -> None:
        def update() -> None:
            with Session(self.store.engine) as session:
                row = session.get(SweepRow, sweep_id)
                if row is not None:
                    row.status, row.finished = status, datetime.now(UTC)
                    session.commit()

        if not self._try(sweep_id, update, f"finishing sweep {sweep_id}"):
            self._keep(sweep_id, finish=status)

    # -- reading ---------------------------------------------------------------------------------

    def finished_sessions(self, cases: Iterable[BenchCase], model: str) -> dict[BenchCase, str]:
        """For each case already run to its end with this model (in any sweep), its latest session id."""
        wanted = {case.key(model): case for case in cases}
        if not wanted:
            return {}
        tasks = sorted({case.task for case in wanted.values()})
        query = (
            select(SweepRunRow)
            .where(col(SweepRunRow.model) == model)
            .where(col(SweepRunRow.task).in_(tasks))
            .where(col(SweepRunRow.status).in_(FINISHED_STATUSES))
            .order_by(col(SweepRunRow.finished), col(SweepRunRow.id))
        )
        found: dict[BenchCase, str] = {}
        for row in self._all(query, "reading the runs already finished"):
            case = wanted.get((row.task, row.items, row.seed, row.model, row.repeat))
            if case is not None:
                found[case] = row.session_id
        return found

    def resolve_id(self, prefix: str) -> str:
        return self.store.db.resolve_prefix(SweepRow.id, prefix, noun="sweep", listing="workbench bench --list")

    def sweep(self, sweep_id: str) -> SweepInfo:
        infos = self.sweeps(ids=[sweep_id])
        if not infos:
            raise UnknownSession(f"no sweep {sweep_id!r} in {self.store.name}")
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
                row.id,
                row.created,
                row.model,
                row.planned,
                counts.get(row.id, 0),
                _status(row),
                json.loads(row.options or "{}"),
            )
            for row in rows
        ]

    def members(self, sweep_id: str) -> list[SweepMember]:
        """The finished runs of a sweep, in plan order: one per position (the first recorded, should a
        recovered comparison of a queued sweep ever have been recorded twice)."""
        return self._members(sweep_id)

    def _members(self, sweep_id: str, position: int | None = None) -> list[SweepMember]:
        query = (
            select(SweepRunRow)
            .where(col(SweepRunRow.sweep_id) == sweep_id)
            .where(col(SweepRunRow.status).in_(FINISHED_STATUSES))
            .order_by(col(SweepRunRow.position), col(SweepRunRow.id))
        )
        if position is not None:
            query = query.where(col(SweepRunRow.position) == position)
        rows = self._all(query, f"reading sweep {sweep_id}")
        first = {}
        for row in rows:
            first.setdefault(row.position, row)
        return [
            SweepMember(BenchCase(r.tier, r.task, r.items, r.seed, r.repeat), r.session_id, r.model, r.reused)
            for r in first.values()
        ]

    def session_ids(self) -> set[str]:
        """Every session a sweep ran, to tell bench runs from a person's own comparisons."""
        return set(self._all(select(SweepRunRow.session_id), "reading which sessions sweeps ran"))

    def _all(self, query: Any, doing: str) -> list[Any]:
        """Every row of a query, under the store's read deadline (a frozen server cannot hang a listing)."""

        def rows() -> list[Any]:
            with Session(self.store.engine) as session:
                return list(session.exec(query).all())

        return self.store.read(rows, doing)


def sessions_without_sweeps(
    store: Store, *, limit: int | None = None, search: str | None = None
) -> tuple[list[SessionInfo], int]:
    """Stored sessions newest first without the ones bench sweeps ran (one sweep stores dozens, which bury a
    person's own), and how many of those matched and were left out."""
    bench = SweepLog(store).session_ids()
    found = store.sessions(limit=None if limit is None else limit + len(bench), search=search)
    own = [info for info in found if info.id not in bench]
    return own[:limit], len(found) - len(own)


def _status(row: SweepRow) -> str:
    """A sweep still marked running whose process is gone was interrupted (killed before it could say so)."""
    if row.status != "running":
        return row.status
    return "interrupted" if process_alive(row.pid, row.host, row.created) is False else "running"
