"""A sweep's report as a self-contained HTML page: per-tier tables with paired deltas and intervals, the scaling
charts as inline SVG, and the failed runs. Every figure is drawn from the :class:`BenchReport` and formatted
by the same functions as the CLI and Markdown reports."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from workbench.bench.compare import case_matrix
from workbench.bench.report import METRICS, BenchReport, Failure, ScalingSeries, TierReport
from workbench.bench.rows import (
    crossover_lines,
    headline,
    matrix_header,
    matrix_rows,
    plural,
    scaling_header,
    scaling_rows,
    tier_rows,
)
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


def _arm_head(index: int, name: str) -> str:
    return f'<span class="arm-name" style="{arm_style(index)}"><span class="swatch"></span>{esc(name)}</span>'


STYLES = {"green": "good", "red": "bad", "dim": "dim"}
"""The shared rows' styles as this page's classes."""
METRIC_BY_LABEL = {metric.label: metric for metric in METRICS}


def tier_section(tier: TierReport) -> str:
    """One tier's table from the rows every report format shares (:func:`tier_rows`); a metric's cells also
    carry the mean itself (``data-value``), so the page can be checked against ``bench --json``."""
    names = list(tier.arms)
    others = [name for name in names[1:] if name in tier.versus]
    header = ["", *(_arm_head(index, name) for index, name in enumerate(names))]
    for name in others:
        header += [f"{esc(name)} vs {esc(names[0])}", "paired Δ [95% CI]"]
    rows = []
    for label, values, versus in tier_rows(tier):
        metric = METRIC_BY_LABEL.get(label)
        cells = [f'<td class="label">{esc(label)}</td>']
        for name, value in zip(names, values, strict=True):
            if metric is None:
                cells.append(f"<td>{esc(value)}</td>")
                continue
            mean = tier.arms[name].means.get(metric.key)
            cells.append(
                f'<td data-arm="{esc(name)}" data-key="{metric.key}" data-value="{esc(json.dumps(mean))}">'
                f"{esc(value)}</td>"
            )
        for change, paired, style in versus:
            css = STYLES.get(style, "dim")
            cells += [f'<td class="{css}">{esc(change)}</td>', f'<td class="{css}">{esc(paired)}</td>']
        rows.append(cells)
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
    index_of = {name: index for index, name in enumerate(names)}
    rows = [
        [
            f'<td class="label">{esc(label)}</td>',
            _arm_head(index_of[arm], arm) if arm in index_of else f'<td class="label">{esc(arm)}</td>',
            *(esc(value) for value in values),
        ]
        for label, arm, *values in scaling_rows(series)
    ]
    header = [esc(cell) for cell in scaling_header(series)]
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


def cases_section(report: BenchReport) -> str:
    """The per-case matrix: one row per case (task, items, seed), each arm's verdict over its repeats and
    amounts, and its change against the baseline arm; each row names the sessions it was folded from."""
    if not report.runs:
        return ""
    matrix = case_matrix(report.runs)
    header = [esc(cell) for cell in [*matrix_header(matrix), "sessions"]]
    rows = []
    for key, cells in zip(matrix.rows(), matrix_rows(matrix), strict=True):
        kinds = {matrix.change(key, arm).kind for arm in matrix.arms[1:]}
        sessions = sorted({s for cell in matrix.cells[key].values() for s in cell.session_ids})
        row = [esc(cell) for cell in cells]
        row.append(f'<td class="mono">{esc(" ".join(sessions))}</td>')
        rows.append((" ".join(sorted(kinds)), row))
    body = "".join(
        f'<tr data-change="{esc(kind)}">'
        + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row)
        + "</tr>"
        for kind, row in rows
    )
    head = "".join(f"<th>{cell}</th>" for cell in header)
    return (
        f'<section id="cases"><h2>Cases ({len(rows)}): each arm over its repeats, against {esc(matrix.baseline)}</h2>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>"
    )


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
    parts.append(cases_section(report))
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
