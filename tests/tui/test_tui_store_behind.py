"""The TUI opens its store behind the first screen when the CLI has checked cheaply that it will open: a run
typed before then waits for it, and a store that fails to open is one line on the screen, not a dead app."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import workbench
from tests.support.tui_helpers import run_to_end, wait_for
from workbench.commands.tui import opens_cleanly
from workbench.config import Settings
from workbench.store import Store, StoreError
from workbench.tui.app import make_app
from workbench.tui.screens.compare import CompareScreen

PROMPT = "Remove everything in the cart that costs more than $50 apiece."


async def test_a_run_started_before_the_store_is_open_waits_and_is_stored(tmp_path: Path) -> None:
    gate = threading.Event()
    opened: list[Store] = []

    def open_store() -> Store:
        gate.wait(60)
        opened.append(Store(tmp_path / "behind.db"))
        return opened[0]

    app = make_app(open_store=open_store)
    async with app.run_test(size=(140, 45)) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen) and app.store is None
        screen.query_one("#prompt").text = PROMPT  # type: ignore[attr-defined]
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert screen.last_comparison is None and not app.store_settled.is_set()
        gate.set()
        await run_to_end(pilot, screen)
        assert app.store is opened[0] and screen.store is opened[0]
        assert screen.last_comparison is not None
        assert opened[0].session(screen.last_comparison.session_id).status == "completed"


async def test_a_store_that_fails_behind_the_screen_is_one_line_and_the_app_runs_on() -> None:
    def open_store() -> Store:
        raise StoreError("/nowhere/sessions.db cannot be opened: disk I/O error")

    app = make_app(open_store=open_store)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_for(pilot, app.store_settled.is_set, what="the store to fail")
        (note,) = app._notifications
        assert note.severity == "error" and "disk I/O error" in note.message and "\n" not in note.message
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt").text = PROMPT  # type: ignore[attr-defined]
        await pilot.press("ctrl+r")
        await run_to_end(pilot, screen)
        assert screen.last_comparison is not None and screen.store is None


def test_only_a_current_sqlite_file_is_opened_behind_the_screen(tmp_path: Path) -> None:
    current = tmp_path / "current.db"
    workbench.compare_sync(task="cart/remove-expensive", items=5, db=current)
    foreign = tmp_path / "foreign.db"
    foreign.write_bytes(b"\x00not a database at all" * 10)
    settings = Settings.model_construct()
    assert opens_cleanly(str(current), settings)
    assert not opens_cleanly(str(foreign), settings)
    assert not opens_cleanly(str(tmp_path / "new.db"), settings)
    assert not opens_cleanly("postgresql://localhost/none", settings)


def test_a_bad_database_still_stops_the_tui_with_one_line_before_anything_shows(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.db"
    foreign.write_bytes(b"\x00not a database at all" * 10)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_DATA_HOME": str(tmp_path / "data"), "PATH": ""}
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "--db", str(foreign)], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "foreign.db is not a workbench database" in done.stderr
