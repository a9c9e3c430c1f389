"""The bench report as data: per tier and arm, paired deltas against the baseline, pass^k, scaling series.

The first arm of the sweep's comparisons is the baseline; every other arm is compared with it.

Textual-free and Rich-free: the CLI renderer, the Markdown/JSON/CSV writers and the TUI's bench screen
all draw from a :class:`BenchReport`, which is built only from :class:`RunResult` objects (themselves
folded from each run's stored events).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import workbench.apps as apps
from workbench.bench.compare import case_matrix
from workbench.bench.results import RunResult
from workbench.bench.significance import SuccessTest, pass_hat_k, success_test
from workbench.bench.stats import (
    DEFAULT_RESAMPLES,
    Crossover,
    Pair,
    PairedDelta,
    crossover,
    mean,
    paired_delta,
    payload_suppression,
)
from workbench.display import is_demo, percent_change


@dataclass(frozen=True)
class Metric:
    key: str
    label: str
    unit: str = ""
    higher_is_better: bool = False


METRICS: tuple[Metric, ...] = (
    Metric("success", "success rate", "%", higher_is_better=True),
    Metric("cost_usd", "cost", "$"),
    Metric("wall_s", "wall time", "s"),
    Metric("requests", "requests"),
    Metric("input_tokens", "input tokens"),
    Metric("output_tokens", "output tokens"),
    Metric("tool_calls", "tool calls (model)"),
    Metric("app_calls", "app calls"),
)
METRIC_BY_KEY = {metric.key: metric for metric in METRICS}

SCALING_METRICS: tuple[str, ...] = ("cost_usd", "wall_s", "input_tokens", "success")
"""What the scaling charts plot against item count."""
CROSSOVER_METRICS: tuple[str, ...] = ("cost_usd", "input_tokens", "wall_s")

SCRIPTED_NOTE = (
    "The scripted model plays every built-in task correctly by construction: its success rates say nothing "
    "about real models, while its token counts and costs are the exact mechanics of each arm."
)
SUITE_PLAYER_NOTE = (
    "Offline, the scripted model plays BFCL's own ground truth (docs/bfcl.md): its pass rate says only that the "
    "arms and the grading agree with BFCL's checker, nothing about real models; its token counts and costs are "
    "the exact mechanics of each arm."
)
MIXED_NOTE = (
    "The arms used different models ({models}): the deltas compare model and mode together, not code mode alone."
)
ESTIMATED_NOTE = (
    "Token counts of {arms} of {runs} arm runs are estimated: the server reported no usage, so they are the "
    "workbench's own o200k count of each request and response (and cost priced from them)."
)
WALL_NOTE = "Wall times of concurrent runs share one machine; compare them within a sweep, not across sweeps."


@dataclass
class ArmTierStats:
    """One arm over the runs of one tier."""

    arm: str
    runs: int
    succeeded: int
    means: dict[str, float | None]
    """Metric key -> mean per run (``success`` as a rate from 0 to 1)."""
    total_cost_usd: float | None
    bytes_seen: int
    bytes_produced: int
    pass_k: dict[str, float] = field(default_factory=dict)
    """k -> pass^k: the chance that all k repeats of a task pass (tau-bench's), for k up to the repeats run."""
    cache_read_tokens: int = 0
    """Input tokens served from the provider's cache, over all runs (0 when none were reported)."""
    cache_cost_usd: float = 0.0
    """What those cached tokens cost at the provider's cached rate (part of ``total_cost_usd``)."""
    agreed: int = 0
    """Runs without an expectation where this arm did what the others did (counted apart from successes)."""
    differed: int = 0
    """Runs without an expectation where this arm's changes differ from another arm's."""

    @property
    def compared(self) -> int:
        """Runs graded by agreement (no expectation): ``agreed`` + ``differed``."""
        return self.agreed + self.differed

    @property
    def cost_per_success(self) -> float | None:
        """Total cost over the runs that succeeded (``None`` when none did or cost is unknown)."""
        if self.total_cost_usd is None or not self.succeeded:
            return None
        return self.total_cost_usd / self.succeeded

    @property
    def expected(self) -> int:
        """Runs with an expectation (or that did not complete): those a success rate is taken over."""
        return self.runs - self.compared

    @property
    def failed(self) -> int:
        return self.expected - self.succeeded

    @property
    def success_rate(self) -> float | None:
        return self.succeeded / self.expected if self.expected else None

    @property
    def payload_suppression(self) -> float | None:
        return payload_suppression(self.bytes_seen, self.bytes_produced)

    def to_dict(self) -> dict[str, Any]:
        return {
            "arm": self.arm,
            "runs": self.runs,
            "succeeded": self.succeeded,
            "failed": self.failed,
            "success_rate": self.success_rate,
            "means": dict(self.means),
            "total_cost_usd": self.total_cost_usd,
            "bytes_seen": self.bytes_seen,
            "bytes_produced": self.bytes_produced,
            "payload_suppression": self.payload_suppression,
            "pass_k": dict(self.pass_k),
            "cost_per_success": self.cost_per_success,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_cost_usd": self.cache_cost_usd,
            "agreed": self.agreed,
            "differed": self.differed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArmTierStats:
        return cls(
            data["arm"],
            data["runs"],
            data["succeeded"],
            dict(data["means"]),
            data["total_cost_usd"],
            data["bytes_seen"],
            data["bytes_produced"],
            dict(data.get("pass_k", {})),
            data.get("cache_read_tokens", 0),
            data.get("cache_cost_usd", 0.0),
            data.get("agreed", 0),
            data.get("differed", 0),
        )


@dataclass
class Versus:
    """One arm against the baseline over a tier: change of the means, and the paired deltas."""

    change_pct: dict[str, float | None]
    """Metric key -> this arm vs the baseline in % of the arms' means (success: difference in points)."""
    paired: dict[str, PairedDelta]
    success_test: SuccessTest | None = None
    """McNemar's exact test on the paired verdicts (runs graded by an expectation in both arms)."""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "change_pct": dict(self.change_pct),
            "paired": {key: d.to_dict() for key, d in self.paired.items()},
        }
        if self.success_test is not None:
            data["mcnemar"] = self.success_test.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Versus:
        paired = {key: PairedDelta(**delta) for key, delta in data["paired"].items()}
        test = data.get("mcnemar")
        known = SuccessTest.__dataclass_fields__
        success = None if test is None else SuccessTest(**{key: value for key, value in test.items() if key in known})
        return cls(dict(data["change_pct"]), paired, success)


@dataclass
class TierReport:
    """One tier: each arm's figures (in the sweep's arm order, the baseline first) and every other arm
    against the baseline (:attr:`versus`). ``change_pct`` / ``paired`` are the second arm's, the pair a
    two-arm report is about."""

    tier: str
    runs: int
    tasks: int
    arms: dict[str, ArmTierStats]
    change_pct: dict[str, float | None]
    """Metric key -> the second arm vs the baseline in % of the arms' means (success: difference in points)."""
    paired: dict[str, PairedDelta]
    versus: dict[str, Versus] = field(default_factory=dict)
    """Each arm after the first -> how it compares with the baseline."""

    @property
    def baseline(self) -> str:
        return next(iter(self.arms), "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "tier": self.tier,
            "runs": self.runs,
            "tasks": self.tasks,
            "baseline": self.baseline,
            "arms": {name: stats.to_dict() for name, stats in self.arms.items()},
            "change_pct": dict(self.change_pct),
            "paired": {key: delta.to_dict() for key, delta in self.paired.items()},
            "versus": {name: versus.to_dict() for name, versus in self.versus.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TierReport:
        arms = {name: ArmTierStats.from_dict(stats) for name, stats in data["arms"].items()}
        change = dict(data["change_pct"])
        paired = {key: PairedDelta(**delta) for key, delta in data["paired"].items()}
        versus = {name: Versus.from_dict(item) for name, item in data.get("versus", {}).items()}
        if not versus and len(arms) > 1:  # a report from before N arms: its second arm against the first
            versus = {list(arms)[1]: Versus(change, paired)}
        return cls(data["tier"], data["runs"], data["tasks"], arms, change, paired, versus)


@dataclass
class ScalingSeries:
    """One scaling rule: per arm and metric, the mean at each item count; and where the second arm starts to
    pay off against the baseline (the first)."""

    app: str
    task: str
    sizes: list[int]
    values: dict[str, dict[str, list[float | None]]]
    """Arm -> metric key -> one mean per size (``success`` as a rate from 0 to 1)."""
    crossovers: dict[str, Crossover]

    @property
    def arms(self) -> list[str]:
        return list(self.values)

    def ratio(self, metric: str = "input_tokens", arm: str | None = None) -> list[float | None]:
        """``arm`` (default: the second) over the baseline at each size."""
        names = self.arms
        if len(names) < 2:
            return [None] * len(self.sizes)
        other, base = self.values[arm or names[1]][metric], self.values[names[0]][metric]
        return [o / b if o is not None and b else None for o, b in zip(other, base, strict=True)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "app": self.app,
            "task": self.task,
            "sizes": list(self.sizes),
            "values": self.values,
            "crossovers": {key: value.to_dict() for key, value in self.crossovers.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ScalingSeries:
        return cls(
            data["app"],
            data["task"],
            list(data["sizes"]),
            data["values"],
            {key: Crossover(**value) for key, value in data["crossovers"].items()},
        )


@dataclass(frozen=True)
class Failure:
    """One arm of one run that did not succeed, and why."""

    tier: str
    task: str
    items: int
    seed: int
    repeat: int
    arm: str
    status: str
    reason: str
    session_id: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class BenchReport:
    """Everything a sweep's report shows; ``to_dict`` / ``from_dict`` round-trip through JSON."""

    sweep_id: str
    model: str
    status: str
    """``completed``, ``interrupted`` (some planned runs are missing) or ``running``."""
    planned: int
    created: datetime
    options: dict[str, Any]
    tiers: list[TierReport]
    scaling: list[ScalingSeries]
    failures: list[Failure]
    runs: list[RunResult]
    price_labels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def finished(self) -> int:
        return len(self.runs)

    def tier(self, name: str) -> TierReport | None:
        return next((tier for tier in self.tiers if tier.tier == name), None)

    def to_dict(self, *, with_runs: bool = True) -> dict[str, Any]:
        data: dict[str, Any] = {
            "sweep_id": self.sweep_id,
            "model": self.model,
            "demonstration": is_demo(self.model),
            "status": self.status,
            "planned": self.planned,
            "finished": self.finished,
            "created": self.created.isoformat(),
            "options": dict(self.options),
            "price_labels": list(self.price_labels),
            "notes": list(self.notes),
            "tiers": [tier.to_dict() for tier in self.tiers],
            "scaling": [series.to_dict() for series in self.scaling],
            "failures": [failure.to_dict() for failure in self.failures],
        }
        if with_runs:
            data["runs"] = [run.to_dict() for run in self.runs]
            data["matrix"] = case_matrix(self.runs).to_list()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BenchReport:
        return cls(
            sweep_id=data["sweep_id"],
            model=data["model"],
            status=data["status"],
            planned=data["planned"],
            created=datetime.fromisoformat(data["created"]),
            options=dict(data.get("options", {})),
            tiers=[TierReport.from_dict(tier) for tier in data["tiers"]],
            scaling=[ScalingSeries.from_dict(series) for series in data["scaling"]],
            failures=[Failure(**failure) for failure in data["failures"]],
            runs=[RunResult.from_dict(run) for run in data.get("runs", [])],
            price_labels=list(data.get("price_labels", [])),
            notes=list(data.get("notes", [])),
        )


# -- building ------------------------------------------------------------------------------------


def build_report(
    runs: Sequence[RunResult],
    *,
    sweep_id: str = "",
    model: str | None = None,
    planned: int | None = None,
    status: str | None = None,
    created: datetime | None = None,
    options: dict[str, Any] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> BenchReport:
    """Fold finished runs into a report. ``planned`` defaults to the number of runs."""
    arm_names = arm_order(runs)
    paired_runs = [run for run in runs if all(arm in run.arms for arm in arm_names)]
    planned = len(runs) if planned is None else planned
    models = sorted({run.model for run in runs})
    tiers = [
        _tier_report(tier, [run for run in paired_runs if run.case.tier == tier], arm_names, resamples, seed)
        for tier in dict.fromkeys([*apps.TIERS, *(run.case.tier for run in paired_runs)])
        if any(run.case.tier == tier for run in paired_runs)
    ]
    labels = sorted({arm.price_label for run in runs for arm in run.arms.values() if arm.price_label})
    model_name = model if model is not None else (" / ".join(models) or "unknown")
    notes = []
    if is_demo(model_name):
        notes.append(SUITE_PLAYER_NOTE if (options or {}).get("suite") == "bfcl" else SCRIPTED_NOTE)
    if " | " in model_name and "=" in model_name:  # the runner's label for per-arm models
        notes.append(MIXED_NOTE.format(models=model_name))
    if (options or {}).get("concurrency", 1) > 1:
        notes.append(WALL_NOTE)
    estimated = sum(arm.tokens_estimated for run in runs for arm in run.arms.values())
    if estimated:
        notes.append(ESTIMATED_NOTE.format(arms=estimated, runs=sum(len(run.arms) for run in runs)))
    return BenchReport(
        sweep_id=sweep_id,
        model=model_name,
        status=status or ("completed" if len(runs) >= planned else "interrupted"),
        planned=planned,
        created=created or datetime.now(UTC),
        options=dict(options or {}),
        tiers=tiers,
        scaling=_scaling([run for run in paired_runs if run.case.tier == "scaling"], arm_names),
        failures=list(_failures(runs)),
        runs=list(runs),
        price_labels=labels,
        notes=notes,
    )


def arm_order(runs: Iterable[RunResult]) -> list[str]:
    """The arms of a sweep in their comparisons' order (the baseline first)."""
    return list(dict.fromkeys(name for run in runs for name in run.arms))


def _tier_report(
    tier: str, runs: Sequence[RunResult], arm_names: Sequence[str], resamples: int, seed: int
) -> TierReport:
    arms = {name: _arm_stats(name, runs) for name in arm_names}
    baseline = arm_names[0]
    versus = {
        name: _versus(runs, baseline, name, arms, resamples, f"{seed}:{tier}" + (f":{name}" if index > 1 else ""))
        for index, name in enumerate(arm_names)
        if index
    }  # fmt: skip
    first = next(iter(versus.values()), Versus({}, {}))
    return TierReport(
        tier, len(runs), len({run.case.task for run in runs}), arms, first.change_pct, first.paired, versus
    )


def _versus(
    runs: Sequence[RunResult],
    baseline: str,
    arm: str,
    arms: dict[str, ArmTierStats],
    resamples: int,
    seed: str,
) -> Versus:
    change: dict[str, float | None] = {}
    paired: dict[str, PairedDelta] = {}
    for metric in METRICS:
        base, other = arms[baseline].means[metric.key], arms[arm].means[metric.key]
        if metric.key == "success":
            change[metric.key] = None if base is None or other is None else (other - base) * 100
        else:
            change[metric.key] = percent_change(other, base)
        delta = paired_delta(metric.key, _pairs(runs, metric.key, baseline, arm), resamples=resamples, seed=seed)
        if delta is not None:
            paired[metric.key] = delta
    verdicts = [
        (run.arms[baseline].succeeded, run.arms[arm].succeeded)
        for run in runs
        if not run.arms[baseline].graded_by_agreement and not run.arms[arm].graded_by_agreement
    ]
    return Versus(change, paired, success_test(verdicts) if verdicts else None)


def _arm_stats(name: str, runs: Sequence[RunResult]) -> ArmTierStats:
    figures = [run.arms[name] for run in runs]
    costs = [arm.cost_usd for arm in figures]
    return ArmTierStats(
        arm=name,
        runs=len(figures),
        succeeded=sum(arm.succeeded for arm in figures),
        means={metric.key: mean(arm.value(metric.key) for arm in figures) for metric in METRICS}
        | {"turns": mean(float(arm.turns) for arm in figures)},
        total_cost_usd=None if any(cost is None for cost in costs) else sum(c for c in costs if c is not None),
        bytes_seen=sum(arm.bytes_seen for arm in figures),
        bytes_produced=sum(arm.bytes_produced for arm in figures),
        pass_k=pass_hat_k(
            [(run.case.cluster, run.arms[name].succeeded) for run in runs if not run.arms[name].graded_by_agreement]
        ),
        cache_read_tokens=sum(arm.cache_read_tokens for arm in figures),
        cache_cost_usd=sum(arm.cache_cost_usd for arm in figures),
        agreed=sum(arm.verdict == "agree" for arm in figures),
        differed=sum(arm.verdict == "differ" for arm in figures),
    )


def _pairs(runs: Iterable[RunResult], metric: str, baseline: str, arm: str) -> list[Pair]:
    pairs = []
    for run in runs:
        base, other = run.arms[baseline].value(metric), run.arms[arm].value(metric)
        if base is not None and other is not None:
            scale = 100.0 if metric == "success" else 1.0
            pairs.append(Pair(run.case.cluster, base * scale, other * scale))
    return pairs


def _scaling(runs: Sequence[RunResult], arm_names: Sequence[str]) -> list[ScalingSeries]:
    by_task: dict[str, list[RunResult]] = {}
    for run in runs:
        by_task.setdefault(run.case.task, []).append(run)
    series = []
    for task_id, task_runs in by_task.items():
        sizes = sorted({run.case.items for run in task_runs})
        values: dict[str, dict[str, list[float | None]]] = {}
        for arm in arm_names:
            values[arm] = {
                metric: [
                    mean(run.arms[arm].value(metric) for run in task_runs if run.case.items == size) for size in sizes
                ]
                for metric in SCALING_METRICS
            }
        crossovers = (
            {
                metric: crossover(metric, sizes, values[arm_names[0]][metric], values[arm_names[1]][metric])
                for metric in CROSSOVER_METRICS
            }
            if len(arm_names) > 1
            else {}
        )
        series.append(ScalingSeries(task_id.split("/", 1)[0], task_id, sizes, values, crossovers))
    order = list(apps.APPS)
    series.sort(key=lambda item: (order.index(item.app) if item.app in order else len(order), item.task))
    return series


def _failures(runs: Iterable[RunResult]) -> Iterable[Failure]:
    for run in runs:
        for name, arm in run.arms.items():
            if not arm.succeeded and not (arm.status == "completed" and arm.verdict == "agree"):
                case = run.case
                yield Failure(
                    case.tier, case.task, case.items, case.seed, case.repeat, name, arm.status,
                    " ".join(arm.failure_reason().split())[:300], run.session_id,
                )  # fmt: skip
