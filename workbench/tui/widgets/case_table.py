"""A table of cases that sorts by any column and keeps its cursor on the same case when it is refilled.

The bench screen's per-case matrix and the diff screen both draw one: the screen hands it columns and rows
(already filtered), the table orders them (``s`` on a column: first direction, reversed, back to the screen's
order) and puts the cursor back on the row and column it was on, so a filter, a sort or a reload never loses
the user's place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

FIRST_DIRECTION = {
    "text": "A to Z",
    "rank": "lowest first",
    "amount": "largest first",
    "change": "largest change first",
}
"""How a column sorts first, by its order: ``text`` A to Z, ``rank`` lowest first (a pass rate: failures first; a
change's kind: regressions first), ``amount`` largest first, ``change`` the largest change either way first."""
REVERSED_DIRECTION = {
    "text": "Z to A",
    "rank": "highest first",
    "amount": "smallest first",
    "change": "smallest change first",
}

Value = float | str | None
"""What a cell sorts by; ``None`` (unknown, not run) always sorts last."""


@dataclass(frozen=True)
class Column:
    label: str
    key: str
    order: str = "text"


@dataclass(frozen=True)
class Row:
    key: str
    cells: tuple[Text, ...]
    values: tuple[Value, ...]


def ordered(rows: Sequence[Row], index: int, order: str, *, reverse: bool = False) -> list[Row]:
    """The rows sorted by column ``index`` as ``order`` says (reversed on request); unknown values last,
    ties in the given order."""
    present = [row for row in rows if row.values[index] is not None]
    missing = [row for row in rows if row.values[index] is None]

    def key(row: Row) -> float | str:
        value = row.values[index]
        assert value is not None
        if order == "change" and not isinstance(value, str):
            return abs(value)
        return value

    descending = order in ("amount", "change")
    present.sort(key=key, reverse=descending != reverse)
    return present + missing


class CaseTable(DataTable[Text]):
    """Cell cursor, a fixed first column; :meth:`show` fills it, :meth:`cycle_sort` sorts by the cursor's column."""

    BINDINGS = [
        Binding("enter", "select_cursor", "Replay", id="cases.replay", tooltip="Replay the run behind the cell"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="cell", zebra_stripes=True, fixed_columns=1)
        self.columns_shown: list[Column] = []
        self.rows_shown: list[Row] = []
        self._given: list[Row] = []
        self.sort_by: tuple[str, bool] | None = None
        """(column key, reversed) of the sort the user chose; ``None``: the screen's own order."""

    @property
    def current(self) -> tuple[str | None, str | None]:
        """(row key, column key) under the cursor; ``None`` for each when the table is empty."""
        if not self.rows_shown:
            return None, None
        row = self.rows_shown[min(self.cursor_row, len(self.rows_shown) - 1)].key
        column = self.columns_shown[min(self.cursor_column, len(self.columns_shown) - 1)].key
        return row, column

    def show(self, columns: Sequence[Column], rows: Sequence[Row]) -> None:
        """Fill the table with these rows (in the screen's order), sorted as the user chose, the cursor kept on
        the case (and column) it was on when that case is still shown, else at the same height."""
        keep_row, keep_column = self.current
        height = self.cursor_row
        if [column.key for column in columns] != [column.key for column in self.columns_shown]:
            self.clear(columns=True)
            for column in columns:
                self.add_column(Text(column.label, justify="left" if column.order == "text" else "right"),
                                key=column.key)  # fmt: skip
            self.columns_shown = list(columns)
            if self.sort_by is not None and self.sort_by[0] not in {column.key for column in columns}:
                self.sort_by = None
        else:
            self.clear()
        self._given = list(rows)
        self.rows_shown = self._sorted(self._given)
        for row in self.rows_shown:
            self.add_row(*row.cells, key=row.key)
        if not self.rows_shown:
            return
        keys = [row.key for row in self.rows_shown]
        row_index = keys.index(keep_row) if keep_row in keys else min(height, len(keys) - 1)
        column_keys = [column.key for column in self.columns_shown]
        column_index = column_keys.index(keep_column) if keep_column in column_keys else 0
        self.move_cursor(row=row_index, column=column_index, animate=False)

    def _sorted(self, rows: list[Row]) -> list[Row]:
        if self.sort_by is None:
            return list(rows)
        key, reverse = self.sort_by
        index = [column.key for column in self.columns_shown].index(key)
        return ordered(rows, index, self.columns_shown[index].order, reverse=reverse)

    def cycle_sort(self) -> str:
        """Sort by the cursor's column: its first direction, then reversed, then the screen's order again.
        Returns what the rows are now ordered by, for the status line."""
        _, column_key = self.current
        if column_key is None:
            return self.sort_text()
        if self.sort_by is None or self.sort_by[0] != column_key:
            self.sort_by = (column_key, False)
        elif not self.sort_by[1]:
            self.sort_by = (column_key, True)
        else:
            self.sort_by = None
        self.show(self.columns_shown, self._given)
        return self.sort_text()

    def sort_text(self) -> str:
        if self.sort_by is None:
            return ""
        key, reverse = self.sort_by
        column = next(column for column in self.columns_shown if column.key == key)
        direction = (REVERSED_DIRECTION if reverse else FIRST_DIRECTION)[column.order]
        return f"sorted by {column.label} ({direction})"
