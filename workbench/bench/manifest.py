"""Which stored sessions belong to which sweep, in the bench's terms: cases, run results and ``--resume``.

The rows are the store's (:mod:`workbench.store.sweeps`); :class:`SweepStore` turns a :class:`RunResult` into
the run the store records, and a stored run back into a :class:`SweepMember` with its :class:`BenchCase`.
A finished run is identified for ``--resume`` by (task, items, seed, model, repeat).

A sweep row that cannot be written does not stop the sweep: the report is still printed from the runs in
memory, the rows go to the sweep's fallback file, and :attr:`SweepStore.error` says what was not recorded
and where it went.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.bench.plan import BenchCase
from workbench.bench.results import RunResult
from workbench.store import SessionInfo, Store, StoreError
from workbench.store.sweeps import FINISHED_STATUSES, QUEUED, SweepInfo, SweepRun

__all__ = ["FINISHED_STATUSES", "QUEUED", "SWEEP_PREFIX", "SweepInfo", "SweepMember", "SweepStore", "new_sweep_id"]

SWEEP_PREFIX = "sweep-"


@dataclass(frozen=True)
class SweepMember:
    case: BenchCase
    session_id: str
    model: str
    reused: bool


def new_sweep_id() -> str:
    return SWEEP_PREFIX + secrets.token_hex(4)


class SweepStore:
    """The bench's sweeps in a :class:`Store`, in the bench's terms (cases, run results), over the store's rows
    (:class:`workbench.store.sweeps.Sweeps`). A sweep being run takes one of its own: it keeps that sweep's
    faults."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._rows = store.sweep_rows()

    @property
    def error(self) -> StoreError | None:
        """The first fault that kept a sweep row from the database (the sweep itself goes on)."""
        return self._rows.error

    # -- writing ---------------------------------------------------------------------------------

    def start(
        self, sweep_id: str, model: str, planned: int, options: dict[str, Any], *, status: str = "running"
    ) -> None:
        self._rows.start(sweep_id, model, planned, options, status=status)

    def record(self, sweep_id: str, result: RunResult, position: int) -> None:
        case = result.case
        status = result.status if result.finished else "cancelled"
        run = SweepRun(
            position, result.session_id, case.tier, case.task, case.items, case.seed, case.repeat, result.model,
            status, result.reused,
        )  # fmt: skip
        self._rows.record(sweep_id, run)

    def record_once(self, sweep_id: str, result: RunResult, position: int) -> bool:
        """Record a queued comparison unless its position already has a finished run (a recovered comparison
        whose first attempt got recorded); returns whether this run became the sweep's member."""
        if self.member_at(sweep_id, position) is not None:
            return False
        self.record(sweep_id, result, position)
        return self.error is None

    def member_at(self, sweep_id: str, position: int) -> SweepMember | None:
        """The finished run recorded at a position of a sweep, if any."""
        found = self._rows.runs(sweep_id, position)
        return _member(found[0]) if found else None

    def complete_if_done(self, sweep_id: str) -> bool:
        """Mark a queued sweep completed once every planned comparison has a finished run."""
        info = self.sweep(sweep_id)
        if info.status != QUEUED or info.finished_runs < info.planned:
            return False
        self.finish(sweep_id, "completed")
        return True

    def finish(self, sweep_id: str, status: str) -> None:
        self._rows.finish(sweep_id, status)

    # -- reading ---------------------------------------------------------------------------------

    def finished_sessions(self, cases: Iterable[BenchCase], model: str) -> dict[BenchCase, str]:
        """For each case already run to its end with this model (in any sweep), its latest session id."""
        wanted = {case.key(model): case for case in cases}
        if not wanted:
            return {}
        found: dict[BenchCase, str] = {}
        for run in self._rows.finished_runs(model, sorted({case.task for case in wanted.values()})):
            case = wanted.get((run.task, run.items, run.seed, run.model, run.repeat))
            if case is not None:
                found[case] = run.session_id
        return found

    def resolve_id(self, prefix: str) -> str:
        return self._rows.resolve_id(prefix)

    def sweep(self, sweep_id: str) -> SweepInfo:
        return self._rows.sweep(sweep_id)

    def sweeps(self, *, limit: int | None = None, ids: Sequence[str] | None = None) -> list[SweepInfo]:
        """Sweeps, newest first."""
        return self._rows.sweeps(limit=limit, ids=ids)

    def members(self, sweep_id: str) -> list[SweepMember]:
        """The finished runs of a sweep, in plan order: one per position (the first recorded, should a
        recovered comparison of a queued sweep ever have been recorded twice)."""
        return [_member(run) for run in self._rows.runs(sweep_id)]

    def session_ids(self) -> set[str]:
        """Every session a sweep ran, to tell bench runs from a person's own comparisons."""
        return self._rows.session_ids()


def _member(run: SweepRun) -> SweepMember:
    return SweepMember(
        BenchCase(run.tier, run.task, run.items, run.seed, run.repeat), run.session_id, run.model, run.reused
    )


def sessions_without_sweeps(
    store: Store, *, limit: int | None = None, search: str | None = None
) -> tuple[list[SessionInfo], int]:
    """Stored sessions newest first without the ones bench sweeps ran (one sweep stores dozens, which bury a
    person's own), and how many of those matched and were left out."""
    listing = store.listing(limit=limit, search=search, hide_bench=True)
    return listing.sessions, listing.hidden
