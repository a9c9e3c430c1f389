"""The Textual workbench. The App only routes between screens; the screens and widgets do the work."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from workbench import signals
from workbench.events import DEFAULT_ARMS
from workbench.terminal import own_the_terminal
from workbench.timeline_records import SnippetRecord
from workbench.tui.messages import InspectRequested, ReplayRequested
from workbench.tui.screens.compare import CompareScreen

if TYPE_CHECKING:
    from workbench.config import Settings
    from workbench.sources import AppSource
    from workbench.store import Store  # SQLAlchemy: loaded behind the first screen, not with the app


STOP_SAVE_S = 30.0
"""Longest a stop signal waits for the running comparison to save itself before the app quits anyway."""


class WorkbenchApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "Code Mode Workbench"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit", tooltip="Quit (a running comparison is saved)"),
        Binding("f1", "help", "Help", id="app.help", tooltip="Keys and what the screen shows"),
        Binding("f2", "sessions", "Sessions", show=False, id="app.sessions", tooltip="Stored sessions"),
        Binding("f3", "bench", "Bench", show=False, id="app.bench", tooltip="Stored bench sweeps and their reports"),
    ]

    def __init__(
        self,
        store: Store | None,
        *,
        open_store: Callable[[], Store | None] | None = None,
        model: str = "scripted",
        settings: Settings | None = None,
        replay: str | None = None,
        autoplay: bool = True,
        arms: Sequence[str] = DEFAULT_ARMS,
        source: AppSource | None = None,
        allow_commands: bool = True,
    ) -> None:
        super().__init__()
        self.store = store
        self.open_store = open_store
        """Opens the store behind the first screen (SQLAlchemy, the engine, a migration check: a third of a
        second) when the CLI checked cheaply that it will open; ``store`` is ``None`` until then."""
        self.store_settled = asyncio.Event()
        """Set once the store is open or has failed to: a run, the sessions and the bench wait for it."""
        if open_store is None:
            self.store_settled.set()
        self.model = model
        self.settings = settings
        self.replay = replay
        self.autoplay = autoplay
        self.home = CompareScreen(
            store, model=model, settings=settings, arms=arms, source=source, allow_commands=allow_commands
        )
        self.home.store_settled = self.store_settled
        self.stopped_by: int | None = None
        """The stop signal (SIGTERM, SIGHUP) that ended the app, if one did."""

    def on_mount(self) -> None:
        self.push_screen(self.home)
        if self.replay is not None:
            self.open_replay(self.replay)
        # After the first paint, so opening the store and loading the engine do not hold up the prompt.
        self.call_after_refresh(self._start_background)
        signals.install(asyncio.get_running_loop(), self._on_stop_signal)
        # A screen full of widgets allocates heavily while events stream in; with the start-up objects
        # frozen and a larger first generation, full collections stop pausing the paint (measured: about
        # a third less lag at 5,000 events/s).
        gc.freeze()
        gc.set_threshold(20_000, 50, 100)

    def _start_background(self) -> None:
        if self.open_store is not None:
            self._open_store_behind()
        self.run_worker(warm_up, thread=True, group="warm-up")

    @work(thread=True, group="store", exit_on_error=False)
    def _open_store_behind(self) -> None:
        assert self.open_store is not None
        try:
            store = self.open_store()
        except Exception as error:  # a store fault is a line on the screen; the app runs on, storing nothing
            self.call_from_thread(self._store_failed, str(error) or type(error).__name__)
        else:
            self.call_from_thread(self._store_opened, store)

    def _store_opened(self, store: Store | None) -> None:
        self.store = self.home.store = store
        self.store_settled.set()

    def _store_failed(self, message: str) -> None:
        self.notify(message, title="The session store did not open: nothing is stored", severity="error", timeout=60)
        self.store_settled.set()

    async def _when_settled(self, action: Callable[[], object]) -> None:
        """``action`` once the store is open (or has failed to), without holding up the app's messages."""
        await self.store_settled.wait()
        self.call_later(action)

    # -- routing ---------------------------------------------------------------------------------

    def open_replay(self, session_id: str) -> None:
        from workbench.tui.screens.replay import ReplayScreen

        self.push_screen(ReplayScreen(self.store, session_id, autoplay=self.autoplay))

    @on(ReplayRequested)
    def _replay_requested(self, message: ReplayRequested) -> None:
        self.open_replay(message.session_id)

    @on(InspectRequested)
    def _inspect_requested(self, message: InspectRequested) -> None:
        self.open_inspector(message.record)

    def open_inspector(self, record: SnippetRecord) -> None:
        from workbench.tui.screens.inspector import InspectorScreen

        self.push_screen(InspectorScreen(record))

    def action_bench(self) -> None:
        from workbench.tui.screens.bench import BenchScreen

        if not self.store_settled.is_set():
            self.run_worker(self._when_settled(self.action_bench), group="store-wait", exclusive=True)
        elif self.store is None:
            self.notify("No session store is open.", severity="warning")
        elif not isinstance(self.screen, BenchScreen):
            self.push_screen(BenchScreen(self.store, settings=self.settings))

    def action_sessions(self) -> None:
        from workbench.tui.screens.sessions import SessionsScreen

        if not self.store_settled.is_set():
            self.run_worker(self._when_settled(self.action_sessions), group="store-wait", exclusive=True)
        elif self.store is None:
            self.notify("No session store is open.", severity="warning")
        elif not isinstance(self.screen, SessionsScreen):
            self.push_screen(SessionsScreen(self.store))

    def action_help(self) -> None:
        from workbench.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(self.screen))

    async def action_quit(self) -> None:
        await self.home.stop_run()
        self.exit()

    def _on_stop_signal(self, signum: int) -> None:
        """SIGTERM, or SIGHUP from a closed terminal: quit as ctrl+q does, with exit code 128 + the signal."""
        if self.stopped_by is None:
            self.stopped_by = signum
            self.run_worker(self._stop(signum), group="stop")

    async def _stop(self, signum: int) -> None:
        await self.home.stop_run(timeout_s=STOP_SAVE_S)
        if signum == signal.SIGHUP:
            # The terminal is gone: there is nothing to restore, and Textual's shutdown would block for good
            # writing to it. The session is saved; leave at once.
            os._exit(signals.exit_code_for(signum))
        self.exit(return_code=signals.exit_code_for(signum))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for title, help_text, action in getattr(screen, "palette_commands", lambda: ())():
            yield SystemCommand(title, help_text, lambda action=action: screen.run_action(action))
        yield SystemCommand("Sessions: list", "Stored sessions to replay or delete (ctrl+o)", self.action_sessions)
        yield SystemCommand("Bench: sweeps", "Bench sweeps, their reports and scaling charts (f3)", self.action_bench)
        yield SystemCommand("Help: keys and figures", "What each screen shows and its keys (f1)", self.action_help)
        yield SystemCommand("App: theme", "Change the colour theme", self.action_change_theme)
        yield SystemCommand("App: screenshot", "Save an SVG screenshot of this screen", self.action_screenshot)
        yield SystemCommand("App: quit", "Quit the workbench (ctrl+q)", self.action_quit)


def warm_up() -> None:
    """Load the engine (pydantic-ai, the harness, Monty, the tokenizer: about a second), the other screens and
    the Python lexer off the UI thread once the first screen is up, so neither the prompt nor the first run
    waits for them (the screens are imported where they are opened, not with the app)."""
    from textual.highlight import highlight  # pygments: its lexers load here, not with the first screen

    import workbench.runner
    import workbench.tui.screens.help
    import workbench.tui.screens.inspector
    import workbench.tui.screens.replay
    import workbench.tui.screens.sessions  # noqa: F401

    highlight("x = 1", language="python")


def make_app(
    *,
    store: Store | None = None,
    open_store: Callable[[], Store | None] | None = None,
    model: str = "scripted",
    settings: Settings | None = None,
    replay: str | None = None,
    autoplay: bool = True,
    arms: Sequence[str] = DEFAULT_ARMS,
    source: AppSource | None = None,
    allow_commands: bool = True,
) -> WorkbenchApp:
    """The workbench app, for the CLI and the tests. ``open_store`` (instead of ``store``) opens it behind the
    first screen; ``settings`` (default: the config's) reach every run;
    ``autoplay=False`` opens replays paused; ``arms`` are the arms each run compares, in order; ``source``
    (MCP servers, a toolset) is offered as the App; ``allow_commands=False`` (a tab of ``workbench serve``)
    takes away the App field's entries that would start a command or import code."""
    own_the_terminal()
    return WorkbenchApp(
        store, open_store=open_store, model=model, settings=settings, replay=replay, autoplay=autoplay, arms=arms,
        source=source, allow_commands=allow_commands,
    )  # fmt: skip
