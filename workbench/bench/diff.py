"""Two sweeps (or sessions) side by side: cases aligned on task, items and seed, arms by name.

:func:`diff_sides` builds a :class:`SideDiff`; the ``render_*`` functions lay it out as text rows, Markdown,
JSON or a self-contained HTML page, the same rows in each. ``workbench gate`` reads the same object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.bench.compare import AMOUNTS, SORT_METRICS, ArmComparison, CaseChange, Cell, compare_arms
from workbench.bench.sides import Side
from workbench.bench.significance import ALPHA
from workbench.bench.stats import DEFAULT_RESAMPLES
from workbench.display import DEMO_LABEL, DEMO_NOTE, money


@dataclass
class SideDiff:
    """Side ``before`` (A, the baseline) against ``after`` (B), per shared arm."""

    before: Side
    after: Side
    arms: list[ArmComparison]
    only_before: list[str]
    """Arms only side A ran."""
    only_after: list[str]

    @property
    def notes(self) -> list[str]:
        notes = []
        demo = [side.label for side in (self.before, self.after) if side.demo]
        if demo:
            notes.append(DEMO_NOTE.format(what=" and ".join(demo)))
        for side in (self.before, self.after):
            reason = side.incomplete()
            if reason:
                notes.append(f"Incomplete: {reason}.")
        if self.only_before:
            notes.append(f"Arms only in A: {', '.join(self.only_before)}.")
        if self.only_after:
            notes.append(f"Arms only in B: {', '.join(self.only_after)}.")
        return notes

    def sort(self, by: str) -> None:
        """Order every arm's cases: ``case`` (as run), ``change`` (regressions, then improvements, then cases on
        one side only), or ``cost`` / ``tokens`` / ``time`` (the largest change either way first)."""
        if by == "case":
            return
        if by == "change":
            order = {"regression": 0, "improvement": 1, "only before": 2, "only after": 3, "same": 4}
            for arm in self.arms:
                arm.changes.sort(key=lambda change: order[change.kind])
            return
        metric = SORT_METRICS[by]
        for arm in self.arms:
            arm.changes.sort(key=lambda change: -abs(change.change_pct(metric) or 0.0))

    def to_dict(self, *, only: str | None = None, text: str | None = None) -> dict[str, Any]:
        arms = []
        for arm in self.arms:
            data = arm.to_dict()
            data["cases"] = [change.to_dict() for change in arm.changes if change.matches(only, text)]
            arms.append(data)
        return {
            "a": self.before.to_dict(),
            "b": self.after.to_dict(),
            "arms": arms,
            "only_in_a": self.only_before,
            "only_in_b": self.only_after,
            "notes": self.notes,
        }


def diff_sides(
    before: Side,
    after: Side,
    *,
    arms: Sequence[str] | None = None,
    alpha: float = ALPHA,
    target_points: float | None = None,
    resamples: int = DEFAULT_RESAMPLES,
) -> SideDiff:
    """Compare every arm both sides ran (or only ``arms``), in side A's order."""
    shared = [name for name in before.arms if name in after.arms]
    if arms:
        shared = [name for name in shared if name in arms]
    comparisons = [
        compare_arms(
            before.runs,
            name,
            after.runs,
            name,
            alpha=alpha,
            target_points=target_points,
            resamples=resamples,
            seed=name,
        )
        for name in shared
    ]
    return SideDiff(
        before,
        after,
        comparisons,
        [name for name in before.arms if name not in after.arms],
        [name for name in after.arms if name not in before.arms],
    )


# -- rows ------------------------------------------------------------------------------------------

CASE_HEADER = ("case", "change", "A", "B", "cost A", "cost B", "Δ cost", "Δ input tokens", "Δ wall time")


def cell_cost(cell: Cell | None) -> str:
    if cell is None:
        return "–"
    return money(cell.cost_usd, unknown="unknown")


def pct(value: float | None) -> str:
    return "–" if value is None else f"{value:+.0f}%"


def case_row(change: CaseChange) -> list[str]:
    return [
        change.label,
        change.kind,
        "–" if change.before is None else change.before.verdict,
        "–" if change.after is None else change.after.verdict,
        cell_cost(change.before),
        cell_cost(change.after),
        pct(change.change_pct("cost_usd")),
        pct(change.change_pct("input_tokens")),
        pct(change.change_pct("wall_s")),
    ]


def summary_lines(arm: ArmComparison) -> list[str]:
    """The arm's verdict line (McNemar), the pairs-needed figure, and one line per amount (bootstrap)."""
    lines = [f"success: {arm.success.describe()}"]
    if arm.success.pairs:
        lines.append(arm.success.needed_text())
    lines += [arm.amount_line(metric, label) for metric, label in AMOUNTS]
    return lines


def arm_title(diff: SideDiff, arm: ArmComparison) -> str:
    return f"arm {arm.after}: B ({diff.after.label}) against A ({diff.before.label})"


def render_text(diff: SideDiff, *, only: str | None = None, text: str | None = None) -> str:
    """Plain aligned text, for a terminal or a log."""
    out = [f"A: {side_line(diff.before)}", f"B: {side_line(diff.after)}", ""]
    out += [f"! {note}" for note in diff.notes]
    for arm in diff.arms:
        out += ["", arm_title(diff, arm)]
        out += [f"  {line}" for line in summary_lines(arm)]
        rows = [case_row(change) for change in arm.changes if change.matches(only, text)]
        out += ["", *_aligned([list(CASE_HEADER), *rows])] if rows else ["  (no case matches)"]
    if not diff.arms:
        out.append("no arm ran on both sides: nothing to compare")
    return "\n".join(out) + "\n"


def render_markdown(diff: SideDiff, *, only: str | None = None, text: str | None = None) -> str:
    out = ["# Diff", "", f"- A: {side_line(diff.before)}", f"- B: {side_line(diff.after)}", ""]
    out += [f"> {note}" for note in diff.notes] + ([""] if diff.notes else [])
    for arm in diff.arms:
        out += [f"## {arm_title(diff, arm)}", ""]
        out += [f"- {line}" for line in summary_lines(arm)] + [""]
        rows = [case_row(change) for change in arm.changes if change.matches(only, text)]
        out += markdown_table(CASE_HEADER, rows) if rows else ["(no case matches)"]
        out.append("")
    if not diff.arms:
        out.append("No arm ran on both sides: nothing to compare.")
    return "\n".join(out) + "\n"


def render_json(diff: SideDiff, *, only: str | None = None, text: str | None = None) -> str:
    return json.dumps(diff.to_dict(only=only, text=text), ensure_ascii=False, indent=2)


def render_html(diff: SideDiff, *, only: str | None = None, text: str | None = None) -> str:
    """A self-contained page (no scripts, no network): the same rows as the Markdown."""
    from workbench.share.page import esc, page, table

    body = [f"<h1>Diff</h1><p>A: {esc(side_line(diff.before))}<br>B: {esc(side_line(diff.after))}</p>"]
    body += [f'<p class="note">{esc(note)}</p>' for note in diff.notes]
    for arm in diff.arms:
        body.append(f"<h2>{esc(arm_title(diff, arm))}</h2><ul>")
        body += [f"<li>{esc(line)}</li>" for line in summary_lines(arm)]
        body.append("</ul>")
        rows = [[esc(cell) for cell in case_row(change)] for change in arm.changes if change.matches(only, text)]
        body.append(table(CASE_HEADER, rows) if rows else "<p>(no case matches)</p>")
    return page("Diff", "\n".join(body))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return [line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]


def _aligned(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    return [
        "  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows
    ]


def side_line(side: Side) -> str:
    demo = f" · {DEMO_LABEL}" if side.demo else ""
    models = ", ".join(side.models) or "no runs"
    return f"{side.label} · {side.status} · {len(side.runs)} of {side.planned} runs · model {models}{demo}"
