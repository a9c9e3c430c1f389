"""The replay screen: a stored session played back through the same comparison view as a live run.

The session and its first page of events open at once; the rest load behind them a page at a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Header

from workbench.replay import ReplayClock
from workbench.store import Store, UnknownSession
from workbench.tui.messages import SessionLoaded, SessionRestLoaded
from workbench.tui.screens.compare import ComparisonScreen
from workbench.tui.widgets.footer import Footer
from workbench.tui.widgets.replay_bar import ReplayBar, SessionHeader

FIRST_PAGE = 400
"""Events a replay reads before it opens; the rest load behind it, once the first screen is painted."""
REST_PAGE = 2000
"""Events per read behind the first page: decoding holds the interpreter lock, so it goes in short pieces."""


class ReplayScreen(ComparisonScreen):
    """Plays a stored session: play/pause, step, speed, jump to the end; escape leaves."""

    BINDINGS = [
        # The footer at 80 columns holds the replay's own keys only: the shared ones stay bound (and in f1 and
        # ctrl+p) but leave the footer to these.
        Binding("ctrl+s", "inspect", "Inspect", show=False, id="compare.inspect",
                tooltip="Open the snippet inspector on the focused (or latest) snippet"),
        Binding("ctrl+o", "app.sessions", "Sessions", show=False, id="compare.sessions",
                tooltip="List stored sessions to replay or delete"),
        Binding("ctrl+t", "next_arm", "Next arm", show=False, id="compare.next_arm",
                tooltip="Expand the next arm's pane (when only one pane fits the terminal)"),
        Binding("space", "toggle_play", "Play", id="replay.toggle", tooltip="Play or pause the replay"),
        Binding("n,right", "step", "Step", id="replay.step", tooltip="Play exactly one more event and pause"),
        Binding("s", "speed", "Speed", id="replay.speed", tooltip="Cycle the replay speed: x1, x4, instant"),
        Binding("e,end", "to_end", "To end", id="replay.end", tooltip="Play every remaining event at once"),
        Binding("r,home", "restart", "Restart", id="replay.restart", tooltip="Replay the session from the start"),
        Binding("escape", "back", "Back", id="replay.back", tooltip="Leave the replay"),
    ]  # fmt: skip

    def __init__(self, store: Store | None, session_id: str, *, autoplay: bool = True, speed: float = 1.0) -> None:
        super().__init__(classes="-replay")
        self.store = store
        self.replay_id = session_id
        self.autoplay = autoplay
        self.initial_speed = speed
        self.clock: ReplayClock | None = None
        self._ended_as: dict[str, str] = {}
        """How the session's store lists each arm that never finished (interrupted, cancelled): a replay at its
        end shows that, as ``sessions`` and ``show`` do, not "running"."""

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◧")
        yield SessionHeader(id="session-header")
        yield ReplayBar(id="replay-bar")
        yield self.view
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.sub_title = "Replay"
        self._load_session(self.replay_id)

    def palette_commands(self) -> Iterable[tuple[str, str, str]]:
        yield "Replay: play or pause", "Play or pause the replay (space)", "toggle_play"
        yield "Replay: step", "Play one more event and pause (n)", "step"
        yield "Replay: speed", "Cycle the speed: x1, x4, instant (s)", "speed"
        yield "Replay: jump to the end", "Play every remaining event at once (end)", "to_end"
        yield "Replay: restart", "Replay the session from the start (r)", "restart"
        yield "Replay: back", "Leave the replay (escape)", "back"
        yield from super().palette_commands()

    # -- loading ---------------------------------------------------------------------------------

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
        arms = [arm.name for arm in info.arms]
        self._ended_as = {arm.name: arm.status for arm in info.arms if arm.status in ("interrupted", "cancelled")}
        self.view.set_arms([*arms, *dict.fromkeys(e.arm for e in message.events if e.arm not in arms)])
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

    # -- playing ---------------------------------------------------------------------------------

    @work(group="replay", exclusive=True, exit_on_error=False)
    async def _play(self, clock: ReplayClock) -> None:
        await clock.run(self.feed.put_many)

    def _applied(self) -> None:
        if self.clock is not None:
            self.query_one(ReplayBar).refresh()
            if self.clock.finished:
                self.view.settle(self._ended_as)

    def _elapsed(self) -> float | None:
        if self.clock is None:
            return None
        if self.clock.playing:
            self.query_one(ReplayBar).refresh()
        return self.clock.replay_t

    def action_toggle_play(self) -> None:
        if self.clock is not None:
            self.clock.toggle()
            self.query_one(ReplayBar).refresh()

    def action_step(self) -> None:
        if self.clock is not None:
            self.feed.put_many(self.clock.step())
            self.query_one(ReplayBar).refresh()

    def action_speed(self) -> None:
        if self.clock is not None:
            self.clock.cycle_speed()
            self.query_one(ReplayBar).refresh()

    def action_to_end(self) -> None:
        if self.clock is not None:
            self.feed.put_many(self.clock.to_end())
            self.query_one(ReplayBar).refresh()

    def action_restart(self) -> None:
        if self.clock is not None:
            self.feed.clear()
            self.view.reset()
            self.clock.restart()
            self._play(self.clock)  # the previous driver ended with the replay
            self.query_one(ReplayBar).refresh()

    def action_back(self) -> None:
        self.dismiss()
