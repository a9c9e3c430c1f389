"""The sessions list: bench runs out of the way, columns that fit the terminal, ids never cut."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
from textual.widgets import DataTable

import workbench
from tests.support.tui_helpers import wait_for
from workbench.bench import Sweep, plan
from workbench.cli import cli
from workbench.printer import sessions_table
from workbench.store import Store
from workbench.tui.app import make_app
from workbench.tui.screens.sessions import SessionsScreen, session_columns


@pytest.fixture
def mixed(db_path: Path) -> Store:
    """Three comparisons of a person's own (one with three arms) and a small bench sweep's runs, in one store."""
    store = Store(db_path)
    workbench.compare_sync(task="cart/remove-expensive", items=20, db=store)
    workbench.compare_sync(task="cart/remove-expensive", items=20, db=store, arms=["tool", "code", "hybrid"])
    workbench.compare_sync("Write me a poem about carts", app="cart", items=5, db=store)
    asyncio.run(Sweep([case for case in plan("scaling", app="cart") if case.items <= 20], store=store).run())
    return store


async def test_bench_runs_are_hidden_until_asked_for(mixed: Store) -> None:
    async with make_app(store=mixed).run_test(size=(90, 30)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="the sessions screen")
        screen = pilot.app.screen
        assert isinstance(screen, SessionsScreen)
        table = screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, what="the person's own three sessions")
        assert screen.hidden == 2
        await pilot.press("b")
        await wait_for(pilot, lambda: table.row_count == 5, what="every session")


@pytest.mark.parametrize("width", [80, 90, 120, 180])
@pytest.mark.parametrize("arms", [["tool", "code"], ["tool", "code", "hybrid"]])
def test_the_columns_fit_the_width_and_the_prompt_takes_what_is_free(width: int, arms: list[str]) -> None:
    columns = session_columns(width, arms)
    assert sum(column_width + 2 for _, _, column_width in columns) <= width - 2
    assert all(column_width > 0 for _, _, column_width in columns)
    keys = [key for _, key, _ in columns]
    assert {"when", "prompt", *(f"arm:{arm}" for arm in arms)} <= set(keys)
    if width == 180:
        assert {"app", "model", "items", "versus"} <= set(keys)
        assert dict((key, column_width) for _, key, column_width in columns)["prompt"] >= 40


def test_the_cli_list_never_cuts_an_id_and_can_leave_out_bench_runs(mixed: Store, db_path: Path) -> None:
    sessions = mixed.sessions()
    for width in (70, 80, 100):
        console = Console(width=width, record=True)
        console.print(sessions_table(sessions, width))
        text = console.export_text()
        assert all(info.id in text for info in sessions)
        assert max(len(line) for line in text.splitlines()) <= width

    result = CliRunner().invoke(cli, ["sessions", "--no-bench", "--json", "--db", str(db_path)])
    assert result.exit_code == 0
    assert len(__import__("json").loads(result.stdout)) == 3


async def test_a_replay_restarts_after_its_end(stored: Store) -> None:
    from conftest import SESSION_ID

    from workbench.tui.screens.replay import ReplayScreen

    async with make_app(store=stored, replay=SESSION_ID, autoplay=False).run_test(size=(140, 45)) as pilot:
        screen = pilot.app.screen
        assert isinstance(screen, ReplayScreen)
        await wait_for(pilot, lambda: screen.clock is not None, what="the session")
        await pilot.press("end")
        await wait_for(pilot, lambda: screen.clock is not None and screen.clock.finished, what="the end")
        await wait_for(pilot, lambda: screen.panes["tool"].summary.status == "completed", what="the panes")
        before = screen.panes["tool"].summary
        await pilot.press("r")
        clock = screen.clock
        assert clock is not None
        assert screen.panes["tool"].summary is not before  # the panes were cleared for the replay from the start
        await wait_for(pilot, lambda: clock.finished, what="the end again")  # it plays by itself (short session)
        await wait_for(pilot, lambda: screen.panes["tool"].summary.status == "completed", what="the panes again")
        tool = screen.panes["tool"].summary
        assert tool.requests == 5 and tool.tool_calls == 38  # the figures once, not twice


def test_the_replay_clock_restarts_from_the_first_event() -> None:
    from workbench.events import ArmEvent, RequestStarted
    from workbench.replay import ReplayClock

    now = [0.0]
    events = [ArmEvent("tool", seq, seq * 0.5, RequestStarted(request=seq + 1)) for seq in range(4)]
    clock = ReplayClock(events, now=lambda: now[0])
    now[0] = 5.0
    assert len(clock.due()) == 4 and clock.finished
    clock.restart()
    assert not clock.finished and clock.position == 0 and clock.replay_t == 0.0
    now[0] = 5.6
    assert [event.seq for event in clock.due()] == [0, 1]


@pytest.mark.parametrize("width", [80, 120])
async def test_a_declined_comparison_is_marked_partial_in_the_list(mixed: Store, width: int) -> None:
    """Neither arm called a tool: the list names no cheaper arm and marks the row, in the cost comparison or,
    where that column is given up (80 columns with three arms listed), before the prompt."""
    declined = next(info for info in mixed.sessions() if info.prompt.startswith("Write me a poem"))
    async with make_app(store=mixed).run_test(size=(width, 30)) as pilot:
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, SessionsScreen), what="the sessions screen")
        table = pilot.app.screen.query_one(DataTable)
        await wait_for(pilot, lambda: table.row_count == 3, what="the person's own three sessions")
        keys = [column.key.value for column in table.ordered_columns]
        cells = dict(zip(keys, (str(cell) for cell in table.get_row(declined.id)), strict=True))
        if "versus" in keys:
            assert cells["versus"].endswith(" partial") and not cells["prompt"].startswith("partial")
        else:
            assert cells["prompt"].startswith("partial Write me a poem")
        table.move_cursor(row=table.get_row_index(declined.id))
        await pilot.pause()
        status = str(pilot.app.screen.query_one("#sessions-status").render())
        assert "not comparable: neither arm called a tool" in status
