"""Writes a live session to the store from a background thread, a few times a second.

The thread gathers before it writes anything: the session's rows are written with the first batch of
events, at the first flush (``FLUSH_INTERVAL_S`` after the start, or at ``close`` if that comes first), in
the same transaction. A run that ends within the first flush interval (an instant comparison) is stored
whole in one transaction: its session row already with how it ended, its arm rows with their outcomes, and
every event. A longer run commits whatever events have arrived every ``FLUSH_INTERVAL_S`` (or sooner when a
batch fills up), and its last batch with how it ended. So a session list shows a run within a fraction of a
second of its start, and a process killed mid-run leaves every event up to a fraction of a second before the
kill (killed within the first flush interval, it leaves nothing: that much is all a kill may lose). The
event loop only appends to a queue, so it never waits on disk. Every ``HEARTBEAT_INTERVAL_S`` the thread
refreshes the session's heartbeat (with a batch of events, or alone while the run waits on its model), so
readers on other hosts of a shared database can tell a live writer from a dead one. A follow-up turn of a
stored session (``resume``) marks its rows running again with its first batch, and appends its events.

Every write is one transaction of SQLAlchemy Core statements (:meth:`Sessions.write_batch`), through the
store's one write policy: a retry after a dropped connection skips the events already stored.

Events stay in memory until they are committed. A busy database is waited out (``Store.busy_timeout_s``);
when the database cannot take them (disk full, read-only, damaged, locked for too long), the session and
every event not yet committed go to a fallback file instead (:mod:`workbench.store.fallback`), and so does
everything after. ``close`` then says the session was not stored, why, and where its events are.

A wait is not spent with the events only in memory: once a write has waited ``SPILL_AFTER_S``, a guard thread
starts the fallback file with everything not yet committed and appends what arrives every
``FLUSH_INTERVAL_S`` while the write still waits, so a process killed during a long lock loses no more than a
healthy one. When the write goes through and everything in the file is committed, the file is removed (an
import of a file whose events are all stored adds nothing and removes it, so a kill in between is harmless).
A healthy run never writes the file: the guard only sleeps on an event.

``close`` never waits without end: past its deadline (the busy timeout and a margin, or a few seconds when the
process is being stopped) the thread is abandoned where it hangs (it is a daemon: it cannot keep the process
alive), and what it had not stored goes to the fallback file from the closing thread.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from workbench.events import ArmEvent
from workbench.store.codec import encode_event
from workbench.store.convert import arm_outcomes, record_to_file, session_record
from workbench.store.fallback import EventTuple, FallbackFile
from workbench.store.faults import StoreError
from workbench.store.liveness import HEARTBEAT_INTERVAL_S

if TYPE_CHECKING:
    from workbench.session import Comparison
    from workbench.store.store import Store

FLUSH_INTERVAL_S = 0.25
"""How long the writer gathers events before it commits them: a few commits a second keep a killed run's
loss to a quarter of a second, and each commit (a transaction, and the interpreter lock for its rows) costs
the run far more than its rows do."""
BATCH_LIMIT = 2000
CLOSE_MARGIN_S = 5.0
"""What ``close`` waits for the thread beyond the store's busy timeout (every call of the thread is bounded by
that timeout; this covers a connect's and a fallback file's own few seconds)."""
STOPPING_WAIT_S = 1.0
"""What ``close`` waits for the thread while the process is being stopped (SIGTERM, Ctrl+C)."""
LOCK_WAIT_S = 1.0
"""Most the closing thread waits for the writer thread to finish an append to the fallback file."""
SPILL_AFTER_S = 1.0
"""How long a write may wait (a lock another process holds, a server away) before what is not yet committed
goes to the fallback file too: a kill during the wait then loses at most a flush interval of events."""

log = logging.getLogger(__name__)

_STOP = object()


class SessionWriter:
    """Stores one comparison while it runs (made by :meth:`Store.begin`)."""

    def __init__(
        self,
        store: Store,
        comparison: Comparison,
        models: Mapping[str, str] | None = None,
        modes: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
        resume: bool = False,
    ) -> None:
        self.store = store
        self.resume = resume
        """The session is stored already (a follow-up turn continues it): its rows are marked running again
        and the new events appended."""
        self.session_id = comparison.session_id
        self.written = 0
        """Events committed to the database."""
        self.error: StoreError | None = None
        """The fault that sent this session to the fallback file (``None`` while the database takes it)."""
        self.fallback_error: OSError | None = None
        self._session, self._arms = session_record(comparison, models, modes, pid=pid)
        self._created = False
        """The session's rows are in the database (written with the first batch, at the first flush)."""
        self._first_flush = time.monotonic() + FLUSH_INTERVAL_S
        self._ended_stored = False
        """How the session ended is in the database (with the last batch, or by ``_finish``)."""
        self._last_beat = 0.0
        self._pending: list[EventTuple] = []
        self._fallback = FallbackFile(store.unsaved_dir, self.session_id)
        self._outcome: tuple[str, datetime, list[dict[str, Any]]] | None = None
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        """Held to change what is pending or to write the fallback file: the thread, or ``close`` giving up on it."""
        self._abandoned = False
        self._done = False
        self._ended = threading.Event()
        """Set when the thread ends, or when it is abandoned: what ``close`` waits for."""
        self._stop = threading.Event()
        self._hurry = threading.Event()
        """Ends the wait for the first flush: set by ``close``, or by a reader in this process
        (:meth:`list_now`)."""
        self._listed = threading.Event()
        """Set once the first flush is over (the session's rows are written, or will not be)."""
        self._spilled: list[EventTuple] = []
        """Events the guard took from the queue (and put in the file) while a write waited: stored next."""
        self._stop_spilled = False
        """The guard took the end-of-run marker from the queue."""
        self._spilling = False
        """The fallback file holds every event in ``_pending`` and ``_spilled`` while the database still works."""
        self._writing = threading.Event()
        self._written = threading.Event()
        self._written.set()
        store.hold_unlisted(self)
        self._thread = threading.Thread(target=self._run, name=f"workbench-writer-{self.session_id}", daemon=True)
        self._thread.start()
        self._guard = threading.Thread(target=self._watch, name=f"workbench-spill-{self.session_id}", daemon=True)
        self._guard.start()

    @property
    def stored(self) -> bool:
        """Whether every event and the session's end reached the database."""
        return self.error is None

    @property
    def problem(self) -> str | None:
        """One line: what kept the session from the database, and where its events are instead."""
        if self.error is None:
            return None
        if self.fallback_error is not None:
            return (
                f"{self.error}; its events could not be saved to {self._fallback.path} either "
                f"({self.fallback_error.strerror or self.fallback_error}), only this process holds them"
            )
        return f"{self.error}; its events were saved to {self._fallback.path} (`workbench import` stores them)"

    def put(self, event: ArmEvent) -> None:
        self._queue.put(event)

    def list_now(self) -> threading.Event:
        """Have the first flush now (a reader in this process lists the run from its start, not up to
        ``FLUSH_INTERVAL_S`` later); the event returned is set once the session's rows are written (or will not
        be)."""
        self._hurry.set()
        return self._listed

    def close(self, comparison: Comparison, *, wait_s: float | None = None) -> None:
        """Write everything still queued, record how the session ended, stop the thread, and mark the
        comparison ``stored`` (or not, with ``store_error`` saying why).

        Waits for the thread at most ``wait_s`` (default: the store's busy timeout plus ``CLOSE_MARGIN_S``);
        past that, the thread is left where it hangs and what it has not stored goes to the fallback file."""
        self._outcome = (comparison.status, datetime.now(UTC), arm_outcomes(comparison, self._arms))
        self._stop.set()
        self._hurry.set()
        self._queue.put(_STOP)
        waited = self.store.busy_timeout_s + CLOSE_MARGIN_S if wait_s is None else wait_s
        self._ended.wait(waited)
        if not self._ended.is_set():
            self.abandon(
                f"{self.store.name} did not answer within {waited:g} s while storing session {self.session_id}"
            )
        comparison.stored = self.stored
        comparison.store_error = self.problem

    def abandon(self, why: str = "") -> None:
        """Give up on the thread (it hangs on the database, or the process must end now): what it has not
        stored, and how the session ended if ``close`` said so, go to the fallback file from this thread."""
        gave_up = StoreError(why or f"{self.store.name} did not take session {self.session_id} in time", "unreachable")
        if not self._lock.acquire(timeout=LOCK_WAIT_S):  # the thread is appending to the fallback file
            if self.error is None:
                self._fail(gave_up)
            self._ended.set()
            return
        try:
            if self._done or self._abandoned:
                return
            self._abandoned = True
            if self.error is None:
                self._fail(gave_up)
            # The batch the thread was storing is saved too: if the server takes it after all, importing
            # the file skips what is already stored.
            pending = [] if self._spilling else [*self._pending, *self._spilled]
            self._spilling = False
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not _STOP:
                    pending.append(encode_event(item))  # type: ignore[arg-type]
            self._append_fallback(pending)
            if self._outcome is not None:
                self._finish_fallback(*self._outcome)
        finally:
            self._lock.release()
            self._ended.set()

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._store_all()
        finally:
            self._first_flushed()
            self._ended.set()
            self._writing.set()  # wakes the guard, which sees the thread has ended
            self._written.set()

    def _store_all(self) -> None:
        # The first flush: asleep until it is due, or until close() or a reader in this process asks for it.
        self._hurry.wait(max(0.0, self._first_flush - time.monotonic()))
        stopping = self._gather(None)
        if stopping is None:
            return
        self._flush(ending=stopping)
        self._first_flushed()
        while not (stopping or self._stop_spilled):
            try:
                item = self._queue.get(timeout=self._until_beat())  # asleep until an event arrives
            except queue.Empty:
                self._flush()  # no events: the heartbeat alone
                continue
            if item is not _STOP:
                # Asleep while the batch gathers (close() ends the wait): one wake-up per batch, not one
                # per event, so the event loop's thread keeps the interpreter lock while a run is busy.
                self._stop.wait(FLUSH_INTERVAL_S)
            stopping = self._gather(item)
            if stopping is None:
                return
            self._flush(ending=stopping)
        self._finish()

    def _gather(self, item: object) -> bool | None:
        """Take ``item`` (if any) and what is queued behind it into the pending batch, at most ``BATCH_LIMIT``
        events; whether the end-of-run marker was taken (``None``: the thread was abandoned)."""
        with self._lock:
            if self._abandoned:
                return None
            gathered = len(self._pending)
            stopping = False
            while True:
                if item is _STOP:
                    stopping = True
                    break
                if item is not None:
                    self._pending.append(encode_event(item))  # type: ignore[arg-type]
                    if len(self._pending) >= BATCH_LIMIT:
                        break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if self._spilling and not self._append_fallback(self._pending[gathered:]):
                self._spilling = False  # the file cannot be written: it holds only part of what is pending
            return stopping

    def _first_flushed(self) -> None:
        self._listed.set()
        self.store.drop_unlisted(self)

    def _until_beat(self) -> float | None:
        if self.error is not None:
            return None
        return max(0.0, self._last_beat + HEARTBEAT_INTERVAL_S - time.monotonic())

    def _flush(self, *, ending: bool = False) -> None:
        """Commit what is pending in one transaction: the first time with the session's rows, and with how the
        session ended when it is ``ending`` (the end-of-run marker was taken, by this thread or the guard)."""
        while self.error is None:
            self._began_write()
            try:
                beat = self._until_beat() == 0.0
                outcome = self._outcome if ending or self._stop_spilled else None
                wrote = bool(self._pending)
                if wrote or outcome is not None or not self._created:
                    self.written += self.store.session_rows.write_batch(
                        self._session, self._arms, self._pending, create=not self._created, reopen=self.resume,
                        beat=beat, outcome=outcome,
                    )  # fmt: skip
                    if not self._created:
                        self._created, beat = True, True  # the rows were written with the heartbeat
                    self._ended_stored = outcome is not None
                elif beat:
                    self.store.beat(self.session_id)
                if beat:
                    self._last_beat = time.monotonic()
            except StoreError as error:
                self._ended_write(ok=False)
                self._fail(error)
            except Exception as error:  # a driver or server fault this store does not know: the same rule
                self._ended_write(ok=False)
                self._fail(StoreError(f"{self.store.name} failed while storing session {self.session_id}: {error}"))
            else:
                if not self._ended_write(ok=True, wrote=wrote):
                    return
                # What the guard took from the queue during the wait is stored at once (it is in the file).
        self._to_fallback()

    def _began_write(self) -> None:
        self._written.clear()
        self._writing.set()

    def _ended_write(self, *, ok: bool, wrote: bool = False) -> bool:
        """After a write (``ok``: it went through; ``wrote``: it committed the pending batch): what the guard
        took from the queue during the wait becomes the next batch, and the fallback file is removed once it
        holds nothing uncommitted. Whether a batch is left to store now."""
        with self._lock:
            self._writing.clear()
            self._written.set()
            if wrote:
                self._pending = []
            if self._spilled:
                self._pending = [*self._pending, *self._spilled]
                self._spilled = []
            if ok and self._spilling and not self._pending and self._fallback.remove():
                self._spilling = False
            return ok and bool(self._pending) and not self._abandoned

    def _watch(self) -> None:
        """The guard: while a write waits longer than ``SPILL_AFTER_S``, keep the fallback file current."""
        while not self._ended.is_set():
            self._writing.wait()
            if self._ended.is_set():
                return
            if self._written.wait(SPILL_AFTER_S):
                continue  # the usual case: the write went through before the threshold
            while not self._written.is_set() and not self._ended.is_set():
                if self._spill():  # nothing more to keep while this write waits
                    self._written.wait()
                    break
                self._written.wait(FLUSH_INTERVAL_S)

    def _spill(self) -> bool:
        """Put what is not committed yet in the fallback file (the first time: the batch being written too).
        Returns whether the file can no longer be kept (nothing more to do while this write waits)."""
        with self._lock:
            if not self._writing.is_set() or self._abandoned or self._done or self.error is not None:
                return True
            new: list[EventTuple] = []
            while not self._stop_spilled:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    self._stop_spilled = True
                else:
                    new.append(encode_event(item))  # type: ignore[arg-type]
            first = not self._spilling
            self._spilled.extend(new)
            if self.fallback_error is not None:
                return True
            if first:
                if not self._append_fallback([*self._pending, *self._spilled]):
                    return True
                self._spilling = True
                log.info("session %s: %s is locked, keeping its events in %s too", self.session_id,
                         self.store.name, self._fallback.path)  # fmt: skip
            elif new and not self._append_fallback(new):
                self._spilling = False
                return True
            return False

    def _finish(self) -> None:
        """Record how the session ended, unless the last batch did: in the database (a separate transaction
        only when the guard took the end-of-run marker while a write waited), else in the fallback file."""
        assert self._outcome is not None
        status, finished, arms = self._outcome
        if self.error is None and not self._ended_stored:
            try:
                self.store.finish(self.session_id, status, finished, arms)
                self._ended_stored = True
            except StoreError as error:
                self._fail(error)
        with self._lock:
            if self._ended_stored:
                self._done = True
                return
            if self._abandoned:
                return
            if self._spilling or self._append_fallback(self._pending):
                self._pending = []
            self._spilling = False
            self._finish_fallback(status, finished, arms)
            self._done = True

    def _fail(self, error: StoreError) -> None:
        self.error = error
        # Reported to the user by ``problem`` (the run's one line); logged for a debugging reader only.
        log.info("session %s goes to %s: %s", self.session_id, self._fallback.path, error)

    def _to_fallback(self) -> None:
        with self._lock:
            if self._abandoned:
                return
            if self._spilling:  # the guard has put them in the file already
                self._pending, self._spilling = [], False
            elif self._append_fallback(self._pending):
                self._pending = []

    def _append_fallback(self, events: list[EventTuple]) -> bool:
        """Append events not yet saved anywhere to the fallback file (the caller holds the lock; when the file
        cannot be written, ``fallback_error`` says so and the events stay with the caller)."""
        if self.fallback_error is not None:
            return False
        try:
            if not self._fallback.started:
                self._fallback.start(self.store.key, record_to_file(self._session), self._arms)
            self._fallback.events(events)
            return True
        except OSError as error:
            self.fallback_error = error
            log.info("could not write %s: %s", self._fallback.path, error)
            return False

    def _finish_fallback(self, status: str, finished: datetime, arms: list[dict[str, Any]]) -> None:
        if self.fallback_error is None:
            try:
                self._fallback.finish(status, finished, arms)
            except OSError as error:
                self.fallback_error = error
