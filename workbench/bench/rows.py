"""A bench report's figures as text rows, the same in every format: the Rich tables and Markdown
(:mod:`workbench.bench.render`) and the HTML page (:mod:`workbench.share.sweep_html`) lay these out."""

from __future__ import annotations

from collections.abc import Mapping

from workbench.bench.compare import AMOUNTS, SORT_METRICS, CaseChange, CaseKey, CaseMatrix, Cell, case_label
from workbench.bench.report import METRICS, BenchReport, Metric, ScalingSeries, TierReport
from workbench.bench.report import Versus as Versus_
from workbench.bench.stats import PairedDelta
from workbench.display import DEMO_LABEL, is_demo, money

# -- numbers -------------------------------------------------------------------------------------


def metric_value(metric: Metric | str, value: float | None) -> str:
    """A per-run mean as shown in a report cell."""
    key = metric if isinstance(metric, str) else metric.key
    if value is None:
        return "–"
    if key == "success":
        return f"{value * 100:.0f}%"
    if key == "cost_usd":
        return money(value, unknown="unknown")
    if key == "wall_s":
        return f"{value:.2f} s"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:,.1f}"


def change_text(metric: Metric, change: float | None) -> str:
    if change is None:
        return "–"
    return f"{change:+.0f} pts" if metric.key == "success" else f"{change:+.0f}%"


def paired_text(metric: Metric, delta: PairedDelta | None) -> str:
    """The paired delta with its interval: relative for amounts, in points for success."""
    if delta is None:
        return "–"
    if metric.key == "success":
        return f"{delta.delta:+.0f} pts [{delta.low:+.0f}, {delta.high:+.0f}]"
    if delta.relative is not None and delta.relative_low is not None and delta.relative_high is not None:
        return f"{delta.relative:+.0f}% [{delta.relative_low:+.0f}, {delta.relative_high:+.0f}]"
    unit = "$" if metric.key == "cost_usd" else ""
    return f"{unit}{delta.delta:+.4g} [{delta.low:+.4g}, {delta.high:+.4g}]"


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def failed_text(report_tier: TierReport, arm: str) -> str:
    stats = report_tier.arms[arm]
    return f"{stats.failed} of {stats.expected}" if stats.expected else "–"


def agreement_text(report_tier: TierReport, arm: str) -> str:
    """``2 of 3`` runs where the arms agree, of those graded by agreement (a dash when none were)."""
    stats = report_tier.arms[arm]
    return f"{stats.agreed} of {stats.compared}" if stats.compared else "–"


def pass_k_text(report_tier: TierReport, arm: str, k: str) -> str:
    value = report_tier.arms[arm].pass_k.get(k)
    return "–" if value is None else f"{value * 100:.0f}%"


def _better(metric: Metric, change: float | None, significant: bool) -> str:
    """Green or red only where the difference is significant (McNemar for success, the paired interval
    otherwise); a change inside the noise is dim, whatever its sign."""
    if change is None or abs(change) < 0.5 or not significant:
        return "dim"
    good = change > 0 if metric.higher_is_better else change < 0
    return "green" if good else "red"


def _significant(versus: Versus_, metric: str) -> bool:
    if metric == "success":
        return versus.success_test is not None and versus.success_test.significant
    delta = versus.paired.get(metric)
    return delta is not None and delta.significant


def mcnemar_text(versus: Versus_) -> str:
    """The success test in a cell: "no significant difference (p = 0.41, 12 pairs)" or the direction."""
    test = versus.success_test
    if test is None:
        return "–"
    if not test.pairs:
        return "no paired verdicts"
    figures = f"p = {test.p_value:.2g}, {plural(test.pairs, 'pair')}"
    if not test.significant:
        return f"no significant difference ({figures})"
    return f"{test.delta_points:+.0f} pts, significant ({figures})"


# -- rows shared by every format -------------------------------------------------------------------


Versus = tuple[str, str, str]
"""One arm against the baseline in a row: (change of the means, paired delta with its interval, style)."""
TierRow = tuple[str, list[str], list[Versus]]
"""(label, one value per arm in order, one comparison per arm after the baseline)."""
NO_VERSUS: Versus = ("", "", "dim")


def tier_rows(tier: TierReport) -> list[TierRow]:
    """The rows of one tier's table: every arm's figure, and every other arm against the baseline."""
    names = list(tier.arms)
    others = [tier.versus[name] for name in names[1:] if name in tier.versus]
    plain = [NO_VERSUS] * len(others)
    rows: list[TierRow] = []
    for metric in METRICS:
        values = [metric_value(metric, tier.arms[name].means.get(metric.key)) for name in names]
        versus = []
        for other in others:
            change = other.change_pct.get(metric.key)
            versus.append(
                (
                    change_text(metric, change),
                    paired_text(metric, other.paired.get(metric.key)),
                    _better(metric, change, _significant(other, metric.key)),
                )
            )
        rows.append((metric.label, values, versus))
        if metric.key == "success":
            if any(other.success_test is not None for other in others):
                tests = [("", mcnemar_text(other), "dim") for other in others]
                rows.append(("success, McNemar exact", ["" for _ in names], tests))
            rows.append(("failed runs", [failed_text(tier, name) for name in names], plain))
            if any(tier.arms[name].compared for name in names):  # no expectation: agreement, not success
                rows.append(("arms agree (no expectation)", [agreement_text(tier, name) for name in names], plain))
            most = max((len(tier.arms[name].pass_k) for name in names), default=0)
            if most > 1:
                rows.append((f"pass^{most}", [pass_k_text(tier, name, str(most)) for name in names], plain))
    arms = [tier.arms[name] for name in names]
    turns = [arm.means.get("turns") for arm in arms]
    if any(value is not None and value > 1 for value in turns):  # conversations (BFCL): user turns per run
        rows.append(("turns", ["–" if value is None else f"{value:.1f}" for value in turns], plain))
    rows.append(("cost per success", [money(arm.cost_per_success) for arm in arms], plain))
    rows.append(("total cost", [money(arm.total_cost_usd) for arm in arms], plain))
    if any(arm.cache_read_tokens for arm in arms):
        rows.append(("cached input tokens", [f"{arm.cache_read_tokens:,}" for arm in arms], plain))
        rows.append(("  cost of those", [money(arm.cache_cost_usd) for arm in arms], plain))
    rows.append(("payload suppression", [percent(arm.payload_suppression) for arm in arms], plain))
    return rows


SCALING_ROWS: tuple[tuple[str, str], ...] = (
    ("cost", "cost_usd"),
    ("input tokens", "input_tokens"),
    ("wall time", "wall_s"),
    ("success", "success"),
)


def scaling_rows(series: ScalingSeries) -> list[list[str]]:
    """Metric and arm per row, one column per item count; after the input tokens, each other arm's ratio
    to the baseline's."""
    rows = []
    names = series.arms
    for label, metric in SCALING_ROWS:
        for index, arm in enumerate(names):
            values = series.values[arm][metric]
            rows.append([label if index == 0 else "", arm, *(metric_value(metric, value) for value in values)])
        if metric == "input_tokens":
            for arm in names[1:]:
                ratios = series.ratio("input_tokens", arm)
                rows.append(["", f"{arm}/{names[0]}", *("–" if r is None else f"{r:.2f}×" for r in ratios)])
    return rows


def scaling_header(series: ScalingSeries) -> list[str]:
    return ["per run", "arm", *(f"{size} items" for size in series.sizes)]


CROSSOVER_UNITS = {"cost_usd": "cost", "input_tokens": "input tokens", "wall_s": "wall time"}


def crossover_lines(series: ScalingSeries) -> list[str]:
    return [
        f"{CROSSOVER_UNITS[key]}: {crossing.describe()}"
        for key, crossing in series.crossovers.items()
        if key in CROSSOVER_UNITS
    ]


def headline(report: BenchReport) -> str:
    model = f"model {report.model}" + (f" · {DEMO_LABEL}" if is_demo(report.model) else "")
    parts = [f"sweep {report.sweep_id}" if report.sweep_id else "sweep", model]
    status = "" if report.status == "completed" else f" ({report.status})"
    parts.append(f"{report.finished} of {plural(report.planned, 'run')}{status}")
    reused = sum(run.reused for run in report.runs)
    if reused:
        parts.append(f"{reused} reused")
    return " · ".join(parts)


# -- the per-case matrix -------------------------------------------------------------------------------

MATRIX_PER_ARM = ("passed", "cost", "cost per success", "input tokens", "wall time")


def matrix_header(matrix: CaseMatrix) -> list[str]:
    header = ["case"]
    for arm in matrix.arms:
        header += [f"{arm} {column}" if column != "passed" else arm for column in MATRIX_PER_ARM]
    header += [f"{arm} vs {matrix.baseline}" for arm in matrix.arms[1:]]
    return header


def matrix_cells(cell: Cell | None) -> list[str]:
    if cell is None:
        return ["–"] * len(MATRIX_PER_ARM)
    return [
        cell.verdict,
        money(cell.cost_usd, unknown="unknown"),
        "no success" if cell.graded and not cell.passed else money(cell.cost_per_success, unknown="–"),
        f"{cell.input_tokens:,.0f}",
        f"{cell.wall_s:.2f} s",
    ]


def versus_text(change: CaseChange, intervals: Mapping[str, PairedDelta | None] | None = None) -> str:
    """A case's change against the baseline: the verdict's direction, then cost, input tokens and time, each
    with its interval over the case's repeats where it has two or more (``cost -42% [-50, -35]``)."""
    if change.after is None or change.before is None:
        return "–"
    amounts = " · ".join(
        f"{label.split()[0]} {_pct(change.change_pct(metric))}{_interval((intervals or {}).get(metric))}"
        for metric, label in AMOUNTS
    )
    kind = {"regression": "fewer passes", "improvement": "more passes"}.get(change.kind, "")
    return f"{kind}; {amounts}" if kind else amounts


def matrix_rows(matrix: CaseMatrix, keys: list[CaseKey] | None = None) -> list[list[str]]:
    rows = []
    for key in matrix.rows() if keys is None else keys:
        row = [case_label(key)]
        for arm in matrix.arms:
            row += matrix_cells(matrix.cells[key].get(arm))
        row += [versus_text(matrix.change(key, arm), case_intervals(matrix, key, arm)) for arm in matrix.arms[1:]]
        rows.append(row)
    return rows


def case_intervals(matrix: CaseMatrix, key: CaseKey, arm: str) -> dict[str, PairedDelta | None]:
    """Each amount's interval over the case's repeats (``None`` where it has fewer than two)."""
    return {metric: matrix.interval(key, arm, metric) for metric, _ in AMOUNTS}


def _interval(delta: PairedDelta | None) -> str:
    if delta is None or delta.relative_low is None or delta.relative_high is None:
        return ""
    return f" [{delta.relative_low:+.0f}, {delta.relative_high:+.0f}]"


def largest_change(matrix: CaseMatrix, key: CaseKey) -> float:
    """The size of a case's largest change in cost, input tokens or time against the baseline, in %."""
    sizes = [
        abs(change_pct)
        for arm in matrix.arms[1:]
        for metric, _ in AMOUNTS
        if (change_pct := matrix.change(key, arm).change_pct(metric)) is not None
    ]
    return max(sizes, default=0.0)


def interesting_first(matrix: CaseMatrix, *, by_size: bool = False) -> list[CaseKey]:
    """Cases with fewer passes than the baseline first, then more passes, then failures, then the rest; with
    ``by_size``, the largest change in cost, tokens or time first within each of those."""

    def rank(key: CaseKey) -> int:
        changes = [matrix.change(key, arm) for arm in matrix.arms[1:]]
        kinds = {change.kind for change in changes}
        if "regression" in kinds:
            return 0
        if "improvement" in kinds:
            return 1
        if any(change.failed for change in changes):
            return 2
        return 3

    if by_size:
        return sorted(matrix.rows(), key=lambda key: (rank(key), -largest_change(matrix, key)))
    return sorted(matrix.rows(), key=rank)


def ordered_cases(matrix: CaseMatrix, by: str) -> list[CaseKey]:
    """The matrix's cases as ``--sort`` says (:data:`~workbench.bench.compare.SORTS`): ``case`` as run,
    ``change`` as :func:`interesting_first` by size, ``cost`` / ``tokens`` / ``time`` the largest change of that
    amount against the baseline (either way, any arm) first, cases without one last."""
    if by == "case":
        return matrix.rows()
    if by == "change":
        return interesting_first(matrix, by_size=True)
    metric = SORT_METRICS[by]

    def size(key: CaseKey) -> float:
        changes = [matrix.change(key, arm).change_pct(metric) for arm in matrix.arms[1:]]
        return max((abs(change) for change in changes if change is not None), default=-1.0)

    return sorted(matrix.rows(), key=lambda key: -size(key))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.0f}%"
