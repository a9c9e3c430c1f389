"""Writes a live session to the store from a background thread, a few times a second.

The thread creates the session's rows, then commits whatever events have arrived every
``FLUSH_INTERVAL_S`` (or sooner when a batch fills up), and finally records how the session ended. The
event loop only appends to a queue, so it never waits on disk, and a process killed mid-run leaves every
event up to a fraction of a second before the kill. Every ``HEARTBEAT_INTERVAL_S`` the thread refreshes
the session's heartbeat (with a batch of events, or alone while the run waits on its model), so readers on
other hosts of a shared database can tell a live writer from a dead one.

Events stay in memory until they are committed. A busy database is waited out (``Store.busy_timeout_s``);
when the database cannot take them (disk full, read-only, damaged, locked for too long), the session and
every event not yet committed go to a fallback file instead (:mod:`workbench.store.fallback`), and so does
everything after. ``close`` then says the session was not stored, why, and where its events are.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
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
    ) -> None:
        self.store = store
        self.session_id = comparison.session_id
        self.written = 0
        """Events committed to the database."""
        self.error: StoreError | None = None
        """The fault that sent this session to the fallback file (``None`` while the database takes it)."""
        self.fallback_error: OSError | None = None
        self._session, self._arms = session_record(comparison, models, modes, pid=pid)
        self._created = False
        self._last_beat = 0.0
        self._pending: list[EventTuple] = []
        self._fallback = FallbackFile(store.unsaved_dir, self.session_id)
        self._outcome: tuple[str, datetime, list[dict[str, Any]]] | None = None
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"workbench-writer-{self.session_id}", daemon=True)
        self._thread.start()

    @property
    def stored(self) -> bool:
        """Whether every event and the session's end reached the database."""
        return self.error is None

    @property
    def fallback_path(self) -> Path | None:
        return self._fallback.path if self._fallback.started else None

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

    def close(self, comparison: Comparison) -> None:
        """Write everything still queued, record how the session ended, stop the thread, and mark the
        comparison ``stored`` (or not, with ``store_error`` saying why)."""
        self._outcome = (comparison.status, datetime.now(UTC), arm_outcomes(comparison, self._arms))
        self._stop.set()
        self._queue.put(_STOP)
        self._thread.join()
        comparison.stored = self.stored
        comparison.store_error = self.problem

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        self._flush()  # the session's rows at once: a session list shows the run from its start
        stopping = False
        while not stopping:
            try:
                item = self._queue.get(timeout=self._until_beat())  # asleep until an event arrives
            except queue.Empty:
                self._flush()  # no events: the heartbeat alone
                continue
            if item is not _STOP:
                # Asleep while the batch gathers (close() ends the wait): one wake-up per batch, not one
                # per event, so the event loop's thread keeps the interpreter lock while a run is busy.
                self._stop.wait(FLUSH_INTERVAL_S)
            while True:
                if item is _STOP:
                    stopping = True
                    break
                self._pending.append(encode_event(item))  # type: ignore[arg-type]
                if len(self._pending) >= BATCH_LIMIT:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            self._flush()
        self._finish()

    def _until_beat(self) -> float | None:
        if self.error is not None:
            return None
        return max(0.0, self._last_beat + HEARTBEAT_INTERVAL_S - time.monotonic())

    def _flush(self) -> None:
        if self.error is None:
            try:
                beat = self._until_beat() == 0.0
                if not self._created:
                    self.store.insert_session(self._session, self._arms, beat=True)
                    self._created, beat = True, False
                    self._last_beat = time.monotonic()
                if self._pending:
                    self.written += self.store.insert_events(self.session_id, self._pending, beat=beat)
                    self._pending = []
                elif beat:
                    self.store.beat(self.session_id)
                if beat:
                    self._last_beat = time.monotonic()
                return
            except StoreError as error:
                self._fail(error)
            except Exception as error:  # a driver or server fault this store does not know: the same rule
                self._fail(StoreError(f"{self.store.name} failed while storing session {self.session_id}: {error}"))
        self._to_fallback()

    def _finish(self) -> None:
        assert self._outcome is not None
        status, finished, arms = self._outcome
        if self.error is None:
            try:
                self.store.finish(self.session_id, status, finished, arms)
                return
            except StoreError as error:
                self._fail(error)
        self._to_fallback()
        if self.fallback_error is None:
            try:
                self._fallback.finish(status, finished, arms)
            except OSError as error:
                self.fallback_error = error

    def _fail(self, error: StoreError) -> None:
        self.error = error
        # Reported to the user by ``problem`` (the run's one line); logged for a debugging reader only.
        log.info("session %s goes to %s: %s", self.session_id, self._fallback.path, error)

    def _to_fallback(self) -> None:
        """Append the events not yet saved anywhere to the fallback file (kept in memory if that fails too)."""
        if self.fallback_error is not None:
            return
        try:
            if not self._fallback.started:
                self._fallback.start(self.store.key, record_to_file(self._session), self._arms)
            self._fallback.events(self._pending)
            self._pending = []
        except OSError as error:
            self.fallback_error = error
            log.info("could not write %s: %s", self._fallback.path, error)
