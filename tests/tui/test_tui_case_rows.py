"""The case tables' rows without an app: sorting (unknown values last, the size of a change), the filter cycle,
and the matrix's columns read from a :class:`~workbench.bench.compare.CaseMatrix` as it is."""

from __future__ import annotations

from rich.text import Text

from workbench.bench.compare import FILTERS, CaseMatrix, Cell
from workbench.tui.cases import matrix_columns, matrix_rows, next_filter
from workbench.tui.widgets.case_table import Row, ordered


def row(key: str, value: float | str | None) -> Row:
    return Row(key, (Text(key),), (value,))


def keys(rows: list[Row]) -> list[str]:
    return [found.key for found in rows]


def test_ordering_puts_unknown_values_last_in_either_direction() -> None:
    rows = [row("a", 3.0), row("b", None), row("c", -7.0), row("d", 1.0)]
    assert keys(ordered(rows, 0, "amount")) == ["a", "d", "c", "b"]
    assert keys(ordered(rows, 0, "amount", reverse=True)) == ["c", "d", "a", "b"]
    assert keys(ordered(rows, 0, "rank")) == ["c", "d", "a", "b"]
    assert keys(ordered(rows, 0, "change")) == ["c", "a", "d", "b"], "the size of a change, either way"
    assert keys(ordered(rows, 0, "change", reverse=True)) == ["d", "a", "c", "b"]
    assert keys(ordered([row("x", "b"), row("y", "a")], 0, "text")) == ["y", "x"]


def test_the_filter_cycle_is_every_case_then_the_diff_filters() -> None:
    seen = [None]
    for _ in FILTERS:
        seen.append(next_filter(seen[-1]))
    assert seen == [None, *FILTERS] and next_filter(seen[-1]) is None


def cell(passed: int, graded: int, cost: float | None, tokens: float) -> Cell:
    return Cell(graded, passed, graded, 0, 0, cost, tokens, 1.0, ("s",))


def test_matrix_rows_follow_the_matrix_filters_and_put_regressions_first() -> None:
    matrix = CaseMatrix(
        ["tool", "code"],
        {
            ("a", 10, 0): {"tool": cell(2, 2, 0.01, 1000), "code": cell(2, 2, 0.002, 300)},
            ("b", 10, 0): {"tool": cell(2, 2, 0.01, 1000), "code": cell(1, 2, None, 200)},
            ("c", 10, 0): {"tool": cell(0, 2, 0.01, 1000)},
        },
    )
    columns = [column.key for column in matrix_columns(matrix)]
    assert columns[:4] == ["case", "verdict:tool", "verdict:code", "kind:code"]
    rows = matrix_rows(matrix)
    assert keys(rows) == ["b ×10 seed 0", "c ×10 seed 0", "a ×10 seed 0"]
    b = rows[0]
    assert b.cells[2].plain == "✗ 1/2" and b.cells[3].plain == "▼ fewer passes"
    cost_change = columns.index("change_cost_usd:code")
    assert b.values[cost_change] is None and b.cells[cost_change].plain == "–", "an unknown cost is no change"
    assert keys(matrix_rows(matrix, only="regressions")) == ["b ×10 seed 0"]
    assert keys(matrix_rows(matrix, only="failures")) == ["b ×10 seed 0", "c ×10 seed 0"]
    assert keys(matrix_rows(matrix, text="A ×")) == ["a ×10 seed 0"]
