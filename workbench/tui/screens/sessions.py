"""The sessions screen: stored sessions newest first, filterable; open one to replay it, or delete it; mark two
(space) and compare them case by case (``x``, :class:`~workbench.tui.screens.diff.DiffScreen`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Header, Input, Static

from workbench.display import arm_title, percent_change
from workbench.store import ArmListing, SessionInfo, Store
from workbench.tui import format as fmt
from workbench.tui.messages import ReplayRequested, SessionsListed
from workbench.tui.screens.confirm import ConfirmScreen
from workbench.tui.screens.diff import DiffScreen, Marks
from workbench.tui.widgets.footer import Footer
from workbench.verdict import session_comparability

LIMIT = 500
"""Sessions listed at most; the filter searches the whole store."""
FILTER_DELAY_S = 0.15

ARM_WIDTH = 14
"""An arm's cell: ``✓ $0.0081``, or ``· cancelled $0.0002``."""
PROMPT_LEAST = 16
MARK = "● "
"""Before the prompt of a session marked for comparing."""
FRAME = 6
"""Columns the table does not give its cells: its margins (2) and the scrollbar (2), and some slack (2)."""


def session_columns(width: int, arm_names: list[str]) -> list[tuple[str, str, int]]:
    """(label, key, width) of the table's columns at ``width`` terminal columns: the prompt takes what the
    others leave; a narrow terminal gets a shorter date and gives up, in turn, the model, the item count,
    width of the arm cells, the app and the cost comparison."""
    steps = ["model", "items", "narrow arms", "app", "versus"]
    given_up: set[str] = set()
    while True:
        arm_width = ARM_WIDTH - 5 if "narrow arms" in given_up else ARM_WIDTH
        head = [("when", "when", 16 if width >= 150 else 11), ("app", "app", 9), ("model", "model", 20)]
        head.append(("items", "items", 5))
        narrow = "narrow arms" in given_up
        arms = [(name if narrow else arm_title(name), f"arm:{name}", arm_width) for name in arm_names]
        tail = [*arms, ("cost vs 1st", "versus", 12)]
        columns = [column for column in [*head, *tail] if column[1] not in given_up]
        used = sum(column_width + 2 for _, _, column_width in columns) + 2 + FRAME
        if width - used >= PROMPT_LEAST or not steps:
            break
        given_up.add(steps.pop(0))
    prompt = ("prompt", "prompt", max(width - used, PROMPT_LEAST))
    split = sum(1 for column in head if column[1] not in given_up)
    return [*columns[:split], prompt, *columns[split:]]


def display_path(location: str) -> str:
    """A database path with the home directory shown as ``~``."""
    home = str(Path.home())
    return "~" + location[len(home) :] if location.startswith(home + os.sep) else location


def arm_cell(arm: ArmListing | None) -> Content:
    """``✓ $0.0081`` (passed), ``✗ $0.0012`` (failed its grade), ``· cancelled $0.0002`` for one arm."""
    if arm is None:
        return Content.styled("–", "$text-muted")
    mark, style = {True: ("✓", "$text-success"), False: ("✗", "$text-error"), None: ("·", "$text-muted")}[arm.passed]
    status = Content("") if arm.status == "completed" else fmt.status_badge(arm.status) + " "
    return Content.assemble((mark, style), " ", status, (fmt.cost(arm.cost_usd), "$text-muted"))


def versus_cell(arms: list[ArmListing]) -> Content:
    """The second arm's cost against the first's in %, or the plain figure marked ``partial`` when the arms are
    not comparable (no side is named cheaper then)."""
    if len(arms) < 2:
        return Content.styled("–", "$text-muted")
    change = percent_change(arms[1].cost_usd, arms[0].cost_usd)
    if not session_comparability(arms):
        figure = "–" if change is None else f"{change:+.0f}%"
        return Content.assemble(figure, (" partial", "$text-warning"))
    return fmt.change_text(change)


def prompt_cell(info: SessionInfo, width: int, *, marked: bool, side: str = "") -> Content | Text:
    """The prompt's first line; ``marked``, it starts with ``partial`` when the arms are not comparable (where
    the cost comparison that carries the mark is given up); ``side`` (``A``, ``B``): marked for comparing."""
    partial = marked and not session_comparability(info.arms)
    chosen = f"{MARK}{side} " if side else ""
    room = width - len(chosen) - (8 if partial else 0)
    text = fmt.one_line(info.prompt, room) or "(empty)"
    if not partial and not side:
        return fmt.cell(text)
    return Content.assemble((chosen, "bold $text-accent"), ("partial " if partial else "", "$text-warning"),
                            fmt.safe(text))  # fmt: skip


class SessionsScreen(Screen[None]):
    CSS_PATH = "sessions.tcss"
    AUTO_FOCUS = "#sessions-table"
    BINDINGS = [
        Binding("enter", "open", "Replay", id="sessions.open", tooltip="Replay the selected session"),
        Binding("slash", "filter", "Filter", id="sessions.filter", tooltip="Filter by app, model, task or prompt"),
        Binding("d,delete", "delete", "Delete", id="sessions.delete", tooltip="Delete the selected session (asks)"),
        Binding("space", "mark", "Mark", id="sessions.mark", tooltip="Mark the session; two marked: x compares them"),
        Binding("x", "diff", "Compare", id="sessions.diff", tooltip="Compare the two marked sessions case by case"),
        Binding("b", "bench", "Bench runs", id="sessions.bench", tooltip="Show or hide the sessions bench sweeps ran"),
        Binding("r,f5", "reload", "Reload", show=False, id="sessions.reload", tooltip="Read the list again"),
        Binding("escape", "back", "Back", id="sessions.back", tooltip="Back to the comparison"),
    ]

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self.sessions: list[SessionInfo] = []
        self._search = ""
        self._filter_timer: Timer | None = None
        self.show_bench = False
        """Whether the sessions bench sweeps ran are listed (hidden at first: one sweep stores dozens)."""
        self.hidden = 0
        """Bench sessions left out of the list as it stands."""
        self._layout: tuple[int, tuple[str, ...]] | None = None
        self.marks = Marks()
        """Sessions marked for comparing (space; ``x`` compares two)."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        yield Input(placeholder="Filter sessions by app, model, task, prompt or id…", id="filter", compact=True)
        yield DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        yield Static(id="sessions-status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Code Mode Workbench"
        self.sub_title = f"Sessions · {display_path(self.store.name)}"
        self.reload()

    def on_screen_resume(self) -> None:
        self.reload()

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        yield "Sessions: replay", "Replay the selected session (enter)", "open"
        yield "Sessions: filter", "Filter by app, model, task or prompt (/)", "filter"
        yield "Sessions: delete", "Delete the selected session; asks first (d)", "delete"
        yield "Sessions: mark", "Mark the session for comparing (space)", "mark"
        yield "Sessions: compare marked", "Compare the two marked sessions case by case (x)", "diff"
        yield "Sessions: bench runs", "Show or hide the sessions bench sweeps ran (b)", "bench"
        yield "Sessions: reload", "Read the list again (r)", "reload"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "mark":  # comparing needs two sessions
            return len(self.sessions) > 1
        if action in ("open", "delete"):
            return True if self.selected is not None else None
        if action == "diff":
            return self.marks.ready
        return True

    @property
    def selected(self) -> SessionInfo | None:
        table = self.query_one(DataTable)
        if not self.sessions or table.row_count == 0:
            return None
        return self.sessions[min(table.cursor_row, len(self.sessions) - 1)]

    # -- loading ---------------------------------------------------------------------------------

    def reload(self) -> None:
        self._list(self._search)

    @work(group="list", exclusive=True, exit_on_error=False)
    async def _list(self, search: str) -> None:
        found, hidden = await asyncio.to_thread(self._sessions, search or None)
        self.hidden = hidden
        self.post_message(SessionsListed(found, search))

    def _sessions(self, search: str | None) -> tuple[list[SessionInfo], int]:
        if self.show_bench:
            return self.store.sessions(limit=LIMIT, search=search), 0
        from workbench.bench.manifest import sessions_without_sweeps

        return sessions_without_sweeps(self.store, limit=LIMIT, search=search)

    def on_resize(self) -> None:
        if self.sessions:
            self._fill(self.sessions)

    @on(SessionsListed)
    def _listed(self, message: SessionsListed) -> None:
        self._fill(message.sessions)

    def _fill(self, sessions: list[SessionInfo]) -> None:
        """The rows, in columns fitted to the screen's width (set again when the width or the arms change)."""
        table: DataTable[str | Content | Text] = self.query_one(DataTable)
        selected = self.selected.id if self.selected else None
        self.sessions = sessions
        arm_names = list(dict.fromkeys(arm.name for info in sessions for arm in info.arms)) or ["tool", "code"]
        width = self.size.width or self.app.size.width  # before the first layout, the screen is the terminal
        layout = (width, tuple(arm_names))
        columns = session_columns(width, arm_names)
        if layout != self._layout:
            self._layout = layout
            table.clear(columns=True)
            for label, key, width in columns:
                table.add_column(label, key=key, width=width)
        else:
            table.clear()
        widths = {key: width for _, key, width in columns}
        long_dates = widths["when"] >= 16
        for info in sessions:
            arms = {arm.name: arm for arm in info.arms}
            cells: dict[str, str | Content | Text] = {
                "when": info.created.astimezone().strftime("%Y-%m-%d %H:%M" if long_dates else "%m-%d %H:%M"),
                "app": fmt.cell(info.app),
                "model": fmt.cell(fmt.one_line(info.model, widths.get("model", 24))),
                "items": fmt.count(info.items),
                "prompt": prompt_cell(
                    info, widths["prompt"], marked="versus" not in widths, side=self.marks.side(info.id)
                ),
                **{f"arm:{name}": arm_cell(arms.get(name)) for name in arm_names},
                "versus": versus_cell(info.arms),
            }
            table.add_row(*(cells[key] for _, key, _ in columns), key=info.id)
        ids = [info.id for info in self.sessions]
        if selected in ids:
            table.move_cursor(row=ids.index(selected))
        self._show_status()
        self.refresh_bindings()

    @on(DataTable.RowHighlighted)
    def _show_status(self) -> None:
        shown = len(self.sessions)
        filtered = f" matching “{fmt.one_line(self._search, 40)}”" if self._search else ""
        status = self.query_one("#sessions-status", Static)
        runs = f"{self.hidden:,} bench run{'s' if self.hidden != 1 else ''}"
        bench = f" · {runs} hidden (b)" if self.hidden else ""
        if not shown:
            hint = "none yet: run a comparison (escape, then ctrl+r)" if not self._search else "none found"
            status.update(Content.styled(f"Sessions{filtered}: {hint}{bench}", "$text-muted"))
            return
        more = f" (the newest {LIMIT})" if shown >= LIMIT else ""
        if self.marks.ids:
            status.update(Content.styled(self.marks.status(), "$text-muted"))
            return
        selected = self.selected
        note = session_comparability(selected.arms).note if selected else ""
        status.update(
            Content.assemble(
                (f"{shown:,} session{'s' if shown != 1 else ''}{filtered}{more}{bench}", "$text-muted"),
                ("   selected ", "$text-muted"),
                (selected.id if selected else "–", "bold"),
                (f" ({note})" if note else "", "$text-warning"),
                ("  (workbench replay ID)   enter replays · d deletes · / filters", "$text-muted"),
            )
        )

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        """Search once typing pauses, not per keystroke."""
        self._search = event.value.strip()
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_DELAY_S, self.reload)

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.query_one(DataTable).focus()

    # -- actions ---------------------------------------------------------------------------------

    def action_mark(self) -> None:
        info = self.selected
        if info is None:
            return
        self.marks.toggle(info.id)
        self._fill(self.sessions)

    def action_diff(self) -> None:
        if self.marks.ready:
            self.app.push_screen(DiffScreen(self.store, *self.marks.ids))

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_reload(self) -> None:
        self.reload()

    def action_bench(self) -> None:
        self.show_bench = not self.show_bench
        self.notify("Bench runs shown." if self.show_bench else "Bench runs hidden.", title="Sessions", timeout=2)
        self.reload()

    def action_back(self) -> None:
        if self.focused is self.query_one("#filter", Input) and self._search:
            self.query_one("#filter", Input).value = ""
            return
        self.dismiss()

    def action_open(self) -> None:
        info = self.selected
        if info is not None:
            self.post_message(ReplayRequested(info.id))

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_open()

    def action_delete(self) -> None:
        info = self.selected
        if info is None:
            return
        question = Content.assemble(
            "Delete session ", (info.id, "bold"), f" ({info.app}, {info.created.astimezone():%Y-%m-%d %H:%M})?\n",
            ("Its events are removed from ", "$text-muted"), (self.store.name, "$text-muted"),
            (". This cannot be undone.", "$text-muted"),
        )  # fmt: skip

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._delete(info.id)

        self.app.push_screen(ConfirmScreen(question, confirm="Delete"), confirmed)

    @work(group="delete", exit_on_error=False)
    async def _delete(self, session_id: str) -> None:
        await asyncio.to_thread(self.store.delete_session, session_id)
        if self.marks.side(session_id):  # a deleted session cannot be compared
            self.marks.toggle(session_id)
        self.notify(f"Deleted session {session_id}.", title="Sessions")
        self.reload()
