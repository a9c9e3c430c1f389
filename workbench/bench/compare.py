"""Case by case: one arm's runs against another's (two arms of a sweep, or one arm in two sweeps).

A *case* is a task at an item count on a seed; its repeats are folded into one :class:`Cell` per arm
(``3/4`` passed). Verdicts are paired run by run (same case and repeat) for McNemar's test, and cost, input
tokens and wall time by the existing paired bootstrap (tasks resampled, then repeats). Pure: the per-case
matrix of the bench report, ``workbench diff`` and ``workbench gate`` all read these objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.bench.results import ArmFigures, RunResult
from workbench.bench.significance import ALPHA, SuccessTest, success_test
from workbench.bench.stats import DEFAULT_RESAMPLES, Pair, PairedDelta, paired_delta
from workbench.display import percent_change

CaseKey = tuple[str, int, int]
"""(task, items, seed): what one row of the matrix is about."""

AMOUNTS: tuple[tuple[str, str], ...] = (("cost_usd", "cost"), ("input_tokens", "input tokens"), ("wall_s", "wall time"))
UNFINISHED = frozenset({"running", "cancelled", "interrupted"})
FILTERS = ("failures", "different", "regressions", "improvements")
SORTS = ("case", "change", "cost", "tokens", "time")
"""How the case tables sort (``--sort`` of ``diff``, ``bench`` and ``export``): as run, verdict changes first, or
by the size of the change in cost, input tokens or wall time (either way)."""
SORT_METRICS = {"cost": "cost_usd", "tokens": "input_tokens", "time": "wall_s"}
CASE_RESAMPLES = 1000
"""Bootstrap resamples of one case's repeats (a handful of pairs: fewer resamples than a tier's are enough)."""


def case_key(run: RunResult) -> CaseKey:
    return (run.case.task, run.case.items, run.case.seed)


def case_label(key: CaseKey) -> str:
    task, items, seed = key
    size = f" ×{items}" if items else ""
    return f"{task}{size} seed {seed}"


@dataclass(frozen=True)
class Cell:
    """One arm on one case, over its repeats."""

    runs: int
    passed: int
    graded: int
    """Runs with an expectation (or that did not complete): what ``passed`` is out of."""
    agreed: int
    unfinished: int
    cost_usd: float | None
    """Mean per run; ``None`` when any run's cost is unknown."""
    input_tokens: float
    wall_s: float
    session_ids: tuple[str, ...]

    @classmethod
    def of(cls, figures: Sequence[tuple[ArmFigures, str]]) -> Cell:
        arms = [arm for arm, _ in figures]
        graded = [arm for arm in arms if not arm.graded_by_agreement]
        costs = [arm.cost_usd for arm in arms]
        return cls(
            runs=len(arms),
            passed=sum(arm.succeeded for arm in graded),
            graded=len(graded),
            agreed=sum(arm.verdict == "agree" for arm in arms),
            unfinished=sum(arm.status in UNFINISHED for arm in arms),
            cost_usd=None if any(cost is None for cost in costs) else sum(c or 0.0 for c in costs) / len(arms),
            input_tokens=sum(arm.input_tokens for arm in arms) / len(arms),
            wall_s=sum(arm.wall_s for arm in arms) / len(arms),
            session_ids=tuple(dict.fromkeys(session for _, session in figures)),
        )

    @property
    def rate(self) -> float | None:
        return self.passed / self.graded if self.graded else None

    @property
    def verdict(self) -> str:
        """``3/4`` passed; ``agree 2/2`` for runs graded by agreement; ``not graded`` otherwise."""
        if self.graded:
            return f"{self.passed}/{self.graded}"
        if self.runs:
            return f"agree {self.agreed}/{self.runs}"
        return "not graded"

    @property
    def cost_per_success(self) -> float | None:
        if self.cost_usd is None or not self.passed:
            return None
        return self.cost_usd * self.runs / self.passed

    def value(self, metric: str) -> float | None:
        return getattr(self, metric)

    def to_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "runs": self.runs,
            "passed": self.passed,
            "graded": self.graded,
            "agreed": self.agreed,
            "unfinished": self.unfinished,
            "cost_usd": self.cost_usd,
            "cost_per_success": self.cost_per_success,
            "input_tokens": self.input_tokens,
            "wall_s": self.wall_s,
            "session_ids": list(self.session_ids),
        }


@dataclass(frozen=True)
class CaseChange:
    """One case, before and after (either may be missing: the case ran on one side only)."""

    key: CaseKey
    before: Cell | None
    after: Cell | None

    @property
    def label(self) -> str:
        return case_label(self.key)

    @property
    def kind(self) -> str:
        """``regression`` (fewer passes), ``improvement``, ``same``, ``only before``, ``only after``."""
        if self.before is None:
            return "only after"
        if self.after is None:
            return "only before"
        before, after = self.before.rate, self.after.rate
        if before is None or after is None or before == after:
            return "same"
        return "regression" if after < before else "improvement"

    @property
    def failed(self) -> bool:
        """A run on either side did not pass."""
        return any(cell is not None and cell.passed < cell.graded for cell in (self.before, self.after))

    @property
    def different(self) -> bool:
        """The verdicts differ (or the case ran on one side only)."""
        if self.before is None or self.after is None:
            return True
        return self.before.verdict != self.after.verdict

    def change_pct(self, metric: str) -> float | None:
        """After against before in % of before (``None`` when either is unknown or before is 0)."""
        if self.before is None or self.after is None:
            return None
        return percent_change(self.after.value(metric), self.before.value(metric))

    def matches(self, only: str | None, text: str | None) -> bool:
        if text and text.lower() not in self.label.lower():
            return False
        if only is None:
            return True
        if only == "failures":
            return self.failed
        if only == "different":
            return self.different
        if only == "regressions":
            return self.kind == "regression"
        if only == "improvements":
            return self.kind == "improvement"
        raise ValueError(f"unknown filter {only!r}; choose one of: {', '.join(FILTERS)}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.key[0],
            "items": self.key[1],
            "seed": self.key[2],
            "kind": self.kind,
            "before": None if self.before is None else self.before.to_dict(),
            "after": None if self.after is None else self.after.to_dict(),
            "change_pct": {metric: self.change_pct(metric) for metric, _ in AMOUNTS},
        }


@dataclass
class ArmComparison:
    """One arm's runs (``after``) against another's (``before``), case by case, with the tests."""

    before: str
    after: str
    changes: list[CaseChange]
    success: SuccessTest
    paired: dict[str, PairedDelta] = field(default_factory=dict)
    """Metric key -> after minus before, paired run by run, with its bootstrap interval."""

    @property
    def shared(self) -> list[CaseChange]:
        return [change for change in self.changes if change.before is not None and change.after is not None]

    def amount_line(self, metric: str, label: str) -> str:
        """The paired change of one amount, and a direction only where its interval excludes zero."""
        delta = self.paired.get(metric)
        if delta is None:
            return f"{label}: not compared (unknown on a side)"
        if delta.relative is not None and delta.relative_low is not None and delta.relative_high is not None:
            figures = f"{delta.relative:+.1f}% [{delta.relative_low:+.1f}, {delta.relative_high:+.1f}]"
        else:
            figures = f"{delta.delta:+.4g} [{delta.low:+.4g}, {delta.high:+.4g}]"
        pairs = f"{delta.pairs} pairs, {delta.confidence * 100:.0f}% interval"
        if not delta.significant:
            return f"{label}: no significant difference ({figures}, {pairs})"
        direction = "higher" if delta.delta > 0 else "lower"
        return f"{label}: {direction} {figures} ({pairs})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "before": self.before,
            "after": self.after,
            "success": self.success.to_dict(),
            "paired": {key: delta.to_dict() for key, delta in self.paired.items()},
            "cases": [change.to_dict() for change in self.changes],
        }


def _by_case(runs: Iterable[RunResult], arm: str) -> dict[CaseKey, dict[int, tuple[ArmFigures, str]]]:
    found: dict[CaseKey, dict[int, tuple[ArmFigures, str]]] = {}
    for run in runs:
        if arm in run.arms:
            found.setdefault(case_key(run), {}).setdefault(run.case.repeat, (run.arms[arm], run.session_id))
    return found


def compare_arms(
    before_runs: Sequence[RunResult],
    before_arm: str,
    after_runs: Sequence[RunResult],
    after_arm: str,
    *,
    alpha: float = ALPHA,
    target_points: float | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | str = 0,
) -> ArmComparison:
    """``after_arm`` of ``after_runs`` against ``before_arm`` of ``before_runs``, case by case (cases in the
    order they first appear, before's first)."""
    before, after = _by_case(before_runs, before_arm), _by_case(after_runs, after_arm)
    keys = list(dict.fromkeys([*before, *after]))
    changes = [
        CaseChange(
            key,
            Cell.of(list(before[key].values())) if key in before else None,
            Cell.of(list(after[key].values())) if key in after else None,
        )
        for key in keys
    ]
    verdicts: list[tuple[bool, bool]] = []
    pairs: dict[str, list[Pair]] = {metric: [] for metric, _ in AMOUNTS}
    for key in keys:
        for base, other in _paired_repeats(before.get(key, {}), after.get(key, {})):
            if not base.graded_by_agreement and not other.graded_by_agreement:
                verdicts.append((base.succeeded, other.succeeded))
            cluster = f"{key[0]}@{key[1]}"
            for metric, _ in AMOUNTS:
                a, b = base.value(metric), other.value(metric)
                if a is not None and b is not None:
                    pairs[metric].append(Pair(cluster, a, b))
    paired = {}
    for metric, found in pairs.items():
        delta = paired_delta(metric, found, resamples=resamples, seed=seed)
        if delta is not None:
            paired[metric] = delta
    test = success_test(verdicts, alpha=alpha, target_points=target_points)
    return ArmComparison(before_arm, after_arm, changes, test, paired)


def _paired_repeats(
    before: dict[int, tuple[ArmFigures, str]], after: dict[int, tuple[ArmFigures, str]]
) -> list[tuple[ArmFigures, ArmFigures]]:
    """Runs of one case paired by repeat index (repeat r of one side with repeat r of the other)."""
    return [(before[repeat][0], after[repeat][0]) for repeat in sorted(before) if repeat in after]


@dataclass
class CaseMatrix:
    """One row per case, one :class:`Cell` per arm, and every arm after the first against the first."""

    arms: list[str]
    cells: dict[CaseKey, dict[str, Cell]]
    repeats: dict[CaseKey, dict[str, dict[int, ArmFigures]]] = field(default_factory=dict)
    """Each arm's runs of a case by repeat index: what :meth:`interval` pairs."""

    @property
    def baseline(self) -> str:
        return self.arms[0] if self.arms else ""

    def interval(self, key: CaseKey, arm: str, metric: str) -> PairedDelta | None:
        """``arm`` minus the baseline on one case, paired repeat by repeat, with a bootstrap interval over the
        repeats (each its own cluster); ``None`` under two pairs. Few repeats make a wide, rough interval:
        it says how much the repeats disagree, not more."""
        runs = self.repeats.get(key, {})
        before, after = runs.get(self.baseline, {}), runs.get(arm, {})
        pairs = [
            Pair(f"r{repeat}", a, b)
            for repeat in sorted(before)
            if repeat in after
            and (a := before[repeat].value(metric)) is not None
            and (b := after[repeat].value(metric)) is not None
        ]
        if len(pairs) < 2:
            return None
        return paired_delta(metric, pairs, resamples=CASE_RESAMPLES, seed=f"{key}:{arm}")

    def change(self, key: CaseKey, arm: str) -> CaseChange:
        row = self.cells[key]
        return CaseChange(key, row.get(self.baseline), row.get(arm))

    def rows(self, *, only: str | None = None, text: str | None = None) -> list[CaseKey]:
        """The cases where any arm matches the filter against the baseline (every case without one)."""
        others = self.arms[1:]
        if only is None and not text:
            return list(self.cells)
        return [
            key
            for key in self.cells
            if any(self.change(key, arm).matches(only, text) for arm in others)
            or (not others and CaseChange(key, self.cells[key].get(self.baseline), None).matches(None, text))
        ]

    def to_list(self) -> list[dict[str, Any]]:
        rows = []
        for key, row in self.cells.items():
            rows.append(
                {
                    "task": key[0],
                    "items": key[1],
                    "seed": key[2],
                    "arms": {arm: cell.to_dict() for arm, cell in row.items()},
                    "versus": {
                        arm: {
                            "kind": self.change(key, arm).kind,
                            "change_pct": {m: self.change(key, arm).change_pct(m) for m, _ in AMOUNTS},
                            "interval": {
                                m: None if (found := self.interval(key, arm, m)) is None else found.to_dict()
                                for m, _ in AMOUNTS
                            },
                        }
                        for arm in self.arms[1:]
                        if arm in row
                    },
                }
            )
        return rows


def case_matrix(runs: Sequence[RunResult]) -> CaseMatrix:
    """The per-case matrix of one sweep's runs, arms in the sweep's order (the baseline first)."""
    arms = list(dict.fromkeys(name for run in runs for name in run.arms))
    grouped: dict[CaseKey, dict[str, list[tuple[ArmFigures, str]]]] = {}
    repeats: dict[CaseKey, dict[str, dict[int, ArmFigures]]] = {}
    for run in runs:
        row = grouped.setdefault(case_key(run), {})
        for name, figures in run.arms.items():
            row.setdefault(name, []).append((figures, run.session_id))
            repeats.setdefault(case_key(run), {}).setdefault(name, {}).setdefault(run.case.repeat, figures)
    cells = {key: {arm: Cell.of(found) for arm, found in row.items()} for key, row in grouped.items()}
    return CaseMatrix(arms, cells, repeats)
