"""A sweep's report as a self-contained HTML page: per-tier tables with paired deltas and intervals, the scaling
charts as inline SVG, and the failed runs. Every figure is drawn from the :class:`BenchReport` and formatted
by the same functions as the CLI and Markdown reports."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence

from workbench.bench.render import (
    change_text,
    crossover_lines,
    failed_text,
    headline,
    metric_value,
    money,
    paired_text,
    percent,
    plural,
)
from workbench.bench.report import METRIC_BY_KEY, METRICS, BenchReport, Failure, ScalingSeries, TierReport
from workbench.bench.stats import PairedDelta
from workbench.share.page import arm_colour, arm_style, esc, page, table
from workbench.share.svg import Line, line_chart

CHARTS: tuple[tuple[str, str], ...] = (
    ("cost_usd", "cost per run (USD)"),
    ("input_tokens", "input tokens per run"),
    ("wall_s", "wall time per run (s)"),
    ("success", "success rate (%)"),
)
FAILURES_SHOWN = 20
"""Failed runs listed before the rest are folded."""


def _comparisons(tier: TierReport) -> list[tuple[str, str, Mapping[str, float | None], Mapping[str, PairedDelta]]]:
    """(arm, baseline, change by metric, paired delta by metric) for each arm compared with the first."""
    names = list(tier.arms)
    if len(names) < 2:
        return []
    return [(names[1], names[0], tier.change_pct, tier.paired)]


def _arm_head(index: int, name: str) -> str:
    return f'<span class="arm-name" style="{arm_style(index)}"><span class="swatch"></span>{esc(name)}</span>'


def _style(higher_is_better: bool, change: float | None) -> str:
    if change is None or abs(change) < 0.5:
        return "dim"
    return "good" if (change > 0) == higher_is_better else "bad"


def tier_section(tier: TierReport) -> str:
    names = list(tier.arms)
    comparisons = _comparisons(tier)
    header = ["", *(_arm_head(index, name) for index, name in enumerate(names))]
    for arm, baseline, _, _ in comparisons:
        header += [f"{esc(arm)} vs {esc(baseline)}", "paired Δ [95% CI]"]
    rows = []
    for metric in METRICS:
        cells = [f'<td class="label">{esc(metric.label)}</td>']
        for name in names:
            value = tier.arms[name].means.get(metric.key)
            cells.append(
                f'<td data-arm="{esc(name)}" data-key="{metric.key}" data-value="{esc(json.dumps(value))}">'
                f"{esc(metric_value(metric, value))}</td>"
            )
        for _, _, change_pct, paired in comparisons:
            change = change_pct.get(metric.key)
            style = _style(metric.higher_is_better, change)
            delta = paired.get(metric.key)
            significance = "" if delta is None else (" significant" if delta.significant else "")
            cells.append(f'<td class="{style}">{esc(change_text(metric, change))}</td>')
            cells.append(f'<td class="{style}{significance}">{esc(paired_text(metric, delta))}</td>')
        rows.append(cells)
        if metric.key == "success":
            rows.append(
                ['<td class="label">failed runs</td>', *(esc(failed_text(tier, name)) for name in names)]
                + ["", ""] * len(comparisons)
            )
    rows.append(
        ['<td class="label">total cost</td>', *(esc(money(tier.arms[name].total_cost_usd)) for name in names)]
        + ["", ""] * len(comparisons)
    )
    rows.append(
        ['<td class="label">payload suppression</td>']
        + [esc(percent(tier.arms[name].payload_suppression)) for name in names]
        + ["", ""] * len(comparisons)
    )
    counts = f"{plural(tier.tasks, 'task')} · {plural(tier.runs, 'run')} per arm · means per run"
    return (
        f'<section class="tier" id="tier-{esc(tier.tier)}" data-tier="{esc(tier.tier)}">'
        f'<h2>{esc(tier.tier.capitalize())} <span class="dim">{esc(counts)}</span></h2>'
        + table(header, rows)
        + "</section>"
    )


def _y_format(metric: str) -> Callable[[float], str]:
    if metric == "cost_usd":
        return lambda value: f"${value:.4f}" if value < 1 else f"${value:,.2f}"
    if metric == "wall_s":
        return lambda value: f"{value:.2f}"
    if metric == "success":
        return lambda value: f"{value:.0f}%"
    return lambda value: f"{value:,.0f}"


def scaling_section(series: ScalingSeries) -> str:
    names = list(series.values)
    charts = []
    for metric, title in CHARTS:
        scale = 100.0 if metric == "success" else 1.0
        lines = [
            Line(name, arm_colour(index), [None if v is None else v * scale for v in series.values[name][metric]])
            for index, name in enumerate(names)
        ]
        charts.append(
            line_chart(title, series.sizes, lines, y_format=_y_format(metric), y_max=100.0 if metric == "success"
                       else None)
        )  # fmt: skip
    legend = "".join(f"<span>{_arm_head(index, name)}</span>" for index, name in enumerate(names))
    header = ["per run", "arm", *(f"{size:,} items" for size in series.sizes)]
    rows = []
    for metric, _ in CHARTS:
        label = METRIC_BY_KEY[metric].label
        for index, name in enumerate(names):
            values = series.values[name][metric]
            rows.append(
                [f'<td class="label">{esc(label if index == 0 else "")}</td>', _arm_head(index, name)]
                + [esc(metric_value(metric, value)) for value in values]
            )
        if metric == "input_tokens":
            baseline = series.values[names[0]][metric]
            for name in names[1:]:
                ratios = [
                    "–" if value is None or not base else f"{value / base:.2f}×"
                    for value, base in zip(series.values[name][metric], baseline, strict=True)
                ]
                rows.append(['<td class="label"></td>', esc(f"{name}/{names[0]}"), *ratios])
    crossings = "".join(f"<li>{esc(line)}</li>" for line in crossover_lines(series))
    return (
        f'<section class="scaling" data-task="{esc(series.task)}"><h3>{esc(series.task)}</h3>'
        f'<div class="legend">{legend}</div><div class="charts">{"".join(charts)}</div>'
        + table(header, rows)
        + (f"<ul>{crossings}</ul>" if crossings else "")
        + "</section>"
    )


def failures_section(report: BenchReport) -> str:
    if not report.failures:
        return ""
    header = ["task", "items", "seed", "arm", "status", "why", "session"]

    def row(failure: Failure) -> list[str]:
        return [
            esc(failure.task), esc(failure.items), esc(failure.seed), esc(failure.arm), esc(failure.status),
            f'<td class="text">{esc(failure.reason)}</td>', f'<td class="mono">{esc(failure.session_id)}</td>',
        ]  # fmt: skip

    shown, rest = report.failures[:FAILURES_SHOWN], report.failures[FAILURES_SHOWN:]
    parts = [
        f'<section id="failures"><h2>Failed runs ({len(report.failures)})</h2>',
        table(header, [row(f) for f in shown]),
    ]
    if rest:
        parts.append(f"<details><summary>{len(rest)} more</summary>{table(header, [row(f) for f in rest])}</details>")
    parts.append("</section>")
    return "".join(parts)


def sweep_html(report: BenchReport) -> str:
    """The whole page for one sweep's report."""
    parts = [
        "<header><h1>Bench report</h1>"
        f'<p class="meta" id="headline">{esc(headline(report))} · {esc(report.created.strftime("%Y-%m-%d %H:%M UTC"))}'
        "</p></header>"
    ]
    parts += [tier_section(tier) for tier in report.tiers]
    if report.scaling:
        parts.append('<section id="scaling"><h2>Scaling against item count</h2>')
        parts += [scaling_section(series) for series in report.scaling]
        parts.append("</section>")
    parts.append(failures_section(report))
    parts.append(_how_to_read(report))
    return page(f"Bench report {report.sweep_id}".strip(), "\n".join(parts))


def _how_to_read(report: BenchReport) -> str:
    lines: Sequence[str] = [
        "Figures are means per run. The first arm is the baseline: an arm's change compares the arms' means; "
        "its paired Δ is the arm minus the baseline on the same task and seed, as % of the baseline's mean "
        "(success: in points), with a 95% bootstrap interval that resamples tasks, then repeats within each task.",
        "Payload suppression is 1 − (bytes of tool output the model saw) / (bytes the tools produced).",
        *(["Cost: " + "; ".join(report.price_labels) + "."] if report.price_labels else []),
        *report.notes,
    ]
    items = "".join(f"<li>{esc(line)}</li>" for line in lines)
    return f'<section id="how-to-read"><h2>How to read this</h2><ul>{items}</ul></section>'
