"""A sweep's report as a self-contained HTML page: per-tier tables with paired deltas and intervals, the scaling
charts as inline SVG, and the failed runs. Every figure is drawn from the :class:`BenchReport` and formatted
by the same functions as the CLI and Markdown reports."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from workbench.bench.compare import FILTERS, Cell, case_key, case_label, case_matrix
from workbench.bench.report import METRICS, BenchReport, Failure, ScalingSeries, TierReport
from workbench.bench.rows import (
    MATRIX_PER_ARM,
    crossover_lines,
    headline,
    matrix_header,
    matrix_rows,
    plural,
    scaling_header,
    scaling_rows,
    tier_rows,
)
from workbench.display import size
from workbench.share.page import arm_colour, arm_style, esc, esc_text, page, table
from workbench.share.session_html import Embedding, session_body
from workbench.share.svg import Line, line_chart
from workbench.verdict import VERDICT_WORDS

if TYPE_CHECKING:
    from workbench.session import Comparison

CHARTS: tuple[tuple[str, str], ...] = (
    ("cost_usd", "cost per run (USD)"),
    ("input_tokens", "input tokens per run"),
    ("wall_s", "wall time per run (s)"),
    ("success", "success rate (%)"),
)
FAILURES_SHOWN = 20
"""Failed runs listed before the rest are folded."""
EMBED_CLIP = 1_000
"""Longest result, argument or answer an embedded session shows (cut with a visible mark past it)."""
EMBED_DIFF_ROWS = 20
"""Records listed per kind of change in an embedded session's end state (the counts stay exact)."""
SESSIONS_BOUND = 8 * 1024 * 1024
"""Most bytes of embedded sessions one page holds (the 87-run offline suite takes about 5.3 MB): past it, the
remaining sessions are named, with the command that exports each, not embedded, so a sweep of thousands of
runs still makes a page a browser opens."""

_OPEN_TARGET = (
    "function openTarget(){const t=location.hash&&document.getElementById(decodeURIComponent(location.hash.slice(1)));"
    "if(!t)return;for(let e=t;e;e=e.parentElement)if(e.tagName==='DETAILS')e.open=true;t.scrollIntoView()}"
    "addEventListener('hashchange',openTarget);addEventListener('DOMContentLoaded',openTarget);"
)
"""A link to an embedded session (``#session-ID``) unfolds it and every fold around its target."""
_CASES_SCRIPT = (
    "(()=>{const t=document.querySelector('#cases table');if(!t)return;const b=t.tBodies[0],"
    "f=document.getElementById('cases-filter'),q=document.getElementById('cases-text');"
    "const show=()=>{const k=f.value,s=q.value.toLowerCase();for(const r of b.rows)"
    "r.hidden=!((!k||r.dataset[k]==='1')&&(!s||r.cells[0].textContent.toLowerCase().includes(s)))};"
    "f.addEventListener('change',show);q.addEventListener('input',show);"
    "const key=(c,vs)=>{const x=c.textContent.replace(/,/g,'');if(vs){const m=x.match(/[-+]\\d+(?=%)/g);"
    "return m?Math.max(...m.map(v=>Math.abs(+v))):-1}const p=x.match(/(\\d+)\\/(\\d+)/);if(p)return +p[1]/+p[2];"
    "const n=x.match(/-?\\d+(\\.\\d+)?/);return n?+n[0]:x};"
    "[...t.tHead.rows[0].cells].forEach((h,i)=>{h.style.cursor='pointer';h.addEventListener('click',()=>{"
    "const vs=h.textContent.includes(' vs '),d=h.dataset.dir==='desc'?'asc':'desc';h.dataset.dir=d;"
    "const rows=[...b.rows].sort((a,c)=>{const x=key(a.cells[i],vs),y=key(c.cells[i],vs);"
    "const r=typeof x==='number'&&typeof y==='number'?x-y:String(x).localeCompare(String(y));"
    "return d==='desc'?-r:r});rows.forEach(r=>b.appendChild(r))})})})();"
)
"""The matrix's filters (:data:`~workbench.bench.compare.FILTERS` and a text filter) and sorting by a column's
head, in the page itself: a change column sorts by its largest change either way."""


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


def session_anchor(session_id: str) -> str:
    """The id of an embedded session's section (what a matrix cell links to)."""
    return f"session-{session_id}"


def _session_link(session_id: str, text: str, embedded: set[str]) -> str:
    if session_id in embedded:
        return f'<a class="session-link" href="#{session_anchor(session_id)}">{esc(text)}</a>'
    return esc(text)


def _verdict_cell(cell: Cell | None, text: str, embedded: set[str]) -> str:
    """An arm's verdict on a case, linked to the session it came from (each further repeat as ``#2``, ``#3``)."""
    if cell is None or not cell.session_ids:
        return esc(text)
    first, *more = cell.session_ids
    links = [_session_link(first, text, embedded)]
    links += [_session_link(session, f"#{number}", embedded) for number, session in enumerate(more, start=2)]
    return f'<td data-sessions="{esc(" ".join(cell.session_ids))}">{" ".join(links)}</td>'


def cases_section(report: BenchReport, embedded: set[str] | None = None) -> str:
    """The per-case matrix: one row per case (task, items, seed), each arm's verdict over its repeats and
    amounts, and its change against the baseline arm. Each arm's verdict links to its session's section when
    the page embeds it (``embedded``); each row names the sessions it was folded from."""
    if not report.runs:
        return ""
    embedded = embedded or set()
    matrix = case_matrix(report.runs)
    others = matrix.arms[1:]
    header = [esc(cell) for cell in [*matrix_header(matrix), "sessions"]]
    per_arm = len(MATRIX_PER_ARM)
    rows = []
    for key, cells in zip(matrix.rows(), matrix_rows(matrix), strict=True):
        kinds = {matrix.change(key, arm).kind for arm in matrix.arms[1:]}
        sessions = sorted({s for cell in matrix.cells[key].values() for s in cell.session_ids})
        row = [esc(cell) for cell in cells]
        for index, arm in enumerate(matrix.arms):
            column = 1 + index * per_arm
            row[column] = _verdict_cell(matrix.cells[key].get(arm), cells[column], embedded)
        row.append(f'<td class="mono">{" ".join(_session_link(s, s, embedded) for s in sessions)}</td>')
        matching = [only for only in FILTERS if any(matrix.change(key, arm).matches(only, None) for arm in others)]
        marks = "".join(f' data-{only}="1"' for only in matching)
        rows.append((" ".join(sorted(kinds)), marks, row))
    body = "".join(
        f'<tr data-change="{esc(kind)}"{marks}>'
        + "".join(cell if cell.startswith("<td") else f"<td>{cell}</td>" for cell in row)
        + "</tr>"
        for kind, marks, row in rows
    )
    head = "".join(f"<th>{cell}</th>" for cell in header)
    options = "".join(f'<option value="{only}">{only}</option>' for only in FILTERS)
    controls = (
        '<p class="dim cases-controls">Show <select id="cases-filter"><option value="">every case</option>'
        f'{options}</select> <input id="cases-text" type="search" placeholder="task contains…"> · a column\'s '
        "head sorts by it (a change column: the largest change either way first; again: reversed)</p>"
    )
    return (
        f'<section id="cases"><h2>Cases ({len(rows)}): each arm over its repeats, against {esc(matrix.baseline)}</h2>'
        f"{controls}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>"
    )


def sessions_section(
    report: BenchReport, sessions: Mapping[str, Comparison], bound: int | None = None
) -> tuple[str, set[str]]:
    """Each run's session, folded until opened, in the matrix's order, and the ids embedded. Every session is
    drawn by :func:`session_body` (the session export's own fold, with ids of its own and long results cut);
    past ``bound`` characters the rest are listed with the command that exports each."""
    bound = SESSIONS_BOUND if bound is None else bound
    order = list(dict.fromkeys(run.session_id for run in sorted(report.runs, key=case_key)))
    cases = {run.session_id: case_label(case_key(run)) for run in report.runs}
    parts: list[str] = []
    embedded: set[str] = set()
    left: list[str] = []
    used = 0
    for session_id in order:
        comparison = sessions.get(session_id)
        if comparison is None:
            left.append(session_id)
            continue
        anchor = session_anchor(session_id)
        body = session_body(comparison, Embedding(prefix=f"{anchor}-", clip=EMBED_CLIP, diff_rows=EMBED_DIFF_ROWS))
        weight = len(body.encode())
        if used + weight > bound:
            left.append(session_id)
            continue
        used += weight
        embedded.add(session_id)
        verdicts = " · ".join(
            f"{arm.name} {VERDICT_WORDS.get(arm.summary.verdict, arm.summary.verdict)}"
            for arm in comparison.arms.values()
        )
        parts.append(
            f'<details class="session" id="{anchor}" data-session="{esc(session_id)}"><summary>'
            f'<b>{esc(cases.get(session_id, session_id))}</b> <span class="dim">{esc(verdicts)} · '
            f'<span class="mono">{esc(session_id)}</span></span> <a href="#cases">back to the cases</a></summary>'
            f"{body}</details>"
        )
    if not parts and not left:
        return "", embedded
    note = (
        f"Each run's session, folded until opened (a verdict in the matrix opens its own). Results past "
        f"{EMBED_CLIP:,} characters are clipped (marked); `workbench export ID --format html` has a session whole."
    )
    if left:
        missing = sum(1 for session_id in left if session_id not in sessions)
        why = f"{missing} not in this database" if missing else ""
        over = len(left) - missing
        if over:
            why = ", ".join(filter(None, [why, f"{over} past the page's bound of {size(bound)}"]))
        note += f" {len(left)} not embedded ({why}): " + " ".join(left) + "."
    return (
        f'<section id="sessions"><h2>Sessions ({len(embedded)} of {len(order)})</h2>'
        f'<p class="dim" id="sessions-note">{esc_text(note)}</p>' + "\n".join(parts) + "</section>",
        embedded,
    )


def sweep_html(report: BenchReport, sessions: Mapping[str, Comparison] | None = None) -> str:
    """The whole page for one sweep's report; with ``sessions`` (by id), each run's session embedded and the
    matrix linked to them, in the one file."""
    embedded_section, embedded = sessions_section(report, sessions) if sessions is not None else ("", set())
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
    parts.append(cases_section(report, embedded))
    parts.append(failures_section(report))
    parts.append(_how_to_read(report))
    parts.append(embedded_section)
    return page(
        f"Bench report {report.sweep_id}".strip(), "\n".join(parts), highlight=bool(embedded),
        script=(_OPEN_TARGET if embedded else "") + (_CASES_SCRIPT if report.runs else ""),
    )  # fmt: skip


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
