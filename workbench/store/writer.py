"""Writes a live session's events to the store from a background thread, a few times a second.

The event loop only appends to a queue; the thread commits whatever has arrived every
``FLUSH_INTERVAL_S`` (or sooner when a batch fills up), so a process killed mid-run leaves every event
up to a fraction of a second before the kill, and the loop never waits on disk.
"""

from __future__ import annotations

import logging
import queue
import threading
import time

from workbench.events import ArmEvent
from workbench.store.store import Store

FLUSH_INTERVAL_S = 0.2
BATCH_LIMIT = 2000

log = logging.getLogger(__name__)

_STOP = object()


class EventWriter:
    def __init__(self, store: Store, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.written = 0
        self.error: BaseException | None = None
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"workbench-writer-{session_id}", daemon=True)
        self._thread.start()

    def put(self, event: ArmEvent) -> None:
        self._queue.put(event)

    def close(self) -> None:
        """Write everything still queued and stop the thread."""
        self._queue.put(_STOP)
        self._thread.join()

    def _run(self) -> None:
        stopping = False
        while not stopping:
            item = self._queue.get()
            deadline = time.monotonic() + FLUSH_INTERVAL_S
            batch: list[ArmEvent] = []
            while True:
                if item is _STOP:
                    stopping = True
                    break
                batch.append(item)  # type: ignore[arg-type]
                remaining = deadline - time.monotonic()
                if len(batch) >= BATCH_LIMIT or remaining <= 0:
                    break
                try:
                    item = self._queue.get(timeout=remaining)
                except queue.Empty:
                    break
            self._write(batch)

    def _write(self, batch: list[ArmEvent]) -> None:
        if not batch:
            return
        try:
            self.written += self.store.append_events(self.session_id, batch)
        except Exception as error:  # keep the run going; the session will be short of these events
            self.error = error
            log.error("could not store %d events of session %s: %s", len(batch), self.session_id, error)
