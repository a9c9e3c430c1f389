"""``workbench diff A B`` (what changed, case by case) and ``workbench gate`` (exit 0 / 1 regression /
2 incomplete, for CI). A and B are sweep ids, session ids (prefixes) or exported JSON files.

Heavy imports stay inside the commands, so ``workbench --help`` stays quick.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from workbench.commands.options import CASE_SORTS, InputError, db_option, json_option, open_store

if TYPE_CHECKING:
    from workbench.bench.sides import Side

FILTERS = ("failures", "different", "regressions", "improvements")


def _side(ref: str, db: str | None) -> Side:
    """One side; the database is opened only when ``ref`` is an id, not a file."""
    from workbench.bench.sides import load_side

    return load_side(ref, lambda: open_store(db))


@click.command("diff")
@click.argument("a", metavar="A")
@click.argument("b", metavar="B")
@click.option("--only", type=click.Choice(FILTERS), default=None, help="Only these cases.")
@click.option("--filter", "text", metavar="TEXT", default=None, help="Only cases whose task contains TEXT.")
@click.option(
    "--arm", "arms", multiple=True, metavar="NAME", help="Only this arm (repeatable; default: every shared arm)."
)
@click.option(
    "--sort",
    type=click.Choice(CASE_SORTS),
    default="case",
    show_default=True,
    help="Order of the cases: as run, verdict changes first (regressions first), or by the size of a change.",
)
@click.option("--format", "fmt", type=click.Choice(("text", "md", "html")), default="text", show_default=True)
@click.option("--out", "out_path", metavar="FILE", help="Write to FILE instead of standard output.")
@json_option
@db_option
def diff_command(
    a: str, b: str, only: str | None, text: str | None, arms: tuple[str, ...], sort: str, fmt: str,
    out_path: str | None, as_json: bool, db: str | None,
) -> None:  # fmt: skip
    """Compare two sweeps or two sessions case by case (task, items and seed, arms by name): verdict flips,
    cost, token and time changes with paired intervals, McNemar's test on success, cases only on one side.

    A is the baseline. A and B are sweep ids, session ids (prefixes) or exported JSON files."""
    from workbench.bench.diff import diff_sides, render_html, render_json, render_markdown, render_text

    diff = diff_sides(_side(a, db), _side(b, db), arms=arms or None)
    diff.sort(sort)
    render = render_json if as_json else {"text": render_text, "md": render_markdown, "html": render_html}[fmt]
    _emit(render(diff, only=only, text=text), out_path)


@click.command("gate")
@click.option("--baseline", required=True, metavar="A", help="Sweep id, session id or exported JSON file.")
@click.option("--candidate", required=True, metavar="B", help="Sweep id, session id or exported JSON file.")
@click.option(
    "--max-success-drop",
    type=click.FloatRange(0, 100),
    default=5.0,
    show_default=True,
    metavar="PTS",
    help="Points of success the candidate may lose before the drop alone fails the gate (a drop McNemar's "
    "test finds significant fails it anyway).",
)
@click.option(
    "--max-cost-increase",
    type=click.FloatRange(0, 1e6),
    default=None,
    metavar="PCT",
    help="Fail when the paired bootstrap interval of the cost change lies wholly above +PCT%. Default: not gated.",
)
@click.option(
    "--max-time-increase",
    type=click.FloatRange(0, 1e6),
    default=None,
    metavar="PCT",
    help="The same for wall time (compare sweeps run on the same machine). Default: not gated.",
)
@click.option("--arm", "arms", multiple=True, metavar="NAME", help="Gate only this arm (repeatable).")
@click.option("--summary", "summary_path", metavar="FILE.md", help="Write a PR-comment body (Markdown) to FILE.md.")
@click.option("--reproduce", metavar="COMMAND", default=None, help="The command the summary says reproduces B.")
@click.option(
    "--session-url",
    metavar="TEMPLATE",
    default=None,
    help="Link each regressed case's sessions in the summary: a URL with {session} in it (e.g. where CI uploads "
    "`workbench export SESSION --format html`).",
)
@json_option
@db_option
def gate_command(
    baseline: str, candidate: str, max_success_drop: float, max_cost_increase: float | None,
    max_time_increase: float | None, arms: tuple[str, ...], summary_path: str | None, reproduce: str | None,
    session_url: str | None, as_json: bool, db: str | None,
) -> None:  # fmt: skip
    """Fail CI on a regression: exit 0 within bounds, 1 on a regression (listed per case), 2 when either side
    is incomplete, unknown or not comparable (never 0 for an incomplete run).

    Success regresses when more runs flip pass→fail than fail→pass and McNemar's exact test is significant
    at 0.05 or the drop exceeds --max-success-drop. Also writes the summary to $GITHUB_STEP_SUMMARY when set."""
    import json

    from workbench.bench.diff import diff_sides
    from workbench.bench.gate import GateRules, judge, summary_markdown

    before, after = _side(baseline, db), _side(candidate, db)
    if arms:
        unknown = [name for name in arms if name not in before.arms or name not in after.arms]
        if unknown:
            raise InputError(f"--arm {', '.join(unknown)}: not run on both sides (A: {', '.join(before.arms)}; "
                             f"B: {', '.join(after.arms)})")  # fmt: skip
    rules = GateRules(max_success_drop, max_cost_increase, max_time_increase)
    result = judge(diff_sides(before, after, arms=arms or None, target_points=max_success_drop or None), rules)
    command = reproduce or "workbench gate " + " ".join(shlex.quote(arg) for arg in sys.argv[2:])
    if session_url is not None and "{session}" not in session_url:
        raise InputError(f"--session-url {session_url!r} has no {{session}} to put the session id in")
    links = None
    if session_url is not None:
        sessions = {run.session_id for side in (before, after) for run in side.runs}
        links = {session: session_url.replace("{session}", session) for session in sessions}
    body = summary_markdown(result, reproduce=command, links=links)
    if summary_path:
        _write(Path(summary_path).expanduser(), body)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with Path(step_summary).open("a", encoding="utf-8") as handle:
            handle.write(body + "\n")
    if as_json:
        click.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        click.echo(_gate_text(result))
    sys.exit(result.exit_code)


def _gate_text(result: object) -> str:
    from workbench.bench.diff import summary_lines
    from workbench.bench.gate import GateResult

    assert isinstance(result, GateResult)
    diff = result.diff
    lines = [result.headline, f"  A: {diff.before.label}", f"  B: {diff.after.label}"]
    lines += [f"  ! {note}" for note in diff.notes]
    lines += [f"  incomplete: {reason}" for reason in result.incomplete]
    for arm in diff.arms:
        lines.append(f"  arm {arm.after}:")
        lines += [f"    {line}" for line in summary_lines(arm)]
    for finding in result.regressions:
        lines.append(f"  REGRESSION arm {finding.arm}, {finding.metric}: {finding.reason}")
        for change in finding.cases:
            before = "–" if change.before is None else change.before.verdict
            after = "–" if change.after is None else change.after.verdict
            sessions = ", ".join(change.after.session_ids) if change.after else "–"
            lines.append(f"    {change.label}: {before} → {after} (B sessions: {sessions})")
    lines += [f"  within bounds: {line}" for line in result.within_bounds]
    return "\n".join(lines)


def _emit(text: str, out_path: str | None) -> None:
    if out_path is None:
        click.echo(text, nl=not text.endswith("\n"))
        return
    target = Path(out_path).expanduser()
    _write(target, text)
    click.echo(f"written to {target}", err=True)


def _write(target: Path, text: str) -> None:
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write {target}: {error.strerror or error}") from None
