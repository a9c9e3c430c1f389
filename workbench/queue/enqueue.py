"""``bench --queue``: record a sweep in the store and put one durable DBOS workflow per comparison on a queue.

Enqueueing is idempotent: a comparison's workflow id is derived from (sweep, task, items, seed, repeat, arm
set), and DBOS returns the existing workflow for an id it already holds, so a retried enqueue never runs a
comparison twice. Nothing runs here: ``workbench worker`` processes, on any machine that reaches the same
database, dequeue the comparisons.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.bench.manifest import QUEUED, SweepLog
from workbench.bench.plan import BenchCase
from workbench.config import Settings
from workbench.locations import shown_url
from workbench.queue.jobs import WORKFLOW_NAME, ComparisonJob
from workbench.queue.limits import queue_for, queue_limits
from workbench.queue.system_db import APP_NAME, application_version, system_database_url
from workbench.runner import RunRequest
from workbench.store import Store


class QueueUnavailable(Exception):
    """DBOS's system database cannot be created or reached; the message says why."""


@dataclass(frozen=True)
class QueuedSweep:
    sweep_id: str
    model: str
    planned: int
    system_database: str
    queues: dict[str, int]
    """Comparisons enqueued per queue name."""


def quiet_dbos() -> None:
    """DBOS logs its own progress at INFO; only its errors belong on the user's terminal."""
    logging.getLogger("dbos").setLevel(logging.ERROR)


def prepare_system_database(url: str) -> None:
    """Create or migrate DBOS's tables (its own schema on PostgreSQL, its own file for SQLite)."""
    quiet_dbos()
    from dbos import DBOS

    try:
        DBOS.migrate(url)
    except Exception as error:  # connection refused, permission denied, a damaged file
        problem = f"the queue's database {shown_url(url)} cannot be prepared: {_first_line(error)}"
        raise QueueUnavailable(problem) from None


def enqueue_sweep(
    store: Store,
    cases: Sequence[BenchCase],
    *,
    request: RunRequest,
    settings: Settings,
    options: dict[str, Any],
    flags: dict[str, Any],
    sweep_id: str | None = None,
) -> QueuedSweep:
    """Validate every case (raises :class:`~workbench.runner.BadInput`), record the sweep, enqueue its comparisons.

    ``sweep_id`` enqueues the same cases for a sweep recorded before (one whose enqueueing was cut short):
    comparisons already on the queue, running or done are found by their workflow ids and left as they are.
    """
    from workbench.bench.sweep import Sweep

    sweep = Sweep(cases, request=request, settings=settings, store=None, options=options)  # validates every case
    if sweep_id is not None:
        sweep.sweep_id = sweep_id
    url = system_database_url(store, settings.queue.system_database)
    prepare_system_database(url)
    from dbos import DBOSClient

    jobs = [_job(sweep.sweep_id, position, case, request, flags) for position, case in enumerate(sweep.cases)]
    queue_names = [queue_for((m.label for m in setup.models.values()), settings.queue) for setup in sweep.setups]
    log = SweepLog(store)
    if sweep_id is None:
        log.start(sweep.sweep_id, sweep.model_label, len(jobs), {**options, "queued": True}, status=QUEUED)
        if log.error is not None:
            raise log.error
    else:
        log.sweep(sweep_id)  # raises UnknownSession for a sweep never recorded
    client = DBOSClient(system_database_url=url, application_name=APP_NAME)
    try:
        for limits in queue_limits(settings.queue):
            client.register_queue(
                limits.name, global_concurrency=limits.concurrency, limiter=limits.limiter,  # type: ignore[arg-type]
                polling_interval_sec=limits.poll_s, on_conflict="always_update",
            )  # fmt: skip
        version = application_version()
        for job, queue_name in zip(jobs, queue_names, strict=True):
            client.enqueue(
                {
                    "workflow_name": WORKFLOW_NAME, "queue_name": queue_name, "workflow_id": job.workflow_id,
                    "app_version": version, "application_name": APP_NAME,
                },
                job.to_dict(),
            )  # fmt: skip
    finally:
        client.destroy()
    counts: dict[str, int] = {}
    for name in queue_names:
        counts[name] = counts.get(name, 0) + 1
    return QueuedSweep(sweep.sweep_id, sweep.model_label, len(jobs), url, counts)


def _job(sweep_id: str, position: int, case: BenchCase, request: RunRequest, flags: dict[str, Any]) -> ComparisonJob:
    return ComparisonJob(
        sweep_id=sweep_id, position=position, case=case, model=str(request.model),
        arms=tuple(str(arm) for arm in request.arms), arm_models={k: str(v) for k, v in request.arm_models.items()},
        tool_model=request.tool_model, code_model=request.code_model, flags=flags,
    )  # fmt: skip


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
