"""The queue's workers and their leases, in the session store's own schema (the ``queue_workers`` table).

A ``workbench worker`` holds a lease on the comparisons it runs and renews it every heartbeat. A peer takes
the lease over only once it has watched the worker's ``renewals`` stand still for the worker's ``lease_s``
while the peer itself could read the table (so a database restart, which stops every renewal, kills no
one), and it takes it over by moving ``token`` on in one conditional update: of many peers, one wins and
re-queues the comparisons, and the old holder's renewals fail from then on, so it learns it was fenced out.
Every call waits out a restart with the store's own policy (:class:`workbench.store.retry.WaitPolicy`).
"""

from __future__ import annotations

import dataclasses
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from sqlalchemy import Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from workbench.store.database import database_now, seconds_since
from workbench.store.schema import WorkerRow
from workbench.store.store import Store

R = TypeVar("R")
RUNNING, STOPPED, DEAD, LEFT = "running", "stopped", "dead", "left"
"""A worker runs, stopped (it handed its comparisons back), was taken for dead (a peer took its lease over),
or left: stopped, and a peer has since made sure it left nothing behind."""
_TABLE = WorkerRow.__table__  # type: ignore[attr-defined]


@dataclass(frozen=True)
class WorkerInfo:
    executor_id: str
    host: str
    pid: int
    started: datetime
    silent_s: float
    """Seconds since its last renewal, by the database's clock."""
    renewals: int
    lease_s: float
    token: int
    concurrency: int
    status: str

    @property
    def silent(self) -> bool:
        """Running, but not renewed for its lease's length (it may be stalled, cut off or gone)."""
        return self.status == RUNNING and self.silent_s > self.lease_s

    @property
    def state(self) -> str:
        """What ``bench --list`` shows: running, silent, stopped or dead."""
        if self.status == LEFT:
            return STOPPED
        return "silent" if self.silent else self.status


class WorkerLeases:
    """The lease rows of the workers that share one queue (``queue``: its system database, without password)."""

    def __init__(
        self,
        store: Store,
        queue: str,
        *,
        timeout_s: float | None = None,
        sleep: Callable[[float], object] = time.sleep,
        on_fault: Callable[[float], None] | None = None,
    ) -> None:
        self.store = store
        self.queue = queue
        self.timeout_s = store.busy_timeout_s if timeout_s is None else timeout_s
        self._sleep = sleep
        self._on_fault = on_fault
        self._policy = dataclasses.replace(store.policy, wait_s=self.timeout_s)
        """The store's own wait policy (a frozen server's call is cut, not waited on), with this wait."""

    @property
    def engine(self) -> Engine:
        return self.store.engine

    def _call(self, action: Callable[[], R], doing: str) -> R:
        return self._policy.run(action, doing, on_fault=self._on_fault, sleep=self._sleep)

    def register(self, executor_id: str, concurrency: int, lease_s: float) -> int:
        """A new worker's row; returns its lease's token."""
        dialect = self.engine.dialect.name

        def add() -> int:
            with self.engine.begin() as connection:
                connection.execute(
                    insert(_TABLE).values(
                        executor_id=executor_id, queue=self.queue, host=socket.gethostname(), pid=os.getpid(),
                        started=database_now(dialect), renewed=database_now(dialect), renewals=0,
                        lease_s=lease_s, token=1, concurrency=concurrency, status=RUNNING,
                    )
                )  # fmt: skip
            return 1

        try:
            return self._call(add, f"registering worker {executor_id}")
        except IntegrityError:  # registered before: an attempt whose answer was lost to a dropped connection
            return self.rejoin(executor_id)

    def renew(self, executor_id: str, token: int) -> bool:
        """Renew the lease; ``False`` when a peer took it over (the token moved on) or it was let go."""
        statement = (
            update(_TABLE)
            .where(_TABLE.c.executor_id == executor_id, _TABLE.c.token == token, _TABLE.c.status == RUNNING)
            .values(renewals=_TABLE.c.renewals + 1, renewed=database_now(self.engine.dialect.name))
        )
        return self._update(statement, f"renewing the lease of worker {executor_id}")

    def rejoin(self, executor_id: str) -> int:
        """Take a fresh lease after a peer took the old one over (a stalled worker that came back)."""
        statement = (
            update(_TABLE)
            .where(_TABLE.c.executor_id == executor_id)
            .values(
                token=_TABLE.c.token + 1, status=RUNNING, renewals=_TABLE.c.renewals + 1,
                renewed=database_now(self.engine.dialect.name),
            )
            .returning(_TABLE.c.token)
        )  # fmt: skip

        def run() -> int:
            with self.engine.begin() as connection:
                return int(connection.execute(statement).scalar_one())

        return self._call(run, f"renewing the lease of worker {executor_id}")

    def take_over(self, executor_id: str, renewals: int) -> bool:
        """Declare a silent worker dead, if it still is: its renewals stand at ``renewals`` and it is running.
        ``True`` for the one peer whose update won (it re-queues the worker's comparisons)."""
        statement = (
            update(_TABLE)
            .where(_TABLE.c.executor_id == executor_id, _TABLE.c.renewals == renewals, _TABLE.c.status == RUNNING)
            .values(status=DEAD, token=_TABLE.c.token + 1)
        )
        return self._update(statement, f"taking over the lease of worker {executor_id}")

    def let_go(self, executor_id: str, token: int, status: str = STOPPED) -> bool:
        """A worker that stops gives its lease up (only its own: not after a take-over)."""
        statement = (
            update(_TABLE).where(_TABLE.c.executor_id == executor_id, _TABLE.c.token == token).values(status=status)
        )
        return self._update(statement, f"stopping worker {executor_id}")

    def settle(self, executor_id: str) -> bool:
        """A stopped worker is looked at once more by one peer (which re-queues what it may have left: a
        comparison it dequeued while it stopped); ``True`` for that peer."""
        statement = (
            update(_TABLE).where(_TABLE.c.executor_id == executor_id, _TABLE.c.status == STOPPED).values(status=LEFT)
        )
        return self._update(statement, f"settling stopped worker {executor_id}")

    def _update(self, statement: object, doing: str) -> bool:
        def run() -> bool:
            with self.engine.begin() as connection:
                return connection.execute(statement).rowcount > 0  # type: ignore[call-overload]

        return self._call(run, doing)

    def workers(self, *, watched: bool = False) -> list[WorkerInfo]:
        """Every worker of this queue, oldest first (``watched``: only those a peer still watches, running or
        stopped, not the dead and the left that accumulate over time)."""
        silent = seconds_since(_TABLE.c.renewed, self.engine.dialect.name)
        statement = select(_TABLE, silent.label("silent_s")).where(_TABLE.c.queue == self.queue)
        if watched:
            statement = statement.where(_TABLE.c.status.in_((RUNNING, STOPPED)))

        def read() -> list[WorkerInfo]:
            with self.engine.connect() as connection:
                rows = connection.execute(statement.order_by(_TABLE.c.started)).all()
            return [
                WorkerInfo(
                    r.executor_id,
                    r.host,
                    r.pid,
                    r.started,
                    float(r.silent_s or 0.0),
                    r.renewals,
                    r.lease_s,
                    r.token,
                    r.concurrency,
                    r.status,
                )
                for r in rows
            ]

        return self._call(read, "reading the queue's workers")
