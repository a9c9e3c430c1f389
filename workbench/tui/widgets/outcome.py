"""An arm's outcome once it finishes: its grade, and its end-state diff as a table to scroll."""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static

from workbench.events import EndState, Graded
from workbench.tui import format as fmt

MISMATCHES_SHOWN = 6

CHANGE_MARKS = {
    "created": ("+ created", "$text-success"),
    "updated": ("~ updated", "$text-warning"),
    "deleted": ("− deleted", "$text-error"),
}


def record_summary(record: dict[str, Any], limit: int = 64) -> str:
    """The first few fields of a record, for a created or deleted row."""
    parts = [f"{name}={fmt.value_text(value, 28)}" for name, value in record.items() if name != "id"][:4]
    return fmt.one_line(", ".join(parts), limit)


def diff_rows(diff: EndState) -> list[tuple[str, str, str, str]]:
    """(change, record, field, detail) rows: one per created or deleted record, one per updated field."""
    rows: list[tuple[str, str, str, str]] = []
    for entry in diff.created:
        rows.append(("created", f"{entry['entity']} {entry['id']}", "", record_summary(entry.get("record", {}))))
    for entry in diff.updated:
        for name, (old, new) in entry.get("changes", {}).items():
            detail = f"{fmt.value_text(old, 30)} → {fmt.value_text(new, 30)}"
            rows.append(("updated", f"{entry['entity']} {entry['id']}", name, detail))
    for entry in diff.deleted:
        rows.append(("deleted", f"{entry['entity']} {entry['id']}", "", record_summary(entry.get("record", {}))))
    return rows


class ArmOutcome(Vertical):
    """Hidden while the arm runs; then the grade line, any mismatches, and the diff table."""

    DEFAULT_CSS = """
    ArmOutcome { height: auto; display: none; }
    ArmOutcome.-shown { display: block; }
    ArmOutcome > DataTable { height: auto; max-height: 9; scrollbar-size-horizontal: 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, classes="outcome")
        self.grade: Graded | None = None
        self.diff: EndState | None = None

    async def _parts(self) -> tuple[Static, Static, DataTable[str | Content]]:
        """The grade line, the mismatches and the diff table, mounted the first time an arm finishes."""
        if not self.children:
            table: DataTable[str | Content] = DataTable(
                id="diff-table", cursor_type="row", zebra_stripes=True, show_row_labels=False
            )
            table.add_column("change", key="change", width=9)
            table.add_column("record", key="record")
            table.add_column("field", key="field")
            table.add_column("old → new, or the record", key="detail")
            await self.mount_all(
                [Static(id="grade-line", classes="grade-line"), Static(id="mismatches", classes="mismatches"), table]
            )
        return self.query_one("#grade-line", Static), self.query_one("#mismatches", Static), self.query_one(DataTable)

    async def reset(self) -> None:
        self.grade = self.diff = None
        self.remove_class("-shown")
        await self.remove_children()

    async def show(self, *, grade: Graded | None, diff: EndState | None) -> None:
        self.grade, self.diff = grade, diff
        grade_line, mismatches, table = await self._parts()
        self.add_class("-shown")
        grade_line.update(self._grade_line())
        mismatches.display = bool(grade and grade.mismatches)
        if grade and grade.mismatches:
            collateral = set(grade.collateral)
            lines = [
                Content.styled(f"  ✗ {fmt.one_line(item, 200)}" + ("  (collateral)" if item in collateral else ""),
                               "$text-error")
                for item in grade.mismatches[:MISMATCHES_SHOWN]
            ]  # fmt: skip
            if len(grade.mismatches) > MISMATCHES_SHOWN:
                more = len(grade.mismatches) - MISMATCHES_SHOWN
                lines.append(Content.styled(f"  … {more} more mismatches", "$text-error"))
            mismatches.update(Content("\n").join(lines))
        table.clear()
        table.display = bool(diff and (diff.created or diff.updated or diff.deleted))
        if diff is not None:
            for change, record, field_name, detail in diff_rows(diff):
                mark, style = CHANGE_MARKS[change]
                table.add_row(Content.styled(mark, style), record, field_name, fmt.safe(detail))

    def _grade_line(self) -> Content:
        grade, diff = self.grade, self.diff
        parts: list[Content | tuple[str, str] | str] = []
        if grade is None:
            parts.append(("not graded", "$text-muted"))
        elif grade.passed:
            parts.append(("✓ PASSED", "bold $text-success"))
            parts.append((f"  {grade.task}", "$text-muted"))
        else:
            parts.append(("✗ FAILED", "bold $text-error"))
            collateral = f", {len(grade.collateral)} collateral" if grade.collateral else ""
            parts.append((f"  {grade.task}: {len(grade.mismatches)} mismatches{collateral}", "$text-error"))
        if diff is not None:
            parts.append(
                (
                    f"   end state: {len(diff.created)} created · {len(diff.updated)} updated · "
                    f"{len(diff.deleted)} deleted",
                    "$text-muted",
                )
            )
        return Content.assemble(*parts)
