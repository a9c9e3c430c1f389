"""SVG snapshots at 80x24, the smallest terminal the workbench is made for (the compare screen's own are with
its layout)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from conftest import SESSION_ID
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from tests.support.tui_helpers import settle, steady_frame, wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.screens.sessions import SessionsScreen

SMALL = (80, 24)

Snap = Callable[..., bool]


def test_sessions_screen_80x24(snap_compare: Snap, stored: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    assert stored.path is not None
    monkeypatch.setenv("HOME", str(stored.path.parent))  # the title shows ~/tui.db, not a temporary path

    async def run_before(pilot: Pilot) -> None:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen))
        await wait_for(pilot, lambda: pilot.app.screen.query_one(DataTable).row_count == 1)
        status = pilot.app.screen.query_one("#sessions-status", Static)
        await wait_for(pilot, lambda: SESSION_ID in str(status.content), what="the status line")
        await pilot.pause()
        await steady_frame(pilot)

    assert snap_compare(make_app(store=stored), terminal_size=SMALL, run_before=run_before)


async def _inspector(pilot: Pilot) -> None:
    screen = pilot.app.screen
    assert isinstance(screen, ReplayScreen)
    await wait_for(pilot, lambda: screen.clock is not None, what="the session")
    await pilot.press("end")
    await settle(pilot, screen)
    await pilot.press("ctrl+s")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, InspectorScreen))
    await pilot.press("down", "down", "down")


def test_inspector_80x24(snap_compare: Snap, stored: Store) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _inspector(pilot)
        await steady_frame(pilot)

    app = make_app(store=stored, replay=SESSION_ID, autoplay=False)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)


def test_inspector_help_80x24(snap_compare: Snap, stored: Store) -> None:
    async def run_before(pilot: Pilot) -> None:
        await _inspector(pilot)
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        await steady_frame(pilot)

    app = make_app(store=stored, replay=SESSION_ID, autoplay=False)
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
