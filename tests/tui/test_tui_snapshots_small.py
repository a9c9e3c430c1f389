"""SVG snapshots at 80x24, the smallest terminal the workbench is made for: the inspector's help (every main
screen at 80x24 and the three larger sizes is in test_tui_sizes)."""

from __future__ import annotations

from collections.abc import Callable

from conftest import SESSION_ID
from textual.pilot import Pilot

from tests.support.tui_helpers import settle, steady_frame, wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.replay import ReplayScreen

SMALL = (80, 24)

Snap = Callable[..., bool]


async def open_inspector(pilot: Pilot) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    await wait_for(pilot, lambda: screen.clock is not None, what="the session")
    await pilot.press("end")
    await settle(pilot, screen)
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
    await pilot.press("down", "down", "down")


def test_inspector_help_80x24(snap_compare: Snap, stored: Store) -> None:
    async def run_before(pilot: Pilot) -> None:
        await open_inspector(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        await steady_frame(pilot)

    app = make_app(store=stored, replay=SESSION_ID, autoplay=False)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
