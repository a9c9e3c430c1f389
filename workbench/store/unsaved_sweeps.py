"""Bringing a sweep's fallback file (:class:`~workbench.store.fallback.UnsavedSweep`) back into the store.

The sweep's own row is created if the database never took it; each run it recorded becomes a member once
its session is in the database (the sessions' own files are imported first), and one already there is
left alone, so importing twice adds nothing. The sweep's end is recorded unless the database already
has one. The file is removed once every run is in; a run whose session is not in this database keeps it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, col, select

from workbench.store.fallback import UnsavedSweep
from workbench.store.listing import moment
from workbench.store.tables import SessionRow, SweepRow, SweepRunRow

if TYPE_CHECKING:
    from workbench.store.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImportedSweep:
    """What ``workbench import`` did with one sweep's fallback file."""

    path: Path
    sweep_id: str
    added_runs: int
    skipped_runs: int
    """Runs already recorded in the database."""
    waiting_runs: int
    """Runs whose session is not in the database (the file is kept for them)."""
    created_sweep: bool


def import_sweep(store: Store, unsaved: UnsavedSweep) -> ImportedSweep:
    def insert() -> ImportedSweep:
        with Session(store.engine) as db:
            row = db.get(SweepRow, unsaved.sweep_id)
            created = row is None and unsaved.sweep is not None
            if row is None and unsaved.sweep is not None:
                row = SweepRow(**_with_moments(unsaved.sweep, "created", "finished"))
                db.add(row)
                db.flush()
            recorded = {
                (run.position, run.session_id)
                for run in db.exec(select(SweepRunRow).where(col(SweepRunRow.sweep_id) == unsaved.sweep_id))
            }
            wanted = [str(run["session_id"]) for run in unsaved.runs]
            stored = set(db.exec(select(SessionRow.id).where(col(SessionRow.id).in_(wanted))))
            added = skipped = waiting = 0
            for run in unsaved.runs:
                key = (int(run["position"]), str(run["session_id"]))
                if key in recorded:
                    skipped += 1
                elif row is None or key[1] not in stored:
                    waiting += 1
                else:
                    db.add(SweepRunRow(**_with_moments(run, "finished")))
                    recorded.add(key)
                    added += 1
            if row is not None and unsaved.finish is not None and row.status == "running":
                row.status, row.finished = str(unsaved.finish["status"]), moment(unsaved.finish["finished"])
            db.commit()
        return ImportedSweep(unsaved.path, unsaved.sweep_id, added, skipped, waiting, created)

    done = store.write(insert, f"storing the rows of sweep {unsaved.sweep_id}")
    if not done.waiting_runs:
        try:
            unsaved.path.unlink()
        except OSError as error:
            log.warning("imported %s but could not remove it: %s", unsaved.path, error)
    return done


def _with_moments(fields: dict[str, Any], *names: str) -> dict[str, Any]:
    """A row's fields with its times (ISO strings in the file) as datetimes."""
    return {key: moment(value) if key in names and value else value for key, value in fields.items()}
