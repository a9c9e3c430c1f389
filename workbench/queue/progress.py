"""How far queued sweeps are, from anywhere: DBOS's workflow rows, counted per sweep, state and worker.

Read with plain SQL from the system database (no DBOS import, cheap enough to poll): a comparison is
``queued`` (ENQUEUED), ``running`` (PENDING, on the worker that holds it), ``finished`` (SUCCESS) or
``failed`` (ERROR, or past DBOS's recovery attempts); ``cancelled`` ones were cancelled by hand.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, text
from sqlalchemy.exc import SQLAlchemyError

from workbench.bench.manifest import SweepInfo
from workbench.config import QueueSettings
from workbench.queue.jobs import WORKFLOW_NAME, sweep_of
from workbench.queue.system_db import APP_NAME, dbos_schema, system_database_path, system_database_url, system_engine
from workbench.queue.workers import WorkerTable
from workbench.store import Store

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
    """Reads DBOS's workflow rows of the workbench's comparisons."""

    def __init__(self, url: str) -> None:
        self.url = url
        path = system_database_path(url)
        self.engine: Engine | None = None if path is not None and not path.exists() else system_engine(url)

    def close(self) -> None:
        if self.engine is not None:
            self.engine.dispose()

    def _table(self) -> str:
        assert self.engine is not None
        schema = dbos_schema(self.engine)
        return f"{schema}.workflow_status" if schema else "workflow_status"

    def rows(self, sweep_ids: list[str] | None = None) -> list[tuple[str, str, str | None]]:
        """(workflow id, status, executor id) of the comparisons of these sweeps (all sweeps: ``None``)."""
        if self.engine is None:
            return []
        query = f"SELECT workflow_uuid, status, executor_id FROM {self._table()} WHERE name = :name"
        params: dict[str, Any] = {"name": WORKFLOW_NAME, "app": APP_NAME}
        query += " AND (application_name = :app OR application_name IS NULL)"
        if sweep_ids is not None:
            if not sweep_ids:
                return []
            clauses = []
            for index, sweep_id in enumerate(sweep_ids):
                clauses.append(f"workflow_uuid LIKE :prefix{index}")
                params[f"prefix{index}"] = f"{sweep_id}/%"
            query += " AND (" + " OR ".join(clauses) + ")"
        try:
            with self.engine.connect() as connection:
                return [tuple(row) for row in connection.execute(text(query), params).all()]  # type: ignore[misc]
        except SQLAlchemyError:  # no DBOS tables yet: nothing was ever queued here
            return []

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
    reader = QueueReader(system_database_url(store, settings.system_database))
    try:
        found = reader.sweeps(queued)
        states: dict[str, str] = {}
        if reader.engine is not None:
            now = datetime.now(UTC)
            with contextlib.suppress(SQLAlchemyError):
                for worker in WorkerTable(reader.engine).workers():
                    states[worker.executor_id] = (
                        "silent" if worker.is_stale(now, settings.stale_after_s) else worker.status
                    )
        for progress in found.values():
            progress.worker_states = {worker: states.get(worker, "unknown") for worker in progress.by_worker}
        return found
    finally:
        reader.close()
