"""BFCL in the terminal app: the App field offers it when installed, the Task field lists its entries, and ctrl+r
runs the entry's turns on every arm, graded by BFCL's checker."""

from __future__ import annotations

import os

import pytest
from textual.widgets import Select, TextArea

from tests.support.tui_helpers import run_to_end, wait_for
from workbench.store import Store
from workbench.suites import bfcl
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.run_form import SUITE_APP

if not bfcl.status().installed:
    if os.environ.get("REQUIRE_BFCL"):
        pytest.fail(f"bfcl-eval is required (REQUIRE_BFCL is set): {'; '.join(bfcl.status().missing)}", pytrace=False)
    pytestmark = pytest.mark.skip(reason="bfcl-eval is not installed (workbench suites install bfcl)")

SIZE = (140, 45)


async def test_a_bfcl_entry_from_the_task_list_runs_its_turns_and_is_graded(store: Store) -> None:
    app = make_app(store=store)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        field = screen.query_one("#app", Select)
        assert SUITE_APP in {value for _, value in field._options}
        field.value = SUITE_APP
        await pilot.pause()
        task = screen.query_one("#task", Select)
        entries = [value for _, value in task._options if value is not Select.NULL]
        assert len(entries) == 800 and entries[0] == "bfcl/multi_turn_base_0"
        task.value = "bfcl/multi_turn_base_46"
        await wait_for(pilot, lambda: "Delete all the files" in screen.query_one("#prompt", TextArea).text)
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        comparison = screen.last_comparison
        assert comparison is not None
        assert (comparison.task, comparison.app) == ("bfcl/multi_turn_base_46", f"bfcl@{bfcl.PINNED_VERSION}")
        assert [arm.summary.passed for arm in comparison.arms.values()] == [True, True]
