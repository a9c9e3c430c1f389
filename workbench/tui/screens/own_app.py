"""The App field's "MCP server…" / "Toolset…" dialog: type an app of your own, checked before it is used."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static
from textual.widgets import Input as InputWidget

from workbench.sources.typed import Kind, TypedApp, split_headers

if TYPE_CHECKING:
    from workbench.sources import AppSource


class TextField(InputWidget):  # (the alias: tests/test_errors.py takes a class based on *Input for an error)
    """A field with the prompt's keys: ctrl+a selects all (typing then replaces it), not "home"."""

    BINDINGS = [
        Binding("ctrl+a", "select_all", "Select all", show=False, id="own_app.select_all", tooltip="Select the field")
    ]


TITLES = {"mcp": "An MCP server as the app", "toolset": "A Python toolset as the app"}


@dataclass(frozen=True)
class OwnAppChosen:
    """What the dialog returns: the app as typed and its source, already checked."""

    typed: TypedApp
    source: AppSource


class OwnAppScreen(ModalScreen[OwnAppChosen | None]):
    """Fields for one MCP server (command or URL, headers) or one toolset (``module:attr``), and a workdir.

    Enter (or Use) checks them as ``--mcp`` / ``--toolset`` are checked; what is wrong is said under the
    fields and the dialog stays open. The servers themselves start when the comparison runs.
    """

    CSS_PATH = "own_app.tcss"
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="own_app.cancel", tooltip="Keep the app as it was")]

    def __init__(self, kind: Kind, typed: TypedApp | None = None, *, note: str = "") -> None:
        super().__init__()
        self.kind = kind
        self.typed = typed if typed is not None and typed.kind == kind else TypedApp(kind, "")
        self.note = note
        self.AUTO_FOCUS = "#headers" if kind == "mcp" and self.typed.missing_values else "#target"

    def compose(self) -> ComposeResult:
        typed = self.typed
        with Vertical(id="dialog"):
            with Horizontal(classes="own-row"):
                if self.kind == "mcp":
                    yield Label("Server", classes="own-label")
                    yield TextField(
                        typed.target,
                        id="target",
                        placeholder="a command (stdio) or http(s)://host/mcp",
                        tooltip="Started once per arm, like --mcp; {workdir} names the arm's copy, {arm} the arm",
                    )
                else:
                    yield Label("Toolset", classes="own-label")
                    yield TextField(
                        typed.target,
                        id="target",
                        placeholder="package.module:attribute",
                        tooltip="A pydantic-ai toolset, a list of functions, or a factory of either",
                    )
            if self.kind == "mcp":
                with Horizontal(classes="own-row"):
                    yield Label("Headers", classes="own-label")
                    yield TextField(
                        "; ".join(typed.headers),
                        id="headers",
                        placeholder="HTTP only: Name: value; … ($VAR reads the environment)",
                        tooltip="Values are not remembered unless written as $VARIABLE",
                    )
            with Horizontal(classes="own-row"):
                yield Label("Workdir", classes="own-label")
                yield TextField(
                    typed.workdir,
                    id="workdir",
                    placeholder="optional: a folder copied once per arm",
                    tooltip="Each arm works on its own copy; its files and SQLite rows are diffed",
                )
            yield Static(Content.styled(self.note, "$text-muted"), id="own-message")
            with Horizontal(id="own-buttons"):
                yield Button("Use (enter)", variant="primary", id="use")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#dialog").border_title = TITLES[self.kind]

    def typed_now(self) -> TypedApp:
        """The fields as typed; the name a server gave itself is kept only while its command (or URL) is the
        one it was learnt from: another command is another server."""
        headers = split_headers(self.query_one("#headers", Input).value) if self.kind == "mcp" else ()
        target = self.query_one("#target", Input).value.strip()
        return replace(
            self.typed,
            target=target,
            headers=headers,
            workdir=self.query_one("#workdir", Input).value.strip(),
            label=self.typed.label if target == self.typed.target else "",
        )

    def action_cancel(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed, "#cancel")
    def _cancel_pressed(self) -> None:
        self.dismiss(None)

    @on(Input.Submitted)
    @on(Button.Pressed, "#use")
    def _use(self) -> None:
        self._check(self.typed_now())

    @work(exclusive=True, group="own-app-check")
    async def _check(self, typed: TypedApp) -> None:
        """Validate off the UI thread (a toolset's module is imported, which may take a while)."""
        self._say("Checking…")
        try:
            source: Any = await asyncio.to_thread(typed.source)
        except ValueError as error:
            self._say(str(error), error=True)
            return
        self.dismiss(OwnAppChosen(typed, source))

    def _say(self, text: str, *, error: bool = False) -> None:
        message = self.query_one("#own-message", Static)
        message.set_class(error, "-error")
        message.update(Content(text) if error else Content.styled(text, "$text-muted"))
