"""Storage faults tried, sessions lost: real faults under a real run, and what survived them.

Each fault runs one scripted comparison (cart/remove-expensive, 122 items) against a database that cannot
take it as usual, then counts the events that reached the database, directly or through the fallback file
that the next open (or ``workbench import``) brings back:

- a write lock another process holds for ``hold_s`` (5 s; ``--hold``), waited out within the 30 s default;
- a write lock held for the whole run, past a 1 s wait: the run goes to its fallback file;
- a full file system (a 2 MB tmpfs filled to ENOSPC), a read-only file system (a tmpfs remounted read-only)
  and a damaged page (the events table's root page overwritten): the fallback file at once;
- a lone UTF-16 surrogate in the model's answer: stored with U+FFFD, nothing lost.

The fault helpers (the lock, the mounts, filling a disk, damaging a page) are the ones the tests use.
Mounts need root; where ``mount`` is refused the fault is reported as skipped (tests skip, saying why).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.session import Comparison
    from workbench.store import Store

TASK = "cart/remove-expensive"
ITEMS = 122
WAIT_S = 30.0
"""How long the waited-out lock case lets a write wait (the ``store_busy_timeout_s`` default)."""
SHORT_WAIT_S = 1.0
"""The wait that a lock held for the whole run outlasts."""


# -- the faults --------------------------------------------------------------------------------------


class MountRefused(RuntimeError):
    """``mount`` was refused here (not root, or no mount namespace); the message says why."""


def mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[0] if done.stderr.strip() else f"exit {done.returncode}"
        raise MountRefused(f"mount {' '.join(args)} was refused here: {why}")


def unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=False)


@contextlib.contextmanager
def tmpfs(path: Path, size: str = "2m") -> Iterator[Path]:
    """A fresh tmpfs of ``size`` mounted at ``path`` (created), unmounted afterwards."""
    path.mkdir()
    mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    try:
        yield path
    finally:
        unmount(path)


def remount(path: Path, *, read_only: bool) -> None:
    mount("-o", "remount,ro" if read_only else "remount,rw", str(path))


@contextlib.contextmanager
def read_only_bind(path: Path) -> Iterator[Path]:
    """``path`` (a file or folder) behind a read-only bind mount of itself: read-only even to root."""
    mount("--bind", str(path), str(path))
    try:
        mount("-o", "remount,ro,bind", str(path))
        yield path
    finally:
        unmount(path)


def fill(directory: Path) -> Path:
    """Fill a file system to the last byte; the file is returned, to free the space again."""
    filler = directory / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 4096)
    except OSError as error:
        if error.errno != 28:  # ENOSPC
            raise
    finally:
        os.close(descriptor)
    return filler


def damage_events_root_page(db: Path) -> None:
    """Overwrite the events table's root page, an interior b-tree page (type 5), past its first header bytes."""
    with contextlib.closing(sqlite3.connect(db)) as connection:
        (root,) = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()
        (page_size,) = connection.execute("PRAGMA page_size").fetchone()
    with db.open("r+b") as handle:
        handle.seek((root - 1) * page_size)
        if handle.read(1) != b"\x05":
            raise ValueError(f"the events table of {db} fits on one page: store more events to damage it")
        handle.seek((root - 1) * page_size + 8)  # the right-most child pointer, then the cell pointers and cells
        handle.write(b"\xa5" * (page_size - 8))


@contextlib.contextmanager
def write_lock(db: Path | str) -> Iterator[Callable[[], None]]:
    """Another process holding the database's write lock until ``release()``: ``BEGIN EXCLUSIVE`` on SQLite,
    ``LOCK TABLE ... IN EXCLUSIVE MODE`` (readers pass, writers wait) on PostgreSQL."""
    if isinstance(db, Path):
        script = (
            "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('BEGIN EXCLUSIVE')\nprint('locked', flush=True)\nsys.stdin.readline()\nc.execute('COMMIT')\n"
        )
        target = str(db)
    else:
        script = (
            "import psycopg, sys\nc = psycopg.connect(sys.argv[1])\n"
            "c.execute('LOCK TABLE sessions, arms, events IN EXCLUSIVE MODE')\nprint('locked', flush=True)\n"
            "sys.stdin.readline()\nc.commit()\n"
        )
        target = db
    holder = subprocess.Popen(
        [sys.executable, "-c", script, target], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdin is not None
    if holder.stdout.readline().strip() != "locked":
        holder.kill()
        raise RuntimeError(f"could not lock {db}")

    def release() -> None:
        if holder.poll() is None and not holder.stdin.closed:  # type: ignore[union-attr]
            holder.stdin.write("\n")  # type: ignore[union-attr]
            holder.stdin.close()  # type: ignore[union-attr]

    try:
        yield release
    finally:
        release()
        holder.wait(timeout=60)


# -- one run under each fault ------------------------------------------------------------------------


@dataclass
class FaultReport:
    fault: str
    stored: bool | None = None
    """Whether the run's session went straight into the database (None: the fault could not be set up)."""
    waited_s: float = 0.0
    """The longest a write of the run waited on another process's lock."""
    emitted: int = 0
    recovered: int = 0
    """Events in the database afterwards (directly, or imported from the fallback file)."""
    note: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def tried(self) -> bool:
        return self.stored is not None

    @property
    def lost(self) -> int:
        """Sessions lost: 1 when any event the run emitted is not in the database afterwards."""
        return int(self.tried and self.recovered < self.emitted)

    @property
    def held(self) -> bool:
        return not self.problems and not self.lost


def locked(directory: Path, *, hold_s: float) -> FaultReport:
    """Another process holds the write lock for ``hold_s``, within the default wait: the run waits it out."""
    from workbench.store import Store

    db, unsaved = _place(directory, "locked")
    store = Store(db, busy_timeout_s=WAIT_S, unsaved_dir=unsaved)
    report = FaultReport(f"locked {hold_s:g} s (wait {WAIT_S:g} s)")
    with write_lock(db) as release:
        timer = threading.Timer(hold_s, release)
        timer.start()
        try:
            comparison = _run(store)
        finally:
            timer.cancel()
    _judge(report, store, comparison, expect_stored=True)
    return report


def locked_past_the_wait(directory: Path) -> FaultReport:
    """Another process holds the write lock for the whole run, past a short wait: the fallback file."""
    from workbench.store import Store

    db, unsaved = _place(directory, "locked-long")
    store = Store(db, busy_timeout_s=SHORT_WAIT_S, unsaved_dir=unsaved)
    report = FaultReport(f"locked for the whole run (wait {SHORT_WAIT_S:g} s)")
    with write_lock(db):
        comparison = _run(store)
    _judge(report, store, comparison, expect_stored=False)
    return report


def disk_full(directory: Path) -> FaultReport:
    """The database's file system is full (a 2 MB tmpfs filled to ENOSPC) before the run."""
    from workbench.store import Store

    def fault(mount_point: Path, db: Path, unsaved: Path) -> tuple[Store, Comparison]:
        store = Store(db, unsaved_dir=unsaved)
        filler = fill(mount_point)
        comparison = _run(store)
        store.engine.dispose()
        filler.unlink()
        return store, comparison

    return _on_tmpfs("disk full (tmpfs)", directory, "2m", fault)


def read_only(directory: Path) -> FaultReport:
    """The database's file system is remounted read-only before the run."""
    from workbench.store import Store

    def fault(mount_point: Path, db: Path, unsaved: Path) -> tuple[Store, Comparison]:
        Store(db, unsaved_dir=unsaved).engine.dispose()  # an open database keeps the mount busy
        remount(mount_point, read_only=True)
        store = Store(db, unsaved_dir=unsaved)
        comparison = _run(store)
        store.engine.dispose()
        remount(mount_point, read_only=False)
        return store, comparison

    return _on_tmpfs("read-only file system", directory, "8m", fault)


def damaged(directory: Path) -> FaultReport:
    """The events table's root page is overwritten: the run's events are imported into a new database."""
    from workbench.store import Store

    db, unsaved = _place(directory, "damaged")
    store = Store(db, unsaved_dir=unsaved)
    _run(store)
    store.engine.dispose()
    damage_events_root_page(db)
    report = FaultReport("damaged page")
    damaged_store = Store(db, unsaved_dir=unsaved)
    comparison = _run(damaged_store)
    damaged_store.engine.dispose()
    fresh = Store(directory / "recovered.db", unsaved_dir=unsaved)
    fresh.import_file(unsaved / f"{comparison.session_id}.jsonl")
    _judge(report, fresh, comparison, expect_stored=False, reopen=False)
    report.note = "imported into a new database"
    return report


def lone_surrogate(directory: Path) -> FaultReport:
    """A model answer holding a lone UTF-16 surrogate (some servers send one): stored with U+FFFD."""
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    import workbench
    from workbench.store import Store

    answer = "Done \ud800 (a lone surrogate, as some servers send)"

    def reply(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(answer)])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield answer

    db, unsaved = _place(directory, "surrogate")
    store = Store(db, unsaved_dir=unsaved)
    model = FunctionModel(reply, stream_function=stream)
    comparison = workbench.compare_sync("Say done", app="cart", items=5, db=store, model=model)
    report = FaultReport("lone surrogate in an answer")
    _judge(report, store, comparison, expect_stored=True, reopen=False)
    return report


def all_checks(
    directory: Path, *, hold_s: float = 5.0, on_report: Callable[[FaultReport], None] | None = None
) -> list[FaultReport]:
    """Every fault in turn, each in its own folder under ``directory``."""
    checks: Sequence[Callable[[Path], FaultReport]] = (
        lambda place: locked(place, hold_s=hold_s),
        locked_past_the_wait,
        disk_full,
        read_only,
        damaged,
        lone_surrogate,
    )
    reports = []
    for number, check in enumerate(checks):
        place = directory / f"fault-{number}"
        place.mkdir(parents=True)
        report = check(place)
        reports.append(report)
        if on_report is not None:
            on_report(report)
    return reports


# -- helpers -----------------------------------------------------------------------------------------


def _place(directory: Path, name: str) -> tuple[Path, Path]:
    """A database file and the fallback folder for one fault (never the user's data directory)."""
    return directory / f"{name}.db", directory / f"unsaved-{name}"


def _on_tmpfs(
    name: str, directory: Path, size: str, fault: Callable[[Path, Path, Path], tuple[Store, Comparison]]
) -> FaultReport:
    """A run whose database lives on a fresh tmpfs: ``fault(mount point, database, fallback folder)`` runs it
    under the fault and undoes the fault; the report is skipped when the mount is refused."""
    report = FaultReport(name)
    try:
        with tmpfs(directory / "mount", size) as mount_point:
            store, comparison = fault(mount_point, mount_point / "sessions.db", directory / "unsaved")
            _judge(report, store, comparison, expect_stored=False)
    except MountRefused as refused:
        report.note = f"skipped: {refused}"
    return report


def _run(store: Store) -> Comparison:
    import workbench

    return workbench.compare_sync(task=TASK, items=ITEMS, db=store)


def _judge(
    report: FaultReport, store: Store, comparison: Comparison, *, expect_stored: bool, reopen: bool = True
) -> None:
    """Count what the database holds of the run (reopening it first imports the fallback file)."""
    from workbench.store import Store

    report.stored, report.waited_s, report.emitted = comparison.stored, store.busy_waited_s, len(comparison.events)
    if not comparison.stored and not report.note:
        report.note = "fallback file, imported on the next open"
    reader = Store(store.location, unsaved_dir=store.unsaved_dir) if reopen else store
    report.recovered = len(reader.events(comparison.session_id))
    reader.engine.dispose()
    if comparison.stored != expect_stored:
        report.problems.append(
            f"expected the run {'stored directly' if expect_stored else 'in its fallback file'}, "
            f"got stored={comparison.stored} ({comparison.store_error})"
        )
    if report.lost:
        report.problems.append(f"{report.emitted - report.recovered} of {report.emitted} events lost")
