"""Two sweeps or two sessions compared case by case: what ``workbench diff A B`` prints, as a table to filter,
sort and open.

Marked in the sessions list or the bench screen's sweeps list (space, then ``x``). The sides are read and
compared by :func:`workbench.bench.diff.diff_sides` (cases aligned on task, items and seed; arms by name;
McNemar's test and the paired intervals per arm); this screen only lays its result out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static

from workbench.bench.diff import SideDiff, arm_title, diff_sides, side_line, summary_lines
from workbench.errors import UserError
from workbench.store import Store
from workbench.tui.cases import DiffRowKey, diff_columns, diff_rows, filter_text, next_filter
from workbench.tui.messages import DiffLoaded, ReplayRequested
from workbench.tui.widgets.case_table import CaseTable
from workbench.tui.widgets.footer import Footer


class Marks:
    """Two sweeps or sessions marked in a list for comparing, in the order marked: the first is side A (the
    baseline); marking a third lets go of the first."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    @property
    def ready(self) -> bool:
        return len(self.ids) == 2

    def toggle(self, marked: str) -> None:
        if marked in self.ids:
            self.ids.remove(marked)
        else:
            self.ids = [*self.ids, marked][-2:]

    def side(self, marked: str) -> str:
        """``A``, ``B``, or ``""`` for an id not marked."""
        return "AB"[self.ids.index(marked)] if marked in self.ids else ""

    def status(self) -> str:
        sides = " and ".join(f"{side} {marked}" for side, marked in zip("AB", self.ids, strict=False))
        return f"marked {sides} · {'x compares them' if self.ready else 'space marks B'}"


class DiffScreen(Screen[None]):
    AUTO_FOCUS = "#diff-cases"
    DEFAULT_CSS = """
    #diff-summary { height: auto; max-height: 40%; margin: 0 1; padding: 0 1; border: round $panel; }
    #diff-filter { margin: 0 1; border-left: outer $primary; padding: 0 1; }
    #diff-line { height: 1; padding: 0 2; color: $text-muted; }
    #diff-cases { height: 1fr; min-height: 4; margin: 0 1; }
    #diff-status { height: 1; padding: 0 2; color: $text-muted; }
    """
    BINDINGS = [
        Binding("enter", "open", "Replay", id="diff.open", tooltip="Replay the case's session (B's, else A's)"),
        Binding("a", "open_a", "Replay A", id="diff.open_a", tooltip="Replay the case's session on side A"),
        Binding("f", "cycle_filter", "Filter", id="diff.filter",
                tooltip="Every case, failures, different, regressions, improvements"),
        Binding("slash", "find", "Find", id="diff.find", tooltip="Only cases whose task contains the text"),
        Binding("s", "sort", "Sort", id="diff.sort", tooltip="Sort by the cursor's column (again: reversed)"),
        Binding("escape", "back", "Back", id="diff.back", tooltip="Back to the list"),
    ]  # fmt: skip

    def __init__(self, store: Store, a: str, b: str) -> None:
        super().__init__()
        self.store = store
        self.refs = (a, b)
        self.diff: SideDiff | None = None
        self.only: str | None = None
        self.text = ""
        self.keys: dict[str, DiffRowKey] = {}

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        with VerticalScroll(id="diff-summary"):
            yield Static(Content.styled(f"Comparing {self.refs[0]} (A) with {self.refs[1]} (B)…", "$text-muted"),
                         id="diff-sides")  # fmt: skip
        yield Input(placeholder="Find cases by task… (enter: back to the table)", id="diff-filter", compact=True)
        yield Static(id="diff-line")
        yield CaseTable(id="diff-cases")
        yield Static(id="diff-status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Code Mode Workbench"
        self.sub_title = f"Diff · {self.refs[0]} → {self.refs[1]}"
        self.query_one("#diff-summary").border_title = "A against B"
        self._load()

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        yield "Diff: filter", "Every case, failures, different, regressions, improvements (f)", "cycle_filter"
        yield "Diff: find", "Only cases whose task contains the text (/)", "find"
        yield "Diff: sort", "Sort by the cursor's column (s)", "sort"
        yield "Diff: replay", "Replay the case's session (enter)", "open"

    @work(group="diff", exclusive=True, exit_on_error=False)
    async def _load(self) -> None:
        from workbench.bench.sides import load_side

        def read() -> DiffLoaded:
            try:
                a, b = (load_side(ref, lambda: self.store) for ref in self.refs)
                return DiffLoaded(diff_sides(a, b))
            except (UserError, LookupError, ValueError) as error:
                return DiffLoaded(None, str(error))

        self.post_message(await asyncio.to_thread(read))

    @on(DiffLoaded)
    def _loaded(self, message: DiffLoaded) -> None:
        if message.diff is None:
            self.query_one("#diff-sides", Static).update(Text(f"Cannot compare: {message.error}", style="red"))
            self._status("")
            return
        self.diff = diff = message.diff
        # The answer first (each arm's success test, one line each), then each arm's figures, then the sides.
        lines = [Text(f"{arm.after}: {arm.success.describe()}", style="bold") for arm in diff.arms]
        for arm in diff.arms:
            lines.append(Text(arm_title(diff, arm)))
            lines += [Text(f"  {line}", style="dim") for line in summary_lines(arm)[1:]]
        lines += [Text(f"A: {side_line(diff.before)}"), Text(f"B: {side_line(diff.after)}")]
        lines += [Text(note, style="yellow") for note in diff.notes]
        if not diff.arms:
            lines.append(Text("No arm ran on both sides: nothing to compare.", style="yellow"))
        elif not any(arm.shared for arm in diff.arms):
            lines.append(Text("No case ran on both sides (task, items and seed differ): nothing is paired; "
                              "every case is only in A or only in B.", style="yellow"))  # fmt: skip
        self.query_one("#diff-sides", Static).update(Group(*lines))
        self._fill()

    def _fill(self) -> None:
        if self.diff is None:
            return
        found = diff_rows(self.diff, only=self.only, text=self.text or None)
        self.keys = {ref.key: ref for ref, _ in found}
        table = self.query_one(CaseTable)
        table.show(diff_columns(self.diff), [row for _, row in found])
        total = sum(len(arm.changes) for arm in self.diff.arms)
        line = filter_text(self.only, self.text, len(found), total)
        sort = table.sort_text()
        self.query_one("#diff-line", Static).update(f"{line}{' · ' + sort if sort else ''}")
        self._status("f filters · / finds · s sorts by the column · enter replays B's run (a: A's)")

    def _status(self, text: str) -> None:
        self.query_one("#diff-status", Static).update(Content.styled(text, "$text-muted"))

    # -- actions ---------------------------------------------------------------------------------

    def action_cycle_filter(self) -> None:
        self.only = next_filter(self.only)
        self._fill()

    def action_find(self) -> None:
        self.query_one("#diff-filter", Input).focus()

    @on(Input.Changed, "#diff-filter")
    def _find_changed(self, event: Input.Changed) -> None:
        self.text = event.value.strip()
        self._fill()

    @on(Input.Submitted, "#diff-filter")
    def _find_submitted(self) -> None:
        self.query_one(CaseTable).focus()

    def action_sort(self) -> None:
        self.query_one(CaseTable).cycle_sort()
        self._fill()

    def _session(self, side: str) -> str | None:
        row_key, _ = self.query_one(CaseTable).current
        ref = self.keys.get(row_key or "")
        if ref is None:
            return None
        first, second = (ref.change.after, ref.change.before) if side == "b" else (ref.change.before, None)
        for cell in (first, second):
            if cell is not None and cell.session_ids:
                return cell.session_ids[0]
        return None

    def _replay(self, side: str) -> None:
        session_id = self._session(side)
        if session_id is None:
            self.notify("That case has no stored session on this side.", severity="warning")
            return
        self.post_message(ReplayRequested(session_id))

    def action_open(self) -> None:
        self._replay("b")

    def action_open_a(self) -> None:
        self._replay("a")

    @on(DataTable.CellSelected, "#diff-cases")
    def _cell_selected(self) -> None:
        self.action_open()

    def action_back(self) -> None:
        find = self.query_one("#diff-filter", Input)
        if self.focused is find:  # the find field's escape clears it and goes back to the table
            find.value = ""
            self.query_one(CaseTable).focus()
            return
        self.dismiss()
