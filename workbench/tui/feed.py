"""Turns a stream of arm events (a live run or a replay) into batched Textual messages.

The engine calls its listeners synchronously, possibly thousands of times a second, on the thread
that runs the comparison. The feed only appends to a list; at most every ``interval_s`` it posts one
:class:`~workbench.tui.messages.ArmEvents` message with everything that arrived, and it posts the next batch
only after the screen has painted the last one (:meth:`EventFeed.delivered`), so a busy screen gets bigger
batches instead of a growing queue. Live and replayed events take exactly this path.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable

from textual.message_pump import MessagePump

from workbench.events import ArmEvent
from workbench.tui.messages import ArmEvents

FLUSH_INTERVAL_S = 0.05
MAX_BATCH = 5000
"""Events per message at most, so jumping to the end of a huge session keeps the screen responsive."""


class EventFeed:
    """Collects events (from any thread) and hands them to ``target`` as :class:`ArmEvents` messages."""

    def __init__(self, target: MessagePump, *, interval_s: float = FLUSH_INTERVAL_S) -> None:
        self.target = target
        self.interval_s = interval_s
        self._lock = threading.Lock()
        self._pending: list[ArmEvent] = []
        self._oldest = 0.0
        self._last_flush = 0.0
        self._handle: asyncio.TimerHandle | asyncio.Handle | None = None
        self._in_flight = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0

    def bind(self) -> None:
        """Call on the UI's event loop (the screen's mount): batches are posted from there."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()

    @property
    def idle(self) -> bool:
        """Nothing waiting and nothing being handled."""
        return not self._pending and not self._in_flight

    def put(self, event: ArmEvent) -> None:
        """Listener for :meth:`ComparisonRun.subscribe`; safe to call from the comparison's thread."""
        self.put_many((event,))

    def put_many(self, events: Iterable[ArmEvent]) -> None:
        with self._lock:
            was_empty = not self._pending
            self._pending.extend(events)
            if not (was_empty and self._pending):
                return
            self._oldest = time.perf_counter()
        if threading.get_ident() == self._loop_thread:
            self._schedule()
        elif self._loop is not None:
            self._loop.call_soon_threadsafe(self._schedule)

    def clear(self) -> None:
        """Drop whatever has not been posted yet (a new run or replay replaces the old one)."""
        with self._lock:
            self._pending.clear()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def delivered(self) -> None:
        """The screen painted the last batch: the next one may go."""
        self._in_flight = False
        self._schedule()

    def _schedule(self) -> None:
        if self._handle is not None or self._in_flight or not self._pending or self._loop is None:
            return
        wait = self._last_flush + self.interval_s - time.perf_counter()
        self._handle = self._loop.call_later(wait, self._flush) if wait > 0 else self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._handle = None
        if self._in_flight:
            return
        with self._lock:
            if not self._pending:
                return
            batch = self._pending[:MAX_BATCH]
            del self._pending[:MAX_BATCH]
            received = self._oldest
            self._oldest = time.perf_counter()
        self._last_flush = time.perf_counter()
        self._in_flight = True
        if not self.target.post_message(ArmEvents(batch, received)):
            self._in_flight = False
