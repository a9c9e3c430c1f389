"""Writes a live session to the store from a background thread, a few times a second.

The thread creates the session's rows, then commits whatever events have arrived every
``FLUSH_INTERVAL_S`` (or sooner when a batch fills up), and finally records how the session ended. The
event loop only appends to a queue, so it never waits on disk, and a process killed mid-run leaves every
event up to a fraction of a second before the kill.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence

from workbench.events import ArmEvent
from workbench.store.store import ArmInfo, Store
from workbench.store.tables import ArmRow, SessionRow

FLUSH_INTERVAL_S = 0.25
"""How long the writer gathers events before it commits them: a few commits a second keep a killed run's
loss to a quarter of a second, and each commit (a transaction, and the interpreter lock for its rows) costs
the run far more than its rows do."""
BATCH_LIMIT = 2000

log = logging.getLogger(__name__)

_STOP = object()


class EventWriter:
    def __init__(self, store: Store, session: SessionRow, arms: Sequence[ArmRow]) -> None:
        self.store = store
        self.session_id = session.id
        self.written = 0
        self.error: BaseException | None = None
        self._session, self._arms = session, list(arms)
        self._outcome: tuple[str, Sequence[ArmInfo]] | None = None
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"workbench-writer-{session.id}", daemon=True)
        self._thread.start()

    def put(self, event: ArmEvent) -> None:
        self._queue.put(event)

    def close(self, status: str, arms: Sequence[ArmInfo]) -> None:
        """Write everything still queued, record how the session ended, and stop the thread."""
        self._outcome = (status, arms)
        self._stop.set()
        self._queue.put(_STOP)
        self._thread.join()
        if self.error is None:
            self.store.finish_session(self.session_id, status, arms)

    def _run(self) -> None:
        try:
            self.store.create_session(self._session, self._arms)
        except Exception as error:
            self.error = error
            log.error("could not store session %s: %s", self.session_id, error)
        stopping = False
        while not stopping:
            item = self._queue.get()  # asleep until an event arrives
            if item is not _STOP:
                # Asleep while the batch gathers (close() ends the wait): one wake-up per batch, not one
                # per event, so the event loop's thread keeps the interpreter lock while a run is busy.
                self._stop.wait(FLUSH_INTERVAL_S)
            batch: list[ArmEvent] = []
            while True:
                if item is _STOP:
                    stopping = True
                    break
                batch.append(item)  # type: ignore[arg-type]
                if len(batch) >= BATCH_LIMIT:
                    break
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            self._write(batch)

    def _write(self, batch: list[ArmEvent]) -> None:
        if not batch or self.error is not None:
            return
        try:
            self.written += self.store.append_events(self.session_id, batch)
        except Exception as error:  # keep the run going; the session will be short of these events
            self.error = error
            log.error("could not store %d events of session %s: %s", len(batch), self.session_id, error)
