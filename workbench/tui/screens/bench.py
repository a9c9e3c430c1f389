"""The bench screen: stored sweeps, and the report of the selected one with its scaling charts, or its
per-case matrix (``c``).

Sweeps are run with ``workbench bench``; this screen reads them back (:func:`workbench.bench.load_sweep`)
and draws the same :class:`~workbench.bench.BenchReport` the CLI prints: per tier and arm, the paired
deltas, and per scaling rule a chart of one metric against item count with the crossover named. While a
queued sweep (``bench --queue``) is listed, the screen polls the store and the queue: its counts per state
and worker (:func:`workbench.queue.progress.queue_progress`) and its partial report stay current.

The matrix is :func:`workbench.bench.compare.case_matrix` of the sweep's runs, one row per case (task, items,
seed) and the arms' cells over their repeats, filtered and sorted here; enter on a cell replays that case's
run (asking which, when it ran more than once), and escape from the replay comes back to the same cell. Two
sweeps marked in the list (space) are compared by ``x`` (:class:`~workbench.tui.screens.diff.DiffScreen`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import DataTable, Header, Input, Static

from workbench.bench import BenchReport, SweepInfo, SweepStore, load_sweep
from workbench.bench.charts import CHART_TITLES, scaling_chart
from workbench.bench.compare import CaseKey, CaseMatrix, case_key, case_label, case_matrix
from workbench.bench.manifest import QUEUED
from workbench.bench.render import failures_table, scaling_table, tier_table
from workbench.bench.rows import crossover_lines, headline
from workbench.store import Store
from workbench.tui import format as fmt
from workbench.tui.cases import column_arm, filter_text, matrix_columns, matrix_rows, next_filter
from workbench.tui.messages import (
    QueueProgressed,
    ReplayRequested,
    SweepProgressed,
    SweepReportLoaded,
    SweepsListed,
)
from workbench.tui.screens.diff import DiffScreen, Marks
from workbench.tui.screens.sessions import display_path
from workbench.tui.widgets.case_table import CaseTable
from workbench.tui.widgets.footer import Footer

if TYPE_CHECKING:
    from workbench.bench.sweep import Progress, Sweep, SweepOutcome
    from workbench.config import Settings

MARK = "● "
"""Before a sweep marked for comparing."""
CHART_METRICS = ("cost_usd", "input_tokens", "wall_s", "success")
"""What ``m`` cycles the scaling chart through."""
SIDE_BY_SIDE_FROM = 150
"""Columns from which the sweeps list sits beside the report; narrower, it sits above it (the report's tables
need about 90 columns)."""
TIERS_FRAME = 6
"""Columns around the report's tables before the pane is laid out: its border, padding and margins."""
CHART_HEIGHT = 16
CHART_WIDEST = 140
EMPTY_HINT = (
    "No sweeps yet. To run one here: on the compare screen pick a built-in task (Task field), then ctrl+p, "
    "Bench: run. From a shell: workbench bench (add --model provider:model for a real model)."
)
"""Shown in the report pane while there is no sweep (the one-line status below it would cut it)."""
SWEEP_STOP_POLL_S = 0.1
"""How soon a sweep run on this screen notices that the screen was left."""
QUEUE_POLL_S = 2.0
"""How often the screen reads a queued sweep's progress again."""


def _repaint(table: DataTable[Any]) -> None:
    """Paint the table again from scratch: cells painted between ``add_row`` and the table's next measuring
    (Textual's DataTable measures new rows when idle) stay cached at the labels' widths (``06-0  00000``)."""
    table._clear_caches()
    table.refresh()


class BenchScreen(Screen[None]):
    CSS_PATH = "bench.tcss"
    AUTO_FOCUS = "#sweeps"
    BINDINGS = [
        Binding("enter", "open", "Open", id="bench.open",
                tooltip="Show the selected sweep (on the matrix: replay the cell's run)"),
        Binding("c", "view('cases')", "Cases", id="bench.cases", tooltip="The per-case matrix of the sweep"),
        Binding("c", "view('report')", "Report", id="bench.report", tooltip="The sweep's report and charts"),
        Binding("m", "metric", "Chart metric", id="bench.metric", tooltip="Cost, input tokens, wall time, success"),
        # The rule keys are named on the report's own last line ("[ ]: scaling rule"), in f1 and the palette: in the
        # footer they pushed Quit and Help off an 80-column screen.
        Binding("left_square_bracket", "rule(-1)", "Prev rule", show=False, id="bench.previous",
                tooltip="Previous scaling rule"),
        Binding("right_square_bracket", "rule(1)", "Next rule", show=False, id="bench.next",
                tooltip="Next scaling rule"),
        Binding("f", "cycle_filter", "Filter", id="bench.filter",
                tooltip="Every case, failures, different, regressions, improvements (against the first arm)"),
        Binding("slash", "find", "Find", id="bench.find", tooltip="Only cases whose task contains the text"),
        Binding("s", "sort", "Sort", id="bench.sort", tooltip="Sort by the cursor's column (again: reversed)"),
        Binding("space", "mark", "Mark", id="bench.mark", tooltip="Mark the selected sweep; two marked: x compares"),
        Binding("x", "diff", "Compare", id="bench.diff", tooltip="Compare the two marked sweeps case by case"),
        Binding("r,f5", "reload", "Reload", show=False, id="bench.reload", tooltip="Read the sweeps again"),
        Binding("escape", "back", "Back", id="bench.back", tooltip="Back (on the matrix: to the report)"),
    ]  # fmt: skip
    REPORT_ONLY = frozenset({"metric", "rule"})
    CASES_ONLY = frozenset({"cycle_filter", "find", "sort"})

    def __init__(
        self, store: Store, *, report: BenchReport | None = None, sweep: Sweep | None = None,
        settings: Settings | None = None,
    ) -> None:  # fmt: skip
        super().__init__()
        self.store = store
        self.settings = settings
        """The invocation's settings (their queue limits); ``None``: read from the config when needed."""
        self.sweep = sweep
        """A sweep to run here (the compare screen's *Run the bench for this task*); ``None``: only list."""
        self._stop_sweep = threading.Event()
        self._sweep_running = sweep is not None
        self.sweeps: list[SweepInfo] = []
        self.report = report
        self.metric = CHART_METRICS[0]
        self.rule = 0
        self.view = "report"
        """``report`` (tiers, charts) or ``cases`` (the per-case matrix)."""
        self.matrix: CaseMatrix | None = None
        self.only: str | None = None
        self.text = ""
        self.case_keys: dict[str, CaseKey] = {}
        self.marks = Marks()
        """Sweeps marked for comparing (space; ``x`` compares two)."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        with Horizontal(id="bench-body"):
            table: DataTable[str] = DataTable(id="sweeps", cursor_type="row", zebra_stripes=True)
            for label in ("when", "sweep", "model", "runs", "status"):
                table.add_column(label, key=label)
            yield table
            with VerticalScroll(id="bench-report"):
                yield Static(id="bench-headline")
                yield Static(id="bench-queue")
                yield Static(id="bench-tiers")
                yield Static(id="bench-chart")
                yield Static(id="bench-scaling")
                yield Static(id="bench-failures")
            with Vertical(id="bench-cases"):
                yield Input(placeholder="Find cases by task… (enter: back to the table)", id="cases-find",
                            compact=True)  # fmt: skip
                yield Static(id="cases-line")
                yield CaseTable(id="cases")
        yield Static(id="bench-status")
        yield Footer()

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < SIDE_BY_SIDE_FROM, "-stacked")
        self.title = "Code Mode Workbench"
        self.sub_title = f"Bench · {display_path(self.store.name)}"
        self.query_one("#bench-report").border_title = "report"
        self.query_one("#bench-cases").border_title = "cases"
        self.query_one("#bench-queue").display = False
        if self.report is not None:
            self._show_report()
        self.reload()
        self.set_interval(QUEUE_POLL_S, self._poll_queue)
        if self.sweep is not None:
            self._status(f"running {self.sweep.sweep_id}: {len(self.sweep.cases)} runs…")
            self._run_sweep(self.sweep)

    def on_unmount(self) -> None:
        self._stop_sweep.set()  # leaving the screen interrupts the sweep; its finished runs stay stored

    @work(thread=True, group="sweep", exit_on_error=False)
    def _run_sweep(self, sweep: Sweep) -> None:
        """Run the sweep on an event loop of its own (as the compare screen runs a comparison), so painting
        never delays the arms; leaving the screen (or quitting) cancels it as Ctrl-C does ``workbench bench``."""
        from workbench.scripted import SURFACE

        SURFACE.set("tui")

        def progressed(step: Progress) -> None:
            line = f"{step.kind} {step.case.task} at {step.case.items} items"
            self.post_message(SweepProgressed(step.done, step.total, line))

        sweep.on_progress = progressed

        async def until_done() -> SweepOutcome:
            task = asyncio.ensure_future(sweep.run())
            while not task.done():
                if self._stop_sweep.is_set():
                    task.cancel()
                await asyncio.wait({task}, timeout=SWEEP_STOP_POLL_S)
            return task.result()

        loop = asyncio.new_event_loop()
        try:
            outcome = loop.run_until_complete(until_done())
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
        why = "interrupted" if outcome.interrupted else "finished"
        self.post_message(SweepProgressed(len(outcome.results), len(outcome.cases), why, ended=True))

    @on(SweepProgressed)
    def _sweep_progressed(self, message: SweepProgressed) -> None:
        assert self.sweep is not None
        sweep_id = self.sweep.sweep_id
        self._status(f"{sweep_id}: {message.done}/{message.total} runs · {message.line}")
        if message.ended:
            self._sweep_running = False
            self._load(sweep_id)
        self.reload()

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        yield "Bench: open sweep", "Show the selected sweep's report (enter)", "open"
        yield "Bench: chart metric", "Cycle the scaling chart's metric (m)", "metric"
        yield "Bench: cases", "The per-case matrix, or back to the report (c)", "toggle_view"
        yield "Bench: mark sweep", "Mark the selected sweep for comparing (space)", "mark"
        yield "Bench: compare marked", "Compare the two marked sweeps case by case (x)", "diff"
        yield "Bench: reload", "Read the sweeps again (r)", "reload"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "view":
            return parameters[0] != self.view
        if action in self.REPORT_ONLY:
            return self.view == "report"
        if action in self.CASES_ONLY:
            return self.view == "cases"
        if action == "mark":  # comparing needs two sweeps
            return len(self.sweeps) > 1
        if action == "diff":
            return self.marks.ready
        return True

    @property
    def selected(self) -> SweepInfo | None:
        table = self.query_one("#sweeps", DataTable)
        if not self.sweeps or table.row_count == 0:
            return None
        return self.sweeps[min(table.cursor_row, len(self.sweeps) - 1)]

    # -- loading ---------------------------------------------------------------------------------

    def reload(self) -> None:
        self._list()

    @work(group="list", exclusive=True, exit_on_error=False)
    async def _list(self) -> None:
        found = await asyncio.to_thread(lambda: SweepStore(self.store).sweeps(limit=200))
        self.post_message(SweepsListed(found))

    @on(SweepsListed)
    def _listed(self, message: SweepsListed) -> None:
        table: DataTable[str] = self.query_one("#sweeps", DataTable)
        self.sweeps = message.sweeps
        self.refresh_bindings()
        cursor = table.cursor_row
        table.clear()
        for info in self.sweeps:
            sweep = info.id.removeprefix("sweep-")
            table.add_row(
                info.created.astimezone().strftime("%m-%d %H:%M"),
                Text.assemble((MARK, "bold cyan"), sweep) if self.marks.side(info.id) else sweep,
                fmt.cell(info.model),
                f"{info.finished_runs}/{info.planned}",
                info.status,
                key=info.id,
            )
        if self.sweeps:
            table.move_cursor(row=min(cursor, len(self.sweeps) - 1))
        self.call_after_refresh(_repaint, table)
        if self._sweep_running:
            pass  # the running sweep's progress holds the status line
        elif not self.sweeps:
            self._status("No sweeps yet.")
            self.query_one("#bench-headline", Static).update(Content.styled(EMPTY_HINT, "$text-muted"))
        elif self.report is None:
            self._status(f"{len(self.sweeps)} sweeps · enter shows a report")
            self.action_open()

    def _poll_queue(self) -> None:
        if any(info.status == QUEUED for info in self.sweeps):
            self._watch_queue(
                self.report.sweep_id if self.report else None, self.report.finished if self.report else -1
            )

    @work(group="queue", exclusive=True, exit_on_error=False)
    async def _watch_queue(self, shown: str | None, shown_finished: int) -> None:
        def read() -> QueueProgressed:
            from workbench.config import ConfigError, load_settings
            from workbench.queue.progress import queue_progress

            sweeps = SweepStore(self.store).sweeps(limit=200)
            try:
                progress = queue_progress(self.store, sweeps, (self.settings or load_settings()).queue)
            except ConfigError:
                progress = {}
            current = next((info for info in sweeps if info.id == shown), None)
            changed = current is not None and current.finished_runs != shown_finished
            return QueueProgressed(sweeps, progress, load_sweep(self.store, current.id) if changed else None)

        self.post_message(await asyncio.to_thread(read))

    @on(QueueProgressed)
    def _queue_progressed(self, message: QueueProgressed) -> None:
        self._listed(SweepsListed(message.sweeps))
        if message.report is not None:
            self.report = message.report
            self._show_report()
        self._show_queue(message.progress)

    def _show_queue(self, progress: dict[str, Any]) -> None:
        pane = self.query_one("#bench-queue", Static)
        found = progress.get(self.report.sweep_id) if self.report else None
        pane.display = found is not None
        if found is not None:
            lines = [Text(f"queue: {found.line()}", style="cyan")]
            lines += [Text(f"  {line}", style="dim") for line in found.worker_lines()]
            pane.update(Group(*lines))

    @work(group="load", exclusive=True, exit_on_error=False)
    async def _load(self, sweep_id: str) -> None:
        report = await asyncio.to_thread(load_sweep, self.store, sweep_id)
        self.post_message(SweepReportLoaded(report))

    @on(SweepReportLoaded)
    def _loaded(self, message: SweepReportLoaded) -> None:
        self.report = message.report
        self.rule = 0
        self._show_report()

    # -- drawing ---------------------------------------------------------------------------------

    def _status(self, text: str) -> None:
        self.query_one("#bench-status", Static).update(Content.styled(text, "$text-muted"))

    def _show_report(self) -> None:
        report = self.report
        if report is None:
            return
        self.query_one("#bench-headline", Static).update(Text(headline(report), style="bold"))
        pane = self.query_one("#bench-report")
        room = pane.scrollable_content_region.width or self.app.size.width - TIERS_FRAME
        parts = [tier_table(tier, width=room - 1) for tier in report.tiers]  # less one: the scrollbar to come
        notes = [
            Text(note, style="dim") for note in [*(f"cost: {label}" for label in report.price_labels), *report.notes]
        ]
        self.query_one("#bench-tiers", Static).update(Group(*_spaced(parts), *notes))
        failures = self.query_one("#bench-failures", Static)
        failures.update(failures_table(report) if report.failures else "")
        self._show_rule()
        self.matrix = case_matrix(report.runs)
        self._fill_cases()
        if not self._sweep_running:
            self._view_status()

    def _view_status(self) -> None:
        report = self.report
        if report is None:
            return
        if self.marks.ids:
            self._status(self.marks.status())
        elif self.view == "cases":
            self._status(f"{report.sweep_id} · enter: replay · f: filter · /: find · s: sort · c: report")
        else:
            self._status(f"{report.sweep_id} · c: per-case matrix · m: chart metric · [ ]: scaling rule")

    def _fill_cases(self) -> None:
        """The matrix as the filters leave it; the table keeps its sort and the cursor on the same case."""
        matrix = self.matrix
        table = self.query_one("#cases", CaseTable)
        line = self.query_one("#cases-line", Static)
        if matrix is None or not matrix.cells:
            table.show([], [])
            line.update(Content.styled("No finished runs in this sweep yet.", "$text-muted"))
            return
        rows = matrix_rows(matrix, only=self.only, text=self.text or None)
        self.case_keys = {case_label(key): key for key in matrix.cells}
        table.show(matrix_columns(matrix), rows)
        summary = filter_text(self.only, self.text, len(rows), len(matrix.cells))
        sort = table.sort_text()
        against = f"against {matrix.baseline}" if len(matrix.arms) > 1 else ""
        line.update(Content.styled(" · ".join(part for part in (summary, against, sort) if part), "$text-muted"))

    def _show_rule(self) -> None:
        report = self.report
        chart = self.query_one("#bench-chart", Static)
        details = self.query_one("#bench-scaling", Static)
        if report is None or not report.scaling:
            chart.update(
                Content.styled("No scaling rules in this sweep (run `workbench bench --tier scaling`).", "$text-muted")
            )
            details.update("")
            return
        series = report.scaling[self.rule % len(report.scaling)]
        report_pane = self.query_one("#bench-report")
        room = report_pane.scrollable_content_region.width
        if not room:  # not laid out yet: draw once the chart's width is known, never at a guessed one
            self.call_after_refresh(self._show_rule)
            return
        if not report_pane.show_vertical_scrollbar:  # the chart's own height brings the scrollbar: leave it room
            room -= report_pane.styles.scrollbar_size_vertical
        width = max(40, min(room, CHART_WIDEST))
        drawn = scaling_chart(series, self.metric, width=width, height=CHART_HEIGHT)
        chart.update(Text.from_ansi(drawn, no_wrap=True, overflow="crop"))
        position = f"rule {self.rule % len(report.scaling) + 1} of {len(report.scaling)} · {CHART_TITLES[self.metric]}"
        lines = [Text(line, style="cyan") for line in crossover_lines(series)]
        details.update(Group(Text(position, style="dim"), scaling_table(series), *lines))

    def on_resize(self) -> None:
        self.set_class(self.size.width < SIDE_BY_SIDE_FROM, "-stacked")
        if self.report is not None:
            self.call_after_refresh(self._show_report)

    # -- actions ---------------------------------------------------------------------------------

    def action_open(self) -> None:
        info = self.selected
        if info is not None:
            self._status(f"loading {info.id} ({info.finished_runs} runs)…")
            self._load(info.id)

    @on(DataTable.RowSelected, "#sweeps")
    def _row_selected(self) -> None:
        self.action_open()

    def action_metric(self) -> None:
        self.metric = CHART_METRICS[(CHART_METRICS.index(self.metric) + 1) % len(CHART_METRICS)]
        self._show_rule()
        self._chart_into_view()

    def action_rule(self, step: int) -> None:
        self.rule += step
        self._show_rule()
        self._chart_into_view()

    def _chart_into_view(self) -> None:
        """The chart a key just changed is the thing to look at: scroll the report to it."""
        chart = self.query_one("#bench-chart", Static)
        self.call_after_refresh(self.query_one("#bench-report").scroll_to_widget, chart, animate=False, top=True)

    def action_reload(self) -> None:
        self.reload()

    def action_view(self, view: str) -> None:
        self.view = view
        self.set_class(view == "cases", "-cases")
        if view == "cases":
            self.query_one("#cases", CaseTable).focus()
        else:
            self.query_one("#sweeps", DataTable).focus()
        self.refresh_bindings()
        self._view_status()

    def action_toggle_view(self) -> None:
        self.action_view("report" if self.view == "cases" else "cases")

    def action_cycle_filter(self) -> None:
        self.only = next_filter(self.only)
        self._fill_cases()

    def action_find(self) -> None:
        self.query_one("#cases-find", Input).focus()

    @on(Input.Changed, "#cases-find")
    def _find_changed(self, event: Input.Changed) -> None:
        self.text = event.value.strip()
        self._fill_cases()

    @on(Input.Submitted, "#cases-find")
    def _find_submitted(self) -> None:
        self.query_one("#cases", CaseTable).focus()

    def action_sort(self) -> None:
        self.query_one("#cases", CaseTable).cycle_sort()
        self._fill_cases()

    @on(DataTable.CellSelected, "#cases")
    def _cell_selected(self) -> None:
        self.open_cell()

    def open_cell(self) -> None:
        """Replay the run behind the cursor's cell: at once when the case ran once, else after asking which."""
        report, matrix = self.report, self.matrix
        row_key, column_key = self.query_one("#cases", CaseTable).current
        if report is None or matrix is None or row_key not in self.case_keys:
            return
        key = self.case_keys[row_key]
        arm = column_arm(column_key, matrix)
        runs = sorted((run for run in report.runs if case_key(run) == key and arm in run.arms),
                      key=lambda run: run.case.repeat)  # fmt: skip
        if not runs:
            self.notify(f"{arm} did not run {row_key}.", severity="warning")
        elif len(runs) == 1:
            self._replay(runs[0].session_id)
        else:
            from workbench.tui.screens.pick_run import PickRunScreen, RunChoice

            choices = [RunChoice.of(run, matrix.arms) for run in runs]

            def chosen(session_id: str | None) -> None:
                if session_id:
                    self._replay(session_id)

            self.app.push_screen(PickRunScreen(row_key, choices, arm=arm), chosen)

    def _replay(self, session_id: str) -> None:
        self.post_message(ReplayRequested(session_id))

    def action_mark(self) -> None:
        info = self.selected
        if info is None:
            return
        self.marks.toggle(info.id)
        self._listed(SweepsListed(self.sweeps))
        self.refresh_bindings()
        self._view_status()

    def action_diff(self) -> None:
        if self.marks.ready:
            self.app.push_screen(DiffScreen(self.store, *self.marks.ids))

    def action_back(self) -> None:
        find = self.query_one("#cases-find", Input)
        if self.focused is find:  # the find field's escape clears it and goes back to the table
            find.value = ""
            self.query_one("#cases", CaseTable).focus()
        elif self.view == "cases":
            self.action_view("report")
        else:
            self.dismiss()


def _spaced(parts: list[object]) -> list[object]:
    spaced: list[object] = []
    for part in parts:
        spaced += [part, Text("")]
    return spaced
