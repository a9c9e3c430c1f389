"""The bench screen's per-case matrix (filters, sort, enter on a cell -> replay, escape back to the same cell),
marking two sessions or two sweeps and comparing them, and SVG snapshots of the matrix at 80x24 and 120x40.

The sweeps are built from the recorded scripted session (fixed clock readings, so wall times and costs are
the same on every machine): each case a stored session whose ``code`` arm is made to fail its grade on some
cases and whose token counts are scaled per case, recorded in the sweep log as ``workbench bench`` records them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from conftest import CREATED, SESSION_ID, store_session
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from tests.support.tui_helpers import steady_frame, wait_for
from workbench.bench import BenchCase, RunResult, SweepStore
from workbench.events import ArmEvent
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.bench import BenchScreen
from workbench.tui.screens.diff import DiffScreen
from workbench.tui.screens.pick_run import PickRunScreen
from workbench.tui.screens.replay import ReplayScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.widgets.case_table import CaseTable

SWEEP = "sweep-5e55aaaa"
OTHER_SWEEP = "sweep-5e55bbbb"


@dataclass(frozen=True)
class Case:
    task: str
    items: int
    code_passes: tuple[bool, ...]
    """One per repeat."""
    tokens: float
    """The code arm's token counts and costs, times this."""


CASES = (
    Case("cart/remove-expensive", 122, (True,), 1.0),
    Case("cart/wrap-category", 120, (False,), 1.6),
    Case("cart/cap-quantity", 60, (True, False), 0.7),
    Case("cart/save-category", 30, (True,), 2.5),
    Case("kanban/tag-open", 40, (False,), 1.2),
    Case("calendar/move-late", 25, (True,), 0.9),
)
REGRESSED = {"cart/wrap-category ×120 seed 0", "cart/cap-quantity ×60 seed 0", "kanban/tag-open ×40 seed 0"}
"""The cases where code passes less often than tool (the baseline: the recording's first arm)."""

SCALED = ("input_tokens", "total_input_tokens", "cost_usd", "total_cost_usd")


def variant(events: list[ArmEvent], *, code_passes: bool, tokens: float) -> list[ArmEvent]:
    """The recording with the code arm's grade set and its usage scaled."""
    out = []
    for event in events:
        found = event.to_dict()
        data = found["data"]
        if event.arm == "code" and found["kind"] == "grade":
            data["passed"] = code_passes
        elif event.arm == "code" and found["kind"] == "usage":
            data.update({key: type(value)(value * tokens) for key, value in data.items() if key in SCALED})
        out.append(ArmEvent.from_dict(found))
    return out


def stored_sweep(store: Store, events: list[ArmEvent], sweep_id: str = SWEEP, *, flip: bool = True) -> dict[str, Any]:
    """A completed sweep of :data:`CASES` (every code arm passing unless ``flip``); returns each case's session
    ids by label and repeat."""
    log = SweepStore(store)
    runs = [(case, repeat, passes) for case in CASES for repeat, passes in enumerate(case.code_passes)]
    log.start(sweep_id, "scripted", len(runs), {"tier": "everyday"})
    sessions: dict[tuple[str, int], str] = {}
    for position, (case, repeat, passes) in enumerate(runs):
        session_id = f"{sweep_id[-4:]}{position:06d}"
        recorded = variant(events, code_passes=passes or not flip, tokens=case.tokens)
        store_session(store, recorded, session_id=session_id, task=case.task, items=case.items)
        bench_case = BenchCase("everyday", case.task, case.items, 0, repeat)
        log.record(sweep_id, RunResult.from_comparison(bench_case, store.load(session_id)), position)
        sessions[(f"{case.task} ×{case.items} seed 0", repeat)] = session_id
    log.finish(sweep_id, "completed")
    assert store.path is not None
    with sqlite3.connect(store.path) as db:  # the list shows when a sweep started: fixed, for the snapshots
        db.execute("UPDATE bench_sweeps SET created = ? WHERE id = ?", ("2026-06-01 09:30:00.000000", sweep_id))
    return sessions


@pytest.fixture
def swept(store: Store, recorded_events: list[ArmEvent]) -> dict[str, Any]:
    return stored_sweep(store, recorded_events)


async def open_cases(pilot: Pilot) -> BenchScreen:
    await pilot.press("f3")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, BenchScreen), what="the bench screen")
    screen = pilot.app.screen
    assert isinstance(screen, BenchScreen)
    await wait_for(pilot, lambda: screen.matrix is not None, what="the sweep's matrix")
    await pilot.press("c")
    await wait_for(pilot, lambda: screen.view == "cases" and screen.query_one(CaseTable).has_focus, what="cases")
    return screen


def shown(screen: BenchScreen | DiffScreen) -> list[str]:
    return [row.key for row in screen.query_one(CaseTable).rows_shown]


SIZE = (140, 45)


def text_of(widget: Static) -> str:
    console = Console(width=200, color_system=None)
    with console.capture() as captured:
        console.print(widget.content)
    return captured.get()


async def test_enter_on_a_cell_replays_its_run_and_escape_returns_to_the_same_cell(
    store: Store, swept: dict[str, Any]
) -> None:
    async with make_app(store=store, autoplay=False).run_test(size=SIZE) as pilot:
        screen = await open_cases(pilot)
        table = screen.query_one(CaseTable)
        rows = shown(screen)
        assert set(rows) == {f"{case.task} ×{case.items} seed 0" for case in CASES}
        assert rows[: len(REGRESSED)] and set(rows[: len(REGRESSED)]) == REGRESSED  # changed cases first

        target = rows.index("kanban/tag-open ×40 seed 0")
        table.move_cursor(row=target, column=2)  # the code arm's verdict
        await pilot.pause()
        assert table.current == ("kanban/tag-open ×40 seed 0", "verdict:code")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        replay = pilot.app.screen
        assert isinstance(replay, ReplayScreen)
        assert replay.replay_id == swept[("kanban/tag-open ×40 seed 0", 0)]
        await wait_for(pilot, lambda: replay.clock is not None, what="the session to load")

        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back on the bench screen")
        assert screen.view == "cases" and table.has_focus
        assert table.current == ("kanban/tag-open ×40 seed 0", "verdict:code")
        assert table.cursor_row == target

        await pilot.press("escape")  # the matrix's escape goes back to the report, then leaves
        assert screen.view == "report"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(pilot.app.screen, BenchScreen), what="the bench screen to close")


async def test_a_case_run_twice_asks_which_run_starting_at_the_failed_one(store: Store, swept: dict[str, Any]) -> None:
    async with make_app(store=store, autoplay=False).run_test(size=SIZE) as pilot:
        screen = await open_cases(pilot)
        table = screen.query_one(CaseTable)
        table.move_cursor(row=shown(screen).index("cart/cap-quantity ×60 seed 0"), column=2)
        await pilot.pause()
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, PickRunScreen), what="the run picker")
        picker = pilot.app.screen
        assert isinstance(picker, PickRunScreen)
        assert [choice.repeat for choice in picker.choices] == [0, 1]
        await pilot.press("enter")  # the highlighted run: repeat 2, where code failed
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        replay = pilot.app.screen
        assert isinstance(replay, ReplayScreen)
        assert replay.replay_id == swept[("cart/cap-quantity ×60 seed 0", 1)]
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is screen, what="back on the bench screen")
        assert table.current == ("cart/cap-quantity ×60 seed 0", "verdict:code")


async def test_filters_find_and_sort_change_the_rows(store: Store, swept: dict[str, Any]) -> None:
    async with make_app(store=store, autoplay=False).run_test(size=SIZE) as pilot:
        screen = await open_cases(pilot)
        everything = set(shown(screen))
        assert len(everything) == len(CASES)

        await pilot.press("f")  # failures: a run on either arm did not pass
        assert screen.only == "failures" and set(shown(screen)) == REGRESSED
        await pilot.press("f")  # different verdicts
        assert screen.only == "different" and set(shown(screen)) == REGRESSED
        await pilot.press("f")
        assert screen.only == "regressions" and set(shown(screen)) == REGRESSED
        await pilot.press("f")
        assert screen.only == "improvements" and shown(screen) == []
        await pilot.press("f")
        assert screen.only is None and set(shown(screen)) == everything

        await pilot.press("slash", *"cart/")
        await wait_for(pilot, lambda: len(shown(screen)) == 4, what="the text filter")
        assert all(row.startswith("cart/") for row in shown(screen))
        await pilot.press("enter", "f", "f", "f")  # back to the table; text and filter combine
        assert set(shown(screen)) == {"cart/wrap-category ×120 seed 0", "cart/cap-quantity ×60 seed 0"}
        await pilot.press("slash", "escape")  # escape in the find field clears it
        await pilot.press("f", "f")
        assert screen.only is None and set(shown(screen)) == everything

        table = screen.query_one(CaseTable)
        column = [column.key for column in table.columns_shown].index("change_input_tokens:code")
        table.move_cursor(column=column)
        await pilot.press("s")  # the size of the change, largest first, either way
        sizes = [abs(value or 0.0) for value in (row.values[column] for row in table.rows_shown)]
        assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(CASES)
        assert "sorted by code Δin (largest change first)" in text_of(screen.query_one("#cases-line", Static))
        await pilot.press("s")
        assert [abs(value or 0.0) for value in (row.values[column] for row in table.rows_shown)] == sorted(sizes)
        await pilot.press("s")  # third press: the screen's order again
        assert table.sort_by is None and set(shown(screen)[: len(REGRESSED)]) == REGRESSED


async def test_marking_two_sessions_and_comparing_them(store: Store, recorded_events: list[ArmEvent]) -> None:
    store_session(store, recorded_events)
    worse = variant(recorded_events, code_passes=False, tokens=1.5)
    later = CREATED.replace(hour=10)
    store_session(store, worse, session_id="5e55100002", created=later)
    async with make_app(store=store, autoplay=False).run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="the sessions screen")
        sessions = pilot.app.screen
        assert isinstance(sessions, SessionsScreen)
        await wait_for(pilot, lambda: len(sessions.sessions) == 2, what="both sessions")
        assert [info.id for info in sessions.sessions] == ["5e55100002", SESSION_ID]

        await pilot.press("down", "space")  # the older one is A, the baseline
        assert sessions.marks.ids == [SESSION_ID]
        assert not sessions.check_action("diff", ())
        await pilot.press("up", "space")
        assert sessions.marks.ids == [SESSION_ID, "5e55100002"]
        rows = sessions.query_one("#sessions-table", DataTable)
        assert "● A Remove everything" in " ".join(str(cell) for cell in rows.get_row_at(1))
        assert "● B Remove everything" in " ".join(str(cell) for cell in rows.get_row_at(0))
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DiffScreen), what="the diff")
        diff_screen = pilot.app.screen
        assert isinstance(diff_screen, DiffScreen)
        await wait_for(pilot, lambda: diff_screen.diff is not None, what="the diff to load")
        diff = diff_screen.diff
        assert diff is not None and [arm.after for arm in diff.arms] == ["tool", "code"]
        assert {ref.arm: ref.change.kind for ref in diff_screen.keys.values()} == {"tool": "same", "code": "regression"}
        summary = text_of(diff_screen.query_one("#diff-sides", Static))
        assert "no significant difference in success" in summary and "1 pass→fail" in summary

        await pilot.press("f", "f", "f")  # regressions only
        assert diff_screen.only == "regressions" and [ref.arm for ref in diff_screen.keys.values()] == ["code"]
        await pilot.press("enter")  # B's run of the case
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, ReplayScreen), what="the replay")
        assert isinstance(pilot.app.screen, ReplayScreen) and pilot.app.screen.replay_id == "5e55100002"
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is diff_screen, what="back on the diff")
        await pilot.press("escape")
        await wait_for(pilot, lambda: pilot.app.screen is sessions, what="back on the sessions")
        assert sessions.marks.ids == [SESSION_ID, "5e55100002"]


async def test_marking_two_sweeps_and_comparing_them(store: Store, recorded_events: list[ArmEvent]) -> None:
    stored_sweep(store, recorded_events, OTHER_SWEEP, flip=False)  # every code run passing: the baseline
    stored_sweep(store, recorded_events, SWEEP)
    async with make_app(store=store, autoplay=False).run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BenchScreen), what="the bench screen")
        bench = pilot.app.screen
        assert isinstance(bench, BenchScreen)
        await wait_for(pilot, lambda: len(bench.sweeps) == 2 and bench.report is not None, what="the sweeps")
        order = [info.id for info in bench.sweeps]
        await pilot.press(*(["down"] if order[1] == OTHER_SWEEP else []), "space")
        await pilot.press("up" if order[1] == OTHER_SWEEP else "down", "space")
        assert bench.marks.ids == [OTHER_SWEEP, SWEEP]
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DiffScreen), what="the diff")
        diff_screen = pilot.app.screen
        assert isinstance(diff_screen, DiffScreen)
        await wait_for(pilot, lambda: diff_screen.diff is not None, what="the diff to load")
        await pilot.press("f", "f", "f")
        regressed = {ref.change.label for ref in diff_screen.keys.values() if ref.arm == "code"}
        assert regressed == REGRESSED and {ref.arm for ref in diff_screen.keys.values()} == {"code"}
        assert set(shown(diff_screen)) == {f"code|{label}" for label in REGRESSED}


# -- snapshots -------------------------------------------------------------------------------------

Snap = Callable[..., bool]


def _matrix_snapshot(size: tuple[int, int]) -> Callable[[Pilot], Any]:
    async def run_before(pilot: Pilot) -> None:
        screen = await open_cases(pilot)
        await pilot.press("f", "f", "f")  # regressions
        assert set(shown(screen)) == REGRESSED
        await pilot.press("f", "f")  # every case again, the changed ones first
        await pilot.press("down", "right", "right")
        await steady_frame(pilot)

    return run_before


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_matrix_snapshot(
    snap_compare: Snap, store: Store, swept: dict[str, Any], size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert store.path is not None
    monkeypatch.setenv("HOME", str(store.path.parent))  # the title shows ~/tui.db, not a temporary path
    assert snap_compare(make_app(store=store, autoplay=False), terminal_size=size, run_before=_matrix_snapshot(size))


def _diff_snapshot() -> Callable[[Pilot], Any]:
    async def run_before(pilot: Pilot) -> None:
        await pilot.press("f3")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, BenchScreen), what="the bench screen")
        bench = pilot.app.screen
        assert isinstance(bench, BenchScreen)
        await wait_for(pilot, lambda: len(bench.sweeps) == 2 and bench.report is not None, what="the sweeps")
        first = [info.id for info in bench.sweeps].index(OTHER_SWEEP)
        await pilot.press(*(["down"] * first), "space", "up" if first else "down", "space", "x")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DiffScreen), what="the diff")
        diff_screen = pilot.app.screen
        assert isinstance(diff_screen, DiffScreen)
        await wait_for(pilot, lambda: diff_screen.diff is not None, what="the diff to load")
        await pilot.press("f", "f", "f")  # regressions
        await steady_frame(pilot)

    return run_before


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_sweep_diff_snapshot(
    snap_compare: Snap, store: Store, recorded_events: list[ArmEvent], size: tuple[int, int]
) -> None:
    stored_sweep(store, recorded_events, OTHER_SWEEP, flip=False)
    stored_sweep(store, recorded_events, SWEEP)
    assert snap_compare(make_app(store=store, autoplay=False), terminal_size=size, run_before=_diff_snapshot())
