"""One arm's pane: live figures, the transcript, and the outcome once the arm finishes."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content

from workbench.display import arm_title
from workbench.events import ArmEvent, EndState, Graded, RunFinished
from workbench.summary import ArmSummary
from workbench.tui import format as fmt
from workbench.tui.widgets.figures import ArmCounters, ContextChart, live_wall_s
from workbench.tui.widgets.outcome import ArmOutcome
from workbench.tui.widgets.roster import arm_status, verdict_content
from workbench.tui.widgets.transcript import Transcript
from workbench.verdict import NOT_GRADED, VERDICT_STYLES, grade_note


class ArmPane(Vertical):
    """The figures come from an :class:`ArmSummary` folded event by event, as everywhere else."""

    def __init__(self, arm: str, *, mode: str = "", id: str | None = None) -> None:
        super().__init__(id=id, classes="arm-pane")
        self.arm = arm
        self.planned_mode = mode
        """The arm's mode as the run's arm list gives it (its events tell it again once it starts)."""
        self.summary = ArmSummary(name=arm)
        self.started = False
        self.counters = ArmCounters(self.summary)
        self.chart = ContextChart(self.summary)
        self.transcript = Transcript(arm, mode=mode)
        self.outcome = ArmOutcome()
        self._grade: Graded | None = None
        self._diff: EndState | None = None
        self._title_key: tuple[object, ...] = ()
        self.border_title = arm_title(arm, mode)

    def compose(self) -> ComposeResult:
        yield self.counters
        yield self.chart
        yield self.transcript
        yield self.outcome

    def on_mount(self) -> None:
        self._update_title()

    @property
    def running(self) -> bool:
        return self.started and self.summary.status == "running"

    @property
    def wall_s(self) -> float:
        """The wall time shown: the clock (live) or the replay position while the arm runs."""
        return live_wall_s(self.summary, self.counters.elapsed_s)

    def reset(self) -> None:
        self.summary = ArmSummary(name=self.arm)
        self.counters.summary = self.chart.summary = self.summary
        self.counters.elapsed_s = 0.0
        self.started = False
        self._grade = self._diff = None
        self.outcome.reset()
        self.transcript.display = True
        self.transcript.reset()
        self.refresh_figures()

    def apply(self, events: Sequence[ArmEvent]) -> None:
        for event in events:
            self.summary.add(event)
            match event.payload:
                case Graded() as grade:
                    self._grade = grade
                case EndState() as diff:
                    self._diff = diff
                case _:
                    pass
        self.started = True
        self.transcript.apply(events)
        if any(isinstance(event.payload, RunFinished) for event in events):
            summary = self.summary
            graded = self._grade if summary.verdict != NOT_GRADED or summary.verdict_reason else None
            # (the fold drops a stopped arm's grade; a grade that is "not compared" says why)
            self.outcome.show(grade=graded, diff=self._diff, note=grade_note(summary.status, summary.wall_s))
        self.refresh_figures()

    def show_changes(self, shown: bool) -> bool:
        """Every change of the end state in place of the transcript (``True``), or the transcript back;
        an arm without changes to show keeps its transcript. Returns whether the changes are shown."""
        shown = shown and self.outcome.table.row_count > 0
        self.transcript.display = not shown
        self.outcome.expand(shown)
        return shown

    def set_elapsed(self, seconds: float) -> None:
        if self.running and seconds != self.counters.elapsed_s:
            self.counters.elapsed_s = seconds
            self.counters.update()
            self._update_title()

    def refresh_figures(self) -> None:
        self.counters.update()
        self.chart.refresh()
        self._update_title()

    def _update_title(self) -> None:
        summary = self.summary
        status = arm_status(summary, self.started)
        self.set_class(status == "running", "-running")
        self.set_class(status in ("failed", "interrupted"), "-failed")
        parts: list[Content | tuple[str, str] | str] = []
        if summary.model:
            parts.append((f"{summary.model} ", "$text-muted"))
        if summary.verdict != NOT_GRADED:
            words = verdict_content(summary.verdict).plain
            parts.append((f"{words} ", f"$text-{VERDICT_STYLES.get(summary.verdict, 'muted')}"))
        parts.append(fmt.status_badge(status))
        key = (summary.model, summary.verdict, status, summary.mode)
        if key != self._title_key:  # a new subtitle repaints the whole pane: only when it changes
            self._title_key = key
            self.border_title = arm_title(self.arm, summary.mode or self.planned_mode)
            self.border_subtitle = Content.assemble(*parts)
