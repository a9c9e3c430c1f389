"""Write SVG screenshots of the workbench's screens into screenshots/, from the real app.

    python scripts/screenshots.py [--out screenshots] [--db PATH]

It runs a real comparison on the offline ``scripted:paced`` model (the one built-in task picked from
the form, as a person would), photographs it mid-run and finished, then replays the stored session and
opens the sessions screen, the snippet inspector and the help. Nothing here is mocked; figures such as
wall time are whatever this machine measured.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from textual.pilot import Pilot
from textual.widgets import TextArea

from workbench.store import Store
from workbench.tui.app import WorkbenchApp, make_app
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.help import HelpScreen
from workbench.tui.screens.inspector import InspectorScreen
from workbench.tui.screens.sessions import SessionsScreen
from workbench.tui.widgets.run_form import RunForm

WIDE = (160, 48)
NARROW = (100, 56)
TASK = "cart/remove-expensive"


async def until(pilot: Pilot, condition: Callable[[], bool], timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the app did not get there in time")
        await pilot.pause(0.05)


async def settle(pilot: Pilot) -> None:
    screen = pilot.app.screen
    if isinstance(screen, CompareScreen):
        await until(pilot, lambda: screen.feed.idle)
    for _ in range(4):
        await pilot.pause(0.05)


def save(app: WorkbenchApp, out: Path, name: str) -> None:
    path = out / f"{name}.svg"
    path.write_text(app.export_screenshot(title="Code Mode Workbench"))
    print(f"wrote {path}")


async def live(store: Store, out: Path) -> str:
    """Pick the task, run it, photograph it mid-run and finished; returns the session id."""
    app = make_app(store=store, model="scripted:paced")
    async with app.run_test(size=WIDE) as pilot:
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        screen.query_one("#prompt", TextArea).cursor_blink = False
        screen.query_one(RunForm).choose_task(TASK)
        await pilot.pause()
        save(app, out, "compare-ready")
        await pilot.press("ctrl+r")
        await until(pilot, lambda: screen.panes["code"].summary.inner_calls >= 12)
        await settle(pilot)
        save(app, out, "compare-mid-run")
        await until(pilot, lambda: screen.last_comparison is not None)
        await settle(pilot)
        save(app, out, "compare-finished")
        assert screen.last_comparison is not None
        return screen.last_comparison.session_id


async def stored(store: Store, session_id: str, out: Path) -> None:
    app = make_app(store=store, replay=session_id, autoplay=False)
    async with app.run_test(size=WIDE) as pilot:
        replay = app.screen
        assert isinstance(replay, CompareScreen)
        await until(pilot, lambda: replay.clock is not None)
        assert replay.clock is not None
        replay.feed.put_many(replay.clock.step(replay.clock.total * 2 // 3))
        await settle(pilot)
        save(app, out, "replay-paused")
        await pilot.press("end")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: isinstance(app.screen, InspectorScreen))
        await pilot.press("down", "down", "down", "down")
        await settle(pilot)
        save(app, out, "inspector")
        await pilot.press("escape", "ctrl+o")
        await until(pilot, lambda: isinstance(app.screen, SessionsScreen) and bool(app.screen.sessions))
        await settle(pilot)
        save(app, out, "sessions")
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        save(app, out, "help")

    app = make_app(store=store, replay=session_id, autoplay=False)
    async with app.run_test(size=NARROW) as pilot:
        replay = app.screen
        assert isinstance(replay, CompareScreen)
        await until(pilot, lambda: replay.clock is not None)
        await pilot.press("end")
        await settle(pilot)
        save(app, out, "compare-narrow")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "screenshots")
    parser.add_argument("--db", type=Path, help="session database to use (default: a temporary one)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        store = Store(args.db or Path(folder) / "screenshots.db")
        session_id = await live(store, args.out)
        await stored(store, session_id, args.out)


if __name__ == "__main__":
    asyncio.run(main())
