"""Each pane's tools line: how many tools the arm got, which are read-only, expandable to the list; drawn from
the run-started event, so live and replay show the same."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from conftest import PROMPT, SESSION_ID, store_session
from textual.pilot import Pilot
from textual.widgets import TextArea

from tests.support.tui_helpers import settle, steady_frame, wait_for
from workbench.events import RUN_CODE, ArmEvent, RunStarted
from workbench.replay import timeline
from workbench.store import Store
from workbench.timeline import Timeline, ToolsEntry, tools_entry
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.widgets.run_form import RunForm
from workbench.tui.widgets.tools import TOOLS, ToolsBlock
from workbench.tui.widgets.transcript import Transcript

READ_ONLY = ["list_cart_items", "get_cart_item", "list_saved_items", "get_saved_item"]
SMALL = (80, 24)
WIDE = (140, 45)

Snap = Callable[..., bool]


def marked(events: list[ArmEvent]) -> list[ArmEvent]:
    """The recording with the cart's reading tools marked read-only, as a live run marks them."""
    return [
        replace(event, payload=replace(event.payload, read_only_tools=READ_ONLY))
        if isinstance(event.payload, RunStarted)
        else event
        for event in events
    ]


def started(mode: str, tools: list[str], sandboxed: list[str], read_only: list[str]) -> RunStarted:
    return RunStarted(mode, "scripted", "cart", 5, 0, "p", tools, sandboxed, read_only_tools=read_only)  # type: ignore[arg-type]


def test_the_tools_line_says_how_each_arm_gets_the_tools() -> None:
    app_tools = ["list_notes", "add_note"]
    tool = tools_entry(started("tool", app_tools, [], ["list_notes"]))
    code = tools_entry(started("code", [RUN_CODE], app_tools, ["list_notes"]))
    hybrid = tools_entry(started("hybrid", [RUN_CODE, "direct_list_notes", "direct_add_note"], app_tools, []))
    assert tool is not None and code is not None and hybrid is not None
    assert (tool.tools, tool.read_only, tool.how) == (app_tools, frozenset({"list_notes"}), "called directly")
    assert (code.tools, code.how) == (app_tools, "inside run_code")
    assert (hybrid.tools, hybrid.read_only, hybrid.how) == (
        app_tools,
        frozenset(),
        "called directly and inside run_code",
    )
    assert tools_entry(started("tool", [], [], [])) is None  # an arm whose app never opened got no tools

    block = ToolsBlock(tool)
    assert block.plain == "  2 tools · 1 read-only · called directly — list_notes, add_note"
    block.toggle()
    assert block.plain.splitlines()[1:] == ["      list_notes  read-only", "      add_note"]
    assert ToolsBlock(hybrid).plain.startswith("  2 tools · none marked read-only · called directly and inside")


def test_the_tools_line_is_the_first_entry_of_every_arm(recorded_events: list[ArmEvent]) -> None:
    for arm in ("tool", "code"):
        model = Timeline(arm)
        model.apply(event for event in marked(recorded_events) if event.arm == arm)
        first = model.entries[0]
        assert isinstance(first, ToolsEntry)
        assert len(first.tools) == 9 and first.read_only == frozenset(READ_ONLY)


async def test_live_and_replay_show_the_same_tools_line(store: Store, recorded_events: list[ArmEvent]) -> None:
    events = marked(recorded_events)
    store_session(store, events)
    lines: dict[str, list[str]] = {}
    app = make_app(store=store)
    async with app.run_test(size=WIDE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(timeline(events)[:6])
        await settle(pilot, screen)
        transcript = screen.panes["tool"].query_one(Transcript)
        block = transcript.blocks[0]
        assert isinstance(block, ToolsBlock) and not block.expanded
        await pilot.click(transcript, offset=(4, 1))  # a click on the line lists the tools
        await wait_for(pilot, lambda: block.expanded, what="the list")
        assert transcript.cursor == (block, TOOLS)
        lines["live"] = block.plain.splitlines()
        assert lines["live"][0].startswith("  9 tools · 4 read-only · called directly")
        assert "      list_cart_items    read-only" in lines["live"]  # names aligned (the longest is 17)
        assert "      delete_cart_item" in lines["live"]
        await pilot.press("enter")  # and enter folds it again
        assert not block.expanded

    replay = make_app(store=store, replay=SESSION_ID, autoplay=False)
    async with replay.run_test(size=WIDE) as pilot:
        screen = replay.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None, what="the session")
        assert screen.clock is not None
        screen.feed.put_many(screen.clock.step(6))
        await settle(pilot, screen)
        block = screen.panes["tool"].query_one(Transcript).blocks[0]
        assert isinstance(block, ToolsBlock)
        block.toggle()
        assert block.plain.splitlines() == lines["live"]
        code = screen.panes["code"].query_one(Transcript).blocks[0]
        assert isinstance(code, ToolsBlock) and "· inside run_code" in code.plain


def _started(events: list[ArmEvent], *, expand: bool) -> Callable[[Pilot], object]:
    async def run_before(pilot: Pilot) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).cursor_blink = False
        screen.query_one(RunForm).fill(app="cart", items=122, prompt=PROMPT)
        screen.feed.put_many(timeline(events)[:6])
        await settle(pilot, screen)
        if expand:
            transcript = screen.panes["tool"].query_one(Transcript)
            await pilot.click(transcript, offset=(4, 1))
            await wait_for(
                pilot, lambda: isinstance(transcript.blocks[0], ToolsBlock) and transcript.blocks[0].expanded
            )
        await settle(pilot, screen)
        await steady_frame(pilot)

    return run_before


def test_tools_lines_at_the_start_wide(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    assert snap_compare(
        make_app(store=None), terminal_size=WIDE, run_before=_started(marked(recorded_events), expand=False)
    )


def test_tools_list_expanded_80x24(snap_compare: Snap, recorded_events: list[ArmEvent]) -> None:
    assert snap_compare(
        make_app(store=None), terminal_size=SMALL, run_before=_started(marked(recorded_events), expand=True)
    )
