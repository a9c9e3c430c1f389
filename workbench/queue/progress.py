"""How far queued sweeps are, from anywhere: DBOS's workflow rows, counted per sweep, state and worker.

Read through DBOS's public ``list_workflows`` (:class:`~workbench.queue.dbos_gateway.QueueClient`, loaded
only when a queued sweep is listed), each worker's liveness from its lease row in the store: a comparison is
``queued`` (ENQUEUED), ``running`` (PENDING, on the worker that holds it), ``finished`` (SUCCESS) or
``failed`` (ERROR, or past DBOS's recovery attempts); ``cancelled`` ones were cancelled by hand.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.bench.manifest import SweepInfo
from workbench.config import QueueSettings
from workbench.locations import shown_url
from workbench.queue.jobs import sweep_of
from workbench.queue.system_db import system_database_url
from workbench.store import Store, StoreError

if TYPE_CHECKING:
    from workbench.queue.dbos_gateway import QueueClient

READ_WAIT_S = 5.0
"""How long a progress read waits out an unreachable queue database before it shows nothing."""

STATES = {
    "ENQUEUED": "queued",
    "DELAYED": "queued",
    "PENDING": "running",
    "SUCCESS": "finished",
    "ERROR": "failed",
    "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed",
    "CANCELLED": "cancelled",
}
UNFINISHED = ("ENQUEUED", "DELAYED", "PENDING")


@dataclass
class SweepProgress:
    """One queued sweep's comparisons by state, overall and per worker (executor id)."""

    sweep_id: str
    planned: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    by_worker: dict[str, Counter[str]] = field(default_factory=dict)
    worker_states: dict[str, str] = field(default_factory=dict)
    """Each worker's liveness: running, silent (no heartbeat for stale_after_s), stopped or dead."""

    @property
    def done(self) -> bool:
        return self.counts["queued"] + self.counts["running"] == 0 and sum(self.counts.values()) >= self.planned

    def to_dict(self) -> dict[str, Any]:
        states = ("queued", "running", "finished", "failed", "cancelled")
        return {
            "sweep_id": self.sweep_id,
            "planned": self.planned,
            **{state: self.counts[state] for state in states},
            "workers": {
                worker: {"state": self.worker_states.get(worker, "unknown"), **{s: c[s] for s in states if c[s]}}
                for worker, c in sorted(self.by_worker.items())
            },
        }

    def worker_lines(self) -> list[str]:
        """``host-123-ab12cd (running): 2 running · 14 finished`` per worker that took comparisons."""
        lines = []
        for worker, counts in sorted(self.by_worker.items()):
            figures = " · ".join(
                f"{counts[s]} {s}" for s in ("running", "finished", "failed", "cancelled") if counts[s]
            )
            lines.append(f"{worker} ({self.worker_states.get(worker, 'unknown')}): {figures}")
        return lines

    def line(self) -> str:
        """``12 planned · 3 queued · 2 running · 6 finished · 1 failed``."""
        parts = [f"{self.planned} planned"] + [
            f"{self.counts[state]} {state}" for state in ("queued", "running", "finished", "failed", "cancelled")
            if self.counts[state] or state in ("running", "finished")
        ]  # fmt: skip
        return " · ".join(parts)


class QueueReader:
    """Reads DBOS's workflow rows of the workbench's comparisons (an unreachable database reads as none)."""

    def __init__(self, url: str, *, timeout_s: float = READ_WAIT_S, client: QueueClient | None = None) -> None:
        from workbench.queue.dbos_gateway import QueueClient

        self.url = url
        self._own = client is None
        self.client = client if client is not None else QueueClient(url, timeout_s=timeout_s)

    def close(self) -> None:
        if self._own:
            self.client.close()

    def rows(self, sweep_ids: list[str] | None = None) -> list[tuple[str, str, str | None]]:
        """(workflow id, status, executor id) of the comparisons of these sweeps (all sweeps: ``None``)."""
        from workbench.queue.dbos_gateway import QueueUnavailable

        try:
            found = self.client.comparisons(sweep_ids=sweep_ids)
        except (StoreError, QueueUnavailable):  # unreachable, or no DBOS tables yet: nothing to show
            return []
        return [(w.workflow_id, w.status, w.executor_id) for w in found]

    def sweeps(self, planned: dict[str, int]) -> dict[str, SweepProgress]:
        """Progress of the given sweeps (id -> planned comparisons)."""
        found = {sweep_id: SweepProgress(sweep_id, count) for sweep_id, count in planned.items()}
        for workflow_id, status, executor in self.rows(list(planned)):
            progress = found.get(sweep_of(workflow_id))
            if progress is None:
                continue
            state = STATES.get(status, status.lower())
            progress.counts[state] += 1
            if state != "queued" and executor:
                progress.by_worker.setdefault(executor, Counter())[state] += 1
        return found

    def unfinished(self) -> list[tuple[str, str, str | None]]:
        """Comparisons of any sweep still queued or running."""
        return [row for row in self.rows() if row[1] in UNFINISHED]


def queue_progress(store: Store, sweeps: Iterable[SweepInfo], settings: QueueSettings) -> dict[str, SweepProgress]:
    """Progress of the queued sweeps among ``sweeps``, with each worker's liveness from its heartbeat row
    (no sweep queued: an empty dict, and nothing is opened)."""
    queued = {info.id: info.planned for info in sweeps if info.options.get("queued")}
    if not queued:
        return {}
    url = system_database_url(store, settings.system_database)
    reader = QueueReader(url)
    try:
        found = reader.sweeps(queued)
        states = worker_states(store, url)
        for progress in found.values():
            progress.worker_states = {worker: states.get(worker, "unknown") for worker in progress.by_worker}
        return found
    finally:
        reader.close()


def queue_key(url: str) -> str:
    """The queue as the store's worker rows name it: its system database's URL without a password."""
    return shown_url(url, password=None)


def worker_states(store: Store, url: str) -> dict[str, str]:
    """Each worker's liveness (running, silent, stopped, dead) from its lease row; none if unreadable."""
    from workbench.store.workers import WorkerLeases

    try:
        return {w.executor_id: w.state for w in WorkerLeases(store, queue_key(url), timeout_s=READ_WAIT_S).workers()}
    except StoreError:
        return {}
