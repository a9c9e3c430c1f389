"""The one rule for a database call: a deadline, a bounded retry, and a one-line error when the wait is over.

:class:`WaitPolicy` runs one transaction, waiting out a fault that waiting can help (a lock, a dropped
connection, a server restarting; :data:`~workbench.store.faults.WAITABLE`) with backoff for ``wait_s`` of wall
time, counted from the first attempt that failed or stalled. On a server every attempt runs under a
:func:`workbench.store.deadline.attempt`, so one that never returns (a frozen server) is cut when the wait
runs out and fails as unreachable. The store's writes use it; so can any other engine built with
:func:`workbench.store.postgres.connect_args` and :func:`workbench.store.postgres.bound_calls` (a worker's).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TypeVar

from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from workbench.store import deadline
from workbench.store.faults import WAITABLE, Fault, StoreError, fault_kind, reason, store_error

R = TypeVar("R")

ANSWER_GRACE_S = 1.0
"""How long past its wait a call to a server may still answer before it is cut as stalled."""


@dataclass(frozen=True)
class WaitPolicy:
    """How calls to one database wait: ``wait_s`` in all (``store_busy_timeout_s``), ``lock_wait_s`` for a lock
    per try; ``server`` puts each attempt under a client-side deadline (SQLite bounds its own lock wait)."""

    name: str
    """The database as messages name it (a path, or the URL with its password masked)."""
    wait_s: float
    lock_wait_s: float
    server: bool

    def run(
        self,
        action: Callable[[], R],
        doing: str,
        *,
        waitable: frozenset[Fault] = WAITABLE,
        on_wait: Callable[[float], None] | None = None,
        on_fault: Callable[[float], None] | None = None,
        sleep: Callable[[float], object] = time.sleep,
    ) -> R:
        """``action()`` (one transaction), retried with backoff while its fault is ``waitable`` and the wait
        lasts; ``on_wait(seconds)`` hears how long it waited. Any other fault raises a :class:`StoreError` at
        once, and so does the end of the wait (its message says which fault, and the setting to change).

        ``on_fault(seconds)`` hears of each waitable failure only (a worker announcing an outage), and
        ``sleep`` may end the wait early by returning a true value (a worker told to stop)."""
        waiting_since: float | None = None
        delay = 0.02
        while True:
            started = time.monotonic()
            with self.bounded(started if waiting_since is None else waiting_since, started=started) as attempt:
                try:
                    result = action()
                except (DBAPIError, PoolTimeout, sqlite3.Error, OSError) as error:
                    failure = error
                else:
                    if waiting_since is not None and on_wait is not None:
                        on_wait(time.monotonic() - waiting_since)
                    return result
            stalled = attempt is not None and attempt.expired
            kind: Fault = "unreachable" if stalled else fault_kind(failure)
            if kind not in waitable and not stalled:
                raise store_error(failure, self.name, doing) from None
            waiting_since = started if waiting_since is None else waiting_since
            waited = time.monotonic() - waiting_since
            if on_wait is not None:
                on_wait(waited)
            if on_fault is not None:
                on_fault(waited)
            if stalled or waited >= self.wait_s or sleep(min(delay, self.wait_s - waited + 0.01)):
                raise StoreError(waited_too_long(kind, self.name, self.wait_s, doing, failure, stalled=stalled), kind)
            delay = min(delay * 2, 0.5)

    def bounded(
        self, since: float, wait_s: float | None = None, *, started: float | None = None
    ) -> AbstractContextManager[deadline.Attempt | None]:
        """On a server, a deadline for this thread's calls: ``wait_s`` (default: the policy's) after ``since``,
        never before the attempt (begun at ``started``) had its lock wait, plus ``ANSWER_GRACE_S``, so a live
        server always answers (even "lock not available") before the client gives up on it."""
        if not self.server:
            return nullcontext()
        at = since + (self.wait_s if wait_s is None else wait_s)
        if started is not None:
            at = max(at, started + self.lock_wait_s)
        return deadline.attempt(at + ANSWER_GRACE_S)


def waited_too_long(
    kind: Fault, name: str, timeout_s: float, doing: str, error: BaseException, *, stalled: bool = False
) -> str:
    """The one line for a wait that ran out: a server that did not answer, a lock, or a server not reached."""
    if stalled:
        return (
            f"{name} did not answer for {timeout_s:g} s while {doing}; "
            "is the server running (or stopped, or overloaded)? (the store_busy_timeout_s setting waits longer)"
        )
    if kind == "busy":
        return (
            f"{name} stayed locked by another process for {timeout_s:g} s while {doing}; "
            "close the program holding it (the store_busy_timeout_s setting waits longer)"
        )
    return (
        f"{name} could not be reached for {timeout_s:g} s while {doing} ({reason(error)}); "
        "is the server running? (the store_busy_timeout_s setting waits longer)"
    )
