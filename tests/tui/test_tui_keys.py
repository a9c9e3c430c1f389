"""Help, the command palette's "category: action" commands, and quitting in the middle of a run."""

from __future__ import annotations

from textual.widgets import Markdown, TextArea

from tests.support.tui_helpers import wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.help import HelpScreen

SIZE = (140, 45)


async def test_f1_shows_the_screens_keys_and_escape_closes_it(store: Store) -> None:
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, HelpScreen))
        text = pilot.app.screen.query_one(Markdown).source
        for key, action in (("^r", "Run"), ("^s", "Inspect"), ("^o", "Sessions")):
            assert f"`{key}` | **{action}** |" in text
        for key, action in (("esc", "Cancel"), ("^f", "Follow up")):  # out of the footer until they apply
            assert f"`{key}` | **{action}** *(not now)* |" in text
        assert "What you are looking at" in text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CompareScreen))


async def test_palette_commands_are_named_category_action(store: Store) -> None:
    async with make_app(store=store).run_test(size=SIZE) as pilot:
        titles = [command.title for command in pilot.app.get_system_commands(pilot.app.screen)]
        assert {
            "Compare: run",
            "Compare: clear",
            "Snippet: inspect",
            "Sessions: list",
            "Help: keys and figures",
        } <= set(titles)
        assert all(": " in title for title in titles)


async def test_ctrl_q_during_a_run_saves_it_as_cancelled(store: Store) -> None:
    app = make_app(store=store, model="scripted:paced")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = "Remove everything in the cart that costs more than $50 apiece."
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: screen.session_id is not None and screen.panes["tool"].summary.requests > 0)
        session_id = screen.session_id
        await pilot.press("ctrl+q")
    assert session_id is not None and store.session(session_id).status == "cancelled"
