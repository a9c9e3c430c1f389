"""The sessions screen: stored sessions newest first, filterable; open one to replay it, or delete it."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer, Header, Input, Static

from workbench.printer import ARM_TITLES
from workbench.store import ArmInfo, SessionInfo, Store
from workbench.summary import percent_change
from workbench.tui import format as fmt
from workbench.tui.messages import SessionsListed
from workbench.tui.screens.confirm import ConfirmScreen
from workbench.verdict import comparability, session_comparability

LIMIT = 500
"""Sessions listed at most; the filter searches the whole store."""
FILTER_DELAY_S = 0.15

COLUMNS: tuple[tuple[str, str, int | None], ...] = (
    ("when", "when", 16),
    ("app", "app", None),
    ("items", "items", None),
    ("model", "model", None),
    ("prompt", "prompt", 34),
    (ARM_TITLES["tool"], "tool", 18),
    (ARM_TITLES["code"], "code", 18),
    ("code cost vs tool", "cheaper", 17),
)
"""(label, key, width): the Content cells get fixed widths, plain text sizes itself."""


def display_path(location: str) -> str:
    """A database path with the home directory shown as ``~``."""
    home = str(Path.home())
    return "~" + location[len(home) :] if location.startswith(home + os.sep) else location


def arm_cell(arm: ArmInfo | None) -> Content:
    """``✓ $0.0081`` (passed), ``✗ $0.0012`` (failed its grade), ``· cancelled $0.0002`` for one arm."""
    if arm is None:
        return Content.styled("–", "$text-muted")
    mark, style = {True: ("✓", "$text-success"), False: ("✗", "$text-error"), None: ("·", "$text-muted")}[arm.passed]
    status = Content("") if arm.status == "completed" else fmt.status_badge(arm.status) + " "
    return Content.assemble((mark, style), " ", status, (fmt.cost(arm.cost_usd), "$text-muted"))


def cheaper_cell(arms: dict[str, ArmInfo]) -> Content:
    """Code mode's cost against tool calling's in %, or the plain figure marked ``partial`` when an arm did not
    run to its end (no side is named cheaper then)."""
    tool, code = arms.get("tool"), arms.get("code")
    if tool is None or code is None:
        return Content.styled("–", "$text-muted")
    change = percent_change(code.cost_usd, tool.cost_usd)
    if not comparability(tool, code):
        figure = "–" if change is None else f"{change:+.0f}%"
        return Content.assemble(figure, (" partial", "$text-warning"))
    return fmt.change_text(change)


class SessionsScreen(Screen[None]):
    CSS_PATH = "sessions.tcss"
    AUTO_FOCUS = "#sessions-table"
    BINDINGS = [
        Binding("enter", "open", "Replay", id="sessions.open", tooltip="Replay the selected session"),
        Binding("slash", "filter", "Filter", id="sessions.filter", tooltip="Filter by app, model, task or prompt"),
        Binding("d,delete", "delete", "Delete", id="sessions.delete", tooltip="Delete the selected session (asks)"),
        Binding("r,f5", "reload", "Reload", id="sessions.reload", tooltip="Read the list again"),
        Binding("escape", "back", "Back", id="sessions.back", tooltip="Back to the comparison"),
    ]

    def __init__(self, store: Store) -> None:
        super().__init__()
        self.store = store
        self.sessions: list[SessionInfo] = []
        self._search = ""
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        yield Input(placeholder="Filter sessions by app, model, task, prompt or id…", id="filter", compact=True)
        table: DataTable[str | Content] = DataTable(id="sessions-table", cursor_type="row", zebra_stripes=True)
        for label, key, width in COLUMNS:
            table.add_column(label, key=key, width=width)
        yield table
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
        yield "Sessions: reload", "Read the list again (r)", "reload"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("open", "delete"):
            return True if self.selected is not None else None
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
        found = await asyncio.to_thread(self.store.sessions, limit=LIMIT, search=search or None)
        self.post_message(SessionsListed(found, search))

    @on(SessionsListed)
    def _listed(self, message: SessionsListed) -> None:
        table: DataTable[str | Content] = self.query_one(DataTable)
        selected = self.selected.id if self.selected else None
        self.sessions = message.sessions
        table.clear()
        for info in self.sessions:
            arms = {arm.name: arm for arm in info.arms}
            table.add_row(
                info.created.astimezone().strftime("%Y-%m-%d %H:%M"),
                fmt.cell(info.app),
                fmt.count(info.items),
                fmt.cell(fmt.one_line(info.model, 24)),
                fmt.cell(fmt.one_line(info.prompt, 34) or "(empty)"),
                arm_cell(arms.get("tool")),
                arm_cell(arms.get("code")),
                cheaper_cell(arms),
                key=info.id,
            )
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
        if not shown:
            hint = "none yet: run a comparison (escape, then ctrl+r)" if not self._search else "none found"
            status.update(Content.styled(f"Sessions{filtered}: {hint}", "$text-muted"))
            return
        more = f" (the newest {LIMIT})" if shown >= LIMIT else ""
        selected = self.selected
        note = session_comparability(selected.arms).note if selected else ""
        status.update(
            Content.assemble(
                (f"{shown:,} session{'s' if shown != 1 else ''}{filtered}{more}", "$text-muted"),
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

    def action_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_reload(self) -> None:
        self.reload()

    def action_back(self) -> None:
        if self.focused is self.query_one("#filter", Input) and self._search:
            self.query_one("#filter", Input).value = ""
            return
        self.dismiss()

    def action_open(self) -> None:
        info = self.selected
        if info is not None:
            self.app.open_replay(info.id)  # type: ignore[attr-defined]

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
        self.notify(f"Deleted session {session_id}.", title="Sessions")
        self.reload()
