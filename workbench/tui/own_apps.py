"""The compare screen's apps of one's own: the one in use, the recent ones its App field offers, the dialog that
types a new one, and remembering an app once it has run.

The screen runs comparisons; this object keeps what the App field needs between them, so the screen only asks
:attr:`OwnAppController.source` when a run uses "your tools" and says when a run started and ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from textual.content import Content
from textual.widgets import TextArea

from workbench.tui.widgets.run_form import COMMANDS_OFF_MESSAGE, NEW_MCP, NEW_TOOLSET, RECENT_APP, RunForm

if TYPE_CHECKING:
    from textual.screen import Screen

    from workbench.sources import AppSource
    from workbench.sources.typed import TypedApp
    from workbench.tui.screens.own_app import OwnAppChosen


class OwnAppController:
    """The App field's apps of one's own, for one compare screen (whose workers and dialogs it uses)."""

    def __init__(
        self, screen: Screen[None], source: AppSource | None, *, allow_commands: bool, running: Callable[[], bool]
    ) -> None:
        self.screen = screen
        self.running = running
        """Whether the screen runs a comparison now (the App field is then left as it is)."""
        self.allow_commands = allow_commands
        """Whether the App field may start a command or import code; the app given on the command line
        (``source``) is the user's own and runs either way."""
        self.source = source
        """The app of the person's own (MCP servers, a toolset), offered in the form's App field."""
        self.typed: TypedApp | None = None
        """The app of one's own as the App field's dialog takes it (``None``: none, or one the dialog cannot
        take, such as several servers given on the command line)."""
        if source is not None:
            from workbench.sources.typed import typed_from

            self.typed = typed_from(source)
        self.recent: list[TypedApp] = []
        """Apps of one's own used lately (``recent-apps.json`` in the data directory), most recent first."""
        self.offered: list[TypedApp] = []
        """The recent apps the App field offers (the one in use is offered as "your tools" instead)."""
        self._ran: TypedApp | None = None

    @property
    def form(self) -> RunForm:
        return self.screen.query_one(RunForm)

    # -- the screen's runs -----------------------------------------------------------------------

    def run_started(self, own: bool) -> None:
        """A run began, with the app of one's own (``own``) or a demo app."""
        self._ran = self.typed if own else None

    def run_finished(self, app_label: str) -> None:
        """A run ended; an app of one's own opened for at least one arm, so it is worth offering again, under
        the name it gave itself (``app_label``)."""
        if self._ran is not None:
            self.typed = replace(self._ran, label=app_label)
            self.screen.run_worker(self._remember(self.typed), group="recall", exit_on_error=False)

    async def recall(self) -> None:
        """Offer the recent apps (``recent-apps.json``), read off the UI's thread."""
        from workbench.sources.typed import recent_apps

        self.offer(await asyncio.to_thread(recent_apps))

    # -- the App field ---------------------------------------------------------------------------

    def offer(self, recent: list[TypedApp] | None = None, *, choose: bool = False) -> None:
        if recent is not None:
            self.recent = recent
        current = self.typed
        recent = self.recent if self.allow_commands else []
        self.offered = [typed for typed in recent if current is None or not typed.same_app(current)]
        labels = [f"{typed.name} · recent {'MCP' if typed.kind == 'mcp' else 'toolset'}" for typed in self.offered]
        own = None
        if self.source is not None:  # once it has run, a typed app is called what it calls itself
            own = current.label if current is not None and current.label else self.source.label
        self.form.offer_own_apps(own, labels, choose=choose)

    def wanted(self, value: str) -> None:
        """The dialog for "MCP server…" / "Toolset…"; a recent app is used at once unless a header value is
        wanted (values are not remembered)."""
        from workbench.tui.screens.own_app import OwnAppScreen

        if not self.allow_commands:  # the entries are not offered; a value that arrives anyway is refused
            self.form.show_message(COMMANDS_OFF_MESSAGE, error=True)
            return
        if value in (NEW_MCP, NEW_TOOLSET):
            kind = "mcp" if value == NEW_MCP else "toolset"
            self.screen.app.push_screen(OwnAppScreen(kind, self.typed), self.chosen)
            return
        index = int(value.removeprefix(RECENT_APP))
        if index >= len(self.offered):
            return  # offered before the list changed
        typed = self.offered[index]
        if typed.missing_values:
            note = (f"Type the value of {', '.join(typed.missing_values)}: header values are not remembered "
                    "(write $VARIABLE to read one from the environment).")  # fmt: skip
            self.screen.app.push_screen(OwnAppScreen(typed.kind, typed, note=note), self.chosen)
        else:
            self.screen.run_worker(self._check_recent(typed), group="own-app", exclusive=True, exit_on_error=False)

    async def _check_recent(self, typed: TypedApp) -> None:
        from workbench.tui.screens.own_app import OwnAppChosen

        try:
            source = await asyncio.to_thread(typed.source)
        except ValueError as error:
            self.form.show_message(f"{typed.name}: {error}", error=True)
            return
        self.chosen(OwnAppChosen(typed, source))

    def chosen(self, chosen: OwnAppChosen | None) -> None:
        """The dialog's (or a checked recent app's) answer: that app is the one in use."""
        if chosen is None or not self.allow_commands:
            return
        self.source, self.typed = chosen.source, chosen.typed
        self.offer(choose=True)
        self.screen.query_one("#prompt", TextArea).focus()
        self.form.show_message(
            Content.assemble(("App ", "$text-muted"), (chosen.typed.label or chosen.source.label, "bold"),
                             (" — each arm starts its own copy when you run (ctrl+r)", "$text-muted"))
        )  # fmt: skip

    async def _remember(self, typed: TypedApp) -> None:
        from workbench.sources.typed import remember_app

        self.recent = await asyncio.to_thread(remember_app, typed)
        if not self.running():
            self.offer()
