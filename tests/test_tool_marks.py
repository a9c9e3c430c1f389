"""The app's tools and their read-only marks, from the run-started event, in `run`/`show` and the HTML export."""

from __future__ import annotations

import io

from rich.console import Console

import workbench
from workbench.events import RunStarted
from workbench.printer import comparison_view, tools_line
from workbench.share.session_html import session_html

READS = ["list_cart_items", "get_cart_item", "list_saved_items", "get_saved_item"]


async def test_demo_reading_tools_are_marked_and_shown_in_run_and_the_export() -> None:
    comparison = await workbench.compare(task="cart/remove-expensive", items=20, db=False)
    for arm in comparison.arms.values():
        (started,) = [event.payload for event in arm.events if isinstance(event.payload, RunStarted)]
        assert started.read_only_tools == READS
        assert len(started.app_tools) == 9 and arm.summary.app_tools == started.app_tools
    summaries = [arm.summary for arm in comparison.arms.values()]
    assert tools_line(summaries) == f"tools: 9, 4 read-only ({', '.join(READS)})"
    out = io.StringIO()
    Console(file=out, width=200).print(comparison_view(comparison))
    assert "tools: 9, 4 read-only (list_cart_items, get_cart_item" in out.getvalue()
    page = session_html(comparison)
    assert "<summary>9 tools · 4 read-only</summary>" in page
    assert "<summary>9 tools inside run_code · 4 read-only</summary>" in page
    assert page.count('<li><code>get_cart_item</code> <span class="dim">read-only</span></li>') == 2
    assert page.count("<li><code>delete_cart_item</code></li>") == 2


def test_an_arm_without_tools_shows_no_line() -> None:
    from workbench.summary import ArmSummary

    assert tools_line([ArmSummary("tool"), ArmSummary("code")]) == ""
    assert tools_line([ArmSummary("tool", app_tools=["a", "b"])]) == "tools: 2, none marked read-only"
