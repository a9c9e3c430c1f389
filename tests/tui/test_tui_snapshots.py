"""SVG snapshots of each screen at a fixed size, fed from the recorded scripted session (deterministic).

The live compare screen is fed the recording through its feed, exactly as a live run feeds it, so
no clock or machine speed reaches the frame. Update with ``pytest tests/tui --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from conftest import PROMPT, SESSION_ID, with_copies
from textual.pilot import Pilot
from textual.widgets import DataTable, TextArea

from tests.support.tui_helpers import settle, steady_frame, wait_for
from workbench.events import ArmEvent
from workbench.replay import timeline
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.messages import ComparisonStarted
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.widgets.run_form import RunForm

WIDE = (140, 45)
NARROW = (100, 50)
SMALL = (80, 24)
LARGE = (180, 50)
FOUR_ARMS = {"code-eager": "code", "hybrid": "tool"}
"""Extra arms for the N-arm snapshots: copies of the recorded arms' events under other names."""
MID_RUN = 120
"""Events of the recording shown mid-run: the tool arm is still paging, the snippet is running."""

THREE_ARMS_MID_RUN = 75
"""Events of the three-arm recording shown mid-run: the eager arm's snippet is written and running."""

Snap = Callable[..., bool]


def live(events: list[ArmEvent], *, count: int | None = None) -> Callable[[Pilot], Awaitable[None]]:
    """Fill the form as for the recorded task and feed the first ``count`` events, as a live run would."""

    async def run_before(pilot: Pilot) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).cursor_blink = False
        form = screen.query_one(RunForm)
        form.fill(app="cart", items=122, prompt=PROMPT)
        shown = timeline(events)[:count]
        if count is not None:
            form.set_running(True)
            screen.post_message(ComparisonStarted(SESSION_ID))
        screen.feed.put_many(shown)
        await settle(pilot, screen)
        screen.query_one("#prompt", TextArea).blur()
        await settle(pilot, screen)
        await steady_frame(pilot)

    return run_before


def test_compare_idle(snap_compare: Snap) -> None:
    async def run_before(pilot: Pilot) -> None:
        pilot.app.screen.query_one("#prompt", TextArea).cursor_blink = False
        await pilot.pause()

    assert snap_compare(make_app(store=None), terminal_size=WIDE, run_before=run_before)


def test_compare_mid_run(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    assert snap_compare(make_app(store=None), terminal_size=WIDE, run_before=live(recorded_events, count=MID_RUN))


def test_compare_finished(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    assert snap_compare(make_app(store=None), terminal_size=WIDE, run_before=live(recorded_events))


def test_compare_finished_narrow(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    assert snap_compare(make_app(store=None), terminal_size=NARROW, run_before=live(recorded_events))


def test_compare_mid_run_at_80x24_shows_every_arm(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    assert snap_compare(make_app(store=None), terminal_size=SMALL, run_before=live(recorded_events, count=MID_RUN))


def test_compare_four_arms_at_80x24(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    events = with_copies(recorded_events, FOUR_ARMS)
    assert snap_compare(make_app(store=None), terminal_size=SMALL, run_before=live(events))


def test_compare_three_arms_mid_run_at_180x50(snap_compare: Snap, four_arm_events: list[ArmEvent]) -> None:
    """tool, code and code-eager: the eager arm's snippet marks the lines that ran while it was written."""
    events = [event for event in four_arm_events if event.arm != "hybrid"]
    app = make_app(store=None, arms=["tool", "code", "code-eager"])
    assert snap_compare(app, terminal_size=LARGE, run_before=live(events, count=THREE_ARMS_MID_RUN))


def test_compare_four_arms_at_180x50(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    events = with_copies(recorded_events, FOUR_ARMS)
    assert snap_compare(make_app(store=None), terminal_size=LARGE, run_before=live(events))


@pytest.fixture
def replay_app(stored: Store):  # type: ignore[no-untyped-def]
    return make_app(store=stored, replay=SESSION_ID, autoplay=False)


async def _loaded(pilot: Pilot) -> ReplayScreen:
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    await wait_for(pilot, lambda: screen.clock is not None, what="the session")
    return screen


def test_replay_paused_mid_session(snap_compare: Snap, replay_app) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        screen = await _loaded(pilot)
        assert screen.clock is not None
        screen.feed.put_many(screen.clock.step(MID_RUN))
        await settle(pilot, screen)
        await steady_frame(pilot)

    assert snap_compare(replay_app, terminal_size=WIDE, run_before=run_before)


def test_sessions_screen(snap_compare: Snap, stored: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    assert stored.path is not None
    monkeypatch.setenv("HOME", str(stored.path.parent))  # the title shows ~/tui.db, not a temporary path

    async def run_before(pilot: Pilot) -> None:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen))
        await wait_for(pilot, lambda: pilot.app.screen.query_one(DataTable).row_count == 1)
        await steady_frame(pilot)

    assert snap_compare(make_app(store=stored), terminal_size=WIDE, run_before=run_before)


def test_inspector(snap_compare: Snap, replay_app) -> None:  # type: ignore[no-untyped-def]
    async def run_before(pilot: Pilot) -> None:
        screen = await _loaded(pilot)
        await pilot.press("end")
        await settle(pilot, screen)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
        await pilot.press("down", "down", "down")
        await steady_frame(pilot)

    assert snap_compare(replay_app, terminal_size=WIDE, run_before=run_before)
