"""``bench --queue``: record a sweep in the store and put one durable DBOS workflow per comparison on a queue.

Enqueueing is idempotent: a comparison's workflow id is derived from (sweep, task, items, seed, repeat, arm
set), and DBOS returns the existing workflow for an id it already holds, so a retried enqueue never runs a
comparison twice. Nothing runs here: ``workbench worker`` processes, on any machine that reaches the same
database, dequeue the comparisons.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.bench.manifest import QUEUED, SweepStore
from workbench.bench.plan import BenchCase
from workbench.config import Settings
from workbench.queue.dbos_gateway import QueueClient, QueueUnavailable, prepare_system_database
from workbench.queue.jobs import WORKFLOW_NAME, ComparisonJob
from workbench.queue.limits import DEFAULT_QUEUE, queue_for, queue_limits
from workbench.queue.system_db import APP_NAME, application_version, system_database_url
from workbench.request import RunRequest
from workbench.signals import STOP_SIGNALS
from workbench.store import Store

__all__ = ["EnqueueInterrupted", "QueueUnavailable", "QueuedSweep", "enqueue_options", "enqueue_sweep"]


@dataclass(frozen=True)
class QueuedSweep:
    sweep_id: str
    model: str
    planned: int
    system_database: str
    queues: dict[str, int]
    """Comparisons enqueued per queue name."""
    added: int = 0
    """Comparisons this call put on the queue (the others were already there: a resumed enqueue)."""


class EnqueueInterrupted(Exception):
    """A stop signal (Ctrl+C, SIGTERM, SIGHUP) ended an enqueue between two comparisons; the sweep is recorded
    and ``bench --queue --resume SWEEP_ID`` enqueues the rest."""

    def __init__(self, sweep_id: str, queued: int, planned: int, signum: int) -> None:
        self.sweep_id, self.queued, self.planned, self.signum = sweep_id, queued, planned, signum
        super().__init__(f"{queued} of {planned} comparisons of sweep {sweep_id} are queued")


REQUEST_OPTION = "enqueue"
"""The sweep option that keeps what its jobs share (models, arms, settings), so a resumed enqueue rebuilds
the very same jobs from the stored sweep."""


def enqueue_options(workflow_id: str, queue_name: str = DEFAULT_QUEUE) -> dict[str, Any]:
    """DBOS's enqueue options for one comparison of this code's version."""
    return {
        "workflow_name": WORKFLOW_NAME, "queue_name": queue_name, "workflow_id": workflow_id,
        "app_version": application_version(), "application_name": APP_NAME,
    }  # fmt: skip


def enqueue_sweep(
    store: Store,
    cases: Sequence[BenchCase],
    *,
    request: RunRequest,
    settings: Settings,
    options: dict[str, Any],
    flags: dict[str, Any],
    sweep_id: str | None = None,
    on_enqueued: Callable[[int, int], None] | None = None,
    suite_tasks: Sequence[Any] = (),
) -> QueuedSweep:
    """Validate every case (raises :class:`~workbench.runner.BadInput`), record the sweep, enqueue its comparisons.

    ``sweep_id`` enqueues the same cases for a sweep recorded before (one whose enqueueing was cut short):
    comparisons already on the queue, running or done are found by their workflow ids and left as they are.
    A stop signal between two comparisons raises :class:`EnqueueInterrupted` (a second one acts at once).
    ``on_enqueued(added, total)`` is called after each comparison put on the queue. ``suite_tasks`` are the
    BFCL entries the cases name (:class:`~workbench.suites.bfcl_plan.SuiteTask`), checked here as they run; a
    job names only the entry's id, and its worker builds the entry from its own installed BFCL.
    """
    from workbench.bench.sweep import Sweep

    sweep = Sweep(cases, request=request, settings=settings, store=None, options=options, custom_tasks=suite_tasks)
    if sweep_id is not None:
        sweep.sweep_id = sweep_id
    url = system_database_url(store, settings.queue.system_database)
    prepare_system_database(url)
    jobs = [_job(sweep.sweep_id, position, case, request, flags) for position, case in enumerate(sweep.cases)]
    queue_names = [queue_for((m.label for m in setup.models.values()), settings.queue) for setup in sweep.setups]
    sweeps = SweepStore(store)
    added = 0
    with _StopBetween() as stop:
        if sweep_id is None:
            shared = _shared(jobs[0]) if jobs else {}
            recorded = {**options, "queued": True, REQUEST_OPTION: shared, VERSION_OPTION: application_version()}
            sweeps.start(sweep.sweep_id, sweep.model_label, len(jobs), recorded, status=QUEUED)
            if sweeps.error is not None:
                raise sweeps.error
        else:
            sweeps.sweep(sweep_id)  # raises UnknownSession for a sweep never recorded
        known = _enqueued_ids(url, sweep.sweep_id)
        with QueueClient(url, timeout_s=store.busy_timeout_s) as client:
            for limits in queue_limits(settings.queue):
                client.register_queue(
                    limits.name,
                    concurrency=limits.concurrency,
                    limiter=limits.limiter,
                    poll_s=limits.poll_s,
                    worker_concurrency=settings.queue.worker_concurrency,
                )
            for job, queue_name in zip(jobs, queue_names, strict=True):
                if stop.signum is not None:
                    raise EnqueueInterrupted(sweep.sweep_id, len(known) + added, len(jobs), stop.signum)
                if job.workflow_id in known:
                    continue
                client.enqueue(enqueue_options(job.workflow_id, queue_name), job.to_dict())
                added += 1
                if on_enqueued is not None:
                    on_enqueued(added, len(jobs))
    counts: dict[str, int] = {}
    for name in queue_names:
        counts[name] = counts.get(name, 0) + 1
    return QueuedSweep(sweep.sweep_id, sweep.model_label, len(jobs), url, counts, added)


VERSION_OPTION = "code_version"
"""The sweep option naming the code version its comparisons were enqueued for (only its workers run them)."""
SHARED_FIELDS = ("model", "arms", "arm_models", "tool_model", "code_model")
"""The request fields every comparison of a sweep shares (kept with the sweep as :data:`REQUEST_OPTION`, with
the sweep's ``settings`` flags)."""


def _shared(job: ComparisonJob) -> dict[str, Any]:
    data = job.to_dict()
    return {
        **{key: value for key, value in data["request"].items() if key in SHARED_FIELDS},
        "settings": data["settings"],
    }


def _enqueued_ids(url: str, sweep_id: str) -> set[str]:
    """The workflow ids of this sweep already on the queue (in any state)."""
    from workbench.queue.progress import QueueReader

    reader = QueueReader(url)
    try:
        return {workflow_id for workflow_id, _, _ in reader.rows([sweep_id])}
    finally:
        reader.close()


class _StopBetween:
    """Ctrl+C, SIGTERM and SIGHUP stop an enqueue between two comparisons (never inside DBOS's transaction);
    the first restores the previous handlers, so a second one acts at once."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _StopBetween:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, *STOP_SIGNALS):
                with contextlib.suppress(ValueError, OSError):
                    self._previous[signum] = signal.signal(signum, self._stop)
        return self

    def _stop(self, signum: int, _frame: object) -> None:
        self.signum = signum
        self._restore()

    def _restore(self) -> None:
        for signum, handler in self._previous.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(signum, handler)
        self._previous.clear()

    def __exit__(self, *exc: object) -> None:
        self._restore()


def _job(sweep_id: str, position: int, case: BenchCase, request: RunRequest, flags: dict[str, Any]) -> ComparisonJob:
    return ComparisonJob.of(sweep_id, position, case, request, flags)
