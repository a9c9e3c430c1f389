"""Every call the workbench makes into DBOS, through DBOS's public API only (``dbos`` and ``dbos.error``).

DBOS (3.4) runs the queue: its system database holds each comparison's workflow row, the queues' limits,
and each step's recorded outcome. The rest of the workbench sees only what this module offers:

- :func:`prepare_system_database` (``DBOS.migrate``) and :class:`QueueClient` (a ``DBOSClient``) for
  enqueueing (``register_queue``, ``enqueue``), progress (``list_workflows``) and re-queueing
  (``resume_workflow``). The client raises on a lost connection (``retry_connection_errors=False``) and
  the store's own policy waits it out (:class:`workbench.store.retry.WaitPolicy`), so an outage costs a
  bounded, counted wait, never DBOS's unbounded one.
- :func:`launch_worker` / :func:`destroy` for a worker process's DBOS, on an engine with the workbench's
  connection deadlines, its logging cut to one line per outage (:class:`OutageLogFilter`), reading rows as
  JSON only (:mod:`workbench.queue.serialization`, whose pickle refusal is the one patch left: DBOS has
  no public way to refuse a row's own ``py_pickle`` serialization).
- :data:`workflow`, :data:`step`, :func:`current_workflow_id` and :data:`WorkflowCancelled` for the one
  workflow (:mod:`workbench.queue.workflow`).

Per-worker concurrency: DBOS 3.4 keeps ``worker_concurrency`` in the queue's database row, one value for
every executor of the queue, and has no public per-process override (``DBOS.listen_queues`` takes names
only; ``Queue`` objects cannot be built by hand). The workbench used to patch ``SystemDatabase.get_queue``
to substitute each worker's own value; it now sets the queue's value (:meth:`QueueClient.set_worker_concurrency`),
so ``workbench worker --concurrency`` applies to every worker of the queue. Upstream request: a per-executor
``worker_concurrency`` override in ``DBOSConfig`` (or ``DBOS.listen_queues(..., worker_concurrency=)``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from dbos import DBOS, DBOSClient
from dbos import error as dbos_error

from workbench.errors import UserError
from workbench.locations import shown_url
from workbench.queue.jobs import WORKFLOW_NAME
from workbench.queue.serialization import SERIALIZER, refuse_pickle
from workbench.queue.system_db import APP_NAME, system_database_path, system_engine
from workbench.store.retry import WaitPolicy

if TYPE_CHECKING:
    from sqlalchemy import Engine  # DBOS's engine, built by workbench.store.queue_db: only handed on

R = TypeVar("R")
WorkflowCancelled = dbos_error.DBOSWorkflowCancelledError
"""Raised from a step, DBOS records no outcome for it: the workflow runs the step afresh where it is resumed."""
workflow = DBOS.workflow
step = DBOS.step
UNFINISHED = ("ENQUEUED", "DELAYED", "PENDING")


class QueueUnavailable(UserError):
    """DBOS's system database cannot be created or reached; the message says why."""


@dataclass(frozen=True)
class Workflow:
    """One comparison's workflow row, as the workbench reads it."""

    workflow_id: str
    status: str
    executor_id: str | None
    queue_name: str | None
    app_version: str | None = None


def current_workflow_id() -> str:
    workflow_id = DBOS.workflow_id
    assert workflow_id is not None, "called outside a DBOS workflow"
    return workflow_id


# -- logging --------------------------------------------------------------------------------------


class OutageLogFilter(logging.Filter):
    """DBOS's warnings and errors, one line each, and of a database outage at most the first.

    DBOS retries a lost connection in every thread (dequeueing, notifications, schedules, each running
    workflow) and logs every attempt, some with a traceback in the message; the worker says itself when the
    database goes and when it is back (:meth:`begin`, :meth:`reset`)."""

    OUTAGE_WORDS = (
        "connection", "operationalerror", "could not connect", "server closed", "terminating", "refused",
        "consuming input failed", "timeout",
    )  # fmt: skip

    ROUTINE = ("Contention detected in queue thread",)
    """DBOS's notes of its own routine back-off (two workers dequeueing at once meet a serialization failure and
    poll more slowly): nothing for an operator to do, and common around a restart."""

    def __init__(self) -> None:
        super().__init__()
        self._in_outage = False
        self._lock = threading.Lock()
        self.reported: tuple[type[BaseException], ...] = ()
        """Errors the workbench has already said in its own line (DBOS's record of them is dropped)."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if self.reported and isinstance(error, self.reported):
            return False
        text = _log_line(record.getMessage()) or record.levelname
        if record.exc_info and record.exc_info[1] is not None:
            text = f"{text} {_log_line(str(record.exc_info[1]))}".strip()
        record.msg, record.args = text[:300], None
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        if any(notice in text for notice in self.ROUTINE):
            return False
        with self._lock:
            if self._in_outage:
                return False
            if any(word in text.lower() for word in self.OUTAGE_WORDS):
                self._in_outage = True
        return True

    def begin(self) -> None:
        """The database stopped answering: DBOS's own lines about it are dropped until :meth:`reset`."""
        with self._lock:
            self._in_outage = True

    def reset(self) -> None:
        """The database answers again: the next outage is logged (once) again."""
        with self._lock:
            self._in_outage = False


def _log_line(message: str) -> str:
    """A log message in one line: a traceback in it is cut to its last line (the exception)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    if not lines:
        return ""
    head = lines[0]
    if "Traceback (most recent call last)" in head:
        head = head.split("Traceback (most recent call last)")[0].rstrip(" :")
        return f"{head}: {lines[-1]}" if head else lines[-1]
    return head


_filter = OutageLogFilter()
"""The one filter on DBOS's logger: module state because the ``dbos`` logger it sits on is itself one per
process (:mod:`logging`), and :func:`already_reported` is called at import time by the workflow's module."""


def already_reported(*errors: type[BaseException]) -> None:
    """DBOS logs every failed workflow with its traceback; these errors have had a line of their own."""
    _filter.reported = (*_filter.reported, *errors)


def quiet_dbos(level: int = logging.WARNING) -> OutageLogFilter:
    """DBOS logs its own progress at INFO; only its warnings and errors reach the terminal, one line each."""
    logger = logging.getLogger("dbos")
    logger.setLevel(level)
    if _filter not in logger.filters:
        logger.addFilter(_filter)
    return _filter


# -- the system database --------------------------------------------------------------------------


def prepare_system_database(url: str) -> None:
    """Create or migrate DBOS's tables (its own schema on PostgreSQL, its own file for SQLite)."""
    quiet_dbos(logging.ERROR)
    try:
        DBOS.migrate(url)
    except Exception as error:  # connection refused, permission denied, a damaged file
        problem = f"the queue's database {shown_url(url)} cannot be prepared: {_first_line(error)}"
        raise QueueUnavailable(problem) from None


class QueueClient:
    """A ``DBOSClient`` on the system database whose every call waits out an outage for ``timeout_s``."""

    def __init__(
        self,
        url: str,
        *,
        timeout_s: float = 30.0,
        serializer: Any = None,
        sleep: Callable[[float], object] = time.sleep,
        on_fault: Callable[[float], None] | None = None,
    ) -> None:
        self.url = url
        self._on_fault = on_fault
        self.name = shown_url(url)
        self.timeout_s = timeout_s
        self._sleep = sleep
        path = system_database_path(url)
        self._policy = WaitPolicy(f"the queue's database {self.name}", timeout_s, 1.0, server=path is None)
        """The store's wait policy for this database (on PostgreSQL each attempt is cut if it stalls)."""
        self.exists = path is None or path.exists()
        """False for an embedded queue whose file was never created (nothing was ever queued there)."""
        self._engine: Engine | None = None
        self._client: DBOSClient | None = None
        if self.exists:
            extra: dict[str, Any] = {"serializer": SERIALIZER if serializer is None else serializer}
            if path is None:  # PostgreSQL: the workbench's engine, with its connection deadlines
                self._engine = system_engine(url, pool_size=2)
                extra["system_database_engine"] = self._engine
            else:
                extra["system_database_url"] = url
            self._client = DBOSClient(
                application_name=APP_NAME, lazy=True, retry_connection_errors=False, system_database_pool_size=2,
                **extra,
            )  # fmt: skip

    def close(self) -> None:
        if self._client is not None:
            self._client.destroy()
        if self._engine is not None:
            self._engine.dispose()

    def __enter__(self) -> QueueClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, action: Callable[[DBOSClient], R], doing: str) -> R:
        client = self._client
        if client is None:
            raise QueueUnavailable(f"the queue's database {self.name} does not exist")
        return self._policy.run(lambda: action(client), doing, on_fault=self._on_fault, sleep=self._sleep)

    def register_queue(
        self,
        name: str,
        *,
        concurrency: int | None,
        limiter: dict[str, float] | None,
        poll_s: float,
        worker_concurrency: int | None = None,
    ) -> None:
        """Create or update one queue's limits (every worker's dequeue checks them in the database)."""
        if worker_concurrency is not None and concurrency is not None:
            worker_concurrency = min(worker_concurrency, concurrency)
        self._call(
            lambda client: client.register_queue(
                name, global_concurrency=concurrency, limiter=limiter,  # type: ignore[arg-type]
                worker_concurrency=worker_concurrency, polling_interval_sec=poll_s, on_conflict="always_update",
            ),
            f"registering queue {name}",
        )  # fmt: skip

    def set_worker_concurrency(self, names: Iterable[str], value: int) -> dict[str, int | None]:
        """Set how many comparisons of each queue one worker runs at once (at most the queue's own limit);
        returns the queues whose value changed, with the value each had.
        DBOS keeps one value per queue, for every worker (see the module's note)."""
        replaced: dict[str, int | None] = {}
        for name in names:

            def update(client: DBOSClient, name: str = name) -> int | None:
                queue = client.retrieve_queue(name)
                if queue is None:
                    return None
                before = queue.worker_concurrency
                limit = queue.global_concurrency
                wanted = value if limit is None else min(value, limit)
                if before == wanted:
                    return None
                queue.set_worker_concurrency(wanted)
                return before

            before = self._call(update, f"setting the worker concurrency of queue {name}")
            if before is not None:
                replaced[name] = before
        return replaced

    def enqueue(self, options: dict[str, Any], job: dict[str, Any]) -> None:
        """Enqueue one comparison; a workflow id DBOS already holds is left as it is."""
        self._call(lambda client: client.enqueue(options, job), f"enqueueing {options['workflow_id']}")  # type: ignore[arg-type]

    def comparisons(
        self,
        *,
        sweep_ids: Sequence[str] | None = None,
        statuses: Sequence[str] | None = None,
        executor_id: str | None = None,
        workflow_ids: Sequence[str] | None = None,
    ) -> list[Workflow]:
        """The comparisons' workflow rows: of these sweeps (all: ``None``), in these states, on this executor."""
        if self._client is None or (sweep_ids is not None and not sweep_ids):
            return []
        filters: dict[str, Any] = {"name": WORKFLOW_NAME, "load_input": False, "load_output": False}
        if sweep_ids is not None:
            filters["workflow_id_prefix"] = [f"{sweep_id}/" for sweep_id in sweep_ids]
        if statuses is not None:
            filters["status"] = list(statuses)
        if executor_id is not None:
            filters["executor_id"] = executor_id
        if workflow_ids is not None:
            filters["workflow_ids"] = list(workflow_ids)
        found = self._call(lambda client: client.list_workflows(**filters), "reading the queued comparisons")
        return [Workflow(w.workflow_id, str(w.status), w.executor_id, w.queue_name, w.app_version) for w in found]

    def requeue(self, workflows: Iterable[Workflow], *, held_by: str) -> list[str]:
        """Put comparisons that ``held_by`` was running back on their queues; returns those re-queued.

        Each is re-read just before: only a workflow still PENDING on ``held_by`` is resumed (a peer may
        have taken it since). DBOS's public ``resume_workflow`` has no such condition of its own (its
        private recovery does); upstream request: ``resume_workflow(..., only_if_executor=...)``."""
        done = []
        for found in workflows:
            current = self.comparisons(workflow_ids=[found.workflow_id])
            if not current or current[0].status != "PENDING" or current[0].executor_id != held_by:
                continue
            queue = current[0].queue_name
            self._call(
                lambda client, wid=found.workflow_id, q=queue: client.resume_workflow(wid, queue_name=q),
                f"re-queueing {found.workflow_id}",
            )
            done.append(found.workflow_id)
        return done


# -- a worker's DBOS ------------------------------------------------------------------------------


def launch_worker(url: str, *, executor_id: str, version: str, pool_size: int, serializer: Any = None) -> Engine | None:
    """Start this process's DBOS executor on the system database (it dequeues and runs comparisons).

    DBOS runs on the workbench's engine: on PostgreSQL with connection deadlines and TCP keepalives, so a dead
    server is noticed (DBOS itself retries a lost connection in every thread until it is back, and the
    worker decides how long that may last); on SQLite with every transaction holding the write lock from its
    start, so a queue's concurrency holds across workers (:func:`workbench.store.queue_db.serialized`).
    Returns the engine, for :func:`destroy` to close."""
    quiet_dbos()
    embedded = system_database_path(url) is not None
    engine = system_engine(url, pool_size=pool_size)
    config: dict[str, Any] = {
        "name": APP_NAME, "system_database_url": url, "executor_id": executor_id, "application_version": version,
        "log_level": "WARNING", "enable_otlp": False, "run_admin_server": False, "sys_db_pool_size": pool_size,
        "system_database_engine": engine,
        # On SQLite DBOS's migration begins its own transaction, which the engine's has begun already; the
        # worker migrated the file first (prepare_system_database), and DBOS only checks it is up to date.
        "run_migrations": not embedded,
    }  # fmt: skip
    config["serializer"] = SERIALIZER if serializer is None else serializer
    refuse_pickle()
    DBOS(config=config)  # type: ignore[arg-type]
    DBOS.launch()
    quiet_dbos()  # launch configures DBOS's logger from the config: the filter stays, the level is ours
    return engine


def destroy(engine: Engine | None = None) -> None:
    """Stop this process's DBOS (its threads; running workflows are not waited for)."""
    try:
        DBOS.destroy(workflow_completion_timeout_sec=0)
    except Exception:  # shutting down: a database gone is no news here
        logging.getLogger(__name__).debug("DBOS.destroy failed", exc_info=True)
    if engine is not None:
        engine.dispose()


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]
