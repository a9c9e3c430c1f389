"""A bench report as a Rich renderable (the CLI), Markdown, JSON and CSV.

Every format is drawn from the same :class:`~workbench.bench.report.BenchReport`; the JSON form
round-trips (``BenchReport.from_dict``), the CSV form is one row per run and arm.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable
from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from workbench.bench.charts import scaling_chart, scaling_grid
from workbench.bench.compare import case_key, case_label, case_matrix
from workbench.bench.report import BenchReport, ScalingSeries, TierReport
from workbench.bench.rows import (
    case_intervals,
    crossover_lines,
    headline,
    matrix_cells,
    matrix_header,
    matrix_rows,
    ordered_cases,
    plural,
    scaling_header,
    scaling_rows,
    tier_rows,
    versus_text,
)
from workbench.display import is_demo
from workbench.errors import BadInput

FORMATS = ("md", "json", "csv", "html")

CSV_COLUMNS = (
    "sweep_id", "session_id", "tier", "task", "app", "items", "seed", "repeat", "model", "reused", "arm",
    "status", "passed", "verdict", "succeeded", "cost_usd", "wall_s", "requests", "input_tokens", "output_tokens",
    "tool_calls", "app_calls", "bytes_seen", "bytes_produced", "error", "tokens_estimated", "sweep_status",
    "case_passed", "case_vs_baseline", "case_cost_change_pct", "case_input_tokens_change_pct",
    "case_wall_change_pct", "demonstration",
)  # fmt: skip
"""``sweep_status`` is the sweep's, on every row: ``running`` marks a partial export of a sweep still going.
The ``case_*`` columns are the per-case matrix in long form: this arm over the case's repeats (``3/4``
passed) and, for arms after the first, the case against the baseline arm (means over repeats)."""


# -- Rich (the CLI) ------------------------------------------------------------------------------


def report_view(
    report: BenchReport, *, chart_metric: str = "cost_usd", width: int = 100, charts: bool = True, sort: str = "change"
) -> RenderableType:
    parts: list[RenderableType] = [Text(headline(report), style="bold")]
    for tier in report.tiers:
        parts += [Text(""), tier_table(tier)]
    if report.scaling:
        names = report.scaling[0].arms
        parts += [Text(""), Text(f"Scaling: {' vs '.join(names)} against item count", style="bold")]
        for series in report.scaling:
            parts.append(Text(""))
            if charts:
                if chart_metric == "all":
                    chart = scaling_grid(series, width=min(width, 140), height=28)
                else:
                    chart = scaling_chart(series, chart_metric, width=min(width, 100), height=14)
                parts.append(Text.from_ansi(chart))
            parts.append(scaling_table(series))
            for line in crossover_lines(series):
                parts.append(Text("  " + line, style="cyan"))
    if report.runs:
        parts += [Text(""), matrix_table(report, sort=sort)]
    if report.failures:
        parts += [Text(""), failures_table(report)]
    labels = report.price_labels
    if labels:
        parts.append(Text("cost: " + "; ".join(labels), style="dim"))
    for note in report.notes:
        parts.append(Text(note, style="dim"))
    return Group(*parts)


def _titled_table(title: str) -> Table:
    """The report's table look: a bold title on the left, no outer edge."""
    return Table(
        title=title, title_justify="left", title_style="bold", show_edge=False, pad_edge=False, header_style="bold"
    )


def tier_table(tier: TierReport, width: int | None = None) -> Table:
    """Figures never cut: each figure column is at least as wide as its widest figure, and only the McNemar
    sentence wraps (at 80 columns it would otherwise squeeze the arms' columns to nothing). With two arms and
    less than ``width`` for every column, the change column goes (the paired Δ starts with the same figure)."""
    table = _titled_table(
        f"{tier.tier} · {plural(tier.tasks, 'task')} · {plural(tier.runs, 'run')} per arm · means per run"
    )
    names = list(tier.arms)
    rows = tier_rows(tier)
    figures = [row for row in rows if not row[0].startswith("success, McNemar")]
    table.add_column("", no_wrap=True)
    for index, name in enumerate(names):
        table.add_column(name, justify="right", no_wrap=True, min_width=_widest(row[1][index] for row in figures))
    two = len(names) == 2
    if two and width is not None:
        needed = _widest(row[0] for row in rows) + sum(column.min_width or 0 for column in table.columns)
        change_header = len(f"{names[1]} vs {names[0]}")
        needed += max(change_header, _widest(row[2][0][0] for row in figures))
        needed += _widest(row[2][0][1] for row in figures) + 3 * 4  # the four column rules and their gaps
        two = needed <= width
    for index, name in enumerate(names[1:]):
        paired_width = _widest(row[2][index][1] for row in figures)
        if two:
            change_width = _widest(row[2][index][0] for row in figures)
            table.add_column(f"{name} vs {names[0]}", justify="right", no_wrap=True, min_width=change_width)
            table.add_column("paired Δ [95% CI]", justify="right", min_width=paired_width)
        else:
            table.add_column(f"{name} vs {names[0]} paired Δ [95% CI]", justify="right", min_width=paired_width)
    for label, values, versus in rows:
        cells: list[Text | str] = [Text(label, style="dim"), *values]
        for change, paired, style in versus:
            if two:
                cells.append(Text(change, style=style))
            cells.append(Text(paired, style=style))
        table.add_row(*cells)
    return table


def _widest(texts: Iterable[str]) -> int:
    return max((len(text) for text in texts), default=0)


def matrix_table(report: BenchReport, limit: int = 25, *, sort: str = "change") -> Table:
    """The per-case matrix, by default cases whose verdict changed against the baseline arm first, then
    failures, each group by the size of its largest change in cost, tokens or time (``sort``: see
    :func:`~workbench.bench.rows.ordered_cases`; the Markdown report has all)."""
    matrix = case_matrix(report.runs)
    keys = ordered_cases(matrix, sort)
    table = _titled_table(f"Cases ({len(keys)}): each arm over its repeats, against {matrix.baseline}")
    table.add_column("case", overflow="fold")
    for arm in matrix.arms:
        table.add_column(arm, justify="right")
    for arm in matrix.arms[1:]:
        table.add_column(f"{arm} vs {matrix.baseline}", overflow="fold")
    for key in keys[:limit]:
        cells: list[Text | str] = [case_label(key)]
        for arm in matrix.arms:
            cell = matrix.cells[key].get(arm)
            if cell is None:
                cells.append("–")
                continue
            passed, cost, _, tokens, wall = matrix_cells(cell)
            cells.append(f"{passed} · {cost}\n{tokens} in · {wall}")
        for arm in matrix.arms[1:]:
            change = matrix.change(key, arm)
            style = {"regression": "red", "improvement": "green"}.get(change.kind, "dim")
            cells.append(Text(versus_text(change, case_intervals(matrix, key, arm)), style=style))
        table.add_row(*cells)
    if len(keys) > limit:
        table.add_row("…", *[""] * (len(table.columns) - 2), f"{len(keys) - limit} more (see --out report.md)")
    return table


def scaling_table(series: ScalingSeries) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold", title=series.task, title_justify="left")
    for index, column in enumerate(scaling_header(series)):
        table.add_column(column, justify="left" if index < 2 else "right", style="dim" if index < 2 else None)
    for row in scaling_rows(series):
        table.add_row(*row)
    return table


def failures_table(report: BenchReport, limit: int = 20) -> Table:
    table = _titled_table(f"Failed runs ({len(report.failures)})")
    for column in ("task", "items", "arm", "status", "why", "session"):
        table.add_column(column, overflow="fold", max_width=60 if column == "why" else None)
    for failure in report.failures[:limit]:
        table.add_row(failure.task, str(failure.items), failure.arm, failure.status, failure.reason, failure.session_id)
    if len(report.failures) > limit:
        table.add_row("…", "", "", "", f"{len(report.failures) - limit} more (see --out report.json)", "")
    return table


# -- Markdown ------------------------------------------------------------------------------------


def to_markdown(report: BenchReport, *, charts: bool = True, sort: str = "case") -> str:
    """The report as Markdown; its case table as run unless ``sort`` says otherwise (``--sort``)."""
    lines = [
        "# Bench report: " + " vs ".join(report.tiers[0].arms if report.tiers else ["the arms"]),
        "",
        f"{headline(report)} · {report.created.strftime('%Y-%m-%d %H:%M UTC')}",
        "",
    ]
    for tier in report.tiers:
        counts = f"{plural(tier.tasks, 'task')}, {plural(tier.runs, 'run')} per arm, means per run"
        lines += [f"## {tier.tier.capitalize()} ({counts})", ""]
        names = list(tier.arms)
        header = [*names]
        for name in names[1:]:
            header += [f"{name} vs {names[0]}", "paired Δ [95% CI]"]
        lines += ["| | " + " | ".join(header) + " |", "|---|" + "---:|" * len(header)]
        for label, values, versus in tier_rows(tier):
            cells = [*values, *(text for change, paired, _ in versus for text in (change, paired))]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
        lines.append("")
    if report.scaling:
        lines += ["## Scaling against item count", ""]
        for series in report.scaling:
            lines += [f"### {series.task}", ""]
            if charts:
                lines += ["```", scaling_grid(series, width=110, height=28, color=False).rstrip(), "```", ""]
            header = scaling_header(series)
            lines += ["| " + " | ".join(header) + " |", "|---|---|" + "---:|" * (len(header) - 2)]
            lines += ["| " + " | ".join(row) + " |" for row in scaling_rows(series)]
            lines += [""] + [f"- {line}" for line in crossover_lines(series)] + [""]
    if report.runs:
        matrix = case_matrix(report.runs)
        header = matrix_header(matrix)
        lines += [f"## Cases ({len(matrix.cells)}): each arm over its repeats, against {matrix.baseline}", ""]
        lines += ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
        lines += ["| " + " | ".join(row) + " |" for row in matrix_rows(matrix, ordered_cases(matrix, sort))]
        lines.append("")
    if report.failures:
        lines += [
            f"## Failed runs ({len(report.failures)})",
            "",
            "| task | items | seed | arm | status | why | session |",
        ]
        lines.append("|---|---:|---:|---|---|---|---|")
        for failure in report.failures:
            reason = failure.reason.replace("|", "\\|")
            lines.append(
                f"| {failure.task} | {failure.items} | {failure.seed} | {failure.arm} | {failure.status} | "
                f"{reason} | {failure.session_id} |"
            )
        lines.append("")
    lines += [
        "## How to read this",
        "",
        "- The first arm is the baseline. Figures are means per run. *X vs baseline* compares the arms' means; "
        "*paired Δ* is X minus the baseline on the same task and seed, as % of the baseline's mean (success: in "
        "points), with a 95% bootstrap interval that resamples tasks, then repeats within each task.",
        "- *pass^k* is the chance that all k repeats of a task pass (tau-bench's measure), averaged over tasks. "
        "*Cost per success* is the total cost over the runs that succeeded. Cached input tokens, where the "
        "provider reports them, are priced at its cached rate and their cost is shown apart.",
        "- *Payload suppression* is 1 − (bytes of tool output the model saw) / (bytes the tools produced).",
        "- *success, McNemar exact* tests the paired verdicts (two-sided, at 0.05): no arm is called better or "
        "worse in success unless it is significant, nor in an amount whose interval crosses zero.",
        "- *Cases*: each arm's verdict over a case's repeats (`3/4` passed), mean cost, cost per successful run, "
        "input tokens and wall time, and the case's change against the baseline arm.",
    ]
    if report.price_labels:
        lines.append("- Cost: " + "; ".join(report.price_labels) + ".")
    lines += [f"- {note}" for note in report.notes]
    return "\n".join(lines) + "\n"


# -- JSON and CSV --------------------------------------------------------------------------------


def to_json(report: BenchReport) -> str:
    return json.dumps(report.to_dict(), ensure_ascii=False, indent=2)


def to_csv(report: BenchReport) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    matrix = case_matrix(report.runs)
    for run in report.runs:
        case = run.case
        key = case_key(run)
        for name, arm in run.arms.items():
            change = matrix.change(key, name)
            versus = name != matrix.baseline
            writer.writerow(
                {
                    "sweep_id": report.sweep_id,
                    "session_id": run.session_id,
                    "tier": case.tier,
                    "task": case.task,
                    "app": case.app,
                    "items": case.items,
                    "seed": case.seed,
                    "repeat": case.repeat,
                    "model": run.model,
                    "reused": run.reused,
                    "arm": name,
                    "status": arm.status,
                    "passed": "" if arm.passed is None else arm.passed,
                    "verdict": arm.verdict,
                    "succeeded": arm.succeeded,
                    "cost_usd": "" if arm.cost_usd is None else f"{arm.cost_usd:.8f}",
                    "wall_s": f"{arm.wall_s:.3f}",
                    "requests": arm.requests,
                    "input_tokens": arm.input_tokens,
                    "output_tokens": arm.output_tokens,
                    "tool_calls": arm.tool_calls,
                    "app_calls": arm.app_calls,
                    "bytes_seen": arm.bytes_seen,
                    "bytes_produced": arm.bytes_produced,
                    "error": arm.error or "",
                    "tokens_estimated": arm.tokens_estimated,
                    "sweep_status": report.status,
                    "case_passed": matrix.cells[key][name].verdict,
                    "case_vs_baseline": change.kind if versus else "",
                    "case_cost_change_pct": _csv_pct(change.change_pct("cost_usd")) if versus else "",
                    "case_input_tokens_change_pct": _csv_pct(change.change_pct("input_tokens")) if versus else "",
                    "case_wall_change_pct": _csv_pct(change.change_pct("wall_s")) if versus else "",
                    "demonstration": is_demo(run.model),
                }
            )
    return buffer.getvalue()


def _csv_pct(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def to_html(report: BenchReport) -> str:
    from workbench.share.sweep_html import sweep_html

    return sweep_html(report)


WRITERS: dict[str, Callable[[BenchReport], str]] = {"md": to_markdown, "json": to_json, "csv": to_csv, "html": to_html}


def format_for(path: str | Path) -> str:
    """The report format a file name asks for (by extension)."""
    suffix = Path(path).suffix.lower().lstrip(".")
    suffix = {"markdown": "md"}.get(suffix, suffix)
    if suffix not in WRITERS:
        raise BadInput(f"cannot tell the report format of {str(path)!r}: use a .md, .json, .csv or .html file name")
    return suffix


def render(report: BenchReport, fmt: str, *, sort: str | None = None) -> str:
    """The report in ``fmt``; ``sort`` orders the Markdown case table (JSON and CSV are data in run order, the
    HTML page sorts its matrix in place)."""
    if sort is not None and fmt == "md":
        return to_markdown(report, sort=sort)
    try:
        return WRITERS[fmt](report)
    except KeyError:
        raise BadInput(f"unknown format {fmt!r}; choose one of: {', '.join(FORMATS)}") from None


def write_report(report: BenchReport, path: str | Path) -> Path:
    target = Path(path).expanduser()
    text = render(report, format_for(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target
