"""Bringing a sweep's fallback file (:class:`~workbench.store.fallback.UnsavedSweep`) back into the store,
adding only what is missing.

The sweep's own row is created if the database never took it. Each run the file recorded becomes a member
once its session is in the database (the sessions' own files are imported first); one already recorded
is left alone, so importing twice adds nothing. A sweep the database holds as ended takes nothing new,
and a sweep still marked running only from a file whose writer is gone (or is the sweep's own process,
which recorded the sweep's end in the file). A file that disagrees with the stored sweep (its row, a
recorded run, its end, or runs added to an ended sweep) is an :class:`ImportConflict`: nothing of it is
applied and it stays. The sweep's end is recorded once every run of the file is in (a queued sweep's,
``bench --queue``, which takes runs from every worker, once every planned position has a finished run).
The file is removed once every run is in; a run whose session is not in this database keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import func
from sqlmodel import Session, col, select

from workbench.store.fallback import UnsavedSweep
from workbench.store.faults import WAITABLE, Fault
from workbench.store.imported import (
    ImportedSweep,
    Waiting,
    conflict,
    differences,
    lock_for_import,
    remove,
    writers_own_end,
)
from workbench.store.liveness import process_alive
from workbench.store.schema import SessionRow, SweepRow, SweepRunRow

if TYPE_CHECKING:
    from workbench.store.store import Store

_SWEEP_KEYS = ("created", "model", "planned", "options", "pid", "host")
"""What a file's sweep row must agree on with a stored sweep."""
_RUN_KEYS = ("tier", "task", "items", "seed", "repeat", "model", "status", "reused", "finished")
"""What a file's run must agree on with the run recorded at the same position for the same session."""
_OPEN = ("running", "queued")
_FINISHED_RUNS = ("completed", "failed")


def import_sweep(
    store: Store, unsaved: UnsavedSweep, *, waitable: frozenset[Fault] = WAITABLE
) -> ImportedSweep | Waiting:
    doing = f"storing the rows of sweep {unsaved.sweep_id}"
    done = store.write(lambda: _import(store, unsaved), doing, waitable=waitable)
    if isinstance(done, ImportedSweep) and not done.waiting_runs:
        remove(unsaved.path)
    return done


def _import(store: Store, unsaved: UnsavedSweep) -> ImportedSweep | Waiting:
    with Session(store.engine) as db:
        lock_for_import(db, unsaved.sweep_id)
        row = db.get(SweepRow, unsaved.sweep_id)
        created = row is None and unsaved.sweep is not None
        if row is None and unsaved.sweep is not None:
            row = SweepRow(**unsaved.sweep)
            db.add(row)
            db.flush()
        recorded = {
            (run.position, run.session_id): run
            for run in db.exec(select(SweepRunRow).where(col(SweepRunRow.sweep_id) == unsaved.sweep_id))
        }
        found = differences(unsaved.sweep, row, _SWEEP_KEYS) if unsaved.sweep and not created else []
        new = []
        for run in unsaved.runs:
            earlier = recorded.get((run["position"], run["session_id"]))
            if earlier is None:
                new.append(run)
            else:
                found += differences(run, earlier, _RUN_KEYS, f"run {run['position']} ")
        status = row.status if row is not None else None
        if status is not None and status not in _OPEN:
            if new:
                found.append(f"it adds {len(new)} runs to a sweep that has ended ({status})")
            if unsaved.finish is not None:
                found += differences(unsaved.finish, row, ("status", "finished"))
        if found:
            raise conflict(unsaved.path, f"sweep {unsaved.sweep_id} in {store.name}", found)
        if row is not None and status == "running" and (new or unsaved.finish) and not created:
            own_end = writers_own_end(unsaved.pid, unsaved.host, unsaved.ended, row.pid, row.host)
            if not own_end and process_alive(row.pid, row.host, row.created) is not False:
                where = f"pid {row.pid}" + (f" on {row.host}" if row.host else "")
                return Waiting(unsaved.path, f"{unsaved.path}: sweep {unsaved.sweep_id} is still running ({where})")
        wanted = [run["session_id"] for run in new]
        stored = set(db.exec(select(SessionRow.id).where(col(SessionRow.id).in_(wanted)))) if wanted else set()
        added = waiting = 0
        for run in new:
            if row is None or run["session_id"] not in stored:
                waiting += 1
            else:
                db.add(SweepRunRow(**run))
                added += 1
        # The end once every run is in: a run still waiting for its session must not meet an ended sweep.
        ends = row is not None and unsaved.finish is not None and status in (*_OPEN, None) and not waiting
        if ends and (status != "queued" or _every_position_finished(db, row)):
            row.status, row.finished = unsaved.finish["status"], unsaved.finish["finished"]
        db.commit()
    skipped = len(unsaved.runs) - len(new)
    return ImportedSweep(unsaved.path, unsaved.sweep_id, added, skipped, waiting, created)


def _every_position_finished(db: Session, row: SweepRow) -> bool:
    """Whether a queued sweep has a finished run at every planned position (what completes it)."""
    db.flush()
    positions = db.exec(
        select(func.count(func.distinct(SweepRunRow.position)))
        .where(col(SweepRunRow.sweep_id) == row.id)
        .where(col(SweepRunRow.status).in_(_FINISHED_RUNS))
    ).one()
    return positions >= row.planned
