"""The TUI on a person's own tools: `workbench --mcp ...` offers them as the App and runs both arms on them."""

from __future__ import annotations

import sys

import pytest
from textual.widgets import Select

from tests.support.tui_helpers import run_to_end, wait_for
from workbench.events import RunStarted
from workbench.sources import make_source
from workbench.sources.typed import TypedApp, recent_apps
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.roster import ArmRoster
from workbench.tui.widgets.run_form import OWN_APP
from workbench.tui.widgets.strip import ComparisonStrip

pytest.importorskip("fastmcp.server", reason="the MCP extras are not installed here: pip install -e '.[test]'")

PROMPT = "Remove everything in the cart that costs more than $50 apiece."
SERVER = f"{sys.executable} -m workbench serve-app cart --items 122"


async def test_the_app_field_offers_the_mcp_server_and_both_arms_run_on_it(store: Store) -> None:
    source = make_source(mcp=[SERVER])
    app = make_app(store=store, source=source)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        field = screen.query_one("#app", Select)
        assert field.value == OWN_APP
        await pilot.press(*PROMPT)
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen, timeout_s=120)
        for name in ("tool", "code"):
            pane = screen.panes[name]
            assert pane.summary.status == "completed"
            assert pane.summary.diff == {"created": 0, "updated": 0, "deleted": 35}
            assert (pane.summary.verdict, pane.summary.passed) == ("agree", None)  # agreement is no pass
            line = str(pane.outcome.grade_line.render())
            assert line.startswith("= ARMS AGREE  no expectation") and "PASSED" not in line and "✓" not in line
            assert "= agree" in str(pane.border_subtitle) and "passed" not in str(pane.border_subtitle)
        strip = str(screen.query_one(ComparisonStrip).render())
        assert "= arms agree" in strip
        roster = screen.query_one(ArmRoster)
        assert "= agree" in str(roster.render()) and "passed" not in str(roster.render())
        comparison = screen.last_comparison
        assert comparison is not None and comparison.app == "mcp:cart"
        started = [e.payload for e in comparison.arms["tool"].events if isinstance(e.payload, RunStarted)]
        assert "get_cart_item" in started[0].read_only_tools
        await wait_for(pilot, lambda: recent_apps() == [TypedApp("mcp", SERVER, label="mcp:cart")],
                       what="the app remembered, as one typed in the App field is")  # fmt: skip
        field.value = "kanban"  # the demo apps are still there
        await pilot.pause()
        assert screen.query_one("#items").value == "50"
