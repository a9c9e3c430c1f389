"""``workbench worker``: a DBOS process that dequeues and runs queued comparisons until stopped or idle.

Each worker has its own DBOS executor id (host, pid, random) and a heartbeat row
(:mod:`workbench.queue.workers`). Every heartbeat it also looks for workers that went silent (killed,
their machine lost) and re-queues the comparisons they held through DBOS's recovery, so another live worker
runs them. A stop signal (Ctrl+C, SIGTERM, SIGHUP) cancels the comparisons it runs (their sessions are
saved as cancelled, as an in-process sweep's are), puts them back on the queue, and exits with 128 + the
signal's number.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from workbench.config import QueueSettings
from workbench.queue.enqueue import prepare_system_database, quiet_dbos
from workbench.queue.limits import DEFAULT_QUEUE, PROVIDER_QUEUE_PREFIX
from workbench.queue.progress import QueueReader
from workbench.queue.runtime import Finished, Runtime, install
from workbench.queue.system_db import APP_NAME, application_version, system_database_url, system_engine
from workbench.queue.trust import WorkerTrust
from workbench.queue.version import waiting_by_version
from workbench.queue.workers import DEAD, RUNNING, STOPPED, WorkerTable, new_executor_id
from workbench.signals import STOP_SIGNALS, exit_code_for
from workbench.store import Store

SYSTEM_DB_SPARE_CONNECTIONS = 4
"""Connections to DBOS's database beyond one per running comparison (dequeueing, recovery, notifications):
DBOS's default pool of 20 per process would exhaust a server's connections long before a hundred workers."""
DRAIN_TIMEOUT_S = 120.0
"""How long a stopping worker waits for its cancelled comparisons to save their sessions."""


@dataclass(frozen=True)
class WorkerExit:
    code: int
    """0 when idle (``--exit-when-idle``), else 128 + the stop signal's number."""
    finished: int
    recovered: int
    """Comparisons this worker re-queued from dead peers."""
    parked: bool
    """Cancelled comparisons' DBOS threads still wait on their re-queued workflows: exit without joining them."""
    other_versions: Counter[str] = field(default_factory=Counter)
    """Comparisons left queued or running for workers of another code version, per version (when idle)."""


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
        trust: WorkerTrust | None = None,
        on_failed: Callable[[str, str], None] | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.concurrency = concurrency
        self.exit_when_idle = exit_when_idle
        self.executor_id = new_executor_id()
        self.url = system_database_url(store, settings.system_database)
        self.on_recovered = on_recovered
        self._finished = 0
        self._recovered = 0
        self._count_lock = threading.Lock()
        self._user_on_finished = on_finished
        self.runtime = Runtime(store, trust=trust, on_finished=self._count, on_failed=on_failed)
        self._signal = threading.Event()
        self._signum: int | None = None

    def _count(self, finished: Finished) -> None:
        with self._count_lock:
            self._finished += 1
        if self._user_on_finished is not None:
            self._user_on_finished(finished)

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Stop as on a signal (safe from any thread)."""
        self._signum = self._signum or signum
        self._signal.set()

    def run(self) -> WorkerExit:
        prepare_system_database(self.url)
        quiet_dbos()
        from dbos import DBOS

        import workbench.queue.workflow  # noqa: F401  (registers the comparison workflow with DBOS)
        from workbench.queue.serialization import SERIALIZER, refuse_pickle

        refuse_pickle()

        engine = system_engine(self.url)
        table = WorkerTable(engine)
        table.create()
        table.register(self.executor_id, self.concurrency)
        install(self.runtime)
        _pin_worker_concurrency(self.concurrency)
        previous = self._install_signals()
        DBOS(
            config={
                "name": APP_NAME, "system_database_url": self.url, "executor_id": self.executor_id,
                "application_version": application_version(), "log_level": "ERROR", "enable_otlp": False,
                "run_admin_server": False, "sys_db_pool_size": self.concurrency + SYSTEM_DB_SPARE_CONNECTIONS,
                "serializer": SERIALIZER,
            }  # type: ignore[typeddict-unknown-key]
        )  # fmt: skip
        reader = QueueReader(self.url)
        try:
            DBOS.launch()
            self._loop(table, reader)
            return self._shutdown(table)
        finally:
            reader.close()
            self._restore_signals(previous)
            with contextlib.suppress(Exception):
                DBOS.destroy()
            engine.dispose()

    def _loop(self, table: WorkerTable, reader: QueueReader) -> None:
        beat = self.settings.heartbeat_s
        while not self._signal.wait(timeout=min(beat, 0.5)):
            now = time.monotonic()
            if now - getattr(self, "_last_beat", 0.0) < beat:
                continue
            self._last_beat = now
            table.beat(self.executor_id)
            self._recover_dead_peers(table, reader)
            if self.exit_when_idle and self.runtime.active == 0 and self._idle_here(reader):
                return

    def _idle_here(self, reader: QueueReader) -> bool:
        """Nothing of this code's version is queued or running; what other versions' workers are to run is
        counted (:attr:`WorkerExit.other_versions`), not waited for: this worker would never be given it."""
        if not reader.unfinished():
            return True
        waiting = waiting_by_version(self.url, APP_NAME)
        mine = waiting.pop(application_version(), 0)
        self._other_versions = waiting
        return mine == 0

    def _recover_dead_peers(self, table: WorkerTable, reader: QueueReader) -> None:
        """Re-queue the comparisons held by executors that are not live: silent past ``stale_after_s``, stopped
        or dead. (A worker's row is written before it launches DBOS, so every live executor has one.)"""
        from dbos import DBOS

        now = datetime.now(UTC)
        workers = table.workers()
        live = {
            w.executor_id for w in workers if w.status == RUNNING and not w.is_stale(now, self.settings.stale_after_s)
        }
        for worker in workers:
            if worker.executor_id not in live and worker.status == RUNNING:
                table.mark(worker.executor_id, DEAD, only_if=RUNNING)
        holders = {executor for _, status, executor in reader.unfinished() if status == "PENDING" and executor}
        for executor_id in sorted(holders - live - {self.executor_id}):
            handles = DBOS._recover_pending_workflows([executor_id])
            if handles:
                self._recovered += len(handles)
                if self.on_recovered is not None:
                    self.on_recovered(executor_id, len(handles))

    def _shutdown(self, table: WorkerTable) -> WorkerExit:
        from dbos import DBOS

        parked = False
        if self._signum is not None:
            _pin_worker_concurrency(0)  # take nothing new
            self.runtime.stopping.set()
            parked = self.runtime.active > 0
            self.runtime.cancel_all()
            deadline = time.monotonic() + DRAIN_TIMEOUT_S
            while self.runtime.active and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)  # a step that raised has handed its workflow back to DBOS
            DBOS._recover_pending_workflows([self.executor_id])
        table.mark(self.executor_id, STOPPED)
        code = 0 if self._signum is None else exit_code_for(self._signum)
        return WorkerExit(code, self._finished, self._recovered, parked, getattr(self, "_other_versions", Counter()))

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


_pinned: list[int] = []


def _pin_worker_concurrency(concurrency: int) -> None:
    """Make this process read the workbench's queues with its own worker concurrency.

    DBOS keeps a queue's ``worker_concurrency`` in the queue's row, shared by every worker; a worker's
    ``--concurrency`` is its own (a GPU box runs more than a laptop), so this process's reads of those rows
    carry its own value. 0 stops it taking new comparisons while it shuts down.
    """
    from dbos._sys_db import SystemDatabase

    if not _pinned:
        get_queue, list_queues = SystemDatabase.get_queue, SystemDatabase.list_queues

        def pin(queue):  # type: ignore[no-untyped-def]
            if queue is not None and (queue.name == DEFAULT_QUEUE or queue.name.startswith(PROVIDER_QUEUE_PREFIX)):
                queue._worker_concurrency = _pinned[0]
            return queue

        SystemDatabase.get_queue = lambda self, *a, **k: pin(get_queue(self, *a, **k))  # type: ignore[method-assign]
        SystemDatabase.list_queues = lambda self, *a, **k: [pin(q) for q in list_queues(self, *a, **k)]  # type: ignore[method-assign]
        _pinned.append(concurrency)
    _pinned[0] = concurrency
