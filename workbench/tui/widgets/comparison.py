"""The comparison itself: the strip, and a pane per arm laid out for the terminal's size.

Arms come from the data: the run's arm list, the replayed session's arms, or the first event of an arm
not seen before. Panes sit side by side where the width allows, in a grid or stacked where the height
does; below that, a roster keeps every arm's title, status, grade and main counters on a line each and
one arm's pane is expanded beneath it (the screen's next-arm key, or a click on a line, switches).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from math import ceil

from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Vertical

from workbench.events import ArmEvent
from workbench.tui.widgets.arm_pane import ArmPane
from workbench.tui.widgets.outcome import DiffTable
from workbench.tui.widgets.roster import ArmRoster
from workbench.tui.widgets.strip import ComparisonStrip

MIN_PANE_WIDTH = 56
"""Columns a pane needs for its counters in three columns and a readable transcript."""
MIN_PANE_HEIGHT = 16
"""Rows a pane needs for its border, counters, chart, a few transcript lines and the grade."""
CRAMPED_BELOW = 20
"""Rows for the expanded pane below which its counters give way to the transcript (the roster has them)."""


LOW_BELOW = 24
"""Rows a pane in the grid needs for its chart too; lower, the chart gives way to the transcript."""


def grid_for(arms: int, width: int, height: int) -> tuple[int, int] | None:
    """(columns, rows) of the grid with the fewest rows (then columns) in which every pane gets its minimum
    size: side by side first, then 2x2 for four, stacked last; ``None``: none fits."""
    for rows in range(1, arms + 1):
        columns = ceil(arms / rows)
        if width // columns >= MIN_PANE_WIDTH and height // rows >= MIN_PANE_HEIGHT:
            return columns, rows
    return None


class ComparisonView(Vertical):
    """The strip, the roster (when only one pane fits) and the arm panes; events reach the panes here."""

    DEFAULT_CSS = """
    ComparisonView { height: 1fr; }
    ComparisonView > #roster { display: none; padding: 0 1; background: $surface; }
    ComparisonView.-compact > #roster { display: block; }
    ComparisonView > #panes { height: 1fr; layout: grid; grid-gutter: 0; grid-rows: 1fr; grid-columns: 1fr; }
    ComparisonView.-compact > #panes { layout: vertical; }
    ComparisonView.-compact .chart, ComparisonView.-low .chart { display: none; }
    ComparisonView.-low .outcome > DiffTable { max-height: 4; }
    ComparisonView.-cramped .counters { display: none; }
    """

    def __init__(
        self, arms: Sequence[str] = (), modes: Mapping[str, str] | None = None, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.modes = dict(modes or {})
        """Each arm's mode as its arm list gives it, before its events say so."""
        self.strip = ComparisonStrip(id="strip")
        self.roster = ArmRoster(id="roster")
        self.box = Container(id="panes")
        self.panes: dict[str, ArmPane] = {arm: ArmPane(arm, mode=self.modes.get(arm, "")) for arm in arms}
        """Every arm's pane by name, in the arms' order (the first is the baseline)."""
        self.expanded = 0
        """The arm whose pane shows when only one fits (an index into :attr:`panes`)."""
        self.compact = False
        self.changes_shown = False
        """Finished arms show every end-state change in place of their transcripts (:meth:`toggle_changes`)."""

    def compose(self) -> ComposeResult:
        yield self.strip
        yield self.roster
        with self.box:
            yield from self.panes.values()

    def on_mount(self) -> None:
        self.refresh_shared()

    # -- arms ------------------------------------------------------------------------------------

    def set_arms(self, arms: Sequence[str], modes: Mapping[str, str] | None = None) -> None:
        """Show exactly these arms, in this order (a new run's arm list, a replayed session's arms)."""
        self.modes.update(modes or {})
        if list(arms) == list(self.panes):
            return
        for pane in self.panes.values():
            pane.remove()
        self.panes = {}
        self.expanded = 0
        for arm in arms:
            self._add(arm)
        self.refresh_shared()

    def _add(self, arm: str) -> ArmPane:
        pane = self.panes[arm] = ArmPane(arm, mode=self.modes.get(arm, ""))
        if self.is_mounted:
            self.box.mount(pane)
            self.call_after_refresh(self._lay_out)
        return pane

    def pane(self, arm: str) -> ArmPane:
        return self.panes.get(arm) or self._add(arm)

    def next_arm(self, step: int = 1) -> None:
        if self.panes:
            self.expand((self.expanded + step) % len(self.panes))

    def expand(self, index: int) -> None:
        self.expanded = index
        self._lay_out()
        self.refresh_shared()

    @on(ArmRoster.Picked)
    def _picked(self, message: ArmRoster.Picked) -> None:
        self.expand(message.index)

    # -- events ----------------------------------------------------------------------------------

    def apply(self, events: Iterable[ArmEvent]) -> None:
        """A batch of events, any arms, in the order they happened."""
        by_arm: dict[str, list[ArmEvent]] = {}
        for event in events:
            by_arm.setdefault(event.arm, []).append(event)
        for arm, batch in by_arm.items():
            self.pane(arm).apply(batch)
        self.refresh_shared()

    def settle(self, ended_as: Mapping[str, str]) -> None:
        """Every event shown (a replay at its end): each arm still "running" takes the status its session's
        store gives it (``interrupted`` when its process died, ``cancelled``)."""
        settled = False
        for arm, status in ended_as.items():
            pane = self.panes.get(arm)
            if pane is not None and pane.running:
                pane.summary.status = status  # type: ignore[assignment]  # one of the stored statuses
                pane.refresh_figures()
                settled = True
        if settled:
            self.refresh_shared()

    def reset(self) -> None:
        for pane in self.panes.values():
            pane.reset()
        self.changes_shown = False
        self.refresh_shared()

    def toggle_changes(self) -> bool:
        """Every finished arm's end-state changes in place of its transcript, or the transcripts back; the
        changes of the expanded (or first) arm that has some take the focus. Returns whether they show
        (never while no arm has changes to show)."""
        panes = list(self.panes.values())
        shown = [pane for pane in panes if pane.show_changes(not self.changes_shown)]
        self.changes_shown = bool(shown)
        if self.compact and panes:
            shown.sort(key=lambda pane: pane is not panes[min(self.expanded, len(panes) - 1)])
        focused = self.screen.focused
        if shown:
            self.call_after_refresh(shown[0].outcome.table.focus)
        elif isinstance(focused, DiffTable):
            for pane in panes:
                if pane.outcome.table is focused:
                    pane.transcript.focus()
        return self.changes_shown

    def set_elapsed(self, seconds: float) -> None:
        for pane in self.panes.values():
            pane.set_elapsed(seconds)
        if self.compact:
            self._show_roster()

    def refresh_shared(self) -> None:
        """What compares the arms: one chart scale for all, the strip, the roster."""
        panes = list(self.panes.values())
        scale = max([value for pane in panes for value in pane.summary.input_tokens_per_request] or [0])
        for pane in panes:
            pane.chart.scale = scale
        self.strip.show([pane.summary for pane in panes], [str(pane.border_title) for pane in panes])
        self._show_roster()

    def _show_roster(self) -> None:
        rows = [(arm, pane.summary, pane.started, pane.wall_s) for arm, pane in self.panes.items()]
        self.roster.show(rows, self.expanded)

    # -- layout ----------------------------------------------------------------------------------

    def on_resize(self) -> None:
        self._lay_out()

    def _lay_out(self) -> None:
        """Side by side, in a grid or stacked where every pane fits; else the roster and one pane."""
        panes = list(self.panes.values())
        if not panes or not self.size.width:
            return
        # Against the strip's full height, not its current one: a compact strip is a line shorter, and measuring
        # the room with it made the choice flip between two layouts depending on which was drawn first.
        height = self.size.height - self.strip.full_height(self.size.width)
        grid = grid_for(len(panes), self.size.width, height)
        if self.compact != (grid is None):
            self.compact = grid is None
            self.screen.refresh_bindings()  # the next-arm key shows only when one pane fits
        self.set_class(self.compact, "-compact")
        self.strip.set_compact(self.compact)
        self.set_class(self.compact and height - len(panes) < CRAMPED_BELOW, "-cramped")
        self.expanded = min(self.expanded, len(panes) - 1)
        self.set_class(grid is not None and height // grid[1] < LOW_BELOW, "-low")
        if grid is not None:
            self.box.styles.grid_size_columns, self.box.styles.grid_size_rows = grid
        for index, pane in enumerate(panes):
            pane.display = grid is not None or index == self.expanded
