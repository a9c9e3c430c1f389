"""A tab of ``workbench serve``: without ``--allow-commands`` the App field offers no entry that starts a command
or imports code (typed or recent), and a value that arrives anyway is refused in one line; with it, the entries
work as in a terminal. The app given to ``serve`` itself (``--mcp``) is the user's own and runs either way."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from textual.widgets import Input, Select, Static, TextArea

from tests.support.tui_helpers import run_to_end, wait_for
from workbench.sources import make_source
from workbench.sources.typed import TypedApp, remember_app
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.own_app import OwnAppScreen
from workbench.tui.widgets.run_form import (
    COMMANDS_OFF,
    COMMANDS_OFF_MESSAGE,
    NEW_MCP,
    NEW_TOOLSET,
    OWN_APP,
    RECENT_APP,
    RunForm,
)

pytest.importorskip("fastmcp.server", reason="the MCP extras are not installed here: pip install -e '.[test]'")

CART_SERVER = f"{sys.executable} -m workbench serve-app cart --items 20"
SIZE = (140, 45)


def values_of(screen: CompareScreen) -> list[str]:
    return [str(value) for _, value in screen.query_one("#app", Select)._options]


def form_message(screen: CompareScreen) -> str:
    return str(screen.query_one("#form-message", Static).content)


async def test_served_without_allow_commands_offers_no_entry_that_starts_a_command(
    store: Store, tmp_path: Path
) -> None:
    remember_app(TypedApp("mcp", f"sh -c 'touch {tmp_path / 'recent-marker'}'"))  # used in a terminal earlier
    app = make_app(store=store, allow_commands=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await app.workers.wait_for_complete()  # the recent apps were read
        await pilot.pause()
        values = values_of(screen)
        assert NEW_MCP not in values and NEW_TOOLSET not in values
        assert not any(value.startswith(RECENT_APP) for value in values) and screen.own_apps.offered == []
        assert values[-1] == COMMANDS_OFF
        field = screen.query_one("#app", Select)
        field.value = COMMANDS_OFF
        await wait_for(pilot, lambda: form_message(screen) == COMMANDS_OFF_MESSAGE, what="the one-line refusal")
        assert "\n" not in COMMANDS_OFF_MESSAGE and "serve --allow-commands" in COMMANDS_OFF_MESSAGE
        assert field.value == "cart" and screen.own_apps.source is None
        for wanted in (NEW_MCP, NEW_TOOLSET, f"{RECENT_APP}0"):  # a value that arrives anyway is refused too
            screen.query_one(RunForm).post_message(RunForm.OwnAppWanted(wanted))
            await pilot.pause()
            assert not isinstance(app.screen, OwnAppScreen) and screen.own_apps.source is None
            assert form_message(screen) == COMMANDS_OFF_MESSAGE
    assert not (tmp_path / "recent-marker").exists()


async def test_served_with_allow_commands_the_mcp_entry_opens_its_dialog(store: Store) -> None:
    app = make_app(store=store, allow_commands=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await app.workers.wait_for_complete()
        assert values_of(screen)[-2:] == [NEW_MCP, NEW_TOOLSET] and COMMANDS_OFF not in values_of(screen)
        screen.query_one("#app", Select).value = NEW_MCP
        # The dialog is on screen once it is composed (its fields mounted), not as soon as it is pushed.
        await wait_for(
            pilot, lambda: isinstance(app.screen, OwnAppScreen) and bool(app.screen.query("#target")), what="the dialog"
        )
        app.screen.query_one("#target", Input).value = CART_SERVER
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.screen is screen, what="the dialog to close")
        assert screen.query_one("#app", Select).value == OWN_APP
        assert screen.own_apps.source is not None and screen.own_apps.source.servers[0].target == CART_SERVER


async def test_the_app_given_to_serve_runs_without_allow_commands(store: Store) -> None:
    source = make_source(mcp=[CART_SERVER])
    app = make_app(store=store, source=source, allow_commands=False)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert values_of(screen)[0] == OWN_APP and screen.query_one("#app", Select).value == OWN_APP
        screen.query_one("#prompt", TextArea).text = "Remove everything in the cart that costs more than $50 apiece."
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen, timeout_s=120)
        assert screen.last_comparison is not None and screen.last_comparison.app == "mcp:cart"
        assert all(pane.summary.status == "completed" for pane in screen.panes.values())
