"""One side of a diff or a gate: a stored sweep or session (by id prefix), or an exported JSON file of one.

An exported sweep (``workbench export SWEEP --format json``, or ``bench --out FILE.json``) carries every run's
case and per-arm figures, so a baseline kept in a repository is enough without the database it came from.
An exported session (``export SESSION --format json``) carries its events, which are folded again here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.bench.compare import UNFINISHED
from workbench.bench.plan import BenchCase
from workbench.bench.results import RunResult
from workbench.display import is_demo
from workbench.errors import UserError, one_line

if TYPE_CHECKING:
    from workbench.session import Comparison
    from workbench.store import Store

MAX_FILE_BYTES = 512 * 1024 * 1024
SESSION_TIER = "session"
"""The tier a single session's case is put in (it belongs to no sweep)."""


class BadSide(UserError):
    """A side that cannot be read: an unknown id, a file that is no exported sweep or session (exit 2)."""


@dataclass
class Side:
    """What one side of a comparison ran: its finished runs and whether it is whole."""

    ref: str
    kind: str
    """``sweep``, ``session``, ``sweep file`` or ``session file``."""
    label: str
    status: str
    planned: int
    runs: list[RunResult]

    @property
    def models(self) -> list[str]:
        return sorted({run.model for run in self.runs})

    @property
    def demo(self) -> bool:
        """Every run used the scripted model: the figures are a demonstration."""
        return bool(self.runs) and all(is_demo(run.model) for run in self.runs)

    @property
    def arms(self) -> list[str]:
        return list(dict.fromkeys(name for run in self.runs for name in run.arms))

    def incomplete(self) -> str | None:
        """Why this side cannot be gated on (``None`` when it is whole)."""
        if self.status != "completed":
            return f"{self.label} is {self.status} ({len(self.runs)} of {self.planned} runs finished)"
        if not self.runs:
            return f"{self.label} has no finished runs"
        unfinished = sum(arm.status in UNFINISHED for run in self.runs for arm in run.arms.values())
        if unfinished:
            return f"{self.label} has {unfinished} arm run(s) that did not finish (cancelled or interrupted)"
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind,
            "label": self.label,
            "status": self.status,
            "planned": self.planned,
            "finished": len(self.runs),
            "models": self.models,
            "demo": self.demo,
        }


def load_side(ref: str, open_store: Callable[[], Store]) -> Side:
    """A side from an exported JSON file (when ``ref`` names one), else from the store: ``sweep-…`` ids are
    sweeps, anything else a session id prefix."""
    path = Path(ref).expanduser()
    if path.suffix.lower() == ".json" or path.is_file():
        return _from_file(ref, path)
    from workbench.bench.manifest import SWEEP_PREFIX, SweepStore
    from workbench.bench.sweep import load_sweep

    store = open_store()
    if ref.startswith(SWEEP_PREFIX):
        report = load_sweep(store, SweepStore(store).resolve_id(ref))
        return Side(ref, "sweep", report.sweep_id, report.status, report.planned, list(report.runs))
    comparison = store.load(store.resolve_id(ref))
    return _session_side(ref, "session", comparison)


def session_run(comparison: Comparison) -> RunResult:
    """A single session as one run of its own case (task or prompt, items, seed)."""
    task = comparison.task or f"prompt: {' '.join(comparison.prompt.split())[:60]}"
    return RunResult.from_comparison(BenchCase(SESSION_TIER, task, comparison.items, comparison.seed), comparison)


def _session_side(ref: str, kind: str, comparison: Comparison) -> Side:
    status = comparison.status
    return Side(ref, kind, f"session {comparison.session_id}", "completed" if status == "failed" else status, 1,
                [session_run(comparison)])  # fmt: skip


def _from_file(ref: str, path: Path) -> Side:
    try:
        if not path.is_file():
            raise BadSide(f"{ref}: no such file")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise BadSide(f"{ref}: larger than {MAX_FILE_BYTES // 2**20} MiB; not an exported sweep or session")
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:  # the one place a side's file is read and parsed
        raise BadSide(f"{ref}: cannot read it as JSON ({one_line(error)[:200]})") from None
    try:
        if isinstance(data, dict) and "sweep_id" in data and "runs" in data:
            from workbench.bench.report import BenchReport

            report = BenchReport.from_dict(data)
            return Side(ref, "sweep file", f"{report.sweep_id or 'sweep'} ({path.name})", report.status,
                        report.planned, list(report.runs))  # fmt: skip
        if isinstance(data, dict) and "session_id" in data and "events" in data:
            return _session_side(ref, "session file", _comparison_from_export(data))
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise BadSide(f"{ref}: an exported sweep or session with a field missing or wrong ({error})") from None
    raise BadSide(
        f"{ref}: not an exported sweep or session (make one with `workbench export ID --format json --out FILE`)"
    )


def _comparison_from_export(data: dict[str, Any]) -> Comparison:
    from datetime import datetime

    from workbench.events import ArmEvent
    from workbench.session import SessionHeader, fold_header

    header = SessionHeader(
        session_id=str(data["session_id"]),
        app=str(data["app"]),
        items=int(data["items"]),
        seed=int(data.get("seed", 0)),
        prompt=str(data.get("prompt", "")),
        task=data.get("task"),
        model=str(data.get("model", "unknown")),
        created=datetime.fromisoformat(data["created"]),
    )
    events = [ArmEvent.from_dict(event) for event in data["events"]]
    return fold_header(header, events, [arm["name"] for arm in data["arms"]])
