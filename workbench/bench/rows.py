"""A bench report's figures as text rows, the same in every format: the Rich tables and Markdown
(:mod:`workbench.bench.render`) and the HTML page (:mod:`workbench.share.sweep_html`) lay these out."""

from __future__ import annotations

from workbench.bench.report import METRICS, BenchReport, Metric, ScalingSeries, TierReport
from workbench.bench.stats import PairedDelta
from workbench.display import money

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


def _better(metric: Metric, change: float | None) -> str:
    if change is None or abs(change) < 0.5:
        return "dim"
    good = change > 0 if metric.higher_is_better else change < 0
    return "green" if good else "red"


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
                    _better(metric, change),
                )
            )
        rows.append((metric.label, values, versus))
        if metric.key == "success":
            rows.append(("failed runs", [failed_text(tier, name) for name in names], plain))
            if any(tier.arms[name].compared for name in names):  # no expectation: agreement, not success
                rows.append(("arms agree (no expectation)", [agreement_text(tier, name) for name in names], plain))
            most = max((len(tier.arms[name].pass_k) for name in names), default=0)
            if most > 1:
                rows.append((f"pass^{most}", [pass_k_text(tier, name, str(most)) for name in names], plain))
    arms = [tier.arms[name] for name in names]
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
    parts = [f"sweep {report.sweep_id}" if report.sweep_id else "sweep", f"model {report.model}"]
    status = "" if report.status == "completed" else f" ({report.status})"
    parts.append(f"{report.finished} of {plural(report.planned, 'run')}{status}")
    reused = sum(run.reused for run in report.runs)
    if reused:
        parts.append(f"{reused} reused")
    return " · ".join(parts)
