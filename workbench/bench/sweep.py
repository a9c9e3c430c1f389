"""Runs a sweep: both arms on every case, K comparisons at a time, each stored as a session.

Every finished run is recorded the moment it ends, so an interrupted sweep keeps all of them and
``resume=True`` skips them next time (a run is identified by task, items, seed, model and repeat).
Cancelling the sweep cancels the comparisons in flight; they save themselves as cancelled sessions and
are run again on resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from workbench.arm_spec import ArmConfig
from workbench.bench.manifest import QUEUED, SweepStore, new_sweep_id
from workbench.bench.plan import BenchCase
from workbench.bench.report import BenchReport, build_report
from workbench.bench.results import RunResult
from workbench.bench.stats import DEFAULT_RESAMPLES
from workbench.config import Settings
from workbench.runner import ComparisonRun, RunRequest, Setup, prepare
from workbench.sources.taskfile import CustomTask
from workbench.store import Store
from workbench.store.writer import STOPPING_WAIT_S

ProgressKind = Literal["started", "finished", "reused"]


@dataclass(frozen=True)
class Progress:
    """One step of a sweep, for progress displays. ``result`` is set for finished and reused runs."""

    kind: ProgressKind
    case: BenchCase
    done: int
    """Runs finished (or reused) so far, this one included."""
    total: int
    result: RunResult | None = None


@dataclass
class SweepOutcome:
    sweep_id: str
    model: str
    cases: list[BenchCase]
    results: list[RunResult]
    """Finished runs in plan order (reused ones included)."""
    interrupted: bool
    options: dict[str, Any] = field(default_factory=dict)
    created: datetime = field(default_factory=lambda: datetime.now(UTC))
    store_errors: list[str] = field(default_factory=list)
    """Why runs (or the sweep's own rows) could not be fully stored; empty when everything was."""

    @property
    def reused(self) -> int:
        return sum(result.reused for result in self.results)

    def report(self, *, resamples: int = DEFAULT_RESAMPLES) -> BenchReport:
        return build_report(
            self.results,
            sweep_id=self.sweep_id,
            model=self.model,
            planned=len(self.cases),
            status="interrupted" if self.interrupted else None,
            created=self.created,
            options=self.options,
            resamples=resamples,
        )


class Sweep:
    """A planned sweep. ``await sweep.run()`` runs it; cancelling that await interrupts it cleanly."""

    def __init__(
        self,
        cases: Sequence[BenchCase],
        *,
        request: RunRequest | None = None,
        model: str | Any | None = None,
        settings: Settings | None = None,
        store: Store | None = None,
        concurrency: int = 2,
        resume: bool = False,
        config: ArmConfig | None = None,
        options: dict[str, Any] | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        custom_tasks: Sequence[CustomTask] = (),
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.cases = list(cases)
        self.request = replace(request or RunRequest(), model=model) if model is not None else request or RunRequest()
        """What every run compares (arms, models, config); each case sets its task, items and seed."""
        self.store = store
        self.concurrency = concurrency
        self.resume = resume
        self.settings = settings
        """Endpoint, retries, page size and the defaults of ``config`` (``None``: the user's config file)."""
        self.config = config
        self.options = {**(options or {}), "concurrency": concurrency}
        self.on_progress = on_progress
        self.custom_tasks = {task.id: task for task in custom_tasks}
        """Tasks of a person's own task file, by id (their cases run on their own app source)."""
        self.sweep_id = new_sweep_id()
        self.setups = [self._setup(case) for case in self.cases]
        self.model_label = self.setups[0].model_label if self.setups else str(self.request.model or "")
        self._log = SweepStore(store) if store is not None else None
        self._done = 0
        self._store_errors: list[str] = []
        self._log_turn = asyncio.Lock()

    def _setup(self, case: BenchCase) -> Setup:
        """Validate a case up front (raises :class:`~workbench.runner.BadInput`), so no arm starts on bad input."""
        custom = self.custom_tasks.get(case.task)
        if custom is not None:
            turns = custom.turns if len(custom.turns) > 1 else ()
            request = replace(self.request, prompt=None if turns else custom.prompt, turns=turns, source=custom.source)
        else:
            request = replace(self.request, task=case.task, items=case.items, seed=case.seed)
        if self.config is not None:
            request = replace(request, config=self.config)
        return prepare(request, settings=self.settings)

    async def run(self) -> SweepOutcome:
        results: dict[int, RunResult] = {}
        if self._log is not None:
            log = self._log
            await self._logged(lambda: log.start(self.sweep_id, self.model_label, len(self.cases), self.options))
        pending = list(range(len(self.cases)))
        if self.resume:
            pending = await self._reuse(results)
        queue: asyncio.Queue[int] = asyncio.Queue()
        for index in pending:
            queue.put_nowait(index)
        workers = [
            asyncio.ensure_future(self._worker(queue, results)) for _ in range(min(self.concurrency, len(pending)))
        ]
        interrupted = False
        try:
            await asyncio.gather(*workers)
        except asyncio.CancelledError:
            interrupted = True
            for worker in workers:
                worker.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        if self._log is not None:
            log, status = self._log, "interrupted" if interrupted else "completed"
            await self._logged(
                lambda: log.finish(self.sweep_id, status), within_s=STOPPING_WAIT_S if interrupted else None
            )
        ordered = [results[index] for index in sorted(results)]
        if self._log is not None and self._log.error is not None:
            self._store_errors.append(f"sweep {self.sweep_id}: {self._log.error}")
        return SweepOutcome(
            self.sweep_id, self.model_label, self.cases, ordered, interrupted, self.options,
            store_errors=self._store_errors,
        )  # fmt: skip

    async def _reuse(self, results: dict[int, RunResult]) -> list[int]:
        """Carry over finished runs of earlier sweeps; return the indexes still to run."""
        if self.store is None or self._log is None:
            return list(range(len(self.cases)))
        found = self._log.finished_sessions(self.cases, self.model_label)
        pending = []
        for index, case in enumerate(self.cases):
            session_id = found.get(case)
            if session_id is None:
                pending.append(index)
                continue
            comparison = await asyncio.to_thread(self.store.load, session_id)
            if list(comparison.arms) != list(self.setups[index].arm_names):
                pending.append(index)  # run with other arms: not this sweep's comparison
                continue
            result = RunResult.from_comparison(case, comparison, reused=True)
            results[index] = result
            self._log.record(self.sweep_id, result, index)
            self._report("reused", case, result)
        return pending

    async def _worker(self, queue: asyncio.Queue[int], results: dict[int, RunResult]) -> None:
        while not queue.empty():
            index = queue.get_nowait()
            case = self.cases[index]
            self._emit(Progress("started", case, self._done, len(self.cases)))
            result = await self._run_case(index)
            if result.finished:
                results[index] = result
                if self._log is not None:
                    log = self._log
                    await self._logged(
                        lambda log=log, result=result, index=index: log.record(self.sweep_id, result, index)
                    )
            self._report("finished", case, result)

    async def _run_case(self, index: int) -> RunResult:
        run = ComparisonRun(self.setups[index], self.store)
        task = run.start()
        try:
            comparison = await asyncio.shield(task)
        except asyncio.CancelledError:  # the sweep is stopped: the session is saved as a stopped run's is
            run.cancel(stopping=True)
            await asyncio.gather(task, return_exceptions=True)
            raise
        if comparison.store_error is not None:
            self._store_errors.append(f"session {comparison.session_id}: {comparison.store_error}")
        return RunResult.from_comparison(self.cases[index], comparison)

    async def _logged(self, write: Callable[[], None], *, within_s: float | None = None) -> None:
        """One write of the sweep's rows, off the event loop and one at a time: a locked database is waited out
        for up to ``store_busy_timeout_s``, and neither the comparisons running nor a stop signal may wait with
        it. The write runs in a daemon thread, which a process being stopped does not wait for; ``within_s``
        bounds the wait for it (the end of a stopped sweep: its row then stays as it was)."""
        async with self._log_turn:
            loop = asyncio.get_running_loop()
            done: asyncio.Future[None] = loop.create_future()

            def settle(error: BaseException | None) -> None:
                if not done.done():
                    done.set_exception(error) if error is not None else done.set_result(None)

            def run() -> None:
                failure: BaseException | None = None
                try:
                    write()
                except Exception as error:  # the sweep store turns faults into its error; anything else is a bug
                    failure = error
                with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: the process is ending
                    loop.call_soon_threadsafe(settle, failure)

            threading.Thread(target=run, name=f"workbench-sweep-{self.sweep_id}", daemon=True).start()
            if within_s is None:
                await done
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(done), within_s)

    def _report(self, kind: ProgressKind, case: BenchCase, result: RunResult) -> None:
        self._done += 1
        self._emit(Progress(kind, case, self._done, len(self.cases), result))

    def _emit(self, progress: Progress) -> None:
        if self.on_progress is not None:
            self.on_progress(progress)


def load_sweep(store: Store, sweep_id: str, *, resamples: int | None = None) -> BenchReport:
    """A stored sweep's report, rebuilt from its sessions' stored events: the same figures, intervals included,
    as when it ran (``resamples=None``: the count the sweep was run with, stored in its options)."""
    log = SweepStore(store)
    info = log.sweep(sweep_id)
    if resamples is None:
        resamples = int(info.options.get("resamples", DEFAULT_RESAMPLES))
    results = []
    planned = info.planned
    for member in log.members(sweep_id):
        comparison = store.load(member.session_id)
        results.append(RunResult.from_comparison(member.case, comparison, reused=member.reused))
    return build_report(
        results,
        sweep_id=info.id,
        model=info.model,
        planned=info.planned,
        status="running" if info.status == "running" or (info.status == QUEUED and len(results) < planned) else None,
        created=info.created,
        options=info.options,
        resamples=resamples,
    )
