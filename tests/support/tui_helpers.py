"""Waiting helpers for Pilot tests: until the feed has painted everything, until a run has ended.

Every wait polls for its condition; the bounds only end a test that would otherwise hang, so they are far
beyond what a busy 2-core machine takes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from textual.pilot import Pilot
from textual.widget import Widget

from workbench.tui.screens.compare import CompareScreen
from workbench.tui.widgets.transcript import Transcript


async def wait_for(pilot: Pilot, condition: Callable[[], bool], *, timeout_s: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what or condition}")
        await pilot.pause(0.02)


async def settle(pilot: Pilot, screen: CompareScreen, *, timeout_s: float = 60.0) -> None:
    """Until every event the screen was fed has been handled and painted."""
    await wait_for(pilot, lambda: screen.feed.idle, timeout_s=timeout_s, what="the feed to drain")
    await pilot.wait_for_scheduled_animations()
    for _ in range(3):  # late messages (style updates, scroll updates) land a frame or two later
        await pilot.pause()
    await wait_for(pilot, lambda: all(scrollbar_caught_up(t) for t in screen.query(Transcript)), what="scrollbars")
    for transcript in screen.query(Transcript):
        transcript.vertical_scrollbar.refresh()  # a thumb painted between two layouts may be stale
    await pilot.pause()


def scrollbar_caught_up(widget: Widget) -> bool:
    """Whether a scrolling widget's scrollbar shows its current size and position (it repaints a frame later)."""
    if not widget.show_vertical_scrollbar:
        return True
    bar = widget.vertical_scrollbar
    return bar.window_virtual_size == widget.virtual_size.height and round(bar.position) == round(widget.scroll_y)


async def run_to_end(pilot: Pilot, screen: CompareScreen, *, timeout_s: float = 120.0) -> None:
    """Until a live comparison has finished and all of its events are painted."""
    await wait_for(pilot, lambda: screen.last_comparison is not None, timeout_s=timeout_s, what="the run to finish")
    await settle(pilot, screen)


async def steady_frame(pilot: Pilot, *, timeout_s: float = 60.0) -> None:
    """Until two frames in a row look the same (late layout passes, such as a table sizing itself, are done)."""
    deadline = time.monotonic() + timeout_s
    previous = ""
    while time.monotonic() < deadline:
        await pilot.pause(0.05)
        frame = pilot.app.export_screenshot()
        if frame == previous:
            return
        previous = frame
    raise AssertionError("the screen kept changing")
