"""The compare screen: type a prompt, run both arms, watch them side by side; also replays stored sessions.

A live run and a replay feed the same :class:`EventFeed`, whose batches reach :meth:`_apply_events`,
the one path from events to widgets.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Header, TextArea
from textual.worker import Worker, WorkerState

from workbench.config import recent_models, remember_model
from workbench.events import ARM_NAMES, DEFAULT_ARMS, ArmEvent
from workbench.replay import ReplayClock
from workbench.runner import BadInput, Comparison, ComparisonRun, RunRequest, prepare
from workbench.store import Store, UnknownSession
from workbench.tui.feed import ArmEvents, EventFeed
from workbench.tui.messages import ComparisonFinished, ComparisonStarted, SessionLoaded, SessionRestLoaded
from workbench.tui.records import SnippetRecord
from workbench.tui.widgets.arm_pane import ArmPane
from workbench.tui.widgets.replay_bar import ReplayBar, SessionHeader
from workbench.tui.widgets.run_form import RunForm
from workbench.tui.widgets.strip import ComparisonStrip
from workbench.tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from workbench.config import Settings

CANCEL_POLL_S = 0.05
"""How soon the comparison's thread notices escape."""
TICK_S = 0.2
"""How often running clocks (wall time, replay position) repaint between events."""

FIRST_PAGE = 400
"""Events a replay reads before it opens; the rest load behind it, once the first screen is painted."""
REST_PAGE = 2000
"""Events per read behind the first page: decoding holds the interpreter lock, so it goes in short pieces."""
WIDE_FROM = 120
"""Terminal width from which the two panes sit side by side; narrower, they stack."""

LIVE_ACTIONS = {"run", "cancel", "new"}
REPLAY_ACTIONS = {"toggle_play", "step", "speed", "to_end", "back"}


class CompareScreen(Screen[None]):
    """Live mode (``replay=None``) runs comparisons; replay mode plays a stored session through the same panes."""

    CSS_PATH = "compare.tcss"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE_FROM, "-wide")]
    AUTO_FOCUS = "#prompt"

    BINDINGS = [
        Binding("ctrl+r", "run", "Run", priority=True, id="compare.run",
                tooltip="Run the prompt against both arms"),
        Binding("escape", "cancel", "Cancel", id="compare.cancel",
                tooltip="Stop both arms; the session is saved as cancelled"),
        Binding("ctrl+s", "inspect", "Inspect", id="compare.inspect",
                tooltip="Open the snippet inspector on the focused (or latest) snippet"),
        Binding("ctrl+o", "app.sessions", "Sessions", id="compare.sessions",
                tooltip="List stored sessions to replay or delete"),
        Binding("ctrl+n", "new", "Clear", show=False, id="compare.new",
                tooltip="Clear both panes for a new comparison"),
        Binding("space", "toggle_play", "Play/pause", id="replay.toggle", tooltip="Play or pause the replay"),
        Binding("n,right", "step", "Step", id="replay.step", tooltip="Play exactly one more event and pause"),
        Binding("s", "speed", "Speed", id="replay.speed", tooltip="Cycle the replay speed: x1, x4, instant"),
        Binding("end,e", "to_end", "To end", id="replay.end", tooltip="Play every remaining event at once"),
        Binding("escape", "back", "Back", id="replay.back", tooltip="Leave the replay"),
    ]  # fmt: skip

    def __init__(
        self,
        store: Store | None,
        *,
        model: str = "scripted",
        settings: Settings | None = None,
        replay: str | None = None,
        autoplay: bool = True,
        speed: float = 1.0,
        arms: Sequence[str] = DEFAULT_ARMS,
    ) -> None:
        super().__init__(classes="-replay" if replay else "-live")
        with contextlib.suppress(RuntimeError):  # built before the app runs (no active app): the resize sets it
            # The width class the breakpoints would add at the first resize, set now: adding it later
            # restyles every widget of the screen.
            self.add_class("-narrow" if self.app.size.width < WIDE_FROM else "-wide")
        self.store = store
        self.model = model
        self.settings = settings
        self.arms = tuple(arms)
        """The arms a live run compares, in order (the first is the baseline)."""
        """Settings from the command line (``--base-url``, ``--request-limit``); ``None``: the config's."""
        self.replay_id = replay
        self.autoplay = autoplay
        self.initial_speed = speed
        self.feed = EventFeed(self)
        self.panes = {arm: ArmPane(arm, id=f"pane-{arm}") for arm in ARM_NAMES}
        self.clock: ReplayClock | None = None
        self.session_id: str | None = None
        self.last_comparison: Comparison | None = None
        """The outcome of the latest live run, once it has ended."""
        self.batch_painted: Callable[[ArmEvents], None] | None = None
        """Called after each batch has been painted (the benchmark and tests measure with it)."""
        self._run: ComparisonRun | None = None
        self._cancel = threading.Event()
        """Set by escape; the comparison's own thread acts on it."""
        self._run_worker: Worker[None] | None = None
        self._run_started = 0.0

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        if self.replay_id is None:
            yield RunForm(model=self.model, id="form")
        else:
            yield SessionHeader(id="session-header")
            yield ReplayBar(id="replay-bar")
        yield ComparisonStrip(id="strip")
        with Horizontal(id="panes"):
            yield from self.panes.values()
        yield Footer()

    def on_mount(self) -> None:
        self.feed.bind()
        self.title = "Code Mode Workbench"
        self.sub_title = "Replay" if self.replay_id else "Compare"
        self.set_interval(TICK_S, self._tick)
        if self.replay_id is not None:
            self._load_session(self.replay_id)
        else:
            self._recall_models()

    @property
    def running(self) -> bool:
        return self._run is not None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Live and replay keys never both show; in a replay they stay put (no footer rebuilds while it plays)."""
        replay = self.replay_id is not None
        if (action in LIVE_ACTIONS and replay) or (action in REPLAY_ACTIONS and not replay):
            return False
        if action == "cancel":
            return True if self.running else None
        return True

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        """(title, help, action) for the command palette."""
        if self.replay_id is None:
            yield "Compare: run", "Run the prompt against both arms (ctrl+r)", "run"
            if self.running:
                yield "Compare: cancel", "Stop both arms; the session is saved as cancelled (escape)", "cancel"
            yield "Compare: clear", "Clear both panes for a new comparison (ctrl+n)", "new"
        else:
            yield "Replay: play or pause", "Play or pause the replay (space)", "toggle_play"
            yield "Replay: step", "Play one more event and pause (n)", "step"
            yield "Replay: speed", "Cycle the speed: x1, x4, instant (s)", "speed"
            yield "Replay: jump to the end", "Play every remaining event at once (end)", "to_end"
            yield "Replay: back", "Leave the replay (escape)", "back"
        yield "Snippet: inspect", "Open the inspector on the focused or latest snippet (ctrl+s)", "inspect"

    # -- live runs -------------------------------------------------------------------------------

    async def action_run(self) -> None:
        if self.replay_id is not None:
            return
        form = self.query_one(RunForm)
        if self.running:
            self.notify("A comparison is running; escape cancels it.", severity="warning")
            return
        values = form.values()
        if not values.prompt.strip():
            form.show_message("Type a prompt first, or pick a built-in task (Task, above).", error=True)
            self.query_one("#prompt", TextArea).focus()
            return
        try:
            items = int(values.items)
        except ValueError:
            form.show_message(f"Items must be a whole number, got {values.items!r}.", error=True)
            return
        try:
            request = RunRequest(
                values.prompt, app=values.app, items=items, model=values.model or "scripted", arms=self.arms
            )
            setup = prepare(request, settings=self.settings)
        except BadInput as error:
            form.show_message(str(error), error=True)
            return
        form.remember_models([values.model or "scripted"])
        self.run_worker(lambda: remember_model(values.model or "scripted"), thread=True, group="recall")
        self._clear()
        self.last_comparison = None
        form.set_running(True)
        form.show_message(Content.styled("Starting both arms…", "$text-muted"))
        self._run = ComparisonRun(setup, self.store)
        self._run.subscribe(self.feed.put)
        self._cancel.clear()
        self._run_started = time.monotonic()
        self._run_worker = self._drive_run(self._run)
        self.refresh_bindings()

    @work(thread=True, group="comparison", exit_on_error=False)
    def _drive_run(self, run: ComparisonRun) -> None:
        """Run both arms on an event loop of their own, so that painting the screen never delays them.

        On the UI's loop, every frame (layout and paint of both panes) would hold up the arms' tool
        calls and inflate their wall times; in this thread they wait for the interpreter lock at most
        a switch interval. Events reach the screen through the thread-safe feed.
        """
        loop = asyncio.new_event_loop()
        try:
            self.post_message(ComparisonStarted(run.comparison.session_id))
            comparison = loop.run_until_complete(self._until_done(run))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()
        self.post_message(ComparisonFinished(comparison))

    async def _until_done(self, run: ComparisonRun) -> Comparison:
        """Await the run; cancel it when escape was pressed (at any point, even before the arms start)."""
        task = run.start()
        while not task.done():
            if self._cancel.is_set() and not run.cancel_requested:
                run.cancel()
            await asyncio.wait({task}, timeout=CANCEL_POLL_S)
        return task.result()

    def action_cancel(self) -> None:
        if self._run is not None:
            self._cancel.set()
            self.query_one(RunForm).show_message(Content.styled("Cancelling both arms…", "$text-warning"))

    async def action_new(self) -> None:
        if not self.running:
            self._clear()
            self.query_one(RunForm).show_message("")
            self.query_one("#prompt", TextArea).focus()

    async def stop_run(self, timeout_s: float = 3.0) -> None:
        """Cancel a running comparison and wait (briefly) until its session is saved."""
        worker = self._run_worker
        if self._run is None or worker is None:
            return
        self.action_cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(worker.wait(), timeout_s)

    @on(ComparisonStarted)
    def _started(self, message: ComparisonStarted) -> None:
        self.session_id = message.session_id
        self.sub_title = f"Compare · session {message.session_id}"
        if self.replay_id is None:
            saved = "saved as it runs" if self.store is not None else "not stored"
            self.query_one(RunForm).show_message(
                Content.assemble(("Running session ", "$text-muted"), (message.session_id, "bold"),
                                 (f" ({saved}) — escape cancels", "$text-muted"))
            )  # fmt: skip

    @on(ComparisonFinished)
    def _finished(self, message: ComparisonFinished) -> None:
        comparison = message.comparison
        self.last_comparison = comparison
        self._run = None
        form = self.query_one(RunForm)
        form.set_running(False)
        status = comparison.status
        form.show_message(
            Content.assemble(
                ("Session ", "$text-muted"), (comparison.session_id, "bold"), " ",
                (status, "bold $text-success" if status == "completed" else "bold $text-warning"),
                ("  —  ctrl+o lists sessions · ctrl+r runs again" if self.store else "", "$text-muted"),
            )
        )  # fmt: skip
        self.refresh_bindings()

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state != WorkerState.ERROR:
            return
        error = event.worker.error
        if event.worker.group == "comparison":
            self._run = None
            if self.replay_id is None:
                form = self.query_one(RunForm)
                form.set_running(False)
                form.show_message(f"The comparison stopped: {type(error).__name__}: {error}", error=True)
        else:
            self.notify(f"{type(error).__name__}: {error}", title="Error", severity="error", timeout=8, markup=False)
        self.refresh_bindings()

    # -- replay ----------------------------------------------------------------------------------

    @work(group="recall", exit_on_error=False)
    async def _recall_models(self) -> None:
        """The models used lately (``recent-models.json`` in the data directory), suggested first."""
        self.query_one(RunForm).remember_models(await asyncio.to_thread(recent_models))

    @work(group="load", exit_on_error=False)
    async def _load_session(self, session_id: str) -> None:
        """The session and the first page of its events, so the replay starts at once (the rest follow)."""
        store = self.store
        if store is None:
            raise UnknownSession("no session store is open")
        info, first = await asyncio.to_thread(
            lambda: (store.session(session_id), store.events_by_time(session_id, limit=FIRST_PAGE))
        )
        self.post_message(SessionLoaded(info, first, complete=len(first) < FIRST_PAGE))

    @work(group="load", exit_on_error=False)
    async def _load_rest(self, session_id: str, offset: int) -> None:
        """The events after the first page, a page at a time, so the replay keeps playing meanwhile."""
        store = self.store
        assert store is not None
        while True:
            page = await asyncio.to_thread(store.events_by_time, session_id, offset=offset, limit=REST_PAGE)
            offset += len(page)
            complete = len(page) < REST_PAGE
            self.post_message(SessionRestLoaded(page, complete=complete))
            if complete:
                return

    @on(SessionLoaded)
    def _session_loaded(self, message: SessionLoaded) -> None:
        info = message.info
        self.session_id = info.id
        self.sub_title = f"Replay · session {info.id}"
        self.query_one(SessionHeader).show(info)
        arms = {event.arm for event in message.events} | {arm.name for arm in info.arms}
        for arm, pane in self.panes.items():
            pane.display = arm in arms or not arms
        self.clock = ReplayClock(
            message.events, speed=self.initial_speed, playing=self.autoplay, complete=message.complete
        )
        self.query_one(ReplayBar).clock = self.clock
        self._play(self.clock)
        if not message.complete:  # reading the rest waits for the first screen: it would slow its paint
            self.call_after_refresh(self._load_rest, info.id, len(message.events))

    @on(SessionRestLoaded)
    def _rest_loaded(self, message: SessionRestLoaded) -> None:
        if self.clock is not None:
            self.feed.put_many(self.clock.extend(message.events, complete=message.complete))
            self.query_one(ReplayBar).refresh()

    @work(group="replay", exclusive=True, exit_on_error=False)
    async def _play(self, clock: ReplayClock) -> None:
        await clock.run(self.feed.put_many)

    def action_toggle_play(self) -> None:
        if self.clock is not None:
            self.clock.toggle()
            self._replay_changed()

    def action_step(self) -> None:
        if self.clock is not None:
            self.feed.put_many(self.clock.step())
            self._replay_changed()

    def action_speed(self) -> None:
        if self.clock is not None:
            self.clock.cycle_speed()
            self._replay_changed()

    def action_to_end(self) -> None:
        if self.clock is not None:
            self.feed.put_many(self.clock.to_end())
            self._replay_changed()

    def action_back(self) -> None:
        self.dismiss()

    def _replay_changed(self) -> None:
        self.query_one(ReplayBar).refresh()

    # -- events to widgets -----------------------------------------------------------------------

    @on(ArmEvents)
    def _apply_events(self, message: ArmEvents) -> None:
        """The one path from events to widgets. The next batch is released once this one is painted."""
        try:
            by_arm: dict[str, list[ArmEvent]] = {}
            for event in message.events:
                by_arm.setdefault(event.arm, []).append(event)
            for arm, events in by_arm.items():
                pane = self.panes.get(arm)
                if pane is not None:
                    pane.apply(events)
            self._refresh_shared()
        finally:
            self.call_after_refresh(self._painted, message)

    def _painted(self, message: ArmEvents) -> None:
        self.feed.delivered()
        if self.batch_painted is not None:
            self.batch_painted(message)

    def _refresh_shared(self) -> None:
        tool, code = self.panes["tool"], self.panes["code"]
        scale = max([*tool.summary.input_tokens_per_request, *code.summary.input_tokens_per_request, 0])
        for pane in (tool, code):
            pane.chart.scale = scale
        self.query_one(ComparisonStrip).show(tool.summary, code.summary)
        if self.clock is not None:
            self.query_one(ReplayBar).refresh()

    def _tick(self) -> None:
        if self.clock is not None:
            elapsed = self.clock.replay_t
            if self.clock.playing:
                self.query_one(ReplayBar).refresh()
        elif self._run is not None:
            elapsed = time.monotonic() - self._run_started
        else:
            return
        for pane in self.panes.values():
            pane.set_elapsed(elapsed)

    def _clear(self) -> None:
        self.feed.clear()
        for pane in self.panes.values():
            pane.reset()
        self._refresh_shared()

    # -- snippets --------------------------------------------------------------------------------

    @on(Transcript.Inspect)
    def _inspect(self, message: Transcript.Inspect) -> None:
        message.stop()
        self.app.open_inspector(message.record)  # type: ignore[attr-defined]

    def action_inspect(self) -> None:
        focused = self.focused
        record: SnippetRecord | None = None
        if isinstance(focused, Transcript) and focused.picked_snippet is not None:
            record = focused.picked_snippet
        else:
            for pane in (self.panes["code"], self.panes["tool"]):
                record = record or pane.transcript.last_snippet
        if record is None:
            self.notify("No snippet yet: the code-mode arm writes one when it runs.", severity="information")
            return
        self.app.open_inspector(record)  # type: ignore[attr-defined]
