"""``workbench worker``: a DBOS process that dequeues and runs queued comparisons until stopped or idle.

Each worker has its own DBOS executor id (host, pid, random) and a lease row in the store
(:mod:`workbench.store.workers`) that a liveness thread renews every heartbeat. The same thread watches the
peers' rows: a peer whose renewals stood still for its lease while this worker could read the table is
taken over (one conditional update, so one peer wins) and its comparisons are put back on their queues,
where the queues' limits apply to them again. A worker that finds its own lease taken over (it was stalled)
stops its comparisons unrecorded and exits 3; so does one whose database stays unreachable for longer than
its wait (``store_busy_timeout_s``), with one line. Every database call waits out a restart with the
store's policy, and none runs on the main thread, which only waits for a signal: Ctrl+C, SIGTERM or SIGHUP
cancel the running comparisons (saved as cancelled), put them back on the queue, and exit with 128 + the
signal's number, within a few seconds even when the database does not answer.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.config import QueueSettings
from workbench.queue.dbos_gateway import QueueClient, QueueUnavailable, destroy, launch_worker, prepare_system_database
from workbench.queue.dbos_gateway import quiet_dbos as _quiet_dbos
from workbench.queue.lease import Lease
from workbench.queue.limits import queue_limits
from workbench.queue.progress import UNFINISHED, queue_key
from workbench.queue.runtime import Finished, Runtime, install
from workbench.queue.system_db import application_version, system_database_url
from workbench.queue.trust import WorkerTrust
from workbench.signals import STOP_SIGNALS, exit_code_for
from workbench.store import Store, StoreError
from workbench.store.liveness import this_host
from workbench.store.workers import RUNNING, STOPPED, WorkerInfo, WorkerLeases

SYSTEM_DB_SPARE_CONNECTIONS = 4
"""Connections to DBOS's database beyond one per running comparison (dequeueing, recovery, notifications):
DBOS's default pool of 20 per process would exhaust a server's connections long before a hundred workers."""
DRAIN_TIMEOUT_S = 120.0
"""How long a stopping worker waits for its cancelled comparisons to save their sessions."""
UNANSWERED_DRAIN_S = 2.0
"""How long it waits for them, and for its last database calls, when the database does not answer."""
STALLED_S = 2.0
"""A database call running longer than this means the database is not answering (for the stop's waits)."""
UNRELIABLE_PASS_S = 2.0
"""A pass over the peers that took longer than this (an outage, this worker stalled) restarts the watch."""


@dataclass(frozen=True)
class WorkerExit:
    code: int
    """0 when idle (``--exit-when-idle``), 3 when the database was gone too long or the lease was taken over,
    else 128 + the stop signal's number."""
    finished: int
    recovered: int
    """Comparisons this worker re-queued from dead peers."""
    parked: bool
    """Threads are left waiting (cancelled comparisons on their re-queued workflows, a database call that
    does not return): exit without joining them."""
    message: str | None = None
    """Why the worker stopped on its own (exit 3), in one line."""
    other_versions: Counter[str] = field(default_factory=Counter)
    """Comparisons left queued or running for workers of another code version, per version (when idle)."""


def new_executor_id() -> str:
    """Unique per worker process: host, pid and a random part (a pid is reused, a host may be cloned)."""
    import os
    import secrets

    return f"{this_host()}-{os.getpid()}-{secrets.token_hex(3)}"


class Worker:
    def __init__(
        self,
        store: Store,
        settings: QueueSettings,
        *,
        concurrency: int,
        exit_when_idle: bool = False,
        on_finished: Callable[[Finished], None] | None = None,
        on_recovered: Callable[[str, int], None] | None = None,
        on_note: Callable[[str], None] | None = None,
        wait_s: float | None = None,
        trust: WorkerTrust | None = None,
        on_failed: Callable[[str, str], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.concurrency = concurrency
        self.exit_when_idle = exit_when_idle
        self.executor_id = new_executor_id()
        self.url = system_database_url(store, settings.system_database)
        self.wait_s = store.busy_timeout_s if wait_s is None else wait_s
        """How long the database may stay unreachable before the worker gives up (exit 3)."""
        self.on_recovered = on_recovered
        self.on_note = on_note
        self._finished = 0
        self._recovered = 0
        self._count_lock = threading.Lock()
        self._user_on_finished = on_finished
        self.lease = Lease(settings.stale_after_s)
        self.runtime = Runtime(store, trust=trust, on_finished=self._count, on_failed=on_failed, lease=self.lease)
        self._signal = threading.Event()
        self._signum: int | None = None
        self._done = threading.Event()
        self._wake = threading.Event()
        """Set on a stop: database waits end early."""
        self._fatal: str | None = None
        self._idle = False
        self._attempt_started: float | None = None
        self._down_since: float | None = None
        self._seen: dict[str, tuple[int, float]] = {}
        self._faults = 0
        self._other_versions: Counter[str] = Counter()

    def _count(self, finished: Finished) -> None:
        with self._count_lock:
            self._finished += 1
        if self._user_on_finished is not None:
            self._user_on_finished(finished)

    def _note(self, line: str) -> None:
        if self.on_note is not None:
            self.on_note(line)

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Stop as on a signal (safe from any thread)."""
        self._signum = self._signum or signum
        self._wake.set()
        self._signal.set()

    # -- the database, waited out -------------------------------------------------------------------

    def _sleep(self, seconds: float) -> bool:
        """A retry's pause; ``True`` (give up) once the worker stops."""
        return self._wake.wait(seconds)

    def _faulted(self, waited_s: float) -> None:
        """A database call met a fault (or recovered from one after ``waited_s``)."""
        self._faults += 1
        if self._down_since is None:
            self._filter.begin()
            self._down_since = time.monotonic() - waited_s
            self._note(f"worker {self.executor_id}: the database does not answer; waiting up to {self.wait_s:g} s")

    def _answered(self) -> None:
        if self._down_since is not None:
            gone = time.monotonic() - self._down_since
            self._down_since = None
            self._filter.reset()
            self._note(f"worker {self.executor_id}: the database answers again after {gone:.1f} s")

    @property
    def answering(self) -> bool:
        """Whether the database answers (no fault pending, no call hanging)."""
        started = self._attempt_started
        hanging = started is not None and time.monotonic() - started > STALLED_S
        return self._down_since is None and not hanging

    # -- running --------------------------------------------------------------------------------------

    def run(self) -> WorkerExit:
        prepare_system_database(self.url)
        import workbench.queue.workflow  # noqa: F401  (registers the comparison workflow with DBOS)

        self._filter = _quiet_dbos()
        self.client = QueueClient(self.url, timeout_s=self.wait_s, sleep=self._sleep, on_fault=self._faulted)
        self.leases = WorkerLeases(
            self.store, queue_key(self.url), timeout_s=self.wait_s, sleep=self._sleep, on_fault=self._faulted
        )
        sent = time.monotonic()
        try:
            token = self.leases.register(self.executor_id, self.concurrency, self.settings.stale_after_s)
            self.lease.renewed(token, sent)
            self._set_worker_concurrency()
        except StoreError:
            self.client.close()
            raise
        install(self.runtime)
        previous = self._install_signals()
        engine = None
        try:
            engine = launch_worker(
                self.url, executor_id=self.executor_id, version=application_version(),
                pool_size=self.concurrency + SYSTEM_DB_SPARE_CONNECTIONS,
            )  # fmt: skip
            liveness = threading.Thread(target=self._liveness, name="workbench-liveness", daemon=True)
            liveness.start()
            self._wait()
            return self._shutdown()
        finally:
            self._done.set()
            self._restore_signals(previous)
            if self.answering:
                destroy(engine)
                self.client.close()

    def _set_worker_concurrency(self) -> None:
        names = [limits.name for limits in queue_limits(self.settings)]
        replaced = self.client.set_worker_concurrency(names, self.concurrency)
        changed = sorted(replaced)
        if changed:
            self._note(
                f"worker {self.executor_id}: {', '.join(changed)} now run up to {self.concurrency} comparisons per "
                "worker, on every worker (DBOS keeps one worker concurrency per queue)"
            )

    def _wait(self) -> None:
        """The main thread: wait for a signal, the queue to go idle, or a reason to give up."""
        while not self._signal.wait(timeout=0.25):
            if self._fatal is not None or self._idle:
                return
            started, down = self._attempt_started, self._down_since
            since = min(t for t in (started, down) if t is not None) if (started or down) else None
            if since is not None and time.monotonic() - since > self.wait_s + 5.0:
                self._fatal = (
                    f"{self.store.name} did not answer for {time.monotonic() - since:.0f} s "
                    f"(the store_busy_timeout_s setting waits longer)"
                )
                return

    def _liveness(self) -> None:
        """Renew the lease, watch the peers, notice the queue idle: every heartbeat, off the main thread."""
        beat = self.settings.heartbeat_s
        while not self._done.is_set() and self._fatal is None:
            began = time.monotonic()
            faults = self._faults
            try:
                self._attempt_started = began
                if not self.leases.renew(self.executor_id, self.lease.token):
                    self._lost()
                    return
                self.lease.renewed(self.lease.token, began)
                self._answered()
                workers = self.leases.workers(watched=True)
                reliable = self._faults == faults and time.monotonic() - began < UNRELIABLE_PASS_S
                self._watch(workers, reliable)
                if self.exit_when_idle and self.runtime.active == 0 and self._idle_here():
                    self._idle = True
                    return
            except (StoreError, QueueUnavailable) as error:
                if not self._wake.is_set():
                    self._fatal = str(error)
                return
            finally:
                self._attempt_started = None
            self._done.wait(max(0.0, beat - (time.monotonic() - began)))

    def _idle_here(self) -> bool:
        """Nothing of this code's version is queued or running; what other versions' workers are to run is
        counted (:attr:`WorkerExit.other_versions`), not waited for: this worker would never be given it."""
        waiting = Counter(w.app_version or "unknown" for w in self.client.comparisons(statuses=UNFINISHED))
        mine = waiting.pop(application_version(), 0)
        self._other_versions = waiting
        return mine == 0

    def _lost(self) -> None:
        stalled = time.monotonic() - self.lease._valid_until + self.lease.lease_s
        self.lease.lose()
        self.runtime.stopping.set()
        self.runtime.cancel_all()
        self._fatal = (
            f"its lease was taken over by a peer after {stalled:.0f} s without a renewal (stalled or cut off); "
            "its comparisons run there"
        )

    def _watch(self, workers: list[WorkerInfo], reliable: bool) -> None:
        """Take over peers whose renewals stood still for their lease while this worker watched."""
        now = time.monotonic()
        if not reliable:
            self._seen.clear()  # an outage stopped every renewal, or this worker was stalled: watch afresh
        for worker in workers:
            if worker.executor_id == self.executor_id:
                continue
            if worker.status == STOPPED:
                if self.leases.settle(worker.executor_id):
                    self._recover(worker.executor_id)
                continue
            if worker.status != RUNNING:
                continue
            seen = self._seen.get(worker.executor_id)
            if seen is None or seen[0] != worker.renewals:
                self._seen[worker.executor_id] = (worker.renewals, now)
            elif now - seen[1] > worker.lease_s and self.leases.take_over(worker.executor_id, worker.renewals):
                self._recover(worker.executor_id)

    def _recover(self, executor_id: str) -> None:
        pending = self.client.comparisons(statuses=["PENDING"], executor_id=executor_id)
        requeued = self.client.requeue(pending, held_by=executor_id)
        if requeued:
            self._recovered += len(requeued)
            if self.on_recovered is not None:
                self.on_recovered(executor_id, len(requeued))

    # -- stopping ------------------------------------------------------------------------------------------

    def _shutdown(self) -> WorkerExit:
        lost = self.lease.lost
        if self._signum is not None or self._fatal is not None:
            self.runtime.stopping.set()
        parked = self.runtime.active > 0
        self.runtime.cancel_all()
        drain = DRAIN_TIMEOUT_S if self.answering else UNANSWERED_DRAIN_S
        deadline = time.monotonic() + drain
        while self.runtime.active and time.monotonic() < deadline:
            if not self.answering:
                deadline = min(deadline, time.monotonic() + UNANSWERED_DRAIN_S)
            time.sleep(0.05)
        if self.runtime.active:
            parked = True
        if (self._fatal is None or lost) and self.answering:
            # Hand back what this worker still holds (after a take-over: only what it dequeued since).
            finished = threading.Event()
            last = threading.Thread(target=self._hand_back, args=(finished, lost), daemon=True)
            last.start()
            finished.wait(DRAIN_TIMEOUT_S if self.answering else UNANSWERED_DRAIN_S)
            parked = parked or not finished.is_set()
        else:
            parked = True  # the database is gone: DBOS's threads wait on it
        if self._fatal is not None:
            return WorkerExit(3, self._finished, self._recovered, parked, self._fatal)
        code = 0 if self._signum is None else exit_code_for(self._signum)
        return WorkerExit(code, self._finished, self._recovered, parked, other_versions=self._other_versions)

    def _hand_back(self, finished: threading.Event, lost: bool) -> None:
        with contextlib.suppress(StoreError, QueueUnavailable):
            time.sleep(0.2)  # a step that raised has handed its workflow back to DBOS
            pending = self.client.comparisons(statuses=["PENDING"], executor_id=self.executor_id)
            self.client.requeue(pending, held_by=self.executor_id)
            if not lost:
                self.leases.let_go(self.executor_id, self.lease.token)
        finished.set()

    def _install_signals(self) -> dict[int, object]:
        previous: dict[int, object] = {}
        if threading.current_thread() is not threading.main_thread():
            return previous
        for signum in (signal.SIGINT, *STOP_SIGNALS):
            with contextlib.suppress(ValueError, OSError):
                previous[signum] = signal.signal(signum, lambda number, _frame: self.stop(number))
        return previous

    @staticmethod
    def _restore_signals(previous: dict[int, object]) -> None:
        for signum, handler in previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, handler)  # type: ignore[arg-type]
