"""The compare screen: type a prompt, run the arms, watch them side by side; then type a follow-up and continue
the same session on the same state (ctrl+f), turn after turn.

It and the replay screen share :class:`ComparisonScreen`: a live run and a replay feed the same
:class:`EventFeed`, whose batches reach :meth:`ComparisonScreen._apply_events`, the one path from
events to the comparison view.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Header, TextArea
from textual.worker import Worker, WorkerState

from workbench.arm_spec import known_modes
from workbench.config import recent_models, remember_model
from workbench.events import DEFAULT_ARMS
from workbench.scripted import SURFACE
from workbench.timeline_records import SnippetRecord
from workbench.tui.export import EXPORT_FORMATS, exports_dir, write_export
from workbench.tui.feed import EventFeed
from workbench.tui.messages import ArmEvents, ComparisonFinished, ComparisonStarted, InspectRequested
from workbench.tui.own_apps import OwnAppController
from workbench.tui.widgets.arm_pane import ArmPane
from workbench.tui.widgets.comparison import ComparisonView
from workbench.tui.widgets.footer import Footer
from workbench.tui.widgets.outcome import CHANGES_KEY
from workbench.tui.widgets.run_form import OWN_APP, SUITE_APP, RunForm
from workbench.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from workbench.config import Settings
    from workbench.runner import ComparisonRun
    from workbench.session import Comparison
    from workbench.sources import AppSource
    from workbench.store import Store

CANCEL_POLL_S = 0.05
"""How soon the comparison's thread notices escape."""
FOLLOW_UP_POLL_S = 0.5
"""How soon a session kept open for a follow-up notices that its screen went away."""
TICK_S = 0.2
"""How often running clocks (wall time, replay position) repaint between events."""
WIDE_FROM = 120
"""Terminal width from which the form spreads out (the panes' own layout follows the room they get)."""
TALL_FROM = 32
"""Terminal height from which the prompt gets its full height."""
ROOMY_FROM = 44
"""Terminal height from which the charts and the diff table get their full height (below it, from
:data:`TALL_FROM`, they give rows to the transcript: at 120x40 it keeps at least 8)."""


class ComparisonScreen(Screen[None]):
    """What the live and the replay screens share: the comparison view, fed by an :class:`EventFeed`."""

    CSS_PATH = "compare.tcss"
    store: Store | None = None
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE_FROM, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (TALL_FROM, "-medium"), (ROOMY_FROM, "-tall")]

    BINDINGS = [
        Binding("ctrl+s", "inspect", "Inspect", id="compare.inspect",
                tooltip="Open the snippet inspector on the focused (or latest) snippet"),
        Binding("ctrl+o", "app.sessions", "Sessions", id="compare.sessions",
                tooltip="List stored sessions to replay or delete"),
        Binding("ctrl+t", "next_arm", "Next arm", id="compare.next_arm",
                tooltip="Expand the next arm's pane (when only one pane fits the terminal)"),
        Binding(CHANGES_KEY, "changes", "Changes", show=False, id="compare.changes",
                tooltip="Every change of the end state in place of the transcript, and back"),
    ]  # fmt: skip

    def __init__(self, arms: Sequence[str] = (), modes: Mapping[str, str] | None = None, *, classes: str = "") -> None:
        super().__init__(classes=classes)
        with contextlib.suppress(RuntimeError):  # built before the app runs (no active app): the resize sets it
            # The size classes the breakpoints would add at the first resize, set now: adding them later
            # restyles every widget of the screen.
            size = self.app.size
            self.add_class("-narrow" if size.width < WIDE_FROM else "-wide")
            self.add_class(next(name for least, name in reversed(self.VERTICAL_BREAKPOINTS) if size.height >= least))
        self.feed = EventFeed(self)
        self.view = ComparisonView(arms, modes, id="comparison")
        self.session_id: str | None = None
        self.batch_painted: Callable[[ArmEvents], None] | None = None
        """Called after each batch has been painted (the benchmark and tests measure with it)."""

    @property
    def panes(self) -> dict[str, ArmPane]:
        """Every arm's pane by name, in the arms' order."""
        return self.view.panes

    def on_mount(self) -> None:
        self.feed.bind()
        self.title = "Code Mode Workbench"
        self.set_interval(TICK_S, self._tick)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "next_arm":
            return self.view.compact
        return True

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        """(title, help, action) for the command palette."""
        if self.view.compact:
            yield "Arms: next", "Expand the next arm's pane (ctrl+t)", "next_arm"
        yield "Snippet: inspect", "Open the inspector on the focused or latest snippet (ctrl+s)", "inspect"
        yield "Outcome: changes", f"Every end-state change in place of the transcript ({CHANGES_KEY})", "changes"
        if self.exportable:
            for fmt, label in EXPORT_FORMATS:
                where = f"Write this session as {label} to {exports_dir()}"
                yield f"Export session: {label}", where, f"export('{fmt}')"

    @property
    def exportable(self) -> bool:
        """Whether the session on screen can be exported: it is stored (or, live, has ended)."""
        return self.session_id is not None and self.store is not None

    def _comparison(self, session_id: str) -> Comparison:
        """The session on screen, whole, as stored (runs in a worker thread)."""
        assert self.store is not None
        return self.store.load(session_id)

    def action_export(self, fmt: str) -> None:
        if not self.exportable or self.session_id is None:
            self.notify("No stored session on screen to export yet.", severity="warning")
            return
        self._export(self.session_id, fmt)

    @work(thread=True, group="export", exit_on_error=False)
    def _export(self, session_id: str, fmt: str) -> None:
        try:
            path = write_export(self._comparison(session_id), fmt)
        except (OSError, LookupError) as error:
            self.app.call_from_thread(
                self.notify, f"Export failed: {error}", title="Export", severity="error", timeout=12, markup=False
            )
            return
        self.app.call_from_thread(self.notify, f"Written to {path}", title="Exported", timeout=12, markup=False)

    def action_next_arm(self) -> None:
        self.view.next_arm()

    def action_changes(self) -> None:
        shown_before = self.view.changes_shown
        if not self.view.toggle_changes() and not shown_before:
            self.notify("No end state yet: an arm lists its changes when it finishes.", severity="information")

    # -- events to widgets -----------------------------------------------------------------------

    @on(ArmEvents)
    def _apply_events(self, message: ArmEvents) -> None:
        """The one path from events to widgets. The next batch is released once this one is painted."""
        try:
            self.view.apply(message.events)
            self._applied()
        finally:
            self.call_after_refresh(self._painted, message)

    def _applied(self) -> None:
        """After each batch (the replay bar repaints its position)."""

    def _painted(self, message: ArmEvents) -> None:
        self.feed.delivered()
        if self.batch_painted is not None:
            self.batch_painted(message)

    def _elapsed(self) -> float | None:
        """Seconds on the running clock (live) or the replay position; ``None`` when no clock runs."""
        return None

    def _tick(self) -> None:
        elapsed = self._elapsed()
        if elapsed is not None:
            self.view.set_elapsed(elapsed)

    @on(Worker.StateChanged)
    def _worker_state(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self._worker_failed(event.worker, event.worker.error)

    def _worker_failed(self, worker: Worker[object], error: BaseException | None) -> None:
        self.notify(f"{type(error).__name__}: {error}", title="Error", severity="error", timeout=8, markup=False)
        self.refresh_bindings()

    # -- snippets --------------------------------------------------------------------------------

    @on(Transcript.Inspect)
    def _inspect(self, message: Transcript.Inspect) -> None:
        message.stop()
        self.post_message(InspectRequested(message.record))

    def action_inspect(self) -> None:
        """The focused transcript's picked snippet, else the latest snippet of the expanded (or first) arm that
        has one."""
        focused = self.focused
        record: SnippetRecord | None = None
        if isinstance(focused, Transcript) and focused.picked_snippet is not None:
            record = focused.picked_snippet
        else:
            panes = list(self.panes.values())
            if self.view.compact and panes:
                panes.insert(0, panes[min(self.view.expanded, len(panes) - 1)])
            for pane in panes:
                record = record or pane.transcript.last_snippet
        if record is None:
            self.notify("No snippet yet: a code-mode arm writes one when it runs.", severity="information")
            return
        self.post_message(InspectRequested(record))


class CompareScreen(ComparisonScreen):
    """Type a prompt, run the arms, watch them side by side."""

    AUTO_FOCUS = "#prompt"

    BINDINGS = [
        Binding("ctrl+r", "run", "Run", priority=True, id="compare.run", tooltip="Run the prompt against every arm"),
        Binding("escape", "cancel", "Cancel", id="compare.cancel",
                tooltip="Stop every arm; the session is saved as cancelled"),
        Binding("ctrl+n", "new", "Clear", show=False, id="compare.new", tooltip="Clear the panes for a new comparison"),
        Binding("ctrl+f", "follow_up", "Follow up", priority=True, id="compare.follow_up",
                tooltip="Send the prompt as the next turn of the session on screen: each arm answers it on the same "
                "state, with its history"),
        # The same key while no session on screen can take a follow-up: out of the footer (and f1 lists
        # ctrl+f "not now"), but still the screen's (the prompt would take ctrl+f as delete-word), saying what
        # ctrl+f needs.
        Binding("ctrl+f", "follow_up_hint", "Follow up", priority=True, show=False),
    ]  # fmt: skip

    def __init__(
        self,
        store: Store | None,
        *,
        model: str = "scripted",
        settings: Settings | None = None,
        arms: Sequence[str] = DEFAULT_ARMS,
        source: AppSource | None = None,
        allow_commands: bool = True,
    ) -> None:
        super().__init__(arms, known_modes(arms, settings), classes="-live")
        self.allow_commands = allow_commands
        """Whether the App field may start a command or import code (``False`` in a tab of ``workbench serve``
        without ``--allow-commands``: the visitor's keystrokes must not); the app given on the command line
        (``source``) is the user's own and runs either way."""
        self.own_apps = OwnAppController(self, source, allow_commands=allow_commands, running=lambda: self.running)
        """The App field's apps of one's own: the one in use (``own_apps.source``), the recent ones, the dialog."""
        self.store = store
        self.store_settled: asyncio.Event | None = None
        """Set by the App once a store it opens behind the first screen is open (or failed); a run waits."""
        self.model = model
        self.settings = settings
        """Settings from the command line (``--base-url``, ``--request-limit``); ``None``: the config's."""
        self.arms = tuple(arms)
        """The arms each run compares, in order (the first is the baseline)."""
        self.last_comparison: Comparison | None = None
        """The outcome of the latest live run, once it has ended."""
        self._run: ComparisonRun | None = None
        self._cancel = threading.Event()
        """Set by escape; the comparison's own thread acts on it."""
        self._run_worker: Worker[None] | None = None
        self._run_started = 0.0
        self._conversation: ComparisonRun | None = None
        """The session on screen while its arms keep their apps open for a follow-up (ctrl+f)."""
        self._follow_ups: asyncio.Queue[str | None] | None = None
        """Follow-up prompts for the conversation's thread (``None`` closes its apps), and that thread's loop."""
        self._run_loop: asyncio.AbstractEventLoop | None = None
        self._turns = 0

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        own = self.own_apps.source.label if self.own_apps.source else None
        yield RunForm(model=self.model, own_app=own, allow_commands=self.allow_commands, id="form")
        yield self.view
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.sub_title = "Compare"
        self._recall_models()

    @property
    def running(self) -> bool:
        return self._run is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # escape (dimmed with no run) gives its place in the footer to ctrl+f while the session on screen takes
        # a follow-up: both at once pushed Quit off an 80-column screen.
        if action == "cancel":
            return True if self.running else (False if self.can_follow_up else None)
        if action in ("follow_up", "follow_up_hint"):
            return self.can_follow_up == (action == "follow_up")
        return super().check_action(action, parameters)

    @property
    def can_follow_up(self) -> bool:
        """Whether ctrl+f can continue the session on screen (it ended, and its arms kept their apps)."""
        return self._conversation is not None and not self.running

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        yield "Compare: run", "Run the prompt against every arm (ctrl+r)", "run"
        if self.can_follow_up:
            yield (
                "Compare: follow up",
                "Send the prompt as the session's next turn, on the same state (ctrl+f)",
                ("follow_up"),
            )
        if self.running:
            yield "Compare: cancel", "Stop every arm; the session is saved as cancelled (escape)", "cancel"
        yield "Compare: clear", "Clear the panes for a new comparison (ctrl+n)", "new"
        task = self.query_one(RunForm).selected_task()
        if task is not None and self.store is not None:
            yield f"Bench: run {task}", "Run the bench for this task on every arm (its scaling sizes too)", "bench_task"
        yield from super().palette_commands()

    def action_bench_task(self) -> None:
        """Start the in-process bench for the form's built-in task (the CLI's ``bench --task``) on this screen's
        arms and model, and show it on the bench screen."""
        form = self.query_one(RunForm)
        task = form.selected_task()
        if task is None or self.store is None:
            self.notify("Pick a built-in task (Task field) first; the bench needs a session store.", severity="warning")
            return
        from workbench.bench import Sweep, plan
        from workbench.runner import BadInput, RunRequest
        from workbench.tui.screens.bench import BenchScreen

        model = form.values().model or "scripted"
        try:
            cases = plan(tasks=[task])
            sweep = Sweep(
                cases, request=RunRequest(model=model, arms=self.arms), settings=self.settings, store=self.store,
                options={"tier": "all", "tasks": [task], "arms": list(self.arms), "from": "tui"},
            )  # fmt: skip
        except BadInput as error:
            form.show_message(str(error), error=True)
            return
        self.app.push_screen(BenchScreen(self.store, sweep=sweep, settings=self.settings))

    @property
    def exportable(self) -> bool:
        return self.last_comparison is not None and not self.running

    def _comparison(self, session_id: str) -> Comparison:
        comparison = self.last_comparison
        if comparison is not None and comparison.session_id == session_id:
            return comparison  # the run's own outcome: exportable with no store, or with one that failed
        return super()._comparison(session_id)

    def _elapsed(self) -> float | None:
        return time.monotonic() - self._run_started if self._run is not None else None

    async def action_run(self) -> None:
        form = self.query_one(RunForm)
        if self.running:
            self.notify("A comparison is running; escape cancels it.", severity="warning")
            return
        values = form.values()
        if not values.prompt.strip():
            form.show_message("Type a prompt first, or pick a built-in task (Task, above).", error=True)
            self.query_one("#prompt", TextArea).focus()
            return
        own = values.app == OWN_APP
        suite = values.app == SUITE_APP
        if suite and form.suite_entry() is None:
            form.show_message("Pick a BFCL entry in the Task field first.", error=True)
            return
        try:
            items = 0 if own or suite else int(values.items)
        except ValueError:
            form.show_message(f"Items must be a whole number, got {values.items!r}.", error=True)
            return
        if self.store_settled is not None and not self.store_settled.is_set():
            # The App is still opening the store behind the first screen: run once it has (or has failed).
            form.show_message(Content.styled("Opening the session store…", "$text-muted"))
            self.run_worker(self._run_when_settled(self.store_settled), group="store-wait", exclusive=True)
            return
        from workbench.runner import BadInput, ComparisonRun, RunRequest, prepare  # loaded behind the first screen

        try:
            if suite:
                request = self._suite_request(str(form.suite_entry()), values.model or "scripted")
            else:
                request = RunRequest(
                    values.prompt, app=None if own else values.app, items=None if own else items,
                    model=values.model or "scripted", arms=self.arms, source=self.own_apps.source if own else None,
                )  # fmt: skip
            surface = SURFACE.set("tui")  # a model's error names the Model field, not --model
            try:
                setup = prepare(request, settings=self.settings)
            finally:
                SURFACE.reset(surface)
        except BadInput as error:
            form.show_message(str(error), error=True)
            return
        form.remember_models([values.model or "scripted"])
        self.own_apps.run_started(own)
        self.run_worker(lambda: remember_model(values.model or "scripted"), thread=True, group="recall")
        self._end_conversation()
        self._clear()
        self.view.set_arms([arm.name for arm in setup.arms], {arm.name: arm.mode for arm in setup.arms})
        self.last_comparison = None
        form.set_running(True)
        form.show_message(Content.styled("Starting the arms…", "$text-muted"))
        self._run = ComparisonRun(setup, self.store, keep_open=True)
        self._run.subscribe(self.feed.put)
        self._cancel.clear()
        self._run_started = time.monotonic()
        self._turns = len(setup.prompts)
        self._follow_ups = asyncio.Queue()
        self._run_worker = self._drive_run(self._run, self._follow_ups)
        self.refresh_bindings()

    def _suite_request(self, task_id: str, model: str) -> Any:
        """A BFCL entry as BFCL wrote it: its turns in order on its own classes (the prompt field only shows
        them)."""
        from workbench.runner import RunRequest
        from workbench.suites import bfcl_plan

        task = bfcl_plan.suite_task(bfcl_plan.find_entry(task_id))
        return RunRequest(model=model, arms=self.arms, **task.request_fields())

    def action_follow_up(self) -> None:
        """The prompt as the next turn of the session on screen: the panes keep what they show, and each arm
        answers on the state it left, with its message history; the turn is stored in the same session."""
        form = self.query_one(RunForm)
        if self.running:
            self.notify("A comparison is running; escape cancels it.", severity="warning")
            return
        run, queue, loop = self._conversation, self._follow_ups, self._run_loop
        if run is None or queue is None or loop is None:
            form.show_message("Run a prompt first (ctrl+r): ctrl+f continues the session on screen.", error=True)
            return
        prompt = form.values().prompt
        if not prompt.strip():
            form.show_message("Type the follow-up prompt first: it is sent as the session's next turn.", error=True)
            self.query_one("#prompt", TextArea).focus()
            return
        self._turns += 1
        self._run = run
        self.last_comparison = None
        self._cancel.clear()
        wall = max((pane.summary.wall_s for pane in self.panes.values()), default=0.0)
        self._run_started = time.monotonic() - wall  # the panes' clocks go on where the arms' stopped
        form.set_running(True)
        form.show_message(Content.styled(f"Turn {self._turns}: sending the follow-up to every arm…", "$text-muted"))
        loop.call_soon_threadsafe(queue.put_nowait, prompt)
        self.refresh_bindings()

    def action_follow_up_hint(self) -> None:
        """ctrl+f with no session on screen to continue: what it needs (the message of ``action_follow_up``)."""
        self.action_follow_up()

    def _end_conversation(self) -> None:
        """Close the apps the session on screen kept open for a follow-up (its thread then ends)."""
        queue, loop = self._follow_ups, self._run_loop
        self._conversation = self._follow_ups = self._run_loop = None
        if self.is_attached:
            self.refresh_bindings()  # ctrl+f leaves the footer
        if queue is not None and loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nothing is open
                loop.call_soon_threadsafe(queue.put_nowait, None)

    async def _run_when_settled(self, settled: asyncio.Event) -> None:
        await settled.wait()
        self.call_later(self.action_run)

    @work(thread=True, group="comparison", exit_on_error=False)
    def _drive_run(self, run: ComparisonRun, follow_ups: asyncio.Queue[str | None]) -> None:
        """Run the arms on an event loop of their own, so that painting the screen never delays them.

        On the UI's loop, every frame (layout and paint of every pane) would hold up the arms' tool
        calls and inflate their wall times; in this thread they wait for the interpreter lock at most
        a switch interval. Events reach the screen through the thread-safe feed.
        """
        SURFACE.set("tui")  # this thread's context: the scripted model's advice names the TUI's fields
        loop = asyncio.new_event_loop()
        self._run_loop = loop
        try:
            self.post_message(ComparisonStarted(run.comparison.session_id))
            comparison = loop.run_until_complete(self._until_done(run, run.start))
            self.post_message(ComparisonFinished(comparison, open_for_more=run.can_follow_up))
            loop.run_until_complete(self._answer_follow_ups(run, follow_ups))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _answer_follow_ups(self, run: ComparisonRun, follow_ups: asyncio.Queue[str | None]) -> None:
        """The session's follow-up turns as ctrl+f sends them, until the screen closes the apps (``None``) or
        goes away (the app quits)."""
        try:
            while run.can_follow_up:
                try:
                    prompt = await asyncio.wait_for(follow_ups.get(), FOLLOW_UP_POLL_S)
                except TimeoutError:
                    if not self.is_attached:
                        break
                    continue
                if prompt is None:
                    break
                comparison = await self._until_done(run, functools.partial(run.follow_up, prompt))
                self.post_message(ComparisonFinished(comparison, open_for_more=run.can_follow_up))
        finally:
            await run.close()

    def on_unmount(self) -> None:
        self._end_conversation()

    async def _until_done(self, run: ComparisonRun, start: Callable[[], asyncio.Future[Comparison]]) -> Comparison:
        """Start the run (or its follow-up) and await it; cancel it when escape was pressed (at any point, even
        before the arms start)."""
        task = start()
        while not task.done():
            if self._cancel.is_set() and not run.cancel_requested:
                run.cancel()
            await asyncio.wait({task}, timeout=CANCEL_POLL_S)
        return task.result()

    def action_cancel(self) -> None:
        if self._run is not None:
            self._cancel.set()
            self.query_one(RunForm).show_message(Content.styled("Cancelling the arms…", "$text-warning"))

    async def action_new(self) -> None:
        if not self.running:
            self._end_conversation()
            self._clear()
            self.session_id = None
            self.sub_title = "Compare"  # the cleared session is no longer the one on screen
            self.query_one(RunForm).show_message("")
            self.query_one("#prompt", TextArea).focus()

    async def stop_run(self, timeout_s: float = 3.0) -> None:
        """Cancel a running comparison and wait (briefly) until its session is saved."""
        worker = self._run_worker
        if self._run is None or worker is None:
            if worker is not None and self._conversation is not None:  # ended, its apps kept open: close them
                self._end_conversation()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(worker.wait(), timeout_s)
            return
        self.action_cancel()
        self._end_conversation()  # once cancelled, the arms close their apps: the thread ends
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(worker.wait(), timeout_s)

    @on(ComparisonStarted)
    def _started(self, message: ComparisonStarted) -> None:
        self.session_id = message.session_id
        self.sub_title = f"Compare · session {message.session_id}"
        saved = "saved as it runs" if self.store is not None else "not stored"
        self.query_one(RunForm).show_message(
            Content.assemble(("Running session ", "$text-muted"), (message.session_id, "bold"),
                             (f" ({saved}) — escape cancels", "$text-muted"))
        )  # fmt: skip

    @on(ComparisonFinished)
    def _finished(self, message: ComparisonFinished) -> None:
        comparison = message.comparison
        self.last_comparison = comparison
        run, self._run = self._run, None
        self._conversation = run if message.open_for_more else None
        form = self.query_one(RunForm)
        form.set_running(False)
        status = comparison.status
        turn = f" turn {self._turns}" if self._turns > 1 else ""
        keys = "ctrl+o lists sessions · ctrl+r runs again" if self.store else ""
        if self._conversation is not None:
            keys = "ctrl+f sends the prompt as the next turn" + (f" · {keys}" if keys else "")
        form.show_message(
            Content.assemble(
                ("Session ", "$text-muted"), (comparison.session_id, "bold"), turn, " ",
                (status, "bold $text-success" if status == "completed" else "bold $text-warning"),
                (f"  —  {keys}" if keys else "", "$text-muted"),
            )
        )  # fmt: skip
        self.own_apps.run_finished(comparison.app)
        if comparison.store_error is not None:
            self.notify(comparison.store_error, title="Session not fully stored", severity="error", timeout=20,
                        markup=False)  # fmt: skip
        self.refresh_bindings()

    def _worker_failed(self, worker: Worker[object], error: BaseException | None) -> None:
        if worker.group != "comparison":
            super()._worker_failed(worker, error)
            return
        self._run = self._conversation = self._follow_ups = self._run_loop = None
        form = self.query_one(RunForm)
        form.set_running(False)
        from workbench.runner import AppUnavailable
        from workbench.sources.base import stderr_first

        if isinstance(error, AppUnavailable):  # no arm could open the app: nothing ran, nothing was stored
            self.sub_title = "Compare"
            form.show_message(f"The app did not start (nothing stored): {stderr_first(str(error))}", error=True)
        else:
            form.show_message(f"The comparison stopped: {type(error).__name__}: {error}", error=True)
        self.refresh_bindings()

    @work(group="recall", exit_on_error=False)
    async def _recall_models(self) -> None:
        """The models used lately (``recent-models.json`` in the data directory), suggested first, and the
        apps of one's own (``recent-apps.json``), offered in the App field."""
        self.query_one(RunForm).remember_models(await asyncio.to_thread(recent_models))
        await self.own_apps.recall()

    @on(RunForm.OwnAppWanted)
    def _own_app_wanted(self, message: RunForm.OwnAppWanted) -> None:
        self.own_apps.wanted(message.value)

    def _clear(self) -> None:
        self.feed.clear()
        self.view.reset()
