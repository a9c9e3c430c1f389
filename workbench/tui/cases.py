"""The rows of the TUI's case tables: a sweep's per-case matrix and a diff of two sweeps or sessions.

Read from :mod:`workbench.bench.compare`'s objects (a :class:`CaseMatrix`, a :class:`SideDiff`'s
:class:`CaseChange` lists) as they are: nothing is folded again here, only laid out as cells with the value
each sorts by. Textual-free, so the layout is tested without an app.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text

from workbench.bench.compare import AMOUNTS, FILTERS, CaseChange, CaseKey, CaseMatrix, Cell, case_label
from workbench.bench.diff import SideDiff, pct
from workbench.bench.rows import interesting_first, matrix_cells
from workbench.tui.widgets.case_table import Column, Row

FILTER_CYCLE: tuple[str | None, ...] = (None, *FILTERS)
"""What ``f`` steps through: every case, then each of ``workbench diff --only``'s filters."""

KIND_RANK = {"regression": 0, "improvement": 1, "only before": 2, "only after": 3, "same": 4}
"""A change's kind as it sorts: regressions first (as ``diff --sort change``)."""

SHORT = {"cost_usd": "cost", "input_tokens": "in", "wall_s": "wall"}
"""Column labels of the amounts (the header stays narrow: the values are short)."""

PER_ARM = (("cost_usd", 1), ("cost_per_success", 2), ("input_tokens", 3), ("wall_s", 4))
"""Each amount's place in :func:`workbench.bench.rows.matrix_cells`' list."""


def next_filter(current: str | None) -> str | None:
    return FILTER_CYCLE[(FILTER_CYCLE.index(current) + 1) % len(FILTER_CYCLE)]


def verdict_cell(cell: Cell | None) -> tuple[Text, float | None]:
    """``✓ 2/2`` (every graded run passed), ``✗ 1/2``, ``agree 2/2`` or ``not graded``; sorts by pass rate."""
    if cell is None:
        return Text("–", style="dim", justify="right"), None
    if cell.graded:
        whole = cell.passed == cell.graded
        style = "green" if whole else "red" if cell.passed == 0 else "yellow"
        text = Text(f"{'✓' if whole else '✗'} {cell.verdict}", style=style, justify="right")
    else:
        text = Text(cell.verdict, style="dim", justify="right")
    if cell.unfinished:
        text.append(f" ({cell.unfinished} unfinished)", style="yellow")
    return text, cell.rate


def kind_cell(change: CaseChange, *, before: str, after: str) -> tuple[Text, float]:
    """The verdict's direction against the baseline: ``▼ fewer passes``, ``▲ more passes``, ``same``, or which
    side the case ran on only."""
    label, style = {
        "regression": ("▼ fewer passes", "bold red"),
        "improvement": ("▲ more passes", "bold green"),
        "same": ("same", "dim"),
        "only before": (f"only in {before}", "yellow"),
        "only after": (f"only in {after}", "yellow"),
    }[change.kind]
    return Text(label, style=style), float(KIND_RANK[change.kind])


def amount_cell(cell: Cell | None, metric: str) -> tuple[Text, float | None]:
    if cell is None:
        return Text("–", style="dim", justify="right"), None
    index = dict(PER_ARM)[metric]
    shown = matrix_cells(cell)[index]
    return Text(shown, justify="right", style="dim" if shown in ("unknown", "–") else ""), cell.value(metric)


def change_cell(change: CaseChange, metric: str) -> tuple[Text, float | None]:
    """After against before in % (plain: one case's change is no finding; the diff's intervals are)."""
    value = change.change_pct(metric)
    return Text(pct(value), justify="right", style="dim" if value is None else ""), value


def _row(key: str, cells: list[tuple[Text, float | str | None]]) -> Row:
    return Row(key, tuple(text for text, _ in cells), tuple(value for _, value in cells))


# -- a sweep's matrix --------------------------------------------------------------------------------


def matrix_columns(matrix: CaseMatrix) -> list[Column]:
    """The case, every arm's verdict, each other arm's change against the baseline, then per amount every
    arm's figure beside the others' change (so a column next to its baseline reads as a comparison)."""
    base, others = matrix.baseline, matrix.arms[1:]
    columns = [Column("case", "case")]
    columns += [Column(arm, f"verdict:{arm}", "rank") for arm in matrix.arms]
    columns += [Column(f"{arm} vs {base}", f"kind:{arm}", "rank") for arm in others]
    for metric, _ in AMOUNTS:
        columns += [Column(f"{arm} {SHORT[metric]}", f"{metric}:{arm}", "amount") for arm in matrix.arms]
        columns += [Column(f"{arm} Δ{SHORT[metric]}", f"change_{metric}:{arm}", "change") for arm in others]
        if metric == "cost_usd":
            columns += [Column(f"{arm} cost/pass", f"cost_per_success:{arm}", "amount") for arm in matrix.arms]
    return columns


def matrix_rows(matrix: CaseMatrix, *, only: str | None = None, text: str | None = None) -> list[Row]:
    """One row per case that passes the filter (against the baseline, as ``bench``'s report filters), cases
    that changed first (regressions, then improvements, then failures: the CLI's order)."""
    wanted = set(matrix.rows(only=only, text=text))
    return [matrix_row(matrix, key) for key in interesting_first(matrix) if key in wanted]


def matrix_row(matrix: CaseMatrix, key: CaseKey) -> Row:
    base, others = matrix.baseline, matrix.arms[1:]
    row = matrix.cells[key]
    label = case_label(key)
    cells: list[tuple[Text, float | str | None]] = [(Text(label), label)]
    cells += [verdict_cell(row.get(arm)) for arm in matrix.arms]
    cells += [kind_cell(matrix.change(key, arm), before=base, after=arm) for arm in others]
    for metric, _ in AMOUNTS:
        cells += [amount_cell(row.get(arm), metric) for arm in matrix.arms]
        cells += [change_cell(matrix.change(key, arm), metric) for arm in others]
        if metric == "cost_usd":
            cells += [amount_cell(row.get(arm), "cost_per_success") for arm in matrix.arms]
    return _row(label, cells)


def column_arm(column_key: str | None, matrix: CaseMatrix) -> str:
    """The arm a matrix column is about (the case column: the baseline)."""
    if column_key is None or ":" not in column_key:
        return matrix.baseline
    return column_key.rsplit(":", 1)[1]


# -- a diff of two sides -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DiffRowKey:
    arm: str
    change: CaseChange

    @property
    def key(self) -> str:
        return f"{self.arm}|{self.change.label}"


def diff_columns(diff: SideDiff) -> list[Column]:
    columns = [Column("case", "case"), *([Column("arm", "arm")] if len(diff.arms) > 1 else [])]
    columns.append(Column("change", "kind", "rank"))
    columns += [Column("A", "verdict:a", "rank"), Column("B", "verdict:b", "rank")]
    columns += [Column("cost A", "cost_usd:a", "amount"), Column("cost B", "cost_usd:b", "amount")]
    columns += [Column(f"Δ {SHORT[metric]}", f"change_{metric}", "change") for metric, _ in AMOUNTS]
    return columns


def diff_rows(diff: SideDiff, *, only: str | None = None, text: str | None = None) -> list[tuple[DiffRowKey, Row]]:
    """Every arm's cases that pass the filter (``workbench diff``'s rows), in the diff's order."""
    found = []
    many = len(diff.arms) > 1
    for arm in diff.arms:
        for change in arm.changes:
            if not change.matches(only, text):
                continue
            ref = DiffRowKey(arm.after, change)
            cells: list[tuple[Text, float | str | None]] = [(Text(change.label), change.label)]
            if many:
                cells.append((Text(arm.after), arm.after))
            cells.append(kind_cell(change, before="A", after="B"))
            cells += [verdict_cell(change.before), verdict_cell(change.after)]
            cells += [amount_cell(change.before, "cost_usd"), amount_cell(change.after, "cost_usd")]
            cells += [change_cell(change, metric) for metric, _ in AMOUNTS]
            found.append((ref, _row(ref.key, cells)))
    return found


def filter_text(only: str | None, text: str, shown: int, total: int) -> str:
    """``regressions · “cart” · 3 of 12 cases``, for the line above a table."""
    parts = [only or "every case"]
    if text:
        parts.append(f"matching “{text}”")
    parts.append(f"{shown} of {total} case{'s' if total != 1 else ''}")
    return " · ".join(parts)
