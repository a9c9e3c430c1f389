"""Bringing fallback files back into the store, adding only what is missing.

A fallback file (:mod:`workbench.store.fallback`) is read as hostile input (:mod:`workbench.store.fallback_read`)
and then may only add:

- a session the database does not hold at all: stored whole (a run whose database refused it from the start);
- events of a stored session not stored yet, by (arm, seq); a stored event is never replaced;
- the end of a stored session still marked running whose writer is gone (:meth:`Sessions.writer_alive`), or
  whose writer is this user's own process and recorded that end in this very file.

A file that disagrees with the database (a session row, an arm, an event at the same seq, or an end that
differs from the stored one; events for a session that has ended) is refused whole and left in place
(:class:`ImportConflict`): a stored result is never rewritten, by ``workbench import`` or by the import
each writable open does. A file that holds nothing the database lacks is a copy: it is removed.
Everything for one file happens in one transaction, under a lock per session, so two processes opening
the database at once import a file once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlmodel import Session, col, select

from workbench.store.fallback import EventTuple, Unsaved, UnsavedSweep, pending_files
from workbench.store.fallback_read import ARM_END_FIELDS, BadFallbackFile, read_unsaved
from workbench.store.faults import WAITABLE, Fault, StoreError
from workbench.store.imported import (
    ImportConflict,
    Imported,
    ImportedSweep,
    Waiting,
    conflict,
    differences,
    lock_for_import,
    remove,
    writers_own_end,
)
from workbench.store.liveness import process_alive
from workbench.store.schema import ArmRow, EventRow, SessionRow
from workbench.store.unsaved_sweeps import import_sweep

if TYPE_CHECKING:
    from workbench.store.store import Store

EXIT_BAD_FILE = 2
"""A file that is not a workbench fallback file, or one that disagrees with the database (forged, or a copy
of another run's): bad input, left in place."""
EXIT_REFUSED = 3
"""A file the database refused to take (read-only, full, locked, unreachable): left in place, to import later."""

_SESSION_KEYS = ("created", "app", "items", "seed", "prompt", "task", "model", "pid", "host")
"""What a file's session record must agree on with a stored session."""
_ARM_KEYS = ("model", "position")
"""What a file's arm must agree on with a stored arm, always (its mode may change when the arm ends)."""


@dataclass(frozen=True)
class Refused:
    """A fallback file left in place: one line naming it and why, and the exit code that says which kind."""

    path: Path
    message: str
    code: int


@dataclass
class ImportReport:
    imported: list[Imported | ImportedSweep] = field(default_factory=list)
    waiting: list[Waiting] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 when everything waiting was imported (or nothing was), else 2 for a bad or conflicting file
        (a person must look), else 3 for a file the database refused (importing later can work)."""
        codes = {refused.code for refused in self.refused}
        return EXIT_BAD_FILE if EXIT_BAD_FILE in codes else max(codes, default=0)


def import_file(store: Store, path: Path) -> Imported | ImportedSweep | Waiting:
    """Add what a fallback file holds that the database lacks, then remove the file.

    Raises :class:`BadFallbackFile` or :class:`ImportConflict` (the file is left in place, nothing applied),
    or :class:`StoreError` when the database cannot take it."""
    return apply(store, read_unsaved(path))


def apply(
    store: Store, unsaved: Unsaved | UnsavedSweep, *, waitable: frozenset[Fault] = WAITABLE
) -> Imported | ImportedSweep | Waiting:
    if not unsaved.ended and process_alive(unsaved.pid, unsaved.host, None):
        return Waiting(unsaved.path, f"{unsaved.path}: its run is still going; import it once that run has ended")
    if isinstance(unsaved, UnsavedSweep):
        return import_sweep(store, unsaved, waitable=waitable)
    done = store.write(
        lambda: _import_session(store, unsaved), f"importing session {unsaved.session_id}", waitable=waitable
    )
    if isinstance(done, Imported):
        remove(unsaved.path)
    return done


def import_waiting(store: Store, *, waitable: frozenset[Fault] = WAITABLE) -> ImportReport:
    """Import every fallback file in the data directory meant for this database (sessions before sweeps,
    so a sweep finds the sessions it ran); the rest are reported, never applied. ``waitable``: the faults
    each file's write waits out (the import an open does waits for no other process's lock)."""
    report = ImportReport()
    files = []
    for path in pending_files(store.unsaved_dir):
        try:
            files.append(read_unsaved(path))
        except BadFallbackFile as error:
            report.refused.append(Refused(path, str(error), EXIT_BAD_FILE))
    for unsaved in sorted(files, key=lambda found: isinstance(found, UnsavedSweep)):
        if unsaved.db != store.key:
            why = f"{unsaved.path} is for {unsaved.db}: `workbench import {unsaved.path} --db {unsaved.db}`"
            report.waiting.append(Waiting(unsaved.path, why))
            continue
        if not unsaved.ended and process_alive(unsaved.pid, unsaved.host, None) is not False:
            why = f"{unsaved.path}: its run is still going; import it once that run has ended"
            report.waiting.append(Waiting(unsaved.path, why))
            continue
        outcome(report, unsaved.path, lambda unsaved=unsaved: apply(store, unsaved, waitable=waitable))
    return report


def outcome(report: ImportReport, path: Path, action: Callable[[], Imported | ImportedSweep | Waiting]) -> None:
    """Run one file's import, adding what came of it to ``report``."""
    try:
        done = action()
    except (BadFallbackFile, ImportConflict) as error:
        report.refused.append(Refused(path, str(error), EXIT_BAD_FILE))
    except StoreError as error:
        report.refused.append(Refused(path, f"{path} was kept: {error}", EXIT_REFUSED))
    else:
        (report.waiting if isinstance(done, Waiting) else report.imported).append(done)


# -- one session, in one transaction ---------------------------------------------------------------------


def _import_session(store: Store, unsaved: Unsaved) -> Imported | Waiting:
    session_id = unsaved.session_id
    with Session(store.engine) as db:
        lock_for_import(db, session_id)
        row = db.get(SessionRow, session_id)
        if row is None:
            _insert_whole(db, unsaved)
            db.commit()
            return Imported(unsaved.path, session_id, len(unsaved.events), 0, True, unsaved.ended)
        arms = {arm.name: arm for arm in db.exec(select(ArmRow).where(col(ArmRow.session_id) == session_id))}
        query = select(EventRow.arm, EventRow.seq, EventRow.t, EventRow.kind, EventRow.data)
        stored = {(a, s): (t, k, d) for a, s, t, k, d in db.exec(query.where(col(EventRow.session_id) == session_id))}
        new = [event for event in unsaved.events if (event[0], event[1]) not in stored]
        running = row.status == "running"
        found = _session_differences(row, arms, unsaved)
        changed = [f"{a} #{s}" for a, s, t, k, d in unsaved.events if stored.get((a, s), (t, k, d)) != (t, k, d)]
        if changed:
            first = ", ".join(changed[:3]) + (" ..." if len(changed) > 3 else "")
            found.append(f"{len(changed)} of its events differ from the stored ones ({first})")
        if not running and new:
            found.append(f"it adds {len(new)} events to a session that has ended ({row.status})")
        if not running and unsaved.finish is not None and set(arms) >= {arm["name"] for arm in unsaved.finish["arms"]}:
            found += _end_differences(row, arms, unsaved.finish)
        if found:
            raise conflict(unsaved.path, f"session {session_id} in {store.name}", found)
        ends = running and unsaved.finish is not None
        own_end = writers_own_end(unsaved.pid, unsaved.host, unsaved.ended, row.pid, row.host)
        if (new or ends) and not own_end and store.session_rows.writer_alive(row):
            where = f"pid {row.pid}" + (f" on {row.host}" if row.host else "")
            return Waiting(unsaved.path, f"{unsaved.path}: session {session_id} is still being written ({where})")
        if new:
            db.connection().execute(EventRow.__table__.insert(), _event_rows(session_id, new))  # type: ignore[attr-defined]
        if ends:
            assert unsaved.finish is not None
            row.status, row.finished = unsaved.finish["status"], unsaved.finish["finished"]
            for arm in unsaved.finish["arms"]:
                for key in ARM_END_FIELDS:
                    if key in arm:
                        setattr(arms[arm["name"]], key, arm[key])
        db.commit()
    return Imported(unsaved.path, session_id, len(new), len(unsaved.events) - len(new), False, ends)


def _insert_whole(db: Session, unsaved: Unsaved) -> None:
    """A session the database does not hold: its rows from the file's allow-listed fields, ended as the file says."""
    session = {**unsaved.session, "status": "running"}
    arms = {arm["name"]: dict(arm) for arm in unsaved.arms}
    if unsaved.finish is not None:
        session.update(status=unsaved.finish["status"], finished=unsaved.finish["finished"])
        for arm in unsaved.finish["arms"]:
            arms[arm["name"]].update({key: arm[key] for key in ARM_END_FIELDS if key in arm})
    db.add(SessionRow(**session))
    db.flush()
    db.add_all(ArmRow(session_id=unsaved.session_id, **arm) for arm in arms.values())
    db.flush()
    if unsaved.events:
        rows = _event_rows(unsaved.session_id, unsaved.events)
        db.connection().execute(EventRow.__table__.insert(), rows)  # type: ignore[attr-defined]


def _event_rows(session_id: str, events: Sequence[EventTuple]) -> list[dict[str, Any]]:
    return [{"session_id": session_id, "arm": a, "seq": s, "t": t, "kind": k, "data": d} for a, s, t, k, d in events]


def _session_differences(row: SessionRow, arms: dict[str, ArmRow], unsaved: Unsaved) -> list[str]:
    """How a file's session and arms disagree with the stored ones (empty: the same session)."""
    found = differences(unsaved.session, row, _SESSION_KEYS)
    named = {arm["name"]: arm for arm in unsaved.arms}
    if set(named) != set(arms):
        return [*found, f"arms ({', '.join(sorted(named))}, stored {', '.join(sorted(arms))})"]
    keys = _ARM_KEYS + (("mode",) if row.status == "running" else ())  # an arm's mode may change at its end
    for name, arm in named.items():
        found += differences(arm, arms[name], keys, f"arm {name} ")
    return found


def _end_differences(row: SessionRow, arms: dict[str, ArmRow], finish: dict[str, Any]) -> list[str]:
    """How a file's end of a session disagrees with the end the database holds."""
    found = differences(finish, row, ("status", "finished"))
    for arm in finish["arms"]:
        found += differences(arm, arms[arm["name"]], (*ARM_END_FIELDS, *_ARM_KEYS), f"arm {arm['name']} ")
    return found
