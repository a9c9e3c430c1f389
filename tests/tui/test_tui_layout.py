"""The comparison view's layout for 1 to 4 arms at every size: every arm that exists can be seen."""

from __future__ import annotations

import pytest
from conftest import SESSION_ID, store_session, with_copies

from tests.support.tui_helpers import settle, wait_for
from workbench.events import ArmEvent
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.widgets.arm_pane import ArmPane
from workbench.tui.widgets.comparison import MIN_PANE_HEIGHT, MIN_PANE_WIDTH, grid_for

COPIES = {"code-eager": "code", "hybrid": "tool"}


def test_the_grid_has_the_fewest_rows_in_which_every_pane_fits() -> None:
    assert grid_for(2, 120, 30) == (2, 1)  # side by side
    assert grid_for(3, 180, 30) == (3, 1)
    assert grid_for(4, 180, 34) == (2, 2)  # four side by side would be too narrow
    assert grid_for(2, 100, 46) == (1, 2)  # stacked
    assert grid_for(1, MIN_PANE_WIDTH, MIN_PANE_HEIGHT) == (1, 1)
    assert grid_for(2, 90, 17) is None  # only one pane fits: the roster and one expanded pane
    assert grid_for(3, 120, 24) is None


def arms_of(count: int, events: list[ArmEvent]) -> list[ArmEvent]:
    names = ["tool", "code", *COPIES][:count]
    return [event for event in with_copies(events, COPIES) if event.arm in names]


@pytest.mark.parametrize("count", [1, 2, 3, 4])
@pytest.mark.parametrize("size", [(80, 24), (90, 30), (120, 40), (180, 50)])
async def test_every_arm_is_visible_at_every_size(
    count: int, size: tuple[int, int], recorded_events: list[ArmEvent]
) -> None:
    """Each arm shows its pane, or its roster line with title, status and grade beside one expanded pane."""
    async with make_app(store=None).run_test(size=size) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        events = arms_of(count, recorded_events)
        screen.view.set_arms(list(dict.fromkeys(event.arm for event in events)))
        screen.feed.put_many(events)
        await settle(pilot, screen)
        await pilot.pause()
        frame = pilot.app.export_screenshot()
        panes = list(screen.panes.values())
        assert len(panes) == count
        shown = [pane for pane in panes if pane.display and pane.region.height >= 8]
        if screen.view.compact:
            assert len(shown) == 1
            roster = screen.query_one("#roster")
            assert roster.region.height == count
            lines = [roster.render_line(y).text for y in range(count)]
            for line, pane in zip(lines, panes, strict=True):
                assert pane.border_title in line and "completed" in line and "passed" in line
        else:
            assert shown == panes and all(pane.region.width >= MIN_PANE_WIDTH for pane in panes)
        assert frame.count("passed") >= count


async def test_next_arm_expands_each_arm_in_turn(recorded_events: list[ArmEvent]) -> None:
    async with make_app(store=None).run_test(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(with_copies(recorded_events, {"code-eager": "code"}))
        await settle(pilot, screen)
        assert screen.view.compact
        seen = []
        for _ in range(4):
            seen.append([pane.arm for pane in screen.query(ArmPane) if pane.display])
            await pilot.press("ctrl+t")
            await pilot.pause()
        assert seen == [["tool"], ["code"], ["code-eager"], ["tool"]]
        await pilot.click("#roster", offset=(4, 1))
        await pilot.pause()
        assert [pane.arm for pane in screen.query(ArmPane) if pane.display] == ["code"]


async def test_wide_terminals_hide_the_next_arm_key(recorded_events: list[ArmEvent]) -> None:
    async with make_app(store=None).run_test(size=(140, 45)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, CompareScreen)
        screen.feed.put_many(recorded_events)
        await settle(pilot, screen)
        assert not screen.view.compact and screen.check_action("next_arm", ()) is False


async def test_a_replay_shows_the_sessions_own_arms_in_order(store: Store, recorded_events: list[ArmEvent]) -> None:
    events = with_copies(recorded_events, COPIES)
    store_session(store, events)
    async with make_app(store=store, replay=SESSION_ID, autoplay=False).run_test(size=(180, 50)) as pilot:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen))
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None)
        await pilot.press("end")
        await settle(pilot, screen)
        assert list(screen.panes) == ["tool", "code", "code-eager", "hybrid"]
        assert [pane.border_title for pane in screen.panes.values()] == [
            "Tool calling",
            "Code mode",
            "Code mode, eager",
            "hybrid · Tool calling",
        ]
        assert {pane.summary.passed for pane in screen.panes.values()} == {True}


async def test_at_80x24_a_finished_arms_changes_leave_its_transcript_the_room_until_asked_for(stored: Store) -> None:
    """On a short terminal the end-state table is folded away (the grade line names the key), so the
    transcript stays readable; the key shows every change in its place, and again brings the transcript
    back. A new start (here a replay restart) shows the transcript."""
    from workbench.tui.widgets.outcome import CHANGES_KEY

    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None, what="the session to load")
        await pilot.press("end")
        await settle(pilot, screen)
        pane = screen.panes["tool"]
        table, transcript = pane.outcome.table, pane.transcript
        await wait_for(pilot, lambda: table.row_count == 35 and table.size.height == 0, what="the folded table")
        assert transcript.size.height >= 8
        await wait_for(pilot, lambda: f"{CHANGES_KEY} shows all" in str(pane.outcome.grade_line.render()))

        await pilot.press(CHANGES_KEY)
        await wait_for(pilot, lambda: screen.focused is table, what="the changes to take the focus")
        assert not transcript.display and table.size.height >= 8 and table.rows_shown == table.size.height - 1
        assert f"{CHANGES_KEY}: transcript" in str(pane.outcome.grade_line.render())
        await pilot.press("down", "down")
        assert table.cursor == 2

        await pilot.press(CHANGES_KEY)
        await wait_for(pilot, lambda: screen.focused is transcript, what="the transcript back")
        assert transcript.size.height >= 8 and table.size.height == 0

        await pilot.press(CHANGES_KEY)
        await wait_for(pilot, lambda: not transcript.display, what="the changes again")
        await pilot.press("r")
        await wait_for(pilot, lambda: transcript.display and not pane.outcome.expanded, what="the restart")


async def test_at_80x24_ctrl_l_then_enter_shows_a_deleted_record_whole(stored: Store) -> None:
    """In the changes (ctrl+l), enter opens the selected row's record whole beneath it, every field with the
    task's checked one (unit_price) first, and enter again folds it."""
    from workbench.tui.widgets.outcome import CHANGES_KEY

    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=(80, 24)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None, what="the session to load")
        await pilot.press("end")
        await settle(pilot, screen)
        table = screen.panes["tool"].outcome.table
        await wait_for(pilot, lambda: table.row_count == 35, what="the changes")
        await pilot.press(CHANGES_KEY)
        await wait_for(pilot, lambda: screen.focused is table, what="the changes to take the focus")
        await pilot.press("down", "enter")
        await pilot.pause()
        record = table.records[1]
        assert table.opened == 1 and record[0].startswith("unit_price = ") and len(record) >= 8
        lines = [table.render_line(y).text for y in range(table.size.height)]
        shown = [line.strip() for line in lines[3:]]  # the header, row 0, row 1, then row 1's record
        assert shown == record[: len(shown)] and len(shown) >= 4
        await pilot.press("enter")
        assert table.opened is None and table.render_line(3).text.lstrip().startswith("− deleted")
