"""What a worker's DBOS step does: run one queued comparison with the ordinary runner and store, once.

Exactly once in the report: a comparison's step first looks for a run already recorded at its place in
the sweep (a recovered workflow whose earlier attempt got as far as recording it), and records its own run
only if there is none. A killed attempt's half-written session is never recorded as the sweep's member:
its row stays ``running`` with a dead writer, so the store reads it as interrupted, and the report, built
from the sweep's members only, leaves it out.

Fenced: a comparison starts only while the worker holds its lease (:mod:`workbench.queue.lease`), each of
its model requests and its record wait for the lease to be held by the same token, and one whose lease a
peer took over stops without being recorded (:class:`Abandoned`). Its reads of the sweep wait out a
database restart with the store's policy.
"""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from workbench.bench.manifest import SweepStore
from workbench.bench.results import RunResult
from workbench.config import Settings
from workbench.errors import InternalError, UserError
from workbench.queue.jobs import ComparisonJob
from workbench.queue.lease import FencedModel, Lease, LeaseLost
from workbench.queue.trust import WorkerTrust
from workbench.runner import BadInput, ComparisonRun, prepare
from workbench.store import Store


class ComparisonFailed(UserError):
    """A queued comparison that cannot run here (bad input on this worker: an unknown arm, a missing key).
    Its workflow ends in error and counts as failed."""


class Requeued(InternalError):
    """The worker is stopping: the comparison was cancelled (its session saved as cancelled) and goes back on
    the queue for another worker."""


class Abandoned(Requeued):
    """A peer took this worker's lease over: the comparison stopped unrecorded, and the peer runs it."""


@dataclass(frozen=True)
class Finished:
    """One comparison a worker finished, as its line on stdout shows it."""

    job: ComparisonJob
    session_id: str
    status: str
    recorded: bool
    """``False`` when an earlier attempt of the same comparison was already recorded (this run is superseded)."""
    arms: dict[str, dict[str, Any]] = field(default_factory=dict)
    store_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "sweep_id": self.job.sweep_id, "position": self.job.position, "case": self.job.case.to_dict(),
            "session_id": self.session_id, "status": self.status, "recorded": self.recorded, "arms": self.arms,
            "store_error": self.store_error,
        }  # fmt: skip


@dataclass
class _Active:
    loop: asyncio.AbstractEventLoop
    run: ComparisonRun


class Runtime:
    """The comparisons one worker process runs, each in a DBOS step's own thread and event loop."""

    def __init__(
        self,
        store: Store,
        *,
        trust: WorkerTrust | None = None,
        on_finished: Callable[[Finished], None] | None = None,
        on_failed: Callable[[str, str], None] | None = None,
        lease: Lease | None = None,
    ) -> None:
        self.store = store
        self.trust = trust or WorkerTrust()
        self.on_finished = on_finished
        self.on_failed = on_failed
        """Called with (workflow id, reason) for a comparison that fails here: a job this worker refuses
        (:mod:`workbench.queue.trust`) or one that ended without finishing."""
        self.lease = lease
        """This worker's lease (``None``: unfenced, as in a test without a worker)."""
        self.stopping = threading.Event()
        self._active: dict[str, _Active] = {}
        self._lock = threading.Lock()

    @property
    def active(self) -> int:
        with self._lock:
            return len(self._active)

    def run(self, job_data: dict[str, Any], workflow_id: str) -> dict[str, Any]:
        try:
            job = ComparisonJob.from_dict(job_data)
            settings = self.trust.settings_for(job)
        except BadInput as error:  # JobRefused, or a ConfigError from the job's settings
            raise self._failed(workflow_id, f"refused by the worker: {error}") from None
        if self.stopping.is_set():
            raise Requeued(workflow_id)
        token = self._admit(workflow_id)
        sweeps = SweepStore(self.store)
        earlier = self._read(lambda: sweeps.member_at(job.sweep_id, job.position), f"reading sweep {job.sweep_id}")
        if earlier is not None:
            finished = Finished(job, earlier.session_id, "recorded earlier", recorded=True)
            self._finished(finished)
            return finished.to_dict()
        try:
            setup = self._setup(job, settings)
        except BadInput as error:
            raise self._failed(workflow_id, f"refused by the worker, which cannot run it: {error}") from None
        comparison = asyncio.run(self._compare(self._fenced(setup, token), workflow_id))
        result = RunResult.from_comparison(job.case, comparison)
        if self.lease is not None and (self.lease.lost or token != self.lease.token):
            raise Abandoned(workflow_id)
        if not result.finished:
            if self.stopping.is_set():
                raise Requeued(workflow_id)
            raise self._failed(workflow_id, f"comparison ended {result.status}: session {comparison.session_id}")
        if self.lease is not None:
            try:
                self.lease.check(token, self.stopping)  # the fence: recorded only by the lease's holder
            except LeaseLost:
                raise Abandoned(workflow_id) from None
        recorded = sweeps.record_once(job.sweep_id, result, job.position)
        self._read(lambda: sweeps.complete_if_done(job.sweep_id), f"completing sweep {job.sweep_id}")
        arms = {
            name: {"status": arm.status, "passed": arm.passed, "verdict": arm.verdict}
            for name, arm in result.arms.items()
        }
        store_error = comparison.store_error or (str(sweeps.error) if sweeps.error else None)
        finished = Finished(job, comparison.session_id, result.status, recorded, arms, store_error)
        self._finished(finished)
        return finished.to_dict()

    def _admit(self, workflow_id: str) -> int:
        """Wait until this worker holds its lease; the token the comparison runs under."""
        if self.lease is None:
            return 0
        try:
            return self.lease.admit(self.stopping)
        except LeaseLost:
            raise (Abandoned if self.lease.lost else Requeued)(workflow_id) from None

    def _fenced(self, setup: Any, token: int) -> Any:
        """The setup with every arm's model behind the lease's fence."""
        lease = self.lease
        if lease is None:
            return setup
        models = {
            arm: dataclasses.replace(resolved, model=FencedModel(resolved.model, lambda: lease.fence(token)))
            for arm, resolved in setup.models.items()
        }
        return dataclasses.replace(setup, models=models)

    def _read(self, action: Callable[[], Any], doing: str) -> Any:
        """A read of the store that waits out a restart as a write does."""
        return self.store.policy.run(action, doing)

    def cancel_all(self) -> None:
        """Cancel every running comparison (each saves its session as cancelled, then is re-queued)."""
        with self._lock:
            active = list(self._active.values())
        for entry in active:
            entry.loop.call_soon_threadsafe(entry.run.cancel)

    def _failed(self, workflow_id: str, reason: str) -> ComparisonFailed:
        """Say why a comparison failed here (one line in the worker's log); its workflow ends failed with the reason."""
        if self.on_failed is not None:
            self.on_failed(workflow_id, reason)
        return ComparisonFailed(reason)

    @staticmethod
    def _setup(job: ComparisonJob, settings: Settings) -> Any:
        """The comparison's setup from the job's allowed fields only: a built-in task on a demo app, or a BFCL
        entry by id on the worker's own installed copy of BFCL (no job field names an MCP server, a toolset or a
        task file), arms resolved in the worker's own catalog."""
        from workbench.suites.bfcl_plan import entry_request

        return prepare(entry_request(job.request), settings=settings)

    async def _compare(self, setup: Any, workflow_id: str) -> Any:
        run = ComparisonRun(setup, self.store)
        with self._lock:
            self._active[workflow_id] = _Active(asyncio.get_running_loop(), run)
        try:
            if self.stopping.is_set():
                run.cancel()
            return await run.result()
        finally:
            with self._lock:
                self._active.pop(workflow_id, None)

    def _finished(self, finished: Finished) -> None:
        if self.on_finished is not None:
            self.on_finished(finished)


# The one piece of module state in the queue, kept on purpose: it mirrors DBOS's own process singletons (3.4
# keeps one ``DBOS`` instance and one registry of workflow and step functions per process, filled at import
# time by the decorators in :mod:`workbench.queue.workflow`). The step that DBOS calls, also on recovery, gets
# only the job's recorded arguments, so it finds this process's worker here. DBOS's public alternative,
# ``DBOSConfiguredInstance``, registers the object under a name in that same process-wide registry and records
# the class and instance names in every workflow row (so the enqueuer would have to name them, and rows queued
# before the change would not resume): the state would move into DBOS, not go away. Each worker process
# installs its runtime once, before it launches DBOS.
_runtime: Runtime | None = None


def install(runtime: Runtime) -> None:
    """Make ``runtime`` the one this process's DBOS steps use (DBOS itself is one per process)."""
    global _runtime
    _runtime = runtime


def current_runtime() -> Runtime:
    if _runtime is None:
        raise RuntimeError("no workbench worker runs in this process")
    return _runtime
