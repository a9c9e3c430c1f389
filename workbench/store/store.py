"""The store's facade: the one object callers hold, naming what the modules behind it do.

``Store(location)`` opens the database (:mod:`workbench.store.database`: engine, probe, create or migrate,
the one write and read policy), brings back what earlier failed runs left in fallback files
(:mod:`workbench.store.imports`), and then speaks workbench objects: sessions
(:mod:`workbench.store.sessions`) and the bench's sweeps (:mod:`workbench.store.sweeps`). Nothing outside
``workbench.store`` sees a table or an ORM session.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.events import ArmEvent
from workbench.locations import DbLocation
from workbench.session import Comparison
from workbench.store.database import DEFAULT_BUSY_TIMEOUT_S, READ_TIMEOUT_S, Database, expand_path
from workbench.store.fallback import EventTuple
from workbench.store.faults import WAITABLE, Fault
from workbench.store.imported import Imported, ImportedSweep, Waiting
from workbench.store.imports import import_file, import_waiting
from workbench.store.listing import Listing, SessionInfo
from workbench.store.sessions import Sessions
from workbench.store.sweeps import Sweeps

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from workbench.store.retry import WaitPolicy
    from workbench.store.writer import SessionWriter

__all__ = ["DEFAULT_BUSY_TIMEOUT_S", "READ_TIMEOUT_S", "Store", "expand_path"]

log = logging.getLogger(__name__)

R = TypeVar("R")

OPEN_IMPORT_WAITS: frozenset[Fault] = WAITABLE - {"busy"}
"""What the import each open does waits out: a server's dropped connection or restart, never a lock."""


class Store:
    """Sessions, arms, events and bench sweeps in one SQLite file (or a PostgreSQL server)."""

    def __init__(
        self,
        location: DbLocation | str | Path,
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        unsaved_dir: Path | None = None,
        import_unsaved: bool = True,
    ) -> None:
        self.db = Database(location, busy_timeout_s=busy_timeout_s, unsaved_dir=unsaved_dir)
        self.session_rows = Sessions(self.db)
        """The sessions' persistence (what the session methods below delegate to)."""
        self._unlisted: set[SessionWriter] = set()
        """This process's writers whose sessions' rows are not written yet (runs in their first flush interval)."""
        self._unlisted_lock = threading.Lock()
        self.opened_imports: list[Imported | ImportedSweep] = []
        """Sessions of earlier failed runs that this open brought back from their fallback files (with
        ``import_unsaved``; a file that is refused is logged, one line, and stays)."""
        if import_unsaved and not self.read_only:
            self.opened_imports = self.import_pending()

    def __repr__(self) -> str:
        return f"Store({self.name!r})"

    def close(self) -> None:
        """Close the database's connections. Whoever opens a store closes it (``with Store(...) as store``, or
        this): the CLI when its command ends, the TUI's command when the app exits, a run of
        :func:`workbench.compare` that opened its own when the run ends."""
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the database ----------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The database as messages name it: the path, or the URL with its password masked."""
        return self.db.name

    @property
    def key(self) -> str:
        """The database as a fallback file names it: the absolute path, or the URL without its password."""
        return self.db.key

    @property
    def location(self) -> DbLocation:
        return self.db.location

    @property
    def path(self) -> Path | None:
        """The SQLite file (``None`` for a server)."""
        return self.db.path

    @property
    def url(self) -> str:
        return self.db.url

    @property
    def read_only(self) -> bool:
        return self.db.read_only

    @property
    def busy_timeout_s(self) -> float:
        return self.db.busy_timeout_s

    @property
    def busy_waited_s(self) -> float:
        """The longest a write of this store waited for a lock another process held."""
        return self.db.busy_waited_s

    @property
    def unsaved_dir(self) -> Path:
        return self.db.unsaved_dir

    @property
    def policy(self) -> WaitPolicy:
        """The one wait and retry policy of this database's calls (:class:`~workbench.store.retry.WaitPolicy`)."""
        return self.db.policy

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine, for ``workbench.store``'s own modules and the tests of the schema."""
        return self.db.engine

    def schema_version(self) -> int:
        return self.db.schema_version()

    def require_writable(self) -> None:
        """Refuse, with the one-line read-only message, before starting anything that must be stored."""
        self.db.require_writable()

    def read(self, action: Callable[[], R], doing: str = "reading") -> R:
        """``action`` under the read deadline (:meth:`Database.read`)."""
        return self.db.read(action, doing)

    def write(self, action: Callable[[], R], doing: str, *, waitable: frozenset[Fault] = WAITABLE) -> R:
        """``action`` (one transaction) under the one write policy (:meth:`Database.write`)."""
        return self.db.write(action, doing, waitable=waitable)

    # -- sessions --------------------------------------------------------------------------------

    def begin(
        self,
        comparison: Comparison,
        models: Mapping[str, str] | None = None,
        modes: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
    ) -> SessionWriter:
        """Start storing a comparison as it runs: ``writer.put(event)`` for each event, then
        ``writer.close(comparison)``. ``models`` and ``modes`` name each arm's model and mode (defaults:
        the comparison's model, the arm's name)."""
        from workbench.store.writer import SessionWriter

        return SessionWriter(self, comparison, models, modes, pid=pid)

    def hold_unlisted(self, writer: SessionWriter) -> None:
        """A writer starts: its session's rows come with its first flush (see :meth:`write_unlisted`)."""
        with self._unlisted_lock:
            self._unlisted.add(writer)

    def drop_unlisted(self, writer: SessionWriter) -> None:
        """A writer's first flush is over: its session's rows are written (or will not be)."""
        with self._unlisted_lock:
            self._unlisted.discard(writer)

    def write_unlisted(self) -> None:
        """Have this process's runs still in their first flush interval write their sessions' rows now, and wait
        for them (at most a flush interval): a listing in the process running a session shows it from its start
        (another process's listing shows it within a flush interval)."""
        with self._unlisted_lock:
            writers = list(self._unlisted)
        if not writers:
            return
        from workbench.store.writer import FLUSH_INTERVAL_S

        deadline = time.monotonic() + FLUSH_INTERVAL_S
        for listed in [writer.list_now() for writer in writers]:
            listed.wait(max(0.0, deadline - time.monotonic()))

    def save(
        self,
        comparison: Comparison,
        models: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
        host: str | None = None,
    ) -> None:
        """Store a comparison whole, as it stands (a comparison still running stays "running")."""
        self.session_rows.save_all([comparison], models, pid=pid, host=host)

    def save_all(
        self,
        comparisons: Iterable[Comparison],
        models: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
        host: str | None = None,
    ) -> None:
        """Store finished (or still running) comparisons whole, in one transaction."""
        self.session_rows.save_all(comparisons, models, pid=pid, host=host)

    def insert_session(
        self, session: Mapping[str, Any], arms: Sequence[Mapping[str, Any]], *, beat: bool = False
    ) -> bool:
        return self.session_rows.insert_session(session, arms, beat=beat)

    def insert_events(
        self, session_id: str, events: Sequence[EventTuple], *, skip_stored: bool = False, beat: bool = False
    ) -> int:
        return self.session_rows.insert_events(session_id, events, skip_stored=skip_stored, beat=beat)

    def beat(self, session_id: str) -> None:
        self.session_rows.beat(session_id)

    def finish(self, session_id: str, status: str, finished: datetime, arms: Sequence[Mapping[str, Any]]) -> None:
        self.session_rows.finish(session_id, status, finished, arms)

    def delete_session(self, session_id: str) -> None:
        self.session_rows.delete(session_id)

    def load(self, session_id: str) -> Comparison:
        """A stored session as a :class:`~workbench.session.Comparison` (works for runs that never finished)."""
        self.write_unlisted()
        return self.session_rows.load(session_id)

    def resolve_id(self, prefix: str) -> str:
        """The full id of the session whose id starts with ``prefix`` (it must be unambiguous)."""
        self.write_unlisted()
        return self.session_rows.resolve_id(prefix)

    def session(self, session_id: str) -> SessionInfo:
        self.write_unlisted()
        return self.session_rows.session(session_id)

    def sessions(self, *, limit: int | None = None, search: str | None = None) -> list[SessionInfo]:
        """Sessions newest first; ``search`` matches app, model, task, prompt or id (case-insensitive)."""
        self.write_unlisted()
        return self.session_rows.sessions(limit=limit, search=search)

    def listing(self, *, limit: int | None = None, search: str | None = None, hide_bench: bool = False) -> Listing:
        """Sessions as :meth:`sessions` lists them; with ``hide_bench``, without the ones bench sweeps ran (one
        sweep stores dozens, which bury a person's own), counting those left out in ``hidden``."""
        self.write_unlisted()
        return self.session_rows.listing(limit=limit, search=search, hide_bench=hide_bench)

    def count_sessions(self) -> int:
        return self.session_rows.count()

    def events(self, session_id: str) -> list[ArmEvent]:
        """Every stored event of a session, per arm (in the comparison's order) in seq order."""
        return self.session_rows.events(session_id)

    def events_by_time(self, session_id: str, *, offset: int = 0, limit: int | None = None) -> list[ArmEvent]:
        """A slice of a session's events in the order they happened (time, then arm order, then seq)."""
        return self.session_rows.events_by_time(session_id, offset=offset, limit=limit)

    # -- sweeps ----------------------------------------------------------------------------------

    def sweep_rows(self) -> Sweeps:
        """The bench's sweeps in this database; each sweep being run takes its own (it keeps that sweep's
        faults, and where its fallback file went)."""
        return Sweeps(self.db)

    # -- fallback files --------------------------------------------------------------------------

    def import_file(self, path: Path) -> Imported | ImportedSweep | Waiting:
        """Add what a fallback file holds that this store lacks (a session or a sweep's rows), then remove
        the file; a file that disagrees with the store is refused and stays (:mod:`workbench.store.imports`)."""
        return import_file(self, path)

    def import_pending(self) -> list[Imported | ImportedSweep]:
        """Import every ready fallback file meant for this database (done on each writable open); each one
        refused is logged in one line and left in place.

        It waits for no lock another process holds: the command that opened the store (``sessions``, the
        TUI's first screen, a run) is not kept waiting ``busy_timeout_s`` for an import it did not ask for;
        the file stays for ``workbench import``, which does wait, or the next open."""
        report = import_waiting(self, waitable=OPEN_IMPORT_WAITS)
        for refused in report.refused:
            log.warning("%s", refused.message)
        return report.imported
