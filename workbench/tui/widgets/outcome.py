"""An arm's outcome once it finishes: its grade, and its end-state diff as a table to scroll.

Every part gets an explicit height from its line and row counts (never ``height: auto`` measured
later), so the first layout after an arm finishes is already the final one. The screen's style caps
the table's height (none of it on a short terminal, so the transcript keeps its room); the grade line
then names the key that shows every change in place of the transcript (:data:`CHANGES_KEY`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets import Static

from workbench.events import EndState, Graded
from workbench.tui import format as fmt
from workbench.verdict import AGREE, DIFFER, FAILED, NOT_GRADED, PASSED, verdict_of

MISMATCHES_SHOWN = 6
CHANGES_KEY = "ctrl+l"
"""Shows every change of the end state in place of the transcript, and back (the screens bind it)."""

CHANGE_MARKS = {
    "created": ("+ created", "$text-success"),
    "updated": ("~ updated", "$text-warning"),
    "deleted": ("− deleted", "$text-error"),
}


def record_summary(record: dict[str, Any], limit: int = 64, first: Sequence[str] = ()) -> str:
    """The first few fields of a record, for a created or deleted row; the fields in ``first`` (those the task
    checks) lead, so a row shows why it changed (``unit_price=89.0`` before ``product=...``)."""
    names = [name for name in first if name in record] + [name for name in record if name not in first]
    parts = [f"{name}={fmt.value_text(record[name], 28)}" for name in names if name != "id"][:4]
    return fmt.one_line(", ".join(parts), limit)


def diff_rows(diff: EndState, first: Sequence[str] = ()) -> list[tuple[str, str, str, str]]:
    """(change, record, field, detail) rows: one per created or deleted record, one per updated field; ``first``
    (the fields the task checks) lead each record's summary, and a record's updated fields are listed with
    those first."""
    rows: list[tuple[str, str, str, str]] = []
    for entry in diff.created:
        summary = record_summary(entry.get("record", {}), first=first)
        rows.append(("created", f"{entry['entity']} {entry['id']}", "", summary))
    for entry in diff.updated:
        changes = entry.get("changes", {})
        for name in sorted(changes, key=lambda name: name not in first):
            old, new = changes[name]
            detail = f"{fmt.value_text(old, 30)} → {fmt.value_text(new, 30)}"
            rows.append(("updated", f"{entry['entity']} {entry['id']}", name, detail))
    for entry in diff.deleted:
        summary = record_summary(entry.get("record", {}), first=first)
        rows.append(("deleted", f"{entry['entity']} {entry['id']}", "", summary))
    return rows


def diff_records(diff: EndState, first: Sequence[str] = ()) -> list[list[str]]:
    """For each row of :func:`diff_rows`, its record whole as ``field = value`` lines (the checked fields
    first): every field of a created or deleted record, every change of an updated one."""
    records: list[list[str]] = []

    def whole(record: dict[str, Any]) -> list[str]:
        names = [name for name in first if name in record] + [name for name in record if name not in first]
        return [f"{name} = {fmt.value_text(record[name], 200)}" for name in names]

    for entry in diff.created:
        records.append(whole(entry.get("record", {})))
    for entry in diff.updated:
        changes = entry.get("changes", {})
        lines = [f"{name}: {fmt.value_text(old, 200)} → {fmt.value_text(new, 200)}" for name, (old, new) in
                 sorted(changes.items(), key=lambda item: item[0] not in first)]  # fmt: skip
        records.extend([lines] * len(changes))
    for entry in diff.deleted:
        records.append(whole(entry.get("record", {})))
    return records


class DiffTable(ScrollView, can_focus=True):
    """The end-state diff: a header that stays, then a row per change, drawn as lines; up/down pick a row."""

    @dataclass
    class Fitted(Message):
        """The table's height changed: ``shown`` of its rows fit (the grade line says when some do not)."""

        shown: int

    DEFAULT_CSS = """
    DiffTable { overflow-x: hidden; scrollbar-size-vertical: 1; text-wrap: nowrap; text-overflow: ellipsis; }
    """
    BINDINGS = [
        Binding("up", "cursor(-1)", "Previous change", show=False, id="diff.up"),
        Binding("down", "cursor(1)", "Next change", show=False, id="diff.down"),
        Binding("enter", "record", "Whole record", show=False, id="diff.record", tooltip="The record in full"),
    ]
    HEADERS = ("change", "record", "field", "old → new, or the record")

    cursor = reactive(0)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[tuple[str, str, str, str]] = []
        self.records: list[list[str]] = []
        """Each row's record whole, as lines (enter shows them beneath the row)."""
        self.opened: int | None = None
        """The row whose whole record shows beneath it."""
        self._entries: list[tuple[int, int]] = []
        """What each line below the header shows: (row, -1) the row, (row, n) line n of its whole record."""
        self._lines: dict[int, Strip] = {}
        """Painted lines of the current width and rows, by line below the header (-1: the header)."""
        self._width = 0

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def show(self, rows: list[tuple[str, str, str, str]], records: list[list[str]] | None = None) -> None:
        self.rows = rows
        self.records = records or [[] for _ in rows]
        self.cursor = 0
        self.opened = None
        self._layout_entries()
        self.styles.height = len(rows) + 1
        self.scroll_home(animate=False, immediate=True, force=True)
        self.refresh()

    def _layout_entries(self) -> None:
        self._entries = []
        for row in range(len(self.rows)):
            self._entries.append((row, -1))
            if row == self.opened:
                self._entries.extend((row, line) for line in range(len(self.records[row])))
        self._lines.clear()
        self.virtual_size = Size(self.virtual_size.width, len(self._entries) + 1)

    def action_record(self) -> None:
        """Show the selected row's record whole beneath it, or fold it again."""
        if not self.rows:
            return
        self.opened = None if self.opened == self.cursor else self.cursor
        self._layout_entries()
        self.refresh()

    @property
    def rows_shown(self) -> int:
        """Rows that fit the table's height below its header."""
        return max(0, min(len(self.rows), self.size.height - 1))

    def allow_focus(self) -> bool:
        return self.rows_shown > 0

    def on_resize(self) -> None:
        self.post_message(self.Fitted(self.rows_shown))

    def watch_cursor(self) -> None:
        self._lines.clear()
        self.refresh()

    def on_focus(self) -> None:
        self._lines.clear()
        self.refresh()

    def on_blur(self) -> None:
        self._lines.clear()
        self.refresh()

    def action_cursor(self, step: int) -> None:
        if self.rows:
            self.cursor = max(0, min(len(self.rows) - 1, self.cursor + step))
            top = self._entries.index((self.cursor, -1)) + 1
            self.scroll_to_region(Region(0, top, 1, 1), spacing=None, animate=False, immediate=True, force=True)

    def _widths(self, width: int) -> list[int]:
        """Cells per column: the change mark; the record whole (its id tells the rows apart: never cut while the
        detail keeps 12 cells); the field as wide as its longest, and no width at all when no row has one (only
        created and deleted records); the rest to the detail."""
        record = max([len(self.HEADERS[1]), *(len(row[1]) for row in self.rows)])
        fields = [len(row[2]) for row in self.rows if row[2]]
        field = min(max([len(self.HEADERS[2]), *fields]), max(width // 5, 8)) if fields else 0
        gaps = 2 * (3 if field else 2) + 1
        record = min(record, max(width - 9 - field - gaps - 12, 12))
        return [9, record, field, max(width - 9 - record - field - gaps, 8)]

    def _row_content(self, row: int, width: int, line: int = -1) -> Content:
        widths = self._widths(width)
        if line >= 0:  # a line of the opened row's whole record, under its record column
            text = Content.styled(fmt.safe(self.records[row][line]), "$text-muted")
            return (Content(" " * (widths[0] + 3)) + text).truncate(width, ellipsis=True)
        if row < 0:
            cells = [Content(header) for header in self.HEADERS]
            style = "bold $text-muted"
        else:
            change, record, field_name, detail = self.rows[row]
            mark, mark_style = CHANGE_MARKS[change]
            cells = [Content.styled(mark, mark_style), Content(record), Content(field_name), Content(fmt.safe(detail))]
            style = "on $boost" if row % 2 else ""
            if row == self.cursor and self.has_focus:
                style = "on $primary 30%"
        line = Content(" ") + Content("  ").join(
            cell.truncate(cell_width, ellipsis=True, pad=True)
            for cell, cell_width in zip(cells, widths, strict=True)
            if cell_width  # an empty field column takes no width
        )
        return line.truncate(width, ellipsis=True, pad=True).stylize_before(style) if style else line

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        if width != self._width:
            self._width = width
            self._lines.clear()
        index = -1 if y == 0 else self.scroll_offset.y + y - 1
        style = self.visual_style.rich_style
        if index >= len(self._entries):
            return Strip.blank(width, style)
        row, line = (-1, -1) if index < 0 else self._entries[index]
        strip = self._lines.get(index)
        if strip is None:
            strips = Visual.to_strips(self, self._row_content(row, width, line), width, 1, self.visual_style)
            strip = self._lines[index] = strips[0] if strips else Strip.blank(width, style)
        return strip.crop_extend(0, width, style)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        self.vertical_scrollbar.position = new_value
        super().watch_scroll_y(old_value, new_value)


class ArmOutcome(Vertical):
    """Hidden while the arm runs; then the grade line, any mismatches, and the diff table."""

    DEFAULT_CSS = """
    ArmOutcome { height: auto; display: none; }
    ArmOutcome.-shown { display: block; }
    ArmOutcome > #grade-line { height: 1; }
    ArmOutcome > DiffTable { max-height: 9; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="outcome")
        self.grade: Graded | None = None
        self.diff: EndState | None = None
        self.note: str | None = None
        self.expanded = False
        """Every change shown, the table taking the pane's room (the pane hides its transcript meanwhile)."""
        self.grade_line = Static(id="grade-line", classes="grade-line")
        self.mismatches = Static(id="mismatches", classes="mismatches")
        self.table = DiffTable(id="diff-table")

    def compose(self) -> ComposeResult:
        yield self.grade_line
        yield self.mismatches
        yield self.table

    def reset(self) -> None:
        self.grade = self.diff = None
        self.remove_class("-shown")
        self.expand(False)

    def expand(self, expanded: bool) -> None:
        """Every change in the pane's room (``True``), or the table at the height the screen caps it to."""
        self.expanded = expanded
        self.styles.height = "1fr" if expanded else None
        self.table.styles.max_height = "100%" if expanded else None
        self.table.styles.height = "1fr" if expanded else len(self.table.rows) + 1
        self.grade_line.update(self._grade_line())

    @on(DiffTable.Fitted)
    def _fitted(self, message: DiffTable.Fitted) -> None:
        message.stop()
        self.grade_line.update(self._grade_line())

    def show(self, *, grade: Graded | None, diff: EndState | None, note: str | None = None) -> None:
        """``note`` says why there is no grade (``cancelled after 5.1 s: not graded``)."""
        self.grade, self.diff, self.note = grade, diff, note
        self.add_class("-shown")
        self.grade_line.update(self._grade_line())
        lines: list[Content] = []
        if grade and grade.mismatches:
            collateral = set(grade.collateral)
            differ = verdict_of(grade) == DIFFER
            mark, style, what = ("≠", "$text-warning", "differences") if differ else ("✗", "$text-error", "mismatches")
            lines = [
                Content.styled(f"  {mark} {fmt.one_line(item, 200)}" + ("  (collateral)" if item in collateral else ""),
                               style)
                for item in grade.mismatches[:MISMATCHES_SHOWN]
            ]  # fmt: skip
            if len(grade.mismatches) > MISMATCHES_SHOWN:
                more = len(grade.mismatches) - MISMATCHES_SHOWN
                lines.append(Content.styled(f"  … {more} more {what}", style))
        self.mismatches.update(Content("\n").join(lines))
        self.mismatches.styles.height = len(lines)
        self.mismatches.display = bool(lines)
        from workbench.apps.registry import checked_fields  # the demo apps: with the first graded end state

        first = checked_fields(grade.task) if grade else ()
        rows = diff_rows(diff, first) if diff is not None else []
        self.table.show(rows, diff_records(diff, first) if diff is not None else [])
        self.table.display = bool(rows)
        if self.expanded:
            self.expand(True)

    def _grade_line(self) -> Content:
        """``✓ PASSED  cart/remove-expensive   end state: 35 deleted``, and the key to every change when the
        table does not show them all: at the end where it fits, else right after the verdict when the table
        is folded away (the rest is cut), and left out when the table shows some rows and has its scrollbar."""
        grade, diff = self.grade, self.diff
        head: list[tuple[str, str]] = []
        rest: list[tuple[str, str]] = []
        verdict = verdict_of(grade) if grade is not None else NOT_GRADED
        if grade is None or verdict == NOT_GRADED:
            reason = (grade.reason if grade is not None else "") or self.note
            head.append((reason, "$text-warning") if reason else ("not graded", "$text-muted"))
        elif verdict == PASSED:
            head.append(("✓ PASSED", "bold $text-success"))
            rest.append((f"  {grade.task}", "$text-muted"))
        elif verdict == FAILED:
            head.append(("✗ FAILED", "bold $text-error"))
            collateral = f", {len(grade.collateral)} collateral" if grade.collateral else ""
            rest.append((f"  {grade.task}: {len(grade.mismatches)} mismatches{collateral}", "$text-error"))
        elif verdict == AGREE:  # no expectation: the arms did the same, which is not a pass
            head.append(("= ARMS AGREE", "bold $text-accent"))
            rest.append(("  no expectation: same changes as the other arms", "$text-muted"))
        else:
            head.append(("≠ ARMS DIFFER", "bold $text-warning"))
            rest.append((f"  no expectation: {len(grade.mismatches)} differences", "$text-warning"))
        hint: tuple[str, str] | None = None
        if diff is not None:
            counts = [(len(diff.created), "created"), (len(diff.updated), "updated"), (len(diff.deleted), "deleted")]
            changes = " · ".join(f"{count} {label}" for count, label in counts if count) or "no changes"
            rest.append((f"   end state: {changes}", "$text-muted"))
            if self.expanded:
                hint = (f"{CHANGES_KEY}: transcript", "$text-muted")
            elif self.table.rows_shown < self.table.row_count:
                hint = (f"{CHANGES_KEY} shows all", "$text-accent")
        line = Content.assemble(*head, *rest)
        width = self.grade_line.size.width
        if hint is None:
            return line
        if not width or line.cell_length + 3 + len(hint[0]) <= width:
            return Content.assemble(line, "   ", hint)
        if self.expanded or self.table.rows_shown == 0:
            return Content.assemble(*head, "  ", hint, *rest)
        return line
