"""Client-side deadlines for calls to a database server that stopped answering without closing anything.

A server frozen by SIGSTOP, or a paused VM on the same host, keeps its sockets open and its kernel keeps
acknowledging TCP: no server-side timeout runs, keepalives and ``tcp_user_timeout`` never fire, and psycopg
waits on the socket for ever. :func:`attempt` gives the calls of one thread a deadline: every connection the
pool lends that thread meanwhile is watched (:func:`watch`, from the engine's checkout event), and when the
deadline passes a watchdog thread shuts those sockets down. The blocked call then fails at once with a
dropped connection, which the store treats as the outage it is (``Store.write`` waits it out or gives up).

The sockets are only shut down, never closed here: psycopg still owns their descriptors.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)


class Attempt:
    """One bounded attempt: the connections it uses, and whether its deadline passed."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.expired = False
        self.done = False
        self._connections: list[Any] = []
        self._lock = threading.Lock()

    def watch(self, connection: Any) -> None:
        with self._lock:
            if self.expired:
                _cut(connection)
            else:
                self._connections.append(connection)

    def expire(self) -> None:
        with self._lock:
            if self.done:
                return
            self.expired = True
            connections, self._connections = self._connections, []
        for connection in connections:
            _cut(connection)

    def finish(self) -> None:
        with self._lock:
            self.done = True
            self._connections = []


def _cut(connection: Any) -> None:
    """Shut a psycopg connection's socket down: a call blocked on it returns with "connection lost"."""
    try:
        descriptor = connection.pgconn.socket
        with socket.socket(fileno=socket.dup(descriptor)) as handle:
            handle.shutdown(socket.SHUT_RDWR)
        log.info("cut connection %s: no answer before its deadline", descriptor)
    except Exception as error:  # already closed, or not a socket
        log.debug("could not cut a connection: %s", error)


class _Watchdog:
    """One daemon thread that expires attempts when their deadlines pass (started on first use)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Attempt]] = []
        self._order = itertools.count()
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, attempt: Attempt) -> None:
        with self._wake:
            heapq.heappush(self._heap, (attempt.deadline, next(self._order), attempt))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="workbench-store-deadline", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)
                if not self._heap:
                    self._wake.wait()
                    continue
                wait_s = self._heap[0][0] - time.monotonic()
                if wait_s > 0:
                    self._wake.wait(wait_s)
                    continue
                _, _, due = heapq.heappop(self._heap)
            due.expire()


_watchdog = _Watchdog()
_local = threading.local()


@contextlib.contextmanager
def attempt(deadline: float) -> Iterator[Attempt]:
    """Bound this thread's database calls inside the block by ``deadline`` (a ``time.monotonic()`` moment)."""
    current = Attempt(deadline)
    outer = getattr(_local, "attempt", None)
    _local.attempt = current
    _watchdog.add(current)
    try:
        yield current
    finally:
        current.finish()
        _local.attempt = outer


def watch(connection: Any) -> None:
    """Put a connection lent to this thread under its current attempt's deadline (if it has one)."""
    current: Attempt | None = getattr(_local, "attempt", None)
    if current is not None:
        current.watch(connection)


def time_left() -> float | None:
    """Seconds until this thread's current attempt's deadline (``None`` outside an attempt)."""
    current: Attempt | None = getattr(_local, "attempt", None)
    return None if current is None else max(0.0, current.deadline - time.monotonic())


def expired() -> bool:
    """Whether this thread's current attempt ran out of time."""
    current: Attempt | None = getattr(_local, "attempt", None)
    return current is not None and current.expired
