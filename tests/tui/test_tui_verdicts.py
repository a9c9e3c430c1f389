"""What the compare screen says when a comparison ends without a fair verdict."""

from __future__ import annotations

from textual.widgets import TextArea

from tests.support.tui_helpers import run_to_end, wait_for
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.strip import ComparisonStrip

PROMPT = "Remove everything in the cart that costs more than $50 apiece."
SIZE = (140, 45)


async def test_a_cancelled_run_says_not_graded_and_names_no_winner(store: Store) -> None:
    app = make_app(store=store, model="scripted:paced")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = PROMPT
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: screen.panes["tool"].summary.requests >= 1, what="the first request")
        await pilot.press("escape")
        await wait_for(pilot, lambda: screen.last_comparison is not None, what="both arms to stop")
        await pilot.pause()
        for pane in screen.panes.values():
            assert pane.summary.passed is None
            line = str(pane.outcome.grade_line.content)
            assert line.startswith("cancelled after ") and ": not graded" in line
            assert "FAILED" not in line and "mismatches" not in line
        strip = screen.query_one(ComparisonStrip).render().plain
        assert "not comparable: tool arm cancelled" in strip and "✓" not in strip


async def test_an_unknown_prompt_is_answered_with_what_to_do_in_the_tui(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).text = "Write me a poem about carts"
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        for pane in screen.panes.values():
            assert "Task list" in pane.summary.output and "Model field" in pane.summary.output
            assert "--model" not in pane.summary.output
        strip = screen.query_one(ComparisonStrip).render().plain
        assert "not comparable: neither arm called a tool" in strip and "✓" not in strip
